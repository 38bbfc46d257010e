//! The baseline: the checks as they end on the commit an attempt starts from (the base, then
//! each round's commit), so that only the change is blamed. A check failing there is judged
//! against its own numbers after the change ([`super::compare::judge`]): no worse, and it is
//! *failing on base*, not held against the change. The baseline also says when nothing could
//! be verified at all (no test check passes, a configured tool is missing) and holds the
//! coverage figure before the change. It is cached per commit under `.ralph/cache/baseline/`,
//! so later rounds and runs reuse it.

use super::compare::{judge, Judgement};
use super::outcomes::Measure;
use super::plan::CheckPlan;
use super::result::{CheckResult, CheckStatus};
use super::spec::CheckSpec;
use super::tools::CheckKind;
use crate::process::on_path;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most of a failing check's output the cache keeps.
const MAX_TAIL: usize = 4_000;

/// One check on the baseline commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseCheck {
    pub name: String,
    pub command: String,
    pub kind: CheckKind,
    pub status: CheckStatus,
    pub measure: Measure,
    /// What its output said, when it failed.
    pub output_tail: String,
    /// Its hint, when it was unavailable.
    pub hint: Option<String>,
    /// Named in `[checks]`.
    pub configured: bool,
    /// The steps of its CI job that failed here and were skipped, the check running without
    /// them: skipped after the change too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_steps: Vec<String>,
}

impl BaseCheck {
    /// A test check whose runner named its tests here, some of them passing: a change is judged
    /// by those tests even when the check as a whole fails.
    pub fn judges_by_test(&self) -> bool {
        judges_by_test(self.kind, &self.measure)
    }
}

fn judges_by_test(kind: CheckKind, measure: &Measure) -> bool {
    kind == CheckKind::Test
        && measure
            .tests
            .as_ref()
            .is_some_and(|t| t.by_name && !t.passed.is_empty())
}

/// Whether a check that ended so on a commit can judge a change from it: it passed, or — failing
/// — a test check named passing tests, or a quality check counted its problems. A check that
/// could not run, or failed saying nothing to compare by, gives way to the next candidate of its
/// role ([`CheckSpec::fallback`]).
pub fn judges(r: &CheckResult) -> bool {
    match r.status {
        CheckStatus::Passed => true,
        CheckStatus::Failed | CheckStatus::TimedOut | CheckStatus::FailingOnBase => match r.kind {
            CheckKind::Test => judges_by_test(r.kind, &r.measure),
            CheckKind::Quality => r.measure.problems.is_some(),
        },
        CheckStatus::Unavailable | CheckStatus::Skipped => false,
    }
}

/// Whether the stand-in `spec` must run on the base, given the `results` so far: none of the
/// checks it stands in for can judge.
pub fn stand_in_needed(spec: &CheckSpec, results: &[&CheckResult]) -> bool {
    spec.fallback.as_ref().is_some_and(|f| {
        !f.for_checks
            .iter()
            .any(|n| results.iter().any(|r| r.name == *n && judges(r)))
    })
}

/// The checks on one commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub commit: String,
    pub checks: Vec<BaseCheck>,
    /// The coverage total on the commit, when measured.
    pub coverage: Option<f64>,
    /// Why it was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_missing: Option<String>,
    /// Why ralph's own build of the native code failed on this commit, this run: the checks ran
    /// without it (the project's own steps — its CI's — build it their way), and a change is
    /// not built by it either.
    #[serde(skip)]
    pub native_unbuilt: Option<String>,
    /// Why the detected setup failed on this commit, this run: the checks ran without it, and
    /// it is not run again after a change (the same environment on both sides).
    #[serde(skip)]
    pub setup_failed: Option<String>,
}

/// Why nothing could be verified on the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverifiable {
    pub message: String,
    /// The failing or missing checks with what they said.
    pub details: Vec<String>,
}

impl Baseline {
    /// The baseline of `commit` from the checks' results there.
    pub fn from_results(
        commit: &str,
        results: &[CheckResult],
        coverage: Option<f64>,
        coverage_missing: Option<String>,
    ) -> Baseline {
        Baseline {
            coverage_missing,
            native_unbuilt: None,
            setup_failed: None,
            commit: commit.to_owned(),
            checks: results
                .iter()
                .map(|r| BaseCheck {
                    name: r.name.clone(),
                    command: r.command.clone(),
                    kind: r.kind,
                    // A check failing on the base is, for the next commit, simply failing.
                    status: match r.status {
                        CheckStatus::FailingOnBase => CheckStatus::Failed,
                        s => s,
                    },
                    measure: r.measure.clone(),
                    output_tail: tail(&r.output_tail),
                    hint: r.hint.clone(),
                    configured: r.configured,
                    skipped_steps: r.trace.skipped_steps.clone(),
                })
                .collect(),
            coverage,
        }
    }

    /// Where the baseline of `commit` is cached.
    pub fn path(cache_dir: &Path, commit: &str) -> PathBuf {
        cache_dir.join("baseline").join(format!("{commit}.json"))
    }

    /// The cached baseline of `commit` for `plan`, when it still applies: the same checks with
    /// the same commands (a stand-in that was not needed has none), and no check that was
    /// unavailable whose program is there now.
    pub fn load(cache_dir: &Path, commit: &str, plan: &CheckPlan) -> Option<Baseline> {
        let path = Baseline::path(cache_dir, commit);
        let text = crate::fsutil::read_regular_text(&path, 16 << 20).ok()?;
        let cached: Baseline = match serde_json::from_str(&text) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("ignoring the unreadable baseline {}: {e}", path.display());
                return None;
            }
        };
        let spec_of = |c: &BaseCheck| {
            plan.checks
                .iter()
                .find(|s| s.name == c.name && s.command == c.command)
        };
        let same = cached.checks.iter().all(|c| spec_of(c).is_some())
            && plan
                .checks
                .iter()
                .all(|s| s.fallback.is_some() || cached.checks.iter().any(|c| c.name == s.name));
        let installed_since = cached.checks.iter().any(|c| {
            c.status == CheckStatus::Unavailable
                && spec_of(c).is_some_and(|s| s.program.as_deref().is_some_and(on_path))
        });
        (same && !installed_since && cached.commit == commit).then_some(cached)
    }

    /// Writes the cache (a `.gitignore` of `*` keeps the cache out of version control).
    pub fn save(&self, cache_dir: &Path) -> std::io::Result<()> {
        let path = Baseline::path(cache_dir, &self.commit);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let ignore = cache_dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "# ralph's caches\n*\n")?;
        }
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        crate::fsutil::write_atomic(&path, &json)
    }

    /// Keeps the tests `results` found flaky (failed, then passed alone), so that they judge
    /// no later attempt from this commit; whether any was new.
    pub fn note_flaky(&mut self, results: &[CheckResult]) -> bool {
        let mut new = false;
        for r in results {
            let Some(found) = r.measure.tests.as_ref().map(|t| &t.flaky) else {
                continue;
            };
            let here = self
                .checks
                .iter_mut()
                .find(|c| c.name == r.name)
                .and_then(|c| c.measure.tests.as_mut());
            if let Some(here) = here {
                for id in found {
                    new |= here.flaky.insert(id.clone());
                }
            }
        }
        new
    }

    /// The steps of the check `name`'s CI job skipped here (they failed for this machine).
    pub fn skipped_steps(&self, name: &str) -> &[String] {
        self.check(name).map_or(&[], |c| c.skipped_steps.as_slice())
    }

    /// The tests the check `name` named as passing here, when its runner names them.
    pub fn passed_tests(&self, name: &str) -> Option<&std::collections::BTreeSet<String>> {
        let t = self.check(name)?.measure.tests.as_ref()?;
        t.by_name.then_some(&t.passed)
    }

    /// Whether the check `name` passed here.
    pub fn passed(&self, name: &str) -> bool {
        self.check(name)
            .is_some_and(|c| c.status == CheckStatus::Passed)
    }

    fn check(&self, name: &str) -> Option<&BaseCheck> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The result `spec` gets without running, when it cannot judge a change: it failed (or
    /// timed out) on the base without naming a test or counting a problem — it fails
    /// whatever the change (a build broken by today's compiler, a missing service), and
    /// running it again would only cost its time; or it is a test check that named no passing
    /// test there while another test check judges. `None`: it runs.
    pub fn cannot_judge(&self, spec: &CheckSpec) -> Option<CheckResult> {
        let base = self
            .check(&spec.name)
            .filter(|b| b.command == spec.command)?;
        if base.status == CheckStatus::Unavailable {
            // It could not run on the base: nothing to hold a change to.
            return Some(CheckResult {
                status: CheckStatus::Unavailable,
                output_tail: base.output_tail.clone(),
                hint: Some(format!(
                    "not run: it could not run on the base ({}), so it cannot judge the change: {}",
                    short(&self.commit),
                    base.hint.as_deref().unwrap_or("its program is missing")
                )),
                ..super::run::skipped(spec)
            });
        }
        let failed = matches!(base.status, CheckStatus::Failed | CheckStatus::TimedOut);
        let mute = failed && base.measure.tests.is_none() && base.measure.problems.is_none();
        // A test check that passed no test on the base (its suite could not import the
        // project's code here, say) gives way to another that judges.
        let judged_by = (failed && base.kind == CheckKind::Test && !base.judges_by_test())
            .then(|| self.judging_test(&spec.name))
            .flatten();
        let why = match (mute, judged_by) {
            (true, _) => "without naming a test or counting a problem, so it cannot judge the change".to_owned(),
            (false, Some(other)) => format!(
                "naming no passing test, so it cannot judge the change; `{other}`, which judges there, does"
            ),
            (false, None) => return None,
        };
        Some(CheckResult {
            name: spec.name.clone(),
            kind: spec.kind,
            command: spec.command.clone(),
            status: CheckStatus::FailingOnBase,
            exit_code: None,
            duration_ms: 0,
            output_tail: base.output_tail.clone(),
            hint: Some(format!(
                "not run again: it {} on the base ({}) {why}",
                if base.status == CheckStatus::TimedOut {
                    "timed out"
                } else {
                    "failed"
                },
                short(&self.commit)
            )),
            measure: base.measure.clone(),
            configured: spec.configured,
            advisory: spec.advisory.clone(),
            uses: spec.uses.clone(),
            trace: Default::default(),
        })
    }

    /// A test check other than `name` that judges from this commit: it passed here, or named
    /// passing tests.
    fn judging_test(&self, name: &str) -> Option<&str> {
        self.checks
            .iter()
            .find(|c| {
                c.name != name
                    && c.kind == CheckKind::Test
                    && (c.status == CheckStatus::Passed || c.judges_by_test())
            })
            .map(|c| c.name.as_str())
    }

    /// Whether the stand-in `spec` ([`CheckSpec::fallback`]) stood in on this commit — none of
    /// the checks it gives way to could judge here, so it ran —, and so judges a change too.
    pub fn stood_in(&self, spec: &CheckSpec) -> bool {
        spec.fallback.is_some()
            && self
                .check(&spec.name)
                .is_some_and(|b| b.command == spec.command)
    }

    /// Why a test check run with warnings allowed ([`CheckSpec::relaxed`]) fails for its
    /// warnings: the change brings warnings of a rule the base keeps (the CI made them errors).
    fn new_warnings(&self, result: &CheckResult) -> Option<String> {
        let after = result.measure.kinds.as_ref()?;
        let base = self
            .check(&result.name)
            .filter(|b| b.command == result.command && b.kind == CheckKind::Test)?
            .measure
            .kinds
            .as_ref()?;
        let new: Vec<(&String, &u64)> = after
            .iter()
            .filter(|(k, _)| !base.contains_key(*k))
            .collect();
        let (rule, _) = new.first()?;
        Some(format!(
            "{} warning(s) of a rule the base keeps, e.g. \"{rule}\" (its CI makes warnings errors; ralph runs its tests with warnings allowed and judges the warnings by rule)",
            new.iter().map(|(_, n)| **n).sum::<u64>()
        ))
    }

    /// The checks failing on this commit.
    pub fn failing(&self) -> impl Iterator<Item = &BaseCheck> {
        self.checks
            .iter()
            .filter(|c| matches!(c.status, CheckStatus::Failed | CheckStatus::TimedOut))
    }

    /// Why nothing could be verified from this commit, if so: a configured check's program is
    /// missing, or there are test checks and none of them passes (or none at all, when a test
    /// is required).
    pub fn unverifiable(&self, require_test: bool) -> Option<Unverifiable> {
        let missing: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.configured && c.status == CheckStatus::Unavailable)
            .map(|c| format!("`{}`: {}", c.name, c.hint.clone().unwrap_or_default()))
            .collect();
        if !missing.is_empty() {
            return Some(Unverifiable {
                message: "a check named in [checks] cannot run: its program is missing".into(),
                details: missing,
            });
        }
        let tests: Vec<&BaseCheck> = self
            .checks
            .iter()
            .filter(|c| c.kind == CheckKind::Test)
            .collect();
        if tests.is_empty() {
            return require_test.then(|| Unverifiable {
                message: "there is no test check, and a test must pass ([checks] require_test)"
                    .into(),
                details: Vec::new(),
            });
        }
        // A test check failing on the base still judges test by test when its runner names
        // the tests and some of them pass: those must still pass after the change.
        if tests
            .iter()
            .any(|c| c.status == CheckStatus::Passed || c.judges_by_test())
        {
            return None;
        }
        Some(Unverifiable {
            message: format!(
                "no test check passes on the base ({}), and none that fails there reports which of its tests pass: nothing could be verified",
                short(&self.commit)
            ),
            details: tests
                .iter()
                .map(|c| {
                    // What it said: its hint, and the end of its output under it.
                    let tail = last_lines(&c.output_tail, 8);
                    let said = match &c.hint {
                        Some(h) if !tail.trim().is_empty() => format!("{h}:\n{tail}"),
                        Some(h) => h.clone(),
                        None => tail,
                    };
                    let per_test = match &c.measure.tests {
                        Some(t) if t.by_name => "; its runner named no passing test".to_owned(),
                        _ => format!(
                            "; its runner reports no per-test results to judge by (ralph reads them from {})",
                            super::tools::runners().join(", ")
                        ),
                    };
                    format!(
                        "`{}` ({}) {}{per_test}:\n{said}",
                        c.name,
                        c.command,
                        c.status.word()
                    )
                })
                .collect(),
        })
    }

    /// Judges a result after the change against this commit: a check that failed here and
    /// fails no worse becomes *failing on base*; one that fails worse says why in its hint. A
    /// CI job's steps skipped as on the base are said with the verdict.
    pub fn judge(&self, result: &mut CheckResult) {
        self.judge_run(result);
        if !result.trace.skipped_steps.is_empty() && result.status != CheckStatus::Unavailable {
            let note = format!(
                "its job's step(s) `{}` skipped, as on the base (they fail on this machine)",
                result.trace.skipped_steps.join("`, `")
            );
            result.hint = Some(match result.hint.take() {
                Some(h) if !h.contains(&note) => format!("{h}; {note}"),
                Some(h) => h,
                None => note,
            });
        }
    }

    fn judge_run(&self, result: &mut CheckResult) {
        // It ran and passed on the base, and cannot run after the change: the change took its
        // program away (a dependency, a script's tool) — not a check it may slip out of.
        let ran_on_base = self
            .check(&result.name)
            .is_some_and(|b| b.status == CheckStatus::Passed && b.command == result.command);
        if result.status == CheckStatus::Unavailable
            && ran_on_base
            && result.trace.machine.is_none()
        {
            result.status = CheckStatus::Failed;
            result.hint = Some(format!(
                "it passes on the base ({}), and cannot run after the change: {}",
                short(&self.commit),
                result.hint.as_deref().unwrap_or("its program is missing")
            ));
            return;
        }
        if let Some(why) = self.new_warnings(result) {
            result.status = CheckStatus::Failed;
            result.hint = Some(why);
            return;
        }
        if !matches!(result.status, CheckStatus::Failed | CheckStatus::TimedOut) {
            return;
        }
        // Every test that failed passed again alone: flaky, nobody's doing.
        if let Some(flaky) = only_flaky(result) {
            let on_base = self
                .check(&result.name)
                .is_some_and(|b| matches!(b.status, CheckStatus::Failed | CheckStatus::TimedOut));
            result.status = if on_base {
                CheckStatus::FailingOnBase
            } else {
                CheckStatus::Passed
            };
            result.hint = Some(format!(
                "{flaky} failed in the full run and passed when run again alone: flaky, blamed on nobody{}",
                if on_base { "; it fails on the base too" } else { "" }
            ));
            return;
        }
        let Some(base) = self
            .check(&result.name)
            .filter(|b| matches!(b.status, CheckStatus::Failed | CheckStatus::TimedOut))
        else {
            return;
        };
        let flaky = match result.measure.tests.as_ref().map(|t| &t.flaky) {
            Some(f) if !f.is_empty() => format!(
                "; `{}` failed in the full run and passed when run again alone: flaky, blamed on nobody",
                f.iter().map(String::as_str).collect::<Vec<_>>().join("`, `")
            ),
            _ => String::new(),
        };
        match judge(&base.measure, &result.measure) {
            Judgement::FailingOnBase => {
                result.status = CheckStatus::FailingOnBase;
                result.hint = Some(format!(
                    "it fails on the base ({}) too, and no worse: not held against the change{flaky}",
                    short(&self.commit)
                ));
            }
            Judgement::KnownKinds(why) => {
                result.status = CheckStatus::FailingOnBase;
                result.hint = Some(format!(
                    "it fails on the base ({}) too: {why}, not held against the change{flaky}",
                    short(&self.commit)
                ));
            }
            Judgement::Worse(why) => {
                result.hint = Some(format!(
                    "it fails on the base ({}) too, but worse now: {why}{flaky}",
                    short(&self.commit)
                ));
            }
        }
    }
}

/// When the only tests `result` failed are flaky ones (they passed when run again alone), and
/// it failed for nothing else it reports: those tests, named.
fn only_flaky(result: &CheckResult) -> Option<String> {
    let t = result.measure.tests.as_ref()?;
    let only = result.status == CheckStatus::Failed
        && t.by_name
        && !t.flaky.is_empty()
        && t.failed.iter().all(|id| t.flaky.contains(id));
    only.then(|| {
        let names: Vec<&str> = t.flaky.iter().map(String::as_str).collect();
        format!("`{}`", names.join("`, `"))
    })
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn tail(text: &str) -> String {
    if text.len() <= MAX_TAIL {
        return text.to_owned();
    }
    let mut at = text.len() - MAX_TAIL;
    while !text.is_char_boundary(at) {
        at += 1;
    }
    text[at..].to_owned()
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::spec::CheckSpec;
    use super::*;

    fn result(name: &str, kind: CheckKind, status: CheckStatus, measure: Measure) -> CheckResult {
        CheckResult {
            name: name.into(),
            kind,
            command: format!("run {name}"),
            status,
            exit_code: Some(i32::from(status != CheckStatus::Passed)),
            duration_ms: 10,
            output_tail: format!("{name} said something"),
            hint: None,
            measure,
            configured: false,
            advisory: None,
            uses: Default::default(),
            trace: Default::default(),
        }
    }

    fn tests(passed: &[&str], failed: &[&str]) -> Measure {
        Measure::tests_by_name(passed, failed)
    }

    fn lint(n: u64) -> Measure {
        Measure {
            problems: Some(n),
            ..Measure::default()
        }
    }

    fn base() -> Baseline {
        Baseline::from_results(
            "0123456789abcdef",
            &[
                result("lint", CheckKind::Quality, CheckStatus::Failed, lint(24)),
                result("format", CheckKind::Quality, CheckStatus::Passed, lint(0)),
                result(
                    "test",
                    CheckKind::Test,
                    CheckStatus::Failed,
                    tests(&["a", "b"], &["flaky"]),
                ),
            ],
            Some(91.25),
            None,
        )
    }

    #[test]
    fn only_the_change_is_blamed() {
        let b = base();
        let mut same = result("lint", CheckKind::Quality, CheckStatus::Failed, lint(24));
        b.judge(&mut same);
        assert_eq!(same.status, CheckStatus::FailingOnBase);
        assert!(same.hint.unwrap().contains("no worse"));
        let mut worse = result("lint", CheckKind::Quality, CheckStatus::Failed, lint(26));
        b.judge(&mut worse);
        assert_eq!(worse.status, CheckStatus::Failed);
        assert!(worse
            .hint
            .unwrap()
            .contains("26 problem(s), 24 on the base"));
        // Passing on the base: a failure is the change's.
        let mut format = result("format", CheckKind::Quality, CheckStatus::Failed, lint(1));
        b.judge(&mut format);
        assert_eq!(format.status, CheckStatus::Failed);
        assert_eq!(format.hint, None);
        // A test that passed on the base fails now; a new test fails.
        let mut broke = result(
            "test",
            CheckKind::Test,
            CheckStatus::Failed,
            tests(&["b"], &["a", "flaky"]),
        );
        b.judge(&mut broke);
        assert_eq!(broke.status, CheckStatus::Failed);
        let mut new = result(
            "test",
            CheckKind::Test,
            CheckStatus::Failed,
            tests(&["a", "b"], &["flaky", "test_new"]),
        );
        b.judge(&mut new);
        assert_eq!(new.status, CheckStatus::Failed);
        assert!(new.hint.unwrap().contains("test_new"));
        let mut fine = result(
            "test",
            CheckKind::Test,
            CheckStatus::Failed,
            tests(&["a", "b", "test_new"], &["flaky"]),
        );
        b.judge(&mut fine);
        assert_eq!(fine.status, CheckStatus::FailingOnBase);
        // Passing stays passing.
        let mut ok = result("lint", CheckKind::Quality, CheckStatus::Passed, lint(0));
        b.judge(&mut ok);
        assert_eq!(ok.status, CheckStatus::Passed);
        // Passing on the base, its program gone after the change: the change's doing.
        let mut gone = result(
            "format",
            CheckKind::Quality,
            CheckStatus::Unavailable,
            lint(0),
        );
        gone.hint = Some("`fmt` is not installed here".into());
        b.judge(&mut gone);
        assert_eq!(gone.status, CheckStatus::Failed);
        assert!(gone
            .hint
            .unwrap()
            .contains("cannot run after the change: `fmt` is not installed"));
        // Failing on the base and unavailable now: nothing to hold against it.
        let mut lost = result(
            "lint",
            CheckKind::Quality,
            CheckStatus::Unavailable,
            lint(0),
        );
        b.judge(&mut lost);
        assert_eq!(lost.status, CheckStatus::Unavailable);
    }

    #[test]
    fn a_flaky_test_is_blamed_on_nobody_and_judges_nothing_after() {
        let passing = Baseline::from_results(
            "0123456789abcdef",
            &[result(
                "test",
                CheckKind::Test,
                CheckStatus::Passed,
                tests(&["a", "b"], &[]),
            )],
            None,
            None,
        );
        let flaky = |passed: &[&str], failed: &[&str], flaky: &[&str]| {
            let mut m = tests(passed, failed);
            let t = m.tests.as_mut().unwrap();
            t.flaky = flaky.iter().map(|s| s.to_string()).collect();
            result("test", CheckKind::Test, CheckStatus::Failed, m)
        };
        let mut once = flaky(&["b"], &["a"], &["a"]);
        passing.judge(&mut once);
        assert_eq!(once.status, CheckStatus::Passed);
        assert!(once
            .hint
            .as_deref()
            .unwrap()
            .contains("`a` failed in the full run and passed when run again alone"));
        // Another test broke for real: the check fails.
        let mut real = flaky(&[], &["a", "b"], &["a"]);
        passing.judge(&mut real);
        assert_eq!(real.status, CheckStatus::Failed);
        // Failing on the base, the flaky test is not counted against the change either.
        let mut failing = base();
        let mut again = flaky(&["b"], &["a", "flaky"], &["a"]);
        failing.judge(&mut again);
        assert_eq!(again.status, CheckStatus::FailingOnBase, "{:?}", again.hint);
        // Noted on the baseline, it judges no later attempt.
        assert!(failing.note_flaky(&[again.clone()]));
        assert!(!failing.note_flaky(&[again]));
        let mut later = result(
            "test",
            CheckKind::Test,
            CheckStatus::Failed,
            tests(&["b"], &["a", "flaky"]),
        );
        failing.judge(&mut later);
        assert_eq!(later.status, CheckStatus::FailingOnBase, "{:?}", later.hint);
    }

    #[test]
    fn nothing_verifiable_is_named() {
        // The test check fails on the base, but names its passing tests: it judges.
        let b = base();
        assert_eq!(b.unverifiable(true), None);
        let mut mute = base();
        mute.checks[2].measure = Measure {
            tests: Some(crate::checks::outcomes::TestOutcomes {
                passed_count: 3,
                failed_count: 1,
                ..Default::default()
            }),
            ..Measure::default()
        };
        let why = mute.unverifiable(true).unwrap();
        assert!(why
            .message
            .contains("no test check passes on the base (0123456789ab)"));
        assert!(
            why.details[0]
                .contains("`test` (run test) failed; its runner reports no per-test results"),
            "{why:?}"
        );
        assert!(why.details[0].ends_with(":\ntest said something"));
        // A hint says why; the output under it says what happened.
        mute.checks[2].hint = Some("the job's step `build` failed (exit 1) before it".into());
        let why = mute.unverifiable(true).unwrap();
        assert!(
            why.details[0].ends_with("before it:\ntest said something"),
            "{why:?}"
        );
        let mut ok = base();
        ok.checks[2].status = CheckStatus::Passed;
        assert_eq!(ok.unverifiable(true), None);
        // A configured check's program is missing.
        ok.checks[0].status = CheckStatus::Unavailable;
        ok.checks[0].configured = true;
        ok.checks[0].hint = Some("install ruff".into());
        let why = ok.unverifiable(true).unwrap();
        assert!(why.message.contains("[checks]"), "{why:?}");
        assert_eq!(why.details, ["`lint`: install ruff"]);
        // No test check at all: only a problem when a test is required.
        let quality_only = Baseline::from_results(
            "c",
            &[result(
                "lint",
                CheckKind::Quality,
                CheckStatus::Passed,
                lint(0),
            )],
            None,
            Some("no coverage tool".into()),
        );
        assert!(quality_only.unverifiable(true).is_some());
        assert_eq!(quality_only.unverifiable(false), None);
        assert_eq!(
            b.failing().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["lint", "test"]
        );
    }

    #[test]
    fn a_test_check_passing_no_test_on_the_base_gives_way_to_one_that_judges() {
        let collection = || tests(&[], &["tests/test_a.py", "tests/test_b.py"]);
        let with = |other: CheckStatus, measure: Measure| {
            Baseline::from_results(
                "0123456789abcdef",
                &[
                    result("test", CheckKind::Test, CheckStatus::Failed, collection()),
                    result("CI test", CheckKind::Test, other, measure),
                    result("lint", CheckKind::Quality, CheckStatus::Failed, lint(3)),
                ],
                None,
                None,
            )
        };
        let spec = |name: &str| CheckSpec::new(name, &format!("run {name}"));
        // The CI's run passes: the detected one, which imported nothing, gives way.
        let b = with(CheckStatus::Passed, tests(&["a"], &[]));
        let given = b.cannot_judge(&spec("test")).expect("it gives way");
        assert_eq!(given.status, CheckStatus::FailingOnBase);
        let hint = given.hint.unwrap();
        assert!(hint.contains("naming no passing test"), "{hint}");
        assert!(
            hint.contains("`CI test`, which judges there, does"),
            "{hint}"
        );
        assert_eq!(b.cannot_judge(&spec("CI test")), None, "the judge runs");
        assert_eq!(
            b.cannot_judge(&spec("lint")),
            None,
            "a counted problem judges"
        );
        // The other fails naming passing tests: it judges, so the first still gives way.
        let b = with(CheckStatus::Failed, tests(&["a"], &["b"]));
        assert!(b.cannot_judge(&spec("test")).is_some());
        // Neither judges: the first is still run and compared by its own numbers.
        let b = with(CheckStatus::Failed, collection());
        assert_eq!(b.cannot_judge(&spec("test")), None);
        assert_eq!(b.cannot_judge(&spec("CI test")), None);
        // A test check that named passing tests never gives way.
        let b = Baseline::from_results(
            "0123456789abcdef",
            &[
                result(
                    "test",
                    CheckKind::Test,
                    CheckStatus::Failed,
                    tests(&["x"], &["y"]),
                ),
                result(
                    "CI test",
                    CheckKind::Test,
                    CheckStatus::Passed,
                    tests(&["a"], &[]),
                ),
            ],
            None,
            None,
        );
        assert_eq!(b.cannot_judge(&spec("test")), None);
    }

    #[test]
    fn the_cache_is_per_commit_and_per_plan() {
        let dir = tempfile::tempdir().unwrap();
        let b = base();
        b.save(dir.path()).unwrap();
        assert!(dir.path().join(".gitignore").is_file());
        let plan = |cmds: &[(&str, &str)]| {
            CheckPlan::of(cmds.iter().map(|(n, c)| CheckSpec::new(n, c)).collect())
        };
        let same = plan(&[
            ("lint", "run lint"),
            ("format", "run format"),
            ("test", "run test"),
        ]);
        assert_eq!(
            Baseline::load(dir.path(), "0123456789abcdef", &same),
            Some(b.clone())
        );
        assert_eq!(
            Baseline::load(dir.path(), "fedcba", &same),
            None,
            "another commit"
        );
        let changed = plan(&[
            ("lint", "run lint --strict"),
            ("format", "run format"),
            ("test", "run test"),
        ]);
        assert_eq!(
            Baseline::load(dir.path(), "0123456789abcdef", &changed),
            None
        );
        // A tool unavailable then and installed now: measured again.
        let mut missing = b.clone();
        missing.checks[1].status = CheckStatus::Unavailable;
        missing.checks[1].command = "sh -c true".into();
        missing.save(dir.path()).unwrap();
        let with_sh = plan(&[
            ("lint", "run lint"),
            ("format", "sh -c true"),
            ("test", "run test"),
        ]);
        assert_eq!(
            Baseline::load(dir.path(), "0123456789abcdef", &with_sh),
            None
        );
        std::fs::write(Baseline::path(dir.path(), "0123456789abcdef"), "{not json").unwrap();
        assert_eq!(Baseline::load(dir.path(), "0123456789abcdef", &same), None);
    }

    #[test]
    fn warnings_allowed_in_a_test_step_are_judged_by_rule() {
        let warned = |status, rules: &[(&str, u64)]| {
            let mut m = tests(&["a"], &[]);
            m.kinds = Some(rules.iter().map(|(k, n)| (k.to_string(), *n)).collect());
            m.problems = Some(rules.iter().map(|(_, n)| n).sum());
            result("features", CheckKind::Test, status, m)
        };
        let b = Baseline::from_results(
            "0123456789abcdef",
            &[warned(CheckStatus::Passed, &[("unused variable: `…`", 3)])],
            None,
            None,
        );
        // More warnings of a rule the base already breaks: the tests judge.
        let mut same = warned(CheckStatus::Passed, &[("unused variable: `…`", 5)]);
        b.judge(&mut same);
        assert_eq!(same.status, CheckStatus::Passed);
        // A warning of a rule the base keeps: the change's, though every test passes.
        let mut new = warned(
            CheckStatus::Passed,
            &[("unused variable: `…`", 3), ("-Wreturn-type", 2)],
        );
        b.judge(&mut new);
        assert_eq!(new.status, CheckStatus::Failed);
        assert!(new
            .hint
            .unwrap()
            .starts_with("2 warning(s) of a rule the base keeps, e.g. \"-Wreturn-type\""));
        // A check not relaxed reads no warnings: nothing to judge by.
        let mut plain = result(
            "features",
            CheckKind::Test,
            CheckStatus::Passed,
            tests(&["a"], &[]),
        );
        b.judge(&mut plain);
        assert_eq!(plain.status, CheckStatus::Passed);
    }
}
