//! The CI's checks joined to those detected: one command is one check however it is spelled,
//! the CI's run of a check takes the detected one's place when its job prepares first (a build,
//! a bootstrap), ralph's own CMake/Meson suite stands in where the CI's cannot judge.

use crate::checks::plan::CheckPlan;
use crate::checks::project::Project;
use crate::checks::spec::CheckSpec;
use crate::checks::tools::CheckKind;
use crate::checks::{tools, workflows};
use std::collections::BTreeMap;

/// Adds the CI's checks that the plan does not run already, and its notes. Where the CI runs a
/// check the plan detected after steps of its job that prepare (a build, a bootstrap), the CI's
/// run takes the detected one's place.
pub(super) fn join(plan: &mut CheckPlan, mut ci: workflows::Ci, p: &Project) {
    let own = plan.checks.len();
    let stands_in = stand_in(plan, &mut ci);
    // One command is one check, however the project and its CI spell it.
    let normal = |c: &str| workflows::canonical(c);
    // The CI's own checks are told apart already (the same command after other steps is
    // another check): each is held only against the checks detected here.
    let mut detected = Detected::new(plan);
    // ralph's own suite stands in for the CI's: no CI run takes its place.
    detected.taken.fill(stands_in);
    let mut added = 0;
    for check in ci.checks {
        let script = ci.scripts.get(&check.name);
        let normal_script = script.map(|s| normal(s));
        let same_as = detected.checks.iter().position(|c| {
            normal(&c.command) == normal(&check.command)
                || normal_script.as_ref() == Some(&normal(&c.command))
                || c.name == check.name
        });
        if let Some(at) = detected.taken_by(&check, same_as, p) {
            plan.notes.push(format!(
                "`{}` runs as the CI runs it, after its job's steps ({}): `{}`; ralph's own run stands in where that cannot run on the base",
                detected.checks[at].command,
                detected.prepared.steps_of(&check).join(", "),
                check.name
            ));
            let ci_name = check.name.clone();
            let own = std::mem::replace(&mut plan.checks[at], check);
            let why = format!(
                "ralph's own run of `{}`, for where the CI's run cannot run here (a step of its job fails on this machine)",
                own.command
            );
            plan.checks.push(own.standing_in(vec![ci_name], &why));
            added += 1;
            continue;
        }
        if let Some(at) = same_as {
            let note = format!(
                "`{}` runs what `{}` runs already (`{}`): run once",
                check.name, detected.checks[at].name, detected.checks[at].command
            );
            if !plan.notes.contains(&note) {
                plan.notes.push(note);
            }
            continue;
        }
        // A step that installs and runs checks the plan runs already (`yarn && yarn test &&
        // yarn lint`) adds nothing but a second run of them.
        if let Some((runs, false)) = script.map(|s| workflows::checks_in(s)) {
            let known: Vec<String> = detected.checks.iter().map(|c| normal(&c.command)).collect();
            if !runs.is_empty() && runs.iter().all(|r| known.contains(r)) {
                plan.notes.push(format!(
                    "{}: its checks are run already (`{}`), not again",
                    check.name,
                    script.map(|s| s.trim()).unwrap_or_default()
                ));
                continue;
            }
        }
        plan.checks.push(check);
        added += 1;
    }
    if stands_in {
        stand_in_for_ci(plan, own);
    }
    if added > 0 {
        plan.source = if plan.source == "none" {
            "CI".into()
        } else {
            format!("{} and CI", plan.source)
        };
    }
    plan.notes.extend(ci.notes);
}

/// A build system's suite that the CI runs its own way (its build folder, its options, its
/// compilers) judges the change the CI's way; ralph's own stands in where the CI's cannot judge
/// (every CI test check fails on the base naming no test, or cannot run here). Whether it does,
/// with the note that says so.
fn stand_in(plan: &CheckPlan, ci: &mut workflows::Ci) -> bool {
    let ci_tests = ci.checks.iter().any(|c| c.kind == CheckKind::Test);
    let from_build_system =
        crate::checks::tools::named(&plan.source).is_some_and(|t| t.build_system().is_some());
    if !ci_tests || !from_build_system {
        return false;
    }
    ci.notes.push(format!(
        "the {} tests run as the CI runs them (its own steps); `{}` stands in where those cannot judge the change",
        plan.source,
        plan.checks
            .iter()
            .map(|c| c.command.as_str())
            .collect::<Vec<_>>()
            .join("`, `")
    ));
    true
}

/// Makes the plan's own checks (a build system's suite) stand in for the CI's test checks of
/// the plan, once they are joined.
fn stand_in_for_ci(plan: &mut CheckPlan, own: usize) {
    let ci_tests: Vec<String> = plan
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Test && c.job.is_some())
        .map(|c| c.name.clone())
        .collect();
    let why = format!(
        "ralph's own {} suite, for where none of the CI's test checks can judge (each fails on the base naming no test, or cannot run here)",
        plan.source
    );
    for check in &mut plan.checks[..own] {
        let stand_in = check
            .fallback
            .get_or_insert_with(|| crate::checks::spec::Fallback {
                for_checks: Vec::new(),
                why: why.clone(),
            });
        stand_in.for_checks.extend(ci_tests.iter().cloned());
    }
}

/// The checks detected before the CI's are joined, and which of them a CI run took over.
struct Detected {
    checks: Vec<CheckSpec>,
    taken: Vec<bool>,
    /// The check coverage runs in place of: it stays ralph's (a job's checks run in a tree of
    /// their own).
    covered: Option<usize>,
    prepared: Prepared,
}

impl Detected {
    fn new(plan: &CheckPlan) -> Detected {
        Detected {
            checks: plan.checks.clone(),
            taken: vec![false; plan.checks.len()],
            covered: plan
                .coverage
                .as_ref()
                .filter(|c| c.test_command.is_some())
                .and_then(|_| plan.checks.iter().position(|c| c.kind == CheckKind::Test)),
            prepared: Prepared::default(),
        }
    }

    /// The detected check whose place the CI's `check` takes — `same_as`, or one it runs with
    /// words for the runner added (`npm test -- --runInBand`) —, when steps of its job that
    /// prepare ran before it and no earlier instance took that place.
    fn taken_by(
        &mut self,
        check: &CheckSpec,
        same_as: Option<usize>,
        p: &Project,
    ) -> Option<usize> {
        let after_preparation = self.prepared.before(check);
        let at = same_as
            .or_else(|| {
                self.checks
                    .iter()
                    .position(|c| runs_with_more_words(c, &check.command, p))
            })
            .filter(|at| after_preparation && !self.taken[*at] && self.covered != Some(*at))?;
        self.taken[at] = true;
        Some(at)
    }
}

/// Whether `command` is `check`'s command with flags added that reach the runner it runs
/// (`--runInBand`, `--forceExit`): flags alone, as a word of its own (a path, a `-k`
/// expression) may run fewer tests than the detected check does.
fn runs_with_more_words(check: &CheckSpec, command: &str, p: &Project) -> bool {
    let Some(rest) = command.strip_prefix(check.command.trim_end()) else {
        return false;
    };
    let Ok(words) = shell_words::split(rest) else {
        return false;
    };
    rest.starts_with(' ')
        && !words.is_empty()
        && words.iter().all(|w| w.starts_with('-'))
        && tools::recognise(&check.command, Some(p)).tail.is_some()
}

/// The steps each CI job instance ran before its checks so far that prepare the tree beyond
/// installing (builds, bootstraps, configures): after them, the CI's run of a check is the one
/// that can judge.
#[derive(Default)]
struct Prepared(BTreeMap<String, Vec<String>>);

impl Prepared {
    /// Whether steps of its job that prepare ran before `check` (recorded as it passes).
    fn before(&mut self, check: &CheckSpec) -> bool {
        let Some(job) = &check.job else {
            return false;
        };
        let steps = self.0.entry(job.instance.clone()).or_default();
        steps.extend(
            job.before
                .iter()
                .filter(|s| !s.installs)
                .map(|s| s.label.clone()),
        );
        !steps.is_empty()
    }

    /// The preparing steps of `check`'s job instance so far.
    fn steps_of(&self, check: &CheckSpec) -> Vec<String> {
        check
            .job
            .as_ref()
            .and_then(|j| self.0.get(&j.instance))
            .cloned()
            .unwrap_or_default()
    }
}
