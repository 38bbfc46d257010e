//! cargo-nextest (`cargo nextest run`): every test run after a failure (`--no-fail-fast`) and
//! each passing one printed (`NEXTEST_STATUS_LEVEL=pass`, which a project's profile may lower); its
//! tests named `<binary id>::<test path>` from its `PASS [time] (i/n) binary test` lines; one
//! test run alone by its filter expression `-E 'test(=path)'`. Its failures are explained by each
//! failing test's captured output.

use super::shell::Call;
use super::tool::{Alone, Lang, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct Nextest;

impl Tool for Nextest {
    fn name(&self) -> &'static str {
        "nextest"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Rust)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "cargo-nextest"
            || (call.name() == "cargo" && super::cargo_test::subcommand(call) == "nextest")
    }

    fn lock(&self, _: &Call) -> Option<&'static str> {
        Some("cargo")
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        // Every passing test's line, whatever the project's profile says (a flag still wins).
        run.set("NEXTEST_STATUS_LEVEL", "pass");
        if !run.command.contains("--no-fail-fast") {
            run.command = run
                .command
                .replace("cargo nextest run", "cargo nextest run --no-fail-fast");
        }
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(&format!("{}\n{}", printed.stdout, printed.stderr))
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("calc::calc adds")
    }

    fn alone(
        &self,
        command: &str,
        id: &str,
        _: &[(String, String)],
        _: &super::tool::Uses,
    ) -> Option<Alone> {
        let (_, path) = id.split_once(' ')?;
        let path_ok = path
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
        let plain =
            command.trim_start().starts_with("cargo nextest run") && super::shell::plain(command);
        (plain && path_ok && !path.is_empty()).then(|| Alone {
            command: format!("{} -E 'test(={path})'", command.trim_end()),
            env: Vec::new(),
        })
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.trim_start().starts_with("FAIL ["),
            |l| l.trim_start().starts_with("Summary ["),
        )
    }
}

/// nextest's results by its status lines (the repeat of the failures after `Summary` read once).
fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("nextest");
    for line in text.lines() {
        let l = line.trim_start();
        if l.starts_with("Summary [") {
            break;
        }
        let Some((status, rest)) = l.split_once(" [") else {
            continue;
        };
        let passed = match status {
            "PASS" => true,
            "FAIL" | "SIGSEGV" | "SIGABRT" | "SIGKILL" | "TIMEOUT" | "ABORT" | "LEAK-FAIL" => false,
            _ => continue,
        };
        let Some((_, after)) = rest.split_once("] ") else {
            continue;
        };
        // `(3/9) alpha::integration integration_adds`: the counter is newer nextest's.
        let after = match after.strip_prefix('(') {
            Some(r) => r.split_once(") ").map_or(r, |(_, a)| a),
            None => after,
        };
        let Some((binary, test)) = after.trim().split_once(' ') else {
            continue;
        };
        t.record(format!("{binary} {test}"), passed);
    }
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_is_named_by_its_binary() {
        // `cargo nextest run --no-fail-fast` in a workspace, as recorded.
        let err = "    Starting 9 tests across 3 binaries (1 test skipped)\n        PASS [   0.005s] (1/9) alpha tests::nested::deeper::works_in_nested_module\n        PASS [   0.006s] (3/9) alpha::integration integration_adds\n        FAIL [   0.006s] (6/9) beta tests::b_middle_fails\n  stdout ───\n\n    running 1 test\n    test tests::b_middle_fails ... FAILED\n        FAIL [   0.008s] (8/9) beta tests::d_panics_outside_assert\n        PASS [   0.007s] (9/9) beta tests::f_should_panic\n     Summary [   0.033s] 9 tests run: 7 passed, 2 failed, 1 skipped\n        FAIL [   0.006s] (6/9) beta tests::b_middle_fails\n";
        let t = read(err).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "alpha tests::nested::deeper::works_in_nested_module",
                "alpha::integration integration_adds",
                "beta tests::f_should_panic"
            ]
        );
        assert_eq!(t.failed.len(), 2);
        let a = Nextest
            .alone(
                "cargo nextest run --workspace",
                "beta tests::b_middle_fails",
                &[],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(
            a.command,
            "cargo nextest run --workspace -E 'test(=tests::b_middle_fails)'"
        );
    }
}
