//! A tree judged once (docs/specification.md §6 step 7): an attempt whose tree was already
//! judged in the competition — a fix-up that changed nothing, the same change again, a replan
//! that came to the same files — takes the checks' verdicts on that tree instead of running
//! them again. The results are kept as the runs gave them, before the baseline's judgement
//! (judged again each time, against the baseline of the day), by the tree, the check (its whole
//! definition) and what every check runs with (the plan's variables and coverage command).
//!
//! What may be taken is decided here, without I/O: a check that passed, or failed for good; never
//! one whose failing tests passed when run again alone (flaky), one that timed out (that says how
//! long the machine took, not what the tree is), one that did not run, nor a failing test check
//! whose failing tests were run again alone against another base. A CI job's checks are taken
//! all together or run again together (a later step sees what the earlier ones built), and
//! coverage is taken only with the whole verdict: when anything runs again, so do the tests it
//! is measured by.

use crate::checks::baseline::Baseline;
use crate::checks::outcomes::Measure;
use crate::checks::{CheckKind, CheckPlan, CheckResult, CheckSpec, CheckStatus};
use serde::{Deserialize, Serialize};

/// The checks' results on every tree judged in a competition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub trees: Vec<Judgement>,
}

/// The checks on one tree, with one setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The git tree the checks ran on.
    pub tree: String,
    /// The attempt that judged it first.
    pub by: Name,
    /// What every check ran with: the plan's variables and coverage command.
    pub setting: serde_json::Value,
    /// Each check's last result on the tree, as its run gave it.
    pub checks: Vec<Kept>,
    /// Coverage after the change, as last measured on the tree.
    pub coverage: Measured,
}

/// Coverage after a change: the total, or why there is none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub after: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// One check's result on a tree, as its run gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    /// The check as the plan defined it (name, command, kind, CI job, tools).
    pub spec: serde_json::Value,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub output_tail: String,
    pub hint: Option<String>,
    pub measure: Measure,
    /// The baseline commit its failing tests were run again alone against.
    pub settled_on: String,
}

/// An attempt, as the notes name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Name {
    /// `Attempt`, `Audit attempt`, `Revision attempt`.
    pub label: String,
    pub round: u32,
    pub attempt: u32,
}

impl Name {
    /// `attempt 2`, or `attempt 2 of round 1` when `other` is of another round or purpose.
    fn said(&self, other: &Name) -> String {
        let label = self.label.to_lowercase();
        if self.round == other.round && self.label == other.label {
            format!("{label} {}", self.attempt)
        } else {
            format!("{label} {} of round {}", self.attempt, self.round)
        }
    }
}

/// Why a check runs again on a tree already judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Again {
    /// No result of it on this tree.
    NotJudged,
    /// Tests of it failed and passed when run again alone.
    Flaky,
    TimedOut,
    /// It did not run there (unavailable, or left out after an earlier failure).
    NotRun,
    /// A failing test check whose failing tests were run again against another base.
    OtherBase,
    /// Coverage is measured again, by the tests.
    Coverage,
    /// Another check of its CI job runs again, and a job runs whole.
    Job,
}

impl Again {
    /// Why, in words.
    pub fn why(self) -> &'static str {
        match self {
            Again::NotJudged => "it was not judged on this tree",
            Again::Flaky => "its verdict was flaky",
            Again::TimedOut => "it timed out",
            Again::NotRun => "it did not run",
            Again::OtherBase => "its failing tests were run again against another base",
            Again::Coverage => "coverage is measured again",
            Again::Job => "its CI job runs again",
        }
    }
}

/// What becomes of one check of the plan on a tree already judged.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    /// Its verdict there, taken.
    Taken(CheckResult),
    /// The baseline's result: it cannot judge a change and never runs.
    Base(CheckResult),
    /// Left out of the run, with no result: a stand-in check that did not stand in on the
    /// base ([`Baseline::stood_in`]).
    Out,
    /// It runs again.
    Again(Again),
}

/// The verdicts a tree already judged gives an attempt, check by check in plan order.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    /// The attempt that judged the tree first.
    pub by: Name,
    pub slots: Vec<Slot>,
    /// The coverage measured there: taken with the whole verdict, or when the plan measures
    /// none (why not is the plan's, whatever runs).
    pub coverage: Option<Measured>,
}

impl Taken {
    /// Whether nothing runs again.
    pub fn whole(&self) -> bool {
        !self.slots.iter().any(|s| matches!(s, Slot::Again(_)))
    }

    /// The results taken.
    pub fn results(&self) -> impl Iterator<Item = &CheckResult> {
        self.slots.iter().filter_map(|s| match s {
            Slot::Taken(r) => Some(r),
            _ => None,
        })
    }

    /// The checks that run again, by name, with why.
    pub fn again<'p>(&self, plan: &'p CheckPlan) -> Vec<(&'p str, Again)> {
        plan.checks
            .iter()
            .zip(&self.slots)
            .filter_map(|(spec, s)| match s {
                Slot::Again(why) => Some((spec.name.as_str(), *why)),
                _ => None,
            })
            .collect()
    }
}

/// What every check of `plan` runs with, as a judgement records it.
pub fn setting(plan: &CheckPlan) -> serde_json::Value {
    serde_json::json!({ "env": plan.env, "coverage": plan.coverage })
}

/// A check's definition, as a judgement records it.
fn definition(spec: &CheckSpec) -> serde_json::Value {
    serde_json::to_value(spec).unwrap_or_default()
}

impl Judged {
    /// The judgement of `tree` under `plan`'s setting, if there is one.
    fn find(&self, tree: &str, setting: &serde_json::Value) -> Option<&Judgement> {
        self.trees
            .iter()
            .find(|j| j.tree == tree && j.setting == *setting)
    }

    /// What `tree`, judged before under `plan`'s setting, gives the plan's checks against
    /// `base`; `None` when it was not judged.
    pub fn take(&self, tree: &str, plan: &CheckPlan, base: &Baseline) -> Option<Taken> {
        let judgement = self.find(tree, &setting(plan))?;
        let mut slots: Vec<Slot> = plan
            .checks
            .iter()
            .map(|spec| match base.cannot_judge(spec) {
                Some(r) => Slot::Base(r),
                None if spec.fallback.is_some() && !base.stood_in(spec) => Slot::Out,
                None => match judgement.kept(spec) {
                    Some(kept) => kept.verdict(spec, base),
                    None => Slot::Again(Again::NotJudged),
                },
            })
            .collect();
        whole_jobs(plan, &mut slots);
        measured_again(plan, &mut slots);
        let whole = !slots.iter().any(|s| matches!(s, Slot::Again(_)));
        Some(Taken {
            by: judgement.by.clone(),
            slots,
            coverage: (whole || plan.coverage.is_none()).then(|| judgement.coverage.clone()),
        })
    }

    /// Records what the checks gave on `tree` (`results`: as their runs gave them, before the
    /// baseline's judgement; those taken from it left out): a check that did not run replaces
    /// nothing; `coverage`, when it was measured again. `by` names the attempt when the tree is
    /// new; `base` is the commit failing tests were run again against.
    pub fn record(&mut self, tree: &str, by: &Name, plan: &CheckPlan, ran: Ran<'_>, base: &str) {
        let setting = setting(plan);
        let at = match self
            .trees
            .iter()
            .position(|j| j.tree == tree && j.setting == setting)
        {
            Some(at) => at,
            None => {
                self.trees.push(Judgement {
                    tree: tree.to_owned(),
                    by: by.clone(),
                    setting,
                    checks: Vec::new(),
                    coverage: Measured::default(),
                });
                self.trees.len() - 1
            }
        };
        let judgement = &mut self.trees[at];
        for (spec, r) in ran.results {
            if matches!(r.status, CheckStatus::Skipped | CheckStatus::FailingOnBase) {
                continue;
            }
            let kept = Kept {
                spec: definition(spec),
                status: r.status,
                exit_code: r.exit_code,
                duration_ms: r.duration_ms,
                output_tail: r.output_tail.clone(),
                hint: r.hint.clone(),
                measure: r.measure.clone(),
                settled_on: base.to_owned(),
            };
            match judgement.checks.iter_mut().find(|k| k.spec == kept.spec) {
                Some(old) => *old = kept,
                None => judgement.checks.push(kept),
            }
        }
        if let Some(c) = ran.coverage {
            judgement.coverage = c;
        }
    }
}

/// What one run of the checks gave, for [`Judged::record`].
pub struct Ran<'a> {
    /// Each check that ran (or was left out) with its result.
    pub results: Vec<(&'a CheckSpec, &'a CheckResult)>,
    /// The coverage, when it was measured.
    pub coverage: Option<Measured>,
}

impl<'a> Ran<'a> {
    /// The `results` of a run of `plan` (in plan order; a check the run left out has none),
    /// each with its check, matched by name in order; and the `coverage`.
    pub fn of(
        plan: &'a CheckPlan,
        results: &'a [CheckResult],
        coverage: Option<Measured>,
    ) -> Ran<'a> {
        let mut specs = plan.checks.iter();
        let results = results
            .iter()
            .filter_map(|r| specs.find(|s| s.name == r.name).map(|s| (s, r)))
            .collect();
        Ran { results, coverage }
    }
}

impl Judgement {
    /// The result kept of the check `spec`.
    fn kept(&self, spec: &CheckSpec) -> Option<&Kept> {
        let def = definition(spec);
        self.checks.iter().find(|k| k.spec == def)
    }
}

impl Kept {
    /// Whether this result may stand for `spec` judged against `base`: taken, or why not.
    fn verdict(&self, spec: &CheckSpec, base: &Baseline) -> Slot {
        if self
            .measure
            .tests
            .as_ref()
            .is_some_and(|t| !t.flaky.is_empty())
        {
            return Slot::Again(Again::Flaky);
        }
        match self.status {
            CheckStatus::Passed => {}
            CheckStatus::Failed if spec.kind == CheckKind::Quality => {}
            CheckStatus::Failed if self.settled_on == base.commit => {}
            CheckStatus::Failed => return Slot::Again(Again::OtherBase),
            CheckStatus::TimedOut => return Slot::Again(Again::TimedOut),
            CheckStatus::Unavailable | CheckStatus::Skipped | CheckStatus::FailingOnBase => {
                return Slot::Again(Again::NotRun)
            }
        }
        Slot::Taken(CheckResult {
            name: spec.name.clone(),
            kind: spec.kind,
            command: spec.command.clone(),
            status: self.status,
            exit_code: self.exit_code,
            duration_ms: self.duration_ms,
            output_tail: self.output_tail.clone(),
            hint: self.hint.clone(),
            measure: self.measure.clone(),
            configured: spec.configured,
            advisory: spec.advisory.clone(),
            uses: spec.uses.clone(),
            trace: Default::default(),
        })
    }
}

/// A CI job instance's checks run in order in one tree: when one of them runs again, the ones
/// taken run again with it.
fn whole_jobs(plan: &CheckPlan, slots: &mut [Slot]) {
    let instance = |i: usize| plan.checks[i].job.as_ref().map(|p| p.instance.as_str());
    let again: Vec<&str> = (0..slots.len())
        .filter(|&i| matches!(slots[i], Slot::Again(_)))
        .filter_map(instance)
        .collect();
    for (i, slot) in slots.iter_mut().enumerate() {
        if matches!(slot, Slot::Taken(_)) && instance(i).is_some_and(|j| again.contains(&j)) {
            *slot = Slot::Again(Again::Job);
        }
    }
}

/// Coverage is taken only with the whole verdict: when a check runs again, so do the tests
/// coverage is measured by — the plan's first test check outside a CI job, which runs under
/// coverage, or every test check when the tests write their own report.
fn measured_again(plan: &CheckPlan, slots: &mut [Slot]) {
    let Some(coverage) = &plan.coverage else {
        return;
    };
    if !slots.iter().any(|s| matches!(s, Slot::Again(_))) {
        return;
    }
    let under = plan
        .checks
        .iter()
        .position(|c| c.kind == CheckKind::Test && c.job.is_none());
    for (i, slot) in slots.iter_mut().enumerate() {
        let measures = match coverage.test_command {
            Some(_) => Some(i) == under,
            None => plan.checks[i].kind == CheckKind::Test,
        };
        if measures && matches!(slot, Slot::Taken(_)) {
            *slot = Slot::Again(Again::Coverage);
        }
    }
}

/// Whether `result` fails for the change against `base` (an advisory check never does): a
/// taken one that does ends the run, as it ended the first.
pub fn fails_for_change(base: &Baseline, result: &CheckResult) -> bool {
    if result.advisory.is_some() {
        return false;
    }
    let mut judged = result.clone();
    base.judge(&mut judged);
    matches!(judged.status, CheckStatus::Failed | CheckStatus::TimedOut)
}

/// The hint of a result taken from `by` for `now`.
pub fn taken_hint(result: &CheckResult, by: &Name, now: &Name) -> String {
    let from = format!("not run again: {}'s verdict on the same tree", by.said(now));
    match &result.hint {
        Some(h) => format!("{from}; {h}"),
        None => from,
    }
}

/// What the attempt `now` says of the verdicts `taken` from the tree `tree`: all of them, or
/// which checks run again and why; `stopped` names a taken check that fails for the change
/// (the rest are not run). `None` when nothing was taken.
pub fn note(
    now: &Name,
    tree: &str,
    taken: &Taken,
    plan: &CheckPlan,
    stopped: Option<&str>,
) -> Option<String> {
    let count = taken.results().count();
    if count == 0 {
        return None;
    }
    let short = &tree[..tree.len().min(7)];
    let head = format!(
        "the tree of {} is {}'s (tree {short})",
        now.said(&taken.by),
        taken.by.said(now)
    );
    if taken.whole() {
        return Some(format!("{head}: its verdict is taken, not run again"));
    }
    let verdicts = if count == 1 { "verdict" } else { "verdicts" };
    let rest = match stopped {
        Some(name) => {
            format!("`{name}` fails for the change there, so the others are not run")
        }
        None => {
            let again: Vec<String> = taken
                .again(plan)
                .into_iter()
                .map(|(name, why)| format!("`{name}` ({})", why.why()))
                .collect();
            format!("run again: {}", again.join(", "))
        }
    };
    Some(format!(
        "{head}: {count} check {verdicts} taken, not run again; {rest}"
    ))
}

#[cfg(test)]
mod tests;
