//! The GitLab tracker against a wiremock server in the shape of GitLab's REST API v4: every
//! call, the project path encoded (`acme%2Fplatform%2Fwidgets`), the token in `PRIVATE-TOKEN`,
//! pages by `Link` and by `x-next-page`, the error bodies (`{"message": …}` in its shapes,
//! `{"error", "error_description"}`), 409 conflicts, 429 with `Retry-After` and
//! `RateLimit-Reset`, retries. Fixtures in tests/fixtures/gitlab/ are in the shape of real
//! GitLab objects.

use crate::common::fast_policy;
use ralph::tracker::discover::{Token, TokenSource};
use ralph::tracker::gitlab::{GitlabTracker, Place};
use ralph::tracker::pulls::{CiState, FeedbackKind, PullState};
use ralph::tracker::rest::RetryPolicy;
use ralph::tracker::{
    IssueQuery, IssueState, IssueTracker, LabelAction, NewPullRequest, Permission, TrackerError,
};
use serde_json::{json, Value};
use std::time::Duration;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub(crate) const TOKEN: &str = "glpat-wiremockTestToken0123456789";
/// The project's path, as the API takes it.
pub(crate) const PROJECT: &str = "/api/v4/projects/acme%2Fplatform%2Fwidgets";

/// A fixture from tests/fixtures/gitlab/.
pub(crate) fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/gitlab/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    serde_json::from_str(&text).unwrap()
}

pub(crate) fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

fn tracker_with(uri: &str, policy: RetryPolicy) -> GitlabTracker {
    let place = Place {
        api: format!("{uri}/api/v4"),
        web: uri.to_owned(),
        project: "acme/platform/widgets".parse().unwrap(),
    };
    GitlabTracker::new(
        &place,
        Token::new(TOKEN, TokenSource::Var("GITLAB_TOKEN")),
        policy,
    )
    .unwrap()
}

async fn server() -> (MockServer, GitlabTracker) {
    let server = MockServer::start().await;
    let tracker = tracker_with(&server.uri(), fast_policy());
    (server, tracker)
}

fn body_of(r: &wiremock::Request) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn an_issue_by_its_iid_in_a_nested_project_with_the_private_token() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/12")))
        .and(header("private-token", TOKEN))
        .respond_with(ok(fixture("issue_12.json")))
        .expect(1)
        .mount(&server)
        .await;
    let issue = t.issue(12).await.unwrap();
    assert_eq!(issue.number, 12);
    assert_eq!(issue.labels, ["ready", "enhancement"]);
    assert_eq!(issue.state, IssueState::Open);
    assert_eq!(issue.author.as_deref(), Some("octocat"));
    assert!(!issue.is_pull_request);
    assert!(issue.body.contains("- [ ] Add a `notify` option"));
    assert_eq!(
        issue.url.as_deref(),
        Some("https://gitlab.example.com/acme/platform/widgets/-/issues/12")
    );
    assert_eq!(t.describe(), "GitLab acme/platform/widgets");
}

#[tokio::test]
async fn lists_follow_x_next_page_and_link_headers() {
    let (server, t) = server().await;
    let mut second = fixture("issue_12.json");
    second["iid"] = json!(13);
    let mut third = fixture("issue_12.json");
    third["iid"] = json!(14);
    third["state"] = json!("closed");
    // Page 1 names the next page only in x-next-page (keyset-less, offset pages).
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues")))
        .and(query_param("labels", "ready"))
        .and(query_param("state", "opened"))
        .and(query_param("per_page", "100"))
        .and(query_param("order_by", "created_at"))
        .respond_with(
            ok(json!([fixture("issue_12.json")]))
                .insert_header("x-next-page", "2")
                .insert_header("x-page", "1")
                .insert_header("x-per-page", "100"),
        )
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    let link = format!(
        "<{}{PROJECT}/issues?labels=ready&page=3&per_page=100&state=opened>; rel=\"next\", <{}{PROJECT}/issues?page=1>; rel=\"first\"",
        server.uri(),
        server.uri()
    );
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues")))
        .and(query_param("page", "2"))
        .respond_with(
            ok(json!([second]))
                .insert_header("x-next-page", "3")
                .insert_header("link", link.as_str()),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues")))
        .and(query_param("page", "3"))
        .and(header("private-token", TOKEN))
        .respond_with(ok(json!([third])).insert_header("x-next-page", ""))
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
    let numbers: Vec<u64> = issues.iter().map(|i| i.number).collect();
    assert_eq!(numbers, [12, 13, 14]);
    assert_eq!(issues[2].state, IssueState::Closed);
}

#[tokio::test]
async fn labels_move_with_one_put_each_and_setup_creates_what_is_missing() {
    let (server, t) = server().await;
    Mock::given(method("PUT"))
        .and(path(format!("{PROJECT}/issues/12")))
        .respond_with(ok(fixture("issue_12.json")))
        .mount(&server)
        .await;
    t.add_labels(12, &["in-progress".into(), "ralph".into()])
        .await
        .unwrap();
    assert!(t.remove_label(12, "ready").await.unwrap());
    t.set_body(12, "- [x] done").await.unwrap();
    let puts: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(body_of)
        .collect();
    assert_eq!(
        puts,
        [
            json!({"add_labels": "in-progress,ralph"}),
            json!({"remove_labels": "ready"}),
            json!({"description": "- [x] done"})
        ]
    );
    server.reset().await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/labels")))
        .respond_with(ok(fixture("labels.json")))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/labels")))
        .and(body_json(json!({"name": "ralph", "color": "#5319e7", "description": "ralph is working on this issue"})))
        .respond_with(ResponseTemplate::new(409).set_body_json(json!({"message": "Label already exists"})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/labels")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1, "name": "x"})))
        .mount(&server)
        .await;
    let done = t
        .ensure_labels(&ralph::tracker::workflow::labels("ready"))
        .await
        .unwrap();
    let by_name = |n: &str| done.iter().find(|(l, _)| l == n).unwrap().1;
    assert_eq!(by_name("ready"), LabelAction::Exists, "#0e8a16 is 0e8a16");
    assert_eq!(by_name("in-progress"), LabelAction::ExistsDifferent);
    assert_eq!(by_name("ralph"), LabelAction::Exists, "409: made meanwhile");
    assert_eq!(by_name("attention-needed"), LabelAction::Created);
}

#[tokio::test]
async fn notes_are_comments_and_system_notes_are_not() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/issues/12/notes")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/12/notes")))
        .and(query_param("sort", "asc"))
        .respond_with(ok(json!([
            {"id": 1, "body": "added ~ready label", "system": true, "created_at": "2026-11-02T09:20:00.000Z", "author": {"id": 17, "username": "octocat"}},
            {"id": 2, "body": "<!-- ralph:refine -->draft", "system": false, "created_at": "2026-11-02T09:21:00.000Z", "author": {"id": 31, "username": "ralph-bot"}}
        ])))
        .mount(&server)
        .await;
    t.comment(12, "\u{1b}[31mred\u{1b}[0m done").await.unwrap();
    let sent = server.received_requests().await.unwrap();
    assert_eq!(body_of(&sent[0]), json!({"body": "red done"}));
    assert_eq!(
        t.comments(12).await.unwrap(),
        ["<!-- ralph:refine -->draft"]
    );
}

#[tokio::test]
async fn a_merge_request_is_opened_from_ralphs_branch_or_found_when_it_exists() {
    let (server, t) = server().await;
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/merge_requests")))
        .respond_with(ResponseTemplate::new(201).set_body_json(fixture("merge_request.json")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let new = NewPullRequest {
        issue: 12,
        title: "Add option".into(),
        head: "ralph/12-add-option-to-remove-the-no".into(),
        base: "main".into(),
        body: "body\n\nFixes #12".into(),
    };
    let pr = t.create_pull_request(&new).await.unwrap();
    assert_eq!(pr.number, 7, "a merge request has an iid of its own");
    assert_eq!(
        pr.url.as_deref(),
        Some("https://gitlab.example.com/acme/platform/widgets/-/merge_requests/7")
    );
    let sent = body_of(&server.received_requests().await.unwrap()[0]);
    assert_eq!(
        sent,
        json!({"source_branch": new.head, "target_branch": "main", "title": "Add option", "description": "body\n\nFixes #12"})
    );
    // Run again: GitLab refuses a second open merge request for the branch with 409.
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/merge_requests")))
        .respond_with(ResponseTemplate::new(409).set_body_json(json!({
            "message": ["Another open merge request already exists for this source branch: !7"]
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/merge_requests")))
        .and(query_param("state", "opened"))
        .and(query_param("source_branch", new.head.as_str()))
        .respond_with(ok(json!([fixture("merge_request.json")])))
        .mount(&server)
        .await;
    assert_eq!(t.create_pull_request(&new).await.unwrap().number, 7);
}

#[tokio::test]
async fn the_gate_reads_who_added_the_label_and_that_members_role() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/12/resource_label_events")))
        .respond_with(ok(fixture("label_events_12.json")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/members/all/23")))
        .respond_with(ok(fixture("member_maintainer.json")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v4/users"))
        .and(query_param("username", "reporter"))
        .respond_with(ok(
            json!([{"id": 40, "username": "reporter", "name": "R", "state": "active"}]),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/members/all/40")))
        .respond_with(ok(
            json!({"id": 40, "username": "reporter", "access_level": 20, "state": "active"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v4/users"))
        .and(query_param("username", "stranger"))
        .respond_with(ok(json!([{"id": 41, "username": "stranger"}])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/members/all/41")))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "404 Not found"})))
        .mount(&server)
        .await;
    let labeled = t.label_applied(12, "ready").await.unwrap().unwrap();
    assert_eq!(labeled.by.as_deref(), Some("maintainer"), "the latest add");
    // The labeller's id came with the event: no user lookup for them.
    assert_eq!(
        t.permission("maintainer").await.unwrap(),
        Permission::Maintain
    );
    assert_eq!(t.permission("reporter").await.unwrap(), Permission::Triage);
    assert!(!Permission::Triage.can_write());
    assert_eq!(t.permission("stranger").await.unwrap(), Permission::None);
    let lookups = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/api/v4/users")
        .count();
    assert_eq!(lookups, 2);
    assert_eq!(t.label_applied(12, "bug").await.unwrap(), None);
}

#[tokio::test]
async fn assigning_takes_the_users_id() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path("/api/v4/user"))
        .respond_with(ok(fixture("user.json")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path(format!("{PROJECT}/issues/12")))
        .and(body_json(json!({"assignee_ids": [31]})))
        .respond_with(ok(fixture("issue_12.json")))
        .expect(1)
        .mount(&server)
        .await;
    let me = t.current_user().await.unwrap().unwrap();
    assert_eq!(me, "ralph-bot");
    t.assign(12, &[me]).await.unwrap();
    assert_eq!(
        t.current_user().await.unwrap().as_deref(),
        Some("ralph-bot")
    );
}

#[tokio::test]
async fn the_project_its_role_and_the_tokens_scopes() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(PROJECT))
        .respond_with(ok(fixture("project.json")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v4/personal_access_tokens/self"))
        .respond_with(ok(fixture("token_self.json")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    let facts = t.repository().await.unwrap();
    assert_eq!(facts.default_branch.as_deref(), Some("main"));
    assert_eq!(facts.permission, Some(Permission::Write), "Developer");
    let token = t.token_facts().await.unwrap().unwrap();
    assert_eq!(token.scopes, ["api"]);
    assert!(token.missing.is_empty());
    let mut read_only = fixture("token_self.json");
    read_only["scopes"] = json!(["read_api", "read_repository"]);
    Mock::given(method("GET"))
        .and(path("/api/v4/personal_access_tokens/self"))
        .respond_with(ok(read_only))
        .mount(&server)
        .await;
    assert_eq!(t.token_facts().await.unwrap().unwrap().missing, ["api"]);
}

#[tokio::test]
async fn merge_requests_after_they_were_opened() {
    let (server, t) = server().await;
    let mut open = fixture("merge_request.json");
    open["diff_refs"] = Value::Null;
    let mut merged = fixture("merge_request.json");
    merged["iid"] = json!(5);
    merged["state"] = json!("merged");
    merged["source_branch"] = json!("ralph/3-earlier");
    merged["merge_commit_sha"] = json!("feedface");
    let mut forked = fixture("merge_request.json");
    forked["iid"] = json!(6);
    forked["source_project_id"] = json!(77);
    let mut other = fixture("merge_request.json");
    other["iid"] = json!(8);
    other["source_branch"] = json!("feature/x");
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/merge_requests")))
        .and(query_param("state", "all"))
        .respond_with(ok(json!([open, merged, forked, other])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/merge_requests/7")))
        .respond_with(ok(fixture("merge_request.json")))
        .expect(1)
        .mount(&server)
        .await;
    let pulls = t.pulls().unwrap();
    let all = pulls.pull_requests("ralph/").await.unwrap();
    let numbers: Vec<(u64, PullState)> = all.iter().map(|p| (p.number, p.state)).collect();
    assert_eq!(numbers, [(7, PullState::Open), (5, PullState::Merged)]);
    assert_eq!(
        all[0].base_sha.as_deref(),
        Some("a1b2c3d4e5f60718293a4b5c6d7e8f9011121314")
    );
    assert_eq!(all[1].merge_commit.as_deref(), Some("feedface"));
}

#[tokio::test]
async fn feedback_ci_job_logs_and_replies_on_a_merge_request() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/merge_requests/7/notes")))
        .respond_with(ok(json!([
            {"id": 300, "type": "DiffNote", "body": "off by one", "author": {"id": 23, "username": "maintainer"},
             "created_at": "2026-11-20T11:00:00.000Z", "system": false, "resolvable": true, "resolved": false,
             "position": {"base_sha": "a", "start_sha": "a", "head_sha": "b", "old_path": "lib.sh", "new_path": "lib.sh", "position_type": "text", "old_line": null, "new_line": 3}},
            {"id": 301, "type": null, "body": "approved this merge request", "author": {"id": 23, "username": "maintainer"},
             "created_at": "2026-11-20T11:01:00.000Z", "system": true, "resolvable": false}
        ])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/repository/commits/abc/statuses")))
        .respond_with(ok(json!([
            {"id": 9001, "sha": "abc", "ref": "ralph/12-x", "status": "failed", "name": "test", "allow_failure": false,
             "target_url": "https://gitlab.example.com/acme/platform/widgets/-/jobs/9001", "description": null,
             "created_at": "2026-11-20T11:00:00.000Z", "started_at": null, "finished_at": null, "author": {"id": 31, "username": "ralph-bot"}},
            {"id": 9002, "sha": "abc", "status": "failed", "name": "lint", "allow_failure": true,
             "target_url": "https://gitlab.example.com/acme/platform/widgets/-/jobs/9002"},
            {"id": 17, "sha": "abc", "status": "running", "name": "external/ci", "allow_failure": false,
             "target_url": "https://ci.example.com/build/17"}
        ])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/jobs/9001/trace")))
        .respond_with(ResponseTemplate::new(200).set_body_string("FAILED test_off\n"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{PROJECT}/merge_requests/7/notes")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path(format!("{PROJECT}/merge_requests/7")))
        .and(body_json(json!({"add_labels": "attention-needed"})))
        .respond_with(ok(fixture("merge_request.json")))
        .expect(1)
        .mount(&server)
        .await;
    let pulls = t.pulls().unwrap();
    let feedback = pulls.feedback(7).await.unwrap();
    assert_eq!(feedback.len(), 1, "system notes are GitLab's, not feedback");
    assert_eq!(
        feedback[0].kind,
        FeedbackKind::Inline {
            path: "lib.sh".into(),
            line: Some(3)
        }
    );
    let ci = pulls.ci("abc").await.unwrap();
    let states: Vec<(&str, CiState, Option<u64>)> = ci
        .iter()
        .map(|c| (c.name.as_str(), c.state, c.job))
        .collect();
    assert_eq!(
        states,
        [
            ("test", CiState::Failed, Some(9001)),
            ("lint", CiState::Neutral, Some(9002)),
            ("external/ci", CiState::Pending, None)
        ]
    );
    assert_eq!(pulls.job_log(&ci[0]).await.unwrap(), "FAILED test_off\n");
    assert!(
        pulls.job_log(&ci[2]).await.is_err(),
        "an external status has no job"
    );
    pulls.comment_on_pull(7, "reply").await.unwrap();
    pulls
        .label_pull(7, &["attention-needed".into()])
        .await
        .unwrap();
}

#[tokio::test]
async fn errors_name_gitlab_and_what_to_do_and_never_the_token() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/1")))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"message": format!("401 Unauthorized {TOKEN}")})),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/2")))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "error": "insufficient_scope",
            "error_description": "The request requires higher privileges than provided by the access token.",
            "scope": "api"
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{PROJECT}/issues/3")))
        .respond_with(
            ResponseTemplate::new(404).set_body_json(json!({"message": "404 Issue Not Found"})),
        )
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path(format!("{PROJECT}/issues/4")))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(json!({"message": {"labels": ["is invalid"]}})),
        )
        .mount(&server)
        .await;
    let err = t.issue(1).await.unwrap_err();
    assert!(
        matches!(err, TrackerError::BadCredentials { .. }),
        "{err:?}"
    );
    let text = format!("{err} {err:?} {}", err.hint().unwrap());
    assert!(
        text.contains("GitLab rejected the token from GITLAB_TOKEN"),
        "{text}"
    );
    assert!(!text.contains(TOKEN));
    let err = t.issue(2).await.unwrap_err();
    assert!(matches!(err, TrackerError::Forbidden { .. }), "{err:?}");
    assert!(err.to_string().contains("higher privileges"), "{err}");
    assert!(err.hint().unwrap().contains("`api` scope"));
    let err = t.issue(3).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "issue #3 in acme/platform/widgets not found"
    );
    assert!(err.hint().unwrap().contains("GROUP/PROJECT"));
    let err = t.add_labels(4, &["x".into()]).await.unwrap_err();
    assert!(
        matches!(
            err,
            TrackerError::Http {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("labels is invalid"), "{err}");
}

#[tokio::test]
async fn a_429_waits_for_retry_after_and_a_used_up_limit_for_its_reset() {
    let server = MockServer::start().await;
    let policy = fast_policy();
    let pause = policy.pause.clone();
    let t = tracker_with(&server.uri(), policy);
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_string("Retry later\n")
                .insert_header("retry-after", "2")
                .insert_header("ratelimit-limit", "600")
                .insert_header("ratelimit-observed", "600")
                .insert_header("ratelimit-remaining", "1"),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ok(fixture("issue_12.json")))
        .mount(&server)
        .await;
    assert_eq!(t.issue(12).await.unwrap().number, 12);
    assert_eq!(pause.waits(), [Duration::from_secs(2)]);
    // RateLimit-Remaining 0 with a reset far away: fail at once, naming the reset.
    server.reset().await;
    let reset = chrono::Utc::now().timestamp() + 3600;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(json!({"message": "This endpoint has been requested too many times. Try again later."}))
                .insert_header("ratelimit-remaining", "0")
                .insert_header("ratelimit-reset", reset.to_string().as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    match t.issue(12).await.unwrap_err() {
        TrackerError::RateLimited { reset: r, .. } => assert_eq!(r.timestamp(), reset),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn server_errors_are_retried() {
    let (server, t) = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>502 Bad Gateway</html>"))
        .up_to_n_times(2)
        .with_priority(1)
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ok(fixture("issue_12.json")))
        .expect(1)
        .mount(&server)
        .await;
    assert_eq!(t.issue(12).await.unwrap().number, 12);
}
