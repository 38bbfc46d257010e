//! Where things are, for the sandbox: the user's credential files and the host's sockets it
//! hides, the package caches a setup writes (under `HOME`, or where the environment points
//! them), the tools and toolchain homes under `/tmp` or `/var/tmp` it must still show, the
//! variables it never passes, and each agent CLI's state.

use crate::process::bwrap::under_replaced;
use std::path::{Path, PathBuf};

/// The user's credential files, relative to `HOME`: hidden from every confined process. The
/// forges' CLIs keep their tokens there too: `gh` and `hub` (GitHub), `glab` and
/// python-gitlab (GitLab), `tea` (Forgejo, Gitea).
pub const CREDENTIALS: [&str; 29] = [
    ".config/gh",
    ".config/glab-cli",
    ".config/tea",
    ".python-gitlab.cfg",
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    ".ssh",
    ".gnupg",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".config/hub",
    // The agent CLIs that run with a fresh home per call keep keys in their own state.
    ".gemini",
    ".qwen",
    ".config/opencode",
    ".local/share/opencode",
    ".aider",
    ".aider.conf.yml",
];

/// Host paths (not under `HOME`) hidden from every confined process: sockets that hand out a
/// root shell or the user's keys.
pub(super) const HOST_HIDDEN: [&str; 2] = ["/run/docker.sock", "/var/run/docker.sock"];

/// The package managers' caches under `HOME` that a setup command may write.
pub const CACHES: [&str; 7] = [
    ".cargo/registry",
    ".cargo/git",
    ".npm",
    ".cache",
    ".local/share/pnpm",
    ".yarn",
    ".bun/install/cache",
];

/// Variables naming a package manager's cache (or the folder it keeps one in): a setup on the
/// base writes them where the user pointed them, as it writes `~/.cache` and the others of
/// [`CACHES`]. `CARGO_HOME` and `GOPATH` name homes whose download caches are below them.
const CACHE_VARIABLES: [(&str, &[&str]); 16] = [
    ("XDG_CACHE_HOME", &[""]),
    ("PIP_CACHE_DIR", &[""]),
    ("UV_CACHE_DIR", &[""]),
    ("POETRY_CACHE_DIR", &[""]),
    ("PDM_CACHE_DIR", &[""]),
    ("HATCH_DATA_DIR", &[""]),
    ("npm_config_cache", &[""]),
    ("NPM_CONFIG_CACHE", &[""]),
    ("npm_config_store_dir", &[""]),
    ("PNPM_HOME", &[""]),
    ("YARN_CACHE_FOLDER", &[""]),
    ("BUN_INSTALL_CACHE_DIR", &[""]),
    ("CARGO_HOME", &["registry", "git"]),
    ("GOMODCACHE", &[""]),
    ("GOPATH", &["pkg/mod"]),
    ("VIRTUAL_ENV", &[""]),
];

/// The caches the environment's variables name ([`CACHE_VARIABLES`]), made when missing.
pub fn named_caches() -> Vec<PathBuf> {
    CACHE_VARIABLES
        .iter()
        .filter_map(|(var, subs)| {
            let base = PathBuf::from(crate::env::non_empty(var)?);
            base.is_absolute().then(|| {
                subs.iter()
                    .map(|s| {
                        if s.is_empty() {
                            base.clone()
                        } else {
                            base.join(s)
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .flatten()
        .collect()
}

/// Variables that name where ralph's environment keeps its tools: their folders under `/tmp`
/// or `/var/tmp` stay readable in the sandbox (a CI job's tools are often there).
const TOOL_PATHS: [&str; 4] = ["PATH", "PYTHONPATH", "VIRTUAL_ENV", "NODE_PATH"];

/// Variables naming a toolchain's home (and `HOME` itself): under `/tmp` or `/var/tmp` they
/// are shown read-only, whole.
const TOOL_HOMES: [&str; 14] = [
    "HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "NVM_DIR",
    "PYENV_ROOT",
    "PNPM_HOME",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
];

/// What must be shown for `dir` to work: a `bin` or `.bin` folder's parent (a virtualenv's
/// root with its `lib/`, the `node_modules` a `.bin` link points into, a prefix), else `dir`.
pub fn tool_root(dir: &Path) -> PathBuf {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | ".bin") => dir.parent().unwrap_or(dir).to_owned(),
        _ => dir.to_owned(),
    }
}

/// The places under a replaced root a confined process needs to see, from this environment:
/// the tool folders of [`TOOL_PATHS`] (their roots, and where their links lead) and the homes
/// of [`TOOL_HOMES`].
pub(super) fn shown_tools() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let dirs = TOOL_PATHS
        .iter()
        .filter_map(|var| crate::env::get_os(var))
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    for d in dirs {
        let real = d.canonicalize().ok();
        for d in std::iter::once(d).chain(real) {
            if under_replaced(&d) {
                out.push(tool_root(&d));
            }
        }
    }
    for var in TOOL_HOMES {
        if let Some(h) = crate::env::non_empty(var).map(PathBuf::from) {
            if under_replaced(&h) {
                out.push(h);
            }
        }
    }
    shortest(out)
}

/// `paths` without those inside another one of them, sorted.
pub(super) fn shortest(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !out.iter().any(|o| p.starts_with(o)) {
            out.push(p);
        }
    }
    out
}

/// Variables a confined process never gets: handles to the user's agents and sessions.
pub const UNSET: [&str; 5] = [
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "TMUX",
];

/// Where each agent CLI keeps its state (and its own login), relative to `HOME`, with the
/// variable that moves it: writable for that agent, hidden from every other process.
/// Folders are made when missing, so that the sandbox can offer them (a CLI's first run).
pub const AGENT_STATE: [(&str, &str, Option<&str>, bool); 3] = [
    ("claude", ".claude", Some("CLAUDE_CONFIG_DIR"), true),
    ("claude", ".claude.json", None, false),
    ("codex", ".codex", Some("CODEX_HOME"), true),
];

/// Where the state entry `rel` (moved by `var`) of an agent CLI is.
fn state_path(rel: &str, var: Option<&str>, home: Option<&Path>) -> Option<PathBuf> {
    var.and_then(crate::env::non_empty)
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(rel)))
}

/// The state paths of the agent CLI `backend` (`claude`, `codex`), resolved.
pub fn agent_state(backend: &str, home: Option<&Path>) -> Vec<PathBuf> {
    AGENT_STATE
        .iter()
        .filter(|(b, ..)| *b == backend)
        .filter_map(|(_, rel, var, _)| state_path(rel, *var, home))
        .collect()
}

/// [`agent_state`], with its folders made when missing (best effort: a CLI that cannot use
/// them says so itself).
pub fn prepare_agent_state(backend: &str, home: Option<&Path>) -> Vec<PathBuf> {
    AGENT_STATE
        .iter()
        .filter(|(b, ..)| *b == backend)
        .filter_map(|(_, rel, var, dir)| {
            let path = state_path(rel, *var, home)?;
            if *dir && !path.exists() {
                let _ = std::fs::create_dir_all(&path);
            }
            Some(path)
        })
        .collect()
}
