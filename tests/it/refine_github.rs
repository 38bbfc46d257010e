//! `ralph refine N` against the wiremock GitHub (docs/refine.md): the draft comment, `--write`
//! patching the body with every other byte and its CRLF line ends kept, ralph's section
//! replaced on a second run, the labels moved; `ralph queue --refine` skipping issues with a
//! draft; and in Actions the trust gate on who labelled the issue for refinement.

use crate::compete::{run, Repo, Setup, REPO_PATH};
use crate::refine::ARBITER;
use serde_json::{json, Value};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// Prose as a browser sends it: CRLF, a stack trace in a fence, no checkbox.
const PROSE: &str = "Users want the shell library to greet them by name.\r\n\r\n```\r\nlib.sh: line 3: greet: command not found\r\n```\r\n\r\nThanks!";

/// Issue 12 as GitHub returns it, with `body` and `labels`.
fn issue(body: &str, labels: &[&str]) -> Value {
    let mut v: Value = serde_json::from_str(&crate::common::fixture("issue_12.json")).unwrap();
    v["body"] = json!(body);
    v["labels"] = json!(labels
        .iter()
        .map(|l| json!({"name": l}))
        .collect::<Vec<_>>());
    v
}

async fn github(body: &str, labels: &[&str]) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues/12")))
        .respond_with(ResponseTemplate::new(200).set_body_json(issue(body, labels)))
        .mount(&server)
        .await;
    let ok = || ResponseTemplate::new(200).set_body_json(json!([]));
    for (verb, route) in [
        ("PATCH", format!("{REPO_PATH}/issues/12")),
        ("POST", format!("{REPO_PATH}/issues/12/comments")),
        ("POST", format!("{REPO_PATH}/issues/12/labels")),
        (
            "DELETE",
            format!("{REPO_PATH}/issues/12/labels/backlog-review"),
        ),
        ("DELETE", format!("{REPO_PATH}/issues/12/labels/ready")),
    ] {
        Mock::given(method(verb))
            .and(path(route))
            .respond_with(ok())
            .mount(&server)
            .await;
    }
    server
}

fn repo() -> Repo {
    Repo::with(Setup {
        arbiter: ARBITER,
        issues: &[],
        ..Setup::default()
    })
}

fn refine(repo: &Repo, server: &MockServer, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri())
        .env_remove("GITHUB_ACTIONS")
        .args([
            "--tracker",
            "github",
            "--repo",
            "octo-org/octo-repo",
            "refine",
            "12",
        ])
        .args(extra);
    cmd
}

async fn sent(server: &MockServer, verb: &str, route: &str) -> Vec<Value> {
    let requests: Vec<Request> = server.received_requests().await.unwrap();
    requests
        .iter()
        .filter(|r| r.method.as_str() == verb && r.url.path() == route)
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_patches_the_body_keeping_every_byte_and_crlf_then_comments_and_labels() {
    let server = github(PROSE, &["backlog-review", "bug"]).await;
    let repo = repo();
    let mut cmd = refine(&repo, &server, &["--write"]);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);

    let patches = sent(&server, "PATCH", &format!("{REPO_PATH}/issues/12")).await;
    assert_eq!(patches.len(), 1);
    let body = patches[0]["body"].as_str().unwrap();
    assert!(
        body.starts_with(PROSE),
        "every byte of the prose kept: {body:?}"
    );
    let section = &body[PROSE.len()..];
    assert!(
        section.starts_with("\r\n\r\n<!-- ralph:requirements -->\r\n## Requirements\r\n\r\n- [ ] `greet NAME` prints `Hello, NAME!`\r\n<!-- /ralph:requirements ")
            && section.ends_with(" -->\r\n"),
        "{section:?}"
    );
    let comments = sent(&server, "POST", &format!("{REPO_PATH}/issues/12/comments")).await;
    let comment = comments[0]["body"].as_str().unwrap();
    assert!(comment.starts_with("<!-- ralph:refine -->"), "{comment}");
    assert!(comment.contains("`ralph ready 12`"), "{comment}");
    let added = sent(&server, "POST", &format!("{REPO_PATH}/issues/12/labels")).await;
    assert_eq!(added, vec![json!({"labels": ["in-refinement"]})]);
    let removed = sent(
        &server,
        "DELETE",
        &format!("{REPO_PATH}/issues/12/labels/backlog-review"),
    )
    .await;
    assert_eq!(removed.len(), 1);
    let not_there = sent(
        &server,
        "DELETE",
        &format!("{REPO_PATH}/issues/12/labels/ready"),
    )
    .await;
    assert!(
        not_there.is_empty(),
        "only labels the issue has are removed"
    );

    // The author edited around the section; a second run replaces only ralph's section.
    let edited = body.replace("Thanks!", "Thanks a lot!");
    let server = github(&edited, &["in-refinement"]).await;
    let mut cmd = refine(&repo, &server, &["--write"]);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let patches = sent(&server, "PATCH", &format!("{REPO_PATH}/issues/12")).await;
    let again = patches[0]["body"].as_str().unwrap();
    assert_eq!(again.matches("<!-- ralph:requirements -->").count(), 1);
    assert!(again.starts_with(&PROSE.replace("Thanks!", "Thanks a lot!")));
    assert_eq!(again, edited, "the same draft, in the same place");
    assert!(
        sent(&server, "POST", &format!("{REPO_PATH}/issues/12/labels"))
            .await
            .is_empty(),
        "in-refinement is there already"
    );

    // A maintainer edited the section itself: it is theirs now, reviewed and never overwritten.
    let by_hand = edited.replace("`greet NAME` prints", "`greet NAME` (by hand) prints");
    let server = github(&by_hand, &["in-refinement"]).await;
    let mut cmd = refine(&repo, &server, &["--write"]);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("Reviewed #12"), "{}", out.stderr);
    assert!(sent(&server, "PATCH", &format!("{REPO_PATH}/issues/12"))
        .await
        .is_empty());
    let comments = sent(&server, "POST", &format!("{REPO_PATH}/issues/12/comments")).await;
    assert!(comments[0]["body"]
        .as_str()
        .unwrap()
        .contains("reviewed this issue's requirements"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_refine_queue_skips_issues_with_a_draft() {
    let server = MockServer::start().await;
    let mut drafted = issue(PROSE, &["in-refinement"]);
    drafted["number"] = json!(30);
    drafted["created_at"] = json!("2026-01-01T00:00:00Z");
    let mut waiting = issue(PROSE, &["in-refinement"]);
    waiting["number"] = json!(31);
    waiting["created_at"] = json!("2026-02-01T00:00:00Z");
    let mut older = issue(PROSE, &["in-refinement"]);
    older["number"] = json!(29);
    older["created_at"] = json!("2025-12-01T00:00:00Z");
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues")))
        .and(query_param("labels", "in-refinement"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([waiting, drafted, older])))
        .mount(&server)
        .await;
    for (n, comments) in [
        (29, json!([{"body": "Can you say which shell?"}])),
        (
            30,
            json!([{"body": "<!-- ralph:refine -->\n**ralph drafted requirements for this issue.**"}]),
        ),
        (31, json!([])),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("{REPO_PATH}/issues/{n}/comments")))
            .respond_with(ResponseTemplate::new(200).set_body_json(comments))
            .mount(&server)
            .await;
    }
    let repo = repo();
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri()).args([
        "--tracker",
        "github",
        "--repo",
        "octo-org/octo-repo",
        "queue",
        "--refine",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["include"],
        json!([{"issue": 29}, {"issue": 31}]),
        "oldest first"
    );
}

/// `outsider` labelled issue 12 `in-refinement`, with `permission` on the repository.
async fn labelled_by(server: &MockServer, permission: &str) {
    crate::common::labelled_by(server, 12, "in-refinement", "outsider", permission).await;
}

fn in_actions(repo: &Repo, server: &MockServer) -> assert_cmd::Command {
    let mut cmd = refine(repo, server, &[]);
    cmd.env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "octo-org/octo-repo");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_actions_only_an_issue_labelled_by_a_writer_is_refined() {
    // Labelled by someone with read access: refused, nothing written.
    let server = github(PROSE, &["in-refinement"]).await;
    labelled_by(&server, "read").await;
    let repo = repo();
    let mut cmd = in_actions(&repo, &server);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`in-refinement` on #12 was applied by outsider, who has read access"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("ralph ready"), "{}", out.stderr);
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests.iter().all(|r| r.method.as_str() == "GET"),
        "only reads"
    );
    assert!(
        !repo.tools.join("arbiter.refine.prompt").exists(),
        "no agent asked"
    );

    // Not labelled for refinement at all: refused before anything else.
    let server = github(PROSE, &["bug"]).await;
    let mut cmd = in_actions(&repo, &server);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out
        .stderr
        .contains("is not labelled `in-refinement` or `backlog-review`"));

    // Labelled by a writer: drafted and commented.
    let server = github(PROSE, &["in-refinement"]).await;
    labelled_by(&server, "write").await;
    let mut cmd = in_actions(&repo, &server);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        sent(&server, "POST", &format!("{REPO_PATH}/issues/12/comments"))
            .await
            .len(),
        1
    );
    assert!(sent(&server, "PATCH", &format!("{REPO_PATH}/issues/12"))
        .await
        .is_empty());
}
