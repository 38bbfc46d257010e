//! The questions asked of every tool at once, for what is not one check's: what a command
//! installs and where (registries, global installs, folders it downloads into), what a project's
//! environment is made of (manifests, caches, environments, a tool's data file and user
//! configuration), the task files, build suites and coverage a project declares.

use super::call::recognise;
use super::ecosystem;
use super::found::{CheckKind, Found};
use super::registry::TOOLS;
use super::shell::{peel, plain_commands, Call, Peeled, MAX_DEPTH};
use super::step::{strongest, StepKind};
use super::tasks::Tasks;
use super::tool::{Env, Inner, Lang, Role, Tool};
use crate::checks::project::Project;

/// `command` split into what builds an env-building runner's environments and what runs them
/// offline, when it runs one (tox, nox).
pub fn offline(command: &str) -> Option<(String, String)> {
    offline_by(command).map(|(_, build, run)| (build, run))
}

/// [`offline`], with the name of the runner that splits it.
pub fn offline_by(command: &str) -> Option<(&'static str, String, String)> {
    let uses = recognise(command, None);
    uses.tools.iter().find_map(|t| {
        t.offline(command)
            .map(|(build, run)| (t.name(), build, run))
    })
}

/// Whether every command of `command` installs tools or dependencies by name, building nothing
/// of the project (`pip install tox`, `npm i -g pnpm`, `cargo install cargo-nextest`, `pipx
/// install nox`, `go install …@v1`): each asked of the tool that runs it.
pub fn installs_only_by_name(command: &str) -> bool {
    each_command(command, |tool, call| tool.installs_by_name(call))
}

/// Whether `command` has commands and the tool of each (its wrappers looked through) says `yes`
/// of it; a command no tool knows says no.
fn each_command(command: &str, yes: impl Fn(&dyn Tool, &Call) -> bool) -> bool {
    let commands = plain_commands(command);
    !commands.is_empty()
        && commands.iter().all(|words| {
            innermost(words)
                .and_then(|(call, tool)| tool.map(|t| yes(t, &call)))
                .unwrap_or(false)
        })
}

/// Every tool's variables that send its global installs into a folder of their own: (variable,
/// folder, its folder of programs to put on `PATH`).
pub fn private_installs() -> impl Iterator<Item = (&'static str, &'static str, Option<&'static str>)>
{
    TOOLS.iter().flat_map(|t| t.installs_into().iter().copied())
}

/// The task runners' files of `project` that declare targets, each with its runner, in the
/// order [`TOOLS`] asks them (a Makefile before a justfile).
pub fn task_files(project: &Project) -> Vec<(&'static dyn Tool, Tasks)> {
    TOOLS
        .iter()
        .filter_map(|t| Some((*t, t.tasks(project)?)))
        .collect()
}

/// Whether every command of `line` only makes the project's environment where it runs (no
/// global install): each asked of its tool.
pub fn makes_local_env(line: &str) -> bool {
    each_command(line, |tool, call| tool.makes_local_env(call))
}

/// How the project of `env` measures the coverage of its `lang` tests: the first tool of that
/// language that says.
pub fn coverage(env: &Env, lang: Lang) -> Option<super::coverage_spec::CoverageSpec> {
    TOOLS
        .iter()
        .filter(|t| t.ecosystem() == Some(lang))
        .find_map(|t| t.coverage(env))
}

/// The test suites the build systems of `project` declare, in the order of [`TOOLS`]: each
/// build system's name, its command (built in `build(name)`) and why.
pub fn build_suites(
    project: &Project,
    build: &dyn Fn(&str) -> String,
) -> Vec<(&'static str, String, &'static str)> {
    TOOLS
        .iter()
        .filter_map(|t| {
            let (command, why) = t.suite(project, &build(t.name()))?;
            Some((t.name(), command, why))
        })
        .collect()
}

/// Whether a command line runs a C or C++ build system (`cmake`, `ctest`, `meson`).
pub fn runs_build_system(line: &str) -> bool {
    plain_commands(line)
        .iter()
        .flat_map(|words| chain(words))
        .any(|(_, tool)| tool.is_some_and(|t| t.build_system().is_some()))
}

/// Every tool's data file: (variable, file name, the tool's name).
pub fn data_files() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    TOOLS
        .iter()
        .filter_map(|t| t.data_file().map(|(var, file)| (var, file, t.name())))
}

/// Every tool's download cache: (variable, folder name).
pub fn caches() -> impl Iterator<Item = (&'static str, &'static str)> {
    TOOLS.iter().filter_map(|t| t.cache())
}

/// Every folder under `HOME` where a tool keeps a project's environment.
pub fn environments() -> impl Iterator<Item = &'static str> {
    TOOLS.iter().flat_map(|t| t.environments().iter().copied())
}

/// The files a project's environment is made from — each ecosystem's manifests and each tool's
/// own (lockfiles, a Makefile) —, sorted: their change makes the setup run again.
pub fn manifests() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = ecosystem::ECOSYSTEMS
        .iter()
        .flat_map(|e| e.manifests.iter().copied())
        .chain(TOOLS.iter().flat_map(|t| t.manifests().iter().copied()))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The folders under `HOME` that `command` downloads into, where each of its commands is a
/// download that runs no code of the project (`cargo fetch`); else none.
pub fn downloads(command: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for words in plain_commands(command) {
        let own = innermost(&words)
            .and_then(|(call, tool)| tool.map(|t| t.downloads(&call)))
            .unwrap_or_default();
        if own.is_empty() {
            return Vec::new();
        }
        out.extend_from_slice(own);
    }
    out
}

/// The registries the package managers of `command`'s own commands download from (their
/// wrappers looked through: `python -m pip` is pip).
pub fn registries_of(command: &str) -> Vec<ecosystem::Registry> {
    plain_commands(command)
        .iter()
        .flat_map(|words| chain(words))
        .filter_map(|(_, tool)| tool?.registry())
        .collect()
}

/// Every tool's user configuration file: (variable, file name).
pub fn user_configs() -> impl Iterator<Item = (&'static str, &'static str)> {
    TOOLS.iter().filter_map(|t| t.user_config())
}

/// Where the tools' coverage reports land by default, each once, in the order of [`TOOLS`].
pub fn coverage_reports() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for name in TOOLS
        .iter()
        .flat_map(|t| t.coverage_reports().iter().copied())
    {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The names of the test runners whose results ralph reads test by test.
pub fn runners() -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .map(|t| t.name())
        .collect()
}

/// The names of the formatters, linters and type checkers ralph knows.
pub fn quality_tools() -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| t.role() == Role::Quality)
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
pub fn mentions(text: &str, tool: &str, project: Option<&Project>) -> bool {
    let quoted = text.split('`').skip(1).step_by(2);
    std::iter::once(text)
        .chain(quoted)
        .any(|t| recognise(t, project).tools.iter().any(|u| *u == tool))
}

/// The tool that manages `project`'s environment for `lang` (`uv`, `poetry`, `npm`, …).
pub fn manager(project: &Project, lang: Lang) -> Option<&'static dyn Tool> {
    TOOLS
        .iter()
        .copied()
        .find(|t| t.manages(project) == Some(lang))
}

/// How the package scripts of `project` are run: by the package manager its lockfile names,
/// else npm.
pub fn script_runner(project: &Project) -> &'static dyn Tool {
    manager(project, Lang::Js).unwrap_or(&super::npm::Npm)
}

impl<'a> Env<'a> {
    /// The project `project`, with its Python environment's manager.
    pub fn of(project: &'a Project) -> Env<'a> {
        Env {
            project,
            manager: manager(project, Lang::Python),
            scripts: script_runner(project),
            python: super::python::on_path(),
        }
    }
}

/// The native build of the project of `env`, when it has native code: the first tool's that
/// builds it.
pub fn native(env: &Env) -> Option<super::native::NativeSpec> {
    TOOLS.iter().find_map(|t| t.native(env))
}

/// What the CI action `action` (without its version) installs: a language's toolchain, or a
/// tool (`uv`, `poetry`), when ralph knows it.
pub fn provided_by(action: &str) -> Option<&'static str> {
    ecosystem::ECOSYSTEMS
        .iter()
        .find(|e| e.actions.contains(&action))
        .map(|e| e.toolchain)
        .or_else(|| {
            TOOLS
                .iter()
                .find(|t| t.installed_by().contains(&action))
                .map(|t| t.name())
        })
}

/// What one simple command (its words, as [`plain_commands`] gives them) does: the first
/// tool that knows the call says, else what it starts, else what its role is.
pub fn step_of(words: &[String]) -> StepKind {
    step_at(words, 0)
}

fn step_at(words: &[String], depth: usize) -> StepKind {
    if depth > MAX_DEPTH {
        return StepKind::Other;
    }
    let call = match peel(words) {
        Peeled::Call(call) => call,
        Peeled::Script(s) => {
            let kinds: Vec<StepKind> = plain_commands(&s)
                .iter()
                .map(|w| step_at(w, depth + 1))
                .collect();
            return strongest(&kinds);
        }
        Peeled::Nothing => return StepKind::Other,
    };
    let Some(tool) = TOOLS.iter().find(|t| t.is(&call, None)) else {
        return StepKind::Other;
    };
    if let Some(kind) = tool.step(&call) {
        return kind;
    }
    if let Inner::Words(w) = tool.inner(&call, None) {
        return step_at(&w, depth + 1);
    }
    by_role(tool.role())
}

/// What a tool's role says a call of it does.
fn by_role(role: Role) -> StepKind {
    match role {
        Role::Tests(_) | Role::Suite => StepKind::Check(CheckKind::Test),
        Role::Quality => StepKind::Check(CheckKind::Quality),
        Role::Wrapper | Role::Other => StepKind::Other,
    }
}

/// The calls a simple command makes, the outermost first, through the wrappers that start
/// another program's words (`uv run pytest` is uv's call, then pytest's), each with the tool that
/// knows it.
pub fn chain(words: &[String]) -> Vec<(Call, Option<&'static dyn Tool>)> {
    let mut out = Vec::new();
    let Peeled::Call(mut call) = peel(words) else {
        return out;
    };
    for _ in 0..MAX_DEPTH {
        let tool = TOOLS.iter().copied().find(|t| t.is(&call, None));
        let next = match tool.map(|t| t.inner(&call, None)) {
            Some(Inner::Words(w)) => match peel(&w) {
                Peeled::Call(inner) => Some(inner),
                Peeled::Script(_) | Peeled::Nothing => None,
            },
            _ => None,
        };
        out.push((call, tool));
        match next {
            Some(inner) => call = inner,
            None => break,
        }
    }
    out
}

/// The call a simple command comes to once the wrappers that start another program's words are
/// looked through (`python -m pytest`, `uv run pytest`, `npx jest` are `pytest`, `jest`), with
/// the tool that knows it.
pub fn innermost(words: &[String]) -> Option<(Call, Option<&'static dyn Tool>)> {
    chain(words).pop()
}

/// The folders of a project's tree that hold builds or environments, never its sources: each
/// ecosystem's and each tool's.
pub fn local_folders() -> Vec<&'static str> {
    ecosystem::ECOSYSTEMS
        .iter()
        .flat_map(|e| e.local_folders.iter().copied())
        .chain(TOOLS.iter().flat_map(|t| t.local_folders().iter().copied()))
        .collect()
}

/// Where the tools keep the Pythons they install, each folder with the prefix of its
/// interpreters' folders, in the order of [`TOOLS`].
pub fn python_installs() -> Vec<(std::path::PathBuf, &'static str)> {
    TOOLS.iter().filter_map(|t| t.pythons()).collect()
}
