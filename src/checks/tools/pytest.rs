//! pytest: asked for a JUnit report through `PYTEST_ADDOPTS` (however it is started — a
//! script, tox, `uv run` — and harmless to anything else), its tests named
//! `dotted.module[.Class]::function[params]`; one test run alone by `-k`; its failures explained
//! by its `FAILURES` section and short summary.

use super::excerpt::section;
use super::found::{CheckKind, Found};
use super::shell::Call;
use super::tool::{Alone, Env, Lang, Missed, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct Pytest;

/// Where in the run's folder pytest writes its report.
const REPORT: &str = "pytest/junit.xml";

/// The most lines kept from pytest's `FAILURES` section.
const MAX_FAILURE_LINES: usize = 40;

impl Tool for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "pytest" | "py.test")
    }

    fn alone_in(&self, env: &Env, file: &str, name: &str) -> Option<Alone> {
        let command = format!(
            "{} {}",
            env.module("pytest", ""),
            crate::process::shell_quote(file)
        );
        let module = file.strip_suffix(".py")?.replace('/', ".");
        // Its report's id: the class (where there is one) joins the module's dotted path.
        let id = match name.rsplit_once("::") {
            Some((class, function)) => format!("{module}.{}::{function}", class.replace("::", ".")),
            None => format!("{module}::{name}"),
        };
        self.alone(&command, &id, &[], &Default::default())
    }

    fn former_names(&self) -> &'static [&'static str] {
        &["junit"]
    }

    /// The test check, when pytest is configured or a tests folder exists: through the
    /// project's environment manager, else `python -m pytest`.
    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let configured = super::ecosystem::declares(p, "tool.pytest.ini_options")
            .or_else(|| super::ecosystem::declares(p, "tool:pytest"))
            .or_else(|| super::ecosystem::declares(p, "pytest"))
            .or_else(|| p.is_file("pytest.ini").then_some("pytest.ini"))
            .or_else(|| p.is_file("conftest.py").then_some("conftest.py"));
        let folder = ["tests", "test"].into_iter().find(|d| p.is_dir(d));
        let Some(why) = configured
            .map(|f| format!("pytest is configured in {f}"))
            .or_else(|| folder.map(|d| format!("a {d}/ folder")))
        else {
            return Vec::new();
        };
        let mut spec = Found::new("test", &env.module("pytest", "")).because(&why);
        spec.kind = CheckKind::Test;
        vec![spec]
    }

    fn prepare(&self, run: &mut Prepared, scratch: &Path) {
        let dir = run.own_dir(scratch, "pytest");
        let addopts = run.get("PYTEST_ADDOPTS").unwrap_or_default();
        let report = dir.join("junit.xml");
        run.set(
            "PYTEST_ADDOPTS",
            format!("{addopts} --junitxml={}", report.display())
                .trim()
                .to_owned(),
        );
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        let report = printed.scratch?.join(REPORT);
        let xml = crate::untrusted_dir::report_text(&report, "the JUnit report")?;
        super::junit::read(&xml, self.name())
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("tests.test_calc::test_add")
    }

    fn alone(
        &self,
        command: &str,
        id: &str,
        env: &[(String, String)],
        _: &super::tool::Uses,
    ) -> Option<Alone> {
        // `tests.test_x.TestC::test_y[1]`: the class (or module) and the function.
        // A case's parameters may hold `::`: the id is read up to them.
        let head = id.split('[').next().unwrap_or(id);
        let (classname, function) = head.rsplit_once("::")?;
        let owner = classname.rsplit('.').next().unwrap_or(classname);
        if !super::shell::word(function) || !super::shell::word(owner) {
            return None;
        }
        let addopts = addopts(env);
        Some(Alone {
            command: command.to_owned(),
            env: vec![(
                "PYTEST_ADDOPTS".into(),
                format!("{addopts} -k '{owner} and {function}'")
                    .trim()
                    .to_owned(),
            )],
        })
    }

    fn files(&self, command: &str, files: &[&str], uses: &super::tool::Uses) -> Option<String> {
        super::tool::append_files(self.name(), command, files, uses, |f| f.ends_with(".py"))
    }

    fn excerpt(&self, text: &str) -> Option<String> {
        failures(text)
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        let file = test.file;
        let mark = test.decorators.iter().find_map(|d| {
            let m = d.strip_prefix("@pytest.mark.")?;
            let name: String = m
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // Marks that select nothing: a parametrized or skipped test is collected as any.
            (!name.is_empty() && !NOT_SELECTING.contains(&name.as_str())).then_some(name)
        });
        Some(match mark {
            Some(m) => format!(
                "it is marked `{m}`, which the checks' pytest leaves out: a check must run `python -m pytest -m {m} {file}`"
            ),
            None => format!(
                "no check's test run collected it: a check must run `python -m pytest {file}`"
            ),
        })
    }
}

/// pytest's own marks, which no `-m` expression in a check leaves a test out by.
const NOT_SELECTING: [&str; 6] = [
    "parametrize",
    "skip",
    "skipif",
    "xfail",
    "usefixtures",
    "filterwarnings",
];

/// The `PYTEST_ADDOPTS` a check runs with: its own first, else the user's.
fn addopts(env: &[(String, String)]) -> String {
    env.iter()
        .rev()
        .find(|(k, _)| k == "PYTEST_ADDOPTS")
        .map(|(_, v)| v.clone())
        .or_else(|| crate::env::get("PYTEST_ADDOPTS"))
        .unwrap_or_default()
}

/// pytest's `FAILURES` section reduced to what says why: each failing test's header, the
/// location lines (`src/x.py:95: TypeError`) and the `E   ` lines with the error itself — then
/// the `short test summary info` (which cuts messages at the terminal's width), through its final
/// `=== … failed … ===` line.
fn failures(text: &str) -> Option<String> {
    let summary = section(
        text,
        |l| l.starts_with('=') && l.contains("short test summary info"),
        |l| l.starts_with('=') && (l.contains(" failed") || l.contains(" error")),
    )?;
    let why: Vec<&str> = text
        .lines()
        .skip_while(|l| {
            !(l.starts_with('=') && (l.contains(" FAILURES ") || l.contains(" ERRORS ")))
        })
        .take_while(|l| !(l.starts_with('=') && l.contains("short test summary info")))
        .filter(|l| {
            let located = l.split_once(": ").is_some_and(|(at, _)| {
                at.rsplit_once(':')
                    .is_some_and(|(_, n)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            });
            (l.starts_with("___") && l.ends_with("___")) || l.starts_with("E ") || located
        })
        .take(MAX_FAILURE_LINES)
        .collect();
    Some(if why.is_empty() {
        summary
    } else {
        format!("{}\n{summary}", why.join("\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_whose_parameters_hold_colons_runs_alone_by_its_function() {
        let uses = super::super::recognise("python -m pytest", None);
        let alone = Pytest
            .alone(
                "python -m pytest",
                "tests.test_p.TestK::test_k[a::b]",
                &[],
                &uses,
            )
            .unwrap();
        assert_eq!(alone.env[0].1, "-k 'TestK and test_k'");
    }

    #[test]
    fn one_test_is_run_alone_by_k() {
        let a = Pytest
            .alone(
                "poetry run pytest",
                "tests.test_v.TestGit::test_shallow[x]",
                &[("PYTEST_ADDOPTS".into(), "-p no:cacheprovider".into())],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(a.command, "poetry run pytest");
        assert_eq!(
            a.env,
            [(
                "PYTEST_ADDOPTS".to_owned(),
                "-p no:cacheprovider -k 'TestGit and test_shallow'".to_owned()
            )]
        );
        assert!(Pytest
            .alone(
                "pytest",
                "tests.t::test_$(x)",
                &[],
                &crate::checks::tools::Uses::default()
            )
            .is_none());
    }

    #[test]
    fn a_report_is_asked_for_and_read() {
        let scratch = tempfile::tempdir().unwrap();
        let mut run = Prepared {
            command: "make test".into(),
            env: vec![("PYTEST_ADDOPTS".into(), "-x".into())],
            ..Default::default()
        };
        Pytest.prepare(&mut run, scratch.path());
        let want = format!("-x --junitxml={}", scratch.path().join(REPORT).display());
        assert_eq!(run.get("PYTEST_ADDOPTS"), Some(want));
        assert_eq!(run.writable, [scratch.path().join("pytest")]);
        std::fs::write(
            scratch.path().join(REPORT),
            r#"<testsuite><testcase classname="tests.test_a" name="test_ok"/></testsuite>"#,
        )
        .unwrap();
        let t = Pytest
            .tests(&Printed {
                stdout: "",
                stderr: "",
                scratch: Some(scratch.path()),
                root: None,
            })
            .unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["tests.test_a::test_ok"]
        );
        assert_eq!(t.runner, "pytest");
    }

    #[test]
    fn failures_are_read_from_its_summary() {
        let out = "collected 3 items\n\ntests/test_a.py .F.\n\n=== FAILURES ===\n___ test_b ___\n    assert 1 == 2\nE   assert 1 == 2\n\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_b - assert 1 == 2\n========================= 1 failed, 2 passed in 0.12s ==========================\n";
        assert_eq!(
            failures(out).unwrap(),
            "___ test_b ___\nE   assert 1 == 2\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_b - assert 1 == 2\n========================= 1 failed, 2 passed in 0.12s =========================="
        );
        // cachetools at the parent of its fix for #387, with only the fix's test applied: the
        // summary cuts the message; the error and where it happened come from FAILURES.
        let out = "=================================== FAILURES ===================================\n___________________ AutospecTest.test_autospec_no_warnings ____________________\n\nself = <tests.test_cachedmethod.AutospecTest testMethod=test_autospec_no_warnings>\n\n    def test_autospec_no_warnings(self):\n>           _ = unittest.mock.create_autospec(Cached, instance=True)\n\ntests/test_cachedmethod.py:685: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n    def __get__(self, obj, objtype=None):\nE       TypeError: No '__dict__' attribute on 'NoneType' instance to cache 'get_cond_info' property.\n\nsrc/cachetools/_cachedmethod.py:95: TypeError\n=========================== short test summary info ============================\nFAILED tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings - ...\n=================== 1 failed, 276 passed, 2 skipped in 1.18s ===================\n";
        let e = failures(out).unwrap();
        assert!(
            e.starts_with("___________________ AutospecTest.test_autospec_no_warnings ____________________\ntests/test_cachedmethod.py:685: \nE       TypeError: No '__dict__' attribute on 'NoneType' instance to cache 'get_cond_info' property.\nsrc/cachetools/_cachedmethod.py:95: TypeError\n=========="),
            "{e}"
        );
        assert!(e.ends_with("1 failed, 276 passed, 2 skipped in 1.18s ==================="));
    }
}
