//! ctest: its tests named as CMake declares them, from its `N/M Test #K: name ....   Passed`
//! lines (`***Failed`, `***Timeout`, `***Exception…` failed; `***Not Run` and `***Skipped`
//! neither).

use super::shell::Call;
use super::tool::Uses;
use super::tool::{Alone, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

pub struct Ctest;

impl Tool for Ctest {
    fn name(&self) -> &'static str {
        "ctest"
    }

    fn role(&self) -> Role {
        Role::Suite
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "ctest"
    }

    fn build_system(&self) -> Option<&'static str> {
        Some("cmake")
    }

    fn ran_no_test<'a>(&self, printed: &Printed<'a>) -> Option<&'a str> {
        super::meson::said(printed, "No tests were found")
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("calc_adds")
    }

    /// `-R '^name$'` added where words reach ctest.
    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        let pattern = format!("^{}$", super::jest::regex_escape(id));
        Some(Alone {
            command: tail.append(command, &["-R", &pattern]),
            env: Vec::new(),
        })
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout, printed.stderr)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.contains("tests passed, ") && l.contains(" failed out of "),
            |l| l.trim().is_empty(),
        )
        .map(|summary| {
            let failing: Vec<&str> = text
                .lines()
                .filter(|l| l.contains(" Test #") && l.contains("***"))
                .collect();
            format!("{}\n{summary}", failing.join("\n"))
        })
    }
}

/// ctest's results, by its per-test lines.
pub fn read(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("ctest");
    for line in stdout.lines().chain(stderr.lines()) {
        let Some(at) = line.find(" Test #") else {
            continue;
        };
        let rest = &line[at + " Test #".len()..];
        let Some((number, rest)) = rest.split_once(": ") else {
            continue;
        };
        if !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let name = rest.split(" .").next().unwrap_or(rest).trim();
        let verdict = rest[name.len()..].trim_start_matches([' ', '.']);
        if name.is_empty() {
            continue;
        }
        if verdict.starts_with("Passed") {
            t.record(name.to_owned(), true);
        } else if verdict.starts_with("***Not Run") || verdict.starts_with("***Skipped") {
            continue;
        } else if verdict.starts_with("***") || verdict.starts_with("Failed") {
            t.record(name.to_owned(), false);
        }
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_is_named() {
        let out = "Test project /tmp/b\n    Start 1: add\n1/4 Test #1: add ..............................   Passed    0.00 sec\n    Start 2: sub\n2/4 Test #2: sub ..............................***Failed    0.01 sec\n3/4 Test #3: slow ...........................***Timeout  10.00 sec\n4/4 Test #4: gone ...........................***Not Run   0.00 sec\n\n50% tests passed, 2 tests failed out of 4\n";
        let t = read(out, "").unwrap();
        assert_eq!(t.passed.iter().collect::<Vec<_>>(), ["add"]);
        assert_eq!(t.failed.iter().collect::<Vec<_>>(), ["slow", "sub"]);
        assert!(read("no tests were found", "").is_none());
    }
    #[test]
    fn one_test_runs_alone_by_its_name() {
        let uses = super::super::recognise("ctest --test-dir build", None);
        let alone = Ctest
            .alone("ctest --test-dir build", "vec3.norm", &[], &uses)
            .unwrap();
        assert_eq!(alone.command, "ctest --test-dir build -R '^vec3\\.norm$'");
        let wrapped = super::super::recognise("cd build && ctest | tee log", None);
        assert!(Ctest
            .alone("cd build && ctest | tee log", "a", &[], &wrapped)
            .is_none());
    }
}
