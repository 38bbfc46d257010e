//! Helpers shared by the test binaries: GitHub fixtures for wiremock, and fake agent programs.
//! Each test binary uses a part of them.
#![allow(dead_code)]

use wiremock::ResponseTemplate;

/// The repository path every fixture belongs to.
pub const REPO: &str = "/repos/octo-org/octo-repo";

/// A fixture from tests/fixtures/github/, in the shape of a real GitHub response.
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/github/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A JSON reply with a fixture as its body.
pub fn json_reply(status: u16, name: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(fixture(name), "application/json")
}

/// A retry policy for the tracker tests: four attempts, short backoffs, rate-limit waits up to
/// 5 s — recorded, not slept through.
pub fn fast_policy() -> ralph::tracker::rest::RetryPolicy {
    ralph::tracker::rest::RetryPolicy {
        max_attempts: 4,
        base_delay: std::time::Duration::from_millis(5),
        max_delay: std::time::Duration::from_millis(20),
        max_rate_limit_wait: std::time::Duration::from_secs(5),
        secondary_wait: std::time::Duration::from_millis(10),
        pause: ralph::retry::Pause::recording(),
    }
}

/// Writes an executable shell script `dir/name` with `body` and returns its path.
pub fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.to_string_lossy().into_owned()
}

/// Runs `git` in `dir` without the user's or the system's configuration; panics with git's
/// stderr when it fails, and returns its stdout.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where ralph makes the checkout `label` (`3`, `3-read`, `ralph-refine-5`) of the repository
/// at `root` when it runs with `home` as HOME and no `[workspace] root`.
pub fn checkout_of(
    home: &std::path::Path,
    root: &std::path::Path,
    label: &str,
) -> std::path::PathBuf {
    ralph::workspace::checkouts_dir(root, Some(&home.join(".local/state/ralph/checkouts")))
        .unwrap()
        .join(label)
}

/// Commits everything in `dir` as a test author.
pub fn commit_all(dir: &std::path::Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "--quiet",
            "-m",
            message,
        ],
    );
}

/// What a finished `ralph` printed.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` and checks that none of `secrets` appears on stdout or stderr.
pub fn run_without(cmd: &mut assert_cmd::Command, secrets: &[&str]) -> Out {
    let out = cmd.output().unwrap();
    let o = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    for s in secrets {
        assert!(
            !o.stdout.contains(s) && !o.stderr.contains(s),
            "a secret leaked:\n{}\n{}",
            o.stdout,
            o.stderr
        );
    }
    o
}

/// Mounts the trust gate's two answers on the wiremock GitHub: `login` last applied `label` to
/// issue `issue` (its events), and has `permission` on the repository.
pub async fn labelled_by(
    server: &wiremock::MockServer,
    issue: u64,
    label: &str,
    login: &str,
    permission: &str,
) {
    use wiremock::matchers::{method, path};
    use wiremock::Mock;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/issues/{issue}/events")))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([
            {"event": "labeled", "actor": {"login": login}, "label": {"name": label}, "created_at": "2026-11-01T00:00:00Z"}
        ])))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{REPO}/collaborators/{login}/permission")))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"permission": permission, "role_name": permission, "user": {"login": login}}),
        ))
        .mount(server)
        .await;
}

/// Every `.rs` file under `dir`, recursively.
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}
