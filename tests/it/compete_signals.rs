//! How a competition ends when it is stopped from outside, and where it starts from: SIGTERM
//! (how CI cancels a job) mid-proposal and mid-implementation, then `--resume`; SIGHUP; a
//! SIGKILL, then `--resume` taking over the lock and the label, and `ralph ready` re-arming;
//! `--base`; a clone without `origin/HEAD` (as `git remote add` + `git push -u` leaves it) on
//! the local tracker and against a GitHub-shaped server.

use crate::common::{git, script};
use crate::compete::{outcomes, run, Repo, Setup, BOT, GOOD, TOKEN};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `ralph compete 3` in the background.
fn spawn(repo: &Repo, extra: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("ralph"))
        .current_dir(&repo.root)
        .env("GITHUB_TOKEN", TOKEN)
        .env("HOME", &repo.tools)
        .env("NO_COLOR", "1")
        .env_remove("RALPH_LOG")
        .args(["compete", "3"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until an agent has touched `$HOME/<marker>`.
fn wait_for(repo: &Repo, marker: &str) {
    let started = Instant::now();
    while !repo.tools.join(marker).exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{marker} never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` to `child` and returns its exit code and stderr.
fn stop(child: Child, signal: &str) -> (Option<i32>, String) {
    Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A bot that hangs in round 1 until `$HOME/go` exists.
fn hanging_bot() -> String {
    format!(
        "if [ ! -f \"$HOME/go\" ]; then touch \"$HOME/proposing\"; sleep 60; fi\n{}",
        BOT
    )
}

/// An implementer that hangs until `$HOME/go` exists, then writes a correct greet.
fn hanging_implementer() -> String {
    format!(
        "if [ ! -f \"$HOME/go\" ]; then touch \"$HOME/implementing\"; sleep 60; fi\n{}",
        GOOD
    )
}

#[cfg(unix)]
#[test]
fn sigterm_mid_proposal_escalates_releases_everything_and_resume_completes() {
    let repo = Repo::new(GOOD, &["alpha"]);
    script(&repo.tools, "bot.sh", &hanging_bot());
    let child = spawn(&repo, &[]);
    wait_for(&repo, "proposing");
    let (code, stderr) = stop(child, "TERM");
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted (SIGTERM)"), "{stderr}");
    let issue = repo.issue();
    assert!(
        issue.contains("attention-needed") && !issue.contains("in-progress"),
        "{issue}"
    );
    assert!(issue.contains("interrupted (SIGTERM)"), "{issue}");
    assert!(
        !repo.root.join(".ralph/runs/3.lock").exists(),
        "the lock is gone"
    );
    assert!(
        repo.root.join(".ralph/runs/3/state.json").exists(),
        "the state is kept"
    );

    std::fs::write(repo.tools.join("go"), "").unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--resume"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(repo.issue().contains("- [x] `greet NAME`"));
}

#[cfg(unix)]
#[test]
fn sigterm_mid_implementation_then_resume_writes_no_event_twice() {
    let repo = Repo::new(&hanging_implementer(), &["alpha", "beta"]);
    let child = spawn(&repo, &[]);
    wait_for(&repo, "implementing");
    let (code, stderr) = stop(child, "TERM");
    assert_eq!(code, Some(143), "{stderr}");
    assert!(repo.events().is_empty(), "the round never settled");
    assert!(repo.issue().contains("attention-needed"));

    std::fs::write(repo.tools.join("go"), "").unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--resume"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let o = outcomes(&repo.events());
    assert_eq!(o.len(), 2, "one success, one not_selected: {o:?}");
    assert!(o.iter().any(|e| e.1 == "success") && o.iter().any(|e| e.1 == "not_selected"));
}

#[cfg(unix)]
#[test]
fn sighup_is_handled_like_an_interrupt() {
    let repo = Repo::new(&hanging_implementer(), &["alpha"]);
    let child = spawn(&repo, &[]);
    wait_for(&repo, "implementing");
    let (code, stderr) = stop(child, "HUP");
    assert_eq!(code, Some(129), "{stderr}");
    assert!(repo.issue().contains("interrupted (SIGHUP)"));
}

#[cfg(unix)]
#[test]
fn after_a_sigkill_resume_takes_over_and_ready_rearms_the_issue() {
    let repo = Repo::new(&hanging_implementer(), &["alpha"]);
    let child = spawn(&repo, &[]);
    wait_for(&repo, "implementing");
    let (code, _) = stop(child, "KILL");
    assert_eq!(code, None, "killed outright");
    // Nobody killed its implementer: do it here, as a rebooted machine would.
    let _ = Command::new("pkill")
        .args(["-f", &repo.tools.join("implementer.sh").to_string_lossy()])
        .status();
    // Nothing could clean up: the label and the lock file are left behind.
    assert!(repo.issue().contains("in-progress"));
    // A plain run is refused; `ralph ready` off a terminal wants --yes.
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("ralph ready 3"), "{}", out.stderr);
    let out = run(repo.ralph().args(["ready", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--yes"), "{}", out.stderr);
    // `--resume` takes over the stale lock and the label.
    std::fs::write(repo.tools.join("go"), "").unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--resume"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(repo.issue().contains("- [x] `greet NAME`"));
}

#[test]
fn ready_rearms_an_issue_left_in_progress() {
    let stuck = crate::compete::ISSUE.replace("labels: [ready]", "labels: [in-progress, ralph]");
    let repo = Repo::with(Setup {
        issues: &[(3, &stuck)],
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["ready", "3", "--yes", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["added"], json!(["ready"]));
    assert_eq!(v["removed"], json!(["in-progress", "ralph"]));
    assert!(repo.issue().contains("labels: [ready]"), "{}", repo.issue());
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn base_names_the_branch_to_start_from() {
    let repo = Repo::new(GOOD, &["alpha"]);
    git(&repo.root, &["checkout", "-q", "-b", "release"]);
    std::fs::write(repo.root.join("RELEASE"), "1.0\n").unwrap();
    crate::common::commit_all(&repo.root, "release");
    git(&repo.root, &["push", "-q", "origin", "release"]);
    git(&repo.root, &["checkout", "-q", "main"]);
    let out = run(repo.ralph().args(["compete", "3", "--base", "release"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = git(
        &repo.remote,
        &["ls-tree", "--name-only", "ralph/3-add-a-greet-function"],
    );
    assert!(files.contains("RELEASE"), "started from release: {files}");
    let prs = std::fs::read_to_string(repo.root.join(".ralph/issues/3.prs.json")).unwrap();
    assert!(prs.contains("\"base\": \"release\""), "{prs}");
}

#[test]
fn a_clone_without_origin_head_finds_its_base_from_the_remote() {
    let repo = Repo::new(GOOD, &["alpha"]);
    git(&repo.root, &["remote", "set-head", "origin", "--delete"]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(git(&repo.remote, &["branch", "--list"]).contains("ralph/3-"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_github_a_clone_without_origin_head_takes_the_default_branch_from_the_api() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let server = crate::compete::github_server().await;
    Mock::given(method("GET"))
        .and(path("/repos/octo-org/octo-repo"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            crate::common::fixture("repository.json"),
            "application/json",
        ))
        .mount(&server)
        .await;
    let repo = crate::compete::github_repo();
    git(&repo.root, &["remote", "set-head", "origin", "--delete"]);
    // The remote cannot be asked either: only GitHub knows the default branch.
    let url = git(&repo.root, &["remote", "get-url", "origin"]);
    git(&repo.root, &["config", "remote.origin.pushurl", url.trim()]);
    git(
        &repo.root,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    git(&repo.root, &["config", "remote.origin.pushurl", url.trim()]);
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        cmd.env("GITHUB_API_URL", server.uri()).args([
            "--tracker",
            "github",
            "--repo",
            "octo-org/octo-repo",
            "doctor",
            "--json",
        ]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let base = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "base branch")
        .unwrap();
    assert_eq!(base["status"], "ok", "{report}");
    assert_eq!(
        base["detail"], "main (from the repository's default branch on GitHub)",
        "{report}"
    );
    let access = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "access")
        .unwrap();
    assert!(
        access["detail"].as_str().unwrap().contains("admin access"),
        "{access}"
    );
    // And the competition itself starts from there, through to the pull request.
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        cmd.env("GITHUB_API_URL", server.uri()).args([
            "--tracker",
            "github",
            "--repo",
            "octo-org/octo-repo",
            "compete",
            "12",
            "--json",
        ]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let requests = server.received_requests().await.unwrap();
    let pr: Value = requests
        .iter()
        .find(|r| r.url.path().ends_with("/pulls"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .unwrap();
    assert_eq!(pr["base"], "main");
}
