//! Running checks: quality checks at the same time — but those that take the same build lock
//! (cargo, Gradle, Maven) one after another —, then the tests one after another (they often
//! share a build directory or a database), each through the one process wrapper with a
//! timeout and a bounded output, in the worktree, without the GitHub credentials. A check
//! whose program is missing is "unavailable" with a hint (failed, when `[checks]` names it),
//! never a crash.

use super::compare::{cargo_tests, counts, junit, problems, Measure, TestOutcomes};
use super::{on_path, CheckKind, CheckPlan, CheckSpec};
use crate::process::{self, Kind};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The most output kept per stream while a check runs.
const MAX_CHECK_OUTPUT: usize = 4 << 20;

/// The most failed tests named from a runner's report.
const MAX_FAILED_NAMED: usize = 20;

/// Who is told about each check as it runs (the live view, [`super::live::Watch`]).
pub trait Observer: Sync {
    /// A check starts; what this returns is dropped when the check ends.
    fn started(&self, name: &str, command: &str) -> Box<dyn Send>;
    /// A check has its result.
    fn finished(&self, result: &CheckResult);
}

/// Nobody watching.
pub struct Unwatched;

impl Observer for Unwatched {
    fn started(&self, _: &str, _: &str) -> Box<dyn Send> {
        Box::new(())
    }

    fn finished(&self, _: &CheckResult) {}
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    TimedOut,
    /// The tool is not installed: the check could not say anything.
    Unavailable,
    /// It failed, as it does on the base, and no worse: not held against the change.
    FailingOnBase,
}

impl CheckStatus {
    /// How a check ended, in words.
    pub fn word(self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::TimedOut => "timed out",
            CheckStatus::Unavailable => "unavailable",
            CheckStatus::FailingOnBase => "failing on base",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    pub name: String,
    pub kind: CheckKind,
    pub command: String,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The part of its output that explains it (the failing tests' summary, else the head and
    /// tail of both streams), for reports, the next attempt and the replan prompt.
    pub output_tail: String,
    /// What to do about an unavailable tool, or how the check compares with the base.
    pub hint: Option<String>,
    /// Its numbers: which tests passed and failed, how many problems it reported.
    #[serde(skip)]
    pub measure: Measure,
    /// Named in `[checks]` (a missing tool then stops the competition).
    #[serde(skip)]
    pub configured: bool,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }
}

/// Runs one check in `workdir`, with `env` set for it.
pub async fn run_check(
    spec: &CheckSpec,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> CheckResult {
    if let Some(program) = &spec.program {
        if !on_path(program) && !workdir.join(program).exists() {
            return unavailable(spec, program);
        }
        if let Some(why) = hidden_by_sandbox(program, workdir) {
            return CheckResult {
                hint: Some(why),
                ..unavailable(spec, program)
            };
        }
    }
    // pytest, however it is started, also writes a JUnit report: tests compared one by one. Its
    // folder is the one place outside the worktree the check may write to.
    let junit_dir = (spec.kind == CheckKind::Test)
        .then(|| {
            tempfile::Builder::new()
                .prefix("ralph-junit")
                .tempdir()
                .ok()
        })
        .flatten();
    let junit_file = junit_dir.as_ref().map(|d| d.path().join("junit.xml"));
    let writable: Vec<&Path> = junit_dir.iter().map(|d| d.path()).collect();
    let mut cmd = super::shell(&spec.command, workdir, Kind::Check, env, &writable)
        .label(format!("check {}", spec.name))
        .timeout(timeout)
        .max_output(MAX_CHECK_OUTPUT);
    if let Some(f) = &junit_file {
        let mut addopts = crate::env::get("PYTEST_ADDOPTS").unwrap_or_default();
        addopts.push_str(&format!(" --junitxml={}", f.display()));
        cmd = cmd.env("PYTEST_ADDOPTS", addopts.trim());
    }
    let out = match process::run(&cmd).await {
        Ok(out) => out,
        Err(e) => {
            return CheckResult {
                output_tail: crate::error::chain_text(&e),
                ..unavailable(spec, "sh")
            }
        }
    };
    if let Some(program) = missing_program(spec, &out) {
        return CheckResult {
            duration_ms: out.duration.as_millis() as u64,
            output_tail: super::output::explain(&out.stdout, &out.stderr),
            ..unavailable(spec, &program)
        };
    }
    let measure = measure_of(spec.kind, junit_file.as_deref(), &out);
    let output_tail = explanation(&out, &measure);
    CheckResult {
        measure,
        configured: spec.configured,
        name: spec.name.clone(),
        kind: spec.kind,
        command: spec.command.clone(),
        status: if out.timed_out {
            CheckStatus::TimedOut
        } else if out.code == Some(0) {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        exit_code: out.code,
        duration_ms: out.duration.as_millis() as u64,
        output_tail,
        hint: if out.timed_out {
            Some(format!(
                "the check was stopped after {}s; raise its timeout or make it faster",
                timeout.as_secs()
            ))
        } else if out.code != Some(0) {
            // A check that failed where the network policy refused it: say so.
            crate::process::egress::refused_to(&format!("check {}", spec.name))
        } else {
            None
        },
    }
}

/// The result of `spec` when its program `program` is missing: unavailable, with a hint on
/// installing it or changing the command.
/// Why the sandbox cannot show `program` (found on `PATH`) to a check in `workdir`, when it
/// hides it: said in place of "not installed", which would send the user looking for the
/// wrong problem.
fn hidden_by_sandbox(program: &str, workdir: &Path) -> Option<String> {
    let sandbox = crate::process::sandbox::current()?;
    let path = crate::process::find_on_path(program)?;
    let real = path.canonicalize().unwrap_or(path);
    let by = sandbox.hides(
        &real,
        &crate::process::Confinement::new(Kind::Check, workdir),
    )?;
    Some(
        crate::process::ProcessError::Hidden {
            program: program.to_owned(),
            path: real,
            hidden: by,
        }
        .to_string(),
    )
}

fn unavailable(spec: &CheckSpec, program: &str) -> CheckResult {
    // A missing program makes an auto-detected check unavailable (it may not apply here) but
    // fails a configured one: the user asked for it.
    CheckResult {
        name: spec.name.clone(),
        kind: spec.kind,
        command: spec.command.clone(),
        status: CheckStatus::Unavailable,
        exit_code: None,
        duration_ms: 0,
        output_tail: String::new(),
        hint: Some(if spec.configured {
            format!(
                "`{program}` is not installed here: install it, or change the `{}` command under [checks] in .ralph/config.toml",
                spec.name
            )
        } else {
            format!(
                "`{program}` is not installed here: install it, or set the `{}` command under [checks] in .ralph/config.toml",
                spec.name
            )
        }),
        measure: Measure::default(),
        configured: spec.configured,
    }
}

/// The program `spec` found missing when it ran to `out`, if it failed for that.
fn missing_program(spec: &CheckSpec, out: &process::Output) -> Option<String> {
    // The tool is missing, whatever started it: `sh` says 127, a wrapper (uv, npx, poetry…)
    // says so in its own words.
    (!out.success() && !out.timed_out)
        .then(|| super::output::missing_tool(&out.stdout, &out.stderr))
        .flatten()
        .or_else(|| {
            (out.code == Some(127))
                .then(|| spec.program.clone().unwrap_or_else(|| spec.command.clone()))
        })
}

/// A check's numbers from its output `out`: a test check's outcomes (from the JUnit report at
/// `junit_file` when there is one, else from the console), a quality check's problem count.
fn measure_of(kind: CheckKind, junit_file: Option<&Path>, out: &process::Output) -> Measure {
    match kind {
        CheckKind::Test => Measure {
            tests: junit_file
                .and_then(|f| crate::untrusted_dir::report_text(f, "the JUnit report"))
                .and_then(|xml| junit(&xml))
                .or_else(|| cargo_tests(&out.stdout, &out.stderr))
                .or_else(|| counts(&out.stdout, &out.stderr)),
            problems: None,
        },
        CheckKind::Quality => Measure {
            tests: None,
            problems: problems(&out.stdout, &out.stderr),
        },
    }
}

/// The part of `out` that explains the check, after the failing tests of its `measure` when
/// it failed and the output does not name them all.
fn explanation(out: &process::Output, measure: &Measure) -> String {
    let mut output_tail = super::output::explain(&out.stdout, &out.stderr);
    // The runner's report names the failing tests, whatever its console shows.
    if out.code != Some(0) && !out.timed_out {
        let unnamed = |t: &&TestOutcomes| {
            t.by_name
                && t.failed.iter().any(|id| {
                    let short = id.rsplit("::").next().unwrap_or(id);
                    !output_tail.contains(short)
                })
        };
        if let Some(t) = measure.tests.as_ref().filter(unnamed) {
            output_tail = format!(
                "{}\n\n{output_tail}",
                t.failed_lines(MAX_FAILED_NAMED).join("\n")
            );
        }
    }
    output_tail
}

/// What running a plan's checks found.
#[derive(Debug, Clone)]
pub struct Ran {
    /// In the order of the plan.
    pub checks: Vec<CheckResult>,
    /// The coverage total, when the plan measures it and it could be read.
    pub coverage: Option<f64>,
    /// Why there is no total, when there is none.
    pub coverage_missing: Option<String>,
}

/// What a lane of quality checks reports as it goes.
enum Event {
    Started(usize),
    Finished(usize, Box<CheckResult>),
}

/// The build lock a check's command takes: cargo's (every subcommand but `fmt`), Gradle's or
/// Maven's. Checks that take the same one are run one after another.
pub fn build_lock(command: &str) -> Option<&'static str> {
    let all = super::words(command);
    let mut words = all
        .iter()
        .map(String::as_str)
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let program = words.next()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    match program {
        "cargo" => {
            let sub = words.find(|w| !w.starts_with('+') && !w.starts_with('-'));
            (sub != Some("fmt")).then_some("cargo")
        }
        "gradle" | "gradlew" => Some("gradle"),
        "mvn" | "mvnw" => Some("maven"),
        _ => None,
    }
}

/// The plan's quality checks in lanes that run at the same time: one lane per build lock (its
/// checks in plan order), one lane for each check that takes none.
fn lanes(plan: &CheckPlan) -> Vec<Vec<usize>> {
    let mut locked: Vec<(&'static str, Vec<usize>)> = Vec::new();
    let mut out = Vec::new();
    for (i, spec) in plan.checks.iter().enumerate() {
        if spec.kind != CheckKind::Quality {
            continue;
        }
        match build_lock(&spec.command) {
            Some(lock) => match locked.iter_mut().find(|(l, _)| *l == lock) {
                Some((_, lane)) => lane.push(i),
                None => locked.push((lock, vec![i])),
            },
            None => out.push(vec![i]),
        }
    }
    out.extend(locked.into_iter().map(|(_, lane)| lane));
    out
}

/// Runs the plan's checks in `workdir`: the quality checks concurrently, then the tests in
/// order — the first test check under coverage when the plan says how —, then the coverage
/// report. The plan's environment is set for all of them; a shared Cargo target directory is
/// held for the whole run ([`super::shared_target`]).
pub async fn run_checks(
    plan: &CheckPlan,
    workdir: &Path,
    timeout: Duration,
    watch: &dyn Observer,
) -> Ran {
    // A shared Cargo target directory is this worktree's alone while its checks run.
    let _held = hold_shared_target(plan, workdir).await;
    let cov_dir = tempfile::tempdir().ok();
    // A build system's checks configure and build in a folder of this run's own.
    let build_dir = tempfile::tempdir().ok();
    let mut env = plan.env.clone();
    if let Some(dir) = &build_dir {
        env.push((
            super::build_system::BUILD_DIR_VAR.into(),
            dir.path().display().to_string(),
        ));
    }
    if let (Some(_), Some(dir)) = (&plan.coverage, &cov_dir) {
        // coverage.py's data stays out of the worktree.
        env.push((
            "COVERAGE_FILE".into(),
            dir.path().join(".coverage").display().to_string(),
        ));
    }
    let mut results: Vec<Option<CheckResult>> = vec![None; plan.checks.len()];
    run_quality(plan, workdir, timeout, &env, watch, &mut results).await;
    let mut under_coverage = plan.coverage.as_ref().and_then(|c| c.test_command.clone());
    let mut untraced = false;
    // The check run under coverage, and whether it could run at all.
    let mut covered: Option<(String, bool)> = None;
    for (i, spec) in plan.checks.iter().enumerate() {
        if spec.kind != CheckKind::Test {
            continue;
        }
        let view = watch.started(&spec.name, &spec.command);
        let result = match under_coverage.take() {
            Some(command) => {
                let (r, passes_untraced) =
                    run_under_coverage(spec, command, workdir, timeout, &env).await;
                untraced |= passes_untraced;
                covered = Some((spec.name.clone(), r.status != CheckStatus::Unavailable));
                r
            }
            None => run_check(spec, workdir, timeout, &env).await,
        };
        drop(view);
        watch.finished(&result);
        results[i] = Some(result);
    }
    let checks: Vec<CheckResult> = results.into_iter().flatten().collect();
    let measured = match (&plan.coverage, &cov_dir) {
        // Decided by the check that ran under coverage alone: another test check that could
        // not run (a CI step whose tool is missing) takes nothing from its figure.
        (Some(spec), Some(dir)) => match (&covered, untraced, spec.test_command.is_some()) {
            (Some((name, false)), _, true) => Err(format!("the test check `{name}` could not run")),
            (None, _, true) => Err("no test check ran under coverage".to_owned()),
            (_, true, true) => Err("the tests pass but fail when run under coverage".to_owned()),
            _ => super::coverage::measure(spec, workdir, dir.path(), timeout, &env).await,
        },
        (Some(_), None) => Err("no temporary folder for its data could be made".to_owned()),
        (None, _) => Err(plan
            .notes
            .iter()
            .find_map(|n| n.strip_prefix("coverage is not measured: "))
            .map_or_else(
                || "no coverage tool is configured or detected".to_owned(),
                str::to_owned,
            )),
    };
    let (coverage, coverage_missing) = match measured {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    Ran {
        checks,
        coverage,
        coverage_missing,
    }
}

/// The shared Cargo target directory of the plan's environment, held for `workdir`; `None`
/// (with a warning when it cannot be taken) without one.
async fn hold_shared_target(
    plan: &CheckPlan,
    workdir: &Path,
) -> Option<super::shared_target::Held> {
    match super::shared_target::of(&plan.env) {
        Some(dir) => match super::shared_target::hold(&dir, workdir).await {
            Ok(held) => Some(held),
            Err(e) => {
                tracing::warn!(
                    "cannot take the shared target directory {}: {e}",
                    dir.display()
                );
                None
            }
        },
        None => None,
    }
}

/// Runs the plan's quality checks in their [`lanes`], the lanes at the same time, telling
/// `watch` as each check starts and ends, and puts each result at its plan index in `results`.
async fn run_quality(
    plan: &CheckPlan,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
    watch: &dyn Observer,
    results: &mut [Option<CheckResult>],
) {
    // Quality checks at the same time — but those that share a build lock one after another
    // (two cargo builds would only wait for each other, and each check's time would include
    // the other's).
    let lanes = lanes(plan);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let mut set = tokio::task::JoinSet::new();
    for lane in lanes {
        let (tx, dir, env) = (tx.clone(), workdir.to_owned(), env.to_vec());
        let specs: Vec<(usize, CheckSpec)> = lane
            .into_iter()
            .map(|i| (i, plan.checks[i].clone()))
            .collect();
        set.spawn(async move {
            for (i, spec) in specs {
                let _ = tx.send(Event::Started(i));
                let r = run_check(&spec, &dir, timeout, &env).await;
                let _ = tx.send(Event::Finished(i, Box::new(r)));
            }
        });
    }
    drop(tx);
    let mut views: Vec<Option<Box<dyn Send>>> = (0..plan.checks.len()).map(|_| None).collect();
    while let Some(event) = rx.recv().await {
        match event {
            Event::Started(i) => {
                let spec = &plan.checks[i];
                views[i] = Some(watch.started(&spec.name, &spec.command));
            }
            Event::Finished(i, r) => {
                views[i] = None;
                watch.finished(&r);
                results[i] = Some(*r);
            }
        }
    }
    while set.join_next().await.is_some() {}
}

/// Runs the test check `spec` as `command`, its command under coverage. Where that cannot run
/// here, `spec` runs as it is; where it fails, `spec` runs as it is too, and a pass then wins
/// with a hint — and `true`: coverage is not measured.
async fn run_under_coverage(
    spec: &CheckSpec,
    command: String,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> (CheckResult, bool) {
    let wrapped = CheckSpec {
        command,
        program: None,
        ..spec.clone()
    };
    let r = run_check(&wrapped, workdir, timeout, env).await;
    match r.status {
        CheckStatus::Unavailable => {
            tracing::warn!(
                "`{}` cannot run under coverage here; running it without",
                spec.name
            );
            (run_check(spec, workdir, timeout, env).await, false)
        }
        // Some suites fail only under a tracer (a recursion test sees coverage's frames): the
        // project's own command decides, and coverage is not taken.
        CheckStatus::Failed => {
            let mut plain = run_check(spec, workdir, timeout, env).await;
            if plain.passed() {
                plain.hint = Some(format!(
                    "passes as `{}` but fails under coverage (`{}`): coverage is not measured",
                    spec.command, wrapped.command
                ));
                (plain, true)
            } else {
                (r, false)
            }
        }
        _ => (r, false),
    }
}

#[cfg(test)]
mod lane_tests {
    use super::*;

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
            CheckSpec::new("spell", "typos"),
            CheckSpec::new("test", "cargo test"),
        ]);
        assert_eq!(lanes(&plan), vec![vec![0], vec![3], vec![1, 2]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, command: &str) -> CheckSpec {
        CheckSpec::new(name, command)
    }

    #[tokio::test]
    async fn pass_fail_timeout_and_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let t = Duration::from_secs(5);
        let ok = run_check(&spec("format", "echo all good"), dir.path(), t, &[]).await;
        assert_eq!(ok.status, CheckStatus::Passed);
        assert_eq!(ok.output_tail, "all good");
        let bad = run_check(
            &spec("lint", "echo warning: x >&2; exit 3"),
            dir.path(),
            t,
            &[],
        )
        .await;
        assert_eq!(bad.status, CheckStatus::Failed);
        assert_eq!(bad.exit_code, Some(3));
        assert!(bad.output_tail.contains("warning: x"));
        let slow = run_check(
            &spec("test", "sleep 30"),
            dir.path(),
            Duration::from_millis(300),
            &[],
        )
        .await;
        assert_eq!(slow.status, CheckStatus::TimedOut);
        assert!(slow.hint.unwrap().contains("stopped"));
        let missing = run_check(
            &spec("lint", "no-such-linter-ralph --all"),
            dir.path(),
            t,
            &[],
        )
        .await;
        assert_eq!(missing.status, CheckStatus::Unavailable);
        assert!(missing.hint.unwrap().contains("no-such-linter-ralph"));
        // A configured command that only fails inside the shell: exit 127.
        let inner = run_check(
            &spec("lint", "true && no-such-tool-ralph"),
            dir.path(),
            t,
            &[],
        )
        .await;
        assert_eq!(inner.status, CheckStatus::Unavailable);
    }

    #[tokio::test]
    async fn the_github_token_does_not_reach_checks() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("GITHUB_TOKEN", "ghp_check_must_not_see_this");
        let r = run_check(
            &spec("test", "echo \"token=[$GITHUB_TOKEN]\" $EXTRA"),
            dir.path(),
            Duration::from_secs(5),
            &[("EXTRA".to_owned(), "and the plan's variables".to_owned())],
        )
        .await;
        assert_eq!(r.output_tail, "token=[] and the plan's variables");
    }

    #[tokio::test]
    async fn quality_checks_run_together_and_tests_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let timed = |n: &str| format!("date +%s%N > {n}.start; sleep 1; date +%s%N > {n}.end");
        let checks = vec![
            spec("a", &timed("a")),
            spec("test", "cat a.end b.end c.end > /dev/null && echo ran"),
            spec("b", &timed("b")),
            spec("c", &timed("c")),
        ];
        let ran = run_checks(
            &CheckPlan::of(checks),
            dir.path(),
            Duration::from_secs(10),
            &Unwatched,
        )
        .await;
        let names: Vec<&str> = ran.checks.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "test", "b", "c"]);
        // The test saw every quality check's file: it ran after them.
        assert_eq!(ran.checks[1].output_tail, "ran");
        assert!(ran.checks.iter().all(CheckResult::passed));
        // The quality checks overlapped: each started before any of them ended.
        let stamp = |f: &str| -> u128 {
            std::fs::read_to_string(dir.path().join(f))
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
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
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
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
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
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
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
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
        assert_eq!(
            std::fs::read_to_string(dir.path().join("runs")).unwrap(),
            "plain\n"
        );
        assert_eq!(ran.checks[0].command, "echo plain >> runs");
        assert!(ran.checks[0].passed());

        // A suite that fails only under coverage: the plain run decides, no coverage is taken.
        std::fs::remove_file(dir.path().join("runs")).unwrap();
        plan.coverage.as_mut().unwrap().test_command = Some("echo covered >> runs; exit 1".into());
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
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
        let ran = run_checks(&plan, dir.path(), Duration::from_secs(10), &Unwatched).await;
        assert_eq!(ran.checks[0].status, CheckStatus::Failed);
        assert_eq!(ran.checks[0].command, "echo covered >> runs; exit 1");
    }

    #[tokio::test]
    async fn a_failing_test_is_named_from_the_junit_report_when_the_console_hides_it() {
        // pytest-pretty's table, cut at 80 columns, as pydantic-extra-types prints it.
        let dir = tempfile::tempdir().unwrap();
        let script = r#"report=${PYTEST_ADDOPTS#*--junitxml=}
cat > "$report" <<'XML'
<testsuites><testsuite><testcase classname="tests.test_ulid" name="test_ok"/><testcase classname="tests.test_ulid" name="test_json_serialization"><failure message="pydantic_core._pydantic_core.PydanticSerializationError: Unable to serialize unknown type: &lt;class 'ulid.ULID'&gt;">trace</failure></testcase></testsuite></testsuites>
XML
echo '│  tests/test…  │  test_json_…  │  100  │  109  │  PydanticSe…  │'
exit 1"#;
        let r = run_check(
            &spec("test", script),
            dir.path(),
            Duration::from_secs(5),
            &[],
        )
        .await;
        assert_eq!(r.status, CheckStatus::Failed);
        assert!(
            r.output_tail.starts_with("FAILED tests.test_ulid::test_json_serialization - pydantic_core._pydantic_core.PydanticSerializationError: Unable to serialize unknown type: <class 'ulid.ULID'>\n\n│"),
            "{}",
            r.output_tail
        );
        let tests = r.measure.tests.unwrap();
        assert_eq!((tests.passed.len(), tests.failed.len()), (1, 1));
    }
}
