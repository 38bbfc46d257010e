//! The OS sandbox around every agent, check and setup command ralph starts. The process wrapper
//! asks it how to start a confined [`Cmd`](super::Cmd); one [`Sandbox`] is installed per ralph
//! process (like the redactor: one policy, decided by the configuration when a command starts).
//!
//! On Linux the mechanism is bubblewrap (`bwrap`): its own PID namespace (no other process is
//! visible in `/proc`), `no_new_privs`, its own session, no capabilities, killed with ralph; the
//! filesystem read-only but for the process's worktree (with the worktree's own git folder,
//! whose links to the repository stay read-only), a private `/tmp` and the places its kind
//! needs; the user's credential files and other agents' state hidden. Setup commands also get
//! the package managers' caches, which an agent or a check may only read (a poisoned cache would
//! reach the user's next build). Elsewhere there is no mechanism: `auto` runs unconfined and
//! says so, `required` refuses to start.

use super::bwrap::{self, Plan};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Sandbox where a mechanism works; say loudly when none does.
    #[default]
    Auto,
    /// Refuse to start without a sandbox.
    Required,
    /// Never sandbox.
    Off,
}

impl Mode {
    /// The mode `RALPH_SANDBOX` names, else `configured`; an unknown value is an error that
    /// names it.
    pub fn effective(configured: Mode) -> Result<Mode, String> {
        match crate::env::non_empty(crate::env::RALPH_SANDBOX).as_deref() {
            None => Ok(configured),
            Some("auto") => Ok(Mode::Auto),
            Some("required") => Ok(Mode::Required),
            Some("off") => Ok(Mode::Off),
            Some(other) => Err(format!(
                "RALPH_SANDBOX={other:?} is not a sandbox mode: use auto, required or off"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Required => "required",
            Mode::Off => "off",
        }
    }
}

/// What kind of process is confined: each gets its own writable places and network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An agent: its worktree and its own state; the network (its model API).
    Agent,
    /// A check, the coverage command, an import probe or the pre-commit hook: its worktree;
    /// the network as `[sandbox] check_network` says.
    Check,
    /// A setup command (an install) on the base: its worktree and the package caches; the
    /// network.
    Setup,
    /// A setup or native build run again after an agent changed the project — the agent's
    /// code: its worktree, the network, and only the places it is given (a private cache
    /// folder); the user's package caches read-only, as for a check.
    Rebuild,
}

/// What one process may write beyond the read-only view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    pub kind: Kind,
    /// Where it works: writable, with its git metadata.
    pub workdir: PathBuf,
    /// More writable places: an agent's state, a shared build folder, a report's folder.
    pub writable: Vec<PathBuf>,
    /// Files it must read even where the sandbox mounts its own (`/tmp`): the program and
    /// scripts a configured command names.
    pub readable: Vec<PathBuf>,
    /// It may change its workdir (true but for agents in a reading role).
    pub workdir_writable: bool,
    /// Writable places shown at another path: (ralph's private copy, the path it is shown at)
    /// — an agent CLI's state for one call.
    pub private: Vec<(PathBuf, PathBuf)>,
    /// Hosts it may reach besides its kind's allowlist (`host`, `host:port`, `*.domain`): an
    /// agent's model endpoint, a setup's package registries.
    pub hosts: Vec<String>,
    /// Who it is, for the refusals of its connections (`implement smart_bot_1`, `check test`).
    pub label: String,
}

impl Confinement {
    pub fn new(kind: Kind, workdir: impl Into<PathBuf>) -> Confinement {
        Confinement {
            kind,
            workdir: workdir.into(),
            writable: Vec::new(),
            readable: Vec::new(),
            workdir_writable: true,
            private: Vec::new(),
            hosts: Vec::new(),
            label: String::new(),
        }
    }

    /// Also lets it reach `hosts` (its own endpoints).
    pub fn hosts<I: IntoIterator<Item = String>>(mut self, hosts: I) -> Confinement {
        self.hosts.extend(hosts);
        self
    }

    /// Names it for the refusals of its connections.
    pub fn label(mut self, label: impl Into<String>) -> Confinement {
        self.label = label.into();
        self
    }

    /// The kind's name in policies and refusals: `agent`, `setup`, `check`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Agent => "agent",
            Kind::Setup | Kind::Rebuild => "setup",
            Kind::Check => "check",
        }
    }

    /// Also shows the private copy `copy` at `at`, writable (`at` must exist).
    pub fn private(mut self, copy: impl Into<PathBuf>, at: impl Into<PathBuf>) -> Confinement {
        self.private.push((copy.into(), at.into()));
        self
    }

    /// The same, with its workdir read-only: an agent in a role that only reads (proposals,
    /// judging, extraction, verification, review, refine).
    pub fn reading(mut self) -> Confinement {
        self.workdir_writable = false;
        self
    }

    /// Also lets it read `path` where the sandbox would hide it (under `/tmp`).
    pub fn readable(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.readable.push(path.into());
        self
    }

    /// Also lets it write `path` (when it exists).
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Confinement {
        self.writable.push(path.into());
        self
    }
}

/// The user's credential files, relative to `HOME`: hidden from every confined process.
pub const CREDENTIALS: [&str; 20] = [
    ".config/gh",
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
];

/// Host paths (not under `HOME`) hidden from every confined process: sockets that hand out a
/// root shell or the user's keys.
const HOST_HIDDEN: [&str; 2] = ["/run/docker.sock", "/var/run/docker.sock"];

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

/// The roots the sandbox mounts its own, empty, in place of the host's.
const REPLACED: [&str; 2] = ["/tmp", "/var/tmp"];

/// Whether `path` lies under a root the sandbox replaces.
pub fn under_replaced(path: &Path) -> bool {
    REPLACED.iter().any(|r| path.starts_with(r))
}

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
fn shown_tools() -> Vec<PathBuf> {
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
fn shortest(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
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

/// Each kind's network policy, as the reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct NetworkStatus {
    pub agents: &'static str,
    pub setup: &'static str,
    pub checks: &'static str,
}

impl NetworkStatus {
    pub fn of(n: &super::egress::NetworkConfig) -> NetworkStatus {
        let word = |k: &super::egress::KindNetwork| if k.open { "open" } else { "allowlist" };
        NetworkStatus {
            agents: word(&n.agents),
            setup: word(&n.setup),
            checks: word(&n.checks),
        }
    }

    /// The kinds whose network is open, for a warning: `agents, checks`.
    pub fn open_kinds(&self) -> Vec<&'static str> {
        [
            ("agents", self.agents),
            ("setup", self.setup),
            ("checks", self.checks),
        ]
        .iter()
        .filter(|(_, m)| *m == "open")
        .map(|(k, _)| *k)
        .collect()
    }
}

/// How the sandbox stands in this process, for `ralph doctor`, the run report, the pull request
/// and the job summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    pub mode: Mode,
    /// Agents and checks run confined.
    pub active: bool,
    /// `bubblewrap 0.8.0`, when active.
    pub mechanism: Option<String>,
    /// Why not, when not active.
    pub reason: Option<String>,
    /// Checks (and their baseline) may reach the network, unfiltered.
    pub check_network: bool,
    /// Each kind's network policy, `allowlist` or `open`.
    pub network: NetworkStatus,
    /// The hidden paths that exist here.
    pub hidden: Vec<String>,
}

impl Status {
    /// One line for people: what confines the agents and checks, or that nothing does.
    pub fn line(&self) -> String {
        match (&self.mechanism, &self.reason) {
            (Some(m), _) if self.active => format!(
                "agents and checks ran in a {m} sandbox (own PID namespace, read-only filesystem but the worktree, {} credential path(s) hidden; {})",
                self.hidden.len(),
                match self.network.open_kinds().as_slice() {
                    [] => "network only to the hosts of each kind's allowlist".to_owned(),
                    open => format!("network OPEN for {}", open.join(", ")),
                }
            ),
            _ if self.mode == Mode::Off => {
                "agents and checks ran without a sandbox (`[sandbox] mode = \"off\"`)".to_owned()
            }
            (_, reason) => format!(
                "agents and checks ran WITHOUT a sandbox: {}",
                reason.as_deref().unwrap_or("no mechanism")
            ),
        }
    }
}

/// The sandbox of this ralph process.
#[derive(Debug, Clone)]
pub struct Sandbox {
    status: Status,
    /// The `bwrap` program, when active.
    program: Option<PathBuf>,
    home: Option<PathBuf>,
    /// Credentials and `[sandbox] hide`, resolved.
    hide: Vec<PathBuf>,
    /// Every agent CLI's state: hidden from every process but that agent.
    agent_state: Vec<PathBuf>,
    /// `[sandbox] writable`: writable for every confined process.
    writable: Vec<PathBuf>,
    /// What the environment's tools need under `/tmp` or `/var/tmp`, which the sandbox's own
    /// would hide ([`shown_tools`]).
    path_dirs: Vec<PathBuf>,
    /// ralph's own folder (mode 0700) for the scrubbed copies of git configurations that hold
    /// a credential, when the sandbox is active.
    scrub_dir: Option<Arc<tempfile::TempDir>>,
    /// `[sandbox.network]`: where each kind may connect.
    network: super::egress::NetworkConfig,
    /// The binary that forwards a confined process's connections to the proxy: ralph's own,
    /// unless a program embedding the library names another.
    forwarder: Option<PathBuf>,
}

fn registry() -> &'static RwLock<Option<Arc<Sandbox>>> {
    static CURRENT: RwLock<Option<Arc<Sandbox>>> = RwLock::new(None);
    &CURRENT
}

/// Makes `sandbox` the one every confined command of this process runs in.
pub fn install(sandbox: Sandbox) -> Arc<Sandbox> {
    let sandbox = Arc::new(sandbox);
    *registry().write().unwrap_or_else(|e| e.into_inner()) = Some(sandbox.clone());
    sandbox
}

/// The installed sandbox, if any.
pub fn current() -> Option<Arc<Sandbox>> {
    registry().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `~` and `~/x` under `home`; other paths as they are.
pub fn expand(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ if path == "~" => home.map(Path::to_owned).unwrap_or_else(|| path.into()),
        _ => PathBuf::from(path),
    }
}

impl Sandbox {
    /// The sandbox `mode` asks for, with the mechanism found here (probed once: `bwrap` must
    /// start a namespace, which an AppArmor rule or a container can forbid).
    pub async fn detect(
        mode: Mode,
        check_network: bool,
        hide: &[String],
        writable: &[String],
    ) -> Sandbox {
        let home = crate::env::non_empty("HOME").map(PathBuf::from);
        let mut hidden: Vec<PathBuf> = CREDENTIALS
            .iter()
            .filter_map(|rel| home.as_ref().map(|h| h.join(rel)))
            .chain(HOST_HIDDEN.iter().map(PathBuf::from))
            .chain(crate::env::non_empty("GH_CONFIG_DIR").map(PathBuf::from))
            .chain(
                crate::env::non_empty("CARGO_HOME").map(|c| Path::new(&c).join("credentials.toml")),
            )
            .chain(crate::env::non_empty("XDG_RUNTIME_DIR").map(PathBuf::from))
            .chain(hide.iter().map(|h| expand(h, home.as_deref())))
            .collect();
        hidden.dedup();
        let agent_state: Vec<PathBuf> = ["claude", "codex"]
            .iter()
            .flat_map(|b| agent_state(b, home.as_deref()))
            .collect();
        let (program, mechanism, reason) = match mode {
            Mode::Off => (None, None, Some("`[sandbox] mode = \"off\"`".to_owned())),
            Mode::Auto | Mode::Required => match probe().await {
                Ok((program, version)) => (Some(program), Some(version), None),
                Err(why) => (None, None, Some(why)),
            },
        };
        let path_dirs = shown_tools();
        let writable = writable
            .iter()
            .map(|w| expand(w, home.as_deref()))
            .collect();
        let existing: Vec<String> = hidden
            .iter()
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        let scrub_dir = program.as_ref().and_then(|_| {
            tempfile::Builder::new()
                .prefix("ralph-scrubbed-")
                .tempdir()
                .ok()
                .map(Arc::new)
        });
        let network = super::egress::NetworkConfig {
            checks: super::egress::KindNetwork {
                open: check_network,
                allow: Vec::new(),
            },
            ..Default::default()
        };
        let network_status = NetworkStatus::of(&network);
        Sandbox {
            forwarder: None,
            network,
            scrub_dir,
            status: Status {
                network: network_status,
                mode,
                active: program.is_some(),
                mechanism,
                reason,
                check_network,
                hidden: existing,
            },
            program,
            home,
            hide: hidden,
            agent_state,
            writable,
            path_dirs,
        }
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The same sandbox with `ralph` at `path` as the network forwarder (for a program that
    /// embeds the library: its own executable is not ralph).
    pub fn with_forwarder(mut self, path: impl Into<PathBuf>) -> Sandbox {
        self.forwarder = Some(path.into());
        self
    }

    /// The same sandbox with `[sandbox.network]`'s policies.
    pub fn with_network(mut self, network: &super::egress::NetworkConfig) -> Sandbox {
        self.network = network.clone();
        self.status.check_network = network.checks.open && self.status.check_network;
        self.status.network = NetworkStatus::of(network);
        self
    }

    /// Where a process confined by `c` may connect: its kind's policy, with its own hosts.
    pub fn reach(&self, c: &Confinement) -> super::egress::Reach {
        let policy = match c.kind {
            Kind::Agent => &self.network.agents,
            Kind::Setup | Kind::Rebuild => &self.network.setup,
            Kind::Check => &self.network.checks,
        };
        if !self.status.active
            || policy.open
            || (c.kind == Kind::Check && self.status.check_network)
        {
            return super::egress::Reach::Open;
        }
        let entries: Vec<String> = policy.allow.iter().chain(&c.hosts).cloned().collect();
        super::egress::Reach::Allow(super::egress::rules(&entries))
    }

    /// The program and arguments that run `program args…` confined by `c`, or `None` when
    /// this sandbox confines nothing.
    pub fn wrap(
        &self,
        c: &Confinement,
        program: &OsString,
        rest: &[OsString],
        gate: Option<&Path>,
    ) -> Option<(OsString, Vec<OsString>)> {
        let bwrap = self.program.as_ref()?;
        if c.kind == Kind::Setup {
            self.prepare_cache();
        }
        // The program itself, where the sandbox would hide it: its folder's root, and where
        // its link leads (`node_modules/.bin/claude` into its package).
        let mut c = c.clone();
        let program_path = Path::new(program);
        let real = program_path.canonicalize().ok();
        for p in std::iter::once(program_path).chain(real.as_deref()) {
            if let Some(dir) = p.parent().filter(|d| under_replaced(d)) {
                c.readable.push(tool_root(dir));
            }
        }
        let mut plan = self.plan(&c);
        if let Some(socket) = gate.filter(|_| !plan.network) {
            plan.egress = self.egress_plan(&c, socket);
        }
        let facts = bwrap::facts(&plan);
        Some((
            bwrap.as_os_str().to_owned(),
            bwrap::args(&plan, &facts, program, rest),
        ))
    }

    /// How a process without the host's network reaches the proxy: the gate's `socket`, the
    /// forwarder (ralph's own binary) and the loopback endpoints it mirrors.
    fn egress_plan(&self, c: &Confinement, socket: &Path) -> Option<bwrap::Egress> {
        let forwarder = match &self.forwarder {
            Some(f) => f.clone(),
            None => std::env::current_exe().ok()?,
        };
        let super::egress::Reach::Allow(rules) = self.reach(c) else {
            return None;
        };
        let mirrors: Vec<(String, u16)> = rules
            .iter()
            .filter_map(|r| {
                let loopback = matches!(r.host.as_str(), "127.0.0.1" | "localhost" | "::1");
                Some((
                    if r.host == "localhost" {
                        "127.0.0.1".to_owned()
                    } else {
                        r.host.clone()
                    },
                    r.port?,
                ))
                .filter(|_| loopback)
            })
            .collect();
        let port = (3128..3200)
            .find(|p| !mirrors.iter().any(|(_, m)| m == p))
            .unwrap_or(3128);
        Some(bwrap::Egress {
            socket: socket.to_owned(),
            forwarder,
            port,
            mirrors,
        })
    }

    /// Makes `~/.cache` when missing (best effort), so that a setup can write it: pip, Poetry
    /// and uv keep their caches — and Poetry its environments — there, and on a fresh machine
    /// it may not exist yet (the sandbox offers only what exists).
    fn prepare_cache(&self) {
        let home_cache = self.home.as_ref().map(|h| h.join(".cache"));
        for cache in home_cache.into_iter().chain(named_caches()) {
            if !cache.exists() {
                let _ = std::fs::create_dir_all(&cache);
            }
        }
    }

    /// The writable, hidden and network settings of `c`.
    pub fn plan(&self, c: &Confinement) -> Plan {
        let mut writable = c.writable.clone();
        writable.extend(self.writable.iter().cloned());
        if c.kind == Kind::Setup {
            if let Some(h) = &self.home {
                writable.extend(CACHES.iter().map(|rel| h.join(rel)));
            }
            writable.extend(named_caches());
        }
        let shown_privately = |s: &PathBuf| c.private.iter().any(|(_, at)| at == s);
        let hidden = self
            .hide
            .iter()
            .chain(
                self.agent_state
                    .iter()
                    .filter(|s| !writable.contains(s) && !shown_privately(s)),
            )
            .cloned()
            .collect();
        let git = bwrap::git_link(&c.workdir);
        // The repository the worktree belongs to is read-only, not hidden, even where the
        // sandbox mounts its own `/tmp` over it.
        let checkout = match &git {
            bwrap::GitLink::Worktree { admin } => bwrap::main_checkout(admin),
            _ => None,
        };
        let common = match &git {
            bwrap::GitLink::Worktree { admin } => bwrap::common_dir(admin),
            bwrap::GitLink::Repository => Some(c.workdir.join(".git")),
            bwrap::GitLink::None => None,
        };
        Plan {
            private: c.private.clone(),
            replaced: self.scrubbed_configs(common.as_deref()),
            workdir: c.workdir.clone(),
            workdir_writable: c.workdir_writable,
            git,
            readable: shortest(
                c.readable
                    .iter()
                    .chain(&self.path_dirs)
                    .chain(&checkout)
                    .cloned()
                    .collect(),
            ),
            writable,
            hidden,
            network: self.reach(c) == super::egress::Reach::Open,
            egress: None,
        }
    }
}

impl Sandbox {
    /// The hidden path that covers `path` (a credential folder, another agent's state,
    /// `[sandbox] hide`), when the sandbox hides it from a process confined by `c`.
    pub fn hides(&self, path: &Path, c: &Confinement) -> Option<PathBuf> {
        if !self.status.active {
            return None;
        }
        let plan = self.plan(c);
        plan.hidden
            .into_iter()
            .find(|h| path.starts_with(h) && !plan.writable.iter().any(|w| w.starts_with(h)))
    }

    /// Whether any process confined here could have changed `path`, working in `workdir`:
    /// always without a sandbox; with one, only when `path` lies in a place some kind may
    /// write — the workdir, its worktree's own git folder (but the files that link it to the
    /// repository), a cache setup writes, an agent's state, `[sandbox] writable`. A path every
    /// process was shown read-only (or not at all) was changed by something else: the git
    /// directory's seal neither blames it on the step nor undoes it.
    pub fn could_write(&self, path: &Path, workdir: &Path) -> bool {
        if !self.status.active {
            return true;
        }
        if path.starts_with(workdir) && path != workdir.join(".git") {
            return true;
        }
        if let bwrap::GitLink::Worktree { admin } = bwrap::git_link(workdir) {
            let link = ["commondir", "gitdir"]
                .iter()
                .any(|n| path == admin.join(n));
            if path.starts_with(&admin) && !link {
                return true;
            }
        }
        let caches = self
            .home
            .iter()
            .flat_map(|h| CACHES.iter().map(move |rel| h.join(rel)));
        self.writable
            .iter()
            .cloned()
            .chain(caches)
            .chain(self.agent_state.iter().cloned())
            .any(|w| path.starts_with(&w))
    }

    /// The git configurations a confined process reads that hold a credential (the job token
    /// `actions/checkout` leaves in `.git/config`, a password in a remote URL), each with the
    /// scrubbed copy shown in its place: (copy, original).
    fn scrubbed_configs(&self, common: Option<&Path>) -> Vec<(PathBuf, PathBuf)> {
        let Some(dir) = &self.scrub_dir else {
            return Vec::new();
        };
        super::gitconfig::files(common, self.home.as_deref())
            .into_iter()
            .filter_map(|original| {
                let text = crate::fsutil::read_regular_text(&original, 4 << 20).ok()?;
                if super::gitconfig::credentials(&text).is_empty() {
                    return None;
                }
                let clean = super::gitconfig::scrubbed(&text);
                let mut hash = crate::mix::Fnv1a::default();
                hash.eat(original.as_os_str().as_encoded_bytes());
                hash.eat(clean.as_bytes());
                let copy = dir.path().join(format!("{:016x}", hash.finish()));
                if !copy.exists() {
                    crate::fsutil::write_atomic(&copy, clean.as_bytes()).ok()?;
                }
                Some((copy, original))
            })
            .collect()
    }
}

/// Makes ralph's own process undumpable: `/proc/<pid>/environ` and `/proc/<pid>/mem` — where
/// the token ralph was started with stays readable — are closed to every process of the same
/// user that is not privileged (a confined one does not even see ralph's PID). Children are
/// not affected: `exec` makes a process dumpable again.
pub fn protect_self() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with PR_SET_DUMPABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Whether ralph's process is undumpable now.
pub fn self_protected() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: as above; PR_GET_DUMPABLE returns the flag.
    unsafe {
        libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Finds `bwrap` and checks that it can make its namespaces here; its version, or why not.
async fn probe() -> Result<(PathBuf, String), String> {
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "no sandbox mechanism on {} (ralph sandboxes with bubblewrap, on Linux)",
            std::env::consts::OS
        ));
    }
    let Some(program) = super::find_on_path("bwrap") else {
        return Err(
            "bubblewrap (`bwrap`) is not installed: install the `bubblewrap` package (apt-get install bubblewrap, dnf install bubblewrap)"
                .to_owned(),
        );
    };
    let version = super::run(&super::Cmd::new(&program).arg("--version"))
        .await
        .ok()
        .filter(|o| o.success())
        .map(|o| o.stdout.trim().to_owned())
        .unwrap_or_else(|| "bubblewrap".to_owned());
    let test = super::Cmd::new(&program)
        .args([
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--",
            "true",
        ])
        .timeout(std::time::Duration::from_secs(20));
    match super::run(&test).await {
        Ok(out) if out.success() => Ok((program, version)),
        Ok(out) => Err(format!(
            "{version} cannot create its namespaces here ({}){}",
            out.tail(2).trim(),
            apparmor_hint()
        )),
        Err(e) => Err(format!("{version} could not start: {e}")),
    }
}

/// Ubuntu 23.10 and later forbid unprivileged user namespaces to programs without an AppArmor
/// profile that allows them.
fn apparmor_hint() -> &'static str {
    match std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") {
        Ok(v) if v.trim() == "1" => {
            "; AppArmor restricts unprivileged user namespaces here: give bwrap a profile that allows `userns` (see docs/security.md)"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(check_network: bool) -> Sandbox {
        let network = crate::process::egress::NetworkConfig {
            agents: crate::process::egress::KindNetwork {
                open: false,
                allow: vec!["mcp.example:8443".into()],
            },
            checks: crate::process::egress::KindNetwork {
                open: check_network,
                allow: vec![],
            },
            ..Default::default()
        };
        Sandbox {
            status: Status {
                mode: Mode::Auto,
                active: true,
                mechanism: Some("bubblewrap 0.8.0".into()),
                reason: None,
                check_network,
                network: NetworkStatus::of(&network),
                hidden: vec!["/h/.ssh".into()],
            },
            network,
            forwarder: None,
            program: Some("/usr/bin/bwrap".into()),
            home: Some("/h".into()),
            hide: vec!["/h/.ssh".into()],
            agent_state: vec!["/h/.claude".into(), "/h/.codex".into()],
            writable: vec!["/h/.cache/sccache".into()],
            path_dirs: vec!["/tmp/tools/bin".into()],
            scrub_dir: None,
        }
    }

    #[test]
    fn each_kind_gets_its_network_and_writable_places() {
        let sb = sandbox(false);
        let agent = sb.plan(&Confinement::new(Kind::Agent, "/w").writable("/h/.claude"));
        assert!(
            !agent.network,
            "an agent reaches out only through the proxy"
        );
        assert_eq!(
            agent.writable,
            [PathBuf::from("/h/.claude"), "/h/.cache/sccache".into()],
            "its own state, and what `[sandbox] writable` names"
        );
        assert_eq!(
            agent.readable,
            [PathBuf::from("/tmp/tools/bin")],
            "PATH under /tmp"
        );
        assert!(
            agent.hidden.contains(&"/h/.codex".into()),
            "another agent's state is hidden"
        );
        assert!(
            !agent.hidden.contains(&"/h/.claude".into()),
            "its own is not"
        );
        let check = sb.plan(&Confinement::new(Kind::Check, "/w"));
        assert!(!check.network, "check_network = off");
        assert!(
            check.hidden.contains(&"/h/.claude".into()) && check.hidden.contains(&"/h/.ssh".into())
        );
        assert!(
            sandbox(true)
                .plan(&Confinement::new(Kind::Check, "/w"))
                .network
        );
        let setup = sb.plan(&Confinement::new(Kind::Setup, "/w"));
        assert!(!setup.network, "a setup too");
        assert!(setup.writable.contains(&"/h/.cargo/registry".into()));
        assert!(
            !check.writable.contains(&"/h/.cargo/registry".into()),
            "checks only read caches"
        );
    }

    #[test]
    fn each_kind_reaches_its_own_hosts_and_its_allowlist() {
        use crate::process::egress::Reach;
        let sb = sandbox(false);
        let agent = Confinement::new(Kind::Agent, "/w").hosts(["127.0.0.1:4010".to_owned()]);
        let reach = sb.reach(&agent);
        assert!(reach.allows("127.0.0.1", 4010), "its model endpoint");
        assert!(reach.allows("mcp.example", 8443), "agents_allow");
        assert!(!reach.allows("evil.example", 443));
        let check = sb.reach(&Confinement::new(Kind::Check, "/w"));
        assert!(
            !check.allows("127.0.0.1", 4010),
            "a check gets nothing by default"
        );
        assert_eq!(
            sandbox(true).reach(&Confinement::new(Kind::Check, "/w")),
            Reach::Open
        );
        let mut off = sandbox(false);
        off.status.active = false;
        assert_eq!(off.reach(&agent), Reach::Open, "no sandbox, no namespace");
    }

    #[test]
    fn the_seal_watches_only_what_a_confined_process_could_write() {
        let sb = sandbox(true);
        let w = Path::new("/w");
        assert!(sb.could_write(Path::new("/w/src/x"), w));
        assert!(
            !sb.could_write(Path::new("/w/.git"), w),
            "the link is read-only"
        );
        assert!(!sb.could_write(Path::new("/h/.gitconfig"), w));
        assert!(!sb.could_write(Path::new("/r/.git/config"), w));
        assert!(!sb.could_write(Path::new("/r/.git/hooks/pre-push"), w));
        assert!(
            sb.could_write(Path::new("/h/.cache/sccache/x"), w),
            "[sandbox] writable"
        );
        assert!(sb.could_write(Path::new("/h/.claude/settings.json"), w));
        let mut off = sandbox(true);
        off.status.active = false;
        assert!(
            off.could_write(Path::new("/h/.gitconfig"), w),
            "without a sandbox, anything"
        );
    }

    #[test]
    fn the_status_line_says_what_confined_the_run_or_that_nothing_did() {
        assert!(sandbox(true)
            .status()
            .line()
            .starts_with("agents and checks ran in a bubblewrap 0.8.0 sandbox"));
        let none = Status {
            mode: Mode::Auto,
            active: false,
            mechanism: None,
            reason: Some("bubblewrap (`bwrap`) is not installed".into()),
            check_network: true,
            network: NetworkStatus::default(),
            hidden: vec![],
        };
        assert_eq!(
            none.line(),
            "agents and checks ran WITHOUT a sandbox: bubblewrap (`bwrap`) is not installed"
        );
        let off = Status {
            mode: Mode::Off,
            ..none
        };
        assert!(off.line().contains("mode = \"off\""));
    }

    #[test]
    fn paths_in_hide_expand_the_home_folder() {
        let h = Path::new("/home/u");
        assert_eq!(expand("~/.aws", Some(h)), PathBuf::from("/home/u/.aws"));
        assert_eq!(expand("/etc/secret", Some(h)), PathBuf::from("/etc/secret"));
        assert_eq!(expand("~", Some(h)), PathBuf::from("/home/u"));
    }

    #[test]
    fn an_agent_clis_state_follows_its_variable() {
        let h = Path::new("/h");
        assert_eq!(
            agent_state("claude", Some(h)).len(),
            2,
            "the folder and ~/.claude.json"
        );
        assert!(agent_state("command", Some(h)).is_empty());
    }
}
