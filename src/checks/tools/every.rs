//! The questions asked of every tool at once, for what is not one check's: what a command
//! installs and where (registries, global installs, folders it downloads into), what a project's
//! environment is made of (manifests, caches, environments, a tool's data file and user
//! configuration), the task files, build suites and coverage a project declares.

use super::{ecosystem, plain_commands, recognise, step, Env, Lang, Tasks, Tool, TOOLS};

/// `command` split into what builds an env-building runner's environments and what runs them
/// offline, when it runs one (tox, nox).
pub fn offline(command: &str) -> Option<(String, String)> {
    let uses = recognise(command, None);
    uses.tools.iter().find_map(|t| t.offline(command))
}

/// Whether every command of `command` installs tools or dependencies by name, building nothing
/// of the project (`pip install tox`, `npm i -g pnpm`, `cargo install cargo-nextest`, `pipx
/// install nox`, `go install …@v1`): each asked of the tool that runs it.
pub fn installs_only_by_name(command: &str) -> bool {
    let commands = plain_commands(command);
    !commands.is_empty()
        && commands.iter().all(|words| {
            step::innermost(words)
                .and_then(|(call, tool)| tool.map(|t| t.installs_by_name(&call)))
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
pub fn task_files(project: &crate::checks::project::Project) -> Vec<(&'static dyn Tool, Tasks)> {
    TOOLS
        .iter()
        .filter_map(|t| Some((*t, t.tasks(project)?)))
        .collect()
}

/// Whether every command of `line` only makes the project's environment where it runs (no
/// global install): each asked of its tool.
pub fn makes_local_env(line: &str) -> bool {
    let commands = plain_commands(line);
    !commands.is_empty()
        && commands.iter().all(|words| {
            step::innermost(words)
                .and_then(|(call, tool)| tool.map(|t| t.makes_local_env(&call)))
                .unwrap_or(false)
        })
}

/// How the project of `env` measures the coverage of its `lang` tests: the first tool of that
/// language that says.
pub fn coverage(env: &Env, lang: Lang) -> Option<super::CoverageSpec> {
    TOOLS
        .iter()
        .filter(|t| t.ecosystem() == Some(lang))
        .find_map(|t| t.coverage(env))
}

/// The test suites the build systems of `project` declare, in the order of [`TOOLS`]: each
/// build system's name, its command (built in `build(name)`) and why.
pub fn build_suites(
    project: &crate::checks::project::Project,
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
        .flat_map(|words| step::chain(words))
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
        let own = step::innermost(&words)
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
        .flat_map(|words| step::chain(words))
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
