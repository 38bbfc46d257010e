//! Running checks: quality checks at the same time, then the tests one after another (they
//! often share a build directory or a database), each through the one process wrapper with a
//! timeout and a bounded output, in the worktree, without the GitHub credentials. A check
//! whose program is missing is "unavailable" with a hint (failed, when `[checks]` names it),
//! never a crash.

use super::{on_path, CheckKind, CheckSpec};
use crate::process::{self, Cmd};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The most output kept per stream while a check runs.
const MAX_CHECK_OUTPUT: usize = 4 << 20;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    TimedOut,
    /// The tool is not installed: the check could not say anything.
    Unavailable,
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
    /// What to do about an unavailable tool.
    pub hint: Option<String>,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }
}

/// Runs one check in `workdir`.
pub async fn run_check(spec: &CheckSpec, workdir: &Path, timeout: Duration) -> CheckResult {
    // A missing program makes an auto-detected check unavailable (it may not apply here) but
    // fails a configured one: the user asked for it.
    let unavailable = |program: &str| CheckResult {
        name: spec.name.clone(),
        kind: spec.kind,
        command: spec.command.clone(),
        status: if spec.configured {
            CheckStatus::Failed
        } else {
            CheckStatus::Unavailable
        },
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
    };
    if let Some(program) = &spec.program {
        if !on_path(program) && !workdir.join(program).exists() {
            return unavailable(program);
        }
    }
    let mut cmd = Cmd::new("sh")
        .args(["-c", &spec.command])
        .current_dir(workdir)
        .timeout(timeout)
        .max_output(MAX_CHECK_OUTPUT);
    for var in crate::env::SCRUBBED {
        cmd = cmd.env_remove(var);
    }
    let out = match process::run(&cmd).await {
        Ok(out) => out,
        Err(e) => {
            return CheckResult {
                output_tail: crate::error::chain_text(&e),
                ..unavailable("sh")
            }
        }
    };
    // The tool is missing, whatever started it: `sh` says 127, a wrapper (uv, npx, poetry…)
    // says so in its own words.
    let missing = (!out.success() && !out.timed_out)
        .then(|| super::output::missing_tool(&out.stdout, &out.stderr))
        .flatten()
        .or_else(|| {
            (out.code == Some(127))
                .then(|| spec.program.clone().unwrap_or_else(|| spec.command.clone()))
        });
    if let Some(program) = missing {
        return CheckResult {
            duration_ms: out.duration.as_millis() as u64,
            output_tail: super::output::explain(&out.stdout, &out.stderr),
            ..unavailable(&program)
        };
    }
    CheckResult {
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
        output_tail: super::output::explain(&out.stdout, &out.stderr),
        hint: out.timed_out.then(|| {
            format!(
                "the check was stopped after {}s; raise its timeout or make it faster",
                timeout.as_secs()
            )
        }),
    }
}

/// Runs every check: the quality checks concurrently, then the tests in order. Results come
/// back in the order of `checks`.
pub async fn run_checks(
    checks: &[CheckSpec],
    workdir: &Path,
    timeout: Duration,
) -> Vec<CheckResult> {
    let mut set = tokio::task::JoinSet::new();
    for (i, spec) in checks.iter().enumerate() {
        if spec.kind == CheckKind::Quality {
            let (spec, dir) = (spec.clone(), workdir.to_owned());
            set.spawn(async move { (i, run_check(&spec, &dir, timeout).await) });
        }
    }
    let mut results: Vec<Option<CheckResult>> = vec![None; checks.len()];
    while let Some(joined) = set.join_next().await {
        if let Ok((i, r)) = joined {
            results[i] = Some(r);
        }
    }
    for (i, spec) in checks.iter().enumerate() {
        if spec.kind == CheckKind::Test {
            results[i] = Some(run_check(spec, workdir, timeout).await);
        }
    }
    results.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn spec(name: &str, command: &str) -> CheckSpec {
        CheckSpec::new(name, command)
    }

    #[tokio::test]
    async fn pass_fail_timeout_and_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let t = Duration::from_secs(5);
        let ok = run_check(&spec("format", "echo all good"), dir.path(), t).await;
        assert_eq!(ok.status, CheckStatus::Passed);
        assert_eq!(ok.output_tail, "all good");
        let bad = run_check(&spec("lint", "echo warning: x >&2; exit 3"), dir.path(), t).await;
        assert_eq!(bad.status, CheckStatus::Failed);
        assert_eq!(bad.exit_code, Some(3));
        assert!(bad.output_tail.contains("warning: x"));
        let slow = run_check(
            &spec("test", "sleep 30"),
            dir.path(),
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(slow.status, CheckStatus::TimedOut);
        assert!(slow.hint.unwrap().contains("stopped"));
        let missing = run_check(&spec("lint", "no-such-linter-ralph --all"), dir.path(), t).await;
        assert_eq!(missing.status, CheckStatus::Unavailable);
        assert!(missing.hint.unwrap().contains("no-such-linter-ralph"));
        // A configured command that only fails inside the shell: exit 127.
        let inner = run_check(&spec("lint", "true && no-such-tool-ralph"), dir.path(), t).await;
        assert_eq!(inner.status, CheckStatus::Unavailable);
    }

    #[tokio::test]
    async fn the_github_token_does_not_reach_checks() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("GITHUB_TOKEN", "ghp_check_must_not_see_this");
        let r = run_check(
            &spec("test", "echo \"token=[$GITHUB_TOKEN]\""),
            dir.path(),
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(r.output_tail, "token=[]");
    }

    #[tokio::test]
    async fn quality_checks_run_together_and_tests_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let checks = [
            spec("a", "sleep 1; date +%s%N > a"),
            spec("test", "cat a b c > /dev/null && echo ran"),
            spec("b", "sleep 1; date +%s%N > b"),
            spec("c", "sleep 1; date +%s%N > c"),
        ];
        let started = Instant::now();
        let results = run_checks(&checks, dir.path(), Duration::from_secs(10)).await;
        let elapsed = started.elapsed();
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "test", "b", "c"]);
        // The test saw every quality check's file: it ran after them.
        assert_eq!(results[1].output_tail, "ran");
        assert!(results.iter().all(CheckResult::passed));
        // Three 1-second checks at once take about 1 s, far from 3 (a loose bound: the
        // benchmark measures it).
        assert!(elapsed < Duration::from_millis(2800), "{elapsed:?}");
    }
}
