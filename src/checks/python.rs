//! The checks of a Python project: only the tools it configures, each tool saying when and how
//! ([`super::tools::Tool::detect`]: ruff, black, isort, flake8, mypy, pytest — never `.ralph/` as
//! an input), run through the project's environment manager when it has one (uv, Poetry, PDM,
//! Hatch — a tool that lives in one of Hatch's environments run there); a wrapper's own
//! environments (tox's `[testenv:lint]`) stand for the linters. And how the project measures
//! coverage.

use super::coverage::CoverageSpec;
use super::project::Project;
use super::spec::CheckSpec;
use super::tools::CheckKind;
use super::tools::{Env, Lang};

pub use super::tools::{is_python, python_on_path as python, python_package as package};
use std::path::Path;

/// The interpreter and the module of a `python -m module …` command (`python3`, `python3.11`,
/// `.venv/bin/python` as well): the module must be importable for the check to run.
pub fn module_run(command: &str) -> Option<(String, String)> {
    let words = super::spec::words(command);
    let mut words = words
        .iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let python = words.next()?;
    let name = Path::new(python).file_name()?.to_str()?;
    let version = name.strip_prefix("python")?;
    if !version.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let module = words.skip_while(|w| *w != "-m").nth(1)?;
    let valid = !module.is_empty()
        && module
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    valid.then(|| (python.clone(), module.clone()))
}

/// Whether `python` in `dir`, with `env`, finds `module` (without running it).
pub async fn importable(python: &str, module: &str, dir: &Path, env: &[(String, String)]) -> bool {
    let script =
        format!("import importlib.util as u, sys; sys.exit(0 if u.find_spec({module:?}) else 1)");
    let cmd = super::confined::program(
        python,
        &["-c", &script],
        dir,
        crate::process::Kind::Check,
        env,
        &[],
    )
    .timeout(std::time::Duration::from_secs(60));
    matches!(crate::process::run(&cmd).await, Ok(out) if out.success())
}

/// The checks of the Python project `p`, each with why it was chosen, and the coverage
/// command when coverage is configured.
pub fn checks(p: &Project) -> (Vec<CheckSpec>, Option<CoverageSpec>) {
    let env = Env::of(p);
    let checks: Vec<CheckSpec> = super::tools::detect(&env, Lang::Python)
        .into_iter()
        .map(CheckSpec::from)
        .collect();
    let coverage = checks
        .iter()
        .any(|c| c.kind == CheckKind::Test)
        .then(|| super::tools::coverage(&env, Lang::Python))
        .flatten();
    (checks, coverage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::project;

    fn commands(root: &Path) -> Vec<String> {
        checks(&Project::read(root))
            .0
            .into_iter()
            .map(|c| c.command)
            .collect()
    }

    #[test]
    fn only_the_configured_tools_run() {
        // cachetools: src layout, flake8 through tox.ini, no ruff, no mypy.
        let cachetools = project(&[
            ("pyproject.toml", "[project]\nname = \"cachetools\"\n"),
            (
                "tox.ini",
                "[tox]\nenvlist = py\n[flake8]\nmax-line-length = 80\n",
            ),
            ("src/cachetools/__init__.py", ""),
            ("tests/test_cache.py", ""),
        ]);
        let c = commands(cachetools.path());
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0], "flake8 --extend-exclude .ralph");
        assert!(c[1].ends_with("-m pytest"), "{c:?}");
        assert!(!c.iter().any(|x| x.contains("ruff") || x.contains("mypy")));
        let (specs, _) = checks(&Project::read(cachetools.path()));
        assert_eq!(specs[0].reason, "[flake8] in tox.ini");
        assert_eq!(specs[1].reason, "a tests/ folder");
    }

    /// cachetools' tox.ini at the parent of the fix of its issue #387.
    const CACHETOOLS_TOX: &str = "[tox]\nenvlist = check-manifest,docs,doctest,flake8,py\n\n[testenv]\ndeps =\n    pytest\n    pytest-cov\nsetenv =\n    THREADING_TESTS = 1\ncommands =\n    py.test --basetemp={envtmpdir} --cov=cachetools --cov-report term-missing {posargs}\n\n[testenv:flake8]\ndeps =\n    flake8\n    flake8-black\n    flake8-pyproject\ncommands =\n    flake8\nskip_install = true\n";

    #[test]
    fn tox_environments_stand_for_the_linters_and_its_cov_for_coverage() {
        let dir = project(&[
            (
                "pyproject.toml",
                "[project]\nname = \"cachetools\"\n[tool.flake8]\nmax-line-length = 80\n",
            ),
            ("tox.ini", CACHETOOLS_TOX),
            ("src/cachetools/__init__.py", ""),
            ("tests/__init__.py", ""),
        ]);
        // Without tox: flake8 by hand, configured in [tool.flake8].
        let (specs, coverage) = checks(&Project::read(dir.path()));
        if !crate::process::on_path("tox") {
            assert_eq!(
                specs[0].reason,
                "[tool.flake8] in pyproject.toml (read by flake8-pyproject)"
            );
        }
        let coverage = coverage.unwrap();
        assert!(
            coverage
                .test_command
                .as_deref()
                .unwrap()
                .ends_with("-m coverage run --source=cachetools -m pytest"),
            "{coverage:?}"
        );
        assert_eq!(coverage.reason, "pytest --cov in tox.ini's commands");
    }

    #[test]
    fn configured_tools_get_their_paths_and_leave_ralph_out() {
        let dir = project(&[
            (
                "pyproject.toml",
                "[project]\nname = \"more-itertools\"\n[tool.ruff]\nline-length = 79\n[tool.ruff.format]\nquote-style = \"single\"\n[tool.mypy]\nstrict = true\n[tool.pytest.ini_options]\n",
            ),
            ("more_itertools/__init__.py", ""),
            ("uv.lock", ""),
        ]);
        assert_eq!(
            commands(dir.path()),
            [
                "uv run ruff format --check --extend-exclude .ralph",
                "uv run ruff check --extend-exclude .ralph",
                "uv run mypy --exclude '^\\.ralph/' more_itertools",
                "uv run pytest",
            ]
        );
        let files = project(&[
            ("setup.cfg", "[mypy]\nfiles = src/pkg\n"),
            ("src/pkg/__init__.py", ""),
        ]);
        assert_eq!(commands(files.path()), ["mypy --exclude '^\\.ralph/'"]);
        assert_eq!(
            package(&Project::read(files.path())).as_deref(),
            Some("src/pkg")
        );
    }

    #[test]
    fn a_module_run_names_its_interpreter_and_module() {
        let run = |c: &str| module_run(c).map(|(p, m)| format!("{p} {m}"));
        assert_eq!(run("python -m pytest -q").as_deref(), Some("python pytest"));
        assert_eq!(
            run("python3.11 -m mypy src").as_deref(),
            Some("python3.11 mypy")
        );
        assert_eq!(
            run("PYTHONPATH=src .venv/bin/python -m unittest discover").as_deref(),
            Some(".venv/bin/python unittest")
        );
        assert_eq!(run("pytest -q"), None);
        assert_eq!(run("python setup.py test"), None);
        assert_eq!(run("python-config -m x"), None);
    }
}
