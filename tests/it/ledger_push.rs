//! `ralph events push` (ledger persistence, docs/ledger.md) against two clones of a bare remote:
//! the new event files are committed to the branch from a temporary worktree (the checkout is not
//! touched), and when the other clone pushed in between, the commit is rebased and pushed again.

use crate::common::{commit_all, git};

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn clone(base: &Path, name: &str) -> std::path::PathBuf {
    git(
        base,
        &[
            "clone",
            "--quiet",
            base.join("origin.git").to_str().unwrap(),
            name,
        ],
    );
    let dir = base.join(name);
    std::fs::create_dir_all(dir.join(".ralph/events")).unwrap();
    dir
}

fn event(dir: &Path, name: &str) {
    let text = format!(
        "{{\"schema_version\":1,\"timestamp\":\"2026-11-22T10:00:00Z\",\"issue_number\":1,\"bot_id\":\"{name}\",\"outcome\":\"success\",\"weight_delta\":0.1}}\n"
    );
    std::fs::write(
        dir.join(format!(
            ".ralph/events/2026-11-22T10-00-00-000000Z-{name}-success.json"
        )),
        text,
    )
    .unwrap();
}

/// The state folder of the job in `dir` (its HOME is the clone): beside it, outside the
/// repository, where ralph's checkouts go.
fn state(dir: &Path) -> PathBuf {
    dir.with_extension("state")
}

fn ralph(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("XDG_STATE_HOME", state(dir))
        .env_remove("RUNNER_TEMP")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1");
    cmd
}

#[test]
fn events_are_pushed_and_a_concurrent_push_is_rebased_over() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    git(
        b,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    );
    let seed = b.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "--quiet", "-b", "main"]);
    std::fs::write(seed.join("README.md"), "hi\n").unwrap();
    commit_all(&seed, "init");
    git(
        &seed,
        &[
            "push",
            "--quiet",
            b.join("origin.git").to_str().unwrap(),
            "main",
        ],
    );

    let a = clone(b, "a");
    let other = clone(b, "b");
    event(&a, "bot_a");
    event(&other, "bot_b");
    // The other job pushes first — right before A's first push reaches the remote. ralph runs
    // no hook when it pushes, so the other job is started by a `git` in front of the real one.
    let real_git = ralph::process::find_on_path("git").unwrap();
    let bin = b.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = push ] && [ ! -f \"{m}\" ] && [ \"$PWD\" != \"{o}\" ]; then\n    touch \"{m}\"\n    (cd \"{o}\" && PATH=\"{path}\" \"{ralph}\" events push >/dev/null 2>&1)\n  fi\ndone\nexec \"{git}\" \"$@\"\n",
            m = b.join("hook-ran").display(),
            o = other.display(),
            path = std::env::var("PATH").unwrap(),
            ralph = assert_cmd::cargo::cargo_bin("ralph").display(),
            git = real_git.display(),
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = ralph(&a)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .args(["events", "push", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        b.join("hook-ran").exists(),
        "the other job pushed in between"
    );
    assert_eq!(
        report["attempts"], 2,
        "rejected once, rebased, pushed: {report}"
    );
    assert_eq!(report["branch"], "main");

    // Both events are on main, each in its own commit, on top of the first commit.
    let verify = b.join("verify");
    git(
        b,
        &[
            "clone",
            "--quiet",
            b.join("origin.git").to_str().unwrap(),
            "verify",
        ],
    );
    let files = git(&verify, &["ls-files", ".ralph/events"]);
    assert!(
        files.contains("bot_a-success.json") && files.contains("bot_b-success.json"),
        "{files}"
    );
    let log = git(&verify, &["log", "--format=%an %s"]);
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("record marketplace events"))
            .count(),
        2,
        "{log}"
    );
    assert!(
        log.lines().all(|l| !l.contains("Merge")),
        "rebased, not merged: {log}"
    );
    // A's checkout was not touched: its event is still untracked there, HEAD unchanged.
    assert!(git(&a, &["status", "--porcelain"]).contains("?? .ralph/"));
    assert!(!a.join(".ralph/worktrees").exists());
    let ledger = ralph::workspace::checkouts_dir(&a, Some(&state(&a).join("ralph/checkouts")))
        .unwrap()
        .join("ledger");
    assert!(
        ledger.parent().unwrap().is_dir() && !ledger.exists(),
        "made beside the other checkouts, and removed"
    );

    // Nothing new: nothing pushed.
    let out = ralph(&a)
        .args(["events", "push", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"], serde_json::json!([]));
}

#[test]
fn sixteen_jobs_pushing_at_once_all_land_and_all_exit_zero() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    git(
        b,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    );
    let seed = b.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "--quiet", "-b", "main"]);
    std::fs::write(seed.join("README.md"), "hi\n").unwrap();
    commit_all(&seed, "init");
    git(
        &seed,
        &[
            "push",
            "--quiet",
            b.join("origin.git").to_str().unwrap(),
            "main",
        ],
    );
    let jobs: Vec<PathBuf> = (0..16)
        .map(|i| {
            let dir = clone(b, &format!("job{i}"));
            event(&dir, &format!("bot_{i}"));
            dir
        })
        .collect();
    let children: Vec<_> = jobs
        .iter()
        .map(|dir| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("ralph"))
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir)
                .env("XDG_STATE_HOME", state(dir))
                .env_remove("RUNNER_TEMP")
                .env_remove("GITHUB_TOKEN")
                .env_remove("GH_TOKEN")
                .args(["events", "push", "--branch", "main", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut retried = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["files"].as_array().unwrap().len(), 1, "{report}");
        if report["attempts"].as_u64().unwrap() > 1 {
            retried += 1;
        }
    }
    let verify = b.join("verify");
    git(
        b,
        &[
            "clone",
            "--quiet",
            b.join("origin.git").to_str().unwrap(),
            "verify",
        ],
    );
    let files = git(&verify, &["ls-files", ".ralph/events"]);
    for i in 0..16 {
        assert!(
            files.contains(&format!("bot_{i}-success.json")),
            "bot_{i}: {files}"
        );
    }
    assert_eq!(files.lines().count(), 16, "nothing twice: {files}");
    eprintln!("{retried} of 16 pushes were rejected at least once and tried again");
}

#[test]
fn past_the_deadline_the_events_not_pushed_are_named_and_kept() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path();
    git(
        b,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    );
    let seed = b.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "--quiet", "-b", "main"]);
    std::fs::write(seed.join("README.md"), "hi\n").unwrap();
    commit_all(&seed, "init");
    git(
        &seed,
        &[
            "push",
            "--quiet",
            b.join("origin.git").to_str().unwrap(),
            "main",
        ],
    );
    let job = clone(b, "job");
    event(&job, "bot_late");
    // The remote refuses every update, as a busy remote whose ref stays locked would.
    let hook = b.join("origin.git/hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'cannot lock ref refs/heads/main' >&2\nexit 1\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        job.join(".ralph/config.toml"),
        "[ledger]\npush_deadline_secs = 2\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = ralph(&job)
        .args(["events", "push", "--branch", "main"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(
        stderr.contains("1 event file(s) were not pushed to `main` on `origin`")
            && stderr.contains("bot_late-success.json")
            && stderr.contains(".ralph/events")
            && stderr.contains("Run `ralph events push` again"),
        "{stderr}"
    );
    assert!(job
        .join(".ralph/events/2026-11-22T10-00-00-000000Z-bot_late-success.json")
        .is_file());
}
