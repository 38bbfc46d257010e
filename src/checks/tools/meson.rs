//! `meson test`: its tests named as meson.build declares them (`project:name`), from its `N/M
//! project:name   OK   0.01s` lines (`FAIL`, `TIMEOUT`, `ERROR` and `UNEXPECTEDPASS` failed;
//! `EXPECTEDFAIL` passed; `SKIP` neither). Its failures are explained by its `--print-errorlogs`
//! blocks and its summary of failures.

use super::shell::Call;
use super::step::StepKind;
use super::tool::Uses;
use super::tool::{Alone, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;

pub struct MesonTest;

impl Tool for MesonTest {
    fn name(&self) -> &'static str {
        "meson test"
    }

    fn role(&self) -> Role {
        Role::Suite
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        (call.name() == "meson" && call.sub() == "test")
            || (call.name() == "ninja" && call.sub() == "test")
    }

    fn build_system(&self) -> Option<&'static str> {
        Some("meson")
    }

    fn ran_no_test<'a>(&self, printed: &Printed<'a>) -> Option<&'a str> {
        said(printed, "No tests defined.")
    }

    /// `--print-errorlogs` added where words reach `meson test`: a failing test's own output
    /// (its assertion) is printed, not only kept in meson's log file — whole, where meson is
    /// 1.5 or later (`--max-lines`; before, the last 100 lines of a long log).
    fn prepare(&self, run: &mut Prepared, _: &std::path::Path) {
        let Some(tail) = run.tail.filter(|t| t.tool == self.name()) else {
            return;
        };
        if run.command.contains("--print-errorlogs") {
            return;
        }
        let mut words = vec!["--print-errorlogs"];
        if whole_logs() && !run.command.contains("--max-lines") {
            words.push("--max-lines=100000");
        }
        run.command = tail.append(&run.command, &words);
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("calc:adds")
    }

    /// The test's `project:name` added where words reach `meson test`, which takes names.
    fn alone(&self, command: &str, id: &str, _: &[(String, String)], uses: &Uses) -> Option<Alone> {
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        Some(Alone {
            command: tail.append(command, &[id]),
            env: Vec::new(),
        })
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(&format!("{}\n{}", printed.stdout, printed.stderr))
    }

    /// The failing tests' own output (`--print-errorlogs`' blocks, their passing lines cut),
    /// then meson's summary of failures.
    fn excerpt(&self, text: &str) -> Option<String> {
        let summary = super::excerpt::section(
            text,
            |l| l.starts_with("Summary of Failures:"),
            |l| l.starts_with("Ok:"),
        )
        .or_else(|| {
            let failing: Vec<&str> = text
                .lines()
                .filter(|l| verdict(l).is_some_and(|(_, v)| v.is_some_and(|p| !p)))
                .collect();
            (!failing.is_empty()).then(|| failing.join("\n"))
        })?;
        let logs = error_logs(text);
        Some(match logs.is_empty() {
            true => summary,
            false => format!("{}\n\n{summary}", logs.join("\n")),
        })
    }
}

/// The line of `printed` (either stream) that starts with `words`.
pub(super) fn said<'a>(printed: &Printed<'a>, words: &str) -> Option<&'a str> {
    printed
        .stdout
        .lines()
        .chain(printed.stderr.lines())
        .map(str::trim)
        .find(|l| l.starts_with(words))
}

/// A result line's test name and verdict (`Some(true)` passed, `Some(false)` failed, `None`
/// skipped).
fn verdict(line: &str) -> Option<(String, Option<bool>)> {
    let (count, rest) = line.trim_start().split_once(' ')?;
    let (done, total) = count.split_once('/')?;
    if [done, total]
        .iter()
        .any(|n| n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let duration = |w: &&str| {
        w.strip_suffix('s')
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    let at = (1..words.len().saturating_sub(1)).find(|&i| {
        matches!(
            words[i],
            "OK" | "FAIL" | "SKIP" | "TIMEOUT" | "ERROR" | "EXPECTEDFAIL" | "UNEXPECTEDPASS"
        ) && words.get(i + 1).is_some_and(duration)
    })?;
    let passed = match words[at] {
        "OK" | "EXPECTEDFAIL" => Some(true),
        "SKIP" => None,
        _ => Some(false),
    };
    Some((words[..at].join(" "), passed))
}

/// meson test's results by its per-test lines.
/// Whether the meson here prints a long test log whole when asked (`--max-lines`, 1.5).
fn whole_logs() -> bool {
    static WHOLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WHOLE.get_or_init(|| {
        super::python::ask("meson", &["--version"])
            .and_then(|v| {
                let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().ok());
                Some((parts.next()??, parts.next()??))
            })
            .is_some_and(|version| version >= (1, 5))
    })
}

/// The lines of `--print-errorlogs`' blocks (from a `✀` rule to the closing one) that are no
/// passing test's (`✔ name`, `ok 3`, `PASS: x`, `[ OK ]`), at most a section's worth.
fn error_logs(text: &str) -> Vec<&str> {
    let passing = |l: &str| {
        let t = l.trim_start();
        t.starts_with('✔')
            || t.starts_with('✓')
            || t.starts_with("ok ")
            || t.starts_with("PASS")
            || t.starts_with("[       OK ]")
            || t.starts_with("[ RUN      ]")
    };
    let rule = |l: &str| !l.trim().is_empty() && l.trim().chars().all(|c| c == '―');
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.contains('✀') {
            inside = true;
            continue;
        }
        if inside && rule(line) {
            inside = false;
            continue;
        }
        if inside && !passing(line) && !line.trim().is_empty() {
            out.push(line);
        }
    }
    out.truncate(super::excerpt::MAX_SECTION);
    out
}

pub fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("meson test");
    for line in text.lines() {
        if let Some((name, Some(passed))) = verdict(line) {
            t.record(name, passed);
        }
    }
    t.finished()
}

/// Meson for what is not its test run: `meson setup` sets up, `meson compile` builds.
pub struct Meson;

impl Tool for Meson {
    fn name(&self) -> &'static str {
        "meson"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "meson"
    }

    fn build_system(&self) -> Option<&'static str> {
        Some("meson")
    }

    fn suite(&self, project: &Project, build: &str) -> Option<(String, &'static str)> {
        meson_tests(&project.text("meson.build")?).then(|| {
            (
                format!("meson setup {build} && meson test -C {build} --print-errorlogs"),
                "meson.build declares tests: built out of tree, run by meson test",
            )
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(super::step::by_target(call, StepKind::Other))
    }
}

/// Whether a Meson file's text declares a test (`test('name', exe)`).
fn meson_tests(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .any(|l| {
            let t = l.trim_start();
            t.starts_with("test(") || t.contains(" test(") || t.contains("=test(")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_is_named_with_its_project() {
        // `meson test -C builddir`, as recorded (the environment lines shortened).
        let out = "ninja: Entering directory `/p/builddir'\nninja: no work to do.\n1/6 mesondemo:passes          OK              0.01s\n2/6 mesondemo:fails in middle FAIL            0.01s   exit status 1\n>>> MESON_TEST_ITERATION=1 /p/builddir/fail_prog\n\n3/6 mesondemo:segfaults       FAIL            0.01s   killed by signal 11 SIGSEGV\n4/6 mesondemo:skipped_by_code SKIP            0.01s   exit status 77\n5/6 mesondemo:passes_last     OK              0.01s\n6/6 mesondemo:times_out       TIMEOUT         1.01s   killed by signal 15 SIGTERM\n\nOk:                2   \nFail:              2   \n";
        let t = read(out).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["mesondemo:passes", "mesondemo:passes_last"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            [
                "mesondemo:fails in middle",
                "mesondemo:segfaults",
                "mesondemo:times_out"
            ]
        );
        assert!(read("1/2 is not a result").is_none());
    }
    #[test]
    fn one_test_runs_alone_by_its_name() {
        let uses = super::super::recognise("meson test -C build", None);
        let alone = MesonTest
            .alone("meson test -C build", "cglm:vec3 norm", &[], &uses)
            .unwrap();
        assert_eq!(alone.command, "meson test -C build 'cglm:vec3 norm'");
    }

    #[test]
    fn a_failing_tests_own_output_is_printed() {
        let scratch = tempfile::tempdir().unwrap();
        let prepare = |c: &str| {
            super::super::prepare(&super::super::recognise(c, None), c, &[], scratch.path()).command
        };
        let whole = if whole_logs() {
            " --max-lines=100000"
        } else {
            ""
        };
        assert_eq!(
            prepare("meson test -C build"),
            format!("meson test -C build --print-errorlogs{whole}")
        );
        assert_eq!(
            prepare("meson test -C build --print-errorlogs"),
            "meson test -C build --print-errorlogs"
        );
        assert_eq!(
            prepare("cd build && meson test | tee log"),
            "cd build && meson test | tee log"
        );
    }

    #[test]
    fn a_failing_tests_own_lines_come_before_the_summary_without_its_passing_ones() {
        // cglm's suite under `meson test --print-errorlogs`, trimmed.
        let out = "1/1 cglm:cglm.tests FAIL            0.16s   exit status 4\n>>> MALLOC_PERTURB_=5 /b/tests\n――――――――――――――――― ✀  ―――――――――――――――――\nListing only the last 100 lines from a long log.\n  ✔︎ glm_mat2x3_make                    0\n  assert fail in ../test/src/test_mat2x3.h on line 105 :  ASSERTIFY(test_assert_mat3_eq(m3, m4))\n  𐄂 glm_mat2x3_mul \n  ✔︎ glm_mat2x3_transpose               0\n\ncglm test results (0.15s):\n1093 tests ran, 1089 passed, 4 failed\n――――――――――――――――――――――――――――――――――\n\n\nSummary of Failures:\n\n1/1 cglm:cglm.tests FAIL            0.16s   exit status 4\n\nOk:                0\nFail:              1\n";
        let e = MesonTest.excerpt(out).unwrap();
        assert!(e.starts_with("Listing only the last 100 lines from a long log.\n  assert fail in ../test/src/test_mat2x3.h on line 105"), "{e}");
        assert!(
            e.contains("𐄂 glm_mat2x3_mul") && e.contains("1093 tests ran, 1089 passed, 4 failed"),
            "{e}"
        );
        assert!(!e.contains("✔"), "{e}");
        assert!(e.ends_with("Summary of Failures:\n\n1/1 cglm:cglm.tests FAIL            0.16s   exit status 4\n\nOk:                0"), "{e}");
    }
}
