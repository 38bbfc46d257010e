//! What a command does as a step of a CI job — set up, build, check — asked of the tool that
//! runs it ([`Tool::step`]), through the wrappers that start it (`python -m X`, `uv run X`, `npx
//! X`): never a word among its arguments (`pip install coverage tox` sets up, though it names a
//! test runner). Here too what the name of a package script or a task target says it does, for
//! every script runner and task runner.

use super::found::CheckKind;
use super::shell::Call;

/// What a command, a step's script, does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Check(CheckKind),
    Setup,
    /// A build (`make`, `cmake --build`, `npm run build`): it prepares the checks after it, and
    /// is the job's quality check where none follows.
    Build,
    Other,
}

/// The kinds in the order a script is named by: a test run if any command runs tests, else a
/// quality check, else setup, else a build.
const STRONGEST_FIRST: [StepKind; 4] = [
    StepKind::Check(CheckKind::Test),
    StepKind::Check(CheckKind::Quality),
    StepKind::Setup,
    StepKind::Build,
];

/// The kind of a script whose commands are `kinds`: the first of [`STRONGEST_FIRST`] among them.
pub fn strongest(kinds: &[StepKind]) -> StepKind {
    STRONGEST_FIRST
        .into_iter()
        .find(|k| kinds.contains(k))
        .unwrap_or(StepKind::Other)
}

/// What a package script or a task target does, by its name (`test:unit` tests, `lint`
/// checks, `build` builds, `install` sets up).
pub fn by_name(name: &str) -> StepKind {
    let base = name.split([':', '-', '.']).next().unwrap_or(name);
    match base {
        "test" | "tests" | "check" | "e2e" | "coverage" | "cov" => StepKind::Check(CheckKind::Test),
        "lint" | "format" | "fmt" | "typecheck" | "types" | "tsc" | "style" => {
            StepKind::Check(CheckKind::Quality)
        }
        "build" | "compile" | "dist" | "bundle" => StepKind::Build,
        "install" | "setup" | "deps" | "bootstrap" => StepKind::Setup,
        _ if name.starts_with("type") => StepKind::Check(CheckKind::Quality),
        _ => StepKind::Other,
    }
}

/// What a task runner's call does by its first target (`make check`, `just lint`, `ninja
/// test`); `bare` where it names none.
pub fn by_target(call: &Call, bare: StepKind) -> StepKind {
    call.args
        .iter()
        .find(|a| !a.starts_with('-') && !a.contains('='))
        .map_or(bare, |t| by_name(t))
}

/// The subcommands with which a package installer (pip, conda, gem) sets up.
pub const INSTALLS: &[&str] = &[
    "install", "download", "sync", "update", "upgrade", "create", "env",
];

/// What an installer's call does by its subcommand: one of `installs` sets up, anything else is
/// something else.
pub fn installs_by(call: &Call, installs: &[&str]) -> Option<StepKind> {
    Some(if installs.contains(&call.sub()) {
        StepKind::Setup
    } else {
        StepKind::Other
    })
}
