//! The Forgejo tracker against a wiremock server in the shape of Forgejo's (and Gitea's) API
//! v1: the token as `Authorization: token …`, labels applied and removed by id, the timeline's
//! label entries for the gate, collaborator permissions, pull requests (409 when one exists),
//! reviews with their line comments, commit statuses and an Actions job's raw log from its page,
//! pages by `Link` with `limit`, and the error bodies (`{"message", "url"}`). Fixtures in
//! tests/fixtures/forgejo/ are in the shape of real Forgejo objects.

use ralph::tracker::discover::{Token, TokenSource};
use ralph::tracker::forgejo::{ForgejoTracker, Place};
use ralph::tracker::pulls::{CiState, FeedbackKind, PullState, ReviewVerdict};
use ralph::tracker::{
    IssueQuery, IssueState, IssueTracker, NewPullRequest, Permission, TrackerError,
};
use serde_json::{json, Value};
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub(crate) const TOKEN: &str = "forgejo0123456789abcdef0123456789abcdef";
pub(crate) const REPO: &str = "/api/v1/repos/acme/widgets";

/// A fixture from tests/fixtures/forgejo/.
pub(crate) fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/forgejo/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

fn error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"message": message, "url": "https://codeberg.example/api/swagger"}))
}

async fn server() -> (MockServer, ForgejoTracker) {
    let server = MockServer::start().await;
    let place = Place {
        api: format!("{}/api/v1", server.uri()),
        web: server.uri(),
        repo: "acme/widgets".parse().unwrap(),
    };
    let t = ralph::tracker::forgejo::tracker(
        &place,
        Token::new(TOKEN, TokenSource::Var("FORGEJO_TOKEN")),
        crate::common::fast_policy(),
    )
    .unwrap();
    (server, t)
}

#[tokio::test]
async fn issues_with_the_token_header_and_pages_by_link() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12")))
        .and(header("authorization", format!("token {TOKEN}").as_str()))
        .respond_with(ok(fixture("issue_12.json")))
        .mount(&server)
        .await;
    let issue = t.issue(12).await.unwrap();
    assert_eq!(issue.labels, ["ready", "enhancement"]);
    assert_eq!(issue.author.as_deref(), Some("octocat"));
    assert!(!issue.is_pull_request && issue.assignees.is_empty());
    let mut second = fixture("issue_12.json");
    second["number"] = json!(14);
    let link = format!(
        "<{}{REPO}/issues?labels=ready&limit=50&page=2&state=open&type=issues>; rel=\"next\",<{}{REPO}/issues?page=2>; rel=\"last\"",
        server.uri(),
        server.uri()
    );
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("limit", "50"))
        .and(query_param("type", "issues"))
        .and(query_param("labels", "ready"))
        .respond_with(
            ok(json!([fixture("issue_12.json")]))
                .insert_header("link", link.as_str())
                .insert_header("x-total-count", "2"),
        )
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("page", "2"))
        .respond_with(ok(json!([second])).insert_header("x-total-count", "2"))
        .with_priority(1)
        .mount(&server)
        .await;
    let issues = t
        .issues(&IssueQuery {
            labels: vec!["ready".into()],
            state: Some(IssueState::Open),
        })
        .await
        .unwrap();
    assert_eq!(
        issues.iter().map(|i| i.number).collect::<Vec<_>>(),
        [12, 14]
    );
    assert_eq!(t.describe(), "Forgejo acme/widgets");
}

#[tokio::test]
async fn labels_move_by_id_looked_up_once() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(ok(fixture("labels.json")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/12/labels")))
        .and(body_json(json!({"labels": [102, 104]})))
        .respond_with(ok(fixture("labels.json")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(format!("{REPO}/issues/12/labels/101")))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;
    t.add_labels(12, &["in-progress".into(), "ralph".into()])
        .await
        .unwrap();
    assert!(t.remove_label(12, "ready").await.unwrap());
    assert!(!t.remove_label(12, "no-such-label").await.unwrap());
    let err = t.add_labels(12, &["missing".into()]).await.unwrap_err();
    assert!(
        err.to_string().contains("label `missing`") && err.to_string().contains("ralph setup"),
        "{err}"
    );
}

#[tokio::test]
async fn the_gate_reads_the_timeline_and_the_collaborator_permission() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12/timeline")))
        .respond_with(ok(fixture("timeline_12.json")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/maintainer/permission")))
        .respond_with(ok(fixture("permission_maintainer.json")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/reader/permission")))
        .respond_with(ok(
            json!({"permission": "read", "role_name": "read", "user": {"login": "reader"}}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/stranger/permission")))
        .respond_with(error(403, "user should be collaborator or owner"))
        .mount(&server)
        .await;
    let l = t.label_applied(12, "ready").await.unwrap().unwrap();
    assert_eq!(l.by.as_deref(), Some("maintainer"));
    assert_eq!(t.permission("maintainer").await.unwrap(), Permission::Write);
    assert_eq!(t.permission("reader").await.unwrap(), Permission::Read);
    assert_eq!(t.permission("stranger").await.unwrap(), Permission::None);
}

#[tokio::test]
async fn a_pull_request_is_opened_or_found_when_one_exists() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/pulls")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("pull_13.json")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let new = NewPullRequest {
        issue: 12,
        title: "T".into(),
        head: "ralph/12-add-option-to-remove-the-no".into(),
        base: "main".into(),
        body: "b\n\nFixes #12".into(),
    };
    assert_eq!(t.create_pull_request(&new).await.unwrap().number, 13);
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/pulls")))
        .respond_with(error(409, "pull request already exists for these targets"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/pulls")))
        .and(query_param("state", "open"))
        .respond_with(ok(json!([fixture("pull_13.json")])))
        .mount(&server)
        .await;
    let found = t.create_pull_request(&new).await.unwrap();
    assert_eq!(found.number, 13);
    assert_eq!(
        found.url.as_deref(),
        Some("https://codeberg.example/acme/widgets/pulls/13")
    );
}

#[tokio::test]
async fn reviews_line_comments_statuses_and_a_job_log_from_its_page() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/pulls/13/reviews")))
        .respond_with(ok(json!([
            {"id": 70, "user": {"login": "maintainer"}, "body": "Please add shout", "state": "REQUEST_CHANGES",
             "submitted_at": "2026-11-20T11:00:00Z", "comments_count": 1, "dismissed": false, "stale": false, "official": true},
            {"id": 71, "user": {"login": "maintainer"}, "body": "", "state": "PENDING", "comments_count": 0}
        ])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/pulls/13/reviews/70/comments")))
        .respond_with(ok(json!([
            {"id": 900, "user": {"login": "maintainer"}, "body": "here", "path": "lib.sh", "position": 2,
             "original_position": 0, "commit_id": "h", "created_at": "2026-11-20T11:00:01Z", "diff_hunk": "@@"}
        ])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/13/comments")))
        .respond_with(ok(json!([])))
        .mount(&server)
        .await;
    let job = format!("{}/acme/widgets/actions/runs/5/jobs/0", server.uri());
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/commits/abc/status")))
        .respond_with(ok(json!({"state": "failure", "sha": "abc", "total_count": 2, "statuses": [
            {"id": 1, "status": "failure", "context": "ci / test (push)", "target_url": job, "description": "Failing after 5s"},
            {"id": 2, "status": "warning", "context": "lint", "target_url": "https://elsewhere.example/x"}
        ]})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/acme/widgets/actions/runs/5/jobs/0/logs"))
        .and(header("authorization", format!("token {TOKEN}").as_str()))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("FAILED test_off\n", "text/plain; charset=utf-8"),
        )
        .mount(&server)
        .await;
    let pulls = t.pulls().unwrap();
    let feedback = pulls.feedback(13).await.unwrap();
    let kinds: Vec<&FeedbackKind> = feedback.iter().map(|f| &f.kind).collect();
    assert_eq!(
        kinds,
        [
            &FeedbackKind::Review {
                verdict: ReviewVerdict::ChangesRequested
            },
            &FeedbackKind::Inline {
                path: "lib.sh".into(),
                line: Some(2)
            }
        ],
        "the pending review is a draft"
    );
    let ci = pulls.ci("abc").await.unwrap();
    assert_eq!(
        (ci[0].state, ci[1].state),
        (CiState::Failed, CiState::Neutral)
    );
    assert_eq!(pulls.job_log(&ci[0]).await.unwrap(), "FAILED test_off\n");
    assert!(
        pulls.job_log(&ci[1]).await.is_err(),
        "another host gets no token"
    );
}

#[tokio::test]
async fn merged_pull_requests_and_forks() {
    let (server, t) = server().await;
    let mut merged = fixture("pull_13.json");
    merged["state"] = json!("closed");
    merged["merged"] = json!(true);
    merged["merged_at"] = json!("2026-11-21T09:00:00Z");
    merged["merge_commit_sha"] = json!("feedface");
    let mut fork = fixture("pull_13.json");
    fork["number"] = json!(14);
    fork["head"]["repo"]["full_name"] = json!("mallory/widgets");
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/pulls")))
        .and(query_param("state", "all"))
        .respond_with(ok(json!([merged, fork])))
        .mount(&server)
        .await;
    let all = t.pulls().unwrap().pull_requests("ralph/").await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, PullState::Merged);
    assert_eq!(all[0].merge_commit.as_deref(), Some("feedface"));
}

#[tokio::test]
async fn errors_name_forgejo_and_never_the_token() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/1")))
        .respond_with(error(401, &format!("invalid token {TOKEN}")))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/2/comments")))
        .respond_with(error(
            403,
            "token does not have at least one of required scope(s): [write:issue]",
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/3")))
        .respond_with(error(404, "The target couldn't be found."))
        .mount(&server)
        .await;
    let err = t.issue(1).await.unwrap_err();
    let text = format!("{err} {err:?} {}", err.hint().unwrap());
    assert!(
        text.contains("Forgejo rejected the token from FORGEJO_TOKEN"),
        "{text}"
    );
    assert!(!text.contains(TOKEN));
    let err = t.comment(2, "x").await.unwrap_err();
    assert!(matches!(err, TrackerError::Forbidden { .. }));
    assert!(
        err.to_string().contains("[write:issue]") && err.hint().unwrap().contains("write:issue")
    );
    let err = t.issue(3).await.unwrap_err();
    assert_eq!(err.to_string(), "issue #3 in acme/widgets not found");
}

/// Forgejo shows no token its scopes: each scope ralph needs is asked for by a request that
/// changes nothing, and the one Forgejo names in its refusal is missing.
#[tokio::test]
async fn the_tokens_scopes_are_told_by_requests_that_change_nothing() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path("/api/v1/user"))
        .respond_with(ok(json!({"id": 3, "login": "ralph-bot"})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(format!("{REPO}/issues/0")))
        .respond_with(error(
            403,
            "token does not have at least one of required scope(s): [write:issue]",
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(format!("{REPO}/pulls/0")))
        .respond_with(error(404, "The target couldn't be found."))
        .expect(1)
        .mount(&server)
        .await;
    let facts = t.token_facts().await.unwrap().unwrap();
    assert_eq!(facts.name, "FORGEJO_TOKEN");
    assert_eq!(facts.scopes, ["read:user", "write:repository"]);
    assert_eq!(facts.missing, ["write:issue"]);
    assert!(facts.renew.contains("write:issue"), "{}", facts.renew);
    // Nothing but the three probes was sent.
    let sent: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(
        sent,
        [
            "GET /api/v1/user",
            &format!("PATCH {REPO}/issues/0"),
            &format!("PATCH {REPO}/pulls/0")
        ]
    );
}
