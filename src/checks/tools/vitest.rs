//! vitest: where words appended to the check's command reach it, it is asked for its JSON
//! report beside its default reporter (`--reporter=default --reporter=json
//! --outputFile.json=…`), which has jest's shape and names every test as `file::suite > name`;
//! one test runs alone by its file (a filter by substring) and `-t '^suite name$'`. Otherwise
//! its tests are read from the default reporter — each file that passed (`✓ file (N tests)`,
//! standing for all its tests) and each failing test (`× suite > name` under its `❯ file`, and
//! `FAIL  file > suite > name` in the failures' blocks). Its failures are explained by their
//! `FAIL` blocks.

use super::jest::{file_of, JsonReport};
use super::shell::Call;
use super::tool::Uses;
use super::tool::{Alone, Lang, Missed, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

/// vitest's JSON report: a file is given to it as a substring.
const JSON: JsonReport = JsonReport {
    runner: "vitest",
    joiner: " > ",
    file_by_regex: false,
};

pub struct Vitest;

impl Tool for Vitest {
    fn name(&self) -> &'static str {
        "vitest"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "vitest"
    }

    fn coverage_reports(&self) -> &'static [&'static str] {
        super::jest::ISTANBUL_REPORTS
    }

    fn coverage(&self, env: &super::tool::Env) -> Option<super::coverage_spec::CoverageSpec> {
        super::jest::collects_coverage(env.project, self.name())
    }

    fn prepare(&self, run: &mut Prepared, scratch: &Path) {
        // The project chose its reporters or a report of its own: they stay.
        if let Some((tail, report)) = JSON.report(run, scratch, &["--reporter", "--outputFile"]) {
            let output = format!("--outputFile.json={}", report.display());
            run.command = tail.append(
                &run.command,
                &["--reporter=default", "--reporter=json", &output],
            );
        }
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        JSON.tests(printed, read)
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("test/calc.test.ts::calc > adds")
    }

    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        JSON.alone(command, id, uses)
    }

    fn files(&self, command: &str, files: &[&str], uses: &super::tool::Uses) -> Option<String> {
        super::tool::append_files(self.name(), command, files, uses, super::jest::test_file)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.trim_start().starts_with("FAIL ") && l.contains(" > "),
            |l| l.trim_start().starts_with("Test Files"),
        )
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        Some(format!(
            "no check's test run reported {}: a check must run it",
            test.file
        ))
    }
}

/// vitest's results by its default reporter.
pub fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("vitest");
    t.by_file = true;
    let text = crate::output::strip_ansi(text);
    // The failing file whose tests the `×` lines under it name.
    let mut failing: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("❯ ") {
            failing = file_of(rest);
            continue;
        }
        if let (Some(rest), Some(file)) = (l.strip_prefix("× "), &failing) {
            let title = match rest.rsplit_once(' ') {
                Some((t, ms))
                    if ms.ends_with("ms") && ms[..ms.len() - 2].parse::<f64>().is_ok() =>
                {
                    t
                }
                _ => rest,
            };
            t.failed.insert(format!("{file}::{}", title.trim()));
            continue;
        }
        if let Some(rest) = l.strip_prefix("✓ ") {
            if rest.contains(" test") {
                if let Some(f) = file_of(rest) {
                    t.passed.insert(f);
                }
            }
            continue;
        }
        if let Some((file, title)) = l
            .strip_prefix("FAIL ")
            .and_then(|rest| rest.trim_start().split_once(" > "))
        {
            if file_of(file).is_some() {
                t.failed
                    .insert(format!("{}::{}", file.trim(), title.trim()));
            }
        }
    }
    let failed_files: Vec<String> = t
        .failed
        .iter()
        .filter_map(|id| id.split_once("::").map(|(f, _)| f.to_owned()))
        .collect();
    t.passed.retain(|f| !failed_files.contains(f));
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passing_files_and_failing_tests_are_named() {
        let vitest = " ✓ src/sum.test.ts (2 tests) 3ms\n ❯ src/fail.test.ts (2 tests | 1 failed) 5ms\n   × fail > broken 3ms\n\n FAIL  src/fail.test.ts > fail > broken\nAssertionError: expected 1 to be 2\n\n Test Files  1 failed | 1 passed (2)\n";
        let t = read(vitest).unwrap();
        assert_eq!(t.passed.iter().collect::<Vec<_>>(), ["src/sum.test.ts"]);
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["src/fail.test.ts::fail > broken"]
        );
        assert!(read("everything is fine").is_none());
    }

    #[test]
    fn the_report_is_asked_for_and_one_test_runs_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::in_memory(
            Path::new("/w"),
            &[(
                "package.json",
                r#"{"scripts": {"test": "vitest run --globals"}}"#,
            )],
        );
        let uses = crate::checks::tools::recognise("npm test", Some(&p));
        let run = crate::checks::tools::prepare(&uses, "npm test", &[], dir.path());
        assert_eq!(
            run.command,
            format!(
                "npm test -- --reporter=default --reporter=json --outputFile.json={}/vitest/report.json",
                dir.path().display()
            )
        );
        let a = Vitest
            .alone("npm test", "test/a.test.js::zip > packs (a+b)", &[], &uses)
            .unwrap();
        assert_eq!(
            a.command,
            r"npm test -- test/a.test.js -t '^zip packs \(a\+b\)$'"
        );
        // A project's own reporters stay.
        let chosen = crate::checks::tools::recognise("vitest run --reporter=dot", None);
        let run =
            crate::checks::tools::prepare(&chosen, "vitest run --reporter=dot", &[], dir.path());
        assert_eq!(run.command, "vitest run --reporter=dot");
    }

    #[test]
    fn the_report_names_every_test() {
        // vitest 3.2's JSON report of a failing test, a skipped one and a file that could not load.
        let json = r#"{"testResults":[
          {"assertionResults":[
            {"ancestorTitles":["zip"],"title":"packs (a+b) files","status":"passed","failureMessages":[]},
            {"ancestorTitles":["zip"],"title":"fails sometimes","status":"failed","failureMessages":["AssertionError: expected 2 to be 3 // Object.is equality"]},
            {"ancestorTitles":["zip","nested"],"title":"skipped one","status":"skipped","failureMessages":[]}],
           "message":"","name":"/w/test/a.test.js","status":"failed"},
          {"assertionResults":[],"message":"Cannot find module './nope'\nRequire stack:\n- /w/test/broken.test.js","name":"/w/test/broken.test.js","status":"failed"}]}"#;
        let t =
            super::super::jest::read_report(json, Some(Path::new("/w")), "vitest", " > ").unwrap();
        assert_eq!(t.runner, "vitest");
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["test/a.test.js::zip > packs (a+b) files"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "test/a.test.js::zip > fails sometimes",
                "test/broken.test.js::Test suite failed to run"
            ]
        );
        assert_eq!(
            t.messages["test/broken.test.js::Test suite failed to run"],
            "Cannot find module './nope'"
        );
    }
}
