//! The tests of `doctor`.

use super::*;
use crate::fixtures::settings;
use crate::tracker::local::LocalTracker;

fn find<'a>(r: &'a Report, check: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.check == check)
        .unwrap_or_else(|| panic!("no {check}: {:#?}", r.findings))
}

#[tokio::test]
async fn a_directory_without_git_agents_or_checks_is_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".ralph/issues")).unwrap();
    std::fs::write(
        dir.path().join(".ralph/issues/4.md"),
        "---\ntitle: T\nlabels: [ready]\n---\nJust prose.\n",
    )
    .unwrap();
    let s = settings(
            dir.path(),
            "tracker = \"local\"\n[defaults]\nbackend = \"command\"\ncommand = [\"no-such-agent-ralph\"]\n",
        );
    let tracker = LocalTracker::new(s.ralph_dir.join("issues"));
    let r = examine(&s, Ok(&tracker), Some(4)).await;
    assert!(!r.ok);
    assert_eq!(find(&r, "repository").status, Status::Fail);
    assert_eq!(find(&r, "implementer").status, Status::Fail);
    assert_eq!(
        find(&r, "smart_bot_1").status,
        Status::Fail,
        "no bot can start"
    );
    let checks = find(&r, "checks");
    assert_eq!(checks.status, Status::Fail);
    assert!(checks
        .hint
        .as_deref()
        .unwrap()
        .contains("[checks]\ntest = \"make test\""));
    assert_eq!(find(&r, "#4").status, Status::Ok);
    assert_eq!(find(&r, "checkboxes").status, Status::Fail);
    assert_eq!(find(&r, "access").status, Status::Ok);
    assert!(
        r.findings.iter().all(|f| f.check != "models"),
        "command agents have no model to name"
    );
    let s = settings(dir.path(), "[defaults]\nbackend = \"codex\"\n");
    let r = examine(&s, Ok(&tracker), None).await;
    let models = find(&r, "models");
    assert_eq!(models.status, Status::Warn);
    assert!(models
        .detail
        .contains("smart_bot_1, smart_bot_2, smart_bot_3, arbiter, implementer"));
}

#[tokio::test]
async fn the_environment_of_the_checks_is_shown_with_its_reasons() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "pyproject.toml",
            "[project]\nname = \"pkg\"\n[tool.coverage.run]\nbranch = true\n",
        ),
        ("uv.lock", ""),
        ("src/pkg/__init__.py", ""),
        ("tests/test_pkg.py", ""),
    ] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut f = Findings::default();
    check_checks(&mut f, &settings(dir.path(), "")).await;
    let r = Report {
        ok: true,
        findings: f.0,
        ..Default::default()
    };
    assert_eq!(
            find(&r, "setup").detail,
            "`uv sync --frozen --all-groups --all-extras` (a uv.lock) runs in each new worktree and again when a dependency manifest changes"
        );
    assert!(find(&r, "environment")
        .detail
        .starts_with(&format!("PYTHONPATH={}", dir.path().join("src").display())));
    assert_eq!(
            find(&r, "coverage").detail,
            "the tests run as `uv run coverage run -m pytest`, then `uv run coverage json -q -o {report}` (coverage.py is configured in pyproject.toml)"
        );
}

#[tokio::test]
async fn a_tracker_that_cannot_be_opened_is_a_failure_with_its_hint() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), "[checks]\ntest = \"sh -c true\"\n");
    let r = examine(
        &s,
        Err(&TrackerError::NoToken {
            forge: crate::tracker::Forge::Github,
            looked: "GITHUB_TOKEN is unset".into(),
        }),
        Some(3),
    )
    .await;
    let access = find(&r, "access");
    assert_eq!(access.status, Status::Fail);
    assert!(access.hint.as_deref().unwrap().contains("GITHUB_TOKEN"));
    assert!(
        r.findings.iter().all(|f| f.area != "issue"),
        "no tracker, no issue"
    );
    assert_eq!(find(&r, "test").status, Status::Ok);
}

#[tokio::test]
async fn a_python_module_check_is_ready_only_when_its_module_is_installed() {
    if !on_path("python3") {
        eprintln!("skipped: no python3 on PATH");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = "[checks]\ntest = \"python3 -m ralph_no_such_module -q\"\nlint = \"python3 -m json.tool pyproject.toml\"\n";
    let mut f = Findings::default();
    check_checks(&mut f, &settings(dir.path(), config)).await;
    let r = Report {
        ok: true,
        findings: f.0,
        ..Default::default()
    };
    let test = find(&r, "test");
    assert_eq!(test.status, Status::Fail, "{}", test.detail);
    assert!(test
        .detail
        .contains("the module `ralph_no_such_module` is not installed"));
    assert_eq!(find(&r, "lint").status, Status::Ok);
}

#[tokio::test]
async fn a_build_cache_variable_is_explained_as_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("CMakeLists.txt"),
        "project(x C)\nenable_testing()\n",
    )
    .unwrap();
    let mut f = Findings::default();
    check_checks(&mut f, &settings(dir.path(), "")).await;
    let r = Report {
        ok: true,
        findings: f.0,
        ..Default::default()
    };
    let env = find(&r, "environment");
    assert!(env.detail.starts_with("CCACHE_DIR="), "{}", env.detail);
    assert!(
        env.detail.contains("ralph's own build cache"),
        "{}",
        env.detail
    );
    assert!(
        find(&r, "test").detail.contains("ctest"),
        "{}",
        find(&r, "test").detail
    );
}
