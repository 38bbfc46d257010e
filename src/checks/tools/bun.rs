//! Bun: `bun test` is a test runner whose tests are named `file::suite > name` from its `(pass)`
//! and `(fail)` lines under each `file:` header; `bun run X` and `bun X` run the package script
//! `X` (or a program of the package's), `bunx X` starts `X`. Its environment is the lockfile's.

use super::ecosystem::Registry;
use super::npm::script_with_hooks;
use super::shell::Call;
use super::step::StepKind;
use super::tool::Uses;
use super::tool::{Alone, Inner, Lang, Missed, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

/// `bun test`, the runner.
pub struct BunTest;

/// `bun run`, `bun X`, `bunx`: the wrapper.
pub struct Bun;

impl Tool for BunTest {
    fn name(&self) -> &'static str {
        "bun test"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "bun" && call.sub() == "test"
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("test/calc.test.ts::calc > adds")
    }

    /// Its file and `-t '^suite name$'` (bun matches the titles joined by spaces) added where
    /// words reach `bun test`.
    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        let (file, title) = id.split_once("::")?;
        let full = title.split(" > ").collect::<Vec<_>>().join(" ");
        let pattern = format!("^{}$", super::jest::regex_escape(&full));
        Some(Alone {
            command: tail.append(command, &[file, "-t", &pattern]),
            env: Vec::new(),
        })
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(&format!("{}\n{}", printed.stdout, printed.stderr))
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<&str> = Vec::new();
        // Bun prints a failure's source and error before its `(fail)` line.
        let mut since_result = 0;
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("(fail) ") {
                out.extend(
                    lines[since_result..=i]
                        .iter()
                        .filter(|l| !l.trim().is_empty()),
                );
            }
            if l.starts_with('(') || l.ends_with(".ts:") || l.ends_with(".js:") {
                since_result = i + 1;
            }
        }
        (!out.is_empty()).then(|| {
            out.truncate(super::excerpt::MAX_SECTION);
            out.join("\n")
        })
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        Some(format!(
            "no check's bun test reported {}: a check must run it",
            test.file
        ))
    }
}

impl Tool for Bun {
    fn name(&self) -> &'static str {
        "bun"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "bun" | "bunx") && call.sub() != "test"
    }

    super::npm::node_manager!();

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("BUN_INSTALL_CACHE_DIR", "bun"))
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        if call.name() == "bunx" || call.sub() == "x" {
            let args: Vec<String> = call
                .args
                .iter()
                .skip_while(|a| *a == "x")
                .cloned()
                .collect();
            return super::npm::after_flags(&args, &[]);
        }
        let words = match call.sub() {
            "run" => call.after("run"),
            "install" | "i" | "add" | "remove" | "" => return Inner::Nothing,
            _ => Some(
                call.args
                    .iter()
                    .skip_while(|a| a.starts_with('-'))
                    .cloned()
                    .collect(),
            ),
        };
        let Some(words) = words else {
            return Inner::Nothing;
        };
        match project.and_then(|p| script_with_hooks(p, "", &words[0], "")) {
            Some(s) => Inner::Script(s),
            None => Inner::Words(words),
        }
    }

    /// `bun run X` (`bun test` is Bun's own runner, not the script).
    fn run_script(&self, name: &str) -> Option<String> {
        Some(format!("bun run {name}"))
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        (project.is_file("bun.lockb") || project.is_file("bun.lock")).then_some(Lang::Js)
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project).map(|_| {
            (
                "bun install --frozen-lockfile".to_owned(),
                "a bun lockfile".to_owned(),
            )
        })
    }
}

/// bun test's results: `file:` opens a file's block, `(pass)`/`(fail) suite > name [time]`.
fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("bun test");
    let mut file = String::new();
    for line in crate::output::strip_ansi(text).lines() {
        if let Some(f) = line.strip_suffix(':').filter(|f| super::jest::test_file(f)) {
            file = f.to_owned();
            continue;
        }
        let (passed, rest) = match (line.strip_prefix("(pass) "), line.strip_prefix("(fail) ")) {
            (Some(r), _) => (true, r),
            (_, Some(r)) => (false, r),
            _ => continue,
        };
        let name = match rest.rsplit_once(" [") {
            Some((n, time)) if time.ends_with("ms]") => n,
            _ => rest,
        };
        t.record(format!("{file}::{}", name.trim()), passed);
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bun test` 1.4, as recorded (its report is on stderr).
    const RUN: &str = "\ntest/a.test.ts:\n(pass) adds [0.04ms]\n1 | import { test, expect, describe } from \"bun:test\";\n4 |   test(\"nested fails\", () => { expect(1).toBe(2); });\n                                             ^\nerror: expect(received).toBe(expected)\n\nExpected: 2\nReceived: 1\n\n      at <anonymous> (/w/test/a.test.ts:4:42)\n(fail) math > nested fails [0.23ms]\n(skip) math > skipped one\nerror: boom\n(fail) math > throws [0.09ms]\n(pass) after [0.01ms]\n\ntest/b.test.ts:\n(pass) b passes [0.02ms]\n\n 3 pass\n 1 skip\n 2 fail\n";

    #[test]
    fn each_test_is_named_in_its_file() {
        let t = read(RUN).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "test/a.test.ts::adds",
                "test/a.test.ts::after",
                "test/b.test.ts::b passes"
            ]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "test/a.test.ts::math > nested fails",
                "test/a.test.ts::math > throws"
            ]
        );
        let e = BunTest.excerpt(RUN).unwrap();
        assert!(
            e.contains("error: expect(received).toBe(expected)")
                && e.contains("(fail) math > throws"),
            "{e}"
        );
        assert!(!e.contains("(pass)"), "{e}");
    }

    #[test]
    fn the_runner_and_the_wrapper_are_told_apart() {
        assert!(BunTest.is(&Call::of(&["bun", "test"]), None));
        assert!(!Bun.is(&Call::of(&["bun", "test"]), None));
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[(
                "package.json",
                r#"{"scripts": {"test": "bun test", "lint": "eslint ."}}"#,
            )],
        );
        assert_eq!(
            crate::checks::tools::recognise("bun run test", Some(&p)).tools,
            ["bun", "bun test"]
        );
        assert_eq!(
            crate::checks::tools::recognise("bun lint", Some(&p)).tools,
            ["bun", "eslint"]
        );
    }
    #[test]
    fn one_test_runs_alone_by_its_file_and_title() {
        let uses = super::super::recognise("bun test", None);
        let alone = BunTest
            .alone("bun test", "test/calc.test.ts::calc > adds", &[], &uses)
            .unwrap();
        assert_eq!(alone.command, "bun test test/calc.test.ts -t '^calc adds$'");
    }
}
