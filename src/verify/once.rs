//! An attempt's checks, run — or taken from a judgement of the same tree ([`super::reuse`]
//! decides which): the taken verdicts are shown first, a taken failure of the change ends the
//! run there as it ended the first one, and only the rest run, as a plan of their own with the
//! same schedule. What ran is recorded for the next attempt on the tree.

use super::reuse::{fails_for_change, note, taken_hint, Judged, Measured, Name, Ran, Slot, Taken};
use crate::checks::run::{skipped, Observer};
use crate::checks::suite::Schedule;
use crate::checks::{run_checks, CheckPlan, CheckResult};
use std::path::Path;
use std::time::Duration;

/// The judgements of the competition, and the attempt whose checks run now.
pub struct Reuse<'a> {
    pub judged: &'a mut Judged,
    /// The git tree the attempt's checks judge: what its commit would hold.
    pub tree: String,
    pub name: Name,
}

/// What the checks gave: each check's result in plan order (as run, before the baseline's
/// judgement), the coverage, and what was taken from an earlier judgement.
pub(super) struct Checked {
    pub checks: Vec<CheckResult>,
    pub coverage: Measured,
    pub taken: Option<super::Taken>,
}

/// Where and how the checks run.
pub(super) struct Setting<'a> {
    pub plan: &'a CheckPlan,
    pub workdir: &'a Path,
    pub timeout: Duration,
    pub watch: &'a dyn Observer,
    pub schedule: Schedule<'a>,
}

/// Runs the plan's checks — those whose verdict on the same tree cannot be taken from `reuse`
/// (against a baseline only) — and records what ran there.
pub(super) async fn run_or_take(s: &Setting<'_>, reuse: Option<&mut Reuse<'_>>) -> Checked {
    let (Some(reuse), Some(base)) = (reuse, s.schedule.stop_against) else {
        return run(s, s.plan).await;
    };
    let taken = reuse
        .judged
        .take(&reuse.tree, s.plan, base)
        .filter(|t| t.results().next().is_some());
    let Some(taken) = taken else {
        let checked = run(s, s.plan).await;
        record(reuse, s.plan, &checked, &base.commit);
        return checked;
    };
    // Each taken result as shown: without a time of its own, saying whose it is.
    let shown: Vec<Option<CheckResult>> = taken
        .slots
        .iter()
        .map(|slot| match slot {
            Slot::Taken(r) => Some(CheckResult {
                duration_ms: 0,
                hint: Some(taken_hint(r, &taken.by, &reuse.name)),
                ..r.clone()
            }),
            _ => None,
        })
        .collect();
    shown.iter().flatten().for_each(|r| s.watch.finished(r));
    let stopped = taken
        .results()
        .find(|r| fails_for_change(base, r))
        .map(|r| r.name.clone());
    let (checks, coverage) = match &stopped {
        Some(name) => stop_at(s.plan, &taken, &shown, name),
        None if taken.whole() => (
            placed(s.plan, &taken, &shown, Vec::new()),
            taken.coverage.clone().unwrap_or_default(),
        ),
        None => {
            let (rest, ran) = run_the_rest(s, &taken).await;
            record(reuse, &rest, &ran, &base.commit);
            (placed(s.plan, &taken, &shown, ran.checks), ran.coverage)
        }
    };
    let nothing_ran = taken.whole() || stopped.is_some();
    Checked {
        checks,
        coverage,
        taken: note(&reuse.name, &reuse.tree, &taken, s.plan, stopped.as_deref())
            .map(|note| super::Taken { note, nothing_ran }),
    }
}

/// Runs `plan` as `s` says.
async fn run(s: &Setting<'_>, plan: &CheckPlan) -> Checked {
    let ran = run_checks(plan, s.workdir, s.timeout, s.watch, s.schedule).await;
    Checked {
        checks: ran.checks,
        coverage: Measured {
            after: ran.coverage,
            missing: ran.coverage_missing,
        },
        taken: None,
    }
}

/// Records the checks of `checked` (a run of `plan`) on the tree.
fn record(reuse: &mut Reuse<'_>, plan: &CheckPlan, checked: &Checked, base: &str) {
    let ran = Ran::of(plan, &checked.checks, Some(checked.coverage.clone()));
    reuse
        .judged
        .record(&reuse.tree, &reuse.name, plan, ran, base);
}

/// The results when the taken `name` fails for the change: the taken (as `shown`) and the
/// baseline's stand, the rest are not run — as the checks stop at a failure.
fn stop_at(
    plan: &CheckPlan,
    taken: &Taken,
    shown: &[Option<CheckResult>],
    name: &str,
) -> (Vec<CheckResult>, Measured) {
    let coverage = taken.coverage.clone().unwrap_or_else(|| Measured {
        after: None,
        missing: Some(format!(
            "the change failed `{name}`, and the checks stopped there"
        )),
    });
    (placed(plan, taken, shown, Vec::new()), coverage)
}

/// Every check's result in plan order: the taken ones as `shown`, the baseline's, and the
/// others from `ran` (a run of those, by name in order) — not run when `ran` has none for it,
/// unless the whole plan leaves it out.
fn placed(
    plan: &CheckPlan,
    taken: &Taken,
    shown: &[Option<CheckResult>],
    ran: Vec<CheckResult>,
) -> Vec<CheckResult> {
    let mut ran: Vec<Option<CheckResult>> = ran.into_iter().map(Some).collect();
    let mut from_run = |name: &str| {
        ran.iter_mut()
            .find(|r| r.as_ref().is_some_and(|r| r.name == name))
            .and_then(Option::take)
    };
    plan.checks
        .iter()
        .zip(&taken.slots)
        .zip(shown)
        .filter_map(|((spec, slot), shown)| match slot {
            Slot::Taken(_) => shown.clone(),
            Slot::Out => None,
            Slot::Base(r) => Some(from_run(&spec.name).unwrap_or_else(|| r.clone())),
            Slot::Again(_) => Some(from_run(&spec.name).unwrap_or_else(|| skipped(spec))),
        })
        .collect()
}

/// Runs the checks not taken (the baseline's among them, which it seeds as ever; not those the
/// whole plan leaves out), as a plan of their own with the same schedule: that plan, and what
/// its run gave.
async fn run_the_rest(s: &Setting<'_>, taken: &Taken) -> (CheckPlan, Checked) {
    let plan = CheckPlan {
        checks: s
            .plan
            .checks
            .iter()
            .zip(&taken.slots)
            .filter(|(_, slot)| matches!(slot, Slot::Base(_) | Slot::Again(_)))
            .map(|(spec, _)| spec.clone())
            .collect(),
        ..s.plan.clone()
    };
    let ran = run(s, &plan).await;
    (plan, ran)
}
