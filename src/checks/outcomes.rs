//! What one run of a check says in numbers, whatever tool printed it: the tests it ran by outcome
//! ([`TestOutcomes`], filled by the tools' readers in `tools/`), how many problems a linter
//! found and of which rules ([`Measure`]), and the two readings that need no tool: a summary
//! line's counts and a count of `path:line:col:` findings. A leaf: every stage reads these, none
//! of them is read here.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The tests a check ran, by outcome, as far as its runner says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcomes {
    /// Test ids, when the runner names them.
    pub passed: BTreeSet<String>,
    pub failed: BTreeSet<String>,
    /// The counts, when only a summary line is known (also filled when ids are).
    pub passed_count: u64,
    pub failed_count: u64,
    /// Whether ids are known (else only the counts).
    pub by_name: bool,
    /// A failed test's message, when the report gives one (JUnit's `message`).
    #[serde(default)]
    pub messages: BTreeMap<String, String>,
    /// Failed tests that passed when run again alone: flaky, blamed on nobody, and not used
    /// to judge a change.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub flaky: BTreeSet<String>,
    /// The tool whose report named the tests (`pytest`, `cargo test`, …): the one asked how to
    /// run one of them again alone. Empty when only counts are known.
    #[serde(default, deserialize_with = "runner_name")]
    pub runner: String,
    /// A passing id may be a file standing for all its tests, a failing one `file::title`
    /// (jest's and vitest's default reporters name only a failing file's failures).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_file: bool,
}

/// A runner's name as a cache holds it: `counts` (only counts were read) is none; any other
/// name as it is — a name from before tools had names (`junit`) is known to [`super::tools::runner`].
fn runner_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    Ok(if name == "counts" {
        String::new()
    } else {
        name
    })
}

impl TestOutcomes {
    /// Empty outcomes named test by test by `runner`.
    pub fn named(runner: &str) -> TestOutcomes {
        TestOutcomes {
            by_name: true,
            runner: runner.to_owned(),
            ..TestOutcomes::default()
        }
    }

    /// Records one test's outcome.
    pub fn record(&mut self, id: String, passed: bool) {
        if passed {
            self.passed.insert(id);
        } else {
            self.failed.insert(id);
        }
    }

    /// The outcomes with their counts taken from the ids; `None` when no test was named.
    pub fn finished(mut self) -> Option<TestOutcomes> {
        self.passed_count = self.passed.len() as u64;
        self.failed_count = self.failed.len() as u64;
        (self.passed_count + self.failed_count > 0).then_some(self)
    }

    /// Adds `other`'s tests, each id under `prefix` (a workspace package's folder) when given.
    pub fn absorb(&mut self, other: TestOutcomes, prefix: Option<&str>) {
        let key = |id: String| match prefix {
            Some(p) if !p.is_empty() && p != "." => format!("{}/{id}", p.trim_end_matches('/')),
            _ => id,
        };
        self.by_name |= other.by_name;
        self.by_file |= other.by_file;
        if self.runner.is_empty() {
            self.runner = other.runner;
        }
        self.passed.extend(other.passed.into_iter().map(key));
        self.failed.extend(other.failed.into_iter().map(key));
        self.messages
            .extend(other.messages.into_iter().map(|(k, v)| (key(k), v)));
        self.passed_count = self.passed.len() as u64;
        self.failed_count = self.failed.len() as u64;
    }

    /// The failed tests with their messages, one line each, at most `max` of them.
    pub fn failed_lines(&self, max: usize) -> Vec<String> {
        let mut out: Vec<String> = self
            .failed
            .iter()
            .take(max)
            .map(|id| match self.messages.get(id) {
                Some(m) => format!("FAILED {id} - {m}"),
                None => format!("FAILED {id}"),
            })
            .collect();
        if self.failed.len() > max {
            out.push(format!("… and {} more", self.failed.len() - max));
        }
        out
    }

    /// Whether `id`, failing now, is a test that passed in `base`: by its id, or — for a
    /// runner that names a passing file for its tests — by its file.
    pub fn passed_in(base: &TestOutcomes, id: &str) -> bool {
        base.passed.contains(id)
            || (base.by_file
                && id
                    .split_once("::")
                    .is_some_and(|(file, _)| base.passed.contains(file)))
    }
}

/// The numbers of one run of a check, as the comparison needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    pub tests: Option<TestOutcomes>,
    pub problems: Option<u64>,
    /// A lint's findings by rule (the tools' readers), when its output names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<BTreeMap<String, u64>>,
}

impl Measure {
    /// The measure of a test run whose runner named each test.
    pub fn tests_by_name(passed: &[&str], failed: &[&str]) -> Measure {
        let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
        Measure {
            tests: Some(TestOutcomes {
                passed: set(passed),
                failed: set(failed),
                passed_count: passed.len() as u64,
                failed_count: failed.len() as u64,
                by_name: true,
                ..TestOutcomes::default()
            }),
            ..Measure::default()
        }
    }
}

/// The number after which `word` follows in `line`: `12` in "12 failed".
fn count_before(line: &str, word: &str) -> Option<u64> {
    let at = line.find(word)?;
    line[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The counts of a summary line: pytest's `== 2 failed, 10 passed in 1s ==`, jest's `Tests:
/// 1 failed, 3 passed, 4 total`, cargo's `test result: FAILED. 3 passed; 1 failed`.
pub fn counts(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::default();
    let mut seen = false;
    for line in stdout.lines().chain(stderr.lines()) {
        let summary = (line.starts_with('=') && line.contains(" in "))
            || line.trim_start().starts_with("Tests:")
            || line.starts_with("test result:");
        if !summary {
            continue;
        }
        let passed = count_before(line, " passed").unwrap_or(0);
        let failed =
            count_before(line, " failed").unwrap_or(0) + count_before(line, " error").unwrap_or(0);
        if passed + failed > 0 {
            seen = true;
            t.passed_count += passed;
            t.failed_count += failed;
        }
    }
    seen.then_some(t)
}

/// How many problems a linter or type checker reported, when its output says: ruff's and
/// mypy's `Found N error`, black's and ruff format's `N files would be reformatted`, rustc's
/// `due to N previous error`, eslint's `✖ N problems`, cargo fmt's `Diff in` lines, else the
/// count of `path:line:col:` lines (flake8, pylint, compilers).
pub fn problems(stdout: &str, stderr: &str) -> Option<u64> {
    let text = format!("{stdout}\n{stderr}");
    let mut total: Option<u64> = None;
    let mut add = |n: u64| *total.get_or_insert(0) += n;
    for line in text.lines() {
        if let Some(n) = count_before(line, " error").filter(|_| line.contains("Found ")) {
            add(n);
        } else if let Some(n) = count_before(line, " previous error") {
            add(n);
        } else if let Some(n) =
            count_before(line, " file").filter(|_| line.contains("would be reformatted"))
        {
            add(n);
        } else if let Some(n) = count_before(line, " problem").filter(|_| line.contains('✖')) {
            add(n);
        }
    }
    if total.is_some() {
        return total;
    }
    let diffs = text.lines().filter(|l| l.starts_with("Diff in ")).count() as u64;
    if diffs > 0 {
        return Some(diffs);
    }
    let located = text.lines().filter(|l| located(l).is_some()).count() as u64;
    (located > 0).then_some(located)
}

/// What follows `path:line:col:` at the start of `line`, when it starts so.
pub fn located(line: &str) -> Option<&str> {
    let mut parts = line.splitn(4, ':');
    let (path, row, col) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (!path.is_empty() && !path.contains(' ') && digits(row) && digits(col))
        .then(|| parts.next().unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_and_problem_counts() {
        let t = counts("===== 2 failed, 10 passed, 1 error in 3.2s =====\n", "").unwrap();
        assert_eq!((t.passed_count, t.failed_count), (10, 3));
        let t = counts("Tests:       1 failed, 3 passed, 4 total\n", "").unwrap();
        assert_eq!((t.passed_count, t.failed_count), (3, 1));
        assert_eq!(problems("Found 24 errors.\n[*] 3 fixable", ""), Some(24));
        assert_eq!(
            problems("Found 302 errors in 41 files (checked 90 source files)", ""),
            Some(302)
        );
        assert_eq!(
            problems(
                "",
                "error: could not compile `x` (lib) due to 2 previous errors"
            ),
            Some(2)
        );
        assert_eq!(
            problems(
                "4 files would be reformatted, 10 files already formatted",
                ""
            ),
            Some(4)
        );
        assert_eq!(
            problems("a.py:1:1: F401 unused\nb.py:3:9: E501 long\n", ""),
            Some(2)
        );
        assert_eq!(problems("everything is fine", ""), None);
    }

    #[test]
    fn outcomes_absorb_a_package_under_its_folder() {
        let mut all = TestOutcomes::named("vitest");
        let mut a = TestOutcomes::named("vitest");
        a.record("src/a.test.ts".into(), true);
        a.record("src/b.test.ts::s > t".into(), false);
        a.by_file = true;
        all.absorb(a, Some("packages/a"));
        assert!(all.passed.contains("packages/a/src/a.test.ts"));
        assert!(all.failed.contains("packages/a/src/b.test.ts::s > t"));
        assert_eq!((all.passed_count, all.failed_count), (1, 1));
        assert!(all.by_file);
        // A failure of a file that passed as a whole on the base broke it.
        assert!(TestOutcomes::passed_in(&all, "packages/a/src/a.test.ts::x"));
        assert!(!TestOutcomes::passed_in(
            &all,
            "packages/a/src/c.test.ts::x"
        ));
    }
}
