//! The tests of `reuse`: which verdicts a tree already judged gives, and what is said of it.

use super::*;
use crate::checks::baseline::BaseCheck;
use crate::checks::coverage::CoverageSpec;
use crate::checks::outcomes::TestOutcomes;
use crate::checks::JobPlace;

const TREE: &str = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d";

fn name(round: u32, attempt: u32) -> Name {
    Name {
        label: "Attempt".into(),
        round,
        attempt,
    }
}

fn result(spec: &CheckSpec, status: CheckStatus) -> CheckResult {
    CheckResult {
        name: spec.name.clone(),
        kind: spec.kind,
        command: spec.command.clone(),
        status,
        exit_code: Some(i32::from(status != CheckStatus::Passed)),
        duration_ms: 1200,
        output_tail: format!("{} said {}", spec.name, status.word()),
        hint: None,
        measure: Measure::default(),
        configured: spec.configured,
        advisory: spec.advisory.clone(),
        uses: spec.uses.clone(),
        trace: Default::default(),
    }
}

/// The base `commit` where every check of `plan` passes.
fn green(commit: &str, plan: &CheckPlan) -> Baseline {
    let results: Vec<CheckResult> = plan
        .checks
        .iter()
        .map(|s| result(s, CheckStatus::Passed))
        .collect();
    Baseline::from_results(commit, &results, None, None)
}

fn plan() -> CheckPlan {
    CheckPlan::of(vec![
        CheckSpec::new("lint", "ruff check ."),
        CheckSpec::new("test", "pytest -q"),
    ])
}

/// `judged` with `plan`'s checks ending as `statuses` on [`TREE`], settled on `base`.
fn judged_with(plan: &CheckPlan, statuses: &[CheckStatus], base: &str) -> Judged {
    let results: Vec<CheckResult> = plan
        .checks
        .iter()
        .zip(statuses)
        .map(|(s, st)| result(s, *st))
        .collect();
    let mut judged = Judged::default();
    judged.record(TREE, &name(1, 1), plan, ran(plan, &results, None), base);
    judged
}

fn ran<'a>(plan: &'a CheckPlan, results: &'a [CheckResult], coverage: Option<Measured>) -> Ran<'a> {
    Ran {
        results: plan.checks.iter().zip(results).collect(),
        coverage,
    }
}

fn kinds(taken: &Taken) -> Vec<String> {
    taken
        .slots
        .iter()
        .map(|s| match s {
            Slot::Taken(r) => format!("taken {}", r.status.word()),
            Slot::Base(_) => "base".to_owned(),
            Slot::Out => "out".to_owned(),
            Slot::Again(why) => format!("again: {}", why.why()),
        })
        .collect()
}

#[test]
fn a_tree_never_judged_or_judged_with_other_variables_gives_nothing() {
    let plan = plan();
    let base = green("base1", &plan);
    let judged = judged_with(&plan, &[CheckStatus::Passed; 2], "base1");
    assert!(judged.take("ffff", &plan, &base).is_none());
    let mut elsewhere = plan.clone();
    elsewhere.env = vec![("CARGO_TARGET_DIR".into(), "/elsewhere".into())];
    assert!(judged.take(TREE, &elsewhere, &base).is_none());
    let mut covered = plan.clone();
    covered.coverage = Some(CoverageSpec {
        test_command: Some("coverage run -m pytest -q".into()),
        command: "coverage report".into(),
        reason: String::new(),
    });
    assert!(judged.take(TREE, &covered, &base).is_none());
    assert!(Judged::default().take(TREE, &plan, &base).is_none());
}

#[test]
fn a_passing_verdict_is_taken_whole_with_its_coverage() {
    let plan = plan();
    let base = green("base1", &plan);
    let results = [
        result(&plan.checks[0], CheckStatus::Passed),
        result(&plan.checks[1], CheckStatus::Passed),
    ];
    let mut judged = Judged::default();
    let measured = Measured {
        after: None,
        missing: Some("no coverage tool is configured or detected".into()),
    };
    judged.record(
        TREE,
        &name(1, 1),
        &plan,
        ran(&plan, &results, Some(measured.clone())),
        "base1",
    );
    let taken = judged.take(TREE, &plan, &base).unwrap();
    assert!(taken.whole());
    assert_eq!(taken.coverage, Some(measured));
    assert_eq!(taken.by, name(1, 1));
    let got: Vec<&CheckResult> = taken.results().collect();
    assert_eq!(got, results.iter().collect::<Vec<_>>(), "as they ran");
}

#[test]
fn each_status_is_taken_or_run_again_for_its_reason() {
    let plan = plan();
    let cases = [
        (CheckStatus::Passed, "taken passed", "taken passed"),
        (CheckStatus::Failed, "taken failed", "taken failed"),
        (
            CheckStatus::TimedOut,
            "again: it timed out",
            "again: it timed out",
        ),
        (
            CheckStatus::Unavailable,
            "again: it did not run",
            "again: it did not run",
        ),
        (
            CheckStatus::Skipped,
            "again: it was not judged on this tree",
            "again: it was not judged on this tree",
        ),
    ];
    for (status, lint, test) in cases {
        let judged = judged_with(&plan, &[status, status], "base1");
        let taken = judged.take(TREE, &plan, &green("base1", &plan)).unwrap();
        assert_eq!(kinds(&taken), [lint, test], "{status:?}");
        assert_eq!(taken.whole(), lint.starts_with("taken"));
        assert!(taken.coverage.is_some(), "the plan measures none");
    }
}

#[test]
fn a_failing_test_check_settled_against_another_base_runs_again_a_failing_lint_does_not() {
    let plan = plan();
    let judged = judged_with(&plan, &[CheckStatus::Failed; 2], "base1");
    let taken = judged.take(TREE, &plan, &green("base2", &plan)).unwrap();
    assert_eq!(
        kinds(&taken),
        [
            "taken failed",
            "again: its failing tests were run again against another base"
        ]
    );
    // A pass depends on no base.
    let judged = judged_with(&plan, &[CheckStatus::Passed; 2], "base1");
    let taken = judged.take(TREE, &plan, &green("base2", &plan)).unwrap();
    assert!(taken.whole());
}

#[test]
fn a_flaky_verdict_is_never_taken_whatever_it_came_to() {
    let plan = plan();
    let base = green("base1", &plan);
    for status in [CheckStatus::Passed, CheckStatus::Failed] {
        let mut flaky = result(&plan.checks[1], status);
        let mut tests = TestOutcomes::named("pytest");
        tests.record("t::a".into(), false);
        tests.flaky.insert("t::a".into());
        flaky.measure.tests = Some(tests);
        let results = [result(&plan.checks[0], CheckStatus::Passed), flaky];
        let mut judged = Judged::default();
        judged.record(
            TREE,
            &name(1, 1),
            &plan,
            ran(&plan, &results, None),
            "base1",
        );
        let taken = judged.take(TREE, &plan, &base).unwrap();
        assert_eq!(
            kinds(&taken),
            ["taken passed", "again: its verdict was flaky"]
        );
        assert!(!taken.whole());
    }
}

#[test]
fn a_check_defined_otherwise_is_not_judged_on_the_tree() {
    let plan = plan();
    let judged = judged_with(&plan, &[CheckStatus::Passed; 2], "base1");
    let mut other = plan.clone();
    other.checks[1] = CheckSpec::new("test", "pytest -q -x");
    let taken = judged.take(TREE, &other, &green("base1", &other)).unwrap();
    assert_eq!(
        kinds(&taken),
        ["taken passed", "again: it was not judged on this tree"]
    );
    let mut added = plan.clone();
    added.checks.push(CheckSpec::new("types", "mypy ."));
    let taken = judged.take(TREE, &added, &green("base1", &added)).unwrap();
    assert_eq!(
        kinds(&taken)[2],
        "again: it was not judged on this tree",
        "a new check"
    );
}

#[test]
fn a_check_that_cannot_judge_stays_the_baseline_s() {
    let plan = plan();
    let mut base = green("base1", &plan);
    // The lint fails on the base without counting a problem: it never runs.
    base.checks[0] = BaseCheck {
        status: CheckStatus::Failed,
        ..base.checks[0].clone()
    };
    let judged = judged_with(&plan, &[CheckStatus::Passed; 2], "base1");
    let taken = judged.take(TREE, &plan, &base).unwrap();
    assert_eq!(kinds(&taken), ["base", "taken passed"]);
    assert!(taken.whole());
    assert_eq!(taken.results().count(), 1, "the baseline's is not taken");
}

fn in_job(name: &str, command: &str, instance: &str) -> CheckSpec {
    let mut spec = CheckSpec::new(name, command);
    spec.job = Some(JobPlace {
        instance: instance.into(),
        job: "ci.yml#test".into(),
        before: Vec::new(),
        path: Vec::new(),
    });
    spec
}

#[test]
fn a_ci_job_runs_again_whole_when_one_of_its_checks_does() {
    let plan = CheckPlan::of(vec![
        in_job("build", "make", "ci.yml#test (3.11)"),
        in_job("test-311", "pytest", "ci.yml#test (3.11)"),
        in_job("build-312", "make", "ci.yml#test (3.12)"),
        in_job("test-312", "pytest -q", "ci.yml#test (3.12)"),
        CheckSpec::new("lint", "ruff check ."),
    ]);
    use CheckStatus::{Passed, TimedOut};
    let judged = judged_with(&plan, &[Passed, TimedOut, Passed, Passed, Passed], "b");
    let taken = judged.take(TREE, &plan, &green("b", &plan)).unwrap();
    assert_eq!(
        kinds(&taken),
        [
            "again: its CI job runs again",
            "again: it timed out",
            "taken passed",
            "taken passed",
            "taken passed"
        ]
    );
}

fn covered(test_command: Option<&str>) -> CheckPlan {
    let mut plan = CheckPlan::of(vec![
        CheckSpec::new("lint", "ruff check ."),
        in_job("ci-test", "pytest", "ci.yml#test"),
        CheckSpec::new("test", "pytest -q"),
        CheckSpec::new("doc-test", "pytest --doctest-modules"),
    ]);
    plan.coverage = Some(CoverageSpec {
        test_command: test_command.map(str::to_owned),
        command: "coverage report".into(),
        reason: String::new(),
    });
    plan
}

#[test]
fn coverage_is_taken_only_with_the_whole_verdict() {
    use CheckStatus::{Passed, TimedOut};
    // Under coverage runs the first test check outside a CI job.
    let plan = covered(Some("coverage run -m pytest -q"));
    let base = green("b", &plan);
    let judged = judged_with(&plan, &[TimedOut, Passed, Passed, Passed], "b");
    let taken = judged.take(TREE, &plan, &base).unwrap();
    assert_eq!(
        kinds(&taken),
        [
            "again: it timed out",
            "taken passed",
            "again: coverage is measured again",
            "taken passed"
        ]
    );
    assert_eq!(taken.coverage, None);
    let judged = judged_with(&plan, &[Passed; 4], "b");
    let taken = judged.take(TREE, &plan, &base).unwrap();
    assert!(taken.whole());
    assert_eq!(taken.coverage, Some(Measured::default()));
    // Tests that write their own report: every test check runs again.
    let plan = covered(None);
    let judged = judged_with(&plan, &[TimedOut, Passed, Passed, Passed], "b");
    let taken = judged.take(TREE, &plan, &green("b", &plan)).unwrap();
    assert_eq!(
        kinds(&taken),
        [
            "again: it timed out",
            "again: coverage is measured again",
            "again: coverage is measured again",
            "again: coverage is measured again"
        ]
    );
}

#[test]
fn recording_again_keeps_what_did_not_run_and_the_first_judge() {
    use CheckStatus::{Failed, Passed, Skipped};
    let plan = plan();
    let mut judged = judged_with(&plan, &[Passed, Failed], "b");
    // A later run on the tree: the lint left out, the test passing now, coverage measured.
    let later = [
        result(&plan.checks[0], Skipped),
        result(&plan.checks[1], Passed),
    ];
    let measured = Measured {
        after: Some(81.5),
        missing: None,
    };
    judged.record(
        TREE,
        &name(2, 1),
        &plan,
        ran(&plan, &later, Some(measured.clone())),
        "b",
    );
    assert_eq!(judged.trees.len(), 1);
    let taken = judged.take(TREE, &plan, &green("b", &plan)).unwrap();
    assert_eq!(kinds(&taken), ["taken passed", "taken passed"]);
    assert_eq!(taken.by, name(1, 1), "the attempt that judged it first");
    assert_eq!(taken.coverage, Some(measured.clone()));
    // Coverage not measured again stays as it was.
    judged.record(TREE, &name(2, 2), &plan, ran(&plan, &later, None), "b");
    assert_eq!(judged.trees[0].coverage, measured);
    // Another tree is another judgement.
    judged.record("beef", &name(2, 3), &plan, ran(&plan, &later, None), "b");
    assert_eq!(judged.trees.len(), 2);
    assert_eq!(judged.trees[1].by, name(2, 3));
    assert_eq!(
        judged.trees[1].checks.len(),
        1,
        "a check left out is not kept"
    );
}

#[test]
fn the_baseline_s_result_is_not_recorded() {
    let plan = plan();
    let mut base = result(&plan.checks[0], CheckStatus::FailingOnBase);
    base.duration_ms = 0;
    let results = [base, result(&plan.checks[1], CheckStatus::Passed)];
    let mut judged = Judged::default();
    judged.record(TREE, &name(1, 1), &plan, ran(&plan, &results, None), "b");
    assert_eq!(judged.trees[0].checks.len(), 1);
}

#[test]
fn a_judgement_survives_the_run_state_file() {
    let plan = plan();
    let mut judged = judged_with(&plan, &[CheckStatus::Passed, CheckStatus::Failed], "b");
    judged.trees[0].checks[1].measure = Measure::tests_by_name(&["t::a"], &["t::b"]);
    let text = serde_json::to_string(&judged).unwrap();
    let back: Judged = serde_json::from_str(&text).unwrap();
    assert_eq!(back, judged);
    let taken = back.take(TREE, &plan, &green("b", &plan)).unwrap();
    assert!(taken.whole());
}

#[test]
fn a_taken_failure_fails_for_the_change_unless_advisory_or_failing_on_base() {
    let plan = plan();
    let base = green("b", &plan);
    let failed = result(&plan.checks[1], CheckStatus::Failed);
    assert!(fails_for_change(&base, &failed));
    assert!(!fails_for_change(
        &base,
        &result(&plan.checks[1], CheckStatus::Passed)
    ));
    let mut advisory = failed.clone();
    advisory.advisory = Some("the project does not run it".into());
    assert!(!fails_for_change(&base, &advisory));
    // Failing on the base as well, and no worse.
    let mut red = base.clone();
    red.checks[1].status = CheckStatus::Failed;
    red.checks[1].measure = Measure::tests_by_name(&[], &["t::a"]);
    let mut same = failed.clone();
    same.measure = Measure::tests_by_name(&[], &["t::a"]);
    assert!(!fails_for_change(&red, &same));
}

#[test]
fn the_notes_say_what_was_taken_and_what_runs_again() {
    use CheckStatus::{Failed, Passed, TimedOut};
    let plan = plan();
    let base = green("b", &plan);
    let whole = judged_with(&plan, &[Passed, Passed], "b")
        .take(TREE, &plan, &base)
        .unwrap();
    assert_eq!(
        note(&name(1, 2), TREE, &whole, &plan, None).unwrap(),
        "the tree of attempt 2 is attempt 1's (tree 1a2b3c4): its verdict is taken, not run again"
    );
    assert_eq!(
        note(&name(2, 1), TREE, &whole, &plan, None).unwrap(),
        "the tree of attempt 1 of round 2 is attempt 1 of round 1's (tree 1a2b3c4): its verdict is taken, not run again"
    );
    let part = judged_with(&plan, &[Passed, TimedOut], "b")
        .take(TREE, &plan, &base)
        .unwrap();
    assert_eq!(
        note(&name(1, 3), TREE, &part, &plan, None).unwrap(),
        "the tree of attempt 3 is attempt 1's (tree 1a2b3c4): 1 check verdict taken, not run again; run again: `test` (it timed out)"
    );
    let failing = judged_with(&plan, &[Failed, TimedOut], "b")
        .take(TREE, &plan, &base)
        .unwrap();
    assert_eq!(
        note(&name(1, 2), TREE, &failing, &plan, Some("lint")).unwrap(),
        "the tree of attempt 2 is attempt 1's (tree 1a2b3c4): 1 check verdict taken, not run again; `lint` fails for the change there, so the others are not run"
    );
    let both = judged_with(&plan, &[Passed, Failed], "b")
        .take(TREE, &plan, &base)
        .unwrap();
    assert_eq!(
        note(&name(1, 2), TREE, &both, &plan, Some("test")).unwrap(),
        "the tree of attempt 2 is attempt 1's (tree 1a2b3c4): its verdict is taken, not run again",
        "a failure taken with the whole verdict"
    );
    let nothing = judged_with(&plan, &[TimedOut, TimedOut], "b")
        .take(TREE, &plan, &base)
        .unwrap();
    assert_eq!(note(&name(1, 2), TREE, &nothing, &plan, None), None);
    let audit = Name {
        label: "Audit attempt".into(),
        ..name(1, 1)
    };
    assert_eq!(
        note(&audit, TREE, &whole, &plan, None).unwrap(),
        "the tree of audit attempt 1 of round 1 is attempt 1 of round 1's (tree 1a2b3c4): its verdict is taken, not run again"
    );
}

#[test]
fn a_taken_result_says_whose_it_is_before_its_own_hint() {
    let plan = plan();
    let mut r = result(&plan.checks[1], CheckStatus::Passed);
    assert_eq!(
        taken_hint(&r, &name(1, 1), &name(1, 2)),
        "not run again: attempt 1's verdict on the same tree"
    );
    r.hint = Some("passes as `pytest` but fails under coverage".into());
    assert_eq!(
        taken_hint(&r, &name(1, 1), &name(2, 1)),
        "not run again: attempt 1 of round 1's verdict on the same tree; passes as `pytest` but fails under coverage"
    );
}

#[test]
fn a_stand_in_the_run_leaves_out_is_out_and_needs_no_verdict() {
    let mut stand_in = CheckSpec::new("ctest", "ctest --output-on-failure");
    stand_in.kind = CheckKind::Test;
    stand_in = stand_in.standing_in(
        vec!["test".into()],
        "the CI runs the same suite its own way",
    );
    let mut plan = plan();
    // The project's own test passes on the base: the stand-in judges nothing, and never ran.
    let base = green("b", &plan);
    plan.checks.push(stand_in);
    let results = [
        result(&plan.checks[0], CheckStatus::Passed),
        result(&plan.checks[1], CheckStatus::Passed),
    ];
    let mut judged = Judged::default();
    judged.record(
        TREE,
        &name(1, 1),
        &plan,
        Ran::of(&plan, &results, None),
        "b",
    );
    assert_eq!(judged.trees[0].checks.len(), 2);
    let taken = judged.take(TREE, &plan, &base).unwrap();
    assert_eq!(kinds(&taken), ["taken passed", "taken passed", "out"]);
    assert!(taken.whole());
    // Where it stood in on the base (no other test could judge), it runs, and was not judged
    // on this tree.
    let mut red = green("b", &plan);
    red.checks[1].status = CheckStatus::Failed;
    let taken = judged.take(TREE, &plan, &red).unwrap();
    assert_eq!(kinds(&taken)[2], "again: it was not judged on this tree");
}

#[test]
fn a_run_s_results_are_matched_to_their_checks_by_name() {
    let mut plan = plan();
    plan.checks.insert(1, CheckSpec::new("left-out", "true"));
    // The run gave no result for the check in the middle.
    let results = [
        result(&plan.checks[0], CheckStatus::Passed),
        result(&plan.checks[2], CheckStatus::Failed),
    ];
    let ran = Ran::of(&plan, &results, None);
    let pairs: Vec<(&str, CheckStatus)> = ran
        .results
        .iter()
        .map(|(spec, r)| (spec.name.as_str(), r.status))
        .collect();
    assert_eq!(
        pairs,
        [("lint", CheckStatus::Passed), ("test", CheckStatus::Failed)]
    );
}
