//! End-to-end tests of the tracker commands (`setup`, `ready`, `spec`, `queue`) through the
//! binary: against a wiremock GitHub (the API URL from GITHUB_API_URL, the token from
//! GITHUB_TOKEN) and offline with `--tracker local`. Also: bad credentials exit 2 with a hint,
//! and the token never reaches stdout or stderr, even at trace level.

use crate::common::{json_reply, REPO};
use assert_cmd::Command;
use serde_json::{json, Value};
use std::path::Path;
use tempfile::TempDir;
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "ghp_cliTestToken9876543210abcdef";

/// `ralph` in `dir`, pointed at `api` with the test token, environment otherwise clean.
fn ralph(dir: &Path, api: &str) -> Command {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env_remove("RALPH_LOG")
        .env_remove("GH_TOKEN")
        .env_remove("GITHUB_REPOSITORY")
        .env("GITHUB_API_URL", api)
        .env("GITHUB_TOKEN", TOKEN)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        // Retries record their waits instead of sleeping through them.
        .env("RALPH_TEST_NO_RETRY_DELAY", "1")
        .args(["--repo", "octo-org/octo-repo"]);
    cmd
}

fn workdir() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".ralph")).unwrap();
    dir
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
        "the token leaked:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    run
}

#[tokio::test(flavor = "multi_thread")]
async fn setup_creates_the_missing_labels_and_is_idempotent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(json_reply(200, "labels.json"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    // After the first run every label exists: the second run creates nothing.
    let all: Vec<Value> = [
        "ralph",
        "in-refinement",
        "ready",
        "in-progress",
        "attention-needed",
        "backlog-review",
    ]
    .iter()
    .map(|n| json!({"name": n, "color": "ededed", "description": null}))
    .collect();
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(ResponseTemplate::new(200).set_body_json(all))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/labels")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"name": "x"})))
        .expect(4)
        .mount(&server)
        .await;
    let dir = workdir();
    let r = run(ralph(dir.path(), &server.uri()).arg("setup"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Labels on GitHub octo-org/octo-repo"));
    assert!(
        r.stdout.contains("in-refinement      created"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ready              exists\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ralph              exists (its colour"),
        "{}",
        r.stdout
    );
    let r = run(ralph(dir.path(), &server.uri()).args(["setup", "--json"]));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let labels = v["labels"].as_array().unwrap();
    assert_eq!(labels.len(), 6);
    assert_eq!(labels[0]["name"], "ralph");
    assert!(
        labels.iter().all(|l| l["action"] == "exists_different"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ready_adds_ready_and_removes_in_refinement() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/13")))
        .respond_with(json_reply(200, "issue_13.json"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO}/issues/13/labels")))
        .and(body_json(json!({"labels": ["ready"]})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"name": "ready"}])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(format!("{REPO}/issues/13/labels/in-refinement")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([{"name": "ready"}])))
        .expect(1)
        .mount(&server)
        .await;
    let dir = workdir();
    let r = run(ralph(dir.path(), &server.uri()).args(["ready", "13"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "issue #13 is ready (+ready, -in-refinement)\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_json_is_the_requirements_document() {
    let server = MockServer::start().await;
    // A transient failure first: ralph retries and the user sees only a warning.
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12")))
        .respond_with(json_reply(200, "issue_12.json"))
        .mount(&server)
        .await;
    let dir = workdir();
    let r = run(ralph(dir.path(), &server.uri()).args(["spec", "12", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("retrying `get issue #12`"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["issue"], 12);
    assert_eq!(v["guidance_files"], json!([]));
    let explicit = v["explicit_requirements"].as_array().unwrap();
    let ids: Vec<&str> = explicit.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["req_1", "req_2", "req_3"],
        "code blocks and comments are skipped"
    );
    assert_eq!(
        explicit[0],
        json!({
            "id": "req_1",
            "text": "Add a `notify` option to `setup()` (default `true`)",
            "checked": false,
            "section": "Requirements",
            "components": ["Add a `notify` option to `setup()` (default `true`)"]
        })
    );
    assert_eq!(explicit[1]["checked"], true);
    assert_eq!(explicit[2]["text"], "Nested: mention it in the changelog");
    let implicit = v["implicit_requirements"].as_array().unwrap();
    assert_eq!(implicit.len(), 4);
    for r in implicit {
        assert!(r["id"].is_string() && r["text"].is_string() && r["reasoning"].is_string());
    }
    // The human view.
    let r = run(ralph(dir.path(), &server.uri()).args(["spec", "12"]));
    assert!(
        r.stdout.contains("Explicit requirements: 3 (1 checked)"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn queue_json_is_an_actions_matrix_oldest_first() {
    let server = MockServer::start().await;
    let next = format!(
        "<{}{REPO}/issues?labels=ready&page=2>; rel=\"next\"",
        server.uri()
    );
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("labels", "ready"))
        .and(query_param("page", "2"))
        .respond_with(json_reply(200, "issues_page2.json"))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("labels", "ready"))
        .and(query_param("state", "open"))
        .respond_with(json_reply(200, "issues_page1.json").insert_header("link", next.as_str()))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(json_reply(200, "user.json"))
        .mount(&server)
        .await;
    // Issue 12 has been in-progress since January: a lost job's.
    let mut stuck: Value = serde_json::from_str(&crate::common::fixture("issue_12.json")).unwrap();
    stuck["labels"] = json!([{"name": "in-progress"}, {"name": "ralph"}]);
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues")))
        .and(query_param("labels", "in-progress"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([stuck])))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/12/events")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"event": "labeled", "actor": {"login": "ralph-bot"}, "label": {"name": "in-progress"}, "created_at": "2026-01-05T05:00:00Z"}
        ])))
        .mount(&server)
        .await;
    let dir = workdir();
    let r = run(ralph(dir.path(), &server.uri()).args(["queue", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["include"],
        json!([{"issue": 17}, {"issue": 12}, {"issue": 20}])
    );
    assert_eq!(v["stale"][0]["issue"], 12);
    assert_eq!(v["stale"][0]["in_progress_since"], "2026-01-05T05:00:00Z");
    let r = run(ralph(dir.path(), &server.uri()).args(["queue", "--json", "--limit", "1"]));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["include"], json!([{"issue": 17}]));
    // In Actions, the job summary names the stale issue and how to re-arm it.
    let files = tempfile::tempdir().unwrap();
    let r = run(ralph(dir.path(), &server.uri())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", files.path().join("summary.md"))
        .args(["queue", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let summary = std::fs::read_to_string(files.path().join("summary.md")).unwrap();
    assert!(
        summary.contains("3 issue(s) ready") && summary.contains("**Stale**"),
        "{summary}"
    );
    assert!(
        summary.contains("- #12 ") && summary.contains("since 2026-01-05 05:00 UTC"),
        "{summary}"
    );
    let r = run(ralph(dir.path(), &server.uri()).arg("queue"));
    assert!(
        r.stderr.contains("#12 has been in-progress for")
            && r.stderr.contains("`ralph ready 12 --yes`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.starts_with("#17     2026-08-01  Oldest ready\n"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_credentials_exit_2_with_a_hint_and_never_print_the_token() {
    let server = MockServer::start().await;
    // A server that echoes the token back must not get it printed either.
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "message": format!("Bad credentials: {TOKEN}"),
            "documentation_url": "https://docs.github.com/rest"
        })))
        .mount(&server)
        .await;
    let dir = workdir();
    for args in [
        vec!["spec", "12"],
        vec!["-vv", "spec", "12"],
        vec!["ready", "12", "--json"],
    ] {
        let r = run(ralph(dir.path(), &server.uri()).args(&args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "error: GitHub rejected the token from GITHUB_TOKEN (401 Bad credentials)"
            ),
            "{}",
            r.stderr
        );
        assert!(r
            .stderr
            .contains("hint: the token from GITHUB_TOKEN is invalid"));
    }
    // Trace-level logs of every crate, including the HTTP stack.
    let r = run(ralph(dir.path(), &server.uri())
        .env("RALPH_LOG", "trace")
        .args(["spec", "12"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("GitHub request"),
        "logs were on: {}",
        r.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_issue_and_missing_token_are_preflight_errors() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"message": "Not Found"})))
        .mount(&server)
        .await;
    let dir = workdir();
    let r = run(ralph(dir.path(), &server.uri()).args(["spec", "404"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("error: issue #404 in octo-org/octo-repo not found"),
        "{}",
        r.stderr
    );
    // No token anywhere (and no gh on PATH).
    let r = run(ralph(dir.path(), &server.uri())
        .env_remove("GITHUB_TOKEN")
        .env("PATH", "/nonexistent")
        .args(["spec", "1"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("error: no GitHub token"), "{}", r.stderr);
    assert!(r.stderr.contains("hint: set GITHUB_TOKEN"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_repo_the_origin_remote_is_used_or_the_error_says_how() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/remote-owner/remote-name/issues/1"))
        .respond_with(json_reply(200, "issue_13.json"))
        .expect(1)
        .mount(&server)
        .await;
    let dir = workdir();
    let bare = |dir: &Path| {
        let mut cmd = Command::cargo_bin("ralph").unwrap();
        cmd.current_dir(dir)
            .env_remove("GITHUB_REPOSITORY")
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_API_URL", server.uri());
        cmd
    };
    let r = run(bare(dir.path()).args(["spec", "1"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot tell which GitHub repository"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("hint: pass --repo OWNER/NAME"),
        "{}",
        r.stderr
    );
    // With an ssh origin remote, that repository is used.
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "remote",
        "add",
        "origin",
        "git@github.com:remote-owner/remote-name.git",
    ]);
    let r = run(bare(dir.path()).args(["spec", "1", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // GITHUB_REPOSITORY wins over the remote.
    let r = run(bare(dir.path())
        .env("GITHUB_REPOSITORY", "not a slug")
        .args(["spec", "1"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("GITHUB_REPOSITORY"), "{}", r.stderr);
}

/// The same commands offline, on `.ralph/issues/*.md`.
#[test]
fn the_local_tracker_works_offline() {
    let dir = workdir();
    let issues = dir.path().join(".ralph/issues");
    std::fs::create_dir_all(&issues).unwrap();
    let body12 = "## Requirements\r\n\r\n- [ ] Add a `notify` option\r\n- [x] Document it 🚀\r\n";
    std::fs::write(
        issues.join("12.md"),
        format!("---\r\ntitle: Notification option\r\nlabels: [ready]\r\ncreated: 2026-10-01T00:00:00Z\r\n---\r\n{body12}"),
    )
    .unwrap();
    std::fs::write(
        issues.join("13.md"),
        "---\ntitle: Widget API\nlabels: [in-refinement]\ncreated: 2026-09-01T00:00:00Z\n---\n- [ ] names\n",
    )
    .unwrap();
    std::fs::write(
        issues.join("14.md"),
        "---\ntitle: Taken\nlabels: [ready]\nassignees: [someone]\n---\n- [ ] x\n",
    )
    .unwrap();
    let local = |args: &[&str]| {
        let mut cmd = Command::cargo_bin("ralph").unwrap();
        cmd.current_dir(dir.path())
            .env_remove("RALPH_LOG")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env("NO_COLOR", "1")
            .arg("--tracker")
            .arg("local")
            .args(args);
        run(&mut cmd)
    };
    let r = local(&["setup"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("no labels to set up"));

    let r = local(&["queue", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!({"include": [{"issue": 12}], "stale": []})
    );

    let r = local(&["ready", "13"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(issues.join("13.md")).unwrap();
    assert_eq!(
        text,
        "---\ntitle: Widget API\nlabels: [ready]\ncreated: 2026-09-01T00:00:00Z\n---\n- [ ] names\n"
    );
    let r = local(&["queue", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&r.stdout).unwrap(),
        json!({"include": [{"issue": 13}, {"issue": 12}], "stale": []})
    );

    let r = local(&["spec", "12", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["explicit_requirements"][1]["text"], "Document it 🚀");
    assert_eq!(v["explicit_requirements"][1]["section"], "Requirements");
    // Reading never rewrites the file.
    assert!(std::fs::read_to_string(issues.join("12.md"))
        .unwrap()
        .ends_with(body12));

    let r = local(&["spec", "99"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("99.md"), "{}", r.stderr);

    // The tracker can come from the configuration too.
    std::fs::write(
        dir.path().join(".ralph/config.toml"),
        "tracker = \"local\"\n",
    )
    .unwrap();
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    let r = run(cmd
        .current_dir(dir.path())
        .env_remove("GITHUB_TOKEN")
        .args(["queue", "--json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
}
