//! The tests a change adds or edits must run, and pass. From the files the change touches, the
//! test functions that are new or whose text changed — pytest/unittest functions and methods,
//! Rust `#[test]` functions, Go `TestX` functions, jest/vitest/mocha `it`/`test` cases — are
//! found (by reading the file before and after, not by guessing from diff lines), then looked
//! up in what the checks' runners reported by name (JUnit XML from pytest, cargo's per-test
//! lines, `go test -v`). A new test that no check ran fails the attempt with a hint saying what
//! would run it; one that ran and failed fails it even when its check fails on the base.

use super::{CheckKind, CheckResult, CheckStatus};
use serde::Serialize;

/// The language of a test file, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Rust,
    Go,
    Js,
}

/// One test function or case in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFn {
    /// `test_x`, `TestClass::test_x`, `rounds_up`, `TestParse`, `adds two numbers`.
    pub name: String,
    /// Its text, to tell an edited test from one left alone.
    pub body: String,
    /// The cargo feature the file or the function is compiled under, when it says.
    pub feature: Option<String>,
    /// The pytest marks on it.
    pub marks: Vec<String>,
}

/// What became of a test the change adds or edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    NotRun,
    /// No check reports this language's tests by name: whether it ran cannot be told.
    Unknown,
}

/// A test the change adds or edits, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewTest {
    pub file: String,
    pub name: String,
    pub outcome: Outcome,
    /// The check that ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// For a test that never ran: what would run it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The language of `path`, when it is a test file.
pub fn lang(path: &str) -> Option<Lang> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let in_tests = path
        .split('/')
        .any(|p| p == "tests" || p == "test" || p == "__tests__");
    if file.ends_with(".py") {
        (file.starts_with("test_")
            || file.ends_with("_test.py")
            || (in_tests && file != "__init__.py"))
            .then_some(Lang::Python)
    } else if file.ends_with(".rs") {
        Some(Lang::Rust)
    } else if file.ends_with("_test.go") {
        Some(Lang::Go)
    } else if [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs"]
        .iter()
        .any(|e| file.ends_with(e))
    {
        (file.contains(".test.") || file.contains(".spec.") || path.contains("__tests__/"))
            .then_some(Lang::Js)
    } else {
        None
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The Python test functions and methods of `text`.
fn python(text: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut class: Option<(usize, String)> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let ind = indent(line);
        if !t.is_empty() && class.as_ref().is_some_and(|(ci, _)| ind <= *ci) {
            class = None;
        }
        if let Some(rest) = t.strip_prefix("class ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            class = Some((ind, name));
            continue;
        }
        let def = t
            .strip_prefix("async def ")
            .or_else(|| t.strip_prefix("def "));
        let Some(rest) = def else { continue };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.starts_with("test") {
            continue;
        }
        let end = lines[i + 1..]
            .iter()
            .position(|l| !l.trim().is_empty() && indent(l) <= ind)
            .map_or(lines.len(), |p| i + 1 + p);
        let marks = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with('@'))
            .filter_map(|l| {
                let m = l.trim_start().strip_prefix("@pytest.mark.")?;
                Some(
                    m.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                )
            })
            .collect();
        out.push(TestFn {
            name: match &class {
                Some((_, c)) => format!("{c}::{name}"),
                None => name,
            },
            body: lines[i..end].join("\n").trim_end().to_owned(),
            feature: None,
            marks,
        });
    }
    out
}

/// The text from `lines[start]` to the line that closes the first `{` opened there.
fn braced(lines: &[&str], start: usize) -> (String, usize) {
    let mut depth = 0i32;
    let mut opened = false;
    for (j, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return (lines[start..=j].join("\n"), j + 1);
        }
    }
    (lines[start..].join("\n"), lines.len())
}

/// The cargo feature a `cfg` attribute names: `feature = "x"` in `#[cfg(...)]`/`#![cfg(...)]`.
fn cfg_feature(line: &str) -> Option<String> {
    let t = line.trim_start();
    if !(t.starts_with("#[cfg(") || t.starts_with("#![cfg(")) {
        return None;
    }
    let at = t.find("feature")?;
    let rest = &t[at..];
    let q = rest.find('"')? + 1;
    let end = rest[q..].find('"')?;
    Some(rest[q..q + end].to_owned())
}

/// The Rust `#[test]` functions of `text` (any attribute whose path ends in `test`).
fn rust(text: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = text.lines().collect();
    let file_feature = lines
        .iter()
        .take_while(|l| !l.trim_start().starts_with("fn ") && !l.contains(" fn "))
        .filter(|l| l.trim_start().starts_with("#!["))
        .find_map(|l| cfg_feature(l));
    let modules = module_paths(&lines);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        let is_test = t.starts_with("#[")
            && t[2..]
                .split(['(', ']'])
                .next()
                .is_some_and(|p| p == "test" || p.ends_with("::test"));
        if !is_test {
            i += 1;
            continue;
        }
        let Some(f) = (i + 1..lines.len().min(i + 8)).find(|&j| {
            let l = lines[j].trim_start();
            l.starts_with("fn ") || l.contains(" fn ")
        }) else {
            i += 1;
            continue;
        };
        let after = lines[f].split("fn ").nth(1).unwrap_or("");
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let feature = lines[i..f]
            .iter()
            .find_map(|l| cfg_feature(l))
            .or(file_feature.clone());
        let (body, next) = braced(&lines, f);
        out.push(TestFn {
            name: format!("{}{name}", modules[f]),
            body,
            feature,
            marks: Vec::new(),
        });
        i = next.max(i + 1);
    }
    out
}

/// For each line, the inline modules it is in (`outer::inner::`, empty at the top): two tests
/// of one name in two modules are two tests.
fn module_paths(lines: &[&str]) -> Vec<String> {
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        out.push(open.iter().map(|(m, _)| format!("{m}::")).collect());
        let code = line.split("//").next().unwrap_or("");
        let t = code.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if code.contains('{') && !name.is_empty() {
                open.push((name, depth));
            }
        }
        let mut in_string = false;
        let mut escaped = false;
        let bare = code.replace("'{'", "").replace("'}'", "");
        for c in bare.chars() {
            if in_string {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => escaped = false,
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    while open.last().is_some_and(|(_, d)| *d >= depth) {
                        open.pop();
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The Go `func TestX(t *testing.T)` functions of `text`.
fn go(text: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("func Test") else {
            continue;
        };
        let name: String = std::iter::once('T')
            .chain("est".chars())
            .chain(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_'),
            )
            .collect();
        out.push(TestFn {
            name,
            body: braced(&lines, i).0,
            feature: None,
            marks: Vec::new(),
        });
    }
    out
}

/// The jest/vitest/mocha `it('…')` and `test('…')` cases of `text`.
fn js(text: &str) -> Vec<TestFn> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(rest) = ["it(", "test(", "it.only(", "test.only("]
            .iter()
            .find_map(|p| t.strip_prefix(p))
        else {
            continue;
        };
        let Some(q) = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        else {
            continue;
        };
        let name: String = rest[1..].chars().take_while(|c| *c != q).collect();
        out.push(TestFn {
            name,
            body: braced(&lines, i).0,
            feature: None,
            marks: Vec::new(),
        });
    }
    out
}

/// The tests of a file in `lang`.
pub fn tests_of(lang: Lang, text: &str) -> Vec<TestFn> {
    match lang {
        Lang::Python => python(text),
        Lang::Rust => rust(text),
        Lang::Go => go(text),
        Lang::Js => js(text),
    }
}

/// The tests of `path` that are new in `now` or whose text differs from `base`.
pub fn changed(path: &str, base: Option<&str>, now: &str) -> Vec<TestFn> {
    let Some(lang) = lang(path) else {
        return Vec::new();
    };
    let before = base.map(|b| tests_of(lang, b)).unwrap_or_default();
    tests_of(lang, now)
        .into_iter()
        .filter(|t| !before.iter().any(|b| b.name == t.name && b.body == t.body))
        .collect()
}

/// Whether a runner's test id names `test` of `file`.
fn names(lang: Lang, file: &str, test: &TestFn, id: &str) -> bool {
    match lang {
        Lang::Python => {
            // JUnit: `classname::name`, classname `tests.test_x[.Class]`, name `test_y[param]`.
            let Some((classname, name)) = id.rsplit_once("::") else {
                return false;
            };
            let name = name.split('[').next().unwrap_or(name);
            let stem = file
                .rsplit('/')
                .next()
                .unwrap_or(file)
                .trim_end_matches(".py");
            let (class, function) = match test.name.split_once("::") {
                Some((c, f)) => (Some(c), f),
                None => (None, test.name.as_str()),
            };
            name == function
                && classname.split('.').any(|p| p == stem)
                && class.is_none_or(|c| classname.rsplit('.').next() == Some(c))
        }
        Lang::Rust => {
            // cargo: `<binary>::<module path>::<name>`; a file under tests/ is its own binary.
            (id == test.name || id.ends_with(&format!("::{}", test.name)))
                && (!file.starts_with("tests/")
                    || id.starts_with(file)
                    || file
                        .rsplit_once('/')
                        .is_some_and(|(dir, _)| id.starts_with(dir) && dir != "tests"))
        }
        Lang::Go => id == test.name || id.ends_with(&format!("/{}", test.name)),
        Lang::Js => false,
    }
}

/// Whether a test check's command runs `lang`'s tests.
fn runs(lang: Lang, command: &str) -> bool {
    let c = command.to_lowercase();
    match lang {
        Lang::Rust => c.contains("cargo"),
        Lang::Go => c.contains("go test"),
        Lang::Python => [
            "pytest", "python", "tox", "nox", "poetry", "uv ", "pdm", "hatch",
        ]
        .iter()
        .any(|w| c.contains(w)),
        Lang::Js => false,
    }
}

/// What would run a test that no check ran.
fn hint(lang: Lang, file: &str, test: &TestFn) -> String {
    match lang {
        Lang::Rust => match &test.feature {
            Some(f) => format!(
                "it is compiled only with the cargo feature `{f}`: a check must run `cargo test --features {f}` (name one under [checks], or in the CI workflow ralph reads)"
            ),
            None => format!(
                "no check's cargo test ran it: does a check build {file}'s target (e.g. `cargo test --all-targets --workspace`)?"
            ),
        },
        Lang::Python => match test.marks.first() {
            Some(m) => format!(
                "it is marked `{m}`, which the checks' pytest leaves out: a check must run `python -m pytest -m {m} {file}`"
            ),
            None => format!(
                "no check's test run collected it: a check must run `python -m pytest {file}`"
            ),
        },
        Lang::Go => format!("a check must run `go test -v -run '^{}$' ./...`", test.name),
        Lang::Js => String::new(),
    }
}

/// What became of each of `tests` (file, test) in the checks' results.
pub fn locate(tests: &[(String, TestFn)], checks: &[CheckResult]) -> Vec<NewTest> {
    tests
        .iter()
        .map(|(file, test)| {
            let lang = lang(file).unwrap_or(Lang::Js);
            let reporting: Vec<&CheckResult> = checks
                .iter()
                .filter(|c| {
                    c.kind == CheckKind::Test
                        && c.status != CheckStatus::Unavailable
                        && runs(lang, &c.command)
                        && c.measure.tests.as_ref().is_some_and(|t| t.by_name)
                })
                .collect();
            let found = reporting.iter().find_map(|c| {
                let t = c.measure.tests.as_ref()?;
                if t.failed.iter().any(|id| names(lang, file, test, id)) {
                    Some((Outcome::Failed, c.name.clone()))
                } else if t.passed.iter().any(|id| names(lang, file, test, id)) {
                    Some((Outcome::Passed, c.name.clone()))
                } else {
                    None
                }
            });
            let (outcome, check, hint) = match found {
                // A failure anywhere counts, even where another check passed it.
                Some((Outcome::Passed, c)) => {
                    let failed_elsewhere = reporting.iter().find(|r| {
                        r.measure
                            .tests
                            .as_ref()
                            .is_some_and(|t| t.failed.iter().any(|id| names(lang, file, test, id)))
                    });
                    match failed_elsewhere {
                        Some(r) => (Outcome::Failed, Some(r.name.clone()), None),
                        None => (Outcome::Passed, Some(c), None),
                    }
                }
                Some((o, c)) => (o, Some(c), None),
                None if reporting.is_empty() => (Outcome::Unknown, None, None),
                None => (Outcome::NotRun, None, Some(hint(lang, file, test))),
            };
            NewTest {
                file: file.clone(),
                name: test.name.clone(),
                outcome,
                check,
                hint,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::compare::Measure;

    #[test]
    fn new_and_edited_tests_are_found_in_each_language() {
        let base = "import pytest\n\ndef test_old():\n    assert 1\n\nclass TestParse:\n    def test_keep(self):\n        assert True\n";
        let now = "import pytest\n\ndef test_old():\n    assert 2\n\nclass TestParse:\n    def test_keep(self):\n        assert True\n\n    @pytest.mark.slow\n    def test_new(self):\n        pass\n\ndef helper():\n    pass\n";
        let c = changed("tests/test_parse.py", Some(base), now);
        let names: Vec<&str> = c.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["test_old", "TestParse::test_new"]);
        assert_eq!(c[1].marks, ["slow"]);

        let rs = "#![cfg(feature = \"exact\")]\n\n#[test]\nfn rounds_up() {\n    assert_eq!(halve(3), 2);\n}\n\n#[tokio::test]\nasync fn later() {\n    x().await;\n}\n\nfn not_a_test() {}\n";
        let c = changed("tests/exact.rs", None, rs);
        assert_eq!(
            c.iter()
                .map(|t| (t.name.as_str(), t.feature.as_deref()))
                .collect::<Vec<_>>(),
            [("rounds_up", Some("exact")), ("later", Some("exact"))]
        );
        // Two tests of one name in two inline modules are two tests, named by their module.
        let mods = "mod array_vec {\n    use super::*;\n    #[test]\n    fn test_empty() {\n        let s = \"{\";\n    }\n}\n\npub(crate) mod array_string {\n    #[test]\n    fn test_empty() {}\n    mod deeper {\n        #[test]\n        fn test_full() {}\n    }\n    #[test]\n    fn test_after() {}\n}\n#[test]\nfn top() {}\n";
        assert_eq!(
            changed("tests/borsh.rs", None, mods)
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            [
                "array_vec::test_empty",
                "array_string::test_empty",
                "array_string::deeper::test_full",
                "array_string::test_after",
                "top"
            ]
        );
        let go = "package x\n\nfunc TestParse(t *testing.T) {\n\tif x {\n\t}\n}\n";
        assert_eq!(changed("x_test.go", None, go)[0].name, "TestParse");
        let js = "describe('x', () => {\n  it('adds two numbers', () => {\n    expect(1).toBe(1);\n  });\n});\n";
        assert_eq!(
            changed("src/add.test.ts", None, js)[0].name,
            "adds two numbers"
        );
        assert!(
            changed("src/lib.py", None, "def test_x():\n  pass\n").is_empty(),
            "not a test file"
        );
        assert!(changed("README.md", None, "x").is_empty());
    }

    fn check(name: &str, command: &str, passed: &[&str], failed: &[&str]) -> CheckResult {
        CheckResult {
            name: name.into(),
            kind: CheckKind::Test,
            command: command.into(),
            status: if failed.is_empty() {
                CheckStatus::Passed
            } else {
                CheckStatus::Failed
            },
            exit_code: Some(0),
            duration_ms: 0,
            output_tail: String::new(),
            hint: None,
            measure: Measure::tests_by_name(passed, failed),
            configured: false,
            advisory: None,
        }
    }

    #[test]
    fn each_new_test_is_found_in_the_runners_reports_or_named_as_never_run() {
        let gated = TestFn {
            name: "rounds_up".into(),
            body: String::new(),
            feature: Some("exact".into()),
            marks: vec![],
        };
        let plain = TestFn {
            name: "halves".into(),
            ..gated.clone()
        };
        let py = TestFn {
            name: "TestParse::test_new".into(),
            feature: None,
            ..gated.clone()
        };
        let tests = vec![
            ("tests/exact.rs".to_owned(), gated.clone()),
            ("tests/basic.rs".to_owned(), plain),
            ("tests/test_parse.py".to_owned(), py),
        ];
        let checks = vec![
            check("test", "cargo test", &["tests/basic.rs::halves"], &[]),
            check(
                "pytest",
                "python -m pytest",
                &[],
                &["tests.test_parse.TestParse::test_new[1]"],
            ),
        ];
        let found = locate(&tests, &checks);
        assert_eq!(found[0].outcome, Outcome::NotRun);
        assert!(found[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("cargo test --features exact"));
        assert_eq!(found[1].outcome, Outcome::Passed);
        assert_eq!(found[1].check.as_deref(), Some("test"));
        assert_eq!(found[2].outcome, Outcome::Failed);
        // Under the CI's feature check it ran and passed.
        let with_ci = [
            checks[0].clone(),
            check(
                "ci-test-exact",
                "cargo test --features exact --tests",
                &["tests/exact.rs::rounds_up"],
                &[],
            ),
        ];
        assert_eq!(locate(&tests[..1], &with_ci)[0].outcome, Outcome::Passed);
        // No check reports Rust tests by name: it cannot be told.
        let counted = CheckResult {
            measure: Measure::default(),
            ..checks[0].clone()
        };
        assert_eq!(locate(&tests[..1], &[counted])[0].outcome, Outcome::Unknown);
    }
}
