//! unittest and the runners built on it — `python -m unittest`, Django's `manage.py test` and
//! `runtests.py`, `python setup.py test`. None names its tests by default, and a runner's own
//! flags cannot be guessed (a `runtests.py` may take its arguments for test labels), so ralph
//! asks through the environment: a `sitecustomize` module of its own, first on `PYTHONPATH`,
//! records each test's outcome as unittest's `TestResult` sees it into a file of the run's (the
//! next `sitecustomize` on the path still runs). Where that cannot reach (`python -I`, a tox
//! environment that drops `PYTHONPATH`), the `-v` lines (`test_x (pkg.mod.Class.test_x) ... ok`)
//! are read. Tests are named `pkg.mod.Class::test_x`; one is run alone by its id through `python
//! -m unittest`.

use super::shell::Call;
use super::tool::{Alone, Env, Lang, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct Unittest;

/// The folder of the run's own that holds the hook and its report.
const DIR: &str = "unittest";
/// The variable naming the report the hook appends to.
const REPORT_VAR: &str = "RALPH_UNITTEST_REPORT";

/// The hook: each outcome unittest records, as `outcome<TAB>id`, then the `sitecustomize` it
/// stands in front of.
const HOOK: &str = r#"import os as _os, sys as _sys

def _ralph_hook():
    report = _os.environ.get("RALPH_UNITTEST_REPORT")
    if not report:
        return
    import unittest.result as _r

    def wrap(name, outcome):
        original = getattr(_r.TestResult, name)

        def recording(self, test, *args, **kwargs):
            try:
                said = outcome
                if name == "addSubTest":
                    said = "failed" if len(args) > 1 and args[1] is not None else None
                if said:
                    with open(report, "a", encoding="utf-8") as f:
                        f.write("%s\t%s\n" % (said, test.id().replace("\n", " ")))
            except Exception:
                pass
            return original(self, test, *args, **kwargs)

        setattr(_r.TestResult, name, recording)

    for name, outcome in [("addSuccess", "passed"), ("addFailure", "failed"),
                          ("addError", "failed"), ("addUnexpectedSuccess", "failed"),
                          ("addExpectedFailure", "passed"), ("addSubTest", None)]:
        wrap(name, outcome)

def _ralph_next():
    import importlib.machinery, importlib.util
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

try:
    _ralph_hook()
finally:
    _ralph_next()
"#;

impl Tool for Unittest {
    fn name(&self) -> &'static str {
        "unittest"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Python)
    }

    fn is(&self, call: &Call, project: Option<&Project>) -> bool {
        let interpreter = super::python::interpreter(call.name());
        let script = if interpreter {
            call.args.first().map(String::as_str).unwrap_or("")
        } else {
            call.program.as_str()
        };
        let file = script.rsplit('/').next().unwrap_or(script);
        let then = if interpreter {
            call.args.get(1).map(String::as_str)
        } else {
            call.args.first().map(String::as_str)
        };
        match (call.name(), file, then) {
            ("unittest", ..) | ("django-admin", _, Some("test")) => true,
            (_, "manage.py" | "setup.py", Some("test")) => true,
            (_, f, _) if f.ends_with(".py") && f.contains("runtests") => project
                .and_then(|p| p.text(script.trim_start_matches("./")))
                .is_some_and(|t| t.contains("django") || t.contains("unittest")),
            _ => false,
        }
    }

    fn alone_in(&self, env: &Env, file: &str, name: &str) -> Option<Alone> {
        // unittest runs a test of a class alone: `python -m unittest module.Class.test`.
        let (class, _) = name.split_once("::")?;
        let module = file.strip_suffix(".py")?.replace('/', ".");
        let command = env.python("-m unittest");
        self.alone(
            &command,
            &format!("{module}.{class}::{}", &name[class.len() + 2..]),
            &[],
            &Default::default(),
        )
    }

    fn prepare(&self, run: &mut Prepared, scratch: &Path) {
        let dir = run.own_dir(scratch, DIR);
        if std::fs::write(dir.join("sitecustomize.py"), HOOK).is_err() {
            return;
        }
        let path = match run.get("PYTHONPATH").filter(|p| !p.is_empty()) {
            Some(rest) => format!("{}:{rest}", dir.display()),
            None => dir.display().to_string(),
        };
        run.set("PYTHONPATH", path);
        run.set(REPORT_VAR, dir.join("report.tsv").display().to_string());
        if run.command.trim_start().starts_with("python") && super::shell::plain(&run.command) {
            if let Some(verbose) = verbose(&run.command) {
                run.command = verbose;
            }
        }
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        let hooked = printed
            .scratch
            .map(|s| s.join(DIR).join("report.tsv"))
            .and_then(|f| crate::untrusted_dir::report_text(&f, "the unittest report"))
            .and_then(|text| from_report(&text));
        hooked.or_else(|| from_verbose(&format!("{}\n{}", printed.stderr, printed.stdout)))
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("tests.test_calc.Calc::test_add")
    }

    fn alone(
        &self,
        command: &str,
        id: &str,
        _: &[(String, String)],
        _: &super::tool::Uses,
    ) -> Option<Alone> {
        let (owner, function) = id.split_once("::")?;
        let dotted = owner
            .split('.')
            .chain(std::iter::once(function))
            .all(super::shell::word);
        let at = command.find("-m unittest")?;
        (dotted && super::shell::plain(command)).then(|| Alone {
            command: format!(
                "{} {owner}.{function}",
                &command[..at + "-m unittest".len()]
            ),
            env: Vec::new(),
        })
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        // Its failure blocks: a banner, then `FAIL: test (id)` or `ERROR: test (id)` — a banner
        // alone is anyone's.
        let lines: Vec<&str> = text.lines().collect();
        let first = lines.windows(2).position(|w| {
            w[0].starts_with("======")
                && !w[0].contains(' ')
                && (w[1].starts_with("FAIL: ") || w[1].starts_with("ERROR: "))
                && w[1].ends_with(')')
        })?;
        super::excerpt::section(
            &lines[first..].join("\n"),
            |_| true,
            |l| l.starts_with("FAILED (") || l.starts_with("Ran "),
        )
    }
}

/// `python -m unittest …` with `-v` at its end (where `discover` takes it too), when it has
/// none.
fn verbose(command: &str) -> Option<String> {
    let at = command.find("-m unittest")? + "-m unittest".len();
    let has = command[at..]
        .split_whitespace()
        .any(|w| w == "-v" || w == "--verbose");
    (!has).then(|| format!("{} -v", command.trim_end()))
}

/// A unittest id (`pkg.mod.Class.test_x`, `setUpClass (pkg.mod.Class)`,
/// `unittest.loader._FailedTest.pkg.mod`) as a Python test id: `pkg.mod.Class::test_x`.
fn python_id(id: &str) -> String {
    let id = id.trim();
    if let Some((what, owner)) = id.strip_suffix(')').and_then(|i| i.split_once(" (")) {
        // A subtest's `(i=1)` is its test's; a class or module fixture names its owner.
        if what.contains('.') {
            return python_id(what);
        }
        return format!("{owner}::{what}");
    }
    if let Some(module) = id.strip_prefix("unittest.loader._FailedTest.") {
        return format!("{module}::<import>");
    }
    match id.rsplit_once('.') {
        Some((owner, name)) => format!("{owner}::{name}"),
        None => id.to_owned(),
    }
}

/// The outcomes the hook recorded.
fn from_report(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("unittest");
    for line in text.lines() {
        let Some((outcome, id)) = line.split_once('\t') else {
            continue;
        };
        let id = python_id(id);
        match outcome {
            "passed" if !t.failed.contains(&id) => t.record(id, true),
            "failed" => {
                t.passed.remove(&id);
                t.record(id, false);
            }
            _ => {}
        }
    }
    t.finished()
}

/// The outcomes of `-v`'s lines: `name (id) ... ok`, the outcome on the next line after a
/// docstring.
fn from_verbose(text: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("unittest");
    let mut open: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("======") || line.starts_with("Ran ") {
            break;
        }
        let (head, outcome) = match line.rsplit_once(" ... ") {
            Some((h, o)) => (Some(h), Some(o.trim())),
            None => (Some(line), None),
        };
        let named = head.and_then(|h| {
            let (name, rest) = h.trim().split_once(" (")?;
            let owner = rest.split(')').next()?;
            let id = if owner.ends_with(&format!(".{name}")) {
                owner.to_owned()
            } else {
                format!("{owner}.{name}")
            };
            (!name.contains(' ')).then(|| python_id(&id))
        });
        let id = match (named, &open) {
            (Some(id), _) => Some(id),
            (None, Some(id)) if outcome.is_some() => Some(id.clone()),
            _ => None,
        };
        match (id, outcome) {
            (Some(id), Some(o)) => {
                open = None;
                match o {
                    "ok" | "expected failure" => t.record(id, true),
                    "FAIL" | "ERROR" | "unexpected success" => t.record(id, false),
                    _ => {}
                }
            }
            (Some(id), None) => open = Some(id),
            _ => {}
        }
    }
    let failed = t.failed.clone();
    t.passed.retain(|p| !failed.contains(p));
    t.finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `python -m unittest -v` on Python 3.11, as recorded: a docstring puts the outcome on the
    /// next line; a subtest, a class fixture and a module that fails to import.
    const VERBOSE: &str = "test_add (tests.test_a_pass.TestAlpha.test_add)\nAdds numbers: a docstring first line. ... ok\ntest_subtests (tests.test_a_pass.TestAlpha.test_subtests) ... ok\ntest_dict_equal (tests.test_b_fail.TestBeta.test_dict_equal) ... FAIL\ntest_subtest_fails (tests.test_b_fail.TestBeta.test_subtest_fails) ... \n  test_subtest_fails (tests.test_b_fail.TestBeta.test_subtest_fails) (i=1) ... FAIL\ntest_raises (tests.test_c_mixed.TestGamma.test_raises) ... ERROR\ntest_skipped (tests.test_c_mixed.TestGamma.test_skipped) ... skipped 'not today'\ntest_xfail (tests.test_c_mixed.TestGamma.test_xfail) ... expected failure\nERROR\ntests.test_d_broken_import (unittest.loader._FailedTest.tests.test_d_broken_import) ... ERROR\ntest_after_failure (tests.test_e_pass.TestOmega.test_after_failure) ... ok\n\n======================================================================\nERROR: test_raises (tests.test_c_mixed.TestGamma.test_raises)\n";

    #[test]
    fn its_failure_blocks_explain_it_and_anothers_banner_does_not() {
        let e = Unittest.excerpt(VERBOSE).unwrap();
        assert!(e.starts_with("======"), "{e}");
        assert!(e.contains("ERROR: test_raises (tests.test_c_mixed.TestGamma.test_raises)"));
        let banners = "================================================================================\n  test suite\n================================================================================\nPASS: a\nFAIL: b\n";
        assert_eq!(Unittest.excerpt(banners), None);
    }

    #[test]
    fn verbose_lines_name_each_test() {
        let t = from_verbose(VERBOSE).unwrap();
        let passed: Vec<&String> = t.passed.iter().collect();
        assert_eq!(
            passed,
            [
                "tests.test_a_pass.TestAlpha::test_add",
                "tests.test_a_pass.TestAlpha::test_subtests",
                "tests.test_c_mixed.TestGamma::test_xfail",
                "tests.test_e_pass.TestOmega::test_after_failure"
            ]
        );
        assert!(t
            .failed
            .contains("tests.test_b_fail.TestBeta::test_subtest_fails"));
        assert!(t
            .failed
            .contains("tests.test_c_mixed.TestGamma::test_raises"));
        assert!(
            t.failed.contains("tests.test_d_broken_import::<import>"),
            "{t:?}"
        );
        assert_eq!(t.failed.len(), 4);
        // Python 3.10 names the class only.
        let old = from_verbose("test_add (tests.test_a.TestA) ... ok\n").unwrap();
        assert!(old.passed.contains("tests.test_a.TestA::test_add"));
    }

    #[test]
    fn the_hooks_report_names_each_test() {
        let report = "passed\ttests.test_a.TestA.test_ok\nfailed\ttests.test_a.TestA.test_sub\npassed\ttests.test_a.TestA.test_sub\nfailed\tsetUpClass (tests.test_c.TestC)\nfailed\tunittest.loader._FailedTest.tests.test_d\n";
        let t = from_report(report).unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["tests.test_a.TestA::test_ok"]
        );
        assert!(t.failed.contains("tests.test_a.TestA::test_sub"));
        assert!(t.failed.contains("tests.test_c.TestC::setUpClass"));
        assert!(t.failed.contains("tests.test_d::<import>"));
    }

    #[test]
    fn django_and_unittest_runners_are_known() {
        let p = Project::in_memory(
            std::path::Path::new("/p"),
            &[
                (
                    "runtests.py",
                    "import django\nfrom django.test.utils import get_runner\n",
                ),
                ("tools/runtests.py", "print('not a test runner')\n"),
            ],
        );
        for (words, is) in [
            (&["python", "-m", "unittest"][..], false),
            (&["unittest", "discover"][..], true),
            (&["python3", "manage.py", "test"][..], true),
            (&["django-admin", "test"][..], true),
            (&["python", "runtests.py"][..], true),
            (&["./runtests.py"][..], true),
            (&["python", "tools/runtests.py"][..], false),
        ] {
            assert_eq!(Unittest.is(&Call::of(words), Some(&p)), is, "{words:?}");
        }
        assert_eq!(
            crate::checks::tools::recognise("python -m unittest discover -s tests", None).tools,
            ["python", "unittest"]
        );
    }

    #[test]
    fn a_direct_run_asks_for_verbose_lines_and_one_test_runs_alone() {
        assert_eq!(
            verbose("python -m unittest discover -s tests").as_deref(),
            Some("python -m unittest discover -s tests -v")
        );
        assert_eq!(verbose("python -m unittest -v"), None);
        let a = Unittest
            .alone(
                "python3 -m unittest discover",
                "tests.test_a.TestA::test_x",
                &[],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(a.command, "python3 -m unittest tests.test_a.TestA.test_x");
        assert!(Unittest
            .alone(
                "python runtests.py",
                "a.B::c",
                &[],
                &crate::checks::tools::Uses::default()
            )
            .is_none());
    }
}
