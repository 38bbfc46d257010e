//! jest: its tests read from the default reporter — each test file that passed (`PASS file`,
//! standing for all its tests: jest names a passing file's tests only with `--verbose`) and each
//! failing test (`● suite › name` in the block of its `FAIL file`) as `file::suite › name`; a
//! file that could not load as `file::Test suite failed to run`. Its failures are explained by
//! their `●` blocks.

use super::{Call, Lang, Missed, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

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

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(&format!("{}\n{}", printed.stdout, printed.stderr))
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
            "no check's jest or vitest run reported {}: a check must run it",
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
}
