//! node-tap (`tap`): asked for TAP (`TAP_REPORTER=tap`, harmless to anything else), whose
//! subtests nest under each test file (`# Subtest: test/x.test.js`, then the file's own
//! `# Subtest: title` blocks, each closed by its `ok`/`not ok` line at the same indentation).
//! Every test is named, passing or failing, `file::title` (a nested one `file::outer > inner`);
//! an `ok` line with no subtest of its own is an assertion, never a test. One test runs alone by
//! its file and `--grep` on its title; a failure is explained by its `not ok` lines with their
//! YAML diagnostics (the diff, where it was), then the run's summary.

use super::shell::Call;
use super::tool::{Alone, Lang, Prepared, Printed, Role, Tool, Uses};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct NodeTap;

impl Tool for NodeTap {
    fn name(&self) -> &'static str {
        "node-tap"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "tap"
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        run.set("TAP_REPORTER", "tap");
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout).or_else(|| read(printed.stderr))
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("test/calc.test.js::multiplies")
    }

    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        let (file, path) = id.split_once("::")?;
        let title = path.rsplit(" > ").next()?;
        if title.is_empty() || file.starts_with('-') {
            return None;
        }
        let grep = format!("--grep=^{}$", super::jest::regex_escape(title));
        Some(Alone {
            command: tail.append(command, &[file, &grep]),
            env: Vec::new(),
        })
    }

    fn files(&self, command: &str, files: &[&str], uses: &Uses) -> Option<String> {
        super::tool::append_files(self.name(), command, files, uses, super::jest::test_file)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        let lines: Vec<&str> = text.lines().collect();
        let containers = closing_lines(text);
        let mut out: Vec<&str> = Vec::new();
        let mut i = 0;
        while i < lines.len() && out.len() < super::excerpt::MAX_SECTION {
            let line = lines[i];
            i += 1;
            if !line.trim_start().starts_with("not ok ") {
                continue;
            }
            out.push(line);
            // A failing subtest's own line says which test it is; a failing assertion's
            // diagnostics (the indented YAML after it, through `...`) say why — all but where
            // it was called from, and node-tap's own command line.
            if containers.contains(&(i - 1)) || lines.get(i).is_none_or(|l| l.trim() != "---") {
                continue;
            }
            let indent = line.len() - line.trim_start().len();
            let mut skipping: Option<usize> = None;
            while let Some(l) = lines.get(i) {
                let depth = l.len() - l.trim_start().len();
                if depth <= indent && !l.trim().is_empty() {
                    break;
                }
                i += 1;
                if skipping.is_some_and(|d| depth > d) {
                    continue;
                }
                skipping = None;
                let key = l.trim_start();
                if key.starts_with("at:") || key.starts_with("stack:") {
                    skipping = Some(depth);
                    continue;
                }
                if !l.contains("node_modules/") {
                    out.push(l);
                }
                if l.trim() == "..." {
                    break;
                }
            }
        }
        out.extend(lines.iter().filter(|l| l.starts_with("# {")).copied());
        let text = out.join("\n");
        (!text.trim().is_empty()).then_some(text)
    }
}

/// The lines (by index) of `text` that close a subtest: a test's or a file's result, as opposed
/// to an assertion's.
fn closing_lines(text: &str) -> Vec<usize> {
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if let Some(name) = body.strip_prefix("# Subtest: ") {
            open.retain(|(i, _)| *i < indent);
            open.push((indent, name.trim().to_owned()));
        } else if let Some((_, name)) = result(body) {
            if let Some(at) = open.iter().rposition(|(i, o)| *i == indent && o == name) {
                open.truncate(at);
                out.push(n);
            }
        }
    }
    out
}

/// The name on a TAP result line (`ok 2 - title # time=3ms` → `title`), and whether it passed.
fn result(line: &str) -> Option<(bool, &str)> {
    let (passed, rest) = match line.strip_prefix("not ok ") {
        Some(rest) => (false, rest),
        None => (true, line.strip_prefix("ok ")?),
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let name = rest.strip_prefix(" - ").unwrap_or(rest.trim_start());
    let name = name.split(" # ").next().unwrap_or(name).trim();
    Some((passed, name))
}

/// node-tap's TAP: each subtest closed by its result line, named by the subtests it is in.
fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("node-tap");
    // The open subtests: (indentation, name, whether a subtest closed inside it).
    let mut open: Vec<(usize, String, bool)> = Vec::new();
    let mut seen = false;
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if let Some(name) = body.strip_prefix("# Subtest: ") {
            open.retain(|(i, ..)| *i < indent);
            open.push((indent, name.trim().to_owned(), false));
            seen = true;
            continue;
        }
        let Some((passed, name)) = result(body) else {
            continue;
        };
        let Some(at) = open.iter().rposition(|(i, n, _)| *i == indent && n == name) else {
            // An assertion, or a subtest skipped by a filter: no test of its own.
            continue;
        };
        let (_, own, inner) = open.remove(at);
        open.truncate(at);
        let names: Vec<&str> = open.iter().map(|(_, n, _)| n.as_str()).collect();
        match names.split_first() {
            // A test of a file (or one nested deeper).
            Some((file, outer)) => {
                let path: Vec<&str> = outer.iter().copied().chain([own.as_str()]).collect();
                t.record(format!("{file}::{}", path.join(" > ")), passed);
                if let Some(parent) = open.last_mut() {
                    parent.2 = true;
                }
            }
            // A file whose tests never ran (it did not load): the file itself.
            None if !inner => t.record(own, passed),
            None => {}
        }
    }
    if !seen {
        return None;
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tap` 21 on two files, as recorded (stdout not a terminal): one failing test with its
    /// diff, two passing.
    const RUN: &str = include_str!("../../../tests/fixtures/tools/node-tap-21.txt");

    #[test]
    fn each_test_is_named_by_its_file_and_title_and_assertions_are_not_tests() {
        let t = read(RUN).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["test/calc.test.js::adds", "test/other.test.js::passes too"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["test/calc.test.js::multiplies"]
        );
        assert!(t.by_name);
    }

    #[test]
    fn a_nested_subtest_and_a_file_that_did_not_load() {
        let text = "# Subtest: test/a.test.js\n    # Subtest: outer\n        # Subtest: inner\n            ok 1 - should be equal\n            1..1\n        ok 1 - inner # time=1ms\n        1..1\n    ok 1 - outer\n    1..1\nok 1 - test/a.test.js\n# Subtest: test/b.test.js\nnot ok 2 - test/b.test.js # time=3ms\n";
        let t = read(text).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["test/a.test.js::outer", "test/a.test.js::outer > inner"]
        );
        assert_eq!(t.failed.iter().collect::<Vec<_>>(), ["test/b.test.js"]);
    }

    #[test]
    fn a_failure_is_explained_by_its_diagnostics_and_the_summary() {
        let e = NodeTap.excerpt(RUN).unwrap();
        assert!(e.contains("not ok 1 - mul 2 3"), "{e}");
        assert!(e.contains("-6") && e.contains("+5"), "the diff: {e}");
        assert!(e.contains("# { total: 3, pass: 2, fail: 1 }"), "{e}");
        assert!(!e.contains("ok 1 - adds"), "no passing test: {e}");
        assert!(!e.contains("node_modules/"), "{e}");
        assert!(
            !e.contains("command:") && !e.contains("stack:"),
            "no noise: {e}"
        );
        assert!(
            e.contains("not ok 2 - multiplies"),
            "the failing test's own line: {e}"
        );
    }

    #[test]
    fn one_test_runs_alone_by_its_file_and_title() {
        let uses = crate::checks::tools::recognise("npx tap", None);
        let how = NodeTap
            .alone("npx tap", "test/calc.test.js::multiplies", &[], &uses)
            .unwrap();
        assert_eq!(
            how.command,
            "npx tap test/calc.test.js '--grep=^multiplies$'"
        );
        assert!(uses.tools.iter().any(|t| *t == "node-tap"));
    }
}
