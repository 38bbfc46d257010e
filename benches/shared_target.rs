//! What the Cargo target directory shared under `.ralph/cache/target` buys a Rust project: a
//! small crate with real dependencies (serde with derive, serde_json, regex — taken from the
//! local registry cache, `--offline`) is checked as ralph checks it (`cargo test`) in a first
//! worktree, again after a one-line change (a second attempt), then in a second worktree at
//! another path (a second run), once with each worktree building in its own `target/` and once
//! with the shared directory — held as ralph holds it, so the second worktree's own crate is
//! built again (its sources renewed) while the dependencies are not.
//! Run: `cargo bench --bench shared_target` (several minutes on 2 cores: cold builds).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const MANIFEST: &str = r#"[package]
name = "fixture"
version = "0.1.0"
edition = "2021"

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
regex = "1"
"#;

const LIB: &str = r#"use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Greeting {
    pub name: String,
    pub times: u32,
}

pub fn parse(text: &str) -> Option<Greeting> {
    let re = regex::Regex::new(r"^(\w+) x(\d+)$").ok()?;
    let c = re.captures(text)?;
    Some(Greeting { name: c[1].to_owned(), times: c[2].parse().ok()? })
}

pub fn to_json(g: &Greeting) -> String {
    serde_json::to_string(g).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let g = parse("Ann x3").unwrap();
        let back: Greeting = serde_json::from_str(&to_json(&g)).unwrap();
        assert_eq!(back, g);
    }
}
"#;

fn worktree(root: &Path, name: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
    dir
}

/// `cargo test` in `dir`, with `target` as its target directory, taken as ralph takes it.
fn check(runtime: &tokio::runtime::Runtime, dir: &Path, target: &Path) -> Duration {
    let started = Instant::now();
    let _held = runtime
        .block_on(ralph::checks::shared_target::hold(target, dir))
        .unwrap();
    let out = Command::new("cargo")
        .args(["test", "--quiet", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo test failed in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed()
}

/// One run and an attempt in worktree `a`, then a second run in worktree `b`.
fn scenario(runtime: &tokio::runtime::Runtime, root: &Path, shared: bool) -> [Duration; 3] {
    let a = worktree(root, "worktrees/1");
    let b = worktree(root, "worktrees/2");
    let target = |wt: &Path| {
        if shared {
            root.join("cache/target")
        } else {
            wt.join("target")
        }
    };
    let first = check(runtime, &a, &target(&a));
    let mut lib = std::fs::read_to_string(a.join("src/lib.rs")).unwrap();
    lib.push_str("\npub fn twice(g: &Greeting) -> u32 {\n    g.times * 2\n}\n");
    std::fs::write(a.join("src/lib.rs"), lib).unwrap();
    let second_attempt = check(runtime, &a, &target(&a));
    let second_run = check(runtime, &b, &target(&b));
    [first, second_attempt, second_run]
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for shared in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let [first, attempt, run] = scenario(&runtime, root.path(), shared);
        println!(
            "shared_target: {:<22} first attempt {:>6.2} s · second attempt {:>5.2} s · second run (another worktree) {:>6.2} s",
            if shared {
                "shared .ralph/cache:"
            } else {
                "target/ per worktree:"
            },
            first.as_secs_f64(),
            attempt.as_secs_f64(),
            run.as_secs_f64()
        );
    }
}
