//! Which check judges, as `ralph doctor` finds it: the plan's checks run on the base in the
//! rehearsal's scratch checkout, after its setup — as a competition's baseline runs them, stand-ins
//! included —, and each reported by role: the one that judges, the ones that gave way and why,
//! the stand-ins not needed. Where no candidate for the tests can judge, the doctor is not ready:
//! a competition would be refused. The report is a pure function of the plan and the results
//! ([`findings`]).

use super::{Finding, Status};
use crate::checks::baseline::{judges, Baseline};
use crate::checks::{CheckKind, CheckPlan, CheckResult, CheckStatus};
use std::path::Path;
use std::time::Duration;

/// Runs `plan`'s checks on the base in `tree` (its setup made) and reports them.
pub(super) async fn rehearse(plan: &CheckPlan, tree: &Path, timeout: Duration) -> Vec<Finding> {
    let ran = crate::checks::run_checks(
        plan,
        tree,
        timeout,
        &crate::checks::run::Unwatched,
        Default::default(),
    )
    .await;
    findings(plan, &ran.checks)
}

/// What `results` — the plan's checks on the base — say of each candidate, and whether a test
/// candidate judges.
pub(super) fn findings(plan: &CheckPlan, results: &[CheckResult]) -> Vec<Finding> {
    let mut out = Vec::new();
    let result = |name: &str| results.iter().find(|r| r.name == name);
    for spec in &plan.checks {
        let role = match spec.kind {
            CheckKind::Test => "tests",
            CheckKind::Quality => "quality",
        };
        let finding = |status, detail: String, hint: Option<String>| Finding {
            area: "candidates",
            check: spec.name.clone(),
            status,
            detail,
            hint,
        };
        let Some(r) = result(&spec.name) else {
            // A stand-in that did not run: what it stands in for judges.
            let for_checks = spec
                .fallback
                .as_ref()
                .map(|f| f.for_checks.join("`, `"))
                .unwrap_or_default();
            out.push(finding(
                Status::Ok,
                format!(
                    "stands in for `{for_checks}` ({role}): not needed, as that judges on the base"
                ),
                None,
            ));
            continue;
        };
        let stood_in = spec
            .fallback
            .as_ref()
            .map(|f| format!(", standing in for `{}`", f.for_checks.join("`, `")))
            .unwrap_or_default();
        if judges(r) {
            let how = match r.status {
                CheckStatus::Passed => "passes on the base".to_owned(),
                _ => format!(
                    "{} on the base, and judges by what it names ({})",
                    r.status.word(),
                    r.measure
                        .tests
                        .as_ref()
                        .map(|t| format!(
                            "{} passing test(s)",
                            t.passed_count.max(t.passed.len() as u64)
                        ))
                        .or_else(|| r.measure.problems.map(|n| format!("{n} problem(s)")))
                        .unwrap_or_default()
                ),
            };
            let skipped = if r.trace.skipped_steps.is_empty() {
                String::new()
            } else {
                format!(
                    "; its job's step(s) `{}` fail here and are skipped on both sides",
                    r.trace.skipped_steps.join("`, `")
                )
            };
            out.push(finding(
                Status::Ok,
                format!("judges the {role}{stood_in}: {how}{skipped}"),
                None,
            ));
        } else {
            let why = r
                .hint
                .clone()
                .unwrap_or_else(|| format!("{} on the base naming no test", r.status.word()));
            let next = plan
                .checks
                .iter()
                .find(|c| {
                    c.fallback
                        .as_ref()
                        .is_some_and(|f| f.for_checks.contains(&spec.name))
                })
                .map(|c| format!("; `{}` stands in", c.name))
                .unwrap_or_default();
            out.push(finding(
                Status::Warn,
                format!("gives way ({role}{stood_in}): {why}{next}"),
                None,
            ));
        }
    }
    let base = Baseline::from_results("the base", results, None, None);
    if let Some(why) = base.unverifiable(plan.require_test) {
        out.push(Finding {
            area: "candidates",
            check: "tests".into(),
            status: Status::Fail,
            detail: format!("{}: {}", why.message, why.details.join("; ")),
            hint: Some("a competition would be refused: install what the checks need, or name a test command that runs here under [checks] in .ralph/config.toml".into()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::CheckSpec;

    fn result(spec: &CheckSpec, status: CheckStatus, hint: Option<&str>) -> CheckResult {
        CheckResult {
            status,
            hint: hint.map(str::to_owned),
            ..crate::fixtures::passed_check(&spec.name, spec.kind, &spec.command)
        }
    }

    #[test]
    fn each_candidate_says_whether_it_judges_gave_way_or_was_not_needed() {
        let ci = CheckSpec::new("CI test: yarn test", "yarn test");
        let mut ci = ci;
        ci.kind = CheckKind::Test;
        let own = CheckSpec::new("test", "yarn test")
            .standing_in(vec![ci.name.clone()], "ralph's own run");
        let plan = CheckPlan::of(vec![ci.clone(), own.clone()]);
        // The CI's run could not run here; ralph's own judges.
        let results = [
            result(
                &ci,
                CheckStatus::Unavailable,
                Some("could not run here: its job's step(s) `Install browsers` (exit 1) failed on this machine"),
            ),
            result(&own, CheckStatus::Passed, None),
        ];
        let f = findings(&plan, &results);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].status, Status::Warn);
        assert!(
            f[0].detail
                .starts_with("gives way (tests): could not run here")
                && f[0].detail.ends_with("; `test` stands in"),
            "{}",
            f[0].detail
        );
        assert_eq!(f[1].status, Status::Ok);
        assert_eq!(
            f[1].detail,
            "judges the tests, standing in for `CI test: yarn test`: passes on the base"
        );
        // The CI's run judges: the stand-in is not needed.
        let f = findings(&plan, &[result(&ci, CheckStatus::Passed, None)]);
        assert!(f[1]
            .detail
            .starts_with("stands in for `CI test: yarn test` (tests): not needed"));
        // Nothing judges: not ready.
        let f = findings(
            &plan,
            &[
                result(&ci, CheckStatus::Unavailable, Some("no yarn")),
                result(&own, CheckStatus::Unavailable, Some("no yarn")),
            ],
        );
        let last = f.last().unwrap();
        assert_eq!((last.check.as_str(), last.status), ("tests", Status::Fail));
    }
}
