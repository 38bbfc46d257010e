//! Node's built-in runner (`node --test`): its tests read from TAP (its default when the output
//! is not a terminal, up to Node 22) or from the spec reporter (later Nodes' default), each named
//! by the titles from its outermost suite down, `suite > test` — Node does not say which file a
//! passing test is in. A file that fails to load is a failing test named by its path. Its failures
//! are explained by their TAP diagnostics or spec blocks.

use super::shell::Call;
use super::tool::{Lang, Printed, Role, Tool, Uses};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

pub struct NodeTest;

impl Tool for NodeTest {
    fn name(&self) -> &'static str {
        "node --test"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "node" | "nodejs") && call.args.iter().any(|a| a == "--test")
    }

    fn files(&self, command: &str, files: &[&str], uses: &Uses) -> Option<String> {
        // Files added to a call that names its own (`mocha test/`) would run beside them.
        uses.tail.filter(|t| !t.operands)?;
        super::tool::append_files(self.name(), command, files, uses, super::jest::test_file)
    }

    fn never_alone(&self) -> Option<&'static str> {
        Some("its options go before its files, so words added to the end of the check reach the tests, not node")
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        let root = printed.root;
        tap(printed.stdout, root).or_else(|| spec(printed.stdout, root))
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<&str> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if t.starts_with("not ok ") || (t.starts_with("✖ ") && !t.starts_with("✖ failing"))
            {
                let depth = indent(l);
                out.push(l);
                out.extend(
                    lines[i + 1..]
                        .iter()
                        .take_while(|n| n.trim().is_empty() || indent(n) > depth)
                        .filter(|n| {
                            !n.trim_start().starts_with("at ") && !n.contains("node:internal")
                        })
                        .take(20),
                );
            }
            if out.len() > super::excerpt::MAX_SECTION {
                break;
            }
        }
        (!out.is_empty()).then(|| out.join("\n"))
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A title as an id part: a file's absolute path made relative to the worktree `root`.
fn title(name: &str, root: Option<&std::path::Path>) -> String {
    let name = name.trim();
    match root.and_then(|r| name.strip_prefix(&format!("{}/", r.display()))) {
        Some(rel) => rel.to_owned(),
        None => name.to_owned(),
    }
}

/// One level of nesting while reading: its title, and whether a result was seen under it.
struct Level {
    title: String,
    depth: usize,
    children: bool,
    child_failed: bool,
}

/// The tests of TAP output: `# Subtest: name` opens a level, `ok N - name` / `not ok N - name`
/// at its depth closes it; leaves are recorded, and a suite whose own hook failed.
fn tap(text: &str, root: Option<&std::path::Path>) -> Option<TestOutcomes> {
    if !text.lines().any(|l| l.starts_with("TAP version")) {
        return None;
    }
    let mut t = TestOutcomes::named("node --test");
    let mut stack: Vec<Level> = Vec::new();
    for line in text.lines() {
        let depth = indent(line);
        let l = line.trim_start();
        if let Some(name) = l.strip_prefix("# Subtest: ") {
            stack.push(Level {
                title: title(name, root),
                depth,
                children: false,
                child_failed: false,
            });
            continue;
        }
        let (passed, rest) = match (l.strip_prefix("ok "), l.strip_prefix("not ok ")) {
            (Some(r), _) => (true, r),
            (_, Some(r)) => (false, r),
            _ => continue,
        };
        if stack.last().is_none_or(|s| s.depth != depth) {
            continue;
        }
        let Some(level) = stack.pop() else { continue };
        let directive = rest.contains(" # SKIP") || rest.contains(" # TODO");
        let path: Vec<&str> = stack
            .iter()
            .map(|s| s.title.as_str())
            .chain(std::iter::once(level.title.as_str()))
            .collect();
        let own_failure = !passed && !level.child_failed;
        if !directive && (!level.children || own_failure) {
            t.record(path.join(" > "), passed);
        }
        if let Some(parent) = stack.last_mut() {
            parent.children = true;
            parent.child_failed |= !passed;
        }
    }
    t.finished()
}

/// The tests of the spec reporter: `▶ suite` opens a level, a `✔`/`✖` line at its depth closes
/// it, any other `✔`/`✖` line is a test; the summary of failures at the end is not read again.
fn spec(text: &str, root: Option<&std::path::Path>) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("node --test");
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let depth = indent(line);
        let l = line.trim_start();
        if l.starts_with("✖ failing tests") {
            break;
        }
        if let Some(name) = l.strip_prefix("▶ ") {
            stack.push((depth, title(name, root)));
            continue;
        }
        let (passed, rest) = match (l.strip_prefix("✔ "), l.strip_prefix("✖ ")) {
            (Some(r), _) => (true, r),
            // ESLint's summary (`✖ 52 problems (0 errors, 52 warnings)`) is no test.
            (_, Some(r)) if eslint_summary(r) => continue,
            (_, Some(r)) => (false, r),
            _ => continue,
        };
        if rest.contains("# SKIP") || rest.contains("# TODO") {
            continue;
        }
        let name = rest.rsplit_once(" (").map_or(rest, |(n, _)| n).trim();
        if stack.last().is_some_and(|(d, n)| *d == depth && n == name) {
            stack.pop();
            continue;
        }
        stack.retain(|(d, _)| *d < depth);
        let path: Vec<&str> = stack
            .iter()
            .map(|(_, n)| n.as_str())
            .chain(std::iter::once(name))
            .collect();
        t.record(path.join(" > "), passed);
    }
    t.finished()
}

/// Whether the text after a `✖ ` is ESLint's summary: `52 problems (0 errors, 52 warnings)`.
fn eslint_summary(rest: &str) -> bool {
    let mut words = rest.split_whitespace();
    words
        .next()
        .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        && words
            .next()
            .is_some_and(|w| w == "problem" || w == "problems")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `node --test` on Node 20, as recorded (diagnostics shortened).
    const TAP: &str = "TAP version 13\n# Subtest: adds numbers\nok 1 - adds numbers\n  ---\n  duration_ms: 1.3\n  ...\n# Subtest: Math suite\n    # Subtest: nested level\n        # Subtest: multiplies with \"quotes\" & spaces\n        ok 1 - multiplies with \"quotes\" & spaces\n          ---\n          ...\n        1..1\n    ok 1 - nested level\n      ---\n      type: 'suite'\n      ...\n    1..1\nok 2 - Math suite\n  ---\n  ...\n# console.log from failing test\n# Subtest: parent with subtests\n    # Subtest: sub passes\n    ok 1 - sub passes\n      ---\n      ...\n    # Subtest: sub fails\n    not ok 2 - sub fails\n      ---\n      location: '/w/test/b_fail.test.js:6:11'\n      error: |-\n        Expected values to be strictly deep-equal:\n      ...\n    1..2\nnot ok 3 - parent with subtests\n  ---\n  failureType: 'subtestsFailed'\n  ...\n# Subtest: is skipped\nok 4 - is skipped # SKIP not today\n  ---\n  ...\n# Subtest: hook failure\n    # Subtest: never runs because of hook\n    not ok 1 - never runs because of hook\n      ---\n      failureType: 'cancelledByParent'\n      ...\n    1..1\nnot ok 7 - hook failure\n  ---\n  failureType: 'hookFailed'\n  ...\n# Subtest: /w/test/d_broken.test.js\nnot ok 8 - /w/test/d_broken.test.js\n  ---\n  error: 'test failed'\n  ...\n1..8\n# tests 7\n# pass 3\n# fail 3\n";

    #[test]
    fn an_eslint_summary_before_the_tests_is_no_failing_test() {
        let out = "> lint\n\n/w/lib/a.js\n  3:1  warning  Unexpected var  no-var\n\n✖ 52 problems (0 errors, 52 warnings)\n\n✔ adds (1.2ms)\n";
        let t = spec(out, None).unwrap();
        assert_eq!(t.failed.len(), 0, "{t:?}");
        assert!(t.passed.contains("adds"));
    }

    #[test]
    fn tap_names_each_test_by_its_suites() {
        let t = tap(TAP, Some(std::path::Path::new("/w"))).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "Math suite > nested level > multiplies with \"quotes\" & spaces",
                "adds numbers",
                "parent with subtests > sub passes"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "hook failure > never runs because of hook",
                "parent with subtests > sub fails",
                "test/d_broken.test.js"
            ]
        );
    }

    #[test]
    fn the_spec_reporter_names_the_same_tests() {
        let out = "✔ adds numbers (1.47ms)\n▶ Math suite\n  ▶ nested level\n    ✔ multiplies with \"quotes\" & spaces (0.25ms)\n  ✔ nested level (0.70ms)\n✔ Math suite (1.23ms)\nconsole.log from failing test\n▶ parent with subtests\n  ✔ sub passes (5.33ms)\n  ✖ sub fails (8.52ms)\n    AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n\n  ✔ sub passes after (0.24ms)\n✖ parent with subtests (16.08ms)\n﹣ is skipped (2.15ms) # not today\n✔ is todo (0.30ms) # TODO\nℹ tests 7\n\n✖ failing tests:\n\n✖ sub fails (8.52ms)\n";
        let t = spec(out, None).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "Math suite > nested level > multiplies with \"quotes\" & spaces",
                "adds numbers",
                "parent with subtests > sub passes",
                "parent with subtests > sub passes after"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["parent with subtests > sub fails"]
        );
        let e = NodeTest.excerpt(out).unwrap();
        assert!(
            e.starts_with("  ✖ sub fails (8.52ms)\n    AssertionError"),
            "{e}"
        );
    }
}
