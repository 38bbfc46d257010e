//! The Action on a real runner (docs/github-action.md), through the binary against a wiremock
//! GitHub: a repository that forbids Actions to open pull requests (the work is pushed, the issue
//! says where to open it and which setting allows ralph to, exit 1); once a competition changed
//! anything, no error exits 2.

use crate::common::git;
use crate::compete::{action_mode, github_repo, github_server, labeler, run, REPO_PATH, TOKEN};
use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, ResponseTemplate};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_pull_request_leaves_the_work_pushed_and_says_which_setting_allows_it() {
    let server = github_server().await;
    labeler(&server, "maintain").await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO_PATH}/pulls")))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "GitHub Actions is not permitted to create or approve pull requests.",
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            "status": "403"
        })))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(format!("^{REPO_PATH}/issues/12/comments$")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .mount(&server)
        .await;
    let repo = github_repo();
    let files = tempfile::tempdir().unwrap();
    let mut cmd = action_mode(&repo, &server, files.path());
    cmd.env("GITHUB_SERVER_URL", "https://github.com");
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(
        out.code, 1,
        "the work is done, a human opens the PR: {}",
        out.stderr
    );
    let compare = "https://github.com/octo-org/octo-repo/compare/main...ralph/12-add-option-to-remove-the-notif?expand=1";
    assert!(out.stderr.contains(compare), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Allow GitHub Actions to create and approve pull requests"),
        "{}",
        out.stderr
    );
    // The branch is on the remote.
    assert!(git(&repo.remote, &["branch", "--list"]).contains("ralph/12-add-option-to-remove"));
    // The issue: attention-needed and a comment with the link and the setting.
    let requests = server.received_requests().await.unwrap();
    let labels: Vec<Value> = requests
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/issues/12/labels"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert!(
        labels.iter().any(|l| l["labels"][0] == "attention-needed"),
        "{labels:?}"
    );
    let comment: Value = requests
        .iter()
        .find(|r| r.url.path().ends_with("/issues/12/comments"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .expect("a comment");
    let body = comment["body"].as_str().unwrap();
    assert!(
        body.contains(compare) && body.contains("Workflow permissions"),
        "{body}"
    );
    // The job summary and the outputs say so.
    let summary = std::fs::read_to_string(files.path().join("summary.md")).unwrap();
    assert!(summary.contains("may not open pull requests"), "{summary}");
    let outputs = std::fs::read_to_string(files.path().join("output")).unwrap();
    assert!(outputs.contains("outcome=escalated"), "{outputs}");
    assert!(!summary.contains(TOKEN) && !body.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_labels_moved_a_refusal_by_github_exits_one() {
    // GitHub refuses the body update (403): the labels already moved, so not "nothing changed".
    let server = github_server().await;
    Mock::given(method("PATCH"))
        .and(path(format!("{REPO_PATH}/issues/12")))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "message": "Resource not accessible by integration"
        })))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(format!("^{REPO_PATH}/issues/12/comments$")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .mount(&server)
        .await;
    let repo = github_repo();
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri()).args([
        "--tracker",
        "github",
        "--repo",
        "octo-org/octo-repo",
        "compete",
        "12",
    ]);
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the run stopped after it had changed the issue"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("403"), "{}", out.stderr);
}
