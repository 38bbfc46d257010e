//! `go test`: made to name every test by `GOFLAGS=-v` (however it is started — `make test`
//! too — and harmless to any other go command); its tests named `<import path>/<TestName>`
//! (subtests `…/<TestName>/<case>`) from its `--- PASS`/`--- FAIL` lines and the package line
//! after them; one test run alone by `-run '^Name$'`.

use super::shell::Call;
use super::tool::{Alone, Lang, Missed, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct GoTest;

impl Tool for GoTest {
    fn name(&self) -> &'static str {
        "go test"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Go)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "go" && call.sub() == "test"
    }

    fn former_names(&self) -> &'static [&'static str] {
        &["go"]
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        let flags = run.get("GOFLAGS").unwrap_or_default();
        if !flags.split_whitespace().any(|f| f == "-v" || f == "-json") {
            run.set("GOFLAGS", format!("{flags} -v").trim().to_owned());
        }
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout, printed.stderr)
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("example.com/calc/TestAdd")
    }

    fn alone(
        &self,
        command: &str,
        id: &str,
        _: &[(String, String)],
        _: &super::tool::Uses,
    ) -> Option<Alone> {
        let test = id.rsplit('/').find(|p| p.starts_with("Test"))?;
        let plain = command.trim_start().starts_with("go test") && super::shell::plain(command);
        (plain && super::shell::word(test)).then(|| Alone {
            command: format!("{} -run '^{test}$'", command.trim_end()),
            env: Vec::new(),
        })
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l.trim_start().starts_with("--- FAIL: "),
            |l| l.starts_with("FAIL\t") || l.starts_with("FAIL "),
        )
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        Some(format!(
            "a check must run `go test -v -run '^{}$' ./...`",
            test.name
        ))
    }
}

/// `go test -v`'s results, each test named `<package>/<TestName>` (subtests too,
/// `<package>/<TestName>/<case>`); `None` when the output is not `-v`'s.
pub fn read(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("go test");
    let mut verbose = false;
    // The tests seen since the last package line: (name, passed).
    let mut pending: Vec<(String, bool)> = Vec::new();
    for line in stdout.lines().chain(stderr.lines()) {
        let l = line.trim();
        if l.starts_with("=== RUN ") {
            verbose = true;
            continue;
        }
        let outcome = [("--- PASS: ", true), ("--- FAIL: ", false)]
            .into_iter()
            .find_map(|(p, ok)| l.strip_prefix(p).map(|rest| (rest, ok)));
        if let Some((rest, ok)) = outcome {
            let name = rest.split(" (").next().unwrap_or(rest).trim();
            pending.push((name.to_owned(), ok));
            continue;
        }
        // `ok  	example.com/calc	0.002s`, `FAIL	example.com/calc	0.002s`.
        let package = l
            .strip_prefix("ok ")
            .or_else(|| l.strip_prefix("FAIL\t"))
            .or_else(|| l.strip_prefix("FAIL "))
            .and_then(|rest| rest.split_whitespace().next());
        if let Some(package) = package {
            for (name, ok) in pending.drain(..) {
                t.record(format!("{package}/{name}"), ok);
            }
        }
    }
    // Tests after the last package line (its line cut off): by name alone.
    for (name, ok) in pending {
        t.record(name, ok);
    }
    t.finished().filter(|_| verbose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_is_named_by_its_package() {
        let out = "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestSub\n=== RUN   TestSub/neg\n    calc_test.go:12: got 1\n    --- FAIL: TestSub/neg (0.00s)\n--- FAIL: TestSub (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.002s\n=== RUN   TestParse\n--- PASS: TestParse (0.00s)\nPASS\nok  \texample.com/calc/parse\t0.001s\n";
        let t = read(out, "").unwrap();
        assert!(t.passed.contains("example.com/calc/TestAdd"), "{t:?}");
        assert!(t.failed.contains("example.com/calc/TestSub"));
        assert!(t.failed.contains("example.com/calc/TestSub/neg"));
        assert!(t.passed.contains("example.com/calc/parse/TestParse"));
        assert_eq!((t.passed_count, t.failed_count), (2, 2));
        // Without -v only failures are named: nothing by name.
        assert!(read(
            "--- FAIL: TestSub (0.00s)\nFAIL\texample.com/calc\t0.1s\n",
            ""
        )
        .is_none());
    }

    #[test]
    fn a_run_through_goflags_names_each_test_after_a_package_that_did_not_build() {
        // `GOFLAGS=-v go test ./...` with go 1.19, as recorded (output between cut).
        let out = "FAIL\texample.com/mod/broken [build failed]\n=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestTable\n=== RUN   TestTable/one_plus_one\n    calc_test.go:22: checking one plus one\n=== RUN   TestTable/two/plus_two\n    calc_test.go:24: Add(2,2) = 4, want 5\n--- FAIL: TestTable (0.00s)\n    --- PASS: TestTable/one_plus_one (0.00s)\n    --- FAIL: TestTable/two/plus_two (0.00s)\n=== RUN   TestMiddleFails\nstdout print from failing test\n--- FAIL: TestMiddleFails (0.00s)\n=== RUN   TestSkipped\n--- SKIP: TestSkipped (0.00s)\n=== RUN   TestPanics\n--- FAIL: TestPanics (0.00s)\npanic: assignment to entry in nil map [recovered]\nFAIL\texample.com/mod/calc\t0.011s\n=== RUN   TestUp\n--- PASS: TestUp (0.00s)\nok  \texample.com/mod/strutil\t0.002s\nFAIL\n";
        let t = read(out, "").unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            [
                "example.com/mod/calc/TestAdd",
                "example.com/mod/calc/TestTable/one_plus_one",
                "example.com/mod/strutil/TestUp"
            ]
        );
        assert_eq!(t.failed.len(), 4, "{t:?}");
        assert!(t
            .failed
            .contains("example.com/mod/calc/TestTable/two/plus_two"));
        let e = GoTest.excerpt(out).unwrap();
        assert!(e.starts_with("--- FAIL: TestTable"), "{e}");
    }

    #[test]
    fn verbose_is_asked_for_through_goflags() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Prepared {
            command: "make test".into(),
            env: vec![("GOFLAGS".into(), "-mod=vendor".into())],
            ..Default::default()
        };
        GoTest.prepare(&mut run, dir.path());
        assert_eq!(run.get("GOFLAGS").as_deref(), Some("-mod=vendor -v"));
        let a = GoTest
            .alone(
                "go test ./...",
                "example.com/calc/TestSub/neg",
                &[],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(a.command, "go test ./... -run '^TestSub$'");
    }
}
