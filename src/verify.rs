//! Verification of an implementation (docs/specification.md §6 step 7): the checks ralph runs
//! itself, coverage before and after, the diff against the base and the protected-path rule —
//! gathered into one report (rendered by `render::verification`). The diff comes from the
//! [`Workspace`].

use crate::checks::baseline::Baseline;
use crate::checks::new_tests::{self, NewTest, Outcome};
use crate::checks::{CheckKind, CheckPlan, CheckResult, CheckStatus};
use crate::workspace::{
    protected_findings, DiffStats, Finding, Workspace, WorkspaceError, Worktree,
};
use serde::Serialize;

use std::time::Duration;

mod moved;
mod once;
pub mod reuse;
mod settings;

pub use once::Reuse;

/// What earlier attempts leave the checks of this one: the checks that failed last time (run
/// first), and the trees the competition judged ([`reuse`]).
#[derive(Default)]
pub struct Earlier<'a> {
    pub first: &'a [String],
    pub reuse: Option<Reuse<'a>>,
}

/// Coverage measured before and after the change, and why either was not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Coverage {
    pub before: Option<f64>,
    pub after: Option<f64>,
    /// Why the coverage of the base was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_missing: Option<String>,
    /// Why the coverage of the change was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_missing: Option<String>,
}

impl Coverage {
    /// `after − before`, when both were measured.
    pub fn delta(&self) -> Option<f64> {
        Some(self.after? - self.before?)
    }

    /// Coverage fell (by more than rounding noise).
    pub fn dropped(&self) -> bool {
        self.delta().is_some_and(|d| d < -0.005)
    }
}

/// Everything verification found.
#[derive(Debug, Clone, Serialize)]
pub struct VerificationReport {
    pub checks: Vec<CheckResult>,
    pub coverage: Coverage,
    pub diff: DiffStats,
    pub protected: Vec<Finding>,
    /// A test check had to run and pass (`[checks] require_test`).
    pub require_test: bool,
    /// The environment's setup failed (`[checks] setup`): what it said.
    pub setup: Vec<String>,
    /// The tests the change adds or edits, and whether they ran and passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_tests: Vec<NewTest>,
    /// Changes to a check's settings that the checks also pass under the base's settings:
    /// kept, and named for the maintainer (a refused one is among `protected`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_changes: Vec<Finding>,
    /// Test files deleted or tests removed whose tests run elsewhere and pass: moved, not lost;
    /// named for the maintainer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved_tests: Vec<Finding>,
    /// The checks' verdicts taken from an earlier attempt on the same tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken: Option<Taken>,
}

/// The checks' verdicts an attempt took from an earlier one on the same tree ([`reuse`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Taken {
    /// What was taken and what ran again, in words.
    pub note: String,
    /// No check ran: every verdict was taken, or a taken one failed the change.
    pub nothing_ran: bool,
}

impl VerificationReport {
    /// The report of a verification that never ran (the implementer could not start).
    pub fn none() -> VerificationReport {
        VerificationReport {
            checks: Vec::new(),
            coverage: Coverage::default(),
            diff: DiffStats::default(),
            protected: Vec::new(),
            require_test: true,
            setup: Vec::new(),
            new_tests: Vec::new(),
            settings_changes: Vec::new(),
            moved_tests: Vec::new(),
            taken: None,
        }
    }

    /// Nothing is taken on trust: at least one check ran, every check that ran passed, a test
    /// was among them (when required), the change is not empty, coverage did not drop, and no
    /// protected path was touched.
    pub fn passed(&self) -> bool {
        self.failure_reasons().is_empty()
    }

    /// Checks that ran (an unavailable one did not, nor one skipped after an early failure).
    pub fn ran(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks
            .iter()
            .filter(|c| !matches!(c.status, CheckStatus::Unavailable | CheckStatus::Skipped))
    }

    /// Whether the checks stopped at a failure of the change, leaving the rest not run.
    pub fn stopped_early(&self) -> bool {
        self.checks.iter().any(|c| c.status == CheckStatus::Skipped)
    }

    /// Checks that failed or timed out, and count: an advisory one never does.
    pub fn failing_checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(|c| {
            matches!(c.status, CheckStatus::Failed | CheckStatus::TimedOut) && c.advisory.is_none()
        })
    }

    /// `(passed, ran)` of one kind of check, unavailable ones not counted.
    pub fn tally(&self, kind: CheckKind) -> (usize, usize) {
        let ran: Vec<&CheckResult> = self
            .checks
            .iter()
            .filter(|c| {
                c.kind == kind
                    && !matches!(c.status, CheckStatus::Unavailable | CheckStatus::Skipped)
            })
            .collect();
        (ran.iter().filter(|c| c.passed()).count(), ran.len())
    }

    /// Why verification failed, one reason per line; empty when it passed.
    pub fn failure_reasons(&self) -> Vec<String> {
        self.reasons().into_iter().map(|r| r.text).collect()
    }

    /// Why verification failed, each reason with whose doing it is.
    pub fn reasons(&self) -> Vec<Reason> {
        let change = |text: String| Reason {
            text,
            environment: false,
        };
        let environment = |text: String| Reason {
            text,
            environment: true,
        };
        let mut out: Vec<Reason> = self.setup.iter().cloned().map(environment).collect();
        // A check that could not run after the change for the machine's sake: unverified, and
        // nobody's doing.
        out.extend(self.checks.iter().filter_map(|c| {
            let why = c.trace.machine.as_ref()?;
            Some(environment(format!(
                "check `{}` could not run after the change: {why}",
                c.name
            )))
        }));
        out.extend(
            self.failing_checks()
                .map(|c| change(format!("check `{}` {}", c.name, c.status.word()))),
        );
        if self.ran().next().is_none() {
            out.push(environment(if self.checks.is_empty() {
                "no check ran: none is configured or detected".to_owned()
            } else {
                "no check ran: every check was unavailable (its program is not installed)"
                    .to_owned()
            }));
        } else if self.require_test && self.tally(CheckKind::Test).1 == 0 && !self.stopped_early() {
            out.push(environment(
                "no test ran: a test check must run and pass ([checks] require_test)".to_owned(),
            ));
        }
        if self.diff.files.is_empty() {
            out.push(change("the implementation changed nothing".to_owned()));
        }
        if self.coverage.dropped() {
            out.push(change(format!(
                "coverage dropped from {:.2}% to {:.2}%",
                self.coverage.before.unwrap_or_default(),
                self.coverage.after.unwrap_or_default()
            )));
        }
        out.extend(
            self.protected
                .iter()
                .map(|f| change(format!("{}: {}", f.path, f.reason))),
        );
        out.extend(self.new_test_reasons().into_iter().map(change));
        out
    }

    /// Why the change's own tests fail it: never run (those of one file for one reason, one
    /// reason — but not after an early stop, when a test may simply not have had its turn),
    /// failing, or not told apart in the reports.
    fn new_test_reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut never: Vec<(&str, &str, Vec<&str>)> = Vec::new();
        for t in self
            .new_tests
            .iter()
            .filter(|t| t.outcome == Outcome::NotRun && !self.stopped_early())
        {
            let hint = t.hint.as_deref().unwrap_or("name a check that runs it");
            match never
                .iter_mut()
                .find(|(f, h, _)| *f == t.file && *h == hint)
            {
                Some((.., names)) => names.push(&t.name),
                None => never.push((&t.file, hint, vec![&t.name])),
            }
        }
        for (file, hint, names) in never {
            let (noun, list) = match names.as_slice() {
                [one] => ("test", format!("`{one}`")),
                many => ("tests", format!("`{}`", many.join("`, `"))),
            };
            out.push(format!(
                "the change's {noun} {list} ({file}) never ran under any check: {hint}"
            ));
        }
        for t in &self.new_tests {
            match t.outcome {
                Outcome::Failed => out.push(format!(
                    "the change's test `{}` ({}) fails under `{}`{}",
                    t.name,
                    t.file,
                    t.check.as_deref().unwrap_or("a check"),
                    t.hint
                        .as_deref()
                        .map(|h| format!(": {h}"))
                        .unwrap_or_default()
                )),
                Outcome::Unidentified => out.push(format!(
                    "the change's test `{}` ({}) cannot be told apart in the checks' reports: {}",
                    t.name,
                    t.file,
                    t.hint
                        .as_deref()
                        .unwrap_or("ralph cannot tell which reported test it is")
                )),
                Outcome::NotRun | Outcome::Passed | Outcome::Unknown | Outcome::Skipped => {}
            }
        }
        out
    }

    /// When verification failed and no reason is the change's doing — a setup that failed, no
    /// check or no test that could run —, what is wrong with the environment.
    pub fn environment_failure(&self) -> Option<String> {
        let reasons = self.reasons();
        (!reasons.is_empty() && reasons.iter().all(|r| r.environment)).then(|| {
            reasons
                .into_iter()
                .map(|r| r.text)
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// The checks that fail on the base as well, and no worse.
    pub fn failing_on_base(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks
            .iter()
            .filter(|c| c.status == CheckStatus::FailingOnBase)
    }
}

/// One reason verification failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub text: String,
    /// Not the change's doing: the environment's (setup, missing tools).
    pub environment: bool,
}

/// Verifies the worktree: the diff and the protected-path rule (taken before any check runs:
/// the change is the implementer's, not what the checks leave), the checks (quality at once,
/// then tests), each failing one judged against the `baseline` (the commit the attempt started
/// from) — failing there too and no worse, it is *failing on base* —, coverage after (before is
/// the baseline's). The checks named in `earlier.first` (those that failed last time) run
/// first, and against a baseline the checks stop at the first that fails for the change. With
/// `earlier.reuse`, the verdicts of a check on the same tree are taken where they may be
/// ([`reuse`]), and what runs is recorded there.
pub async fn verify(
    workspace: &dyn Workspace,
    wt: &Worktree,
    plan: &CheckPlan,
    baseline: Option<&Baseline>,
    timeout: Duration,
    watch: &dyn crate::checks::run::Observer,
    earlier: Earlier<'_>,
) -> Result<VerificationReport, WorkspaceError> {
    let Earlier { first, mut reuse } = earlier;
    // The change is what the implementer left, before the checks write anything (an unpacked
    // sdist, a report): taken first.
    let diff = workspace.diff(wt).await?;
    let protected = protected_findings(&diff);
    rebuild_crates_of_new_files(&wt.path, &diff);
    // The change's test files, run first, alone.
    let changed_tests: Vec<String> = diff
        .files
        .iter()
        .filter(|f| f.status != "deleted" && new_tests::lang(&f.path).is_some())
        .map(|f| f.path.clone())
        .collect();
    let schedule = crate::checks::suite::Schedule {
        first,
        stop_against: baseline,
        changed_tests: &changed_tests,
    };
    let setting = once::Setting {
        plan,
        workdir: &wt.path,
        timeout,
        watch,
        schedule,
    };
    let ran = once::run_or_take(&setting, reuse.as_mut()).await;
    let mut checks = ran.checks;
    judge_all(&mut checks, baseline);
    let mut new_tests = new_tests(workspace, wt, &diff, &checks).await?;
    // A new test no check named is run alone by its language's runner: run there, it counts.
    crate::checks::unnamed::run_alone(
        &mut new_tests,
        &wt.path,
        timeout,
        &plan.env,
        &WorktreeFiles(&wt.path),
    )
    .await;
    let (settings, mut protected): (Vec<Finding>, Vec<Finding>) =
        protected.into_iter().partition(|f| f.settings);
    // A test that moved still runs and passes: its old file's deletion is no finding.
    let moved_tests = moved::moves(workspace, wt, &mut protected, baseline, &checks).await?;
    let mut report = VerificationReport {
        checks,
        coverage: Coverage {
            before: baseline.and_then(|b| b.coverage),
            after: ran.coverage.after,
            before_missing: baseline.and_then(|b| b.coverage_missing.clone()),
            after_missing: ran.coverage.missing,
        },
        diff,
        protected,
        require_test: plan.require_test,
        setup: Vec::new(),
        new_tests,
        settings_changes: Vec::new(),
        moved_tests,
        taken: ran.taken,
    };
    // A change to the checks' settings is tried under the base's settings, by the checks that
    // ran for it.
    let ran: Vec<String> = report.ran().map(|c| c.name.clone()).collect();
    let under = settings::Under {
        workspace,
        wt,
        plan,
        baseline,
        timeout,
        ran: &ran,
    };
    let fails_anyway = !report.passed();
    let judged = settings::judge(&under, settings, fails_anyway).await?;
    report.protected.extend(judged.refused);
    report.settings_changes = judged.kept;
    Ok(report)
}

/// Each result judged against the base (when there is one), an advisory failure saying so.
fn judge_all(checks: &mut [CheckResult], baseline: Option<&Baseline>) {
    if let Some(b) = baseline {
        checks.iter_mut().for_each(|c| b.judge(c));
    }
    for c in checks.iter_mut() {
        if let (Some(why), CheckStatus::Failed | CheckStatus::TimedOut) = (&c.advisory, c.status) {
            c.hint = Some(format!(
                "advisory, never a reason to reject: {why}{}",
                c.hint
                    .as_deref()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default()
            ));
        }
    }
}

/// The tests the change adds or edits (the file before and after, function by function), and
/// what the checks' runners said of each.
async fn new_tests(
    workspace: &dyn Workspace,
    wt: &Worktree,
    diff: &DiffStats,
    checks: &[CheckResult],
) -> Result<Vec<NewTest>, WorkspaceError> {
    let mut found = Vec::new();
    for f in diff.files.iter().filter(|f| f.status != "deleted") {
        if new_tests::lang(&f.path).is_none() {
            continue;
        }
        // The file as it is, never through a link (a test file that is one is not read).
        let Some(now) = crate::untrusted_dir::project_text(&wt.path, &f.path) else {
            continue;
        };
        let base = workspace.base_text(wt, &f.path).await?;
        found.extend(
            new_tests::changed(&f.path, base.as_deref(), &now)
                .into_iter()
                .map(|t| (f.path.clone(), t)),
        );
    }
    Ok(new_tests::locate(&found, checks, &WorktreeFiles(&wt.path)))
}

/// A Rust file the change adds makes the crates that compile it build again: cargo watches only
/// the files a crate read last time, so a test file a macro finds (`automod::dir!`) would
/// otherwise never be compiled — the last build stands, and the new test never runs.
fn rebuild_crates_of_new_files(root: &std::path::Path, diff: &DiffStats) {
    let added = diff
        .files
        .iter()
        .filter(|f| matches!(f.status, "added" | "renamed") && f.path.ends_with(".rs"));
    let roots: std::collections::BTreeSet<String> = added
        .flat_map(|f| crate::checks::rust_modules::crate_roots(&WorktreeFiles(root), &f.path))
        .collect();
    if roots.is_empty() {
        return;
    }
    // Not fatal: at worst the last build stands, as it would have.
    let dir = match crate::untrusted_dir::UntrustedDir::open(root) {
        Ok(dir) => dir,
        Err(e) => {
            return tracing::debug!("cannot open {} to touch crate roots: {e}", root.display())
        }
    };
    for r in roots {
        if let Err(e) = dir.touch(std::path::Path::new(&r)) {
            tracing::debug!("cannot touch the crate root {r}: {e}");
        }
    }
}

/// The worktree's files as the Rust module search reads them: never through a link.
struct WorktreeFiles<'a>(&'a std::path::Path);

impl crate::checks::rust_modules::Tree for WorktreeFiles<'_> {
    fn text(&self, rel: &str) -> Option<String> {
        // A Rust source larger than this is not read for its `mod` declarations.
        crate::untrusted_dir::text_in(self.0, rel, 4 << 20)
    }
    fn list(&self, rel: &str) -> Vec<(String, bool)> {
        use crate::untrusted_dir::Kind;
        crate::untrusted_dir::list_in(self.0, rel)
            .into_iter()
            .filter_map(|(name, kind)| match kind {
                Kind::Dir => Some((name, true)),
                Kind::File => Some((name, false)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, kind: CheckKind, status: CheckStatus) -> CheckResult {
        CheckResult {
            name: name.into(),
            kind,
            command: format!("run {name}"),
            status,
            exit_code: Some(if status == CheckStatus::Passed { 0 } else { 1 }),
            duration_ms: 1500,
            output_tail: "error[E0308]: mismatched types\n```\nend".into(),
            hint: None,
            measure: Default::default(),
            configured: false,
            advisory: None,
            uses: Default::default(),
            trace: Default::default(),
        }
    }

    fn report(
        checks: Vec<CheckResult>,
        coverage: Coverage,
        protected: Vec<Finding>,
    ) -> VerificationReport {
        VerificationReport {
            checks,
            coverage,
            diff: DiffStats {
                files: vec![crate::workspace::FileChange {
                    path: "src/lib.rs".into(),
                    status: "modified",
                    added: 10,
                    removed: 2,
                    added_lines: vec![],
                    removed_lines: vec![],
                }],
                lines_added: 10,
                lines_removed: 2,
            },
            protected,
            require_test: true,
            setup: Vec::new(),
            new_tests: Vec::new(),
            settings_changes: Vec::new(),
            moved_tests: Vec::new(),
            taken: None,
        }
    }

    #[test]
    fn tests_of_one_file_that_never_ran_for_one_reason_are_one_reason() {
        let never = |name: &str, hint: &str| NewTest {
            file: "tests/borsh.rs".into(),
            name: name.into(),
            outcome: Outcome::NotRun,
            check: None,
            hint: Some(hint.into()),
        };
        let passing = check("test", CheckKind::Test, CheckStatus::Passed);
        let mut r = report(vec![passing], Coverage::default(), vec![]);
        r.new_tests = vec![
            never("a::test_empty", "run it with borsh"),
            never("b::test_empty", "run it with borsh"),
            never("c::other", "run it otherwise"),
        ];
        assert_eq!(
            r.failure_reasons(),
            [
                "the change's tests `a::test_empty`, `b::test_empty` (tests/borsh.rs) never ran under any check: run it with borsh",
                "the change's test `c::other` (tests/borsh.rs) never ran under any check: run it otherwise"
            ]
        );
    }

    #[test]
    fn an_advisory_check_that_fails_is_shown_not_held_against_the_change() {
        let mut lint = check("lint", CheckKind::Quality, CheckStatus::Failed);
        lint.advisory = Some("the project does not run clippy itself".into());
        let test = check("test", CheckKind::Test, CheckStatus::Passed);
        let r = report(vec![lint, test], Coverage::default(), vec![]);
        assert!(r.passed(), "{:?}", r.failure_reasons());
        assert_eq!(r.failing_checks().count(), 0);
        let table = crate::render::verification::render_markdown(&r);
        assert!(
            table.contains("❌ failed (advisory: not held against the change)"),
            "{table}"
        );
    }

    #[test]
    fn nothing_passes_on_nothing() {
        let none = Coverage::default;
        let quality = || check("format", CheckKind::Quality, CheckStatus::Passed);
        let r = report(vec![], none(), vec![]);
        assert_eq!(
            r.failure_reasons(),
            ["no check ran: none is configured or detected"]
        );
        let r = report(
            vec![check("test", CheckKind::Test, CheckStatus::Unavailable)],
            none(),
            vec![],
        );
        assert_eq!(
            r.failure_reasons(),
            ["no check ran: every check was unavailable (its program is not installed)"]
        );
        let mut r = report(vec![quality()], none(), vec![]);
        assert_eq!(
            r.failure_reasons(),
            ["no test ran: a test check must run and pass ([checks] require_test)"]
        );
        r.require_test = false;
        assert!(
            r.passed(),
            "quality checks alone pass when no test is required"
        );
        let mut r = report(
            vec![
                quality(),
                check("test", CheckKind::Test, CheckStatus::Passed),
            ],
            none(),
            vec![],
        );
        assert!(r.passed());
        r.diff = DiffStats::default();
        assert_eq!(r.failure_reasons(), ["the implementation changed nothing"]);
    }

    #[test]
    fn pass_and_fail_rules() {
        let ok = report(
            vec![
                check("format", CheckKind::Quality, CheckStatus::Passed),
                check("mypy", CheckKind::Quality, CheckStatus::Unavailable),
                check("test", CheckKind::Test, CheckStatus::Passed),
            ],
            Coverage {
                before: Some(80.0),
                after: Some(80.0),
                ..Coverage::default()
            },
            vec![],
        );
        assert!(ok.passed());
        assert_eq!(
            ok.tally(CheckKind::Quality),
            (1, 1),
            "unavailable is not counted"
        );
        assert!(ok.failure_reasons().is_empty());

        let failing = report(
            vec![check("test", CheckKind::Test, CheckStatus::TimedOut)],
            Coverage {
                before: Some(80.0),
                after: Some(79.0),
                ..Coverage::default()
            },
            vec![Finding {
                path: "tests/a.rs".into(),
                reason: "deletes a test file".into(),
                settings: false,
            }],
        );
        assert!(!failing.passed());
        assert_eq!(
            failing.failure_reasons(),
            [
                "check `test` timed out",
                "coverage dropped from 80.00% to 79.00%",
                "tests/a.rs: deletes a test file",
            ]
        );
        // Unknown coverage never fails; a rounding wobble neither.
        assert!(!Coverage {
            before: None,
            after: Some(1.0),
            ..Coverage::default()
        }
        .dropped());
        assert!(!Coverage {
            before: Some(80.0),
            after: Some(79.999),
            ..Coverage::default()
        }
        .dropped());
    }
}
