//! A matrix of CI jobs recording the ledger at once: N clones of one repository, each with one
//! new event file, all running `ralph events push` at the same moment against one local bare
//! remote. Reports, for 8, 32 and 64 pushers: the events that landed on the remote (must be
//! all), the pushes that exited 0 (must be all), and the wall time to the last one.
//! Run: `cargo bench --bench ledger_push`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A bare remote with one commit on `main`, and `n` clones of it, each with one new event.
fn setup(base: &Path, n: usize) -> (PathBuf, Vec<PathBuf>) {
    let remote = base.join("origin.git");
    git(
        base,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    );
    let seed = base.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    git(&seed, &["init", "--quiet", "-b", "main"]);
    std::fs::write(seed.join("README.md"), "ledger\n").unwrap();
    git(&seed, &["add", "."]);
    git(&seed, &["commit", "--quiet", "-m", "init"]);
    git(
        &seed,
        &["push", "--quiet", remote.to_str().unwrap(), "main"],
    );
    let clones = (0..n)
        .map(|i| {
            let name = format!("job{i}");
            git(
                base,
                &["clone", "--quiet", remote.to_str().unwrap(), &name],
            );
            let dir = base.join(&name);
            let events = dir.join(".ralph/events");
            std::fs::create_dir_all(&events).unwrap();
            let bot = format!("bot_{i}");
            std::fs::write(
                events.join(format!("2026-11-24T10-00-00-{i:06}Z-{bot}-success.json")),
                format!("{{\"schema_version\":1,\"timestamp\":\"2026-11-24T10:00:00Z\",\"issue_number\":{i},\"bot_id\":\"{bot}\",\"outcome\":\"success\",\"weight_delta\":0.1}}\n"),
            )
            .unwrap();
            dir
        })
        .collect();
    (remote, clones)
}

fn main() {
    let ralph = env!("CARGO_BIN_EXE_ralph");
    for n in [8, 32, 64] {
        let base = tempfile::tempdir().unwrap();
        let (remote, clones) = setup(base.path(), n);
        let started = Instant::now();
        let children: Vec<_> = clones
            .iter()
            .map(|dir| {
                Command::new(ralph)
                    .args(["events", "push", "--branch", "main", "-q"])
                    .current_dir(dir)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("HOME", dir)
                    .env_remove("GITHUB_TOKEN")
                    .env_remove("GH_TOKEN")
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut ok = 0;
        let mut last_error = String::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            if out.status.success() {
                ok += 1;
            } else {
                last_error = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            }
        }
        let wall = started.elapsed();
        let landed = git(
            &remote,
            &["ls-tree", "-r", "--name-only", "main", ".ralph/events"],
        )
        .lines()
        .count();
        println!(
            "ledger push, {n} concurrent pushers: {landed}/{n} events landed, {ok}/{n} pushes exited 0, {:.1} s to the last",
            wall.as_secs_f64()
        );
        if !last_error.is_empty() {
            println!(
                "  a failed push said: {}",
                last_error.lines().last().unwrap_or("")
            );
        }
    }
}
