//! vitest: its tests read from the default reporter — each file that passed (`✓ file (N
//! tests)`, standing for all its tests) and each failing test (`× suite > name` under its `❯
//! file`, and `FAIL  file > suite > name` in the failures' blocks) as `file::suite > name`. Its failures are explained by their `FAIL` blocks.

use super::jest::file_of;
use super::{Call, Lang, Missed, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

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

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(&format!("{}\n{}", printed.stdout, printed.stderr))
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
            "no check's jest or vitest run reported {}: a check must run it",
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
}
