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

/// Judges a check that fails after the change, when it failed on the base as well.
pub fn judge(base: &Measure, after: &Measure) -> Judgement {
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
            return match (broken.first(), new_failing.first()) {
                (Some(t), _) => Judgement::Worse(format!(
                    "{} test(s) that pass on the base fail, e.g. {t}",
                    broken.len()
                )),
                (None, Some(t)) => {
                    Judgement::Worse(format!("{} new test(s) fail, e.g. {t}", new_failing.len()))
                }
                (None, None) => Judgement::FailingOnBase,
            };
        }
        return if a.failed_count > b.failed_count {
            Judgement::Worse(format!(
                "{} test(s) fail, {} on the base",
                a.failed_count, b.failed_count
            ))
        } else {
            Judgement::FailingOnBase
        };
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
        // Numbers unknown on one side: the base's failure is not held against the change.
        assert_eq!(
            judge(&Measure::default(), &lint(3)),
            Judgement::FailingOnBase
        );
    }
}
