//! The plain reader: the test formats no one tool owns, read where a check's own tools name no
//! test — TAP (`ok 1 - name`, `not ok 2 - name # SKIP`, its indented YAML diagnostics), and the
//! `PASS: name` / `FAIL: name` lines of automake's harness and of home-made runners (`XFAIL`
//! passes as expected, `XPASS` and `ERROR` fail, `SKIP` is neither). A run is read so only when
//! it prints such lines: at least one numbered TAP line, or at least one `PASS:` line (unittest
//! prints `FAIL:` headers, never `PASS:`). Its excerpt is each failure with the lines that
//! explain it, then the run's summary lines and make's `Error N`: the passing noise is what is
//! cut.

use crate::checks::outcomes::TestOutcomes;

/// The name its outcomes carry.
pub const NAME: &str = "plain";

/// The most lines kept after one failing test's line.
const MAX_DETAIL: usize = 20;
/// The most failures an excerpt shows in full.
const MAX_FAILURES: usize = 8;

/// One test line of a run.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    Passed(&'a str),
    Failed(&'a str),
    /// Skipped, or a test TAP marks `# TODO`.
    Neither,
}

/// A top-level TAP test line: `ok 3 - name`, `not ok 4 name # SKIP why`.
fn tap(line: &str) -> Option<Line<'_>> {
    let (ok, rest) = match line.strip_prefix("not ok ") {
        Some(rest) => (false, rest),
        None => (true, line.strip_prefix("ok ")?),
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix("- ").unwrap_or(rest).trim();
    let (name, directive) = match rest.split_once(" # ") {
        Some((n, d)) => (n.trim(), d.trim().to_ascii_uppercase()),
        None => (rest.strip_suffix(" #").unwrap_or(rest), String::new()),
    };
    if directive.starts_with("SKIP") || directive.starts_with("TODO") {
        return Some(Line::Neither);
    }
    Some(match ok {
        true => Line::Passed(name),
        false => Line::Failed(name),
    })
}

/// An automake-style line: `PASS: name`, `FAIL: name`, …; a summary that begins so (`FAIL: 3
/// of 381 tests failed`) is none.
fn marked(line: &str) -> Option<(&str, Line<'_>)> {
    let (word, rest) = line.split_once(": ")?;
    let name = rest.trim();
    if name.is_empty() || counted(name) {
        return None;
    }
    let line = match word {
        "PASS" | "XFAIL" => Line::Passed(name),
        "FAIL" | "XPASS" | "ERROR" => Line::Failed(name),
        "SKIP" => Line::Neither,
        _ => return None,
    };
    Some((word, line))
}

/// The plain formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TAP or `PASS:`/`FAIL:` lines.
    Any,
    /// `PASS:`/`FAIL:` lines only: TAP is read first by the runners that print it nested
    /// (`node --test`'s subtests).
    Marked,
}

/// The test lines of `text`, when it is a run of one of the plain `formats`.
fn lines(text: &str, format: Format) -> Vec<(usize, Line<'_>)> {
    let all: Vec<&str> = text.lines().collect();
    let taps: Vec<(usize, Line)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, l)| tap(l).map(|t| (i, t)))
        .collect();
    if !taps.is_empty() {
        return if format == Format::Any {
            taps
        } else {
            Vec::new()
        };
    }
    let marks: Vec<(usize, &str, Line)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, l)| marked(l).map(|(w, m)| (i, w, m)))
        .collect();
    if !marks.iter().any(|(_, w, _)| *w == "PASS") {
        return Vec::new();
    }
    marks.into_iter().map(|(i, _, m)| (i, m)).collect()
}

/// The tests a run in a plain format names; `None` when it prints none.
pub fn tests(stdout: &str, stderr: &str, format: Format) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named(NAME);
    for text in [stdout, stderr] {
        for (_, line) in lines(text, format) {
            match line {
                Line::Passed(n) => t.record(n.to_owned(), true),
                Line::Failed(n) => t.record(n.to_owned(), false),
                Line::Neither => {}
            }
        }
    }
    // A test that failed once and passed once (a retry) failed.
    let failed = t.failed.clone();
    t.passed.retain(|n| !failed.contains(n));
    t.finished()
}

/// Whether `line` sums a run up: a number of tests passed or failed (`378 of 381 tests
/// passed`, `2 failed, 3 passed`), a TAP or automake count (`# fail 2`, `# TOTAL: 4`), or make
/// saying a recipe failed (`make: *** [Makefile:12: test] Error 1`).
fn summary(line: &str) -> bool {
    let l = line.trim();
    let words = words(l);
    let tally = l.starts_with("# ")
        && words.last().is_some_and(|w| number(w))
        && matches!(
            words.get(1).map(String::as_str),
            Some(
                "tests" | "pass" | "fail" | "skip" | "todo" | "total" | "xfail" | "xpass" | "error"
            )
        );
    let make = (l.starts_with("make") || l.starts_with("gmake"))
        && l.contains("*** ")
        && l.contains("Error ");
    (counted(l) && tap(l).is_none() && marked(l).is_none()) || tally || make
}

/// The words of `line`, lower case, without the punctuation around them.
fn words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_ascii_lowercase()
        })
        .collect()
}

fn number(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_ascii_digit())
}

/// Whether `text` counts tests: a number before `passed`, `failed`, `tests`, … (`2 failed`,
/// `all 40 tests passed`).
fn counted(text: &str) -> bool {
    words(text).windows(2).any(|w| {
        number(&w[0])
            && matches!(
                w[1].as_str(),
                "passed" | "failed" | "failing" | "passing" | "tests" | "test" | "errors" | "error"
            )
    })
}

/// The failures of a run in a plain format, each with the lines under it, then its summary
/// lines; `None` when it is no such run or nothing failed.
pub fn excerpt(text: &str, format: Format) -> Option<String> {
    let found = lines(text, format);
    if !found.iter().any(|(_, l)| matches!(l, Line::Failed(_))) {
        return None;
    }
    let all: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = found.iter().map(|(i, _)| *i).collect();
    let mut out: Vec<String> = Vec::new();
    let failures: Vec<usize> = found
        .iter()
        .filter(|(_, l)| matches!(l, Line::Failed(_)))
        .map(|(i, _)| *i)
        .collect();
    for at in failures.iter().take(MAX_FAILURES) {
        out.push(all[*at].to_owned());
        // What follows it up to the next test line (TAP's diagnostics, a runner's message).
        let next = starts
            .iter()
            .find(|s| **s > *at)
            .copied()
            .unwrap_or(all.len());
        let detail: Vec<&str> = all[at + 1..next]
            .iter()
            .copied()
            .take_while(|l| !summary(l))
            .filter(|l| !l.trim().is_empty())
            .take(MAX_DETAIL)
            .collect();
        out.extend(detail.iter().map(|l| l.to_string()));
    }
    if failures.len() > MAX_FAILURES {
        out.push(format!(
            "… and {} more failing",
            failures.len() - MAX_FAILURES
        ));
    }
    let sums: Vec<&str> = all.iter().copied().filter(|l| summary(l)).collect();
    if !sums.is_empty() {
        out.push(String::new());
        out.extend(sums.iter().map(|l| l.to_string()));
    }
    Some(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A C library's home-made runner behind `make test`: banners, hundreds of `PASS:` lines,
    /// three failures and its own summary, then make's error.
    fn c_library() -> String {
        let mut out = String::from(
            "================================================================================\n",
        );
        out.push_str("  test suite\n================================================================================\n");
        for i in 0..380 {
            out.push_str(&format!("PASS: test_case_{i}\n"));
            if i == 120 {
                out.push_str("FAIL: test_vec3_norm\n  test/test_vec3.c:88: expected 1.000000, got 0.999000\n");
            }
        }
        out.push_str("FAIL: test_mat4_inv\n  test/test_mat4.c:12: ASSERT(glm_eq(a, b)) failed\nFAIL: test_quat_slerp\n");
        out.push_str("================================================================================\nFAIL: 378 of 381 tests passed.\nmake: *** [Makefile:12: test] Error 1\n");
        out
    }

    #[test]
    fn a_home_made_runners_pass_and_fail_lines_name_its_tests() {
        let t = tests(&c_library(), "", Format::Marked).unwrap();
        assert_eq!(t.runner, NAME);
        assert_eq!((t.passed_count, t.failed_count), (380, 3));
        assert!(t.failed.contains("test_vec3_norm") && t.failed.contains("test_quat_slerp"));
        assert!(
            !t.failed.iter().any(|n| n.contains("of 381")),
            "the summary is no test"
        );
        let e = excerpt(&c_library(), Format::Marked).unwrap();
        assert!(
            e.starts_with(
                "FAIL: test_vec3_norm\n  test/test_vec3.c:88: expected 1.000000, got 0.999000\n"
            ),
            "{e}"
        );
        assert!(
            e.contains("FAIL: test_mat4_inv\n  test/test_mat4.c:12: ASSERT"),
            "{e}"
        );
        assert!(e.contains("FAIL: test_quat_slerp"), "{e}");
        assert!(
            e.contains("FAIL: 378 of 381 tests passed.") && e.contains("Error 1"),
            "{e}"
        );
        assert!(!e.contains("PASS: "), "the passing noise is cut: {e}");
    }

    #[test]
    fn automake_marks_expected_failures_and_skips() {
        let out = "PASS: a\nXFAIL: b\nSKIP: c\nXPASS: d\nERROR: e\n# TOTAL: 5\n# PASS:  1\n";
        let t = tests(out, "", Format::Any).unwrap();
        assert_eq!(t.passed.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(t.failed.iter().collect::<Vec<_>>(), ["d", "e"]);
        let e = excerpt(out, Format::Marked).unwrap();
        assert!(e.contains("# TOTAL: 5"), "{e}");
    }

    #[test]
    fn unittests_failure_headers_are_not_a_plain_run() {
        let out = "======================================================================\nFAIL: test_x (tests.test_a.T.test_x)\n----------------------------------------------------------------------\nTraceback\nFAILED (failures=1)\n";
        assert_eq!(tests(out, "", Format::Any), None);
        assert_eq!(excerpt(out, Format::Any), None);
    }

    #[test]
    fn tap_with_its_diagnostics_and_directives() {
        let out = "TAP version 13\nok 1 - services › bitbucket › Skipped one # SKIP\nnot ok 2 - services › bitbucket › Push\n  ---\n    name: AssertionError\n    details:\n      'Difference (- actual, + expected):': |-\n        - 2\n        + 3\n  ...\nok 3 - services › bitbucket › Pull\nok 4 math adds\nnot ok 5 - flaky # TODO later\n\n1..5\n# tests 5\n# pass 2\n# skip 1\n# fail 1\n";
        assert_eq!(
            tests(out, "", Format::Marked),
            None,
            "TAP is not marked lines"
        );
        let t = tests(out, "", Format::Any).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["math adds", "services › bitbucket › Pull"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["services › bitbucket › Push"]
        );
        let e = excerpt(out, Format::Any).unwrap();
        assert!(
            e.starts_with(
                "not ok 2 - services › bitbucket › Push\n  ---\n    name: AssertionError"
            ),
            "{e}"
        );
        assert!(e.contains("        + 3"), "{e}");
        assert!(
            e.ends_with("# tests 5\n# pass 2\n# skip 1\n# fail 1"),
            "{e}"
        );
        assert!(!e.contains("ok 3"), "{e}");
    }

    #[test]
    fn a_passing_run_has_no_excerpt_and_prose_is_no_run() {
        assert_eq!(excerpt("ok 1 - a\nok 2 - b\n", Format::Any), None);
        assert_eq!(tests("ok, done\nnot ok at all\n", "", Format::Any), None);
        assert_eq!(
            tests("FAIL: something broke\n", "", Format::Any),
            None,
            "no PASS line"
        );
    }
}
