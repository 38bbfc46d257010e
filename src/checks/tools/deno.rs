//! Deno: `deno test` is a test runner whose tests are named `file::name` (a step `file::test >
//! step`) from its `name ... ok|FAILED` lines under each `running N tests from ./file` header
//! (it colours them even into a file: the colours are taken off); `deno task X` runs the task `X`
//! of deno.json.

use super::shell::Call;
use super::tool::{Inner, Lang, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

/// `deno test`, the runner.
pub struct DenoTest;

/// `deno task`: the wrapper.
pub struct Deno;

impl Tool for DenoTest {
    fn name(&self) -> &'static str {
        "deno test"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "deno" && call.sub() == "test"
    }

    fn never_alone(&self) -> Option<&'static str> {
        Some(
            "its steps cannot be filtered one by one, and ralph does not run a deno test alone yet",
        )
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout)
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(text, |l| l.trim() == "ERRORS", |l| l.trim() == "FAILURES")
    }
}

impl Tool for Deno {
    fn name(&self) -> &'static str {
        "deno"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "deno" && call.sub() == "task"
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let Some(name) = call.after("task").map(|w| w[0].clone()) else {
            return Inner::Nothing;
        };
        let task = project.and_then(|p| {
            let config = p.json("deno.json").or_else(|| p.json("deno.jsonc"))?;
            let t = &config["tasks"][name.as_str()];
            t.as_str()
                .or_else(|| t["command"].as_str())
                .map(str::to_owned)
        });
        task.map_or(Inner::Unknown, Inner::Script)
    }
}

/// deno test's results.
fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("deno test");
    let mut file = String::new();
    // The test whose steps follow, while they do.
    let mut parent: Option<String> = None;
    for line in crate::output::strip_ansi(text).lines() {
        if let Some(rest) = line.strip_prefix("running ") {
            if let Some((_, f)) = rest.split_once(" from ") {
                file = f.trim().trim_start_matches("./").to_owned();
                continue;
            }
        }
        if line.trim() == "ERRORS" || line.trim() == "FAILURES" {
            break;
        }
        let step = line.starts_with("  ");
        let Some((name, outcome)) = line.trim().split_once(" ... ") else {
            if let Some(name) = line.trim().strip_suffix(" ...") {
                parent = Some(name.to_owned());
            }
            continue;
        };
        let passed = if outcome.starts_with("ok") {
            true
        } else if outcome.starts_with("FAILED") {
            false
        } else {
            continue;
        };
        match (&parent, step) {
            (Some(p), true) => t.record(format!("{file}::{p} > {name}"), passed),
            // A test with steps ends with its own line: its steps speak for it.
            (Some(p), false) if p == name => parent = None,
            _ => {
                parent = None;
                t.record(format!("{file}::{name}"), passed);
            }
        }
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_and_step_is_named_in_its_file() {
        // `deno test` 2.9, as recorded (colours on even without a terminal).
        let out = "\u{1b}[0m\u{1b}[38;5;245mrunning 5 tests from ./a_test.ts\u{1b}[0m\nadds ... \u{1b}[0m\u{1b}[32mok\u{1b}[0m (478µs)\nfails in middle ... \u{1b}[0m\u{1b}[31mFAILED\u{1b}[0m (772µs)\nsuite ...\n  step passes ... ok (0ms)\n  step fails ... FAILED (1ms)\nsuite ... FAILED (due to 1 failed step) (1ms)\nskipped ... ignored (0ms)\nafter ... ok (41µs)\nrunning 1 test from ./b_test.ts\nb passes ... ok (436µs)\n\n ERRORS \n\nfails in middle => ./a_test.ts:2:6\nerror: Error: nope\n\n FAILURES \n\nfails in middle => ./a_test.ts:2:6\n";
        let t = read(out).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "a_test.ts::adds",
                "a_test.ts::after",
                "a_test.ts::suite > step passes",
                "b_test.ts::b passes"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "a_test.ts::fails in middle",
                "a_test.ts::suite > step fails"
            ]
        );
        let e = DenoTest.excerpt(&crate::output::strip_ansi(out)).unwrap();
        assert!(e.contains("error: Error: nope"), "{e}");
    }
}
