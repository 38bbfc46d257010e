//! The on-disk shapes of the configuration: `.ralph/config.toml` (strict: unknown keys are
//! errors that name the key) and the prototype's `.ralph/config.json` (lenient: unknown keys
//! are ignored with a warning, since the prototype may have written keys ralph never used).

use super::{BackendKind, ConfigError, TrackerKind};
use crate::market::Dimension;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigFile {
    pub tracker: Option<TrackerKind>,
    pub max_iterations: Option<i64>,
    pub marketplace: Option<MarketplaceFile>,
    pub scoring: Option<ScoringFile>,
    pub defaults: Option<AgentFile>,
    pub bots: Option<Vec<AgentFile>>,
    pub arbiter: Option<AgentFile>,
    pub implementer: Option<AgentFile>,
    pub checks: Option<ChecksFile>,
    pub github: Option<GithubFile>,
    pub gitlab: Option<ServerFile>,
    pub forgejo: Option<ServerFile>,
    pub limits: Option<LimitsFile>,
    pub git: Option<GitFile>,
    pub output: Option<OutputFile>,
    pub sandbox: Option<SandboxFile>,
    pub ledger: Option<LedgerFile>,
    pub follow: Option<FollowFile>,
    pub workspace: Option<WorkspaceFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkspaceFile {
    pub root: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FollowFile {
    pub max_revisions: Option<i64>,
    pub wait_for_ci_secs: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LedgerFile {
    pub push_deadline_secs: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SandboxFile {
    pub mode: Option<crate::process::sandbox::Mode>,
    pub check_network: Option<String>,
    pub hide: Option<Vec<String>>,
    pub writable: Option<Vec<String>>,
    pub env: Option<Vec<String>>,
    pub agent_env: Option<Vec<String>>,
    pub setup_env: Option<Vec<String>>,
    pub network: Option<NetworkFile>,
}

/// `[sandbox.network]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NetworkFile {
    pub agents: Option<String>,
    pub setup: Option<String>,
    pub checks: Option<String>,
    pub agents_allow: Option<Vec<String>>,
    pub setup_allow: Option<Vec<String>>,
    pub checks_allow: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct OutputFile {
    pub heartbeat_secs: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GitFile {
    pub author: Option<String>,
    pub base: Option<String>,
    pub remote: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsFile {
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MarketplaceFile {
    pub num_bots: Option<i64>,
    pub base_budget_per_bot: Option<i64>,
    pub weight_min: Option<f64>,
    pub weight_max: Option<f64>,
    pub concurrency: Option<i64>,
    pub audit_rate: Option<f64>,
    pub seats: Option<i64>,
    pub seed: Option<i64>,
    pub max_cost_per_issue: Option<f64>,
    pub value_per_merge: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScoringFile {
    /// Dimension key → weight; the keys are checked against the six dimensions when the
    /// configuration is resolved.
    pub weights: Option<BTreeMap<String, f64>>,
}

/// A bot (`[[bots]]`, which needs `id`) or a role section (`[defaults]`, `[arbiter]`,
/// `[implementer]`, which must not have one).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentFile {
    pub id: Option<String>,
    pub backend: Option<BackendKind>,
    pub model: Option<String>,
    pub command: Option<Vec<String>>,
    pub base_url: Option<String>,
    pub timeout_secs: Option<i64>,
    pub dir: Option<PathBuf>,
    pub api_key_env: Option<String>,
    pub max_tokens: Option<i64>,
    pub temperature: Option<f64>,
    /// claude / codex: arguments appended to ralph's.
    pub args: Option<Vec<String>>,
    /// Prices per million tokens, for backends that report no cost.
    pub price: Option<PriceFile>,
    /// `[arbiter]` only: several judges whose median is taken.
    pub judges: Option<Vec<AgentFile>>,
    /// `[implementer]` only: attempts per round at most.
    pub max_attempts: Option<i64>,
    /// `[arbiter]` only: extra orders each judge reads the proposals in (0 or 1).
    pub order_swaps: Option<i64>,
}

/// `price = { input_per_mtok, output_per_mtok, cached_input_per_mtok }`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PriceFile {
    pub input_per_mtok: Option<f64>,
    pub output_per_mtok: Option<f64>,
    pub cached_input_per_mtok: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ChecksFile {
    pub coverage: Option<CoverageFile>,
    pub timeout_secs: Option<i64>,
    pub require_test: Option<bool>,
    pub setup: Option<String>,
    #[serde(flatten)]
    pub commands: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CoverageFile {
    pub command: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GithubFile {
    pub ready_label: Option<String>,
    pub stale_after_hours: Option<i64>,
}

/// `[gitlab]` and `[forgejo]`: where the server is.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ServerFile {
    pub url: Option<String>,
}

/// Parses `config.toml` text.
pub(super) fn parse_toml(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })
}

/// Translates the prototype's `config.json` into the TOML shape. Its keys: `num_bots`,
/// `base_budget_per_bot`, `scoring_weights{…}`, `weight_constraints{min,max}`.
pub(super) fn parse_legacy_json(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        key: key.to_owned(),
        message,
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let object = value
        .as_object()
        .ok_or_else(|| invalid("(top level)", "must be a JSON object".into()))?;
    let int = |key: &str, v: &serde_json::Value| {
        v.as_i64()
            .ok_or_else(|| invalid(key, format!("must be an integer, found {v}")))
    };
    let float = |key: &str, v: &serde_json::Value| {
        v.as_f64()
            .ok_or_else(|| invalid(key, format!("must be a number, found {v}")))
    };
    let mut file = ConfigFile::default();
    let mut market = MarketplaceFile::default();
    for (key, v) in object {
        match key.as_str() {
            "num_bots" => market.num_bots = Some(int(key, v)?),
            "base_budget_per_bot" => market.base_budget_per_bot = Some(int(key, v)?),
            "weight_constraints" => {
                let o = v
                    .as_object()
                    .ok_or_else(|| invalid(key, "must be an object {min, max}".into()))?;
                for (k, v) in o {
                    let name = format!("weight_constraints.{k}");
                    match k.as_str() {
                        "min" => market.weight_min = Some(float(&name, v)?),
                        "max" => market.weight_max = Some(float(&name, v)?),
                        _ => tracing::warn!("{}: ignoring unknown key `{name}`", path.display()),
                    }
                }
            }
            "scoring_weights" => {
                let o = v
                    .as_object()
                    .ok_or_else(|| invalid(key, "must be an object of weights".into()))?;
                let mut w = BTreeMap::new();
                for (k, v) in o {
                    let name = format!("scoring_weights.{k}");
                    if Dimension::from_key(k).is_none() {
                        return Err(invalid(
                            &name,
                            format!(
                                "is not a scoring dimension (expected one of: {})",
                                Dimension::key_list()
                            ),
                        ));
                    }
                    w.insert(k.clone(), float(&name, v)?);
                }
                file.scoring = Some(ScoringFile { weights: Some(w) });
            }
            _ => tracing::warn!("{}: ignoring unknown key `{key}`", path.display()),
        }
    }
    file.marketplace = Some(market);
    Ok(file)
}
