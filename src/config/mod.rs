//! Configuration (SPEC §3): `.ralph/config.toml`, else the prototype's `.ralph/config.json`,
//! else the defaults — parsed strictly, validated with messages that name the key and what is
//! allowed, and resolved into one [`Config`] with every default filled in.

mod file;

use crate::ledger::{valid_bot_id, FoldParams};
use crate::market::{tables, Dimension, Scores};
use file::{AgentFile, ConfigFile};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

/// The configuration `ralph init` writes: the defaults, documented.
pub const DEFAULT_TOML: &str = include_str!("default.toml");

/// Where issues live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TrackerKind {
    /// GitHub issues through the REST API
    Github,
    /// Markdown files in `.ralph/issues/`
    Local,
}

/// How a bot or role talks to a model (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Claude,
    Codex,
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
    /// API base URL for `anthropic` / `openai`.
    pub base_url: Option<String>,
    pub timeout_secs: u64,
    /// Recorded responses for `backend = "replay"`.
    pub dir: Option<PathBuf>,
    /// Environment variable holding the API key (HTTP backends).
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
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
}

/// Caps on one `ralph compete` run: when one is reached the run stops cleanly, keeping its
/// work (SPEC §4 accounting).
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
}

impl Default for ChecksConfig {
    fn default() -> ChecksConfig {
        ChecksConfig {
            commands: BTreeMap::new(),
            coverage_command: None,
            timeout_secs: 1800,
        }
    }
}

/// GitHub workflow settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GithubConfig {
    pub ready_label: String,
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
    pub checks: ChecksConfig,
    pub github: GithubConfig,
    pub limits: LimitsConfig,
    pub git: GitConfig,
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
                "fix {} (every key and its default is listed in the README's \"Configuration\" section)",
                path.display()
            ),
        }
    }
}

const DEFAULT_TIMEOUT_SECS: u64 = 900;

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
        }
    }
}

fn read_if_exists(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Builds the resolved configuration from a parsed file, checking every rule.
fn resolve(file: ConfigFile, path: &Path) -> Result<Config, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        key: key.to_owned(),
        message,
    };
    let int_in = |key: &str, value: Option<i64>, default: u32, lo: u32, hi: u32| {
        let v = value.unwrap_or(i64::from(default));
        if v < i64::from(lo) || v > i64::from(hi) {
            Err(invalid(
                key,
                format!("= {v} is out of range: allowed {lo} to {hi}"),
            ))
        } else {
            Ok(v as u32)
        }
    };

    let max_iterations = int_in("max_iterations", file.max_iterations, 15, 1, 1000)?;

    let m = file.marketplace.unwrap_or_default();
    let base_budget_per_bot = int_in(
        "marketplace.base_budget_per_bot",
        m.base_budget_per_bot,
        10,
        1,
        10_000,
    )?;
    let weight_min = m.weight_min.unwrap_or(0.05);
    let weight_max = m.weight_max.unwrap_or(0.60);
    if !(0.0..1.0).contains(&weight_min) {
        return Err(invalid(
            "marketplace.weight_min",
            format!("= {weight_min} is out of range: allowed 0 ≤ weight_min < 1"),
        ));
    }
    if !(weight_max > 0.0 && weight_max <= 1.0) {
        return Err(invalid(
            "marketplace.weight_max",
            format!("= {weight_max} is out of range: allowed 0 < weight_max ≤ 1"),
        ));
    }
    if weight_min > weight_max {
        return Err(invalid(
            "marketplace.weight_min",
            format!("= {weight_min} is larger than `marketplace.weight_max` = {weight_max}"),
        ));
    }

    let mut weights = tables().default_weights;
    if let Some(given) = file.scoring.and_then(|s| s.weights) {
        for (key, v) in given {
            let name = format!("scoring.weights.{key}");
            let dimension = Dimension::from_key(&key).ok_or_else(|| {
                invalid(
                    &name,
                    format!(
                        "is not a scoring dimension (expected one of: {})",
                        Dimension::key_list()
                    ),
                )
            })?;
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(
                    &name,
                    format!("= {v} is out of range: allowed 0 to 1"),
                ));
            }
            weights.set(dimension, v);
        }
        let sum = weights.sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(invalid(
                "scoring.weights",
                format!(
                    "must sum to 1.0, but they sum to {sum:.6} (unset weights keep their defaults)"
                ),
            ));
        }
    }

    let defaults_file = file.defaults.unwrap_or_default();
    if defaults_file.id.is_some() {
        return Err(invalid("defaults.id", "is only allowed in [[bots]]".into()));
    }
    let defaults = agent(&defaults_file, None, "defaults", path)?;
    if defaults_file.judges.is_some() {
        return Err(invalid(
            "defaults.judges",
            "is only allowed in [arbiter]".into(),
        ));
    }
    let role = |section: &str, f: Option<AgentFile>| -> Result<AgentConfig, ConfigError> {
        let f = f.unwrap_or_default();
        if f.id.is_some() {
            return Err(invalid(
                &format!("{section}.id"),
                "is only allowed in [[bots]]".into(),
            ));
        }
        agent(&f, Some(&defaults_file), section, path)
    };
    let mut arbiter_file = file.arbiter.unwrap_or_default();
    let judge_files = arbiter_file.judges.take().unwrap_or_default();
    let arbiter = role("arbiter", Some(arbiter_file.clone()))?;
    let mut judges = Vec::new();
    for (i, j) in judge_files.into_iter().enumerate() {
        let section = format!("arbiter.judges[{i}]");
        if j.judges.is_some() {
            return Err(invalid(
                &format!("{section}.judges"),
                "cannot be nested".into(),
            ));
        }
        if j.id.is_some() {
            return Err(invalid(
                &format!("{section}.id"),
                "is only allowed in [[bots]]".into(),
            ));
        }
        // A judge inherits from [arbiter] as the arbiter inherits from [defaults].
        let parent = merge_parent(&arbiter_file, &defaults_file);
        judges.push(agent(&j, Some(&parent), &section, path)?);
    }
    if judges.len() > 9 {
        return Err(invalid(
            "arbiter.judges",
            format!("lists {} judges; at most 9 are allowed", judges.len()),
        ));
    }
    if file
        .implementer
        .as_ref()
        .is_some_and(|f| f.judges.is_some())
    {
        return Err(invalid(
            "implementer.judges",
            "is only allowed in [arbiter]".into(),
        ));
    }
    let implementer = role("implementer", file.implementer)?;

    let (bots, num_bots) = match file.bots {
        Some(list) if !list.is_empty() => {
            if let Some(n) = m.num_bots {
                if n != list.len() as i64 {
                    return Err(invalid(
                        "marketplace.num_bots",
                        format!(
                            "= {n} but {} [[bots]] are listed; remove num_bots or make them agree",
                            list.len()
                        ),
                    ));
                }
            }
            let mut seen = BTreeSet::new();
            let mut bots = Vec::new();
            for (i, b) in list.iter().enumerate() {
                let section = format!("bots[{i}]");
                let id = b.id.clone().ok_or_else(|| {
                    invalid(&format!("{section}.id"), "is required for every bot".into())
                })?;
                if !valid_bot_id(&id) {
                    return Err(invalid(
                        &format!("{section}.id"),
                        format!("= {id:?} is not a valid bot id: use 1 to 64 of a-z, 0-9, _ and -"),
                    ));
                }
                if !seen.insert(id.clone()) {
                    return Err(invalid(
                        &format!("{section}.id"),
                        format!("= {id:?} is used by two bots"),
                    ));
                }
                if b.judges.is_some() {
                    return Err(invalid(
                        &format!("{section}.judges"),
                        "is only allowed in [arbiter]".into(),
                    ));
                }
                let agent = agent(b, Some(&defaults_file), &section, path)?;
                bots.push(BotConfig { id, agent });
            }
            if bots.len() > 64 {
                return Err(invalid(
                    "bots",
                    format!("lists {} bots; at most 64 are allowed", bots.len()),
                ));
            }
            let n = bots.len() as u32;
            (bots, n)
        }
        Some(_) => {
            return Err(invalid(
                "bots",
                "is empty; list at least one bot or remove it".into(),
            ))
        }
        None => {
            let n = int_in("marketplace.num_bots", m.num_bots, 3, 1, 64)?;
            let bots = (1..=n)
                .map(|i| BotConfig {
                    id: format!("smart_bot_{i}"),
                    agent: defaults.clone(),
                })
                .collect();
            (bots, n)
        }
    };

    let mut checks = ChecksConfig::default();
    if let Some(c) = file.checks {
        if let Some(t) = c.timeout_secs {
            if !(1..=86_400).contains(&t) {
                return Err(invalid(
                    "checks.timeout_secs",
                    format!("= {t} is out of range: allowed 1 to 86400"),
                ));
            }
            checks.timeout_secs = t as u64;
        }
        for (name, command) in c.commands {
            let key = format!("checks.{name}");
            let name_ok = !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                });
            if !name_ok {
                return Err(invalid(
                    &key,
                    "is not a valid check name: use a-z, 0-9, _ and -".into(),
                ));
            }
            if command.trim().is_empty() {
                return Err(invalid(&key, "is an empty command".into()));
            }
            checks.commands.insert(name, command);
        }
        if let Some(cov) = c.coverage {
            match cov.command {
                Some(cmd) if cmd.trim().is_empty() => {
                    return Err(invalid(
                        "checks.coverage.command",
                        "is an empty command".into(),
                    ))
                }
                other => checks.coverage_command = other,
            }
        }
    }

    let ready_label = file
        .github
        .and_then(|g| g.ready_label)
        .unwrap_or_else(|| "ready".to_owned());
    if ready_label.trim().is_empty() || ready_label.len() > 50 {
        return Err(invalid(
            "github.ready_label",
            "must be a label name of 1 to 50 characters".into(),
        ));
    }

    let concurrency = int_in("marketplace.concurrency", m.concurrency, 8, 1, 64)?;

    let l = file.limits.unwrap_or_default();
    if let Some(c) = l.max_cost_usd {
        if !(c.is_finite() && c > 0.0) {
            return Err(invalid(
                "limits.max_cost_usd",
                format!("= {c} must be a positive number of US dollars"),
            ));
        }
    }
    if let Some(t) = l.max_tokens {
        if t < 1 {
            return Err(invalid(
                "limits.max_tokens",
                format!("= {t} must be at least 1"),
            ));
        }
    }
    let limits = LimitsConfig {
        max_cost_usd: l.max_cost_usd,
        max_tokens: l.max_tokens.map(|t| t as u64),
    };

    let g = file.git.unwrap_or_default();
    let author = g
        .author
        .unwrap_or_else(|| "ralph <ralph@localhost>".to_owned());
    let (author_name, author_email) = parse_author(&author).ok_or_else(|| {
        invalid(
            "git.author",
            format!("= {author:?} must read `Name <email>`, e.g. \"ralph <ralph@example.com>\""),
        )
    })?;
    let valid_ref = |v: &str| {
        !v.is_empty()
            && !v.starts_with('-')
            && !v.contains("..")
            && !v.contains(|c: char| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
    };
    if let Some(base) = &g.base {
        if !valid_ref(base) {
            return Err(invalid(
                "git.base",
                format!("= {base:?} is not a branch name"),
            ));
        }
    }
    let remote = g.remote.unwrap_or_else(|| "origin".to_owned());
    if !valid_ref(&remote) {
        return Err(invalid(
            "git.remote",
            format!("= {remote:?} is not a remote name"),
        ));
    }
    let git = GitConfig {
        author_name,
        author_email,
        base: g.base,
        remote,
    };

    Ok(Config {
        tracker: file.tracker.unwrap_or(TrackerKind::Github),
        max_iterations,
        marketplace: MarketplaceConfig {
            num_bots,
            base_budget_per_bot,
            weight_min,
            weight_max,
            concurrency,
        },
        scoring_weights: weights,
        defaults,
        bots,
        arbiter,
        judges,
        implementer,
        checks,
        github: GithubConfig { ready_label },
        limits,
        git,
    })
}

/// `Name <email>` split in two; both parts non-empty.
fn parse_author(text: &str) -> Option<(String, String)> {
    let (name, rest) = text.split_once('<')?;
    let email = rest.strip_suffix('>')?.trim();
    let name = name.trim();
    (!name.is_empty() && email.contains('@') && !email.contains(['<', '>']))
        .then(|| (name.to_owned(), email.to_owned()))
}

/// The section a judge inherits from: `[arbiter]`'s own keys over `[defaults]`.
fn merge_parent(arbiter: &AgentFile, defaults: &AgentFile) -> AgentFile {
    let same = arbiter.backend.is_none() || arbiter.backend == defaults.backend;
    let inherit = |own: &Option<String>, d: &Option<String>| {
        own.clone().or_else(|| if same { d.clone() } else { None })
    };
    AgentFile {
        id: None,
        backend: arbiter.backend.or(defaults.backend),
        model: inherit(&arbiter.model, &defaults.model),
        command: arbiter.command.clone().or_else(|| {
            if same {
                defaults.command.clone()
            } else {
                None
            }
        }),
        base_url: inherit(&arbiter.base_url, &defaults.base_url),
        timeout_secs: arbiter.timeout_secs.or(defaults.timeout_secs),
        dir: arbiter
            .dir
            .clone()
            .or_else(|| if same { defaults.dir.clone() } else { None }),
        api_key_env: inherit(&arbiter.api_key_env, &defaults.api_key_env),
        max_tokens: arbiter.max_tokens.or(defaults.max_tokens),
        temperature: arbiter.temperature.or(defaults.temperature),
        judges: None,
    }
}

/// Resolves one agent section. A section that names no backend inherits every key of
/// `[defaults]`; one that names the same backend as `[defaults]` inherits the keys it leaves
/// unset; one that names another backend inherits only the backend-neutral keys
/// (`timeout_secs`, `max_tokens`, `temperature`).
fn agent(
    f: &AgentFile,
    defaults: Option<&AgentFile>,
    section: &str,
    path: &Path,
) -> Result<AgentConfig, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        key: format!("{section}.{key}"),
        message,
    };
    let empty = AgentFile::default();
    let d = defaults.unwrap_or(&empty);
    let default_backend = d.backend.unwrap_or(BackendKind::Claude);
    let backend = f.backend.unwrap_or(default_backend);
    let same = backend == default_backend;
    let pick = |own: &Option<String>, inherited: &Option<String>| {
        own.clone()
            .or_else(|| if same { inherited.clone() } else { None })
    };
    let model = pick(&f.model, &d.model);
    let base_url = pick(&f.base_url, &d.base_url);
    let api_key_env = pick(&f.api_key_env, &d.api_key_env);
    let command = f
        .command
        .clone()
        .or_else(|| if same { d.command.clone() } else { None });
    let dir = f
        .dir
        .clone()
        .or_else(|| if same { d.dir.clone() } else { None });
    let timeout = f
        .timeout_secs
        .or(d.timeout_secs)
        .unwrap_or(DEFAULT_TIMEOUT_SECS as i64);
    let max_tokens = f.max_tokens.or(d.max_tokens);
    let temperature = f.temperature.or(d.temperature);

    if !(1..=86_400).contains(&timeout) {
        return Err(invalid(
            "timeout_secs",
            format!("= {timeout} is out of range: allowed 1 to 86400"),
        ));
    }
    if let Some(t) = max_tokens {
        if !(1..=10_000_000).contains(&t) {
            return Err(invalid(
                "max_tokens",
                format!("= {t} is out of range: allowed 1 to 10000000"),
            ));
        }
    }
    if let Some(t) = temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(invalid(
                "temperature",
                format!("= {t} is out of range: allowed 0 to 2"),
            ));
        }
    }
    if model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(invalid(
            "model",
            "is empty; remove it to use the backend's default model".into(),
        ));
    }
    if let Some(url) = &base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "base_url",
                format!("= {url:?} must start with http:// or https://"),
            ));
        }
    }
    if let Some(var) = &api_key_env {
        if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(invalid(
                "api_key_env",
                format!("= {var:?} is not an environment variable name"),
            ));
        }
    }
    let only_for = |key: &str, present: bool, allowed: &[BackendKind]| {
        if present && !allowed.contains(&backend) {
            let names: Vec<_> = allowed
                .iter()
                .map(|b| format!("\"{}\"", b.as_str()))
                .collect();
            Err(invalid(
                key,
                format!(
                    "is only used with backend = {}, not \"{}\"",
                    names.join(" or "),
                    backend.as_str()
                ),
            ))
        } else {
            Ok(())
        }
    };
    only_for("command", f.command.is_some(), &[BackendKind::Command])?;
    only_for("dir", f.dir.is_some(), &[BackendKind::Replay])?;
    only_for(
        "base_url",
        f.base_url.is_some(),
        &[BackendKind::Anthropic, BackendKind::Openai],
    )?;
    only_for(
        "api_key_env",
        f.api_key_env.is_some(),
        &[BackendKind::Anthropic, BackendKind::Openai],
    )?;
    let command = command.unwrap_or_default();
    if backend == BackendKind::Command && command.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(invalid("command", "is required with backend = \"command\": the program and its arguments, e.g. [\"./bot.sh\"]".into()));
    }
    if backend == BackendKind::Replay && dir.is_none() {
        return Err(invalid(
            "dir",
            "is required with backend = \"replay\": the directory of recorded responses".into(),
        ));
    }
    Ok(AgentConfig {
        backend,
        model,
        command,
        base_url,
        timeout_secs: timeout as u64,
        dir,
        api_key_env,
        max_tokens: max_tokens.map(|t| t as u32),
        temperature,
    })
}

#[cfg(test)]
mod tests;
