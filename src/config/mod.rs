//! Configuration (docs/specification.md §3): `.ralph/config.toml`, else the prototype's
//! `.ralph/config.json`, else the defaults — parsed strictly, validated with messages that name the
//! key and what is allowed, and resolved into one [`Config`] with every default filled in. The
//! file's shapes are in `file`, the resolution one function per section in `resolve`, and the agent
//! sections' inheritance and checks in `agent`.

mod agent;
pub mod edit;
mod file;
mod resolve;

use crate::fsutil::{read_regular_text, Unreadable};
use crate::ledger::FoldParams;
use crate::market::Scores;
use file::ConfigFile;
use resolve::resolve;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The largest configuration file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The configuration `ralph init` writes: the defaults, documented.
pub const DEFAULT_TOML: &str = include_str!("default.toml");

/// Where issues live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TrackerKind {
    /// GitHub issues through the REST API
    Github,
    /// GitLab issues and merge requests through the REST API v4 (gitlab.com or self-hosted)
    Gitlab,
    /// Forgejo, Gitea or Codeberg issues and pull requests through the API v1
    Forgejo,
    /// Markdown files in `.ralph/issues/`
    Local,
}

/// How a bot or role talks to a model (docs/specification.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Opencode,
    Aider,
    Command,
    Anthropic,
    Openai,
    Replay,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Claude => "claude",
            BackendKind::Codex => "codex",
            BackendKind::Gemini => "gemini",
            BackendKind::Qwen => "qwen",
            BackendKind::Opencode => "opencode",
            BackendKind::Aider => "aider",
            BackendKind::Command => "command",
            BackendKind::Anthropic => "anthropic",
            BackendKind::Openai => "openai",
            BackendKind::Replay => "replay",
        }
    }
}

/// One agent's settings, after inheritance from `[defaults]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentConfig {
    pub backend: BackendKind,
    pub model: Option<String>,
    /// Program and arguments for `backend = "command"`.
    pub command: Vec<String>,
    /// API base URL for `anthropic` / `openai`, and the model's address for `gemini`, `qwen`,
    /// `opencode` and `aider`.
    pub base_url: Option<String>,
    pub timeout_secs: u64,
    /// Recorded responses for `backend = "replay"`.
    pub dir: Option<PathBuf>,
    /// Environment variable holding the API key (HTTP backends).
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// The agent CLIs: arguments appended to ralph's.
    pub args: Vec<String>,
    /// What the model costs, for backends that report no cost.
    pub price: Option<Price>,
}

/// An agent's prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Cached input tokens; the input price when unset.
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    /// The cost of a call's tokens at these prices (`cached` are counted among `input`).
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let fresh = input - cached;
        (fresh as f64 * self.input_per_mtok
            + cached as f64 * self.cached_input_per_mtok.unwrap_or(self.input_per_mtok)
            + output as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// A competing bot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BotConfig {
    pub id: String,
    pub agent: AgentConfig,
}

/// Marketplace sizing and weight bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MarketplaceConfig {
    pub num_bots: u32,
    pub base_budget_per_bot: u32,
    pub weight_min: f64,
    pub weight_max: f64,
    /// How many bots are asked at once.
    pub concurrency: u32,
    /// The share of rounds in which the runner-up is implemented too, to measure selection
    /// (0 to 1; 0 never audits).
    pub audit_rate: f64,
    /// How many of the bots propose in a round, drawn from the ledger; `None`: every bot.
    pub seats: Option<u32>,
    /// The seed of the seats' draw (`--seed` overrides it); `None`: a fresh one per run.
    pub seed: Option<u64>,
    /// US dollars the proposals of one issue may cost, all its rounds together: the seats of
    /// a round fit in what is left.
    pub max_cost_per_issue: Option<f64>,
    /// What a merged pull request is worth, in US dollars: the seats are priced against it.
    /// `None`: `scoring/seating.toml`'s `value_per_merge`.
    pub value_per_merge: Option<f64>,
}

/// Caps on one `ralph compete` run: when one is reached the run stops cleanly, keeping its
/// work (docs/specification.md §4 accounting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LimitsConfig {
    /// Stop once the known cost of the run's model calls reaches this many US dollars.
    pub max_cost_usd: Option<f64>,
    /// Stop once the run's model calls have used this many tokens (input + output).
    pub max_tokens: Option<u64>,
}

/// Check commands that override auto-detection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChecksConfig {
    /// Check name → shell command.
    pub commands: BTreeMap<String, String>,
    pub coverage_command: Option<String>,
    /// How long one check (or the coverage command) may run.
    pub timeout_secs: u64,
    /// An attempt passes only if a test check ran and passed.
    pub require_test: bool,
    /// Makes a worktree's environment (run when it is created and when a manifest changes).
    pub setup: Option<String>,
}

impl Default for ChecksConfig {
    fn default() -> ChecksConfig {
        ChecksConfig {
            commands: BTreeMap::new(),
            coverage_command: None,
            timeout_secs: 1800,
            require_test: true,
            setup: None,
        }
    }
}

/// `[sandbox]`: how agents, checks and setup commands are confined.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SandboxConfig {
    pub mode: crate::process::sandbox::Mode,
    /// Checks (and their baseline) may reach the network.
    pub check_network: bool,
    /// More paths no agent or check may read (`~/` is the home folder).
    pub hide: Vec<String>,
    /// Paths every agent, check and setup command may also write (a tool's cache).
    pub writable: Vec<String>,
    /// Variables of ralph's environment every agent, check and setup command also gets
    /// (names, or prefixes ending in `*`), beyond the allowlist.
    pub env: Vec<String>,
    /// The same, for agents only.
    pub agent_env: Vec<String>,
    /// The same, for setup commands only (a private registry's token).
    pub setup_env: Vec<String>,
    /// `[sandbox.network]`: where each kind of process may connect.
    pub network: NetworkConfig,
}

pub use crate::process::egress::{KindNetwork, NetworkConfig};

impl SandboxConfig {
    /// The environment allowlist these settings make.
    pub fn env_policy(&self) -> crate::process::environment::Policy {
        crate::process::environment::Policy {
            every: self.env.clone(),
            agents: self.agent_env.clone(),
            setup: self.setup_env.clone(),
        }
    }
}

/// GitHub workflow settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GithubConfig {
    pub ready_label: String,
    /// An issue `in-progress` for longer than this is listed as stale by `ralph queue`.
    pub stale_after_hours: u64,
}

/// Where the self-hosted forges are (`[gitlab] url`, `[forgejo] url`): the server's address,
/// which the environment overrides (docs/configuration.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForgeUrls {
    pub gitlab: Option<String>,
    pub forgejo: Option<String>,
}

/// How ralph uses git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitConfig {
    /// The author and committer of ralph's commits.
    pub author_name: String,
    pub author_email: String,
    /// The branch competitions start from; `None`: the remote's default branch.
    pub base: Option<String>,
    /// The remote branches are pushed to.
    pub remote: String,
}

/// The resolved configuration: every value known, every rule checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    pub tracker: TrackerKind,
    pub max_iterations: u32,
    pub marketplace: MarketplaceConfig,
    pub scoring_weights: Scores,
    pub defaults: AgentConfig,
    pub bots: Vec<BotConfig>,
    pub arbiter: AgentConfig,
    /// Judges for the `judge` role; empty means the arbiter judges alone.
    pub judges: Vec<AgentConfig>,
    pub implementer: AgentConfig,
    /// `[implementer] max_attempts`: implementation attempts per round at most, within the
    /// winner's budget.
    pub max_attempts: u32,
    /// `[arbiter] order_swaps`: how many extra orders each judge reads the proposals in (0 or
    /// 1: also the reverse order, the two readings averaged).
    pub order_swaps: u32,
    pub checks: ChecksConfig,
    pub github: GithubConfig,
    /// `[gitlab] url` and `[forgejo] url`.
    pub forges: ForgeUrls,
    pub limits: LimitsConfig,
    pub git: GitConfig,
    /// `[output] heartbeat_secs`: off a terminal, a progress line per running agent or check
    /// this often.
    pub heartbeat_secs: u32,
    pub sandbox: SandboxConfig,
    /// `[ledger] push_deadline_secs`: how long `ralph events push` keeps trying.
    pub push_deadline_secs: u32,
    pub follow: FollowConfig,
    /// `[workspace] root`: where ralph's checkouts go (absolute, `~` expanded); `None`: the
    /// default (see `workspace::checkouts_dir`).
    pub workspace_root: Option<PathBuf>,
}

/// `[follow]`: `ralph follow`'s limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FollowConfig {
    /// Revision rounds per pull request before it is escalated.
    pub max_revisions: u32,
    /// How long `follow` waits for a pull request head's pending checks.
    pub wait_for_ci_secs: u32,
}

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    Toml(PathBuf),
    PrototypeJson(PathBuf),
    Defaults,
}

/// A configuration that cannot be used. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration file {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("invalid configuration file {}:\n{message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("invalid configuration in {}: `{key}` {message}", path.display())]
    Invalid {
        path: PathBuf,
        key: String,
        message: String,
    },
}

impl ConfigError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            ConfigError::Read { path, .. } => format!(
                "check the permissions of {}, or move it away to use the defaults",
                path.display()
            ),
            ConfigError::Parse { path, .. } | ConfigError::Invalid { path, .. } => format!(
                "fix {} (every key and its default is listed in docs/configuration.md of ralph's source)",
                path.display()
            ),
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        resolve(ConfigFile::default(), Path::new("(defaults)"))
            .expect("the built-in defaults are valid")
    }
}

impl Config {
    /// Loads the configuration of the repository whose `.ralph` directory is `ralph_dir`.
    pub fn load(ralph_dir: &Path) -> Result<(Config, ConfigSource), ConfigError> {
        let toml_path = ralph_dir.join("config.toml");
        let json_path = ralph_dir.join("config.json");
        if let Some(text) = read_if_exists(&toml_path)? {
            let config = Config::from_toml(&toml_path, &text)?;
            return Ok((config, ConfigSource::Toml(toml_path)));
        }
        if let Some(text) = read_if_exists(&json_path)? {
            let parsed = file::parse_legacy_json(&json_path, &text)?;
            let config = resolve(parsed, &json_path)?;
            return Ok((config, ConfigSource::PrototypeJson(json_path)));
        }
        Ok((Config::default(), ConfigSource::Defaults))
    }

    /// Loads the configuration file `path` given on the command line (`ralph replay --config`),
    /// with the checks and messages of [`Config::load`]: a `.json` file is read as the
    /// prototype's `config.json`, anything else as TOML. A missing file is a `Read` error.
    pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
        let text = read_if_exists(path)?.ok_or_else(|| ConfigError::Read {
            path: path.to_owned(),
            source: io::Error::new(io::ErrorKind::NotFound, "no such file"),
        })?;
        if path.extension().is_some_and(|e| e == "json") {
            resolve(file::parse_legacy_json(path, &text)?, path)
        } else {
            Config::from_toml(path, &text)
        }
    }

    /// Parses and validates TOML text; `path` is used in messages.
    pub fn from_toml(path: &Path, text: &str) -> Result<Config, ConfigError> {
        resolve(file::parse_toml(path, text)?, path)
    }

    /// The ids of the competing bots, in configuration order.
    pub fn bot_ids(&self) -> Vec<String> {
        self.bots.iter().map(|b| b.id.clone()).collect()
    }

    /// The iteration budget pool: `num_bots × base_budget_per_bot`.
    pub fn budget_pool(&self) -> u32 {
        self.marketplace.num_bots * self.marketplace.base_budget_per_bot
    }

    /// What the ledger fold needs.
    pub fn fold_params(&self) -> FoldParams {
        FoldParams {
            bots: self.bot_ids(),
            weight_min: self.marketplace.weight_min,
            weight_max: self.marketplace.weight_max,
            pool: self.budget_pool(),
            seats: self.marketplace.seats,
        }
    }
}

fn read_if_exists(path: &Path) -> Result<Option<String>, ConfigError> {
    match read_regular_text(path, MAX_CONFIG_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(Unreadable::Missing) => Ok(None),
        Err(Unreadable::Io(source)) => Err(ConfigError::Read {
            path: path.to_owned(),
            source,
        }),
        Err(e) => Err(ConfigError::Read {
            path: path.to_owned(),
            source: io::Error::other(e.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests;
