//! A test the change moves is not a test it deletes. A deleted test file, or tests removed from a
//! file, are a finding only when a test that passed on the base no longer runs and passes
//! anywhere: each test gone from the file is looked for by its name, wherever it went, among the
//! tests the checks' runners report as passing — as many of that name pass after the change as
//! passed on the base (one that failed there is not missed). Where no runner named tests on the
//! base, nothing can be told and the finding stands.

use crate::checks::baseline::Baseline;
use crate::checks::new_tests::{self, Lang};
use crate::checks::{CheckKind, CheckResult};
use crate::workspace::{Finding, Workspace, WorkspaceError, Worktree};
use std::collections::BTreeMap;

/// The findings of test deletions and removals that are moves, taken out of `protected` and
/// returned, each with the tests that still run and pass.
pub async fn moves(
    workspace: &dyn Workspace,
    wt: &Worktree,
    protected: &mut Vec<Finding>,
    baseline: Option<&Baseline>,
    checks: &[CheckResult],
) -> Result<Vec<Finding>, WorkspaceError> {
    let Some(baseline) = baseline else {
        return Ok(Vec::new());
    };
    let mut moved = Vec::new();
    let mut kept = Vec::new();
    for f in std::mem::take(protected) {
        let removal = f.reason == "deletes a test file" || f.reason.starts_with("removes ");
        let lang = new_tests::lang(&f.path);
        let gone = match (removal, lang) {
            (true, Some(lang)) => {
                let base = workspace.base_text(wt, &f.path).await?;
                let now = crate::untrusted_dir::project_text(&wt.path, &f.path);
                gone_tests(lang, base.as_deref(), now.as_deref())
            }
            _ => Vec::new(),
        };
        match lang.filter(|_| !gone.is_empty()) {
            Some(lang) if still_pass(lang, &gone, baseline, checks) => moved.push(Finding {
                reason: format!(
                    "{}, but its tests run elsewhere and pass: `{}`",
                    f.reason,
                    gone.join("`, `")
                ),
                ..f
            }),
            _ => kept.push(f),
        }
    }
    *protected = kept;
    Ok(moved)
}

/// The tests of the file's base text that its text now lacks, by name.
fn gone_tests(lang: Lang, base: Option<&str>, now: Option<&str>) -> Vec<String> {
    let before = base
        .map(|b| new_tests::tests_of(lang, b))
        .unwrap_or_default();
    let after = now
        .map(|n| new_tests::tests_of(lang, n))
        .unwrap_or_default();
    before
        .into_iter()
        .filter(|t| !after.iter().any(|a| a.name == t.name))
        .map(|t| t.name)
        .collect()
}

/// A test's own name, from a name in a file (`Class::test_x`, `tests::it_works`) or a runner's
/// id in its language's shape; `None` for an id naming only a file.
fn short(lang: Lang, name: &str) -> Option<String> {
    let last = match lang {
        Lang::Go => name
            .split('/')
            .find(|s| s.starts_with("Test"))
            .unwrap_or(name),
        Lang::Js => {
            let title = name.split_once("::").map_or(name, |(_, t)| t);
            if title == name && new_tests::lang(name) == Some(Lang::Js) {
                return None;
            }
            title.rsplit(['>', '›']).next().unwrap_or(title)
        }
        Lang::Python | Lang::Rust => name.rsplit("::").next().unwrap_or(name),
    };
    let last = last.split('[').next().unwrap_or(last).trim();
    (!last.is_empty()).then(|| last.to_owned())
}

/// Whether each of `gone` that passed on the base still passes after the change as often under
/// its name, in every test check that names tests; `false` when no check named tests on the
/// base (nothing can be told).
fn still_pass(lang: Lang, gone: &[String], baseline: &Baseline, checks: &[CheckResult]) -> bool {
    let count = |ids: &std::collections::BTreeSet<String>| {
        let mut n: BTreeMap<String, usize> = BTreeMap::new();
        for id in ids {
            if let Some(s) = short(lang, id) {
                *n.entry(s).or_default() += 1;
            }
        }
        n
    };
    let named: Vec<(BTreeMap<String, usize>, BTreeMap<String, usize>)> = checks
        .iter()
        .filter(|c| c.kind == CheckKind::Test)
        .filter_map(|c| {
            let before = count(baseline.passed_tests(&c.name)?);
            let after = c
                .measure
                .tests
                .as_ref()
                .filter(|t| t.by_name)
                .map(|t| count(&t.passed))
                .unwrap_or_default();
            Some((before, after))
        })
        .collect();
    !named.is_empty()
        && gone.iter().all(|name| {
            let Some(name) = short(lang, name) else {
                return false;
            };
            named.iter().all(|(before, after)| {
                after.get(&name).copied().unwrap_or(0) >= before.get(&name).copied().unwrap_or(0)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::outcomes::Measure;
    use crate::checks::CheckStatus;

    fn check(passed: &[&str]) -> CheckResult {
        CheckResult {
            name: "test".into(),
            kind: CheckKind::Test,
            command: "pytest".into(),
            status: CheckStatus::Passed,
            exit_code: Some(0),
            duration_ms: 1,
            output_tail: String::new(),
            hint: None,
            measure: Measure::tests_by_name(passed, &[]),
            configured: false,
            advisory: None,
            uses: Default::default(),
            trace: Default::default(),
        }
    }

    #[test]
    fn a_test_that_moved_still_passes_under_its_name() {
        let base = Baseline::from_results(
            "b",
            &[check(&[
                "tests.test_a::test_x",
                "tests.test_a::test_y",
                "tests.test_c::test_y",
            ])],
            None,
            None,
        );
        let gone = vec!["test_x".to_owned(), "test_y".to_owned()];
        // Both moved into test_b and pass there.
        let after = [check(&[
            "tests.test_b::test_x",
            "tests.test_b::test_y",
            "tests.test_c::test_y",
        ])];
        assert!(still_pass(Lang::Python, &gone, &base, &after));
        // One `test_y` of two no longer runs: the other file's does not stand for it.
        let after = [check(&["tests.test_b::test_x", "tests.test_c::test_y"])];
        assert!(!still_pass(Lang::Python, &gone, &base, &after));
        // A test that did not pass on the base is not missed.
        let moved = [check(&[
            "tests.test_b::test_x",
            "tests.test_b::test_y",
            "tests.test_c::test_y",
        ])];
        assert!(still_pass(
            Lang::Python,
            &["test_z".to_owned()],
            &base,
            &moved
        ));
        // Where no check named tests on the base, nothing can be told.
        let unnamed = Baseline::from_results("b", &[], None, None);
        assert!(!still_pass(Lang::Python, &gone, &unnamed, &moved));
    }

    #[test]
    fn names_are_shortened_in_each_languages_shape() {
        assert_eq!(
            short(Lang::Python, "tests.test_a.TestC::test_x[1-2]").as_deref(),
            Some("test_x")
        );
        assert_eq!(
            short(Lang::Python, "TestC::test_x").as_deref(),
            Some("test_x")
        );
        assert_eq!(
            short(Lang::Rust, "tests/it.rs::m::works").as_deref(),
            Some("works")
        );
        assert_eq!(
            short(Lang::Go, "example.com/calc/TestSub/neg").as_deref(),
            Some("TestSub")
        );
        assert_eq!(
            short(Lang::Js, "src/a.test.ts::suite > adds").as_deref(),
            Some("adds")
        );
        assert_eq!(short(Lang::Js, "src/a.test.ts"), None);
        let t = gone_tests(
            Lang::Python,
            Some("def test_a():\n    pass\n\ndef test_b():\n    pass\n"),
            Some("def test_b():\n    pass\n"),
        );
        assert_eq!(t, ["test_a"]);
    }
}
