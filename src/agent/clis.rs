//! What ralph knows of each agent CLI it runs as a backend, in one table ([`CLIS`]): the
//! backend, the program and the variable that names another, the package and registry it comes
//! from — and, through each CLI's [`AgentCli`], its own variables and the hosts it reaches.
//! Everything that asks about "the agent CLIs" (the Action's install step through `ralph
//! config`, `ralph doctor`, the sandbox's list of state folders, whether an agent can start)
//! asks here.

use super::cli::{AgentCli, ModelSettings};
use super::{aider, claude, codex, gemini, opencode, qwen, Backend};
use crate::config::{AgentConfig, BackendKind};
use std::path::Path;
use std::sync::Arc;

/// Where a CLI's package comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    Npm,
    Pypi,
}

/// One agent CLI.
#[derive(Debug, Clone, Copy)]
pub struct CliInfo {
    pub kind: BackendKind,
    /// Its name in messages: `Gemini CLI`.
    pub product: &'static str,
    /// The program ralph starts unless told otherwise.
    pub program: &'static str,
    /// The variable naming another program.
    pub bin_var: &'static str,
    pub package: &'static str,
    pub registry: Registry,
    /// Without a `model` it would not run unattended: Aider starts a browser login and waits,
    /// OpenCode falls back on its own service and retries without end.
    pub needs_model: bool,
}

impl CliInfo {
    /// How a user installs it.
    pub fn install_hint(&self) -> String {
        match self.registry {
            Registry::Npm => format!("npm install -g {}", self.package),
            Registry::Pypi => format!("pipx install {}", self.package),
        }
    }
}

/// Every agent CLI ralph runs.
pub const CLIS: [CliInfo; 6] = [
    CliInfo {
        kind: BackendKind::Claude,
        product: "the Claude Code CLI",
        program: "claude",
        needs_model: false,
        bin_var: crate::env::RALPH_CLAUDE_BIN,
        package: "@anthropic-ai/claude-code",
        registry: Registry::Npm,
    },
    CliInfo {
        kind: BackendKind::Codex,
        product: "the Codex CLI",
        program: "codex",
        needs_model: false,
        bin_var: crate::env::RALPH_CODEX_BIN,
        package: "@openai/codex",
        registry: Registry::Npm,
    },
    CliInfo {
        kind: BackendKind::Gemini,
        product: "Gemini CLI",
        program: "gemini",
        needs_model: false,
        bin_var: "RALPH_GEMINI_BIN",
        package: "@google/gemini-cli",
        registry: Registry::Npm,
    },
    CliInfo {
        kind: BackendKind::Qwen,
        product: "Qwen Code",
        program: "qwen",
        needs_model: false,
        bin_var: "RALPH_QWEN_BIN",
        package: "@qwen-code/qwen-code",
        registry: Registry::Npm,
    },
    CliInfo {
        kind: BackendKind::Opencode,
        product: "OpenCode",
        program: "opencode",
        needs_model: true,
        bin_var: "RALPH_OPENCODE_BIN",
        package: "opencode-ai",
        registry: Registry::Npm,
    },
    CliInfo {
        kind: BackendKind::Aider,
        product: "Aider",
        program: "aider",
        needs_model: true,
        bin_var: "RALPH_AIDER_BIN",
        package: "aider-chat",
        registry: Registry::Pypi,
    },
];

/// The agent CLI of backend `kind`, when it is one.
pub fn info(kind: BackendKind) -> Option<&'static CliInfo> {
    CLIS.iter().find(|c| c.kind == kind)
}

/// The program an agent of the CLI `info` runs: the variable's, else the CLI's own name on
/// `PATH`.
fn default_program(info: &CliInfo) -> String {
    crate::env::get(info.bin_var).unwrap_or_else(|| info.program.into())
}

/// The program an agent configured so runs: the first element of its `command`, else the
/// CLI's default.
pub fn program_of(config: &AgentConfig) -> Option<String> {
    let info = info(config.backend)?;
    Some(
        config
            .command
            .first()
            .cloned()
            .unwrap_or_else(|| default_program(info)),
    )
}

/// What an agent's configuration tells its CLI.
pub fn model_settings(config: &AgentConfig) -> ModelSettings {
    ModelSettings {
        model: config.model.clone(),
        base_url: config.base_url.clone(),
        key_var: config.api_key_env.clone(),
    }
}

/// Calls `f` with the [`AgentCli`] of backend `kind`.
macro_rules! with_cli {
    ($kind:expr, $cli:ident => $body:expr, $none:expr) => {
        match $kind {
            BackendKind::Claude => {
                type $cli = claude::Claude;
                $body
            }
            BackendKind::Codex => {
                type $cli = codex::Codex;
                $body
            }
            BackendKind::Gemini => {
                type $cli = gemini::Gemini;
                $body
            }
            BackendKind::Qwen => {
                type $cli = qwen::Qwen;
                $body
            }
            BackendKind::Opencode => {
                type $cli = opencode::OpenCode;
                $body
            }
            BackendKind::Aider => {
                type $cli = aider::Aider;
                $body
            }
            _ => $none,
        }
    };
}

/// The backend of an agent on an agent CLI.
pub fn build(kind: BackendKind, config: &AgentConfig) -> Arc<dyn Backend> {
    let program = program_of(config).unwrap_or_default();
    with_cli!(
        kind,
        C => Arc::new(
            super::cli::CliBackend::<C>::new(program, &config.command, &config.args, config.model.clone())
                .reaching(config.base_url.clone(), config.api_key_env.clone()),
        ) as Arc<dyn Backend>,
        unreachable!("{} is not an agent CLI", kind.as_str())
    )
}

/// Whether the CLI of an agent configured so is installed (`resolve` makes a relative program
/// absolute); `Err` says how to install it.
pub fn can_start(
    kind: BackendKind,
    config: &AgentConfig,
    resolve: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    let (Some(info), Some(p)) = (info(kind), program_of(config)) else {
        return Err(format!("{} is not an agent CLI", kind.as_str()));
    };
    if info.needs_model && config.model.is_none() {
        return Err(format!(
            "{} needs `model` (it would wait for a login or a service ralph cannot answer): set it for this agent in .ralph/config.toml",
            info.product
        ));
    }
    if let Some(var) = &config.api_key_env {
        if crate::env::non_empty(var).is_none() {
            return Err(format!(
                "`api_key_env` names {var}, which is not set here: set it to the key of {}'s model",
                info.product
            ));
        }
    }
    if crate::process::on_path(&resolve(&p)) {
        Ok(())
    } else {
        Err(format!(
            "`{p}` ({}) is not installed: `{}`, or set {} to the program",
            info.product,
            info.install_hint(),
            info.bin_var
        ))
    }
}

/// The variables of ralph's environment the agent CLI `cli` (`claude`, `gemini`…) needs
/// (names and globs): its own settings and API key, which no other agent, check or setup gets.
pub fn cli_env(cli: &str, home: Option<&Path>) -> Vec<String> {
    CLIS.iter()
        .find(|c| c.program == cli)
        .map(|c| with_cli!(c.kind, C => C::own_env(home), Vec::new()))
        .unwrap_or_default()
}

/// Where the agent CLI `cli` calls its model when nothing else is configured: the sandbox
/// lets it reach only that, and `[sandbox.network] agents_allow`.
pub fn cli_endpoints(cli: &str, home: Option<&Path>) -> Vec<String> {
    CLIS.iter()
        .find(|c| c.program == cli)
        .map(|c| with_cli!(c.kind, C => C::endpoints(home, &ModelSettings::default()), Vec::new()))
        .unwrap_or_default()
}

/// Where an agent configured so calls its model (its `base_url`, its model's vendor), for an
/// agent CLI; none for another backend.
pub fn agent_endpoints(config: &AgentConfig, home: Option<&Path>) -> Vec<String> {
    let m = model_settings(config);
    with_cli!(config.backend, C => C::endpoints(home, &m), Vec::new())
}

/// An agent CLI a configuration runs: which backend, the program ralph starts, the package
/// that provides it and its registry, and the agents that use it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NeededCli {
    pub backend: &'static str,
    pub program: String,
    pub package: &'static str,
    pub registry: Registry,
    pub agents: Vec<String>,
}

/// The agent CLIs `config` runs (for the Action, which installs them): one entry per backend
/// and program, in the order the agents come (bots, arbiter, judges, implementer).
pub fn needed_clis(config: &crate::config::Config) -> Vec<NeededCli> {
    let mut out: Vec<NeededCli> = Vec::new();
    for (name, agent) in agents_of(config) {
        let (Some(info), Some(program)) = (info(agent.backend), program_of(agent)) else {
            continue;
        };
        let backend = info.kind.as_str();
        match out
            .iter_mut()
            .find(|c| c.backend == backend && c.program == program)
        {
            Some(c) => c.agents.push(name),
            None => out.push(NeededCli {
                backend,
                program,
                package: info.package,
                registry: info.registry,
                agents: vec![name],
            }),
        }
    }
    out
}

/// What was found of an agent CLI on this machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    /// Where the program is; `None`: not installed.
    pub path: Option<String>,
    /// What `program --version` printed (its first line), or why it could not say.
    pub version: Result<String, String>,
    /// The hosts its agents may reach under the egress policy (their models' and
    /// `[sandbox.network] agents_allow`'s).
    pub reach: Vec<String>,
}

/// Looks for the program of `cli` (relative to `root` when it is a relative path) and asks it
/// its version, with a throwaway `HOME` so that the question leaves nothing behind.
pub async fn find(cli: &NeededCli, config: &crate::config::Config, root: &Path) -> Found {
    let program = if cli.program.contains('/') && !Path::new(&cli.program).is_absolute() {
        root.join(&cli.program).to_string_lossy().into_owned()
    } else {
        cli.program.clone()
    };
    let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
    let mut reach: Vec<String> = agents_of(config)
        .filter(|(name, a)| cli.agents.contains(name) && info(a.backend).is_some())
        .flat_map(|(_, a)| agent_endpoints(a, home.as_deref()))
        .chain(config.sandbox.network.agents.allow.iter().cloned())
        .collect();
    reach.sort();
    reach.dedup();
    let Some(path) = crate::process::find_on_path(&program) else {
        return Found {
            path: None,
            version: Err("not installed".into()),
            reach,
        };
    };
    let version = match tempfile::tempdir() {
        Ok(scratch) => {
            let mut cmd = crate::process::Cmd::new(&path)
                .arg("--version")
                .env("HOME", scratch.path())
                .current_dir(scratch.path())
                .timeout(std::time::Duration::from_secs(30));
            // Gemini CLI writes its project list even to say its version: nothing may move
            // its state back to the user's.
            for var in STATE_VARS {
                cmd = cmd.env_remove(var);
            }
            match crate::process::run(&cmd).await {
                Ok(out) if out.success() => Ok(out
                    .stdout
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_owned()),
                Ok(out) => Err(format!("`--version` failed: {}", out.tail(3))),
                Err(e) => Err(format!("`--version` could not run: {e}")),
            }
        }
        Err(e) => Err(format!("no scratch folder to ask its version in: {e}")),
    };
    Found {
        path: Some(path.display().to_string()),
        version,
        reach,
    }
}

/// The variables that move an agent CLI's state away from `HOME`.
const STATE_VARS: [&str; 8] = [
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
];

/// Every agent of a configuration, named as [`needed_clis`] names them.
fn agents_of(config: &crate::config::Config) -> impl Iterator<Item = (String, &AgentConfig)> + '_ {
    config
        .bots
        .iter()
        .map(|b| (b.id.clone(), &b.agent))
        .chain([("arbiter".to_owned(), &config.arbiter)])
        .chain(
            config
                .judges
                .iter()
                .enumerate()
                .map(|(i, j)| (format!("judge {}", i + 1), j)),
        )
        .chain([("implementer".to_owned(), &config.implementer)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_cannot_start_without_its_model_or_its_named_key() {
        let mut config = crate::fixtures::agent_config(BackendKind::Aider);
        config.command = vec!["/bin/sh".into()];
        let resolve = |p: &str| p.to_owned();
        let e = can_start(BackendKind::Aider, &config, &resolve).unwrap_err();
        assert!(e.starts_with("Aider needs `model`"), "{e}");
        config.model = Some("sonnet".into());
        config.api_key_env = Some("RALPH_TEST_UNSET_KEY_9".into());
        std::env::remove_var("RALPH_TEST_UNSET_KEY_9");
        let e = can_start(BackendKind::Aider, &config, &resolve).unwrap_err();
        assert!(
            e.contains("RALPH_TEST_UNSET_KEY_9, which is not set"),
            "{e}"
        );
        config.api_key_env = None;
        assert_eq!(can_start(BackendKind::Aider, &config, &resolve), Ok(()));
        config.command = vec!["/nonexistent/aider".into()];
        let e = can_start(BackendKind::Aider, &config, &resolve).unwrap_err();
        assert!(
            e.contains("`pipx install aider-chat`, or set RALPH_AIDER_BIN"),
            "{e}"
        );
    }

    #[test]
    fn every_cli_backend_has_one_entry_and_a_distinct_program() {
        let mut programs: Vec<&str> = CLIS.iter().map(|c| c.program).collect();
        programs.sort_unstable();
        programs.dedup();
        assert_eq!(programs.len(), CLIS.len());
        for c in &CLIS {
            assert_eq!(
                c.program,
                c.kind.as_str(),
                "the backend is named as its program"
            );
            assert!(
                !cli_env(c.program, None).is_empty(),
                "{} passes its key",
                c.program
            );
        }
        assert_eq!(info(BackendKind::Openai).map(|c| c.program), None);
        assert_eq!(
            info(BackendKind::Aider).unwrap().install_hint(),
            "pipx install aider-chat"
        );
    }
}
