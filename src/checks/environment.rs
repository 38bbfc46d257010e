//! A working environment per worktree, so the checks test the worktree's code with the
//! project's tools: the setup command (`[checks] setup`, else what is safe to detect — a
//! declared install target that only makes a local environment, `uv sync` with every group and
//! extra for a uv project, the lockfile's install for npm, pnpm or yarn), run when a worktree is
//! made and again when a dependency manifest changes; the variables every check runs with (one
//! Cargo target directory under `.ralph/cache/` shared by all worktrees; the worktree's Python
//! import roots first on `PYTHONPATH`); and the diagnosis of a Python package that resolves to
//! another checkout (an editable install of the main checkout).

use super::project::Project;
use super::tools::ecosystem::{self, Registry};
use super::tools::{Env, Lang};
use crate::config::ChecksConfig;
use crate::process::{self, Kind};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// How a worktree's environment is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetupSpec {
    pub command: String,
    /// Why, for `ralph doctor`.
    pub reason: String,
    /// Named in `[checks] setup`: when it fails on the base the competition is refused. A
    /// detected one that fails is ralph's guess failing: the checks run without it (a CI job
    /// installs its own way), and a competition is refused only when no test can judge.
    #[serde(skip)]
    pub configured: bool,
}

/// The setup of the project `p`: `[checks] setup`, else a declared install target
/// that only makes a local environment, else the lockfile's install.
pub fn setup(p: &Project, config: &ChecksConfig) -> Option<SetupSpec> {
    if let Some(command) = &config.setup {
        return Some(SetupSpec {
            command: command.clone(),
            reason: "`setup` under [checks] in .ralph/config.toml".into(),
            configured: true,
        });
    }
    if let Some((command, reason)) = super::declared::install_target(p) {
        return Some(SetupSpec {
            command,
            reason,
            configured: false,
        });
    }
    let own = lockfile_setup(p);
    // A Rust crate beside another language's environment (a maturin package): its crates are
    // downloaded too, for the cargo checks that have no network.
    match (own, rust_setup(p)) {
        (Some(own), Some(rust)) => Some(SetupSpec {
            command: format!("{} && ({})", own.command, rust.command),
            reason: format!("{}, and a Cargo.toml", own.reason),
            configured: false,
        }),
        (own, rust) => own.or(rust),
    }
}

/// The setup of the project's own environment manager or lockfile (uv, Poetry, PDM, Hatch;
/// npm, pnpm, Yarn, Bun), when it has one: the manager says how.
fn lockfile_setup(p: &Project) -> Option<SetupSpec> {
    managed_setup(p, &[Lang::Python, Lang::Js])
}

/// The setup of the first of `langs` whose environment a tool manages for `p`.
fn managed_setup(p: &Project, langs: &[Lang]) -> Option<SetupSpec> {
    langs.iter().find_map(|lang| {
        let (command, reason) = super::tools::manager(p, *lang)?.setup(p)?;
        Some(SetupSpec {
            command,
            reason,
            configured: false,
        })
    })
}

/// A Rust project's setup: the crates its checks build, downloaded (cargo says how).
fn rust_setup(p: &Project) -> Option<SetupSpec> {
    managed_setup(p, &[Lang::Rust])
}

pub use super::tools::{touches_native, NativeSpec, NATIVE_SITE_VAR};

/// The private folder of the worktree at `wt` where what ralph runs again after an agent's
/// change may write (under ralph's cache folder `cache_dir`).
pub fn after_change_dir(cache_dir: &Path, wt: &Path) -> std::path::PathBuf {
    let name = wt
        .file_name()
        .map_or_else(|| "worktree".into(), |n| n.to_string_lossy().into_owned());
    cache_dir.join("after-change").join(name)
}

/// Where a rebuild after the change unpacks the project's wheel, in `after_change_dir`.
pub fn native_site(after_change: &Path) -> std::path::PathBuf {
    after_change.join("native-site")
}

/// Removes the rebuilt native code of an earlier attempt from `after`'s folder, which the
/// change's build could write: through `untrusted_dir`, never following a link it left.
pub fn clear_native_site(after: &AfterChange) -> Result<(), String> {
    let Ok(dir) = crate::untrusted_dir::UntrustedDir::open(&after.cache) else {
        return Ok(());
    };
    let site = native_site(Path::new(""));
    dir.remove(&site)
        .map_err(|e| format!("cannot remove {}: {e}", native_site(&after.cache).display()))
}

/// The native build of the project `p`, when it has native code.
pub fn native(p: &Project) -> Option<NativeSpec> {
    super::tools::native(&Env::of(p))
}

/// Builds the native code in `dir`. On failure, what the build said.
pub async fn build_native(
    spec: &NativeSpec,
    dir: &Path,
    timeout: Duration,
    env: &[(String, String)],
    after: Option<&AfterChange>,
) -> Result<Duration, String> {
    let built = match (after, &spec.rebuild) {
        // The environment is read-only after the change: the wheel goes to a private folder.
        (Some(after), Some(rebuild)) => {
            let site = native_site(&after.cache);
            let mut env = env.to_vec();
            env.push((NATIVE_SITE_VAR.into(), site.display().to_string()));
            prepare("native build", rebuild, dir, timeout, &env, Some(after)).await
        }
        _ => prepare("native build", &spec.command, dir, timeout, env, after).await,
    };
    built.map_err(|f| f.message)
}

/// Why a command that makes the worktree ready (the setup, the native build, a CI job's step)
/// did not succeed: how it ended, what it said, and the whole story as a competition tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unready {
    /// `exit 1`, `stopped after 600s`, `could not start: …`.
    pub how: String,
    /// What it said (its tools' summary, else the head and tail of its output); empty when it
    /// printed nothing or did not start.
    pub said: String,
    /// The failure in full: what it is, how it ended, what it said, what the sandbox refused it.
    pub message: String,
}

impl Unready {
    /// A command that could not be started (or given its folder): `message` says why.
    pub fn not_started(why: String, message: String) -> Unready {
        Unready {
            how: why,
            said: String::new(),
            message,
        }
    }
}

/// How `out`, a command's output with `timeout`, ended when it did not succeed: `exit 1`,
/// `exit none` (a signal), `stopped after 600s`.
pub fn ending(out: &process::Output, timeout: Duration) -> String {
    if out.timed_out {
        format!("stopped after {}s", timeout.as_secs())
    } else {
        format!("exit {}", out.code.map_or("none".into(), |c| c.to_string()))
    }
}

/// Runs the setup in `dir` on the base, as a competition does before its baseline: confined as
/// a setup (the user's package caches writable, the setup's network). On failure, how it ended
/// and what it said.
pub async fn try_setup(
    spec: &SetupSpec,
    dir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<Duration, Unready> {
    prepare("setup", &spec.command, dir, timeout, env, None).await
}

/// Builds the base's native code in `dir`, as a competition does after the setup. On failure,
/// how it ended and what it said.
pub async fn try_native(
    spec: &NativeSpec,
    dir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<Duration, Unready> {
    prepare("native build", &spec.command, dir, timeout, env, None).await
}

/// Where a setup or a native build run again after an agent's change may write: a private
/// cache folder of the worktree's, which the package managers' own variables point to. The
/// user's caches are read-only to it — the change's code runs there (a build backend, an
/// install script), and must not poison what the user builds next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfterChange {
    /// The worktree's private cache folder (under `.ralph/cache/`).
    pub cache: std::path::PathBuf,
}

/// The package managers' cache variables, each pointed into `dir`: what a command run after the
/// change downloads stays out of the user's caches.
pub fn private_caches(dir: &Path) -> Vec<(String, String)> {
    super::tools::caches()
        .map(|(var, sub)| (var.to_owned(), dir.join(sub).display().to_string()))
        .collect()
}

impl AfterChange {
    /// The variables and writable places of a command run again after the change: `command`
    /// is `cargo fetch` (ralph's own Rust setup, which runs no code of the project) also
    /// downloads into Cargo's registry.
    fn confinement(&self, command: &str) -> (Vec<(String, String)>, Vec<std::path::PathBuf>) {
        let vars = private_caches(&self.cache);
        let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
        let mut writable = vec![self.cache.clone()];
        if let Some(h) = &home {
            writable.extend(super::tools::environments().map(|rel| h.join(rel)));
            writable.extend(
                super::tools::downloads(command)
                    .iter()
                    .map(|rel| h.join(rel)),
            );
        }
        (vars, writable)
    }
}

/// Runs `command` — the `what` that makes the worktree ready (the setup, the native build) —
/// in `dir`, confined as a setup, or — `after` an agent's change — as a rebuild that writes only
/// its private caches. On failure: what it is, why it stopped and what it said.
async fn prepare(
    what: &str,
    command: &str,
    dir: &Path,
    timeout: Duration,
    env: &[(String, String)],
    after: Option<&AfterChange>,
) -> Result<Duration, Unready> {
    let project = Project::read(dir);
    // The state its tools write of their own (PDM's logs) goes to a folder of this run's.
    let scratch = tempfile::Builder::new()
        .prefix("ralph-setup-")
        .tempdir()
        .map_err(|e| {
            Unready::not_started(
                format!("no folder of its own: {e}"),
                format!("the {what} `{command}` has no folder of its own: {e}"),
            )
        })?;
    let mut own = super::tools::Prepared {
        command: command.to_owned(),
        env: env.to_vec(),
        ..Default::default()
    };
    super::tools::with_state(
        &super::tools::recognise(command, Some(&project)),
        &mut own,
        scratch.path(),
    );
    let cmd = match after {
        None => {
            let writable: Vec<&Path> = own.writable.iter().map(|p| p.as_path()).collect();
            super::confined::shell(command, dir, Kind::Setup, &own.env, &writable)
        }
        Some(after) => {
            let (vars, mut writable) = after.confinement(command);
            let _ = std::fs::create_dir_all(&after.cache);
            writable.extend(own.writable.iter().cloned());
            let env: Vec<(String, String)> = vars.into_iter().chain(own.env).collect();
            let writable: Vec<&Path> = writable.iter().map(|p| p.as_path()).collect();
            super::confined::shell(command, dir, Kind::Rebuild, &env, &writable)
        }
    }
    .label(what)
    .hosts(registries_for(command, &project))
    .timeout(timeout)
    .max_output(1 << 20);
    let out = process::run(&cmd).await.map_err(|e| {
        Unready::not_started(
            format!("could not start: {e}"),
            format!("the {what} `{command}` could not start: {e}"),
        )
    })?;
    if out.success() {
        return Ok(out.duration);
    }
    let how = ending(&out, timeout);
    let refused = crate::process::egress::refused_to(what)
        .map(|r| format!("\n{r}"))
        .unwrap_or_default();
    let said = super::tools::explain(&Default::default(), &out.stdout, &out.stderr);
    let shown = if said.trim().is_empty() {
        "(it printed nothing)"
    } else {
        &said
    };
    let message = format!("the {what} `{command}` failed ({how}):\n{shown}{refused}");
    Err(Unready { how, said, message })
}

/// The registries `command`'s own package managers download from: each simple command it runs
/// (its wrappers looked through, `python -m pip` read as pip), and each tool it reaches
/// through the project `p` (a Makefile target's recipe, a package script).
fn registries_of_command(command: &str, p: &Project) -> Vec<Registry> {
    let mut out = super::tools::registries_of(command);
    for tool in super::tools::recognise(command, Some(p)).tools {
        out.extend(tool.registry());
    }
    out
}

/// The registries of the project `p`'s own ecosystems: PyPI for a Python project, npm for a
/// `package.json`, crates.io for a `Cargo.toml`, the Go module proxy for a `go.mod`.
fn registries_of_project(p: &Project) -> Vec<Registry> {
    ecosystem::of(p).filter_map(|e| e.registry).collect()
}

/// The hosts of `registries` and their mirrors, sorted, each once.
fn hosts_of(mut registries: Vec<Registry>, p: &Project) -> Vec<String> {
    registries.sort();
    registries.dedup();
    let mut out: Vec<String> = Vec::new();
    for r in registries {
        out.extend(r.hosts().iter().map(|h| (*h).to_owned()));
        out.extend(
            r.mirrors(p)
                .iter()
                .filter_map(|u| crate::process::egress::endpoint(u))
                .map(|r| r.text()),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// The package registries a setup of the project `p` downloads from, by the ecosystems
/// it has: PyPI, npm (and Yarn's mirror of it), crates.io, the Go module proxy — and the index
/// URLs the environment and the project's own configuration name instead (a mirror, a private
/// registry). `[sandbox.network] setup_allow` adds more.
pub fn registries(p: &Project) -> Vec<String> {
    hosts_of(registries_of_project(p), p)
}

/// The registries the setup command `command` may reach in the project `p`: those of the
/// package managers it runs, whatever the project's language (`pip install meson` in a C
/// project reaches PyPI; `apt-get` Debian's archive), and those of the project's own
/// ecosystems (what a script of its own installs cannot be read) — with their mirrors.
pub fn registries_for(command: &str, p: &Project) -> Vec<String> {
    let mut all = registries_of_project(p);
    all.extend(registries_of_command(command, p));
    hosts_of(all, p)
}

/// A fingerprint of the dependency manifests at `root` (FNV-1a over names and contents).
pub fn fingerprint(root: &Path) -> String {
    let mut hash = crate::mix::Fnv1a::default();
    for name in super::tools::manifests() {
        if let Some(text) = crate::untrusted_dir::project_text(root, name) {
            let bytes = text.as_bytes();
            hash.eat(name.as_bytes());
            hash.eat(&(bytes.len() as u64).to_le_bytes());
            hash.eat(bytes);
        }
    }
    format!("{:016x}", hash.finish())
}

/// The variables every check in the worktree at `wt` runs with: the Cargo target directory
/// shared under `cache_dir` — also where the user set one of their own, which a check of an
/// agent's change may not write (and the sandbox shows read-only) —, Go's build cache and
/// ccache's there too, the worktree's import roots first on `PYTHONPATH`.
pub fn variables(wt: &Path, cache_dir: &Path) -> Vec<(String, String)> {
    let p = Project::read(wt);
    let mut out = Vec::new();
    // Each ecosystem's build cache (Cargo's target directory, Go's build cache, ccache): ralph's
    // own, shared by the worktrees.
    for (var, dir) in ecosystem::of(&p).filter_map(|e| e.build_cache) {
        out.push((var.into(), cache_dir.join(dir).display().to_string()));
    }
    if super::python::is_python(&p) {
        let root = match super::python::package(&p) {
            Some(package) if package.starts_with("src/") => wt.join("src"),
            _ => wt.to_owned(),
        };
        let mut path = root.display().to_string();
        // The native code built again after a change, when it had to go beside the
        // environment: first, before the environment's build of the base.
        if native(&p).is_some_and(|n| n.rebuild.is_some()) {
            let site = native_site(&after_change_dir(cache_dir, wt));
            path = format!("{}:{path}", site.display());
        }
        if let Some(existing) = crate::env::get("PYTHONPATH").filter(|p| !p.is_empty()) {
            path = format!("{path}:{existing}");
        }
        out.push(("PYTHONPATH".into(), path));
    }
    out
}

/// Runs the setup in `dir`. On failure, what it said.
pub async fn run_setup(
    spec: &SetupSpec,
    dir: &Path,
    timeout: Duration,
    env: &[(String, String)],
    after: Option<&AfterChange>,
) -> Result<Duration, String> {
    prepare("setup", &spec.command, dir, timeout, env, after)
        .await
        .map_err(|f| f.message)
}

/// The interpreter the checks run Python with, when a check names one as its program
/// (`.venv/bin/python -m pytest`, `/opt/py/bin/python3 -m pytest`): the test checks first.
/// A relative path is taken from the worktree. `None`: the checks use the one on `PATH`.
pub fn check_interpreter(checks: &[super::spec::CheckSpec], wt: &Path) -> Option<String> {
    let mut checks: Vec<&super::spec::CheckSpec> = checks.iter().collect();
    checks.sort_by_key(|c| c.kind != super::tools::CheckKind::Test);
    checks.iter().find_map(|c| {
        let words = super::spec::words(&c.command);
        let program = words.first()?.as_str();
        let name = Path::new(program).file_name()?.to_str()?;
        if !name.starts_with("python") {
            return None;
        }
        Some(if program.contains('/') && !program.starts_with('/') {
            wt.join(program).display().to_string()
        } else {
            program.to_owned()
        })
    })
}

/// Where a Python module is imported from in `dir`, with `env`, by `python` (else the
/// interpreter on `PATH`).
async fn origin(
    module: &str,
    dir: &Path,
    env: &[(String, String)],
    python: Option<&str>,
) -> Option<String> {
    let python = match python {
        Some(p) => p,
        None if process::on_path("python") => "python",
        None => "python3",
    };
    let script = format!(
        "import importlib.util as u; s = u.find_spec({module:?}); print(s.origin if s and s.origin else '')"
    );
    // Importing the package runs the worktree's code: a check like any other.
    let cmd = super::confined::program(python, &["-c", &script], dir, Kind::Check, env, &[])
        .timeout(Duration::from_secs(60));
    let out = process::run(&cmd).await.ok()?;
    let line = out.stdout.trim().to_owned();
    (out.code == Some(0) && !line.is_empty()).then_some(line)
}

/// What the import of the project's package says about the environment, for a Python project
/// run by the plain interpreter: `None` when it resolves to the worktree (or cannot be told);
/// otherwise a line for the user — neutralised by the import roots, or still wrong, with the fix.
/// `python` is the interpreter the checks name ([`check_interpreter`]), else the one on `PATH`.
pub async fn python_import(
    wt: &Path,
    env: &[(String, String)],
    python: Option<&str>,
) -> Option<Diagnosis> {
    let p = Project::read(wt);
    if !super::python::is_python(&p) || super::tools::manager(&p, Lang::Python).is_some() {
        return None;
    }
    // A compiled module of the project's that comes from another checkout (an editable
    // install's finder lends the main checkout's build): the change's native code would not be
    // the one tested.
    for source in super::tools::cython_sources(&p).iter().take(1) {
        let module = source
            .trim_start_matches("src/")
            .trim_end_matches(".pyx")
            .replace('/', ".");
        if let Some(at) = origin(&module, wt, env, python).await {
            if !Path::new(&at).starts_with(wt) {
                return Some(Diagnosis::Wrong(format!(
                    "the compiled module `{module}` is imported from {at}, not from the worktree: the checks would test another checkout's native code, and a change to {source} would not be tested. Install Cython (ralph compiles it in place), or set `[checks] setup` to build the worktree's"
                )));
            }
        }
    }
    let package = super::python::package(&p)?;
    let module = package.trim_start_matches("src/").to_owned();
    let without = origin(&module, wt, &[], python).await?;
    if Path::new(&without).starts_with(wt) {
        return None;
    }
    let with = origin(&module, wt, env, python).await;
    Some(match with {
        Some(w) if Path::new(&w).starts_with(wt) => Diagnosis::Neutralised(format!(
            "`{module}` is installed from {without} (an editable install of another checkout?); ralph puts the worktree's import roots first on PYTHONPATH, so the checks test the worktree's code"
        )),
        _ => Diagnosis::Wrong(format!(
            "`{module}` is imported from {without}, not from the worktree: the checks would test another checkout's code. Set `[checks] setup` to install the worktree (e.g. `{}`) and run the checks through it",
            super::tools::python_setup()
        )),
    })
}

/// What [`python_import`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnosis {
    /// Another checkout is installed, and the worktree's code is imported anyway.
    Neutralised(String),
    /// The checks would import another checkout's code.
    Wrong(String),
}

#[cfg(test)]
mod tests;
