//! The sandbox findings of `ralph doctor`: the mechanism `[sandbox]` would get here, and, when
//! it confines, what a confined process may write, what is hidden, the network it reaches, and
//! whether ralph's own process is closed to the user's other processes.

use super::{Findings, Status};
use crate::settings::Settings;

/// The sandbox `[sandbox]` asks for, as it would stand: the mechanism, what is writable,
/// hidden and reachable, and ralph's own process.
pub(super) async fn sandbox_checks(f: &mut Findings, settings: &Settings) {
    use crate::process::sandbox::{self, Mode, Sandbox};
    let s = &settings.config.sandbox;
    let mode = match Mode::effective(s.mode) {
        Ok(m) => m,
        Err(why) => {
            f.add("sandbox", "mechanism", Status::Fail, why);
            return;
        }
    };
    let found = Sandbox::detect(mode, s.check_network, &s.hide, &s.writable)
        .await
        .with_network(&s.network);
    let st = found.status();
    mechanism_finding(f, st);
    environment_finding(f, settings);
    config_credentials_finding(f, settings, st.active);
    if !st.active {
        return;
    }
    hidden_programs_finding(f, settings, &found);
    f.add(
        "sandbox",
        "writable",
        Status::Ok,
        writable_detail(&s.writable),
    );
    f.add(
        "sandbox",
        "hidden",
        Status::Ok,
        if st.hidden.is_empty() {
            "no credential file found to hide".to_owned()
        } else {
            st.hidden.join(", ")
        },
    );
    network_finding(f, settings, st);
    f.add(
        "sandbox",
        "ralph's process",
        if sandbox::self_protected() {
            Status::Ok
        } else {
            Status::Warn
        },
        if sandbox::self_protected() {
            "undumpable: its environment and memory are closed to the user's other processes"
        } else {
            "dumpable: its environment (the token) is readable by the user's other processes"
        }
        .into(),
    );
}

/// The sandbox's mechanism as found: what confines agents and checks, or that nothing does
/// (a failure when `[sandbox] mode = "required"`), with what to do.
fn mechanism_finding(f: &mut Findings, st: &crate::process::sandbox::Status) {
    use crate::process::sandbox::Mode;
    match (&st.mechanism, st.mode) {
        (Some(m), _) => f.add(
            "sandbox",
            "mechanism",
            Status::Ok,
            format!("{m} (mode {})", st.mode.as_str()),
        ),
        (None, Mode::Off) => {
            f.add(
                "sandbox",
                "mechanism",
                Status::Warn,
                "off: agents and checks run unconfined".into(),
            );
            f.hint("set `[sandbox] mode = \"auto\"` (or \"required\") in .ralph/config.toml");
        }
        (None, mode) => {
            f.add(
                "sandbox",
                "mechanism",
                if mode == Mode::Required {
                    Status::Fail
                } else {
                    Status::Warn
                },
                format!(
                    "none: {} (mode {})",
                    st.reason.as_deref().unwrap_or(""),
                    mode.as_str()
                ),
            );
            f.hint("install bubblewrap and check `bwrap --ro-bind / / true` works; see docs/security.md");
        }
    }
}

/// What a confined process may write: the fixed places, the setup's caches and
/// `[sandbox] writable` (`extra`).
fn writable_detail(extra: &[String]) -> String {
    let mut writable = String::from(
        "the checkout (with its own git directory; the repository stays read-only), a private /tmp; agents: a private copy of their CLI's state for each call (~/.claude, ~/.claude.json, ~/.codex are never written), or a fresh home of their own (Gemini CLI, Qwen Code, OpenCode, Aider: ~/.gemini, ~/.qwen, OpenCode's folders and ~/.aider are neither read nor written); setup on the base: ",
    );
    writable.push_str(
        &crate::process::sandbox::CACHES
            .map(|c| format!("~/{c}"))
            .join(", "),
    );
    let named = crate::process::sandbox::named_caches();
    if !named.is_empty() {
        let named: Vec<String> = named.iter().map(|p| p.display().to_string()).collect();
        writable.push_str(&format!(
            " and, as the environment names them, {}",
            named.join(", ")
        ));
    }
    writable.push_str("; setup after a change: only a private cache folder of the worktree's");
    if !extra.is_empty() {
        writable.push_str(&format!("; [sandbox] writable: {}", extra.join(", ")));
    }
    writable
}

/// What the environment allowlist drops from this environment for every agent, check and
/// setup command (names only, never values), sandbox or not.
fn environment_finding(f: &mut Findings, settings: &Settings) {
    let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
    let own: Vec<String> = crate::agent::CLIS
        .iter()
        .flat_map(|cli| crate::agent::cli_env(cli.program, home.as_deref()))
        .collect();
    let policy = settings.config.sandbox.env_policy();
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let total = names.len();
    let dropped = policy.dropped(&own, names);
    f.add(
        "sandbox",
        "environment",
        Status::Ok,
        if dropped.is_empty() {
            format!("all {total} variables pass the allowlist")
        } else {
            format!(
                "{} of {total} variables dropped for every agent, check and setup (`[sandbox] env` adds names): {}",
                dropped.len(),
                dropped.join(", ")
            )
        },
    );
}

/// A credential in a git configuration file agents and checks read (the job token
/// `actions/checkout` persists in `.git/config`): hidden by a scrubbed copy in the sandbox, a
/// refusal without one.
fn config_credentials_finding(f: &mut Findings, settings: &Settings, active: bool) {
    let git = settings.root.join(".git");
    let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
    let files =
        crate::process::gitconfig::files(git.is_dir().then_some(git.as_path()), home.as_deref());
    let found = crate::process::gitconfig::found_in(&files);
    if found.is_empty() {
        f.add(
            "sandbox",
            "git credentials",
            Status::Ok,
            "no credential in the repository's or your global git configuration".into(),
        );
        return;
    }
    let list = found
        .iter()
        .map(|(p, what)| format!("{} ({})", p.display(), what.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    let in_repo = found.iter().any(|(p, _)| p.starts_with(&git));
    let (status, detail) = if active {
        (
            Status::Warn,
            format!("{list}: agents and checks see a copy without it"),
        )
    } else if in_repo {
        (
            Status::Fail,
            format!("{list}: without a sandbox every agent and check reads it, so compete refuses"),
        )
    } else {
        (
            Status::Warn,
            format!("{list}: without a sandbox every agent and check can read it"),
        )
    };
    f.add("sandbox", "git credentials", status, detail);
    if in_repo {
        f.hint("check out with `persist-credentials: false` (actions/checkout), or `git config --unset-all http.<url>.extraheader`: ralph pushes with its own token");
    }
}

/// The checks' programs the sandbox would hide (under a credential folder or a `[sandbox]
/// hide` path): each named with where it is, as the check would fail.
fn hidden_programs_finding(
    f: &mut Findings,
    settings: &Settings,
    sandbox: &crate::process::sandbox::Sandbox,
) {
    use crate::process::{Confinement, Kind};
    let plan = crate::checks::detect(&settings.root, &settings.config.checks);
    let confinement = Confinement::new(Kind::Check, &settings.root);
    let hidden: Vec<String> = plan
        .checks
        .iter()
        .filter_map(|c| {
            let program = c.program.as_deref()?;
            let path = crate::process::find_on_path(program)?;
            let real = path.canonicalize().unwrap_or(path);
            let by = sandbox.hides(&real, &confinement)?;
            Some(format!(
                "`{program}` of `{}` is at {}, which the sandbox hides ({} is hidden)",
                c.name,
                real.display(),
                by.display()
            ))
        })
        .collect();
    if !hidden.is_empty() {
        f.add("sandbox", "programs", Status::Fail, hidden.join("; "));
        f.hint(
            "install them outside the hidden folders, or take the folder out of `[sandbox] hide`",
        );
    }
}

/// Each kind's network policy: the hosts its allowlist holds here, or that it is open.
fn network_finding(f: &mut Findings, settings: &Settings, st: &crate::process::sandbox::Status) {
    let n = &settings.config.sandbox.network;
    let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
    let list = |open: bool, own: Vec<String>, allow: &[String]| {
        if open {
            return "OPEN (any host)".to_owned();
        }
        let all: Vec<String> = own.into_iter().chain(allow.iter().cloned()).collect();
        if all.is_empty() {
            "nothing".to_owned()
        } else {
            all.join(", ")
        }
    };
    let c = &settings.config;
    let agents: std::collections::BTreeSet<String> = c
        .bots
        .iter()
        .map(|b| &b.agent)
        .chain([&c.arbiter, &c.implementer])
        .chain(&c.judges)
        .flat_map(|a| crate::agent::agent_endpoints(a, home.as_deref()))
        .collect();
    let agents: Vec<String> = agents.into_iter().collect();
    let registries = crate::checks::environment::registries(
        &crate::checks::project::Project::read(&settings.root),
    );
    let detail = format!(
        "agents: {}; setup: {}; checks and their baseline: {}",
        list(n.agents.open, agents, &n.agents.allow),
        list(n.setup.open, registries, &n.setup.allow),
        list(
            st.check_network || n.checks.open,
            Vec::new(),
            &n.checks.allow
        )
    );
    let open = st.network.open_kinds();
    f.add(
        "sandbox",
        "network",
        if open.is_empty() {
            Status::Ok
        } else {
            Status::Warn
        },
        detail,
    );
    if !open.is_empty() {
        f.hint(format!(
            "what runs as {} can send anything it reads anywhere: set [sandbox.network] to \"allowlist\" and name the hosts it needs",
            open.join(", ")
        ));
    }
}
