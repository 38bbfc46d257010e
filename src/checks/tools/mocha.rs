//! mocha: its tests read from the spec reporter (its default; a project that configures another
//! — `dot` names no passing test — is run with `--reporter spec` where the command starts mocha
//! itself), each named by its suites' titles down to its own, `suite > test`: `✔ title` passed,
//! `N) title` failed. Its failures are explained by the numbered blocks after the summary.

use super::shell::Call;
use super::tool::Uses;
use super::tool::{Alone, Lang, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct Mocha;

impl Tool for Mocha {
    fn name(&self) -> &'static str {
        "mocha"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "mocha" | "_mocha")
    }

    /// The files as operands where the call names none; where it names its own (`mocha
    /// test/`), files added would run beside them, so every spec file is ignored (both spellings
    /// mocha looks paths up by) and the change's are loaded by `--file`, which `--ignore` does
    /// not reach.
    fn files(&self, command: &str, files: &[&str], uses: &Uses) -> Option<String> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        if !tail.operands {
            return super::tool::append_files(
                self.name(),
                command,
                files,
                uses,
                super::jest::test_file,
            );
        }
        let ours = super::tool::test_files(files, super::jest::test_file);
        let mut words = vec!["--ignore", "**", "--ignore", "./**"];
        for f in files {
            words.extend(["--file", f]);
        }
        ours.then(|| tail.append(command, &words))
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        let direct = run.command.trim_start().starts_with("mocha")
            || run.command.trim_start().starts_with("npx mocha");
        let chosen = run
            .command
            .split_whitespace()
            .any(|w| w == "--reporter" || w == "-R" || w.starts_with("--reporter="));
        if direct && !chosen && super::shell::plain(&run.command) {
            run.command = format!("{} --reporter spec", run.command.trim_end());
        }
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("calc > adds")
    }

    /// `--grep '^suite name$'` (mocha matches a test's titles joined by spaces) added where
    /// words reach mocha.
    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        let full = id.split(" > ").collect::<Vec<_>>().join(" ");
        let pattern = format!("^{}$", super::jest::regex_escape(&full));
        Some(Alone {
            command: tail.append(command, &["--grep", &pattern]),
            env: Vec::new(),
        })
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        spec(printed.stdout)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.trim_start().starts_with("1) ") && !l.starts_with("    "),
            |_| false,
        )
    }
}

/// The tests of mocha's spec reporter, nested by their indentation (two spaces a level).
fn spec(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("mocha");
    let mut suites: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        if l.is_empty() {
            continue;
        }
        let depth = line.len() - l.len();
        // The summary: `5 passing (11ms)`; the failures' blocks follow.
        if l.split_whitespace().nth(1) == Some("passing") {
            break;
        }
        if depth < 2 {
            continue;
        }
        suites.retain(|(d, _)| *d < depth);
        let path = |name: &str| {
            suites
                .iter()
                .map(|(_, s)| s.as_str())
                .chain(std::iter::once(name.trim()))
                .collect::<Vec<_>>()
                .join(" > ")
        };
        if let Some(rest) = l.strip_prefix("✔ ").or_else(|| l.strip_prefix("✓ ")) {
            let name = match rest.rsplit_once(" (") {
                Some((n, ms)) if ms.ends_with("ms)") => n,
                _ => rest,
            };
            t.record(path(name), true);
        } else if let Some((n, rest)) = l.split_once(") ") {
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
                t.record(path(rest), false);
            }
        } else if !l.starts_with("- ") {
            suites.push((depth, l.to_owned()));
        }
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mocha` with its default reporter, as recorded.
    const SPEC: &str = "\n\n  ✔ adds numbers (top level)\n  ✔ runs after the failures\n  Math suite\n    nested level\n      ✔ multiplies with \"quotes\" & spaces\n\n  Failing suite\n    ✔ passes before\nconsole.log from failing test\n    1) object equality fails\n    ✔ passes after\n\n  mixed\n    - is skipped\n    - is pending (no body)\n    2) throws outside an assertion\n    hook failure\n      3) \"before all\" hook for \"never runs because of hook\"\n\n\n  5 passing (11ms)\n  2 pending\n  3 failing\n\n  1) Failing suite\n       object equality fails:\n\n      AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n";

    #[test]
    fn spec_names_each_test_by_its_suites() {
        let t = spec(SPEC).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "Failing suite > passes after",
                "Failing suite > passes before",
                "Math suite > nested level > multiplies with \"quotes\" & spaces",
                "adds numbers (top level)",
                "runs after the failures"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "Failing suite > object equality fails",
                "mixed > hook failure > \"before all\" hook for \"never runs because of hook\"",
                "mixed > throws outside an assertion"
            ]
        );
        let e = Mocha.excerpt(SPEC).unwrap();
        assert!(
            e.starts_with("  1) Failing suite\n       object equality fails:"),
            "{e}"
        );
    }

    #[test]
    fn a_configured_reporter_is_replaced_by_spec_where_mocha_is_started_directly() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Prepared {
            command: "mocha test/".into(),
            ..Prepared::default()
        };
        Mocha.prepare(&mut run, dir.path());
        assert_eq!(run.command, "mocha test/ --reporter spec");
        let mut chosen = Prepared {
            command: "mocha --reporter tap".into(),
            ..Prepared::default()
        };
        Mocha.prepare(&mut chosen, dir.path());
        assert_eq!(chosen.command, "mocha --reporter tap");
    }
    #[test]
    fn one_test_runs_alone_by_its_full_title() {
        let uses = super::super::recognise("mocha --reporter spec", None);
        let alone = Mocha
            .alone(
                "mocha --reporter spec",
                "Math suite > adds (1 + 2)",
                &[],
                &uses,
            )
            .unwrap();
        assert_eq!(
            alone.command,
            "mocha --reporter spec --grep '^Math suite adds \\(1 \\+ 2\\)$'"
        );
    }

    #[test]
    fn the_changes_files_run_alone_whether_or_not_the_call_names_its_own() {
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[(
                "package.json",
                r#"{"scripts": {"test": "mocha --check-leaks", "all": "mocha test/"}}"#,
            )],
        );
        let files = |command: &str| {
            let uses = crate::checks::tools::recognise(command, Some(&p));
            Mocha.files(command, &["test/new.test.js"], &uses)
        };
        assert_eq!(
            files("npm test").as_deref(),
            Some("npm test -- test/new.test.js")
        );
        assert_eq!(
            files("npx mocha").as_deref(),
            Some("npx mocha test/new.test.js")
        );
        // `test/` would run beside files added as operands: it is ignored instead, and the
        // change's files loaded by `--file` (checked against mocha 10 in the field).
        assert_eq!(
            files("npm run all").as_deref(),
            Some("npm run all -- --ignore '**' --ignore './**' --file test/new.test.js")
        );
        assert_eq!(
            files("npx mocha test/").as_deref(),
            Some("npx mocha test/ --ignore '**' --ignore './**' --file test/new.test.js")
        );
        let uses = crate::checks::tools::recognise("npx mocha test/", Some(&p));
        assert_eq!(Mocha.files("npx mocha test/", &["README.md"], &uses), None);
        assert_eq!(Mocha.files("npx mocha test/", &[], &uses), None);
    }
}
