//! Blaming only the change: what a check's output says in numbers — which tests passed and
//! failed (JUnit XML from pytest, cargo test's lines, else the counts of a summary line), how
//! many problems a linter found — and the judgement of a check that fails after the change
//! against the same check on the base: a check failing on the base is not held against the
//! change as long as it fails no worse; no test that passed on the base may fail, and the tests
//! the change adds must pass.

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
    pub messages: std::collections::BTreeMap<String, String>,
    /// Failed tests that passed when run again alone: flaky, blamed on nobody, and not used
    /// to judge a change.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub flaky: BTreeSet<String>,
    /// Whose report named the tests: how one of them is run again alone.
    #[serde(default)]
    pub runner: Runner,
}

/// The runner whose report named a check's tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    /// Only a summary line's counts, or not known.
    #[default]
    Counts,
    /// pytest's JUnit XML.
    Junit,
    /// cargo test's per-test lines.
    Cargo,
    /// go test's `--- PASS`/`--- FAIL` lines.
    Go,
    /// ctest's per-test lines.
    Ctest,
    /// jest's or vitest's default reporter: passing files, failing tests (`file::title`).
    Jest,
}

impl TestOutcomes {
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

/// The test binary a line of cargo's announces (`Running tests/x.rs (target/…)`, `Running
/// unittests src/lib.rs (…)`, `Doc-tests name`).
fn announced_binary(line: &str) -> Option<String> {
    if let Some(rest) = line.strip_prefix("Running ") {
        let rest = rest.trim_start_matches("unittests ");
        return Some(rest.split(" (").next().unwrap_or(rest).to_owned());
    }
    line.strip_prefix("Doc-tests ")
        .map(|name| format!("doc-tests {}", name.trim()))
}

/// cargo test's `test <name> ... ok|FAILED|ignored` lines, named by the test binary they ran in.
///
/// cargo announces each binary on stderr and its tests print on stdout, and the two streams are
/// read apart: the binaries are taken in the order stderr announced them, one for each `running
/// N tests` header on stdout (where a stream holds both, as with `2>&1`, the announcement
/// itself names the binary).
pub fn cargo_tests(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes {
        by_name: true,
        runner: Runner::Cargo,
        ..TestOutcomes::default()
    };
    let mut seen = false;
    let announced: Vec<String> = stderr
        .lines()
        .filter_map(|l| announced_binary(l.trim()))
        .collect();
    let mut queue = announced.into_iter();
    for (text, queued) in [(stdout, true), (stderr, false)] {
        let mut binary = String::new();
        let mut named_here = false;
        for line in text.lines() {
            let line = line.trim();
            if let Some(b) = announced_binary(line) {
                binary = b;
                named_here = true;
                continue;
            }
            if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test"))
            {
                if queued && !named_here {
                    binary = queue.next().unwrap_or_default();
                }
                named_here = false;
                continue;
            }
            let Some(rest) = line.strip_prefix("test ") else {
                continue;
            };
            let Some((name, outcome)) = rest.rsplit_once(" ... ") else {
                continue;
            };
            let id = format!("{binary}::{name}");
            match outcome.trim() {
                "ok" => {
                    seen = true;
                    t.passed.insert(id);
                }
                "FAILED" => {
                    seen = true;
                    t.failed.insert(id);
                }
                _ => {}
            }
        }
    }
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    seen.then_some(t)
}

/// The unescaped value of the attribute `name` of an XML element.
fn attr(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    let a = e.try_get_attribute(name).ok()??;
    a.unescape_value().ok().map(|v| v.into_owned())
}

/// The test cases of a JUnit XML report (pytest's `--junitxml`): failures and errors failed,
/// skipped ones left out. `None` when the text is not XML holding a test case.
pub fn junit(xml: &str) -> Option<TestOutcomes> {
    use quick_xml::events::Event;
    let mut t = TestOutcomes {
        by_name: true,
        runner: Runner::Junit,
        ..TestOutcomes::default()
    };
    let mut reader = quick_xml::Reader::from_str(xml);
    // The open test case.
    let mut case: Option<JunitCase> = None;
    let mut seen = false;
    loop {
        let event = reader.read_event().ok()?;
        let (e, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(e) if e.local_name().as_ref() == b"testcase" => {
                if let Some(c) = case.take() {
                    c.record(&mut t);
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        match e.local_name().as_ref() {
            b"testcase" => {
                seen = true;
                let opened = JunitCase {
                    id: format!(
                        "{}::{}",
                        attr(e, b"classname").unwrap_or_default(),
                        attr(e, b"name").unwrap_or_default()
                    ),
                    failed: None,
                    skipped: false,
                };
                if empty {
                    opened.record(&mut t);
                } else {
                    case = Some(opened);
                }
            }
            b"failure" | b"error" => {
                if let Some(JunitCase { failed, .. }) = case.as_mut() {
                    if failed.is_none() {
                        *failed = Some(failure_message(e));
                    }
                }
            }
            b"skipped" => {
                if let Some(JunitCase { skipped, .. }) = case.as_mut() {
                    *skipped = true;
                }
            }
            _ => {}
        }
    }
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    seen.then_some(t)
}

/// A test case of a JUnit report as it is read.
struct JunitCase {
    /// `classname::name`.
    id: String,
    /// It failed, with its message when it has one.
    failed: Option<Option<String>>,
    skipped: bool,
}

impl JunitCase {
    /// Adds the case to `t`: failed (with its message), passed, or — skipped — nowhere.
    fn record(self, t: &mut TestOutcomes) {
        match self.failed {
            Some(message) => {
                if let Some(m) = message {
                    t.messages.insert(self.id.clone(), m);
                }
                t.failed.insert(self.id);
            }
            None if !self.skipped => {
                t.passed.insert(self.id);
            }
            None => {}
        }
    }
}

/// The message of a `<failure>` or `<error>` element: its first line, at most 300 characters;
/// `None` when it is empty or missing.
fn failure_message(e: &quick_xml::events::BytesStart<'_>) -> Option<String> {
    attr(e, b"message")
        .map(|m| {
            m.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect::<String>()
        })
        .filter(|m| !m.is_empty())
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
    let located = text
        .lines()
        .filter(|l| {
            let mut parts = l.splitn(4, ':');
            let (path, line, col) = (parts.next(), parts.next(), parts.next());
            path.is_some_and(|p| !p.is_empty() && !p.contains(' '))
                && line.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                && col.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .count() as u64;
    (located > 0).then_some(located)
}

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

/// The numbers of one run of a check, as the comparison needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    pub tests: Option<TestOutcomes>,
    pub problems: Option<u64>,
    /// A lint's findings by rule ([`super::problem_kinds`]), when its output names them.
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

/// Judges a check that fails after the change, when it failed on the base as well.
pub fn judge(base: &Measure, after: &Measure) -> Judgement {
    if let (Some(b), Some(a)) = (&base.tests, &after.tests) {
        if b.by_name && a.by_name {
            // A test flaky on either side judges nothing.
            let steady = |t: &&String| !a.flaky.contains(*t) && !b.flaky.contains(*t);
            // A jest/vitest failure `file::title` breaks a file that passed on the base.
            let passed_on_base = |t: &String| {
                b.passed.contains(t)
                    || (a.runner == Runner::Jest
                        && t.split_once("::")
                            .is_some_and(|(f, _)| b.passed.contains(f)))
            };
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
    fn cargo_tests_are_named_by_their_binary() {
        // As captured: cargo's announcements on stderr, the tests on stdout, one block each.
        let err = "     Running unittests src/lib.rs (target/debug/deps/x-1)\n     Running tests/borsh.rs (target/debug/deps/borsh-2)\n     Running tests/it/main.rs (target/debug/deps/it-3)\n   Doc-tests x\n";
        let out = "\nrunning 1 test\ntest a::lib_ok ... ok\n\ntest result: ok. 1 passed\n\nrunning 2 tests\ntest array_vec::test_empty ... ok\ntest array_string::test_empty ... ok\n\ntest result: ok. 2 passed\n\nrunning 3 tests\ntest a::b ... ok\ntest a::c ... FAILED\ntest a::d ... ignored\n\ntest result: FAILED. 1 passed; 1 failed\n\nrunning 1 test\ntest src/lib.rs - f (line 3) ... ok\n";
        let t = cargo_tests(out, err).unwrap();
        assert_eq!(t.failed.iter().next().unwrap(), "tests/it/main.rs::a::c");
        assert!(t.passed.contains("src/lib.rs::a::lib_ok"));
        assert!(t.passed.contains("tests/borsh.rs::array_vec::test_empty"));
        assert!(t
            .passed
            .contains("tests/borsh.rs::array_string::test_empty"));
        assert!(t.passed.contains("doc-tests x::src/lib.rs - f (line 3)"));
        assert_eq!((t.passed_count, t.failed_count), (5, 1));
        // Both in one stream (`2>&1`): the announcements name the blocks themselves.
        let merged = "     Running unittests src/lib.rs (x)\n\nrunning 1 test\ntest a::lib_ok ... ok\n     Running tests/borsh.rs (y)\n\nrunning 1 test\ntest m::t ... FAILED\n";
        let t = cargo_tests(merged, "").unwrap();
        assert!(t.passed.contains("src/lib.rs::a::lib_ok"), "{t:?}");
        assert!(t.failed.contains("tests/borsh.rs::m::t"), "{t:?}");
        assert!(cargo_tests("no tests here", "").is_none());
    }

    #[test]
    fn junit_reports_name_every_case() {
        let xml = r#"<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a" name="test_ok" time="0.1" />
<testcase classname="tests.test_a" name="test_bad" time="0.1"><failure message="assert 1 == 2">x</failure></testcase>
<testcase classname="tests.test_a" name="test_err[a&amp;b]" time="0.1"><error message="boom"/></testcase>
<testcase classname="tests.test_a" name="test_skip" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>"#;
        let t = junit(xml).unwrap();
        assert_eq!(t.passed.len(), 1);
        assert_eq!(
            t.failed_lines(1),
            [
                "FAILED tests.test_a::test_bad - assert 1 == 2",
                "… and 1 more"
            ]
        );
        assert_eq!(t.messages["tests.test_a::test_err[a&b]"], "boom");
        assert!(t.failed.contains("tests.test_a::test_err[a&b]"));
        assert_eq!(t.failed_count, 2);
    }

    #[test]
    fn junit_attributes_are_read_as_xml_reads_them() {
        // pytest writes a message's newlines as `&#10;`; `>` may stand inside an attribute;
        // attributes may be single-quoted and on their own lines.
        let xml = "<testsuite><testcase\n classname='tests.test_b' name=\"test_cmp[a>b]\"><failure message=\"assert 3 &gt; 4&#10;where 3 = f()\">trace</failure></testcase><testcase classname=\"tests.test_b\" name=\"test_fine\"></testcase></testsuite>";
        let t = junit(xml).unwrap();
        assert!(t.failed.contains("tests.test_b::test_cmp[a>b]"), "{t:?}");
        assert_eq!(t.messages["tests.test_b::test_cmp[a>b]"], "assert 3 > 4");
        assert!(t.passed.contains("tests.test_b::test_fine"));
        assert!(junit("not xml at all").is_none());
    }

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
