//! jest: where words appended to the check's command reach it (`jest`, `npx jest`, an npm
//! script ending in jest), it is asked for its JSON report (`--json --outputFile`), which names
//! every test, passing or failing, as `file::suite › name` (the file from the worktree's top);
//! one test runs alone by its file and `-t '^suite name$'`. Otherwise its tests are read from
//! the default reporter — each test file that passed (`PASS file`, standing for all its tests)
//! and each failing test (`● suite › name` in the block of its `FAIL file`). Either way a file
//! that could not load is `file::Test suite failed to run`. Its failures are explained by their
//! `●` blocks.

use super::shell::Call;
use super::tool::Uses;
use super::tool::{Alone, Lang, Missed, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

/// jest's JSON report: a file is given to it as a regular expression.
const JSON: JsonReport = JsonReport {
    runner: "jest",
    joiner: " › ",
    file_by_regex: true,
};
/// The title jest gives a file that could not be loaded.
pub const UNLOADED: &str = "Test suite failed to run";

pub struct Jest;

impl Tool for Jest {
    fn name(&self) -> &'static str {
        "jest"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "jest" || call.name() == "react-scripts" && call.sub() == "test"
    }

    fn coverage_reports(&self) -> &'static [&'static str] {
        super::jest::ISTANBUL_REPORTS
    }

    fn coverage(&self, env: &super::tool::Env) -> Option<super::coverage_spec::CoverageSpec> {
        super::jest::collects_coverage(env.project, self.name())
    }

    fn prepare(&self, run: &mut Prepared, scratch: &Path) {
        // The project asked for a report of its own: it stays where the project wants it.
        if let Some((tail, report)) = JSON.report(run, scratch, &["--json", "--outputFile"]) {
            let output = format!("--outputFile={}", report.display());
            run.command = tail.append(&run.command, &["--json", &output]);
        }
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        JSON.tests(printed, read)
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("test/calc.test.js::calc › adds")
    }

    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        JSON.alone(command, id, uses)
    }

    fn files(&self, command: &str, files: &[&str], uses: &super::tool::Uses) -> Option<String> {
        super::tool::append_files(self.name(), command, files, uses, test_file)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.trim_start().starts_with("● "),
            |l| l.trim_start().starts_with("Tests:"),
        )
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        Some(format!(
            "no check's test run reported {}: a check must run it",
            test.file
        ))
    }
}

/// Whether `word` names a test file (by its extension).
pub fn test_file(word: &str) -> bool {
    [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts"]
        .iter()
        .any(|e| word.ends_with(e))
}

/// The test file a reporter line starts with.
pub fn file_of(rest: &str) -> Option<String> {
    let f = rest.split_whitespace().next()?;
    test_file(f).then(|| f.to_owned())
}

/// A runner's JSON report of jest's shape (jest's `--json`, vitest's `json` reporter): asked for
/// in a folder of the run's own named for the runner, read test by test, and its tests run
/// alone by their file and `-t` their titles.
pub struct JsonReport {
    pub runner: &'static str,
    /// What stands between a test's suites and its title in its ids.
    pub joiner: &'static str,
    /// Whether the runner takes a file as a regular expression (jest), or a substring (vitest).
    pub file_by_regex: bool,
}

impl JsonReport {
    /// Where words appended to the check reach the runner and none of `own` (the project's
    /// choice of report or reporters) is in its command: how to append, and where the report
    /// goes.
    pub fn report(
        &self,
        run: &mut Prepared,
        scratch: &Path,
        own: &[&str],
    ) -> Option<(super::tool::Tail, std::path::PathBuf)> {
        let tail = run.tail.filter(|t| t.tool == self.runner)?;
        if own.iter().any(|o| run.command.contains(o)) {
            return None;
        }
        Some((tail, run.own_dir(scratch, self.runner).join(REPORT)))
    }

    /// The tests its report names, else those `read` finds in what it printed.
    pub fn tests(
        &self,
        printed: &Printed,
        read: fn(&str) -> Option<TestOutcomes>,
    ) -> Option<TestOutcomes> {
        let report = printed.scratch.and_then(|s| {
            let what = format!("{}'s report", self.runner);
            crate::untrusted_dir::report_text(&s.join(self.runner).join(REPORT), &what)
        });
        report
            .and_then(|json| read_report(&json, printed.root, self.runner, self.joiner))
            .or_else(|| read(&format!("{}\n{}", printed.stdout, printed.stderr)))
    }

    /// The test `id` run alone: its file, and `-t` its titles joined by spaces (as both
    /// runners match a test's name), anchored.
    pub fn alone(&self, command: &str, id: &str, uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.runner)?;
        let (file, title) = id.split_once("::")?;
        if title == UNLOADED {
            return None;
        }
        let name = title.split(self.joiner).collect::<Vec<_>>().join(" ");
        let pattern = format!("^{}$", regex_escape(&name));
        let file = if self.file_by_regex {
            regex_escape(file)
        } else {
            file.to_owned()
        };
        Some(Alone {
            command: tail.append(command, &[&file, "-t", &pattern]),
            env: Vec::new(),
        })
    }
}

/// The report's name in the runner's folder.
const REPORT: &str = "report.json";

/// `text` with every character a regular expression reads specially escaped.
pub(crate) fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The results of `runner` (jest, or vitest, whose JSON report has jest's shape) by its JSON
/// report: every test by its file (from `root`, when the report names it absolutely under it)
/// and its titles joined by `joiner`; a file that could not load by [`UNLOADED`]. Tests
/// skipped, pending or to do are neither.
pub fn read_report(
    json: &str,
    root: Option<&Path>,
    runner: &str,
    joiner: &str,
) -> Option<TestOutcomes> {
    let report: serde_json::Value = serde_json::from_str(json).ok()?;
    let mut t = TestOutcomes::named(runner);
    for file in report.get("testResults")?.as_array()? {
        let name = file
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or_default();
        let path = root
            .and_then(|r| Path::new(name).strip_prefix(r).ok())
            .map_or_else(|| name.to_owned(), |p| p.display().to_string());
        let tests = file.get("assertionResults").and_then(|a| a.as_array());
        let failed_whole = file.get("status").and_then(|s| s.as_str()) == Some("failed");
        if tests.is_none_or(|a| a.is_empty()) {
            if failed_whole {
                let id = format!("{path}::{UNLOADED}");
                if let Some(m) = file.get("message").and_then(|m| m.as_str()) {
                    t.messages.insert(id.clone(), first_line(m));
                }
                t.failed.insert(id);
            }
            continue;
        }
        for test in tests.into_iter().flatten() {
            let titles = test
                .get("ancestorTitles")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
                .chain(test.get("title"))
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(joiner);
            let id = format!("{path}::{titles}");
            match test.get("status").and_then(|s| s.as_str()) {
                Some("passed") => t.record(id, true),
                Some("failed") => {
                    let message = test
                        .get("failureMessages")
                        .and_then(|m| m.get(0))
                        .and_then(|m| m.as_str());
                    if let Some(m) = message {
                        t.messages.insert(id.clone(), first_line(m));
                    }
                    t.record(id, false);
                }
                _ => {}
            }
        }
    }
    t.finished()
}

/// The first line of a message that says something.
fn first_line(message: &str) -> String {
    let text = crate::output::strip_ansi(message);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('●'))
        .unwrap_or_default()
        .to_owned()
}

/// jest's results by its default reporter.
pub fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("jest");
    t.by_file = true;
    let text = crate::output::strip_ansi(text);
    // The file whose block the `●` lines are in.
    let mut failing_file: Option<String> = None;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("FAIL ").map(str::trim_start) {
            // `FAIL packages/x/y.test.ts (5.1 s)` opens the block of its failures.
            failing_file = file_of(rest);
            continue;
        }
        if let Some(rest) = l.strip_prefix("PASS ") {
            failing_file = None;
            if let Some(f) = file_of(rest.trim_start()) {
                t.passed.insert(f);
            }
            continue;
        }
        if let (Some(title), Some(file)) = (l.strip_prefix("● "), &failing_file) {
            // jest ends the run with a summary of every failure again, under its file too.
            t.failed.insert(format!("{file}::{}", title.trim()));
        }
    }
    // A file both passed and failed: it failed.
    let failed_files: Vec<String> = t
        .failed
        .iter()
        .filter_map(|id| id.split_once("::").map(|(f, _)| f.to_owned()))
        .collect();
    t.passed.retain(|f| !failed_files.contains(f));
    t.finished()
}

/// Where Istanbul's reporters (jest's, vitest's, c8's and nyc's) write by default.
pub(super) const ISTANBUL_REPORTS: &[&str] = &[
    "coverage/coverage-summary.json",
    "coverage/lcov.info",
    "coverage/coverage-final.json",
    "coverage/cobertura-coverage.xml",
];

/// The coverage a project's `test` script already collects with `tool --coverage` (jest,
/// vitest): read from the report it writes (`coverage/coverage-summary.json`,
/// `coverage/lcov.info`) after the tests.
pub(super) fn collects_coverage(
    p: &Project,
    tool: &str,
) -> Option<super::coverage_spec::CoverageSpec> {
    let test = super::npm::script(p, "", "test")?;
    let spec = |reason: String| super::coverage_spec::CoverageSpec {
        test_command: None,
        command: String::new(),
        reason,
    };
    if test.contains(tool) && test.contains("--coverage") {
        return Some(spec(format!(
            "`{tool} --coverage` in the `test` script of package.json"
        )));
    }
    // jest's own configuration collects it on every run (`collectCoverage: true`), where a
    // script of package.json runs jest.
    let runs_it = p
        .json("package.json")
        .and_then(|v| v["scripts"].as_object().cloned())
        .is_some_and(|s| {
            s.values()
                .any(|c| c.as_str().is_some_and(|c| c.contains(tool)))
        });
    let file = configured_to_collect(p, tool)?;
    (runs_it && !test.contains("--no-coverage")).then(|| {
        spec(format!(
            "`collectCoverage: true` in {file}, and a script runs {tool}"
        ))
    })
}

/// The configuration file of `tool` (jest) that turns coverage on for every run.
fn configured_to_collect(p: &Project, tool: &str) -> Option<String> {
    let on = |text: &str| {
        let flat: String = text.split_whitespace().collect();
        flat.contains("collectCoverage:true") || flat.contains("\"collectCoverage\":true")
    };
    let files = ["ts", "js", "mjs", "cjs", "json"].map(|ext| format!("{tool}.config.{ext}"));
    if let Some(f) = files
        .into_iter()
        .find(|f| p.text(f).is_some_and(|t| on(&t)))
    {
        return Some(f);
    }
    p.json("package.json")
        .is_some_and(|v| v[tool]["collectCoverage"] == serde_json::Value::Bool(true))
        .then(|| "package.json".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passing_files_and_failing_tests_are_named() {
        // jest, as actions/toolkit's suite prints it on a machine without network.
        let jest = "\u{1b}[0m\u{1b}[7m\u{1b}[1m\u{1b}[32m PASS \u{1b}[39m\u{1b}[22m\u{1b}[27m\u{1b}[0m packages/core/__tests__/command.test.ts\nFAIL packages/http-client/__tests__/basics.test.ts (5.123 s)\n  ● basics › does basic http get request\n\n    getaddrinfo EAI_AGAIN postman-echo.com\n\n  ● basics › second\n\nFAIL packages/artifact/__tests__/download.test.ts\n  ● Test suite failed to run\n\n    Cannot find module\nPASS packages/io/__tests__/io.test.ts\n\nTest Suites: 2 failed, 2 passed, 4 total\nTests:       2 failed, 30 passed, 32 total\n";
        let t = read(jest).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "packages/core/__tests__/command.test.ts",
                "packages/io/__tests__/io.test.ts"
            ]
        );
        assert!(t.failed.contains(
            "packages/http-client/__tests__/basics.test.ts::basics › does basic http get request"
        ));
        assert!(t
            .failed
            .contains("packages/artifact/__tests__/download.test.ts::Test suite failed to run"));
        assert_eq!(t.failed.len(), 3);
        assert!(t.by_file);
        assert!(read("everything is fine").is_none());
    }

    /// jest 29's `--json` report of a run with a failure, a skipped test, nested suites and a
    /// file that could not load (stack traces shortened).
    const REPORT_JSON: &str = r#"{"numFailedTests":1,"success":false,"testResults":[
      {"assertionResults":[
        {"ancestorTitles":["zip"],"fullName":"zip packs (a+b) files","status":"passed","title":"packs (a+b) files","failureMessages":[]},
        {"ancestorTitles":["zip"],"fullName":"zip fails sometimes","status":"failed","title":"fails sometimes",
         "failureMessages":["Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3\nReceived: 2\n    at Object.toBe (/w/src/__tests__/a.test.js:3:43)"]},
        {"ancestorTitles":["zip","nested"],"fullName":"zip nested skipped one","status":"pending","title":"skipped one","failureMessages":[]},
        {"ancestorTitles":["zip","nested"],"fullName":"zip nested deep pass","status":"passed","title":"deep pass","failureMessages":[]},
        {"ancestorTitles":[],"fullName":"top level","status":"passed","title":"top level","failureMessages":[]}],
       "message":"  ● zip › fails sometimes\n","name":"/w/src/__tests__/a.test.js","status":"failed"},
      {"assertionResults":[],"message":"  ● Test suite failed to run\n\n    Cannot find module './nope' from 'src/__tests__/broken.test.js'\n",
       "name":"/w/src/__tests__/broken.test.js","status":"failed"}],"wasInterrupted":false}"#;

    #[test]
    fn the_report_names_every_test_passing_or_failing() {
        let t = read_report(REPORT_JSON, Some(Path::new("/w")), "jest", " › ").unwrap();
        assert!(!t.by_file);
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "src/__tests__/a.test.js::top level",
                "src/__tests__/a.test.js::zip › nested › deep pass",
                "src/__tests__/a.test.js::zip › packs (a+b) files",
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "src/__tests__/a.test.js::zip › fails sometimes",
                "src/__tests__/broken.test.js::Test suite failed to run",
            ]
        );
        assert_eq!(
            t.messages["src/__tests__/a.test.js::zip › fails sometimes"],
            "Error: expect(received).toBe(expected) // Object.is equality"
        );
        assert_eq!(
            t.messages["src/__tests__/broken.test.js::Test suite failed to run"],
            "Cannot find module './nope' from 'src/__tests__/broken.test.js'"
        );
        // Outside the root, a file keeps the name the report gives it; no report, no tests.
        let t = read_report(REPORT_JSON, Some(Path::new("/elsewhere")), "jest", " › ").unwrap();
        assert!(t.passed.contains("/w/src/__tests__/a.test.js::top level"));
        assert!(read_report("{}", None, "jest", " › ").is_none());
        assert!(read_report("not json", None, "jest", " › ").is_none());
    }

    fn uses(command: &str) -> Uses {
        let p = Project::in_memory(
            Path::new("/w"),
            &[(
                "package.json",
                r#"{"scripts": {"test": "tsc && jest --ci", "both": "jest | tee log"}}"#,
            )],
        );
        crate::checks::tools::recognise(command, Some(&p))
    }

    fn prepared(command: &str, scratch: &Path) -> Prepared {
        crate::checks::tools::prepare(&uses(command), command, &[], scratch)
    }

    #[test]
    fn the_report_is_asked_for_where_appended_words_reach_jest() {
        let dir = tempfile::tempdir().unwrap();
        let prepared = |command: &str| prepared(command, dir.path());
        let report = format!("--outputFile={}/jest/report.json", dir.path().display());
        assert_eq!(
            prepared("npx jest --ci").command,
            format!("npx jest --ci --json {report}")
        );
        // An npm script's arguments come after `--`, once.
        assert_eq!(
            prepared("npm test").command,
            format!("npm test -- --json {report}")
        );
        assert_eq!(
            prepared("npm test -- --runInBand").command,
            format!("npm test -- --runInBand --json {report}")
        );
        // Where they would reach something else, or the project wants its own report: as is.
        for command in [
            "npm run both",
            "jest | tee log",
            "bash -c 'jest'",
            "jest --json",
            "jest --ci && eslint .",
        ] {
            assert_eq!(prepared(command).command, command, "{command}");
        }
    }

    #[test]
    fn one_test_runs_alone_by_its_file_and_full_title() {
        let a = Jest
            .alone(
                "npm test",
                "src/__tests__/a.test.js::zip › packs (a+b) files",
                &[],
                &uses("npm test"),
            )
            .unwrap();
        assert_eq!(
            a.command,
            r"npm test -- 'src/__tests__/a\.test\.js' -t '^zip packs \(a\+b\) files$'"
        );
        // Then the report is asked for after the same `--`.
        let dir = tempfile::tempdir().unwrap();
        let u = uses("npm test");
        let run = prepared(&a.command, dir.path());
        assert_eq!(
            run.command,
            format!(
                "{} --json --outputFile={}/jest/report.json",
                a.command,
                dir.path().display()
            )
        );
        // A file that could not load, or a command jest's words cannot reach: not known how.
        assert!(Jest
            .alone("npm test", "a.test.js::Test suite failed to run", &[], &u)
            .is_none());
        assert!(Jest
            .alone(
                "jest | tee log",
                "a.test.js::x",
                &[],
                &uses("jest | tee log")
            )
            .is_none());
    }

    #[test]
    fn coverage_the_configuration_collects_is_read_from_its_report() {
        let dir = crate::checks::project(&[
            (
                "package.json",
                r#"{"scripts": {"test": "pnpm run test:nodejs", "test:nodejs": "jest --env node"}}"#,
            ),
            (
                "jest.config.ts",
                "const config = {\n  collectCoverage: true,\n  coverageReporters: ['text', 'lcov'],\n};\n",
            ),
        ]);
        let spec = collects_coverage(&Project::read(dir.path()), "jest").unwrap();
        assert!(spec.command.is_empty(), "read from the report it writes");
        assert_eq!(
            spec.reason,
            "`collectCoverage: true` in jest.config.ts, and a script runs jest"
        );
        let off = crate::checks::project(&[
            ("package.json", r#"{"scripts": {"test": "jest"}}"#),
            (
                "jest.config.js",
                "module.exports = { collectCoverage: false };\n",
            ),
        ]);
        assert!(collects_coverage(&Project::read(off.path()), "jest").is_none());
    }
}
