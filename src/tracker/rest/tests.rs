//! The REST layer's paths and paging, error bodies, segments and backoff.

use super::*;

#[test]
fn paths_go_below_the_base_and_page_links_stay_on_its_host() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let base = reqwest::Url::parse("https://ghe.example/api/v3/").unwrap();
    let api = Api::new(
        Forge::Github,
        reqwest::Client::new(),
        &base,
        RetryPolicy::default(),
        "GITHUB_TOKEN".into(),
    );
    assert_eq!(
        api.url("/repos/o/r/issues/1"),
        "https://ghe.example/api/v3/repos/o/r/issues/1"
    );
    assert_eq!(
        api.url("https://ghe.example/api/v3/repositories/1/issues?page=2"),
        "https://ghe.example/api/v3/repositories/1/issues?page=2",
        "a page link, made from the host's root"
    );
    // A link to another host keeps only its path: the token goes nowhere else.
    let elsewhere = path_and_query("https://evil.example/steal?page=2").unwrap();
    assert_eq!(
        api.url(&format!("{}{elsewhere}", api.origin)),
        "https://ghe.example/steal?page=2"
    );
}

#[test]
fn link_headers_yield_the_next_page() {
    let h = r#"<https://api.github.com/repositories/1/issues?labels=a,b&page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last""#;
    assert_eq!(
        next_link(h).as_deref(),
        Some("https://api.github.com/repositories/1/issues?labels=a,b&page=2")
    );
    let last_page = r#"<https://x/i?page=1>; rel="first", <https://x/i?page=4>; rel="prev""#;
    assert_eq!(next_link(last_page), None);
    assert_eq!(next_link(""), None);
    assert_eq!(
        path_and_query("http://127.0.0.1:9/api/v3/repos/o/r/issues?page=2").as_deref(),
        Some("/api/v3/repos/o/r/issues?page=2")
    );
}

#[test]
fn gitlab_next_pages_come_from_x_next_page_when_there_is_no_link() {
    let mut h = HeaderMap::new();
    h.insert("x-next-page", "3".parse().unwrap());
    let o = "http://h";
    assert_eq!(
        next_page("/projects/1/issues?state=opened&page=2&per_page=100", &h, o).as_deref(),
        Some("/projects/1/issues?state=opened&per_page=100&page=3")
    );
    assert_eq!(
        next_page("/projects/1/issues", &h, o).as_deref(),
        Some("/projects/1/issues?page=3")
    );
    h.insert("x-next-page", "".parse().unwrap());
    assert_eq!(
        next_page("/projects/1/issues", &h, o),
        None,
        "the last page"
    );
    h.insert(
        http::header::LINK,
        "<https://elsewhere/api/v4/projects/1/issues?page=4>; rel=\"next\""
            .parse()
            .unwrap(),
    );
    assert_eq!(
        next_page("/x", &h, o).as_deref(),
        Some("http://h/api/v4/projects/1/issues?page=4"),
        "the Link header wins, on the API's own host"
    );
}

#[test]
fn every_forges_error_bodies_summarise() {
    let read = |json: &str| ErrorBody::read(json.as_bytes()).summary(StatusCode::BAD_REQUEST);
    assert_eq!(
        read(
            r#"{"message":"Validation Failed","errors":[{"resource":"Label","code":"already_exists","field":"name"},{"message":"head is invalid"}],"documentation_url":"x"}"#
        ),
        "Validation Failed (Label name already_exists; head is invalid)"
    );
    assert_eq!(
        read(r#"{"message":{"title":["can't be blank"],"name":["has already been taken"]}}"#),
        "name has already been taken; title can't be blank"
    );
    assert_eq!(
        read(
            r#"{"message":["Another open merge request already exists for this source branch: !4"]}"#
        ),
        "Another open merge request already exists for this source branch: !4"
    );
    assert_eq!(
        read(
            r#"{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api"}"#
        ),
        "The request requires higher privileges than provided by the access token."
    );
    assert_eq!(
        read(
            r#"{"message":"pull request already exists for these targets","url":"https://codeberg.org/api/swagger","errors":["[PullRequest] id: 3"]}"#
        ),
        "pull request already exists for these targets ([PullRequest] id: 3)"
    );
    assert_eq!(read("Retry later\n"), "Bad Request");
    assert_eq!(
        ErrorBody::default().summary(StatusCode::BAD_GATEWAY),
        "Bad Gateway"
    );
}

#[test]
fn path_segments_are_encoded() {
    assert_eq!(segment("ready"), "ready");
    assert_eq!(segment("good first issue"), "good%20first%20issue");
    assert_eq!(segment("a/b:c"), "a%2Fb%3Ac");
    assert_eq!(segment("🚀"), "%F0%9F%9A%80");
}

#[test]
fn backoff_grows_jitters_and_is_capped() {
    let p = RetryPolicy {
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(1000),
        ..RetryPolicy::default()
    };
    for attempt in 1..=10 {
        let step = (100u64 << (attempt - 1)).min(1000);
        let d = p.backoff(attempt).as_millis() as u64;
        assert!(
            d >= step / 2 && d <= step,
            "attempt {attempt}: {d} not in [{}, {step}]",
            step / 2
        );
    }
}
