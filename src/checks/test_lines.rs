//! Per-test results read from the console of runners that print one line per test: `go test
//! -v` (`--- PASS: TestX`, named by the package its `ok`/`FAIL` line then names) and ctest
//! (`1/3 Test #1: name ....   Passed`). Without `-v`, go test names only its failures, so it
//! says nothing by name.

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
}
