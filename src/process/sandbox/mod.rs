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

mod host;
mod places;

use host::probe;
pub use host::{protect_self, self_protected};
pub use places::{
    agent_state, named_caches, prepare_agent_state, tool_root, AGENT_STATE, CACHES, CREDENTIALS,
    UNSET,
};
use places::{shortest, shown_tools, HOST_HIDDEN};

use super::bwrap::{self, under_replaced, Plan};
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
    /// The repository this ralph process works on — its checkout, and its common git dir —:
    /// the configuration is shown scrubbed to every confined process, and both are read-only
    /// (the objects its checkouts borrow, even where the sandbox mounts its own `/tmp` over
    /// them).
    repository: Option<(PathBuf, PathBuf)>,
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

/// Removes the installed sandbox's own folder (what hidden files are shown as): the sandbox is
/// held by a static, which nothing drops, so the binary removes it before it exits.
pub fn remove_own_files() {
    if let Some(dir) = current().as_ref().and_then(|s| s.scrub_dir.clone()) {
        let _ = std::fs::remove_dir_all(dir.path());
    }
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
        // The CLIs whose own state a call may use (a private copy of it): the others run with
        // a fresh home and their state is hidden with the credentials.
        let mut stateful: Vec<&str> = AGENT_STATE.iter().map(|(cli, ..)| *cli).collect();
        stateful.dedup();
        let agent_state: Vec<PathBuf> = stateful
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
                // The empty file hidden files are shown as.
                .filter(|d| std::fs::write(d.path().join("empty"), "").is_ok())
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
            forwarder: program.as_ref().and_then(|_| own_executable()),
            repository: None,
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

    /// The same sandbox for the repository checked out at `root` whose common git dir is
    /// `common`: where the checkouts' objects come from, and whose configuration may hold the
    /// job's token.
    pub fn with_repository(
        mut self,
        root: impl Into<PathBuf>,
        common: impl Into<PathBuf>,
    ) -> Sandbox {
        self.repository = Some((root.into(), common.into()));
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
        let forwarder = self.forwarder.clone().or_else(own_executable)?;
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
        // sandbox mounts its own `/tmp` over it; so is the git dir a checkout borrows its
        // objects from.
        let checkout = match &git {
            bwrap::GitLink::Worktree { admin } => bwrap::main_checkout(admin),
            _ => None,
        };
        let common = match &git {
            bwrap::GitLink::Worktree { admin } => bwrap::common_dir(admin),
            bwrap::GitLink::Repository => Some(c.workdir.join(".git")),
            bwrap::GitLink::Own | bwrap::GitLink::None => None,
        };
        let repository: Vec<PathBuf> = self
            .repository
            .iter()
            .flat_map(|(root, common)| [root.clone(), common.clone()])
            .collect();
        let mut commons: Vec<PathBuf> = common
            .into_iter()
            .chain(self.repository.iter().map(|(_, common)| common.clone()))
            .collect();
        commons.dedup();
        Plan {
            private: c.private.clone(),
            replaced: self.scrubbed_configs(&commons),
            workdir: c.workdir.clone(),
            workdir_writable: c.workdir_writable,
            git,
            readable: shortest(
                c.readable
                    .iter()
                    .chain(&self.path_dirs)
                    .chain(&checkout)
                    .chain(&repository)
                    .cloned()
                    .collect(),
            ),
            writable,
            hidden,
            network: self.reach(c) == super::egress::Reach::Open,
            egress: None,
            empty: self.scrub_dir.as_ref().map(|d| d.path().join("empty")),
        }
    }
}

/// ralph's own executable, the egress forwarder inside the sandbox, found when the sandbox is
/// made: a binary replaced while ralph runs (an upgrade) leaves the path pointing at the new
/// one. Linux names a running binary that was replaced `<path> (deleted)`: the program now at
/// that path is taken.
fn own_executable() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.to_string_lossy();
    match name.strip_suffix(" (deleted)") {
        Some(path) if Path::new(path).is_file() => Some(PathBuf::from(path)),
        _ => Some(exe),
    }
}

#[cfg(test)]
mod tests;
