//! Checks on projects set up the way people set them up (docs/checks.md), through the binary: lint
//! errors already on the base are not the change's (and a change that adds one is); the
//! baseline is cached per commit; a setup that fails after a manifest change is the
//! environment's fault (no events, one escalation); a Node project gets `npm ci` in its fresh
//! worktree; a Python src layout installed in editable mode from the main checkout is tested
//! from the worktree; a Rust worktree builds in the target directory shared under
//! `.ralph/cache/`; coverage is read from the report, not from the last number printed.

use crate::common::{commit_all, git};
use crate::compete::{outcomes, run, Repo, Setup, CHECKS, GOOD};
use serde_json::Value;
use std::path::Path;

/// Adds `files` to the repository's base branch and pushes it.
fn commit_files(repo: &Repo, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(&repo.root, "fixture");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
}

fn pull_request_body(repo: &Repo) -> String {
    repo.pull_request_body().expect("a pull request")
}

fn report(repo: &Repo) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".ralph/runs/3/report.json")).unwrap(),
    )
    .unwrap()
}

/// A linter in the style of flake8: one `path:line:col: CODE` line per `TODO` (rule T001) and
/// per `FIXME` (rule T002) in the shell files.
const LINT: &str = "{ grep -n TODO *.sh | sed 's/^\\([^:]*:[0-9]*\\):/\\1:1: T001 /'; grep -n FIXME *.sh | sed 's/^\\([^:]*:[0-9]*\\):/\\1:1: T002 /'; }; ! grep -q 'TODO\\|FIXME' *.sh";
/// Untouched code with three problems.
const LEGACY: &str = "# TODO one\n# TODO two\n# TODO three\n";

#[test]
fn lint_errors_on_the_base_are_not_the_changes_and_a_new_one_is() {
    let checks = format!("{CHECKS}lint = \"{}\"\n", LINT.replace('\\', "\\\\"));
    let repo = Repo::with(Setup {
        checks: &checks,
        ..Setup::default()
    });
    commit_files(&repo, &[("legacy.sh", LEGACY)]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("lint fails"),
        "the baseline: {}",
        out.stderr
    );
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    let body = pull_request_body(&repo);
    assert!(body.contains("`lint` ⚠️ failing on base"), "{body}");
    assert!(body.contains("_Failing on base: `lint`"), "{body}");
    let r = report(&repo);
    let lint = r["rounds"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lint")
        .unwrap()
        .clone();
    assert_eq!(lint["status"], "failing_on_base");
    assert_eq!(lint["passed"], false);
    // The winner is rewarded: the untouched code's problems are not its doing.
    let events = outcomes(&repo.events());
    assert!(
        events.iter().any(|(_, o, d)| o == "success" && *d > 0.0),
        "{events:?}"
    );
    // The baseline is cached for its commit, out of version control.
    let cache = repo.root.join(".ralph/cache");
    let base = git(&repo.root, &["rev-parse", "main"]);
    assert!(cache
        .join(format!("baseline/{}.json", base.trim()))
        .is_file());
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );
    let status = git(&repo.root, &["status", "--porcelain", "--", ".ralph/cache"]);
    assert_eq!(status.trim(), "", "the cache is ignored");

    // An implementer that adds a fourth problem of the rule the base breaks: no worse by the
    // project's rules, and said so.
    let verdict = |line: &str| {
        let sloppy = format!("{GOOD}\necho '{line}' >> lib.sh");
        let repo = Repo::with(Setup {
            checks: &checks,
            implementer: &sloppy,
            ..Setup::default()
        });
        commit_files(&repo, &[("legacy.sh", LEGACY)]);
        run(repo.ralph().args(["compete", "3"]))
    };
    let out = verdict("# TODO later");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("4 problem(s), 3 on the base, all of rules the base already breaks"),
        "{}",
        out.stderr
    );
    // One of a rule the base keeps: the check fails, and says why.
    let out = verdict("# FIXME later");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("worse now: 1 problem(s) of a rule the base keeps, e.g. \"T002\""),
        "{}",
        out.stderr
    );
}

#[test]
fn a_second_run_on_the_same_base_reuses_the_baseline() {
    let repo = Repo::with(Setup {
        issues: &[
            (3, crate::compete::ISSUE),
            (
                4,
                "---\ntitle: Add a wave function\nlabels: [ready]\n---\n- [ ] `wave` prints `o/`\n",
            ),
        ],
        ..Setup::default()
    });
    let first = run(repo.ralph().args(["compete", "3", "--no-push"]));
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!first.stderr.contains("(cached)"), "{}", first.stderr);
    let second = run(repo.ralph().args(["compete", "4", "--no-push"]));
    assert!(
        second
            .stderr
            .contains("(cached): syntax passes · test passes"),
        "{}",
        second.stderr
    );
}

#[test]
fn a_setup_that_fails_after_a_manifest_change_is_the_environments_fault() {
    let checks = format!(
        "{CHECKS}setup = \"! grep -q unobtainable requirements.txt 2>/dev/null || {{ echo 'ERROR: No matching distribution found for unobtainable' >&2; exit 1; }}\"\n"
    );
    let implementer = format!("{GOOD}\necho unobtainable >> requirements.txt");
    let repo = Repo::with(Setup {
        checks: &checks,
        implementer: &implementer,
        base_budget_per_bot: 3,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("ENVIRONMENT FAILURE"), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches("- Attempt ").count(),
        1,
        "no second attempt can mend the environment: {}",
        out.stderr
    );
    assert!(repo.events().is_empty(), "no bot gains or loses weight");
    let issue = repo.issue();
    assert!(issue.contains("attention-needed"), "{issue}");
    assert_eq!(issue.matches("ralph needs a human").count(), 1, "{issue}");
    assert!(
        issue.contains("the environment failed, not the change")
            && issue.contains("No matching distribution found for unobtainable")
            && issue.contains("ralph doctor"),
        "{issue}"
    );
    assert!(report(&repo)["rounds"][0]["environment_failure"]
        .as_str()
        .unwrap()
        .contains("the setup"));
}

#[test]
fn a_node_project_gets_npm_ci_in_its_fresh_worktree() {
    if !ralph::process::on_path("npm") {
        eprintln!("skipped: npm is not installed");
        return;
    }
    let repo = Repo::with(Setup {
        checks: "[checks]\ntest = \"node -e \\\"require('helper').ok()\\\" && sh test.sh\"\n",
        ..Setup::default()
    });
    commit_files(
        &repo,
        &[
            (
                "vendor/helper/package.json",
                r#"{"name": "helper", "version": "1.0.0", "main": "index.js"}"#,
            ),
            ("vendor/helper/index.js", "exports.ok = () => true;\n"),
            (
                "package.json",
                r#"{"name": "fixture", "version": "1.0.0", "private": true, "dependencies": {"helper": "file:vendor/helper"}}"#,
            ),
            (
                ".gitignore",
                ".ralph/worktrees/\n.ralph/runs/\nnode_modules/\n",
            ),
        ],
    );
    let npm = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("npm")
            .args(args)
            .current_dir(dir)
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_offline", "true")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "npm {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    npm(&repo.root, &["install", "--package-lock-only"]);
    commit_files(&repo, &[]);
    let out = run(repo
        .ralph()
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_offline", "true")
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Environment: `npm ci` (a package-lock.json)"),
        "{}",
        out.stderr
    );
    // The main checkout was never installed: the worktree had its own node_modules.
    assert!(!repo.root.join("node_modules").exists());
}

#[test]
fn a_src_layout_installed_from_the_main_checkout_is_tested_from_the_worktree() {
    if !ralph::process::on_path("python3") {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let repo = Repo::with(Setup {
        checks: "[checks]\ntest = \"python3 -m unittest discover -s tests -t .\"\n",
        implementer: r#"cat > /dev/null
printf 'def add(a, b):\n    return a + b\n\n\ndef greet(name):\n    return f"Hello, {name}!"\n' > src/greetings/__init__.py
printf 'import unittest\nfrom greetings import greet\n\n\nclass T(unittest.TestCase):\n    def test_greet(self):\n        self.assertEqual(greet("Ann"), "Hello, Ann!")\n' > tests/test_greet.py
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#,
        ..Setup::default()
    });
    commit_files(
        &repo,
        &[
            ("pyproject.toml", "[project]\nname = \"greetings\"\nversion = \"1.0\"\n"),
            ("src/greetings/__init__.py", "def add(a, b):\n    return a + b\n"),
            ("tests/__init__.py", ""),
            ("tests/test_add.py", "import unittest\nfrom greetings import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"),
            (".gitignore", ".ralph/worktrees/\n.ralph/runs/\n__pycache__/\n"),
        ],
    );
    // `pip install -e .` of the main checkout, as setuptools does it: a .pth file naming its
    // src/ in the environment's site directory (here added by a sitecustomize).
    let env = tempfile::tempdir().unwrap();
    let site = env.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("__editable__.greetings-1.0.pth"),
        repo.root.join("src").display().to_string(),
    )
    .unwrap();
    std::fs::write(
        env.path().join("sitecustomize.py"),
        format!(
            "import site\nsite.addsitedir({:?})\n",
            site.display().to_string()
        ),
    )
    .unwrap();
    let out = run(repo
        .ralph()
        .env("PYTHONPATH", env.path())
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("`greetings` is installed from")
            && out
                .stderr
                .contains("so the checks test the worktree's code"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rust_worktree_builds_in_the_shared_target_directory() {
    if !ralph::process::on_path("cargo") {
        eprintln!("skipped: cargo is not installed");
        return;
    }
    let repo = Repo::with(Setup {
        checks: "[checks]\ntest = \"cargo test --quiet --offline\"\n",
        implementer: r#"cat > /dev/null
printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn greet(name: &str) -> String {\n    format!("Hello, {name}!")\n}\n\n#[test]\nfn greets() {\n    assert_eq!(greet("Ann"), "Hello, Ann!");\n}\n' > src/lib.rs
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#,
        ..Setup::default()
    });
    commit_files(
        &repo,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"greetings\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            ),
            (".gitignore", ".ralph/worktrees/\n.ralph/runs/\ntarget/\n"),
        ],
    );
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shared = repo.root.join(".ralph/cache/target");
    assert!(
        shared.join("debug").is_dir(),
        "the build went to {}",
        shared.display()
    );
    assert!(!repo.checkout("3").join("target").exists());
}

#[test]
fn coverage_is_read_from_the_report_with_its_decimals() {
    let repo = Repo::with(Setup {
        checks: &format!(
            "{CHECKS}[checks.coverage]\ncommand = \"printf '{{\\\"totals\\\": {{\\\"percent_covered\\\": 98.1216}}}}' > {{report}}; echo 'Coverage failure: total of 98.12 is less than fail-under=100.00'\"\n"
        ),
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("coverage 98.12%"), "{}", out.stderr);
    let r = report(&repo);
    assert_eq!(r["rounds"][0]["coverage"]["before"], 98.1216);
    assert_eq!(r["rounds"][0]["coverage"]["after"], 98.1216);
}

/// A stand-in for uv: `sync` makes `.venv/bin` with the test runner, and ruff only when every
/// dependency group is asked for (the project keeps its linters in a `lint` group); `run`
/// starts a tool from `.venv/bin` or fails to spawn it as uv does.
const UV: &str = r#"case "$1" in
  sync)
    echo "$@" >> "$HOME/uv.calls"
    mkdir -p .venv/bin
    printf '#!/bin/sh\nsh test.sh\n' > .venv/bin/pytest
    case " $* " in *" --all-groups "*) printf '#!/bin/sh\necho "All checks passed!"\n' > .venv/bin/ruff;; esac
    chmod +x .venv/bin/*;;
  run)
    shift; tool=$1; shift
    if [ -x ".venv/bin/$tool" ]; then exec ".venv/bin/$tool" "$@"; fi
    echo "error: Failed to spawn: \`$tool\`" >&2
    echo "  Caused by: No such file or directory (os error 2)" >&2
    exit 2;;
esac"#;

#[test]
fn a_uv_project_gets_every_dependency_group_in_its_worktree() {
    let repo = Repo::with(Setup {
        checks: "",
        ..Setup::default()
    });
    // No [checks]: the project is detected, its checks run through `uv run`.
    let config = std::fs::read_to_string(repo.root.join(".ralph/config.toml")).unwrap();
    assert!(!config.contains("[checks]"));
    commit_files(
        &repo,
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"greetings\"\n[dependency-groups]\nlint = [\"ruff\"]\n[tool.ruff]\nline-length = 88\n[tool.pytest.ini_options]\n",
            ),
            ("uv.lock", "version = 1\n"),
            (".gitignore", ".ralph/worktrees/\n.ralph/runs/\n.venv/\n"),
        ],
    );
    let bin = repo.tools.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    crate::common::script(&bin, "uv", UV);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = run(repo.ralph().env("PATH", &path).args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Environment: `uv sync --frozen --all-groups --all-extras` (a uv.lock)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("lint passes · test passes"),
        "{}",
        out.stderr
    );
    let calls = std::fs::read_to_string(repo.tools.join("uv.calls")).unwrap();
    assert_eq!(
        calls.lines().count(),
        1,
        "once, in the new worktree: {calls}"
    );
}
