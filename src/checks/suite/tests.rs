//! The tests of `suite`.

use super::*;
use crate::checks::run::Unwatched;

/// The build lock a command's tools take.
fn build_lock(command: &str) -> Option<&'static str> {
    crate::checks::tools::recognise(command, None).lock
}

#[test]
fn builds_that_share_a_lock_are_told_apart_from_those_that_do_not() {
    assert_eq!(
        build_lock("cargo clippy --all-targets -- -D warnings"),
        Some("cargo")
    );
    assert_eq!(
        build_lock("RUSTFLAGS=-Dwarnings cargo +nightly check"),
        Some("cargo")
    );
    assert_eq!(build_lock("/usr/bin/cargo test"), Some("cargo"));
    assert_eq!(build_lock("cargo fmt --all -- --check"), None);
    assert_eq!(build_lock("cargo +nightly fmt"), None);
    assert_eq!(build_lock("./gradlew check"), Some("gradle"));
    assert_eq!(build_lock("mvn -q verify"), Some("maven"));
    assert_eq!(build_lock("ruff check ."), None);
    assert_eq!(build_lock(""), None);
}

#[test]
fn quality_checks_run_side_by_side_but_one_build_at_a_time() {
    let plan = CheckPlan::of(vec![
        CheckSpec::new("format", "cargo fmt --all -- --check"),
        CheckSpec::new("lint", "cargo clippy --all-targets"),
        CheckSpec::new("docs", "cargo doc --no-deps"),
        CheckSpec::new("spell", "ruff check ."),
        CheckSpec::new("test", "cargo test"),
    ]);
    assert_eq!(
        lanes(&plan, &[0, 1, 2, 3, 4]),
        vec![vec![0], vec![3], vec![1, 2]]
    );
    assert_eq!(lanes(&plan, &[2, 3]), vec![vec![3], vec![2]]);
}

#[test]
fn checks_that_write_into_the_tree_never_run_side_by_side() {
    let plan = CheckPlan::of(vec![
        CheckSpec::new("vendor-a", "go mod vendor && go mod tidy && go vet ./..."),
        CheckSpec::new(
            "vendor-b",
            "go mod vendor && go mod tidy && staticcheck ./...",
        ),
        CheckSpec::new("black", "black ."),
        CheckSpec::new("black-check", "black --check ."),
        CheckSpec::new("eslint-fix", "npx eslint --fix src"),
        CheckSpec::new("eslint", "npx eslint src"),
        CheckSpec::new("gen", "mkdir -p gen && ruff check ."),
        CheckSpec::new("fmt", "cargo fmt --all -- --check"),
    ]);
    let all: Vec<usize> = (0..plan.checks.len()).collect();
    assert_eq!(
        lanes(&plan, &all),
        vec![vec![3], vec![5], vec![7], vec![0, 1, 2, 4, 6]]
    );
    let writes = |c: &str| crate::checks::tools::recognise(c, None).writes;
    assert!(
        writes("./scripts/lint.sh"),
        "a script ralph cannot see into"
    );
    assert!(writes("cargo fmt --all"));
    assert!(!writes("cargo fmt --all -- --check"));
    assert!(writes("ruff format ."));
    assert!(!writes("ruff format --check ."));
    assert!(writes("ruff check --fix ."));
    assert!(!writes("isort --check-only --diff ."));
    assert!(writes("npx prettier --write ."));
    assert!(!writes("npx prettier --check ."));
    assert!(!writes("pytest -q && mypy src"));
    assert!(writes("date > stamp"));
    assert!(writes("ruff check . 2>>lint.log"));
    assert!(!writes("ruff check . > /dev/null 2>&1"));
}

/// `plan` run in `dir` as the baseline runs it: every check, in the plan's order.
async fn plain(plan: &CheckPlan, dir: &Path) -> Ran {
    run_checks(
        plan,
        dir,
        Duration::from_secs(10),
        &Unwatched,
        Schedule::default(),
    )
    .await
}

/// A run judged against `baseline`, in the plan's order.
fn against(baseline: &Baseline) -> Schedule<'_> {
    Schedule {
        first: &[],
        stop_against: Some(baseline),
        changed_tests: &[],
    }
}

/// The baseline of `plan` run in `dir`.
async fn baseline_of(plan: &CheckPlan, dir: &Path) -> Baseline {
    let t = Duration::from_secs(20);
    let base = run_checks(plan, dir, t, &Unwatched, Schedule::default()).await;
    assert!(base.checks.iter().all(|c| c.status != CheckStatus::Skipped));
    Baseline::from_results("abc", &base.checks, base.coverage, None)
}

fn spec(name: &str, command: &str) -> CheckSpec {
    CheckSpec::new(name, command)
}

#[tokio::test]
async fn quality_checks_run_together_and_tests_after_them() {
    let dir = tempfile::tempdir().unwrap();
    // The stamps go outside the tree: checks that write into it run one at a time.
    let stamps = tempfile::tempdir().unwrap();
    let at = stamps.path().display().to_string();
    let timed =
        |n: &str| format!("date +%s%N > {at}/{n}.start; sleep 1; date +%s%N > {at}/{n}.end");
    let checks = vec![
        spec("a", &timed("a")),
        spec(
            "test",
            &format!("cat {at}/a.end {at}/b.end {at}/c.end > /dev/null && echo ran"),
        ),
        spec("b", &timed("b")),
        spec("c", &timed("c")),
    ];
    let ran = run_checks(
        &CheckPlan::of(checks),
        dir.path(),
        Duration::from_secs(10),
        &Unwatched,
        Schedule::default(),
    )
    .await;
    let names: Vec<&str> = ran.checks.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "test", "b", "c"]);
    // The test saw every quality check's file: it ran after them.
    assert_eq!(ran.checks[1].output_tail, "ran");
    assert!(ran.checks.iter().all(CheckResult::passed));
    // The quality checks overlapped: each started before any of them ended.
    let stamp = |f: &str| -> u128 {
        std::fs::read_to_string(stamps.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let last_start = ["a", "b", "c"]
        .map(|n| stamp(&format!("{n}.start")))
        .into_iter()
        .max();
    let first_end = ["a", "b", "c"]
        .map(|n| stamp(&format!("{n}.end")))
        .into_iter()
        .min();
    assert!(last_start < first_end);
    assert_eq!(ran.coverage, None);
}

#[tokio::test]
async fn another_test_check_that_cannot_run_leaves_the_coverage_measured() {
    // cachetools' CI: `tox` is a test check too, and not installed here.
    let dir = tempfile::tempdir().unwrap();
    let mut missing = spec("ci-tox", "ralph-no-such-tox");
    missing.kind = CheckKind::Test;
    missing.program = Some("ralph-no-such-tox".into());
    let mut plan = CheckPlan::of(vec![spec("test", "true"), missing]);
    plan.coverage = Some(super::super::coverage::CoverageSpec {
        test_command: Some("true".into()),
        command: "echo 'TOTAL 99.45%'".into(),
        reason: "test".into(),
    });
    let ran = plain(&plan, dir.path()).await;
    assert_eq!(ran.checks[1].status, CheckStatus::Unavailable);
    assert_eq!(ran.coverage, Some(99.45));
    // The check under coverage itself missing: not measured, and why.
    let mut covered = spec("test", "ralph-no-such-runner");
    covered.program = Some("ralph-no-such-runner".into());
    let mut plan = CheckPlan::of(vec![covered]);
    plan.coverage = Some(super::super::coverage::CoverageSpec {
        test_command: Some("ralph-no-such-runner".into()),
        command: "echo 'TOTAL 99.45%'".into(),
        reason: "test".into(),
    });
    let ran = plain(&plan, dir.path()).await;
    assert_eq!(ran.coverage, None);
    assert_eq!(
        ran.coverage_missing.as_deref(),
        Some("the test check `test` could not run")
    );
}

#[tokio::test]
async fn the_tests_run_once_under_coverage_and_the_report_gives_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = CheckPlan::of(vec![spec("test", "echo plain >> runs")]);
    plan.coverage = Some(super::super::coverage::CoverageSpec {
            test_command: Some("echo covered >> runs; test -n \"$COVERAGE_FILE\"".into()),
            command: "printf '{\"totals\": {\"percent_covered\": 87.4561}}' > {report}; echo 'total of 87 is less than fail-under=100'".into(),
            reason: "test".into(),
        });
    let ran = plain(&plan, dir.path()).await;
    let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
    assert_eq!(runs, "covered\n", "the suite ran once, under coverage");
    assert_eq!(
        ran.checks[0].command,
        "echo covered >> runs; test -n \"$COVERAGE_FILE\""
    );
    assert!(ran.checks[0].passed());
    assert_eq!(
        ran.coverage,
        Some(87.4561),
        "from the report, not the last number"
    );
    assert!(
        !dir.path().join(".coverage").exists(),
        "coverage data stays out of the worktree"
    );

    // Coverage's tool missing: the tests run as they are.
    std::fs::remove_file(dir.path().join("runs")).unwrap();
    plan.coverage.as_mut().unwrap().test_command =
        Some("no-such-coverage-ralph run -m pytest".into());
    let ran = plain(&plan, dir.path()).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("runs")).unwrap(),
        "plain\n"
    );
    assert_eq!(ran.checks[0].command, "echo plain >> runs");
    assert!(ran.checks[0].passed());

    // A suite that fails only under coverage: the plain run decides, no coverage is taken.
    std::fs::remove_file(dir.path().join("runs")).unwrap();
    plan.coverage.as_mut().unwrap().test_command = Some("echo covered >> runs; exit 1".into());
    let ran = plain(&plan, dir.path()).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("runs")).unwrap(),
        "covered\nplain\n"
    );
    assert!(ran.checks[0].passed());
    assert!(ran.checks[0]
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("fails under coverage")));
    assert_eq!(ran.coverage, None);

    // Failing both ways: the covered run's failure is the result.
    plan.checks[0].command = "echo plain >> runs; exit 1".into();
    let ran = plain(&plan, dir.path()).await;
    assert_eq!(ran.checks[0].status, CheckStatus::Failed);
    assert_eq!(ran.checks[0].command, "echo covered >> runs; exit 1");
}

fn test(name: &str, command: &str) -> CheckSpec {
    let mut t = spec(name, command);
    t.kind = CheckKind::Test;
    t
}

#[tokio::test]
async fn a_change_is_rejected_at_its_first_failing_check_and_the_rest_do_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    let plan = CheckPlan::of(vec![
        spec("lint", "echo lint >> ran"),
        test("t1", "echo t1 >> ran; test ! -e broken"),
        test("t2", "echo t2 >> ran"),
        // Fails on the base as well, and no worse: never a reason to stop.
        spec("old", "echo problem; exit 1"),
    ]);
    let baseline = baseline_of(&plan, dir.path()).await;
    let ran = |dir: &Path| std::fs::read_to_string(dir.join("ran")).unwrap_or_default();
    assert_eq!(ran(dir.path()), "lint\nt1\nt2\n");
    std::fs::remove_file(dir.path().join("ran")).unwrap();

    std::fs::write(dir.path().join("broken"), "").unwrap();
    let schedule = against(&baseline);
    let change = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    let status: Vec<CheckStatus> = change.checks.iter().map(|c| c.status).collect();
    assert_eq!(
        status,
        [
            CheckStatus::Passed,
            CheckStatus::Failed,
            CheckStatus::Skipped,
            // Failed on the base without a measure: not run again, never a reason to stop.
            CheckStatus::FailingOnBase
        ]
    );
    assert_eq!(ran(dir.path()), "lint\nt1\n", "t2 never ran");
    std::fs::remove_file(dir.path().join("ran")).unwrap();

    // The next attempt runs the check that failed first, and stops there again.
    let failed = ["t1".to_owned()];
    let schedule = Schedule {
        first: &failed,
        stop_against: Some(&baseline),
        changed_tests: &[],
    };
    let again = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    assert_eq!(
        ran(dir.path()),
        "t1\n",
        "the failed check first; nothing after it"
    );
    assert!(again
        .checks
        .iter()
        .filter(|c| c.name != "t1" && c.name != "old")
        .all(|c| c.status == CheckStatus::Skipped));
    std::fs::remove_file(dir.path().join("ran")).unwrap();

    // Fixed: the failed check first, then the rest in plan order.
    std::fs::remove_file(dir.path().join("broken")).unwrap();
    let fixed = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    assert_eq!(ran(dir.path()), "t1\nlint\nt2\n");
    let names: Vec<&str> = fixed.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["lint", "t1", "t2", "old"],
        "results stay in plan order"
    );
    assert!(fixed
        .checks
        .iter()
        .all(|c| c.status != CheckStatus::Skipped));
}

#[tokio::test]
async fn a_stopped_run_measures_no_coverage_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    let mut plan = CheckPlan::of(vec![spec("lint", "test ! -e broken"), test("test", "true")]);
    plan.coverage = Some(super::super::coverage::CoverageSpec {
        test_command: Some("true".into()),
        command: "echo 'TOTAL 90%'".into(),
        reason: "test".into(),
    });
    let base = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    assert_eq!(base.coverage, Some(90.0));
    let baseline = Baseline::from_results("abc", &base.checks, base.coverage, None);
    std::fs::write(dir.path().join("broken"), "").unwrap();
    let schedule = against(&baseline);
    let change = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    assert_eq!(change.checks[1].status, CheckStatus::Skipped);
    assert_eq!(change.coverage, None);
    assert_eq!(
        change.coverage_missing.as_deref(),
        Some("the change failed `lint`, and the checks stopped there")
    );
}

fn combination(name: &str, command: &str) -> CheckSpec {
    let mut t = test(name, command);
    t.job = Some(crate::checks::spec::JobPlace {
        instance: format!("ci.yml#build[{name}]"),
        job: "ci.yml#build".into(),
        before: Vec::new(),
        path: Vec::new(),
    });
    t
}

#[tokio::test]
async fn matrix_combinations_run_side_by_side_each_in_a_build_folder_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.c"), "int main(void) { return 0; }\n").unwrap();
    // As cJSON's CI: `mkdir -p build && cd build`, a configure cached there on first use.
    let step = |cc: &str| {
        format!(
                "mkdir -p build && cd build && test -f ../main.c && {{ test -f cc || echo {cc} > cc; }} && test \"$(cat cc)\" = {cc} && date +%s%N > \"$OUT/{cc}.start\" && sleep 1 && date +%s%N > \"$OUT/{cc}.end\""
            )
    };
    let out = tempfile::tempdir().unwrap();
    let mut plan = CheckPlan::of(vec![
        combination("CI build (cc gcc)", &step("gcc")),
        combination("CI build (cc clang)", &step("clang")),
    ]);
    plan.env = vec![("OUT".into(), out.path().display().to_string())];
    let t = Duration::from_secs(20);
    let ran = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    assert!(
        ran.checks.iter().all(CheckResult::passed),
        "each combination configured its own build folder: {:?}",
        ran.checks
    );
    assert!(
        !dir.path().join("build").exists(),
        "the worktree holds only the change"
    );
    let stamp = |f: &str| -> u128 {
        std::fs::read_to_string(out.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert!(
        stamp("gcc.start").max(stamp("clang.start")) < stamp("gcc.end").min(stamp("clang.end")),
        "the combinations overlapped"
    );
}

#[tokio::test]
async fn a_combination_that_fails_for_the_change_starts_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let step = |n: u32| format!("echo {n} >> \"$OUT/ran\"; test ! -e broken");
    let mut plan = CheckPlan::of(vec![
        combination("c1", &step(1)),
        combination("c2", &format!("sleep 1; {}", step(2))),
        combination("c3", &step(3)),
    ]);
    plan.env = vec![("OUT".into(), out.path().display().to_string())];
    let t = Duration::from_secs(20);
    let base = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    assert!(
        base.checks.iter().all(CheckResult::passed),
        "{:?}",
        base.checks
    );
    let baseline = Baseline::from_results("abc", &base.checks, None, None);
    std::fs::remove_file(out.path().join("ran")).unwrap();
    std::fs::write(dir.path().join("broken"), "").unwrap();
    let schedule = against(&baseline);
    let change = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    let status: Vec<CheckStatus> = change.checks.iter().map(|c| c.status).collect();
    assert_eq!(
        status,
        [
            CheckStatus::Failed,
            CheckStatus::Failed,
            CheckStatus::Skipped
        ],
        "two slots: c1 and c2 ran, c3 never started"
    );
}

#[tokio::test]
async fn a_check_that_failed_on_the_base_without_a_measure_is_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    let plan = CheckPlan::of(vec![
        // A build that fails on the base whatever the change (`-Dwarnings` under today's
        // compiler): no test named, no problem counted.
        spec(
            "features",
            "echo features >> ran; echo 'error: could not compile' >&2; exit 101",
        ),
        // A lint that counts its problems can still get worse: it runs.
        spec("lint", "echo lint >> ran; echo 'a.py:1:1: E1 x'; exit 1"),
        test("test", "echo test >> ran"),
    ]);
    let baseline = baseline_of(&plan, dir.path()).await;
    std::fs::remove_file(dir.path().join("ran")).unwrap();
    let schedule = against(&baseline);
    let change = run_checks(&plan, dir.path(), t, &Unwatched, schedule).await;
    let ran = std::fs::read_to_string(dir.path().join("ran")).unwrap();
    assert_eq!(ran, "lint\ntest\n", "the mute check did not run");
    let features = &change.checks[0];
    assert_eq!(features.status, CheckStatus::FailingOnBase);
    assert!(
        features
            .hint
            .as_deref()
            .unwrap()
            .contains("cannot judge the change"),
        "{:?}",
        features.hint
    );
    assert!(
        features.output_tail.contains("could not compile"),
        "the base's output"
    );
}

#[tokio::test]
async fn a_cargo_project_is_checked_offline_from_what_the_setup_downloaded() {
    if crate::env::get("CARGO_NET_OFFLINE").is_some() {
        eprintln!("skipped: CARGO_NET_OFFLINE is set here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = CheckPlan::of(vec![test("test", "test \"$CARGO_NET_OFFLINE\" = true")]);
    let t = Duration::from_secs(10);
    let plain = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    assert_eq!(
        plain.checks[0].status,
        CheckStatus::Failed,
        "not a Cargo project"
    );
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let cargo = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    assert_eq!(cargo.checks[0].status, CheckStatus::Passed);
}

/// A pytest stand-in: writes a JUnit report where `test_ok` passes and `test_shaky` passes only
/// when run alone (`-k`) — unless `BROKEN` is set, when it always fails.
const SHAKY: &str = r#"report=${PYTEST_ADDOPTS#*--junitxml=}; report=${report%% *}
case " $PYTEST_ADDOPTS " in *" -k "*) alone=1;; *) alone=;; esac
echo run >> runs.log
if [ -n "$alone" ] && [ ! -e BROKEN ]; then shaky='<testcase classname="tests.test_a" name="test_shaky"/>'
elif [ -e FIRST ] && [ ! -e BROKEN ]; then shaky='<testcase classname="tests.test_a" name="test_shaky"/>'
else shaky='<testcase classname="tests.test_a" name="test_shaky"><failure message="boom"/></testcase>'; fi
printf '<testsuite><testcase classname="tests.test_a" name="test_ok"/>%s</testsuite>' "$shaky" > "$report"
case "$shaky" in *failure*) exit 1;; esac"#;

#[tokio::test]
async fn a_test_failing_on_the_change_is_run_again_alone_before_it_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shaky.sh"), SHAKY).unwrap();
    let plan = CheckPlan::of(vec![CheckSpec::new("test", "sh shaky.sh")]);
    // On the base the test passes.
    std::fs::write(dir.path().join("FIRST"), "").unwrap();
    let base = plain(&plan, dir.path()).await;
    assert!(base.checks[0].passed(), "{:?}", base.checks[0]);
    let baseline = Baseline::from_results("b", &base.checks, None, None);
    std::fs::remove_file(dir.path().join("FIRST")).unwrap();
    let judged = || async {
        let ran = run_checks(
            &plan,
            dir.path(),
            Duration::from_secs(10),
            &Unwatched,
            against(&baseline),
        )
        .await;
        let mut r = ran.checks[0].clone();
        baseline.judge(&mut r);
        r
    };
    // After the change it fails in the full run and passes alone: flaky, nobody's doing.
    let r = judged().await;
    assert_eq!(r.status, CheckStatus::Passed, "{r:?}");
    assert!(r
        .hint
        .as_deref()
        .unwrap()
        .contains("`tests.test_a::test_shaky` failed in the full run"));
    // Broken for real: it fails alone too, and counts.
    std::fs::write(dir.path().join("BROKEN"), "").unwrap();
    let r = judged().await;
    assert_eq!(r.status, CheckStatus::Failed, "{r:?}");
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    assert_eq!(runs.lines().count(), 5, "base, full + alone twice");
}

/// A check of the CI job `job` after the steps `before` (label, command, installs).
fn job_check(job: &str, name: &str, command: &str, before: &[(&str, &str)]) -> CheckSpec {
    let mut t = test(name, command);
    t.job = Some(crate::checks::spec::JobPlace {
        instance: format!("ci.yml#{job}[]"),
        job: format!("ci.yml#{job}"),
        before: before
            .iter()
            .map(|(label, command)| crate::checks::spec::JobStep {
                label: (*label).into(),
                command: (*command).into(),
                installs: false,
            })
            .collect(),
        path: Vec::new(),
    });
    t
}

#[tokio::test]
async fn a_jobs_steps_run_in_order_in_a_tree_of_its_own_with_what_earlier_steps_exported() {
    let dir = tempfile::tempdir().unwrap();
    // Two jobs that both make `build/` (a CMake job's configure, build and test steps apart),
    // one exporting through $GITHUB_ENV and $GITHUB_PATH.
    let plan = CheckPlan::of(vec![
        job_check(
            "cmake",
            "CI cmake: build",
            "cd build && test -f configured && echo built > out",
            &[("mkdir build", "mkdir build"), ("configure", "cd build && touch configured")],
        ),
        job_check("cmake", "CI cmake: test", "cd build && test -f out", &[]),
        job_check(
            "env",
            "CI env: greets",
            "test \"$GREETING\" = hello && tool && test \"$GITHUB_WORKSPACE\" = \"$PWD\"",
            &[
                ("mkdir build", "mkdir build"),
                ("export", "echo GREETING=hello >> \"$GITHUB_ENV\" && mkdir -p \"$RUNNER_TEMP/bin\" && printf '#!/bin/sh\\ntrue\\n' > \"$RUNNER_TEMP/bin/tool\" && chmod +x \"$RUNNER_TEMP/bin/tool\" && echo \"$RUNNER_TEMP/bin\" >> \"$GITHUB_PATH\""),
            ],
        ),
        job_check("broken", "CI broken: after", "true", &[("fails", "echo no compiler >&2; exit 3")]),
    ]);
    let t = Duration::from_secs(20);
    let ran = run_checks(&plan, dir.path(), t, &Unwatched, Schedule::default()).await;
    let status: Vec<(&str, CheckStatus)> = ran
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.status))
        .collect();
    assert_eq!(
        status,
        [
            ("CI cmake: build", CheckStatus::Passed),
            ("CI cmake: test", CheckStatus::Passed),
            ("CI env: greets", CheckStatus::Passed),
            ("CI broken: after", CheckStatus::Unavailable),
        ],
        "{:?}",
        ran.checks
    );
    // On the base, a step that fails here is skipped and the check tried without it: one that
    // names no passing test then could not run here.
    let broken = &ran.checks[3];
    assert!(broken.hint.as_deref().unwrap().starts_with(
        "could not run here: its job's step(s) `fails` (exit 3) failed on this machine"
    ));
    assert_eq!(broken.trace.skipped_steps, ["fails"]);
    assert!(
        broken.output_tail.contains("no compiler"),
        "{}",
        broken.output_tail
    );
    assert!(
        !dir.path().join("build").exists(),
        "the worktree holds only the change"
    );
}

#[tokio::test]
async fn a_stand_in_runs_only_where_the_checks_it_gives_way_to_cannot_judge() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    let ran = |dir: &Path| std::fs::read_to_string(dir.join("ran")).unwrap_or_default();
    let own = test("cmake", "echo own >> ran")
        .standing_in(vec!["CI b".into()], "ralph's own cmake suite");
    // The CI's test passes on the base: it judges, ralph's own suite never runs.
    let plan = CheckPlan::of(vec![own.clone(), test("CI b", "echo ci >> ran")]);
    let baseline = baseline_of(&plan, dir.path()).await;
    assert!(!baseline.stood_in(&plan.checks[0]));
    assert_eq!(ran(dir.path()), "ci\n");
    std::fs::remove_file(dir.path().join("ran")).unwrap();
    let change = run_checks(&plan, dir.path(), t, &Unwatched, against(&baseline)).await;
    assert_eq!(ran(dir.path()), "ci\n");
    let names: Vec<&str> = change.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["CI b"]);
    std::fs::remove_file(dir.path().join("ran")).unwrap();

    // The CI's test fails on the base naming no test: ralph's own suite runs after it on the
    // base, and judges the change.
    let plan = CheckPlan::of(vec![own, test("CI b", "echo ci >> ran; exit 1")]);
    let baseline = baseline_of(&plan, dir.path()).await;
    assert!(baseline.stood_in(&plan.checks[0]));
    assert_eq!(ran(dir.path()), "ci\nown\n");
    std::fs::remove_file(dir.path().join("ran")).unwrap();
    let change = run_checks(&plan, dir.path(), t, &Unwatched, against(&baseline)).await;
    assert_eq!(
        ran(dir.path()),
        "own\n",
        "the CI's mute check is not run again"
    );
    assert_eq!(change.checks[0].status, CheckStatus::Passed);
    assert_eq!(change.checks[1].status, CheckStatus::FailingOnBase);
}

#[tokio::test]
async fn candidates_give_way_in_order_and_one_unavailable_on_the_base_is_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    let ran = |dir: &Path| std::fs::read_to_string(dir.join("ran")).unwrap_or_default();
    // `make test` runs a tool this machine lacks; the runner's own configuration is next, then
    // a third that is never needed.
    let mut make = test("test", "definitely-not-installed-ralph-tool");
    make.program = Some("definitely-not-installed-ralph-tool".into());
    let pytest = test("python-test", "echo pytest >> ran")
        .standing_in(vec!["test".into()], "the runner's own configuration");
    let third = test("third-test", "echo third >> ran")
        .standing_in(vec!["test".into(), "python-test".into()], "a last resort");
    let plan = CheckPlan::of(vec![make, pytest, third]);
    let baseline = baseline_of(&plan, dir.path()).await;
    assert_eq!(ran(dir.path()), "pytest\n");
    let names: Vec<(&str, CheckStatus)> = baseline
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.status))
        .collect();
    assert_eq!(
        names,
        [
            ("test", CheckStatus::Unavailable),
            ("python-test", CheckStatus::Passed)
        ]
    );
    assert_eq!(baseline.unverifiable(true), None);
    std::fs::remove_file(dir.path().join("ran")).unwrap();
    let change = run_checks(&plan, dir.path(), t, &Unwatched, against(&baseline)).await;
    assert_eq!(ran(dir.path()), "pytest\n");
    let first = &change.checks[0];
    assert_eq!(first.status, CheckStatus::Unavailable);
    assert!(
        first
            .hint
            .as_deref()
            .unwrap()
            .starts_with("not run: it could not run on the base"),
        "{first:?}"
    );
    assert_eq!(change.checks.len(), 2, "the third never runs");
}

#[tokio::test]
async fn a_step_that_fails_on_the_base_is_skipped_on_both_sides_and_the_machines_failure_blames_nobody(
) {
    let dir = tempfile::tempdir().unwrap();
    let log = tempfile::tempdir().unwrap();
    let browser = format!(
        "echo browser >> {}/log; echo 'su: Authentication failure' >&2; exit 1",
        log.path().display()
    );
    // A step that passes on the base and, after the change, fails the way a read-only
    // environment makes it fail.
    let install =
        "if [ -e CHANGED ]; then echo 'OSError: [Errno 30] Read-only file system' >&2; exit 1; fi";
    let mut check = job_check(
        "test",
        "CI test: yarn test",
        "echo '===== 3 passed in 0.1s ====='",
        &[("Install browsers", &browser), ("Install", install)],
    );
    check.job.as_mut().unwrap().before[1].installs = true;
    let plan = CheckPlan::of(vec![check]);
    let base = baseline_of(&plan, dir.path()).await;
    let b = &base.checks[0];
    assert_eq!(b.status, CheckStatus::Passed, "{b:?}");
    assert_eq!(b.skipped_steps, ["Install browsers"]);
    assert!(
        b.hint
            .as_deref()
            .unwrap()
            .contains("`Install browsers` (exit 1) failed on this machine and were skipped"),
        "{b:?}"
    );
    let ran = std::fs::read_to_string(log.path().join("log")).unwrap();
    assert_eq!(ran, "browser\n");
    // After the change: the browser step is skipped again, the install fails for the machine.
    std::fs::write(dir.path().join("CHANGED"), "").unwrap();
    let t = Duration::from_secs(20);
    let change = run_checks(&plan, dir.path(), t, &Unwatched, against(&base)).await;
    assert_eq!(
        std::fs::read_to_string(log.path().join("log")).unwrap(),
        "browser\n",
        "the step the base skipped is not run"
    );
    let mut r = change.checks[0].clone();
    assert_eq!(r.status, CheckStatus::Unavailable, "{r:?}");
    assert!(
        r.trace.machine.as_deref().unwrap().contains("read-only"),
        "{r:?}"
    );
    base.judge(&mut r);
    assert_eq!(
        r.status,
        CheckStatus::Unavailable,
        "not the change's: {r:?}"
    );
    let report = crate::verify::VerificationReport {
        checks: vec![r],
        ..crate::verify::VerificationReport::none()
    };
    let reasons = report.reasons();
    assert!(
        reasons.iter().any(|r| r.environment
            && r.text
                .starts_with("check `CI test: yarn test` could not run after the change")),
        "{reasons:?}"
    );
    assert!(
        !reasons
            .iter()
            .any(|r| !r.environment && r.text.contains("yarn test")),
        "held against nobody: {reasons:?}"
    );
}
