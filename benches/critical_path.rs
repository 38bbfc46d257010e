//! A competition waits only for what it needs. Two measurements:
//!
//! 1. A competition whose baseline takes 5 s (the test check sleeps) and whose bot takes 5 s to
//!    propose, through the binary: its wall time against the sum of its phases and against its
//!    critical path. `RALPH_BENCH_BIN` runs another `ralph` binary instead (an older build, for
//!    the figures before the change; it reports no phases).
//! 2. The checks of a real small cargo project from a cold target directory: the plan before
//!    (`cargo fmt`, `cargo clippy`, `cargo check` at the same time, then `cargo test`) against
//!    ralph's plan now (`cargo fmt` beside `cargo clippy`, then `cargo test`, one build at a
//!    time). Set `RALPH_BENCH_CARGO_PROJECT` to the project (measured on dtolnay/thiserror at
//!    aa9d91f); without it this part is skipped.
//!
//! Run: `cargo bench --bench critical_path`.

use ralph::checks::{run_checks, CheckPlan, CheckSpec};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn git(dir: &Path, args: &[&str]) {
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
    assert!(out.status.success(), "git {args:?}");
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

const PROPOSAL: &str = r#"{"approach_summary":"Add greet to lib.sh","pseudo_code":"greet() { echo Hello; }","files_affected":[{"path":"lib.sh","change_type":"modify"}],"estimated_complexity":{"lines_of_code":3,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"overall_risk":"low"},"spec_alignment":{"checkboxes_addressed":["req_1"],"components_addressed":[],"implicit_requirements_addressed":[]},"success_probability":0.8}"#;

/// A repository whose baseline takes 5 s and whose bot takes 5 s, and its tools.
fn competition(base: &Path) -> std::path::PathBuf {
    let root = base.join("work");
    let tools = base.join("tools");
    std::fs::create_dir_all(root.join(".ralph/issues")).unwrap();
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(
        root.join(".ralph/issues/3.md"),
        "---\ntitle: Add a greet function\nlabels: [ready]\n---\n- [ ] `greet NAME` prints `Hello, NAME!`\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".gitignore"),
        ".ralph/worktrees/\n.ralph/runs/\n.ralph/cache/\n",
    )
    .unwrap();
    std::fs::write(root.join("lib.sh"), "add() { echo $(($1 + $2)); }\n").unwrap();
    std::fs::write(root.join("test.sh"), ". ./lib.sh\n[ \"$(add 1 2)\" = 3 ]\n").unwrap();
    let bot = script(
        &tools,
        "bot.sh",
        &format!("cat >/dev/null\nsleep 5\necho '{PROPOSAL}'"),
    );
    let arbiter = script(
        &tools,
        "arbiter.sh",
        "cat >/dev/null\n[ \"$RALPH_ROLE\" = verify ] && echo '{\"satisfied\":[{\"id\":\"req_1\",\"evidence\":\"lib.sh\"}],\"unsatisfied\":[]}' && exit 0\nexit 1",
    );
    let implementer = script(
        &tools,
        "implementer.sh",
        "cat >/dev/null\necho 'greet() { echo \"Hello, $1!\"; }' >> lib.sh\necho '{\"summary\":\"greet\",\"checkboxes_completed\":[\"req_1\"]}'",
    );
    std::fs::write(
        root.join(".ralph/config.toml"),
        format!("tracker = \"local\"\n[marketplace]\nbase_budget_per_bot = 1\n[defaults]\nbackend = \"command\"\ncommand = [\"{bot}\"]\n[[bots]]\nid = \"alpha\"\n[arbiter]\ncommand = [\"{arbiter}\"]\n[implementer]\ncommand = [\"{implementer}\"]\n[checks]\ntest = \"sleep 5; sh test.sh\"\n[git]\nauthor = \"ralph <ralph@example.com>\"\n"),
    )
    .unwrap();
    git(&root, &["init", "--quiet", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "--quiet", "-m", "init"]);
    root
}

fn part_one() {
    let bin =
        std::env::var("RALPH_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ralph").into());
    let mut walls = Vec::new();
    let mut last: Option<serde_json::Value> = None;
    for _ in 0..3 {
        let base = tempfile::tempdir().unwrap();
        let root = competition(base.path());
        let started = Instant::now();
        let out = Command::new(&bin)
            .args(["compete", "3", "--json", "--no-push"])
            .current_dir(&root)
            .env("HOME", base.path().join("tools"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GITHUB_TOKEN")
            .output()
            .unwrap();
        walls.push(started.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        last = serde_json::from_slice(&out.stdout).ok();
    }
    walls.sort();
    let wall = walls[1].as_secs_f64();
    println!("competition with a 5 s baseline and a 5 s bot (3 runs): median wall {wall:.1} s [{:.1}–{:.1}]", walls[0].as_secs_f64(), walls[2].as_secs_f64());
    let Some(report) = last.filter(|r| r["phases"].is_array()) else {
        println!("  (this binary reports no phases)");
        return;
    };
    let phases = report["phases"].as_array().unwrap();
    let duration = |name: &str| {
        phases
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["duration_ms"].as_u64())
            .unwrap_or(0) as f64
            / 1000.0
    };
    let sum: f64 = phases
        .iter()
        .map(|p| p["duration_ms"].as_u64().unwrap_or(0) as f64 / 1000.0)
        .sum();
    let path: Vec<String> = report["critical_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    let critical: f64 = path.iter().map(|n| duration(n)).sum();
    let own = report["wall_ms"].as_u64().unwrap_or(0) as f64 / 1000.0;
    println!(
        "  last run: wall {own:.1} s (inside ralph) · sum of the phases {sum:.1} s · critical path {critical:.1} s ({}) · wall/critical {:.2}",
        path.join(" → "),
        own / critical
    );
}

fn cold(project: &Path, target: &Path, mut run: impl FnMut()) -> Duration {
    let _ = std::fs::remove_dir_all(target);
    let _ = project;
    let started = Instant::now();
    run();
    started.elapsed()
}

fn part_two() {
    let Ok(project) = std::env::var("RALPH_BENCH_CARGO_PROJECT") else {
        println!("checks of a real cargo project: skipped (set RALPH_BENCH_CARGO_PROJECT to one; measured on dtolnay/thiserror at aa9d91f)");
        return;
    };
    let project = Path::new(&project).to_owned();
    let target = tempfile::tempdir().unwrap();
    let target_dir = target.path().join("target");
    let env = vec![(
        "CARGO_TARGET_DIR".to_owned(),
        target_dir.display().to_string(),
    )];
    let sh = |command: &str| {
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target_dir)
            .output()
            .unwrap();
        out.status.success()
    };
    // Before: the three quality checks at the same time (two of them waiting on the build
    // lock), then the tests.
    let before = |_: ()| {
        cold(&project, &target_dir, || {
            std::thread::scope(|s| {
                for c in [
                    "cargo fmt --all -- --check",
                    "cargo clippy --all-targets -- -D warnings",
                    "cargo check --all-targets",
                ] {
                    s.spawn(move || sh(c));
                }
            });
            sh("cargo test");
        })
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let plan = CheckPlan {
        env: env.clone(),
        ..CheckPlan::of(vec![
            CheckSpec::new("format", "cargo fmt --all -- --check"),
            CheckSpec::new("lint", "cargo clippy --all-targets -- -D warnings"),
            CheckSpec::new("test", "cargo test"),
        ])
    };
    let mut own = Vec::new();
    let after = |own: &mut Vec<String>| {
        cold(&project, &target_dir, || {
            let ran = rt.block_on(run_checks(
                &plan,
                &project,
                Duration::from_secs(1800),
                &ralph::checks::run::Unwatched,
                Default::default(),
            ));
            *own = ran
                .checks
                .iter()
                .map(|c| format!("{} {:.1}s", c.name, c.duration_ms as f64 / 1000.0))
                .collect();
        })
    };
    let b: Vec<Duration> = (0..2).map(|_| before(())).collect();
    let a: Vec<Duration> = (0..2).map(|_| after(&mut own)).collect();
    let mean = |v: &[Duration]| v.iter().map(Duration::as_secs_f64).sum::<f64>() / v.len() as f64;
    println!(
        "checks of {} from a cold target (2 runs each): before {:.1} s, now {:.1} s; each check's own time now: {}",
        project.display(),
        mean(&b),
        mean(&a),
        own.join(", ")
    );
}

fn main() {
    part_one();
    part_two();
}
