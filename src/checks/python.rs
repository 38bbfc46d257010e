//! The checks of a Python project: only the tools it configures, with the paths and options its
//! configuration gives, and never `.ralph/` as an input. ruff when `[tool.ruff]` or `ruff.toml`
//! (its formatter when `[tool.ruff.format]`), black when `[tool.black]`, isort when
//! `[tool.isort]`, flake8 when `.flake8` or a `[flake8]` section, mypy when configured (on its
//! configured `files`, else the package), pytest when configured or a tests folder exists —
//! through the project's environment manager when it has one ([`Runner`]: `uv run`, `poetry
//! run`, `pdm run`, `hatch run`).

use super::coverage::CoverageSpec;
use super::project::Project;
use super::{CheckKind, CheckSpec};
use std::path::Path;

/// What a Python project's configuration files say.
struct Config {
    pyproject: String,
    setup_cfg: String,
    tox_ini: String,
}

impl Config {
    fn read(p: &Project) -> Config {
        let read = |f: &str| p.text(f).unwrap_or_default();
        Config {
            pyproject: read("pyproject.toml"),
            setup_cfg: read("setup.cfg"),
            tox_ini: read("tox.ini"),
        }
    }

    /// Where `[section]` (or `[section.…]`) is declared, for the reason.
    fn section(&self, section: &str) -> Option<&'static str> {
        let has = |text: &str| {
            text.lines().any(|l| {
                let l = l.trim();
                l == format!("[{section}]") || l.starts_with(&format!("[{section}."))
            })
        };
        [
            ("pyproject.toml", &self.pyproject),
            ("setup.cfg", &self.setup_cfg),
            ("tox.ini", &self.tox_ini),
        ]
        .into_iter()
        .find(|(_, t)| has(t))
        .map(|(f, _)| f)
    }
}

/// The tool that owns a Python project's environment, by its lock or configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The interpreter on `PATH`.
    Plain,
    Uv,
    Poetry,
    Pdm,
    Hatch,
}

impl Runner {
    /// The runner of the project `p`: `uv.lock`; `poetry.lock` or `[tool.poetry]`;
    /// `pdm.lock` or `[tool.pdm]`; a Hatch environment (`[tool.hatch.envs…]`, `hatch.toml`).
    pub fn of(p: &Project) -> Runner {
        let file = |f: &str| p.is_file(f);
        let c = Config::read(p);
        if file("uv.lock") {
            Runner::Uv
        } else if file("poetry.lock") || c.section("tool.poetry").is_some() {
            Runner::Poetry
        } else if file("pdm.lock") || c.section("tool.pdm").is_some() {
            Runner::Pdm
        } else if file("hatch.toml") || c.section("tool.hatch.envs").is_some() {
            Runner::Hatch
        } else {
            Runner::Plain
        }
    }

    /// `tool args` run in the project's environment.
    pub fn run(self, tool: &str) -> String {
        match self {
            Runner::Plain => tool.to_owned(),
            Runner::Uv => format!("uv run {tool}"),
            Runner::Poetry => format!("poetry run {tool}"),
            Runner::Pdm => format!("pdm run {tool}"),
            Runner::Hatch => format!("hatch run {tool}"),
        }
    }

    /// `python args` in the project's environment.
    pub fn python(self, args: &str) -> String {
        match self {
            Runner::Plain => format!("{} {args}", python()),
            other => other.run(&format!("python {args}")),
        }
    }

    /// Whether the project's environment is its manager's (not the interpreter on `PATH`).
    pub fn managed(self) -> bool {
        self != Runner::Plain
    }
}

/// Whether `p` is a Python project.
pub fn is_python(p: &Project) -> bool {
    [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "tox.ini",
    ]
    .iter()
    .any(|f| p.is_file(f))
}

/// The project's import package: `src/<name>/` or `<name>/` holding an `__init__.py`, where
/// `<name>` is the project's name (dashes as underscores), else the only such folder.
pub fn package(p: &Project) -> Option<String> {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    let name = pyproject
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "name").then(|| v.trim().trim_matches(['"', '\'']).replace('-', "_"))
        })
        .filter(|n| !n.is_empty());
    for base in ["src", ""] {
        let under = |n: &str| {
            if base.is_empty() {
                n.to_owned()
            } else {
                format!("{base}/{n}")
            }
        };
        if let Some(n) = &name {
            if p.is_file(&format!("{}/__init__.py", under(n))) {
                return Some(under(n));
            }
        }
        let found: Vec<String> = p
            .list(base)
            .into_iter()
            .filter(|(n, kind)| {
                *kind == crate::untrusted_dir::Kind::Dir
                    && p.is_file(&format!("{}/__init__.py", under(n)))
            })
            .map(|(n, _)| n)
            .filter(|n| !n.starts_with('.') && n != "tests" && n != "test" && n != "docs")
            .collect();
        if let [only] = found.as_slice() {
            return Some(under(only));
        }
    }
    None
}

/// tox environments named like quality checks, and the check name each stands for.
const TOX_QUALITY: [(&str, &str); 11] = [
    ("flake8", "flake8"),
    ("lint", "lint"),
    ("ruff", "lint"),
    ("pylint", "pylint"),
    ("black", "black"),
    ("format", "format"),
    ("isort", "isort"),
    ("mypy", "type-check"),
    ("typecheck", "type-check"),
    ("type", "type-check"),
    ("pep8", "flake8"),
];

/// The quality checks tox.ini declares as environments (`[testenv:flake8]` …), run through tox
/// when it is installed: the environment holds the plugins and options the project uses.
fn tox_quality(tox_ini: &str, tox_installed: bool) -> Vec<CheckSpec> {
    if !tox_installed {
        return Vec::new();
    }
    let mut out: Vec<CheckSpec> = Vec::new();
    for line in tox_ini.lines() {
        let Some(env) = line
            .trim()
            .strip_prefix("[testenv:")
            .and_then(|r| r.strip_suffix(']'))
        else {
            continue;
        };
        if let Some((_, name)) = TOX_QUALITY.iter().find(|(e, _)| *e == env) {
            if !out.iter().any(|c| c.name == *name) {
                out.push(
                    CheckSpec::new(name, &format!("tox -e {env}"))
                        .because(&format!("the `[testenv:{env}]` environment of tox.ini")),
                );
            }
        }
    }
    out
}

/// The Python interpreter on `PATH`: `python`, else `python3`.
pub(super) fn python() -> &'static str {
    if crate::process::on_path("python") {
        "python"
    } else {
        "python3"
    }
}

/// The interpreter and the module of a `python -m module …` command (`python3`, `python3.11`,
/// `.venv/bin/python` as well): the module must be importable for the check to run.
pub fn module_run(command: &str) -> Option<(String, String)> {
    let words = super::words(command);
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
    let cmd = super::program(
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
    let c = Config::read(p);
    let runner = Runner::of(p);
    let mut out = linters(&c, p, runner);
    out.extend(type_check(&c, p, runner));
    out.extend(pytest(&c, p, runner));
    // The project's own tox environments stand for the linters ralph would run by hand.
    let tox = tox_quality(&c.tox_ini, crate::process::on_path("tox"));
    if !tox.is_empty() {
        out.retain(|c| c.kind == CheckKind::Test);
        out.splice(0..0, tox);
    }
    let coverage = out
        .iter()
        .any(|c| c.kind == CheckKind::Test)
        .then(|| coverage(&c, p, runner))
        .flatten();
    (out, coverage)
}

/// The formatters and linters the project configures, in this order: ruff's formatter and
/// ruff, black, isort, flake8.
fn linters(c: &Config, p: &Project, runner: Runner) -> Vec<CheckSpec> {
    let run = |tool: &str| runner.run(tool);
    let mut out = Vec::new();
    let file = |f: &str| p.is_file(f);
    if let Some(why) = c
        .section("tool.ruff")
        .or_else(|| file("ruff.toml").then_some("ruff.toml"))
        .or_else(|| file(".ruff.toml").then_some(".ruff.toml"))
    {
        if c.section("tool.ruff.format").is_some() {
            out.push(
                CheckSpec::new(
                    "format",
                    &run("ruff format --check --extend-exclude .ralph"),
                )
                .because(&format!("[tool.ruff.format] in {why}")),
            );
        }
        out.push(
            CheckSpec::new("lint", &run("ruff check --extend-exclude .ralph"))
                .because(&format!("ruff is configured in {why}")),
        );
    }
    if let Some(why) = c.section("tool.black") {
        out.push(
            CheckSpec::new(
                "black",
                &run("black --check --extend-exclude '/\\.ralph/' ."),
            )
            .because(&format!("[tool.black] in {why}")),
        );
    }
    if let Some(why) = c
        .section("tool.isort")
        .or_else(|| file(".isort.cfg").then_some(".isort.cfg"))
    {
        out.push(
            CheckSpec::new("isort", &run("isort --check-only --skip .ralph ."))
                .because(&format!("isort is configured in {why}")),
        );
    }
    if let Some(why) = file(".flake8")
        .then(|| ".flake8".to_owned())
        .or_else(|| c.section("flake8").map(|f| format!("[flake8] in {f}")))
        .or_else(|| {
            c.section("tool.flake8")
                .map(|f| format!("[tool.flake8] in {f} (read by flake8-pyproject)"))
        })
    {
        out.push(CheckSpec::new("flake8", &run("flake8 --extend-exclude .ralph")).because(&why));
    }
    out
}

/// mypy, when the project configures it: on its configured `files`, else on the package (or
/// `.`).
fn type_check(c: &Config, p: &Project, runner: Runner) -> Option<CheckSpec> {
    let file = |f: &str| p.is_file(f);
    let why = c
        .section("tool.mypy")
        .or_else(|| c.section("mypy"))
        .or_else(|| file("mypy.ini").then_some("mypy.ini"))
        .or_else(|| file(".mypy.ini").then_some(".mypy.ini"))?;
    let has_files = [&c.pyproject, &c.setup_cfg]
        .iter()
        .any(|t| t.lines().any(|l| l.trim_start().starts_with("files")))
        || p.text("mypy.ini")
            .is_some_and(|t| t.lines().any(|l| l.trim_start().starts_with("files")));
    let target = if has_files {
        String::new()
    } else {
        format!(" {}", package(p).unwrap_or_else(|| ".".into()))
    };
    Some(
        CheckSpec::new(
            "type-check",
            &runner.run(&format!("mypy --exclude '^\\.ralph/'{target}")),
        )
        .because(&format!("mypy is configured in {why}")),
    )
}

/// The test check, pytest (through the project's runner, else `python -m pytest`), when pytest
/// is configured or a tests folder exists.
fn pytest(c: &Config, p: &Project, runner: Runner) -> Option<CheckSpec> {
    let file = |f: &str| p.is_file(f);
    let pytest_cfg = c
        .section("tool.pytest.ini_options")
        .or_else(|| c.section("tool:pytest"))
        .or_else(|| c.section("pytest"))
        .or_else(|| file("pytest.ini").then_some("pytest.ini"))
        .or_else(|| file("conftest.py").then_some("conftest.py"));
    let tests_dir = ["tests", "test"].into_iter().find(|d| p.is_dir(d));
    let why = pytest_cfg
        .map(|f| format!("pytest is configured in {f}"))
        .or_else(|| tests_dir.map(|d| format!("a {d}/ folder")))?;
    let pytest = if runner.managed() {
        runner.run("pytest")
    } else {
        format!("{} -m pytest", python())
    };
    let mut spec = CheckSpec::new("test", &pytest).because(&why);
    spec.kind = CheckKind::Test;
    Some(spec)
}

/// The values of `--cov=X` / `--cov X` options in `text`.
fn cov_sources(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = w.strip_prefix("--cov=") {
            out.push(v.trim_matches(['"', '\'']).to_owned());
        } else if *w == "--cov" {
            if let Some(v) = words.get(i + 1).filter(|v| !v.starts_with('-')) {
                out.push(v.trim_matches(['"', '\'']).to_owned());
            }
        }
    }
    out.retain(|v| !v.is_empty() && !v.contains('{'));
    out
}

/// How the project measures coverage: pytest-cov in pytest's options (the suite already runs
/// under coverage), else coverage.py configured or `--cov` in tox's commands (the test check
/// runs under `coverage run`, on the sources tox names); the total comes from `coverage json`.
fn coverage(c: &Config, p: &Project, runner: Runner) -> Option<CoverageSpec> {
    let tool = |args: &str| {
        if runner.managed() {
            runner.run(&format!("coverage {args}"))
        } else {
            format!("{} -m coverage {args}", python())
        }
    };
    let report = tool(&format!("json -q -o {}", super::coverage::REPORT));
    let pytest_ini = p.text("pytest.ini").unwrap_or_default();
    let addopts_cov = [
        ("pyproject.toml", &c.pyproject),
        ("setup.cfg", &c.setup_cfg),
        ("tox.ini", &c.tox_ini),
        ("pytest.ini", &pytest_ini),
    ]
    .into_iter()
    .find(|(_, t)| {
        t.lines()
            .any(|l| l.trim_start().starts_with("addopts") && l.contains("--cov"))
    });
    if let Some((file, _)) = addopts_cov {
        return Some(CoverageSpec {
            test_command: None,
            command: report,
            reason: format!("pytest-cov in pytest's addopts in {file}: the tests run under it"),
        });
    }
    let tox_cov = c
        .tox_ini
        .lines()
        .find(|l| (l.contains("pytest") || l.contains("py.test")) && l.contains("--cov"))
        .map(cov_sources);
    let configured = c
        .section("tool.coverage")
        .or_else(|| c.section("coverage:run"))
        .or_else(|| p.is_file(".coveragerc").then_some(".coveragerc"));
    let reason = match (&tox_cov, configured) {
        (_, Some(file)) => format!("coverage.py is configured in {file}"),
        (Some(_), None) => "pytest --cov in tox.ini's commands".to_owned(),
        (None, None) => return None,
    };
    let source = tox_cov
        .filter(|s| !s.is_empty() && configured.is_none())
        .map(|s| format!(" --source={}", s.join(",")))
        .unwrap_or_default();
    Some(CoverageSpec {
        test_command: Some(tool(&format!("run{source} -m pytest"))),
        command: report,
        reason,
    })
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
        let tox = tox_quality(CACHETOOLS_TOX, true);
        assert_eq!(tox.len(), 1);
        assert_eq!(tox[0].command, "tox -e flake8");
        assert_eq!(
            tox[0].reason,
            "the `[testenv:flake8]` environment of tox.ini"
        );
        assert!(tox_quality(CACHETOOLS_TOX, false).is_empty());
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
