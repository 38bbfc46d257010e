//! Running checks: quality checks at the same time — but those that take the same build lock
//! (cargo, Gradle, Maven) one after another —, then the tests one after another (they often
//! share a build directory or a database), each through the one process wrapper with a
//! timeout and a bounded output, in the worktree, without the GitHub credentials. A check
//! whose program is missing is "unavailable" with a hint (failed, when `[checks]` names it),
//! never a crash.

use super::compare::{cargo_tests, counts, junit, problems, Measure, TestOutcomes};
use super::{on_path, CheckKind, CheckSpec};
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
    /// Not run: an earlier check had already failed for the change, which is rejected.
    Skipped,
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
            CheckStatus::Skipped => "not run",
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
    /// Why it only advises: a check ralph added that the project does not run itself — shown,
    /// never the reason for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
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
    let command = match spec.kind {
        CheckKind::Test => no_fail_fast(&spec.command),
        CheckKind::Quality => spec.command.clone(),
    };
    let mut cmd = super::shell(&command, workdir, Kind::Check, env, &writable)
        .label(format!("check {}", spec.name))
        .timeout(timeout)
        .max_output(MAX_CHECK_OUTPUT);
    if let Some(f) = &junit_file {
        let mut addopts = pytest_addopts(env);
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
        advisory: spec.advisory.clone(),
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

/// The `PYTEST_ADDOPTS` a check runs with: its own (a re-run's `-k`) first, else the user's.
pub fn pytest_addopts(env: &[(String, String)]) -> String {
    env.iter()
        .rev()
        .find(|(k, _)| k == "PYTEST_ADDOPTS")
        .map(|(_, v)| v.clone())
        .or_else(|| crate::env::get("PYTEST_ADDOPTS"))
        .unwrap_or_default()
}

/// `command` with `--no-fail-fast` after each `cargo test` in it: every test binary runs
/// even after one fails, so that each test is judged — a failing binary on the base would
/// otherwise hide every test after it, on the base and after the change alike. Whether the
/// command fails is unchanged.
pub fn no_fail_fast(command: &str) -> String {
    if command.contains("--no-fail-fast") {
        return command.to_owned();
    }
    let mut out = String::with_capacity(command.len() + 16);
    let mut rest = command;
    while let Some(at) = rest.find("cargo test") {
        let end = at + "cargo test".len();
        let starts = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '&' | ';' | '|' | '(' | '`'));
        let ends = rest[end..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '&' | ';' | '|' | ')'));
        out.push_str(&rest[..end]);
        if starts && ends {
            out.push_str(" --no-fail-fast");
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

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

/// The result of `spec` when its program `program` is missing: unavailable, with a hint on
/// installing it or changing the command.
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
        advisory: spec.advisory.clone(),
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
                .or_else(|| super::test_lines::go_tests(&out.stdout, &out.stderr))
                .or_else(|| super::test_lines::ctest_tests(&out.stdout, &out.stderr))
                .or_else(|| super::test_lines::js_tests(&out.stdout, &out.stderr))
                .or_else(|| counts(&out.stdout, &out.stderr)),
            problems: None,
            kinds: None,
        },
        CheckKind::Quality => Measure {
            tests: None,
            problems: problems(&out.stdout, &out.stderr),
            kinds: super::problem_kinds::problem_kinds(&out.stdout, &out.stderr),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cargo_test_binary_runs_after_a_failure() {
        assert_eq!(no_fail_fast("cargo test"), "cargo test --no-fail-fast");
        assert_eq!(
            no_fail_fast("cargo test --features x && (cd b && cargo test)"),
            "cargo test --no-fail-fast --features x && (cd b && cargo test --no-fail-fast)"
        );
        assert_eq!(no_fail_fast("cargo test-all"), "cargo test-all");
        assert_eq!(
            no_fail_fast("cargo test --no-fail-fast"),
            "cargo test --no-fail-fast"
        );
        assert_eq!(no_fail_fast("pytest"), "pytest");
    }

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
