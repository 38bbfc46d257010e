//! How every check-side process runs — a check, the coverage command, a setup, an import probe,
//! the pre-commit hook —: without the GitHub or model credentials, confined, and able to write
//! only its worktree and ralph's own folders the plan's variables name.

use crate::process::{Cmd, Confinement, Kind};
use std::path::Path;

/// The variable naming a CI job's own folder: every step and check of the job (a test run again
/// alone too) may write it — what its steps installed there (its Python environment, its global
/// installs) is there for its checks, under the sandbox as without.
pub const JOB_DIR_VAR: &str = "RALPH_JOB_DIR";

/// Model API keys a check or setup never gets (an agent that needs one gets it from its own
/// backend): agent-written code runs in both.
const MODEL_KEYS: [&str; 2] = [crate::env::ANTHROPIC_API_KEY, crate::env::OPENAI_API_KEY];

/// Variables of a plan's environment that name a folder a check writes outside its worktree:
/// ralph's own folders (an ecosystem's build cache under `.ralph/cache/`, a scratch folder of its
/// own, a tool's data file there), made before the check starts so that the sandbox can show
/// them writable. The folder itself, or — for a data file — the folder it is in.
fn writable_of<'a>(var: &str, value: &'a str) -> Option<&'a Path> {
    let path = Path::new(value);
    if super::tools::ecosystem::names_build_cache(var)
        || var == super::build_system::BUILD_DIR_VAR
        || var == JOB_DIR_VAR
    {
        Some(path)
    } else if super::tools::data_files().any(|(v, ..)| v == var) {
        Some(path.parent().unwrap_or(path))
    } else {
        None
    }
}

/// `program args…` in `dir` the way every check-side process runs (a check, the coverage
/// command, a setup, an import probe, the pre-commit hook): with `env`, without the GitHub or
/// model credentials, and confined as `kind` — writable are `dir`, `writable` and the folders
/// `env` points builds and reports to.
pub fn program(
    program: &str,
    args: &[&str],
    dir: &Path,
    kind: Kind,
    env: &[(String, String)],
    writable: &[&Path],
) -> Cmd {
    let mut confinement = Confinement::new(kind, dir);
    for w in writable {
        confinement = confinement.writable(*w);
    }
    for (k, v) in env {
        if let Some(dir) = writable_of(k, v) {
            // The sandbox shows only what exists: a cache made now, not by the first build.
            let _ = std::fs::create_dir_all(dir);
            confinement = confinement.writable(dir);
        }
    }
    let mut cmd = Cmd::new(program)
        .args(args)
        .current_dir(dir)
        .confine(confinement);
    for var in crate::env::SCRUBBED.iter().chain(&MODEL_KEYS) {
        cmd = cmd.env_remove(var);
    }
    // Python leaves no bytecode in the worktree (a project may still ask for it in `env`).
    cmd = cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    cmd
}

/// `sh -c command`, as [`program`] runs it.
pub fn shell(
    command: &str,
    dir: &Path,
    kind: Kind,
    env: &[(String, String)],
    writable: &[&Path],
) -> Cmd {
    program("sh", &["-c", command], dir, kind, env, writable)
}
