//! AVA: its tests read from its default reporter, `✔ title` passed and `✘ [fail]: title
//! message` failed, each title its file's path (from the tests' folder, without extension) and
//! the test's own, joined by ` › ` — named here `file > path > title`, as node's runners are.
//! A failure's line carries its message after the title; the blocks after the `─` rule name
//! each failing title alone, which tells where the title ends. Under `--tap` the plain reader
//! reads it. One test runs alone with `--match`, by its own title.

use super::shell::Call;
use super::tool::Uses;
use super::tool::{Alone, Lang, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

pub struct Ava;

/// How AVA joins a file's path and a test's title.
const JOINER: &str = " › ";

impl Tool for Ava {
    fn name(&self) -> &'static str {
        "ava"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "ava"
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout).or_else(|| read(printed.stderr))
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("test > adds")
    }

    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        let title = id.rsplit(" > ").next()?;
        // `*` and a leading `!` are patterns to --match.
        if title.is_empty() || title.contains('*') || title.starts_with('!') {
            return None;
        }
        Some(Alone {
            command: tail.append(command, &["--match", title]),
            env: Vec::new(),
        })
    }

    fn files(&self, command: &str, files: &[&str], uses: &super::tool::Uses) -> Option<String> {
        super::tool::append_files(self.name(), command, files, uses, super::jest::test_file)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        let lines: Vec<&str> = text.lines().collect();
        let rule = lines.iter().position(|l| l.trim() == "─")?;
        // The failing tests' lines, then their blocks through the summary (what follows it —
        // c8's table — is another tool's), without the stack frames of AVA's own code.
        let mut out: Vec<&str> = lines[..rule]
            .iter()
            .copied()
            .filter(|l| l.trim_start().starts_with("✘ "))
            .collect();
        let end = lines
            .iter()
            .rposition(|l| summary(l))
            .filter(|e| *e > rule)
            .map_or(lines.len(), |e| e + 1);
        let blocks = lines[rule + 1..end].iter().copied().filter(|l| {
            l.trim() != "─" && !l.contains("node_modules/") && !l.contains("node:internal")
        });
        let blocks: Vec<&str> = blocks.collect();
        let room = super::excerpt::MAX_SECTION.saturating_sub(out.len());
        if blocks.len() > room {
            // Cut in the middle: the summary stays.
            out.extend(&blocks[..room.saturating_sub(3)]);
            out.push("  …");
            out.extend(blocks.iter().rev().take(2).rev());
        } else {
            out.extend(blocks);
        }
        let text = out.join("\n");
        (!text.trim().is_empty()).then(|| text.trim_matches('\n').to_owned())
    }
}

/// Whether `line` is a line of AVA's summary: `3 tests passed`, `1 test failed`, `2 known
/// failures`.
fn summary(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (Some(n), Some(what)) = (words.next(), words.next()) else {
        return false;
    };
    n.chars().all(|c| c.is_ascii_digit()) && matches!(what, "test" | "tests" | "known")
}

/// The titles AVA's failure blocks name alone on their line, after its `─` rule.
fn block_titles(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(rule) = lines.iter().position(|l| l.trim() == "─") else {
        return Vec::new();
    };
    lines[rule..]
        .windows(3)
        .filter(|w| w[0].trim().is_empty() && !w[1].trim().is_empty() && w[2].trim().is_empty())
        .map(|w| w[1].trim())
        .collect()
}

/// AVA's default reporter's tests.
fn read(text: &str) -> Option<TestOutcomes> {
    let titles = block_titles(text);
    let mut t = TestOutcomes::named("ava");
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("✔ ") {
            let rest = rest.strip_prefix("[expected fail] ").unwrap_or(rest);
            t.record(id(strip_duration(rest)), true);
        } else if let Some(rest) = l.strip_prefix("✘ [fail]: ") {
            // The message follows the title: the longest title of a block that begins it.
            let title = titles
                .iter()
                .filter(|b| rest == **b || rest.starts_with(&format!("{b} ")))
                .max_by_key(|b| b.len())
                .copied()
                .unwrap_or(rest);
            t.record(id(title), false);
        }
    }
    t.finished()
}

/// A title without the duration AVA adds to a slow test (`title (1.2s)`).
fn strip_duration(title: &str) -> &str {
    match title.rsplit_once(" (") {
        Some((t, d))
            if d.ends_with("ms)")
                || (d.ends_with("s)") && d.starts_with(|c: char| c.is_ascii_digit())) =>
        {
            t
        }
        _ => title,
    }
}

fn id(title: &str) -> String {
    title.trim().replace(JOINER, " > ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `npx ava` (AVA 6) on two files, as recorded: a skip, two failures, an assertion diff and a
    /// thrown error.
    const RUN: &str = "\n  - [skip] services › bitbucket › Skipped one\n  ✘ [fail]: services › bitbucket › Push\n  ✔ services › bitbucket › Pull\n  ✔ services › bitbucket › with [brackets] and › arrow\n  ✔ math › adds (1.2s)\n  ✘ [fail]: math › throws Error thrown in test\n  ─\n\n  services › bitbucket › Push\n\n  test/services/bitbucket.js:2\n\n   1: const test = require('ava');           \n   2: test('Push', t => { t.is(1 + 1, 3); });\n   3: test('Pull', t => { t.pass(); });      \n\n  Difference (- actual, + expected):\n\n  - 2\n  + 3\n\n  › test/services/bitbucket.js:2:23\n\n\n\n  math › throws\n\n  Error thrown in test:\n\n  Error {\n    message: 'boom',\n  }\n\n  Error: boom\n      at /work/ava/test/math.js:3:29\n      at Test.callFn (file:///work/ava/node_modules/ava/lib/test.js:525:26)\n\n  ─\n\n  2 tests failed\n  1 test skipped\n";

    #[test]
    fn the_default_reporter_names_each_test_and_its_failures() {
        let t = read(RUN).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "math > adds",
                "services > bitbucket > Pull",
                "services > bitbucket > with [brackets] and > arrow"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["math > throws", "services > bitbucket > Push"],
            "the message after a title is no part of it"
        );
        assert_eq!(t.runner, "ava");
    }

    #[test]
    fn a_failure_is_explained_by_its_block_and_the_summary() {
        let e = Ava
            .excerpt(&format!("{RUN}---|---\nAll files | 100 |\n"))
            .unwrap();
        assert!(
            e.starts_with("  ✘ [fail]: services › bitbucket › Push\n  ✘ [fail]: math › throws Error thrown in test\n"),
            "{e}"
        );
        assert!(e.contains("\n  services › bitbucket › Push\n"), "{e}");
        assert!(!e.contains("All files"), "c8's table is not AVA's: {e}");
        assert!(e.contains("  - 2\n  + 3"), "{e}");
        assert!(e.contains("Error: boom"), "{e}");
        assert!(!e.contains("node_modules/"), "{e}");
        assert!(e.ends_with("  2 tests failed\n  1 test skipped"), "{e}");
        assert_eq!(Ava.excerpt("  ✔ a › b\n\n  1 test passed\n"), None);
    }

    #[test]
    fn one_test_runs_alone_by_its_title() {
        let uses = super::super::recognise("npx ava", None);
        let alone = Ava.alone("npx ava", "math > throws", &[], &uses).unwrap();
        assert_eq!(alone.command, "npx ava --match throws");
        let uses = super::super::recognise("ava --verbose", None);
        assert!(Ava.alone("ava", "math > throws *", &[], &uses).is_none());
        assert!(Ava
            .alone("ava", "a > it's", &[], &uses)
            .unwrap()
            .command
            .ends_with("--match 'it'\\''s'"));
    }
}
