//! Running one check: through the one process wrapper with a timeout and a bounded output, in
//! the worktree, without the GitHub credentials, prepared by its tools (the reports they are
//! asked for, the flags that make them name every test, the state they must write) in a folder
//! of the run's own, and read by them (its tests, its findings by rule, the excerpt that
//! explains it). A check whose program is missing is "unavailable" with a hint (failed, when
//! `[checks]` names it), never a crash.

use super::outcomes::{counts, Measure, TestOutcomes};
use super::result::{CheckResult, CheckStatus};
use super::spec::CheckSpec;
use super::tools::CheckKind;
use super::tools::{self, Printed};
use crate::process::on_path;
use crate::process::{self, Kind};
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
    // The run's own folder: its tools' reports and state, the one place outside the worktree
    // (and the plan's caches) the check may write.
    let scratch = tempfile::Builder::new().prefix("ralph-check").tempdir();
    let scratch = match scratch {
        Ok(s) => s,
        Err(e) => {
            return CheckResult {
                output_tail: format!("no folder of its own could be made for the run: {e}"),
                ..unavailable(spec, "sh")
            }
        }
    };
    let prepared = tools::prepare(&spec.uses, &spec.command, env, scratch.path());
    let writable: Vec<&Path> = prepared.writable.iter().map(|p| p.as_path()).collect();
    let cmd = super::confined::shell(
        &prepared.command,
        workdir,
        Kind::Check,
        &prepared.env,
        &writable,
    )
    .label(format!("check {}", spec.name))
    .timeout(timeout)
    .max_output(MAX_CHECK_OUTPUT);
    let out = match process::run(&cmd).await {
        Ok(out) => out,
        Err(e) => {
            return CheckResult {
                output_tail: crate::error::chain_text(&e),
                ..unavailable(spec, "sh")
            }
        }
    };
    let printed = Printed {
        stdout: &out.stdout,
        stderr: &out.stderr,
        scratch: Some(scratch.path()),
        root: Some(workdir),
    };
    if let Some(program) = missing_program(spec, &out) {
        return CheckResult {
            duration_ms: out.duration.as_millis() as u64,
            output_tail: tools::explain(&spec.uses, &out.stdout, &out.stderr),
            ..unavailable(spec, &program)
        };
    }
    let measure = measure_of(spec, &printed);
    let mut result = finished(spec, &out, measure, timeout);
    // A test check that succeeded testing nothing (meson built without its tests) proves
    // nothing: it could not judge, and gives way.
    if spec.kind == CheckKind::Test && result.status == CheckStatus::Passed {
        if let Some(line) = tools::ran_no_test(&spec.uses, &printed) {
            result.status = CheckStatus::Unavailable;
            result.hint = Some(format!(
                "it ran no test (`{line}`): it cannot judge a change"
            ));
        }
    }
    result
}

/// The result of a check that ran to `out`.
fn finished(
    spec: &CheckSpec,
    out: &process::Output,
    measure: Measure,
    timeout: Duration,
) -> CheckResult {
    let output_tail = explanation(spec, out, &measure);
    CheckResult {
        measure,
        configured: spec.configured,
        advisory: spec.advisory.clone(),
        uses: spec.uses.clone(),
        trace: Default::default(),
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
        uses: spec.uses.clone(),
        trace: Default::default(),
    }
}

/// The program `spec` found missing when it ran to `out`, if it failed for that.
fn missing_program(spec: &CheckSpec, out: &process::Output) -> Option<String> {
    // The tool is missing, whatever started it: `sh` says 127, a wrapper (uv, npx, poetry…)
    // says so in its own words.
    (!out.success() && !out.timed_out)
        .then(|| tools::missing_program(&spec.uses, &out.stdout, &out.stderr))
        .flatten()
        .or_else(|| {
            (out.code == Some(127))
                .then(|| spec.program.clone().unwrap_or_else(|| spec.command.clone()))
        })
}

/// A check's numbers from what it printed: a test check's outcomes as its tools read them (else
/// a summary line's counts), a quality check's problem count and its findings by rule.
fn measure_of(spec: &CheckSpec, printed: &Printed) -> Measure {
    match spec.kind {
        CheckKind::Test => {
            // A step whose warnings were errors in CI: its warnings, by rule.
            let kinds = spec
                .relaxed
                .as_ref()
                .map(|_| super::warnings::by_rule(printed.stdout, printed.stderr));
            Measure {
                tests: tools::read_tests(&spec.uses, printed)
                    .or_else(|| counts(printed.stdout, printed.stderr)),
                problems: kinds.as_ref().map(|k| k.values().sum()),
                kinds,
            }
        }
        CheckKind::Quality => Measure {
            tests: None,
            problems: tools::count_problems(&spec.uses, printed.stdout, printed.stderr),
            kinds: tools::read_rules(&spec.uses, printed.stdout, printed.stderr),
        },
    }
}

/// The part of `out` that explains the check, after the failing tests of its `measure` when
/// it failed and the output does not name them all.
fn explanation(spec: &CheckSpec, out: &process::Output, measure: &Measure) -> String {
    let mut output_tail = tools::explain(&spec.uses, &out.stdout, &out.stderr);
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

/// A check left out because the run stopped before its turn.
pub(crate) fn skipped(spec: &CheckSpec) -> CheckResult {
    CheckResult {
        name: spec.name.clone(),
        kind: spec.kind,
        command: spec.command.clone(),
        status: CheckStatus::Skipped,
        exit_code: None,
        duration_ms: 0,
        output_tail: String::new(),
        hint: Some("not run: an earlier check already failed for the change".into()),
        measure: Default::default(),
        configured: spec.configured,
        advisory: spec.advisory.clone(),
        uses: spec.uses.clone(),
        trace: Default::default(),
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

    #[tokio::test]
    async fn a_test_check_that_tested_nothing_cannot_judge() {
        let dir = tempfile::tempdir().unwrap();
        let meson = dir.path().join("meson");
        std::fs::write(&meson, "#!/bin/sh\necho 'No tests defined.'\n").unwrap();
        std::fs::set_permissions(&meson, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut spec = CheckSpec::new("test", "./meson test -C build");
        spec.kind = CheckKind::Test;
        let r = run_check(&spec, dir.path(), Duration::from_secs(10), &[]).await;
        assert_eq!(r.status, CheckStatus::Unavailable, "{r:?}");
        assert_eq!(
            r.hint.as_deref(),
            Some("it ran no test (`No tests defined.`): it cannot judge a change")
        );
    }
}
