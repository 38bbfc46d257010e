//! A test that fails on the change where it passed on the base is run again, alone, before it
//! counts: one that passes then is flaky — reported, blamed on nobody, and no longer used to
//! judge. The runner that named it says how to run it alone ([`super::tools::Tool::alone`]:
//! pytest by `-k`, a plain `cargo test` by `-- --exact`, `go test` by `-run`, …); a runner that
//! cannot, and its failures count as they are. A check where more than [`MAX_RERUNS`] such tests
//! fail is not a flaky one: nothing is run again.

use super::baseline::Baseline;
use super::result::{CheckResult, CheckStatus};
use super::run::run_check;
use super::spec::CheckSpec;
use super::tools::CheckKind;
use std::path::Path;
use std::time::Duration;

/// The most tests of one check run again alone.
const MAX_RERUNS: usize = 3;

/// Runs again alone each test `result` failed that passed on `base` — when there are at most
/// [`MAX_RERUNS`] of them and ralph knows how — and marks those that pass then as flaky in
/// its measure. The result's status is left to the baseline's judgement.
pub async fn settle(
    spec: &CheckSpec,
    result: &mut CheckResult,
    base: &Baseline,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) {
    if spec.kind != CheckKind::Test || result.status != CheckStatus::Failed {
        return;
    }
    let Some(passed_on_base) = base.passed_tests(&spec.name) else {
        return;
    };
    let Some(tests) = result.measure.tests.as_ref().filter(|t| t.by_name) else {
        return;
    };
    let broken: Vec<String> = tests
        .failed
        .iter()
        .filter(|id| passed_on_base.contains(*id))
        .cloned()
        .collect();
    if broken.is_empty() || broken.len() > MAX_RERUNS {
        return;
    }
    let Some(runner) = super::tools::runner(&tests.runner) else {
        return;
    };
    let mut flaky = Vec::new();
    for id in broken {
        let Some(how) = runner.alone(&spec.command, &id, env, &spec.uses) else {
            return;
        };
        let once = CheckSpec {
            command: how.command,
            ..spec.clone()
        };
        let mut env = env.to_vec();
        env.extend(how.env);
        let again = run_check(&once, workdir, timeout, &env).await;
        let passed_alone = again
            .measure
            .tests
            .as_ref()
            .is_some_and(|t| t.passed.contains(&id) && !t.failed.contains(&id));
        if passed_alone {
            flaky.push(id);
        }
    }
    if let Some(t) = result.measure.tests.as_mut() {
        t.flaky.extend(flaky);
    }
}
