//! The GitHub tracker against a wiremock server: every call, pagination, the error statuses,
//! retries (502s, 429 with retry-after, primary rate limits) and connection failures. Fixtures
//! in tests/fixtures/github/ are in the shape of real GitHub objects.

use crate::common::{fast_policy, fixture, json_reply, REPO};
use ralph::tracker::discover::{Token, TokenSource};
use ralph::tracker::github::{GithubTracker, RetryPolicy};
use ralph::tracker::{
    workflow, IssueQuery, IssueState, IssueTracker, LabelAction, NewPullRequest, Permission,
    TrackerError,
};
use serde_json::json;
use std::time::Duration;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "ghp_wiremockTestToken0123456789";

fn error_reply(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest"
    }))
}

fn tracker_at(uri: &str) -> GithubTracker {
    tracker_with(uri, fast_policy())
}

fn tracker_with(uri: &str, policy: RetryPolicy) -> GithubTracker {
    ralph::tracker::github::tracker(
        uri,
        "octo-org/octo-repo".parse().unwrap(),
        Token::new(TOKEN, TokenSource::GithubToken),
        policy,
    )
    .unwrap()
}

async fn server() -> (MockServer, GithubTracker) {
    let server = MockServer::start().await;
    let tracker = tracker_at(&server.uri());
    (server, tracker)
}

#[tokio::test]
async fn gets_an_issue_with_the_token_and_a_user_agent() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12")))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    let issue = t.issue(12).await.unwrap();
    assert_eq!(issue.number, 12);
    assert_eq!(issue.title, "Add option to remove the notification");
    assert_eq!(issue.labels, ["ready", "enhancement"]);
    assert_eq!(issue.state, IssueState::Open);
    assert_eq!(issue.author.as_deref(), Some("octocat"));
    assert!(issue.body.contains("\r\n- [ ] Add a `notify` option"));
    let received = server.received_requests().await.unwrap();
    // ralph's user agent identifies the tool and version.
    let agents: Vec<&str> = received[0]
        .headers
        .get_all("user-agent")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(agents.iter().any(|a| a.starts_with("ralph/")), "{agents:?}");
    assert_eq!(t.describe(), "GitHub octo-org/octo-repo");
}

#[tokio::test]
async fn a_base_path_is_kept_for_github_enterprise() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/api/v3{REPO}/issues/12")))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    let t = tracker_at(&format!("{}/api/v3", server.uri()));
    assert_eq!(t.issue(12).await.unwrap().number, 12);
}

#[tokio::test]
async fn lists_follow_every_page() {
    let (server, t) = server().await;
    let next = format!(
        "<{}/repositories/42/issues?state=open&labels=ready&page=2>; rel=\"next\", <{}/repositories/42/issues?page=2>; rel=\"last\"",
        server.uri(),
        server.uri()
    );
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("labels", "ready"))
        .and(query_param("state", "open"))
        .and(query_param("per_page", "100"))
        .respond_with(json_reply(200, "issues_page1.json").insert_header("link", next.as_str()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repositories/42/issues"))
        .and(query_param("page", "2"))
        // The next page is fetched with the token too.
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(json_reply(200, "issues_page2.json"))
        .expect(1)
        .mount(&server)
        .await;
    let issues = t
        .issues(&IssueQuery {
            labels: vec!["ready".into()],
            state: Some(IssueState::Open),
        })
        .await
        .unwrap();
    let numbers: Vec<u64> = issues.iter().map(|i| i.number).collect();
    assert_eq!(numbers, [20, 12, 14, 15, 16, 17, 18]);
    assert!(issues[3].is_pull_request);
    assert_eq!(issues[4].assignees, ["hubot"]);
    // And the queue over them: oldest first, skipping the PR, the assigned, in-progress and
    // escalated issues.
    let q: Vec<u64> = workflow::queue(issues, "ready", Some("octocat"), None)
        .iter()
        .map(|i| i.number)
        .collect();
    assert_eq!(q, [17, 12, 20]);
}

#[tokio::test]
async fn bad_credentials_are_a_distinct_error_that_names_the_source_not_the_token() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(error_reply(401, "Bad credentials"))
        .expect(1)
        .mount(&server)
        .await;
    let err = t.issue(12).await.unwrap_err();
    assert!(
        matches!(err, TrackerError::BadCredentials { .. }),
        "{err:?}"
    );
    assert_eq!(err.exit().code(), 2);
    let text = format!("{err} {err:?} {}", err.hint().unwrap());
    assert!(text.contains("GITHUB_TOKEN"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
}

#[tokio::test]
async fn not_found_names_the_issue_and_repository() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(error_reply(404, "Not Found"))
        .expect(1)
        .mount(&server)
        .await;
    let err = t.issue(99).await.unwrap_err();
    assert!(matches!(err, TrackerError::NotFound { forge: Some(_), .. }));
    assert_eq!(err.to_string(), "issue #99 in octo-org/octo-repo not found");
    assert_eq!(err.exit().code(), 2);
    assert!(err.hint().unwrap().contains("--repo"));
}

#[tokio::test]
async fn forbidden_without_rate_limit_is_not_retried() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .respond_with(error_reply(403, "Resource not accessible by integration"))
        .expect(1)
        .mount(&server)
        .await;
    let err = t.comment(12, "hi").await.unwrap_err();
    assert!(matches!(err, TrackerError::Forbidden { .. }), "{err:?}");
    assert!(err.to_string().contains("Resource not accessible"));
    assert!(err.hint().unwrap().contains("Pull requests"));
}

#[tokio::test]
async fn unprocessable_carries_githubs_details() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/12/assignees")))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "assignees", "code": "invalid"}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = t.assign(12, &["ghost".into()]).await.unwrap_err();
    assert!(matches!(err, TrackerError::Unprocessable { .. }));
    assert!(
        err.to_string()
            .contains("Validation Failed (Issue assignees invalid)"),
        "{err}"
    );
    assert_eq!(err.exit().code(), 1);
}

#[tokio::test]
async fn two_bad_gateways_then_success() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>"))
        .up_to_n_times(2)
        .with_priority(1)
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(t.issue(12).await.unwrap().number, 12);
}

#[tokio::test]
async fn server_errors_give_up_after_the_last_attempt() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(error_reply(503, "Service Unavailable"))
        .expect(4)
        .mount(&server)
        .await;
    let err = t.issue(12).await.unwrap_err();
    match &err {
        TrackerError::Http {
            status, attempts, ..
        } => assert_eq!((*status, *attempts), (503, 4)),
        other => panic!("{other:?}"),
    }
    assert!(err.hint().unwrap().contains("try again later"));
}

#[tokio::test]
async fn a_429_waits_for_retry_after() {
    let server = MockServer::start().await;
    let policy = fast_policy();
    let pause = policy.pause.clone();
    let t = tracker_with(&server.uri(), policy);
    Mock::given(method("GET"))
        .respond_with(
            error_reply(429, "You have exceeded a secondary rate limit")
                .insert_header("retry-after", "1"),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(t.issue(12).await.unwrap().number, 12);
    assert_eq!(
        pause.waits(),
        [Duration::from_secs(1)],
        "retry-after was honoured"
    );
}

#[tokio::test]
async fn a_secondary_limit_beyond_the_longest_wait_fails_at_once() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(
            error_reply(403, "You have exceeded a secondary rate limit")
                .insert_header("retry-after", "3600"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = t.issue(12).await.unwrap_err();
    assert!(matches!(err, TrackerError::RateLimited { .. }), "{err:?}");
}

#[tokio::test]
async fn a_primary_rate_limit_near_its_reset_is_waited_out() {
    let server = MockServer::start().await;
    let policy = fast_policy();
    let pause = policy.pause.clone();
    let t = tracker_with(&server.uri(), policy);
    let reset = chrono::Utc::now().timestamp() + 1;
    Mock::given(method("GET"))
        .respond_with(
            error_reply(403, "API rate limit exceeded for user ID 1.")
                .insert_header("x-ratelimit-limit", "5000")
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str()),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(t.issue(12).await.unwrap().number, 12);
    let waits = pause.waits();
    assert!(
        waits.len() == 1 && waits[0] <= Duration::from_secs(3),
        "waited for the reset: {waits:?}"
    );
}

#[tokio::test]
async fn a_primary_rate_limit_far_from_its_reset_fails_with_the_reset_time() {
    let (server, t) = server().await;
    let reset = chrono::Utc::now().timestamp() + 3000;
    Mock::given(method("GET"))
        .respond_with(
            error_reply(403, "API rate limit exceeded for user ID 1.")
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    let err = t.issue(12).await.unwrap_err();
    match &err {
        TrackerError::RateLimited { reset: r, .. } => assert_eq!(r.timestamp(), reset),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.exit().code(), 1);
}

#[tokio::test]
async fn an_unreachable_api_is_a_connection_error_after_retries() {
    // Bind and drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let t = tracker_at(&format!("http://127.0.0.1:{port}"));
    let err = t.issue(1).await.unwrap_err();
    match &err {
        TrackerError::Connection { attempts, .. } => assert_eq!(*attempts, 4),
        other => panic!("{other:?}"),
    }
    assert!(!format!("{err} {err:?}").contains(TOKEN));
}

#[tokio::test]
async fn setup_creates_only_the_missing_labels() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(json_reply(200, "labels.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(|req: &Request| {
            let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
            ResponseTemplate::new(201).set_body_json(json!({
                "id": 1, "name": body["name"], "color": body["color"],
                "description": body["description"], "default": false
            }))
        })
        .expect(4)
        .mount(&server)
        .await;
    let specs = workflow::labels("ready");
    let done = t.ensure_labels(&specs).await.unwrap();
    let actions: Vec<(&str, LabelAction)> = done.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    assert_eq!(
        actions,
        [
            ("ralph", LabelAction::ExistsDifferent),
            ("in-refinement", LabelAction::Created),
            ("ready", LabelAction::Exists),
            ("in-progress", LabelAction::Created),
            ("attention-needed", LabelAction::Created),
            ("backlog-review", LabelAction::Created),
        ]
    );
    let posted: Vec<serde_json::Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(posted[0]["name"], "in-refinement");
    assert_eq!(posted[0]["color"], "fbca04");
    assert!(posted[0]["description"].as_str().unwrap().len() > 10);
}

#[tokio::test]
async fn labels_are_added_and_removed() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/13/labels")))
        .and(body_json(json!({"labels": ["ready"]})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"name": "ready"}])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(format!("{REPO}/issues/13/labels/in-refinement")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    // A label with a space is encoded; the issue lacks it (404), and the issue exists.
    Mock::given(method("DELETE"))
        .and(path(format!(
            "{REPO}/issues/13/labels/good%20first%20issue"
        )))
        .respond_with(error_reply(404, "Label does not exist"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/13")))
        .respond_with(json_reply(200, "issue_13.json"))
        .expect(1)
        .mount(&server)
        .await;
    t.add_labels(13, &["ready".into()]).await.unwrap();
    assert!(t.remove_label(13, "in-refinement").await.unwrap());
    assert!(!t.remove_label(13, "good first issue").await.unwrap());
}

#[tokio::test]
async fn body_comment_and_assignment_are_sent_as_json() {
    let (server, t) = server().await;
    Mock::given(method("PATCH"))
        .and(path(format!("{REPO}/issues/12")))
        .and(body_json(json!({"body": "- [x] done\r\n"})))
        .respond_with(json_reply(200, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/12/comments")))
        .and(body_json(json!({"body": "ralph escalated"})))
        .respond_with(
            ResponseTemplate::new(201).set_body_json(json!({"id": 1, "body": "ralph escalated"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/12/assignees")))
        .and(body_json(json!({"assignees": ["octocat"]})))
        .respond_with(json_reply(201, "issue_12.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(json_reply(200, "user.json"))
        .expect(1)
        .mount(&server)
        .await;
    t.set_body(12, "- [x] done\r\n").await.unwrap();
    // A check's coloured output (FORCE_COLOR) is posted as plain text.
    t.comment(12, "\x1b[31mralph\x1b[0m escalated\r")
        .await
        .unwrap();
    t.assign(12, &["octocat".into()]).await.unwrap();
    assert_eq!(t.current_user().await.unwrap().as_deref(), Some("octocat"));
}

#[tokio::test]
async fn an_app_token_has_no_user() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(error_reply(403, "Resource not accessible by integration"))
        .mount(&server)
        .await;
    assert_eq!(t.current_user().await.unwrap(), None);
}

fn new_pr() -> NewPullRequest {
    NewPullRequest {
        issue: 12,
        title: "Add option to remove the notification".into(),
        head: "ralph/12-add-option-to-remove-the-no".into(),
        base: "main".into(),
        body: "Fixes #12".into(),
    }
}

#[tokio::test]
async fn pull_requests_are_opened() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/pulls")))
        .and(body_json(json!({
            "title": "Add option to remove the notification",
            "head": "ralph/12-add-option-to-remove-the-no",
            "base": "main",
            "body": "Fixes #12"
        })))
        .respond_with(json_reply(201, "pull_request.json"))
        .expect(1)
        .mount(&server)
        .await;
    let pr = t.create_pull_request(&new_pr()).await.unwrap();
    assert_eq!(pr.number, 21);
    assert_eq!(pr.head, "ralph/12-add-option-to-remove-the-no");
    assert_eq!(pr.base, "main");
    assert_eq!(
        pr.url.as_deref(),
        Some("https://github.com/octo-org/octo-repo/pull/21")
    );
}

#[tokio::test]
async fn an_existing_pull_request_is_found_instead_of_failing() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/pulls")))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "message": "Validation Failed",
            "errors": [{"resource": "PullRequest", "code": "custom",
                        "message": "A pull request already exists for octo-org:ralph/12-add-option-to-remove-the-no."}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let list = format!("[{}]", fixture("pull_request.json"));
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/pulls")))
        .and(query_param(
            "head",
            "octo-org:ralph/12-add-option-to-remove-the-no",
        ))
        .and(query_param("state", "open"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(list, "application/json"))
        .expect(2)
        .mount(&server)
        .await;
    let pr = t.create_pull_request(&new_pr()).await.unwrap();
    assert_eq!(pr.number, 21);
    let found = t
        .find_pull_request("ralph/12-add-option-to-remove-the-no")
        .await
        .unwrap();
    assert_eq!(found, Some(pr));
}

#[tokio::test]
async fn the_last_user_to_apply_a_label_is_found_in_the_events() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12/events")))
        .respond_with(json_reply(200, "issue_12_events.json"))
        .expect(2)
        .mount(&server)
        .await;
    assert_eq!(
        t.label_applied_by(12, "ready").await.unwrap().as_deref(),
        Some("maintainer")
    );
    assert_eq!(t.label_applied_by(12, "wontfix").await.unwrap(), None);
}

#[tokio::test]
async fn permissions_use_the_finer_role_and_treat_strangers_as_none() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/maintainer/permission")))
        .respond_with(json_reply(200, "permission_maintainer.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/stranger/permission")))
        .respond_with(error_reply(404, "Not Found"))
        .expect(1)
        .mount(&server)
        .await;
    let p = t.permission("maintainer").await.unwrap();
    assert_eq!(p, Permission::Maintain);
    assert!(p.can_write());
    assert_eq!(t.permission("stranger").await.unwrap(), Permission::None);
}

#[tokio::test]
async fn malformed_answers_are_decode_errors() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("{not json"))
        .mount(&server)
        .await;
    let err = t.issue(12).await.unwrap_err();
    assert!(matches!(err, TrackerError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("get issue #12"));
}
