//! What a command does as a step of a CI job — set up, build, check — asked of the tool that
//! runs it ([`Tool::step`]), through the wrappers that start it (`python -m X`, `uv run X`, `npx
//! X`): never a word among its arguments (`pip install coverage tox` sets up, though it names a
//! test runner). Here too what the name of a package script or a task target says it does, for
//! every script runner and task runner.

use super::call::{peel, Peeled};
use super::CheckKind;
use super::{Call, Inner, Role, Tool, TOOLS};

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

/// How deep wrappers are followed.
const MAX_DEPTH: usize = 8;

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

/// What one simple command (its words, as [`super::plain_commands`] gives them) does: the first
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
            let kinds: Vec<StepKind> = super::plain_commands(&s)
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
