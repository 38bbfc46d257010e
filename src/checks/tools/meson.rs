//! `meson test`: its tests named as meson.build declares them (`project:name`), from its `N/M
//! project:name   OK   0.01s` lines (`FAIL`, `TIMEOUT`, `ERROR` and `UNEXPECTEDPASS` failed;
//! `EXPECTEDFAIL` passed; `SKIP` neither). Its failures are explained by its `--print-errorlogs`
//! blocks and its summary of failures.

use super::{Alone, Call, Printed, Role, Tool, Uses};
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

    fn ran_no_test<'a>(&self, printed: &Printed<'a>) -> Option<&'a str> {
        said(printed, "No tests defined.")
    }

    /// The test's `project:name` added where words reach `meson test`, which takes names.
    fn example_id(&self) -> Option<&'static str> {
        Some("calc:adds")
    }

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

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
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
pub fn read(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("meson test");
    for line in text.lines() {
        if let Some((name, Some(passed))) = verdict(line) {
            t.record(name, passed);
        }
    }
    t.finished()
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
}
