//! The change's own tests first: before the suite runs for a change, the test files it adds or
//! edits run alone, by the first test check whose runner takes files ([`Tool::files`]: pytest,
//! jest, vitest, AVA, node-tap, mocha, `node --test`, `cargo test --test`) that passed on the
//! base. When one of the change's tests fails there — a test the base did not have, or one it
//! passed that fails again when run alone (an edited test, a regression; one that passes alone
//! is flaky, see [`super::rerun`]) — that run is the check's verdict at once and the rest is not
//! run: a broken change costs its failing tests, not the whole suite again. When they pass, or
//! what fails is flaky, the suite runs as always, and judges.
//!
//! [`Tool::files`]: super::tools::Tool::files

use super::baseline::Baseline;
use super::plan::CheckPlan;
use super::result::{CheckResult, CheckStatus};
use super::run::{run_check, Observer};
use super::spec::CheckSpec;
use super::tools;
use super::tools::CheckKind;
use std::path::Path;
use std::time::Duration;

/// The most test files a change's first run takes: more, and the suite runs as always.
const MAX_FILES: usize = 20;

/// Where and how the first run happens.
pub struct Setting<'a> {
    pub plan: &'a CheckPlan,
    pub workdir: &'a Path,
    pub timeout: Duration,
    pub env: &'a [(String, String)],
    pub watch: &'a dyn Observer,
}

/// The check (its index in the plan) whose verdict the change's own tests gave, with that
/// verdict; `None` when the suite must run.
pub async fn run(
    at: &Setting<'_>,
    base: &Baseline,
    files: &[String],
    decided: &[Option<CheckResult>],
) -> Option<(usize, CheckResult)> {
    if files.is_empty() || files.len() > MAX_FILES {
        return None;
    }
    let words: Vec<&str> = files.iter().map(String::as_str).collect();
    let (i, spec, command) = at.plan.checks.iter().enumerate().find_map(|(i, spec)| {
        let takes = spec.kind == CheckKind::Test
            && spec.job.is_none()
            && (spec.fallback.is_none() || base.stood_in(spec))
            && decided[i].is_none()
            && spec.advisory.is_none()
            // One failing on the base is judged by how far the whole suite gets, which a run
            // of a few files cannot say.
            && base.passed(&spec.name);
        let command = takes
            .then(|| tools::files_command(&spec.uses, &spec.command, &words))
            .flatten()?;
        Some((i, spec, command))
    })?;
    // Without the base's names a failing test cannot be told new, broken or flaky.
    base.passed_tests(&spec.name)?;
    let once = CheckSpec {
        command: command.clone(),
        ..spec.clone()
    };
    let view = at.watch.started(&spec.name, &command);
    let mut result = run_check(&once, at.workdir, at.timeout, at.env).await;
    // A test the base passed is run again alone: failing again, it is the change's doing.
    super::rerun::settle(&once, &mut result, base, at.workdir, at.timeout, at.env).await;
    drop(view);
    let new_failing: Vec<&String> = result
        .measure
        .tests
        .as_ref()
        .filter(|t| t.by_name)
        .map(|t| {
            t.failed
                .iter()
                .filter(|id| !t.flaky.contains(*id))
                .collect()
        })
        .unwrap_or_default();
    if result.status != CheckStatus::Failed || new_failing.is_empty() {
        return None;
    }
    let verdict = CheckResult {
        command: spec.command.clone(),
        hint: Some(format!(
            "the change's own tests, run first alone (`{command}`), fail: {}; the rest of the checks were not run",
            new_failing
                .iter()
                .take(3)
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        ..result
    };
    at.watch.finished(&verdict);
    Some((i, verdict))
}

/// The result of a check not run because the change's own tests failed first.
pub fn not_run(spec: &CheckSpec) -> CheckResult {
    CheckResult {
        hint: Some("not run: the change's own tests failed first".into()),
        ..super::run::skipped(spec)
    }
}
