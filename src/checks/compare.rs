//! Blaming only the change: the judgement of a check that fails after the change against the
//! same check on the base. A check failing on the base is not held against the change as long as
//! it fails no worse: no test that passed on the base may fail, the tests the change adds must
//! pass, and a lint may break no rule the base keeps.

use super::outcomes::{Measure, TestOutcomes};

/// What a failing check's numbers say against the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// It failed on the base too, and no worse: not the change's doing.
    FailingOnBase,
    /// The change made it fail, or fail worse: why.
    Worse(String),
    /// It failed on the base too, with more findings now, but only of the rules the base
    /// already breaks: why that is not held against the change.
    KnownKinds(String),
}

/// Judges a check that fails after the change, when it failed on the base as well: by what
/// failed (the tests, each by name where the runner names them, else their counts; a lint's
/// problems, by rule where it names them) and by how far it got (tests that passed on the base
/// and did not run at all now, fewer passing, nothing to count where the base counted).
pub fn judge(base: &Measure, after: &Measure) -> Judgement {
    if let (Some(b), None) = (&base.tests, &after.tests) {
        // The base's run got to its tests; this one named or counted none of them.
        if b.passed_count > 0 || !b.passed.is_empty() {
            return Judgement::Worse(format!(
                "it stopped before naming or counting a test, where {} passed on the base (it failed earlier: see its output)",
                b.passed_count.max(b.passed.len() as u64)
            ));
        }
    }
    if let (Some(b), Some(a)) = (&base.tests, &after.tests) {
        if b.by_name && a.by_name {
            // A test flaky on either side judges nothing.
            let steady = |t: &&String| !a.flaky.contains(*t) && !b.flaky.contains(*t);
            // A failure `file::title` breaks a file that passed on the base as a whole.
            let passed_on_base = |t: &String| TestOutcomes::passed_in(b, t);
            let broken: Vec<&String> = a
                .failed
                .iter()
                .filter(steady)
                .filter(|t| passed_on_base(t))
                .collect();
            let new_failing: Vec<&String> = a
                .failed
                .iter()
                .filter(|t| !passed_on_base(t) && !b.failed.contains(*t))
                .collect();
            // A test that passed on the base and did not run now: the run stopped short of it
            // (a file that no longer loads) — unless a test of its name passes elsewhere now
            // (moved or renamed with its module).
            let missing: Vec<&String> = b
                .passed
                .iter()
                .filter(|t| !b.flaky.contains(*t) && !a.flaky.contains(*t))
                .filter(|t| !ran_in(a, t) && !passes_by_its_name(a, t))
                .collect();
            return match (broken.first(), new_failing.first(), missing.first()) {
                (Some(t), ..) => Judgement::Worse(format!(
                    "{} test(s) that pass on the base fail, e.g. {t}",
                    broken.len()
                )),
                (None, Some(t), _) => {
                    Judgement::Worse(format!("{} new test(s) fail, e.g. {t}", new_failing.len()))
                }
                (None, None, Some(t)) => Judgement::Worse(format!(
                    "{} test(s) that pass on the base did not run after the change, e.g. {t}",
                    missing.len()
                )),
                (None, None, None) => Judgement::FailingOnBase,
            };
        }
        return if a.failed_count > b.failed_count {
            Judgement::Worse(format!(
                "{} test(s) fail, {} on the base",
                a.failed_count, b.failed_count
            ))
        } else if a.passed_count < b.passed_count {
            Judgement::Worse(format!(
                "{} test(s) pass, {} on the base: the run got less far",
                a.passed_count, b.passed_count
            ))
        } else {
            Judgement::FailingOnBase
        };
    }
    if base.problems.is_some() && after.problems.is_none() && after.tests.is_none() {
        // The base's run counted its problems; this one said nothing to compare by.
        return Judgement::Worse(
            "it no longer reports its problems, as it does on the base: it failed another way (see its output)"
                .into(),
        );
    }
    match (base.problems, after.problems) {
        (Some(b), Some(a)) if a > b => match (&base.kinds, &after.kinds) {
            // A lint is held to the rules the base keeps.
            (Some(bk), Some(ak)) => {
                let new: Vec<(&String, &u64)> =
                    ak.iter().filter(|(k, _)| !bk.contains_key(*k)).collect();
                match new.first() {
                    Some((k, _)) => Judgement::Worse(format!(
                        "{} problem(s) of a rule the base keeps, e.g. \"{k}\"",
                        new.iter().map(|(_, n)| **n).sum::<u64>()
                    )),
                    None => Judgement::KnownKinds(format!(
                        "{a} problem(s), {b} on the base, all of rules the base already breaks"
                    )),
                }
            }
            _ => Judgement::Worse(format!("{a} problem(s), {b} on the base")),
        },
        _ => Judgement::FailingOnBase,
    }
}

/// Whether the test `id` ran in `after`, passing or failing (a runner that names a passing
/// file for its tests ran `file::title` as part of `file`, and the other way round).
fn ran_in(after: &TestOutcomes, id: &str) -> bool {
    let in_file = |set: &std::collections::BTreeSet<String>| {
        set.iter()
            .any(|t| t.split_once("::").is_some_and(|(file, _)| file == id))
    };
    after.passed.contains(id)
        || after.failed.contains(id)
        || TestOutcomes::passed_in(after, id)
        || (after.by_file || id.split_once("::").is_none())
            && (in_file(&after.passed) || in_file(&after.failed))
}

/// Whether a test named as `id` ends (its last part, after `::` or `.`) passes in `after`
/// under another id: moved to another file or module.
fn passes_by_its_name(after: &TestOutcomes, id: &str) -> bool {
    let last = |t: &str| {
        t.rsplit("::")
            .next()
            .unwrap_or(t)
            .rsplit(['.', ' ', '>'])
            .next()
            .unwrap_or(t)
            .to_owned()
    };
    let name = last(id);
    !name.is_empty() && after.passed.iter().any(|t| last(t) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_changes_doing_is_held_against_it() {
        let by_name = Measure::tests_by_name;
        let base = by_name(&["a", "b"], &["flaky"]);
        assert_eq!(
            judge(&base, &by_name(&["a", "b", "new"], &["flaky"])),
            Judgement::FailingOnBase
        );
        assert!(
            matches!(judge(&base, &by_name(&["b"], &["flaky", "a"])), Judgement::Worse(w) if w.contains("pass on the base fail, e.g. a"))
        );
        assert!(
            matches!(judge(&base, &by_name(&["a", "b"], &["flaky", "new"])), Judgement::Worse(w) if w.contains("new test(s) fail"))
        );
        let lint = |n| Measure {
            problems: Some(n),
            ..Measure::default()
        };
        assert_eq!(judge(&lint(24), &lint(24)), Judgement::FailingOnBase);
        assert_eq!(judge(&lint(24), &lint(20)), Judgement::FailingOnBase);
        assert!(matches!(judge(&lint(24), &lint(25)), Judgement::Worse(_)));
        // By rule: more findings of the rules the base breaks are no worse; one of a rule the
        // base keeps is.
        let ruled = |rules: &[(&str, u64)]| Measure {
            problems: Some(rules.iter().map(|(_, n)| n).sum()),
            kinds: Some(rules.iter().map(|(k, n)| (k.to_string(), *n)).collect()),
            ..Measure::default()
        };
        let base = ruled(&[("map_or", 5), ("cfg", 31)]);
        assert!(matches!(
            judge(&base, &ruled(&[("map_or", 6), ("cfg", 31)])),
            Judgement::KnownKinds(w) if w.contains("37 problem(s), 36 on the base")
        ));
        assert!(matches!(
            judge(&base, &ruled(&[("map_or", 5), ("cfg", 31), ("unused", 2)])),
            Judgement::Worse(w) if w.contains("2 problem(s) of a rule the base keeps, e.g. \"unused\"")
        ));
        // Rules known on one side only: counted.
        assert!(matches!(judge(&base, &lint(37)), Judgement::Worse(_)));
        // Numbers unknown on the base: its failure is not held against the change.
        assert_eq!(
            judge(&Measure::default(), &lint(3)),
            Judgement::FailingOnBase
        );
        // Counted on the base, nothing to count now: it failed another way.
        assert!(matches!(
            judge(&lint(3), &Measure::default()),
            Judgement::Worse(_)
        ));
    }

    #[test]
    fn a_run_that_got_less_far_than_the_base_is_worse() {
        let by_name = Measure::tests_by_name;
        // The base fails at its browser tests; the change's test file stops the runner while
        // it loads: the tests that passed on the base never ran.
        let base = by_name(&["api > get", "api > put"], &["browser > renders"]);
        let crashed = by_name(&[], &["test/new.test.js::load"]);
        assert!(
            matches!(judge(&base, &crashed), Judgement::Worse(w) if w.contains("new test(s) fail")),
            "its own failure names it first"
        );
        let stopped = by_name(&["api > get"], &["browser > renders"]);
        assert!(matches!(
            judge(&base, &stopped),
            Judgement::Worse(w) if w.contains("1 test(s) that pass on the base did not run after the change, e.g. api > put")
        ));
        // Nothing named at all after the change.
        let silent = Measure::default();
        assert!(matches!(
            judge(&base, &silent),
            Judgement::Worse(w) if w.contains("stopped before naming or counting a test, where 2 passed")
        ));
        // A test moved to another module passes under its new id: not missing.
        let base = by_name(
            &["tests.test_a::test_x", "tests.test_a::test_y"],
            &["tests.test_a::test_z"],
        );
        let moved = by_name(
            &["tests.test_a::test_x", "tests.test_b::test_y"],
            &["tests.test_a::test_z"],
        );
        assert_eq!(judge(&base, &moved), Judgement::FailingOnBase);
        // A file that passed as a whole ran when one of its tests is named.
        let mut files = by_name(&["a.test.js", "b.test.js"], &["c.test.js::x"]);
        files.tests.as_mut().unwrap().by_file = true;
        let mut later = by_name(&["a.test.js", "b.test.js::y"], &["c.test.js::x"]);
        later.tests.as_mut().unwrap().by_file = true;
        assert_eq!(judge(&files, &later), Judgement::FailingOnBase);
        // By counts: fewer passing is worse too.
        let counts = |passed, failed| Measure {
            tests: Some(TestOutcomes {
                passed_count: passed,
                failed_count: failed,
                ..TestOutcomes::default()
            }),
            ..Measure::default()
        };
        assert_eq!(
            judge(&counts(10, 1), &counts(11, 1)),
            Judgement::FailingOnBase
        );
        assert!(
            matches!(judge(&counts(10, 1), &counts(4, 1)), Judgement::Worse(w) if w.contains("4 test(s) pass, 10 on the base"))
        );
    }
}
