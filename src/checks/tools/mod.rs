//! What ralph knows about each tool a check runs — test runners, linters, formatters, type
//! checkers, and the wrappers that start them (env managers, package scripts, `make`, workspace
//! runners) — one file per tool, each a [`Tool`]: how to recognise it in a command, what makes it
//! name every test, how to read its results test by test and its findings by rule, how to run one
//! test alone, what build lock it takes, what state it must be able to write, what would have run
//! a test it missed. A check's tools are decided once, when the check is made ([`recognise`]),
//! and travel with it ([`Uses`]); the stages (running, baseline, comparison, re-run, new tests)
//! ask the tools (the questions of `ask.rs`) and never read the command again. Adding a tool is
//! one file and one line of [`TOOLS`].

mod ask;
mod call;
pub mod ecosystem;
mod every;
mod excerpt;
mod found;
mod junit;
mod plain;
mod step;
mod tasks;
mod tool;
mod uses;

mod ava;
mod black;
mod bun;
mod c8;
mod cargo;
mod cargo_test;
mod clippy;
mod cmake;
mod conda;
mod coverage_py;
mod coverage_spec;
mod ctest;
mod cython;
mod deno;
mod eslint;
mod flake8;
mod foreign;
mod gem;
mod go;
mod go_test;
mod go_vet;
mod gofmt;
mod gradle;
mod hatch;
mod isort;
mod jest;
mod just;
mod make;
mod maturin;
mod meson;
mod mocha;
mod mypy;
mod native;
mod nextest;
mod ninja;
mod node_gyp;
mod node_test;
mod nox;
mod npm;
mod nx;
mod pdm;
mod pip;
mod pipenv;
mod pnpm;
mod poetry;
mod prettier;
mod pylint;
mod pyright;
mod pytest;
mod python;
mod ruff;
mod rustfmt;
mod rye;
mod staticcheck;
mod system;
mod task;
mod tox;
mod tsc;
mod turbo;
mod unittest;
mod uv;
mod vitest;
mod yarn;

pub(crate) use ask::append_files;
pub use ask::{
    alone_in_plan, count_problems, files_command, missed_hint, missing_program, ran_no_test,
    read_rules, read_tests,
};
pub use call::{plain_commands, recognise, simple_commands, Call};
pub use clippy::rustc_rule;
pub use coverage_spec::{CoverageSpec, REPORT};
pub use cython::sources as cython_sources;
pub use every::*;
pub use excerpt::explain;
pub use found::{CheckKind, Found};
pub use jest::UNLOADED;
pub use maturin::builds_python_from_rust;
pub use native::{native, touches_native, NativeSpec, NATIVE_SITE_VAR};
pub use pip::install_args as pip_install_args;
pub use python::{ask, local_python};
pub use step::{by_name, chain, innermost, step_of, strongest, StepKind};
pub use tasks::Tasks;
pub use tool::Tool;
pub use tox::checks_quality as env_checks_quality;
pub use uses::{prepare, with_state, Tail, ToolRef, Uses};

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Every tool ralph knows, in the order it asks them: a command is the first tool's that
/// recognises it.
pub static TOOLS: &[&dyn Tool] = &[
    // Wrappers: what they start is looked at in turn.
    &python::Python,
    &uv::Uv,
    &poetry::Poetry,
    &pdm::Pdm,
    &hatch::Hatch,
    &pipenv::Pipenv,
    &tox::Tox,
    &nox::Nox,
    &coverage_py::Coverage,
    &make::Make,
    &just::Just,
    &npm::Npm,
    &pnpm::Pnpm,
    &yarn::Yarn,
    &bun::Bun,
    &deno::Deno,
    &turbo::Turbo,
    &nx::Nx,
    &c8::C8,
    &c8::Nyc,
    // Test runners.
    &pytest::Pytest,
    &unittest::Unittest,
    &cargo_test::CargoTest,
    &nextest::Nextest,
    &go_test::GoTest,
    &jest::Jest,
    &vitest::Vitest,
    &mocha::Mocha,
    &ava::Ava,
    &node_test::NodeTest,
    &bun::BunTest,
    &deno::DenoTest,
    &ctest::Ctest,
    &meson::MesonTest,
    &gradle::Gradle,
    &gradle::Maven,
    // Linters, formatters and type checkers.
    &ruff::Ruff,
    &black::Black,
    &isort::Isort,
    &flake8::Flake8,
    &pylint::Pylint,
    &mypy::Mypy,
    &pyright::Pyright,
    &eslint::Eslint,
    &tsc::Tsc,
    &prettier::Prettier,
    &rustfmt::Rustfmt,
    &clippy::Clippy,
    &gofmt::Gofmt,
    &go_vet::GoVet,
    &staticcheck::Staticcheck,
    // Programs known by what they do as a CI step and what they install: asked last, so that a
    // check of theirs (`cargo test`, `meson test`) is the check's tool.
    &python::Script,
    &cython::Cython,
    &maturin::Maturin,
    &pip::Pip,
    &pip::Pipx,
    &conda::Conda,
    &rye::Rye,
    &npm::Corepack,
    &node_gyp::NodeGyp,
    &cargo::Cargo,
    &go::Go,
    &cmake::Cmake,
    &meson::Meson,
    &ninja::Ninja,
    &task::Task,
    &gem::Gem,
    &system::Apt,
    &system::Installer,
    &foreign::Foreign,
];

/// The names of the test runners whose results ralph reads test by test.
pub fn runners() -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .map(|t| t.name())
        .collect()
}

/// The tool named `name`.
pub fn named(name: &str) -> Option<&'static dyn Tool> {
    TOOLS.iter().copied().find(|t| t.name() == name)
}

/// The test runner whose report names `name` as its runner — today, or in a cache written before
/// tools had names (`junit` for pytest, `cargo` for cargo test).
pub fn runner(name: &str) -> Option<&'static dyn Tool> {
    TOOLS
        .iter()
        .copied()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .find(|t| t.name() == name || t.former_names().contains(&name))
}

/// The language of a test file, by its name: which runners' reports can name its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Python,
    Rust,
    Go,
    Js,
}

/// What a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It runs tests written in a language, and names them in ids of that language's shape:
    /// Python `dotted.module[.Class]::function`, Rust `<test binary>::<module path>`, Go
    /// `<import path>/<TestName>`, JavaScript a passing `file` or a failing `file::title`.
    Tests(Lang),
    /// A test runner of its own kind of tests (ctest, meson): no source file names them.
    Suite,
    /// Format, lint, types.
    Quality,
    /// It starts other programs: an env manager, a package script, a task runner.
    Wrapper,
    /// A program ralph knows by what it does as a CI step and what it installs — a package
    /// manager, a build system, another language's runner — and never reads: a check that runs
    /// it is not seen into.
    Other,
}

/// What a wrapper starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    Nothing,
    /// A command's words (`uv run pytest -q` starts `pytest -q`).
    Words(Vec<String>),
    /// A shell script: a make target's recipe, a package script.
    Script(String),
    /// The same script in each package of a workspace: (its folder, its script).
    Each(Vec<(String, String)>),
    /// Something ralph cannot read (a noxfile's session, a script it cannot find): the check
    /// is not seen whole.
    Unknown,
}

impl Inner {
    /// What a runner's `sub` starts (`pipx run X`, `conda run X`): the words after it, its own
    /// flags skipped; nothing for another subcommand.
    pub fn after(call: &Call, sub: &str) -> Inner {
        match call.after(sub) {
            Some(words) if call.sub() == sub => Inner::Words(words),
            _ => Inner::Nothing,
        }
    }
}

/// How a check runs, prepared by its tools: its command, the variables it runs with and the
/// places besides its worktree it may write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    pub command: String,
    pub env: Vec<(String, String)>,
    pub writable: Vec<PathBuf>,
    /// Where words appended to the command go.
    pub tail: Option<Tail>,
}

impl Prepared {
    /// Sets `key` for the check, after what the plan gives.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.into()));
    }

    /// The value the check will see for `key`: the plan's, else ralph's own environment's.
    pub fn get(&self, key: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| crate::env::get(key))
    }

    /// A folder of this run's own under `scratch`, made now (the sandbox shows only what
    /// exists) and writable to the check.
    pub fn own_dir(&mut self, scratch: &Path, name: &str) -> PathBuf {
        let dir = scratch.join(name);
        let _ = std::fs::create_dir_all(&dir);
        if !self.writable.contains(&dir) {
            self.writable.push(dir.clone());
        }
        dir
    }
}

/// What one run of a check printed, and the folder where its tools wrote their reports.
#[derive(Debug, Clone, Copy)]
pub struct Printed<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// The run's own folder ([`Prepared::own_dir`]'s parent), where reports were asked for.
    pub scratch: Option<&'a Path>,
    /// The worktree it ran in: absolute paths in what it printed are made relative to it, and
    /// a workspace's packages are read there.
    pub root: Option<&'a Path>,
}

/// How to run one test alone: the check's command changed, and variables to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alone {
    pub command: String,
    pub env: Vec<(String, String)>,
}

/// A test the change adds that no check ran, as the tools are asked what would run it.
#[derive(Debug, Clone, Copy)]
pub struct Missed<'a> {
    pub file: &'a str,
    pub name: &'a str,
    /// The cargo feature it is compiled under, when its source says.
    pub feature: Option<&'a str>,
    /// The pytest marks on it.
    pub marks: &'a [String],
    /// The checks whose runners report its language's tests by name.
    pub reporting: &'a [Checked<'a>],
    /// Every test check of the run.
    pub checks: &'a [Checked<'a>],
}

/// A check as a tool's hint names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked<'a> {
    pub name: &'a str,
    pub command: &'a str,
    /// It failed on the base as a whole, without naming a test: it cannot judge.
    pub failing_on_base: bool,
}

/// A project as detection reads it, with the manager of its Python environment: the tools a
/// check runs are run through it.
pub struct Env<'a> {
    pub project: &'a super::project::Project,
    pub manager: Option<&'static dyn Tool>,
}

impl<'a> Env<'a> {
    /// The project `project`, with its Python environment's manager.
    pub fn of(project: &'a super::project::Project) -> Env<'a> {
        Env {
            project,
            manager: manager(project, Lang::Python),
        }
    }

    /// `tool` (a command line) run in the project's environment.
    pub fn run(&self, tool: &str) -> String {
        match self.manager {
            Some(m) => m.run_in(self.project, tool),
            None => tool.to_owned(),
        }
    }

    /// The Python module `module` run with `args`: through the manager, else as `python -m`
    /// with the interpreter on `PATH`.
    pub fn module(&self, module: &str, args: &str) -> String {
        let line = match self.manager {
            Some(m) => m.run_in(self.project, &format!("{module} {args}")),
            None => format!("{} -m {module} {args}", python::on_path()),
        };
        line.trim_end().to_owned()
    }

    /// `python args` in the project's environment.
    pub fn python(&self, args: &str) -> String {
        let line = match self.manager {
            Some(m) => m.run_in(self.project, &format!("python {args}")),
            None => format!("{} {args}", python::on_path()),
        };
        line.trim_end().to_owned()
    }
}

pub use python::{is_python, on_path as python_on_path, package as python_package};

/// The checks the tools of `lang` make of a project (each tool's [`Tool::detect`]): the quality
/// checks in the order of [`TOOLS`], then the tests. A wrapper's own checks (tox's environments)
/// stand for the quality checks of the tools it would run.
pub fn detect(env: &Env, lang: Lang) -> Vec<Found> {
    let (mut quality, mut tests, mut standing) = (Vec::new(), Vec::new(), Vec::new());
    for tool in TOOLS.iter().filter(|t| t.ecosystem() == Some(lang)) {
        for check in tool.detect(env) {
            match (tool.role(), check.kind) {
                (Role::Wrapper, _) => standing.push(check),
                (_, CheckKind::Test) => tests.push(check),
                (_, CheckKind::Quality) => quality.push(check),
            }
        }
    }
    if !standing.is_empty() {
        quality = standing;
    }
    quality.extend(tests);
    quality
}

/// Whether `text` (a CI step's command, a script, a note naming commands in backquotes) runs
/// the tool named `tool`.
pub fn mentions(text: &str, tool: &str, project: Option<&super::project::Project>) -> bool {
    let quoted = text.split('`').skip(1).step_by(2);
    std::iter::once(text)
        .chain(quoted)
        .any(|t| recognise(t, project).tools.iter().any(|u| *u == tool))
}

/// The tool that manages `project`'s environment for `lang` (`uv`, `poetry`, `npm`, …).
pub fn manager(project: &super::project::Project, lang: Lang) -> Option<&'static dyn Tool> {
    TOOLS
        .iter()
        .copied()
        .find(|t| t.manages(project) == Some(lang))
}

/// How the package scripts of `project` are run: by the package manager its lockfile names,
/// else npm.
pub fn script_runner(project: &super::project::Project) -> &'static dyn Tool {
    manager(project, Lang::Js).unwrap_or(&npm::Npm)
}

/// Whether `word` is an identifier of letters, digits and `_`.
pub(crate) fn word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `command` is one program's run with nothing a shell would read specially: safe to
/// add words to its end.
pub(crate) fn plain(command: &str) -> bool {
    !command.contains(['&', ';', '|', '`', '$', '\n', '>', '<', '\'', '"', '(', ')'])
}

#[cfg(test)]
mod tests;
