//! The tests a change adds or edits must run, and pass. From the files the change touches, the
//! test functions that are new or whose text changed — pytest/unittest functions and methods,
//! Rust `#[test]` functions, Go `TestX` functions, jest/vitest/mocha `it`/`test` cases — are
//! found (by reading the file before and after, not by guessing from diff lines), then looked
//! up in what the checks' runners reported by name (each id in its language's shape, see
//! [`super::tools::Role::Tests`]). A new test that no check ran fails the attempt with a hint
//! from its language's runners saying what would run it; one that ran and failed fails it even
//! when its check fails on the base.

use super::result::{CheckResult, CheckStatus};
use super::tools::CheckKind;
use super::tools::UNLOADED;
use serde::Serialize;

pub use super::tools::Lang;

/// One test function or case in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFn {
    /// `test_x`, `TestClass::test_x`, `rounds_up`, `TestParse`, `adds two numbers`.
    pub name: String,
    /// Its text, to tell an edited test from one left alone.
    pub body: String,
    /// The cargo feature the file or the function is compiled under, when it says.
    pub feature: Option<String>,
    /// The decorator lines above it (`@pytest.mark.slow`), for its runner to read.
    pub decorators: Vec<String>,
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
    /// The checks report tests by name, but ralph cannot tell which of them is this one (a
    /// Rust file no crate root reaches as far as ralph can read): it does not pass.
    Unidentified,
    /// The check that would run it was not run this time: the checks stopped at an earlier
    /// failure (an earlier attempt may well have run it).
    Skipped,
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
        // `tests.py`: a Django app's tests.
        (file.starts_with("test_")
            || file.ends_with("_test.py")
            || file == "tests.py"
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
        // A test/ folder's files are tests to mocha and AVA, but for their helpers and fixtures.
        let helper = file.starts_with('_')
            || path
                .split('/')
                .any(|p| p == "fixtures" || p == "helpers" || p == "node_modules");
        (file.contains(".test.")
            || file.contains(".spec.")
            || path.contains("__tests__/")
            || (in_tests && !helper))
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
        let mut decorators: Vec<String> = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with('@'))
            .map(|l| l.trim().to_owned())
            .collect();
        decorators.reverse();
        out.push(TestFn {
            name: match &class {
                Some((_, c)) => format!("{c}::{name}"),
                None => name,
            },
            body: lines[i..end].join("\n").trim_end().to_owned(),
            feature: None,
            decorators,
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

/// The lines of the call that opens on line `start` (a JavaScript `test(…)`), up to the line
/// where its parenthesis closes: a test written on one line (`test('x', () => expect(…))`)
/// ends there, braces or none.
fn called(lines: &[&str], start: usize) -> String {
    let mut depth = 0i32;
    for (j, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
        }
        if depth <= 0 {
            return lines[start..=j].join("\n");
        }
    }
    lines[start..].join("\n")
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
    let modules = super::rust_modules::module_paths(&lines);
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
            decorators: Vec::new(),
        });
        i = next.max(i + 1);
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
            decorators: Vec::new(),
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
        // `t.test(…)`: node-tap's subtest.
        let Some(rest) = ["it(", "test(", "it.only(", "test.only(", "t.test("]
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
            body: called(&lines, i),
            feature: None,
            decorators: Vec::new(),
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

/// Whether a runner's test id names `test` of `file`, `rust` holding the ids cargo gives it
/// (its test binaries and module paths).
fn names(lang: Lang, file: &str, test: &TestFn, rust: &[String], id: &str) -> bool {
    match lang {
        Lang::Python => python_names(file, test, id),
        Lang::Rust => rust.iter().any(|r| r == id),
        // go test -v: `<import path>/<TestName>`, the import path ending in the file's folder.
        Lang::Go => match file.rsplit_once('/') {
            Some((dir, _)) => id.ends_with(&format!("/{dir}/{}", test.name)),
            None => id == test.name || id.ends_with(&format!("/{}", test.name)),
        },
        // jest/vitest: a passing file stands for its tests; a failure is `file::… name`.
        // node --test and mocha name no file: `suite > name` alone.
        Lang::Js => match id.split_once("::") {
            Some((reported, title)) => {
                same_file(file, reported)
                    && title != UNLOADED
                    && title.ends_with(test.name.as_str())
            }
            None if self::lang(id) == Some(Lang::Js) => same_file(file, id),
            None => id == test.name || id.ends_with(&format!(" > {}", test.name)),
        },
    }
}

/// Whether `reported` (relative to where the runner ran) is the project's `file`.
fn same_file(file: &str, reported: &str) -> bool {
    let reported = reported.trim_start_matches("./");
    file == reported || file.ends_with(&format!("/{reported}"))
}

/// Whether a JUnit id (`classname::name`) names the Python `test` of `file`: the classname is
/// the file's dotted path as pytest names it from its rootdir (so a suffix of the path from
/// the project's top), then the class; the name is the function, with any parameters.
fn python_names(file: &str, test: &TestFn, id: &str) -> bool {
    // A case's parameters (`test_k[a::b]`) may hold anything, `::` too.
    let head = id.split('[').next().unwrap_or(id);
    let Some((classname, name)) = head.rsplit_once("::") else {
        return false;
    };
    let (class, function) = match test.name.split_once("::") {
        Some((c, f)) => (Some(c), f),
        None => (None, test.name.as_str()),
    };
    let module = match class {
        Some(c) => match classname.strip_suffix(c).and_then(|m| m.strip_suffix('.')) {
            Some(m) => m,
            None => return false,
        },
        None => classname,
    };
    let dotted = file.trim_end_matches(".py").replace('/', ".");
    name == function
        && !module.is_empty()
        && (dotted == module || dotted.ends_with(&format!(".{module}")))
}

/// What would run a test that no check ran, as its language's runners say; `reporting` are the
/// checks that report `lang`'s tests by name.
fn hint(
    lang: Lang,
    file: &str,
    test: &TestFn,
    reporting: &[&CheckResult],
    checks: &[CheckResult],
) -> String {
    fn view(c: &CheckResult) -> super::tools::Checked<'_> {
        super::tools::Checked {
            name: &c.name,
            command: &c.command,
            failing_on_base: c.kind == CheckKind::Test && c.status == CheckStatus::FailingOnBase,
        }
    }
    let reporting: Vec<super::tools::Checked> = reporting.iter().map(|c| view(c)).collect();
    let all: Vec<super::tools::Checked> = checks.iter().map(view).collect();
    let missed = super::tools::Missed {
        file,
        name: &test.name,
        feature: test.feature.as_deref(),
        decorators: &test.decorators,
        reporting: &reporting,
        checks: &all,
    };
    super::tools::missed_hint(lang, &missed)
        .unwrap_or_else(|| format!("no check's test run reported {file}: a check must run it"))
}

/// What became of each of `tests` (file, test) in the checks' results; `tree` is the project,
/// where a Rust file's test binaries and module paths are read.
pub fn locate(
    tests: &[(String, TestFn)],
    checks: &[CheckResult],
    tree: &dyn super::rust_modules::Tree,
) -> Vec<NewTest> {
    tests
        .iter()
        .map(|(file, test)| {
            let lang = lang(file).unwrap_or(Lang::Js);
            let places = if lang == Lang::Rust {
                super::rust_modules::places(tree, file)
            } else {
                Vec::new()
            };
            let lookup = Lookup {
                file,
                test,
                lang,
                rust: places.iter().map(|p| p.test_id(&test.name)).collect(),
                reporting: checks
                    .iter()
                    .filter(|c| {
                        c.kind == CheckKind::Test
                            && c.status != CheckStatus::Unavailable
                            && c.uses.runs(lang)
                            && c.measure.tests.as_ref().is_some_and(|t| t.by_name)
                    })
                    .collect(),
                checks,
            };
            let (outcome, check, hint) = lookup.verdict();
            NewTest {
                file: file.clone(),
                // A Rust test by its module path in its binary, where it has one.
                name: match places.as_slice() {
                    [one] => format!("{}{}", one.module, test.name),
                    _ => test.name.clone(),
                },
                outcome,
                check,
                hint,
            }
        })
        .collect()
}

/// One new test looked up in the checks' reports.
struct Lookup<'a> {
    file: &'a str,
    test: &'a TestFn,
    lang: Lang,
    /// The ids cargo gives a Rust test (its test binaries and module paths).
    rust: Vec<String>,
    /// The checks whose runners report this language's tests by name.
    reporting: Vec<&'a CheckResult>,
    checks: &'a [CheckResult],
}

impl Lookup<'_> {
    /// What became of it in `c`'s report.
    fn outcome_in(&self, c: &CheckResult) -> Option<Outcome> {
        let t = c.measure.tests.as_ref()?;
        let named = |id: &String| names(self.lang, self.file, self.test, &self.rust, id);
        if t.failed.iter().any(named) {
            Some(Outcome::Failed)
        } else if t.passed.iter().any(named) {
            Some(Outcome::Passed)
        } else {
            None
        }
    }

    /// The cases of it that failed under the check `name`, when it is parametrized (`failing
    /// case(s): test_x[3-7]`).
    fn failing_cases(&self, name: &str) -> Option<String> {
        let c = self.reporting.iter().find(|c| c.name == name)?;
        let t = c.measure.tests.as_ref()?;
        let named = |id: &&String| names(self.lang, self.file, self.test, &self.rust, id);
        let cases: Vec<&str> = t
            .failed
            .iter()
            .filter(named)
            .filter_map(|id| id.find('[').map(|at| &id[at..]))
            .collect();
        if cases.is_empty() {
            return None;
        }
        let function = self
            .test
            .name
            .rsplit("::")
            .next()
            .unwrap_or(&self.test.name);
        let passed = t.passed.iter().filter(|id| named(id)).count();
        Some(format!(
            "failing case(s): {}{}",
            cases
                .iter()
                .take(5)
                .map(|p| format!("`{function}{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if passed > 0 {
                format!(" ({passed} other case(s) pass)")
            } else {
                String::new()
            }
        ))
    }

    /// Its file's failures in the reports: `(title, check, whether the report names a passing
    /// file for its tests)` of each.
    fn file_failures(&self) -> Vec<(&str, &str, bool)> {
        self.reporting
            .iter()
            .filter_map(|c| Some((c, c.measure.tests.as_ref()?)))
            .flat_map(|(c, t)| {
                t.failed.iter().filter_map(move |id| {
                    let (f, title) = id.split_once("::")?;
                    same_file(self.file, f).then_some((title, c.name.as_str(), t.by_file))
                })
            })
            .collect()
    }

    /// Its outcome, the check that ran it, and — when it did not pass — what to do.
    fn verdict(&self) -> (Outcome, Option<String>, Option<String>) {
        let file = self.file;
        // A failure anywhere counts, even where another check passed it.
        let found = self
            .reporting
            .iter()
            .find(|c| self.outcome_in(c) == Some(Outcome::Failed))
            .or_else(|| self.reporting.iter().find(|c| self.outcome_in(c).is_some()))
            .map(|c| {
                (
                    self.outcome_in(c).unwrap_or(Outcome::Passed),
                    c.name.clone(),
                )
            });
        // The check that runs it was left out after an earlier failure: not run this time.
        let left_out = self.checks.iter().find(|c| {
            c.kind == CheckKind::Test && c.status == CheckStatus::Skipped && c.uses.runs(self.lang)
        });
        let failures = self.file_failures();
        let unnamed = self.checks.iter().find(|c| {
            c.kind == CheckKind::Test
                && c.uses.runs(self.lang)
                && matches!(c.status, CheckStatus::Passed | CheckStatus::Failed)
                && c.exit_code.is_some()
                && !c.measure.tests.as_ref().is_some_and(|t| t.by_name)
        });
        // jest could not load the file at all: none of its tests ran under that check (another
        // check that loaded it, its build made first, tells what became of them).
        let unloaded = failures
            .iter()
            .find(|(title, _, _)| *title == UNLOADED)
            .map(|(_, c, _)| *c);
        match found {
            None if unloaded.is_some() => (
                Outcome::NotRun,
                None,
                Some(format!(
                    "{file} could not be loaded under `{}` (\"{UNLOADED}\": see its output; a module it imports may need the project's build first)",
                    unloaded.unwrap_or_default()
                )),
            ),
            None if left_out.is_some() => (
                Outcome::Skipped,
                left_out.map(|c| c.name.clone()),
                Some("not run this time: the checks stopped at an earlier failure".to_owned()),
            ),
            // A parametrized test is told by its cases: which of them failed.
            Some((Outcome::Failed, c)) => {
                let cases = self.failing_cases(&c);
                (Outcome::Failed, Some(c), cases)
            }
            Some((o, c)) => (o, Some(c), None),
            None if self.reporting.is_empty() => (Outcome::Unknown, None, None),
            // A runner that names a failing file's failures only (jest's default reporter):
            // another test failing in it hides whether this one passed.
            None if failures.iter().any(|(_, _, by_file)| *by_file) => (
                Outcome::Unidentified,
                None,
                Some(format!(
                    "the runner of `{}` names only the failing tests of a file, and other tests of {file} fail: whether this one passed cannot be told",
                    failures.iter().find(|(_, _, by_file)| *by_file).map_or("", |(_, c, _)| *c)
                )),
            ),
            None if self.lang == Lang::Rust && self.rust.is_empty() => (
                Outcome::Unidentified,
                None,
                Some(format!(
                    "no crate root reaches {file} through `mod` declarations, `#[path]`, `include!` or `automod::dir!`, so ralph cannot tell which test in cargo's report is this one"
                )),
            ),
            // A check that may run it ran without naming its tests: it may have run it.
            None if unnamed.is_some() => (
                Outcome::Unknown,
                None,
                unnamed.map(|c| {
                    format!(
                        "`{}` ran without naming its tests (ralph reads them from {} and plain TAP or PASS:/FAIL: lines): it may have run this one",
                        c.name,
                        super::tools::runners().join(", ")
                    )
                }),
            ),
            None => {
                let mut why = hint(self.lang, file, self.test, &self.reporting, self.checks);
                // A run stopped at its first failure (`--bail`, `-x`) names no test after it.
                let stopped = self.reporting.iter().find(|c| {
                    c.status == CheckStatus::Failed
                        && c.measure.tests.as_ref().is_some_and(|t| !t.failed.is_empty())
                });
                if let Some(c) = stopped {
                    why.push_str(&format!(
                        " (or `{}`, which failed first, stopped before it: a runner told to stop at its first failure runs no more)",
                        c.name
                    ));
                }
                (Outcome::NotRun, None, Some(why))
            }
        }
    }
}

#[cfg(test)]
mod tests;
