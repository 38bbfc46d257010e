//! Per-test results read from the console of runners that print one line per test: `go test
//! -v` (`--- PASS: TestX`, named by the package its `ok`/`FAIL` line then names) and ctest
//! (`1/3 Test #1: name ....   Passed`). Without `-v`, go test names only its failures, so it
//! says nothing by name. jest's and vitest's default reporters name each test file that
//! passed and each test that failed (`● suite › name`, `FAIL  file > suite > name`): a file
//! that passed stands for all its tests (`file`), a failure is `file::suite › name`.

use super::compare::{Runner, TestOutcomes};

/// `go test -v`'s results, each test named `<package>/<TestName>` (subtests too,
/// `<package>/<TestName>/<case>`); `None` when the output is not `-v`'s.
pub fn go_tests(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes {
        by_name: true,
        runner: Runner::Go,
        ..TestOutcomes::default()
    };
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
                let id = format!("{package}/{name}");
                if ok {
                    t.passed.insert(id);
                } else {
                    t.failed.insert(id);
                }
            }
        }
    }
    // Tests after the last package line (its line cut off): by name alone.
    for (name, ok) in pending {
        if ok {
            t.passed.insert(name);
        } else {
            t.failed.insert(name);
        }
    }
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    (verbose && t.passed_count + t.failed_count > 0).then_some(t)
}

/// ctest's results: `N/M Test #K: name .....   Passed|***Failed|***Timeout|***Exception…`
/// (a test ctest did not run, `***Not Run`, is neither).
pub fn ctest_tests(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes {
        by_name: true,
        runner: Runner::Ctest,
        ..TestOutcomes::default()
    };
    for line in stdout.lines().chain(stderr.lines()) {
        let Some(at) = line.find(" Test #") else {
            continue;
        };
        let rest = &line[at + " Test #".len()..];
        let Some((number, rest)) = rest.split_once(": ") else {
            continue;
        };
        if !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let name = rest.split(" .").next().unwrap_or(rest).trim();
        let verdict = rest[name.len()..].trim_start_matches([' ', '.']);
        if name.is_empty() {
            continue;
        }
        if verdict.starts_with("Passed") {
            t.passed.insert(name.to_owned());
        } else if verdict.starts_with("***Not Run") || verdict.starts_with("***Skipped") {
            continue;
        } else if verdict.starts_with("***") || verdict.starts_with("Failed") {
            t.failed.insert(name.to_owned());
        }
    }
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    (t.passed_count + t.failed_count > 0).then_some(t)
}

/// jest's or vitest's results by their default reporter: each passing test file as `file`, each
/// failing test as `file::title` (a file that could not run: `file::Test suite failed to run`).
pub fn js_tests(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes {
        by_name: true,
        runner: Runner::Jest,
        ..TestOutcomes::default()
    };
    let text = crate::output::strip_ansi(&format!("{stdout}\n{stderr}"));
    // jest: the file whose block the `●` lines are in.
    let mut failing_file: Option<String> = None;
    let file_of = |rest: &str| -> Option<String> {
        let f = rest.split_whitespace().next()?;
        let test_file = [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts"]
            .iter()
            .any(|e| f.ends_with(e));
        test_file.then(|| f.to_owned())
    };
    for line in text.lines() {
        let l = line.trim();
        // vitest: ` ✓ src/a.test.ts (3 tests) 5ms`; ` FAIL  src/b.test.ts > s > name`.
        if let Some(rest) = l.strip_prefix("✓ ") {
            if rest.contains(" test") {
                if let Some(f) = file_of(rest) {
                    t.passed.insert(f);
                }
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix("FAIL ").map(str::trim_start) {
            if let Some((file, title)) = rest.split_once(" > ") {
                if file_of(file).is_some() {
                    t.failed
                        .insert(format!("{}::{}", file.trim(), title.trim()));
                    continue;
                }
            }
            // jest: `FAIL packages/x/y.test.ts (5.1 s)` opens the block of its failures.
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
    // A file both passed and failed (vitest lists a failing file's tests): it failed.
    let failed_files: Vec<String> = t
        .failed
        .iter()
        .filter_map(|id| id.split_once("::").map(|(f, _)| f.to_owned()))
        .collect();
    t.passed.retain(|f| !failed_files.contains(f));
    t.passed_count = t.passed.len() as u64;
    t.failed_count = t.failed.len() as u64;
    (t.passed_count + t.failed_count > 0).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_test_v_names_each_test_by_its_package() {
        let out = "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestSub\n=== RUN   TestSub/neg\n    calc_test.go:12: got 1\n    --- FAIL: TestSub/neg (0.00s)\n--- FAIL: TestSub (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.002s\n=== RUN   TestParse\n--- PASS: TestParse (0.00s)\nPASS\nok  \texample.com/calc/parse\t0.001s\n";
        let t = go_tests(out, "").unwrap();
        assert!(t.passed.contains("example.com/calc/TestAdd"), "{t:?}");
        assert!(t.failed.contains("example.com/calc/TestSub"));
        assert!(t.failed.contains("example.com/calc/TestSub/neg"));
        assert!(t.passed.contains("example.com/calc/parse/TestParse"));
        assert_eq!((t.passed_count, t.failed_count), (2, 2));
        // Without -v only failures are named: nothing by name.
        assert!(go_tests(
            "--- FAIL: TestSub (0.00s)\nFAIL\texample.com/calc\t0.1s\n",
            ""
        )
        .is_none());
    }

    #[test]
    fn ctest_lines_name_each_test() {
        let out = "Test project /tmp/b\n    Start 1: add\n1/4 Test #1: add ..............................   Passed    0.00 sec\n    Start 2: sub\n2/4 Test #2: sub ..............................***Failed    0.01 sec\n3/4 Test #3: slow ...........................***Timeout  10.00 sec\n4/4 Test #4: gone ...........................***Not Run   0.00 sec\n\n50% tests passed, 2 tests failed out of 4\n";
        let t = ctest_tests(out, "").unwrap();
        assert_eq!(t.passed.iter().collect::<Vec<_>>(), ["add"]);
        assert_eq!(t.failed.iter().collect::<Vec<_>>(), ["slow", "sub"]);
        assert!(ctest_tests("no tests were found", "").is_none());
    }

    #[test]
    fn jest_and_vitest_name_passing_files_and_failing_tests() {
        // jest, as actions/toolkit's suite prints it on a machine without network.
        let jest = "\u{1b}[0m\u{1b}[7m\u{1b}[1m\u{1b}[32m PASS \u{1b}[39m\u{1b}[22m\u{1b}[27m\u{1b}[0m packages/core/__tests__/command.test.ts\nFAIL packages/http-client/__tests__/basics.test.ts (5.123 s)\n  ● basics › does basic http get request\n\n    getaddrinfo EAI_AGAIN postman-echo.com\n\n  ● basics › second\n\nFAIL packages/artifact/__tests__/download.test.ts\n  ● Test suite failed to run\n\n    Cannot find module\nPASS packages/io/__tests__/io.test.ts\n\nTest Suites: 2 failed, 2 passed, 4 total\nTests:       2 failed, 30 passed, 32 total\n";
        let t = js_tests("", jest).unwrap();
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
        let vitest = " ✓ src/sum.test.ts (2 tests) 3ms\n ❯ src/fail.test.ts (2 tests | 1 failed) 5ms\n   × fail > broken 3ms\n\n FAIL  src/fail.test.ts > fail > broken\nAssertionError: expected 1 to be 2\n\n Test Files  1 failed | 1 passed (2)\n";
        let t = js_tests(vitest, "").unwrap();
        assert_eq!(t.passed.iter().collect::<Vec<_>>(), ["src/sum.test.ts"]);
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["src/fail.test.ts::fail > broken"]
        );
        assert!(js_tests("everything is fine", "").is_none());
    }
}
