//! `ralph follow` against the GitHub-shaped test server: a competition on issue 12 pushes the
//! branch of pull request #21, then the server serves that pull request with a review, check
//! runs and a job log. Only a reviewer with write access starts a revision; a check failing on
//! the head and passing on the base feeds a revision its job log; a check failing on both is not
//! the change's fault.

use crate::common::{git, script};
use crate::compete::{github_repo, github_server, run, Repo, REPO_PATH, TOKEN};
use serde_json::{json, Value};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The competition's branch (`ralph/12-…`), as the remote has it.
pub(crate) fn branch(repo: &Repo) -> String {
    git(
        &repo.remote,
        &[
            "branch",
            "--list",
            "ralph/12-*",
            "--format=%(refname:short)",
        ],
    )
    .trim()
    .to_owned()
}

/// The competition's implementer, which in a revision also writes down its prompt. Its
/// summaries, which become commit messages, are hostile: closing patterns for other issues,
/// mentions, quick actions, references and an issue's address.
pub(crate) const IMPLEMENTER: &str = r#"prompt=$(cat)
case "$prompt" in
  *"This is a revision"*)
    printf '%s' "$prompt" > "$HOME/revision.prompt"
    echo 'shout() { echo "HELLO, $1!"; }' >> lib.sh
    printf '%s\n' '{"summary":"added shout. Fixes #17\n/close\n/merge\n@all resolves acme/widgets#18","checkboxes_completed":["feedback_1","ci_1"]}';;
  *)
    echo 'greet() { echo "Hello, $1!"; }' >> lib.sh
    printf '%s\n' '{"summary":"added greet. Closes #15, fixes #16.\n/merge\n  /label ~security\n@all cc @maintainer: see GH-5 !6 &7 %v1.0 and closes https://forge.example/acme/widgets/issues/4","checkboxes_completed":["req_1"]}';;
esac"#;

/// Every commit of ralph's branch on the remote (those `main` lacks), with the parts of each
/// message a forge would act on: a closing pattern's reference, a mention, a quick action
/// opening a line, an issue's address. A rough reading of GitHub's, GitLab's and Forgejo's
/// rules, stricter than any. Asserts the hostile summaries reached the commits, broken.
pub(crate) fn assert_commits_inert(repo: &Repo, commits: usize) {
    let log = git(
        &repo.remote,
        &["log", "--format=%B%x00", &format!("main..{}", branch(repo))],
    );
    let messages: Vec<&str> = log
        .split('\0')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    assert_eq!(messages.len(), commits, "{log}");
    for m in &messages {
        // Only ralph's own `(#12)` in the subject, which closes nothing.
        let acting = commit_acting_parts(m);
        assert!(
            acting.len() == 1 && acting[0].starts_with("(#12)"),
            "{acting:?} in {m}"
        );
    }
    assert!(log.contains("Closes # 15, fixes # 16"), "{log}");
    if commits > 1 {
        assert!(log.contains("Fixes # 17"), "{log}");
    }
}

/// The words of a commit message a forge would act on (see [`assert_commits_inert`]).
fn commit_acting_parts(message: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in message.lines() {
        if line.trim_start().starts_with('/') {
            found.push(line.to_owned());
        }
        for word in line.split_whitespace() {
            let lower = word.to_ascii_lowercase();
            let digit_after = |sigil: char| {
                word.char_indices().any(|(i, c)| {
                    c == sigil && word[i + 1..].starts_with(|d: char| d.is_ascii_digit())
                })
            };
            let starts_ref = word
                .trim_start_matches(['(', '"', '\''])
                .chars()
                .collect::<Vec<_>>();
            let sigil_word = starts_ref.len() > 1
                && matches!(starts_ref[0], '@' | '!' | '&' | '$' | '~' | '%')
                && (starts_ref[1].is_alphanumeric() || starts_ref[1] == '"');
            if digit_after('#')
                || sigil_word
                || lower.contains("gh-") && digit_after('-')
                || lower.contains("://")
            {
                found.push(word.to_owned());
            }
        }
    }
    found
}

/// The verify role finds every open box it is shown satisfied.
pub(crate) const ARBITER: &str = r#"prompt=$(cat)
case "$RALPH_ROLE" in
  verify)
    case "$prompt" in
      *feedback_1*) echo '{"satisfied":[{"id":"feedback_1","evidence":"shout added"}],"unsatisfied":[]}';;
      *ci_1*) echo '{"satisfied":[{"id":"ci_1","evidence":"the failing test fixed"}],"unsatisfied":[]}';;
      *) echo '{"satisfied":[{"id":"req_1","evidence":"setup() takes notify"},{"id":"req_3","evidence":"CHANGELOG"}],"unsatisfied":[]}';;
    esac;;
  *) exit 1;;
esac"#;

/// What the server says about the pull request.
struct Scene<'a> {
    /// The review's author and that user's permission.
    reviewer: Option<(&'a str, &'a str)>,
    /// The `test` check run on the head and on the base (`None`: no check runs).
    ci: Option<(&'a str, &'a str)>,
    /// The repository the pull request's branch is in.
    head_repo: &'a str,
}

const OURS: &str = "octo-org/octo-repo";

async fn competed() -> (MockServer, Repo) {
    let server = github_server().await;
    let repo = github_repo();
    script(&repo.tools, "implementer.sh", IMPLEMENTER);
    script(&repo.tools, "arbiter.sh", ARBITER);
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
    assert_eq!(out.code, 0, "{}", out.stderr);
    (server, repo)
}

fn conclusion(state: &str) -> Value {
    match state {
        "pending" => json!({"status": "in_progress", "conclusion": null}),
        other => json!({"status": "completed", "conclusion": other}),
    }
}

async fn stage(server: &MockServer, repo: &Repo, scene: &Scene<'_>) {
    let head = git(&repo.remote, &["rev-parse", &branch(repo)])
        .trim()
        .to_owned();
    let base = git(&repo.remote, &["rev-parse", "main"]).trim().to_owned();
    let mut pr: Value = serde_json::from_str(&crate::common::fixture("pull_request.json")).unwrap();
    pr["head"]["sha"] = json!(head);
    pr["head"]["ref"] = json!(branch(repo));
    pr["head"]["repo"]["full_name"] = json!(scene.head_repo);
    pr["base"]["sha"] = json!(base);
    pr["labels"] = json!([]);
    let ok = |body: Value| ResponseTemplate::new(200).set_body_json(body);
    let get = |p: String, body: Value| {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
    };
    get(format!("{REPO_PATH}/pulls"), json!([pr]))
        .mount(server)
        .await;
    let reviews = match scene.reviewer {
        Some((who, _)) => json!([{
            "id": 80, "user": {"login": who}, "state": "CHANGES_REQUESTED",
            "body": "Please also add `shout NAME` printing `HELLO, NAME!`",
            "submitted_at": chrono::Utc::now() + chrono::Duration::seconds(5)
        }]),
        None => json!([]),
    };
    get(format!("{REPO_PATH}/pulls/21/reviews"), reviews)
        .mount(server)
        .await;
    get(format!("{REPO_PATH}/pulls/21/comments"), json!([]))
        .mount(server)
        .await;
    get(format!("{REPO_PATH}/issues/21/comments"), json!([]))
        .mount(server)
        .await;
    if let Some((who, permission)) = scene.reviewer {
        get(
            format!("{REPO_PATH}/collaborators/{who}/permission"),
            json!({"permission": permission, "user": {"login": who}}),
        )
        .mount(server)
        .await;
    }
    let runs = |state: Option<&str>, id: u64| match state {
        Some(s) => {
            let mut run = json!({"id": id, "name": "test", "html_url": "https://example.invalid/run",
                                  "app": {"slug": "github-actions"}});
            for (k, v) in conclusion(s).as_object().unwrap() {
                run[k] = v.clone();
            }
            json!({"total_count": 1, "check_runs": [run]})
        }
        None => json!({"total_count": 0, "check_runs": []}),
    };
    get(
        format!("{REPO_PATH}/commits/{head}/check-runs"),
        runs(scene.ci.map(|c| c.0), 99),
    )
    .mount(server)
    .await;
    get(
        format!("{REPO_PATH}/commits/{base}/check-runs"),
        runs(scene.ci.map(|c| c.1), 98),
    )
    .mount(server)
    .await;
    Mock::given(method("GET"))
        .and(path_regex(format!(
            "^{REPO_PATH}/commits/[0-9a-f]+/status$"
        )))
        .respond_with(ok(json!({"state": "success", "statuses": []})))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/actions/jobs/99/logs")))
        .respond_with(ResponseTemplate::new(200).set_body_string(
            "2026-11-20T10:00:01.1234567Z collected 12 items\n2026-11-20T10:00:02.1234567Z FAILED tests/test_notify.py::test_off - AssertionError: notified\n2026-11-20T10:00:03.1234567Z 1 failed, 11 passed\n",
        ))
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path_regex(format!("^{REPO_PATH}/issues/[0-9]+/comments$")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 1})))
        .mount(server)
        .await;
}

async fn follow(server: &MockServer, repo: &Repo) -> crate::common::Out {
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri()).args([
        "--tracker",
        "github",
        "--repo",
        "octo-org/octo-repo",
        "follow",
        "--json",
    ]);
    tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap()
}

async fn comments(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/issues/21/comments"))
        .map(|r| {
            let v: Value = serde_json::from_slice(&r.body).unwrap();
            v["body"].as_str().unwrap().to_owned()
        })
        .collect()
}

pub(crate) fn ralph_commits(repo: &Repo) -> usize {
    git(&repo.remote, &["log", "--format=%b", &branch(repo)])
        .matches("Ralph-Run:")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintainers_changes_requested_review_gets_one_revision_and_one_reply() {
    let (server, repo) = competed().await;
    stage(
        &server,
        &repo,
        &Scene {
            reviewer: Some(("maintainer", "write")),
            ci: None,
            head_repo: OURS,
        },
    )
    .await;
    let out = follow(&server, &repo).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let pr = &report["pulls"][0];
    assert_eq!(pr["number"], 21);
    assert_eq!(pr["action"]["kind"], "revised", "{pr:#}");
    assert_eq!(pr["revision"]["passed"], true);
    assert_eq!(pr["revision"]["pushed"], true);
    assert_eq!(pr["revision"]["items"][0]["source"], "review-80");
    assert_eq!(ralph_commits(&repo), 2);
    assert_commits_inert(&repo, 2);
    let replies = comments(&server).await;
    assert_eq!(replies.len(), 1, "{replies:?}");
    // Every body ralph posted: the agents' words in it act nowhere.
    let own = |a: &String| a == "#12" || a.starts_with("@maintainer");
    for b in &replies {
        assert!(crate::gitlab_loop::acting_parts(b).iter().all(own), "{b}");
    }
    eprintln!(
        "GitHub, hostile implementer and reviser: {} reply and 2 commits, none acting",
        replies.len()
    );
    assert!(replies[0].starts_with("<!-- ralph:follow answered: review-80 -->"));
    assert!(replies[0].contains("(@maintainer)"), "{}", replies[0]);
    let prompt = std::fs::read_to_string(repo.tools.join("revision.prompt")).unwrap();
    assert!(prompt.contains("Please also add `shout NAME`"), "{prompt}");
    for r in server.received_requests().await.unwrap() {
        assert!(!String::from_utf8_lossy(&r.body).contains(TOKEN));
    }
    repo.assert_no_token();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_review_by_a_read_only_user_changes_nothing() {
    let (server, repo) = competed().await;
    let events = repo.events().len();
    stage(
        &server,
        &repo,
        &Scene {
            reviewer: Some(("drive-by", "read")),
            ci: None,
            head_repo: OURS,
        },
    )
    .await;
    let out = follow(&server, &repo).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let pr = &report["pulls"][0];
    assert_eq!(pr["action"]["kind"], "left", "{pr:#}");
    assert_eq!(
        pr["ignored"][0]["reason"],
        "its author has no write access to the repository"
    );
    assert!(
        out.stderr.contains("1 piece(s) of feedback ignored"),
        "{}",
        out.stderr
    );
    assert_eq!(ralph_commits(&repo), 1);
    assert!(comments(&server).await.is_empty());
    assert_eq!(repo.events().len(), events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_failing_on_the_head_and_passing_on_the_base_feeds_a_revision_its_log() {
    let (server, repo) = competed().await;
    stage(
        &server,
        &repo,
        &Scene {
            reviewer: None,
            ci: Some(("failure", "success")),
            head_repo: OURS,
        },
    )
    .await;
    let out = follow(&server, &repo).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let pr = &report["pulls"][0];
    assert_eq!(pr["revision"]["items"][0]["source"], "test", "{pr:#}");
    assert_eq!(pr["revision"]["passed"], true);
    let prompt = std::fs::read_to_string(repo.tools.join("revision.prompt")).unwrap();
    assert!(
        prompt.contains("FAILED tests/test_notify.py::test_off - AssertionError: notified"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("2026-11-20T10:00:02"),
        "timestamps stripped"
    );
    let asked_log = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .any(|r| r.url.path() == format!("{REPO_PATH}/actions/jobs/99/logs"));
    assert!(asked_log);
    assert_eq!(ralph_commits(&repo), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_failing_on_head_and_base_is_not_the_changes_fault() {
    let (server, repo) = competed().await;
    stage(
        &server,
        &repo,
        &Scene {
            reviewer: None,
            ci: Some(("failure", "failure")),
            head_repo: OURS,
        },
    )
    .await;
    let out = follow(&server, &repo).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["pulls"][0]["action"]["kind"], "left");
    assert!(report["pulls"][0]["revision"].is_null());
    assert_eq!(ralph_commits(&repo), 1);
    assert!(comments(&server).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_from_a_fork_named_like_ralphs_is_not_followed() {
    let (server, repo) = competed().await;
    let events = repo.events().len();
    stage(
        &server,
        &repo,
        &Scene {
            reviewer: Some(("maintainer", "write")),
            ci: Some(("failure", "success")),
            head_repo: "mallory/octo-repo",
        },
    )
    .await;
    let out = follow(&server, &repo).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["pulls"], json!([]), "{report:#}");
    assert_eq!(ralph_commits(&repo), 1);
    assert!(comments(&server).await.is_empty());
    assert_eq!(repo.events().len(), events);
}
