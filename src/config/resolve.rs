//! A parsed configuration file resolved into a [`Config`], one function per section: every
//! default filled in, every rule checked, every message naming the key and what is allowed.

use super::agent::agent;
use super::file::{
    AgentFile, ChecksFile, ConfigFile, GitFile, GithubFile, LimitsFile, MarketplaceFile,
    SandboxFile, ScoringFile, ServerFile,
};
use super::{
    BotConfig, ChecksConfig, Config, ConfigError, FollowConfig, ForgeUrls, GitConfig, GithubConfig,
    LimitsConfig, MarketplaceConfig, SandboxConfig, TrackerKind,
};
use crate::ledger::valid_bot_id;
use crate::market::{tables, Dimension, Scores};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where the values come from, for messages.
struct Source<'a> {
    path: &'a Path,
}

impl Source<'_> {
    fn invalid(&self, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_owned(),
            key: key.to_owned(),
            message: message.into(),
        }
    }

    /// An integer key within `lo..=hi`, `default` when unset.
    fn int_in(
        &self,
        key: &str,
        value: Option<i64>,
        default: u32,
        lo: u32,
        hi: u32,
    ) -> Result<u32, ConfigError> {
        let v = value.unwrap_or(i64::from(default));
        if v < i64::from(lo) || v > i64::from(hi) {
            Err(self.invalid(key, format!("= {v} is out of range: allowed {lo} to {hi}")))
        } else {
            Ok(v as u32)
        }
    }
}

/// Builds the resolved configuration from a parsed file, checking every rule.
pub(super) fn resolve(file: ConfigFile, path: &Path) -> Result<Config, ConfigError> {
    let src = Source { path };
    let max_iterations = src.int_in("max_iterations", file.max_iterations, 15, 1, 1000)?;
    let m = file.marketplace.unwrap_or_default();
    let (base_budget_per_bot, weight_min, weight_max) = marketplace(&src, &m)?;
    let scoring_weights = weights(&src, file.scoring)?;
    let agents = agents(&src, file.defaults, file.arbiter, file.implementer)?;
    let (bots, num_bots) = bots(&src, file.bots, &m, &agents.defaults_file, &agents.defaults)?;
    let checks = checks(&src, file.checks)?;
    let github = github(&src, file.github)?;
    let forges = ForgeUrls {
        gitlab: server_url(&src, "gitlab.url", file.gitlab)?,
        forgejo: server_url(&src, "forgejo.url", file.forgejo)?,
    };
    let concurrency = src.int_in("marketplace.concurrency", m.concurrency, 8, 1, 64)?;
    let limits = limits(&src, file.limits.unwrap_or_default())?;
    let git = git(&src, file.git.unwrap_or_default())?;
    Ok(Config {
        tracker: file.tracker.unwrap_or(TrackerKind::Github),
        max_iterations,
        marketplace: MarketplaceConfig {
            num_bots,
            base_budget_per_bot,
            weight_min,
            weight_max,
            concurrency,
            audit_rate: audit_rate(&src, m.audit_rate)?,
            seats: seats(&src, &m, bots.len())?,
            seed: seed(&src, m.seed)?,
            max_cost_per_issue: dollars(&src, "max_cost_per_issue", m.max_cost_per_issue)?,
            value_per_merge: dollars(&src, "value_per_merge", m.value_per_merge)?,
        },
        scoring_weights,
        defaults: agents.defaults,
        bots,
        arbiter: agents.arbiter,
        judges: agents.judges,
        implementer: agents.implementer,
        max_attempts: agents.max_attempts,
        order_swaps: agents.order_swaps,
        checks,
        github,
        forges,
        limits,
        git,
        heartbeat_secs: src.int_in(
            "output.heartbeat_secs",
            file.output.and_then(|o| o.heartbeat_secs),
            30,
            1,
            3600,
        )?,
        sandbox: sandbox(&src, file.sandbox.unwrap_or_default())?,
        push_deadline_secs: src.int_in(
            "ledger.push_deadline_secs",
            file.ledger.and_then(|l| l.push_deadline_secs),
            300,
            1,
            86_400,
        )?,
        follow: FollowConfig {
            max_revisions: src.int_in(
                "follow.max_revisions",
                file.follow.as_ref().and_then(|f| f.max_revisions),
                3,
                0,
                20,
            )?,
            wait_for_ci_secs: src.int_in(
                "follow.wait_for_ci_secs",
                file.follow.as_ref().and_then(|f| f.wait_for_ci_secs),
                600,
                0,
                86_400,
            )?,
        },
        workspace_root: workspace_root(&src, file.workspace.and_then(|w| w.root))?,
    })
}

/// `[workspace] root`: an absolute path, or one under the home folder (`~/…`).
fn workspace_root(src: &Source<'_>, root: Option<String>) -> Result<Option<PathBuf>, ConfigError> {
    let Some(root) = root else {
        return Ok(None);
    };
    let home = crate::env::non_empty("HOME").map(PathBuf::from);
    let path = crate::process::sandbox::expand(&root, home.as_deref());
    if path.is_absolute() {
        Ok(Some(path))
    } else {
        Err(src.invalid(
            "workspace.root",
            format!("= {root:?} must be an absolute path or start with `~/`"),
        ))
    }
}

/// `[sandbox]`: the mode, the checks' network, more hidden paths.
fn sandbox(src: &Source<'_>, s: SandboxFile) -> Result<SandboxConfig, ConfigError> {
    let check_network = match s.check_network.as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => {
            return Err(src.invalid(
                "sandbox.check_network",
                format!("= {other:?} is not allowed: use \"on\" or \"off\""),
            ))
        }
    };
    let paths = |key: &str, list: Option<Vec<String>>| {
        let list = list.unwrap_or_default();
        match list
            .iter()
            .find(|p| !(p.starts_with('/') || p.starts_with("~/")))
        {
            Some(bad) => Err(src.invalid(
                key,
                format!("has {bad:?}: each path must be absolute or start with ~/"),
            )),
            None => Ok(list),
        }
    };
    let names = |key: &str, list: Option<Vec<String>>| {
        let list = list.unwrap_or_default();
        let valid = |n: &str| {
            let name = n
                .strip_suffix('*')
                .or_else(|| n.strip_prefix('*'))
                .unwrap_or(n);
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        match list.iter().find(|n| !valid(n)) {
            Some(bad) => Err(src.invalid(
                key,
                format!("has {bad:?}: each entry is a variable name, a prefix ending in `*` or a suffix after a leading `*`"),
            )),
            None => Ok(list),
        }
    };
    let network = network(
        src,
        s.network.unwrap_or_default(),
        s.check_network.as_deref(),
    )?;
    // `check_network = "off"` closes the checks whatever `[sandbox.network]` says.
    let check_network = check_network && network.checks.open;
    Ok(SandboxConfig {
        network,
        mode: s.mode.unwrap_or_default(),
        check_network,
        hide: paths("sandbox.hide", s.hide)?,
        writable: paths("sandbox.writable", s.writable)?,
        env: names("sandbox.env", s.env)?,
        agent_env: names("sandbox.agent_env", s.agent_env)?,
        setup_env: names("sandbox.setup_env", s.setup_env)?,
    })
}

/// `[sandbox.network]`: per kind `"allowlist"` (the default) or `"open"`, and more hosts. An
/// explicit `[sandbox] check_network = "on"` (the earlier setting) leaves the checks open
/// unless `[sandbox.network] checks` says otherwise.
fn network(
    src: &Source<'_>,
    n: super::file::NetworkFile,
    check_network: Option<&str>,
) -> Result<super::NetworkConfig, ConfigError> {
    let mode = |key: &str, v: Option<String>, default: bool| match v.as_deref() {
        None => Ok(default),
        Some("open") => Ok(true),
        Some("allowlist") => Ok(false),
        Some(other) => Err(src.invalid(
            key,
            format!("= {other:?} is not allowed: use \"allowlist\" or \"open\""),
        )),
    };
    let hosts = |key: &str, v: Option<Vec<String>>| {
        let v = v.unwrap_or_default();
        match v
            .iter()
            .find_map(|e| crate::process::egress::Rule::parse(e).err())
        {
            Some(why) => Err(src.invalid(key, format!("has {why}"))),
            None => Ok(v),
        }
    };
    Ok(super::NetworkConfig {
        agents: super::KindNetwork {
            open: mode("sandbox.network.agents", n.agents, false)?,
            allow: hosts("sandbox.network.agents_allow", n.agents_allow)?,
        },
        setup: super::KindNetwork {
            open: mode("sandbox.network.setup", n.setup, false)?,
            allow: hosts("sandbox.network.setup_allow", n.setup_allow)?,
        },
        checks: super::KindNetwork {
            open: mode(
                "sandbox.network.checks",
                n.checks,
                check_network == Some("on"),
            )?,
            allow: hosts("sandbox.network.checks_allow", n.checks_allow)?,
        },
    })
}

/// `[marketplace]`: the budget per bot and the weight bounds.
fn marketplace(src: &Source<'_>, m: &MarketplaceFile) -> Result<(u32, f64, f64), ConfigError> {
    let base = src.int_in(
        "marketplace.base_budget_per_bot",
        m.base_budget_per_bot,
        10,
        1,
        10_000,
    )?;
    let weight_min = m.weight_min.unwrap_or(0.05);
    let weight_max = m.weight_max.unwrap_or(0.60);
    if !(0.0..1.0).contains(&weight_min) {
        return Err(src.invalid(
            "marketplace.weight_min",
            format!("= {weight_min} is out of range: allowed 0 ≤ weight_min < 1"),
        ));
    }
    if !(weight_max > 0.0 && weight_max <= 1.0) {
        return Err(src.invalid(
            "marketplace.weight_max",
            format!("= {weight_max} is out of range: allowed 0 < weight_max ≤ 1"),
        ));
    }
    if weight_min > weight_max {
        return Err(src.invalid(
            "marketplace.weight_min",
            format!("= {weight_min} is larger than `marketplace.weight_max` = {weight_max}"),
        ));
    }
    Ok((base, weight_min, weight_max))
}

/// `[scoring.weights]`: known dimensions, each in [0, 1], summing to 1 with the defaults of
/// the unset ones.
fn weights(src: &Source<'_>, scoring: Option<ScoringFile>) -> Result<Scores, ConfigError> {
    let mut weights = tables().default_weights;
    let Some(given) = scoring.and_then(|s| s.weights) else {
        return Ok(weights);
    };
    for (key, v) in given {
        let name = format!("scoring.weights.{key}");
        let dimension = Dimension::from_key(&key).ok_or_else(|| {
            src.invalid(
                &name,
                format!(
                    "is not a scoring dimension (expected one of: {})",
                    Dimension::key_list()
                ),
            )
        })?;
        if !(0.0..=1.0).contains(&v) {
            return Err(src.invalid(&name, format!("= {v} is out of range: allowed 0 to 1")));
        }
        weights.set(dimension, v);
    }
    let sum = weights.sum();
    if (sum - 1.0).abs() > 1e-6 {
        return Err(src.invalid(
            "scoring.weights",
            format!(
                "must sum to 1.0, but they sum to {sum:.6} (unset weights keep their defaults)"
            ),
        ));
    }
    Ok(weights)
}

/// The role sections, resolved.
struct Agents {
    defaults_file: AgentFile,
    defaults: super::AgentConfig,
    arbiter: super::AgentConfig,
    judges: Vec<super::AgentConfig>,
    implementer: super::AgentConfig,
    max_attempts: u32,
    order_swaps: u32,
}

/// `[defaults]`, `[arbiter]` with its judges, `[implementer]`: each role inherits from
/// `[defaults]`, each judge from `[arbiter]` (itself inheriting from `[defaults]`).
fn agents(
    src: &Source<'_>,
    defaults: Option<AgentFile>,
    arbiter: Option<AgentFile>,
    implementer: Option<AgentFile>,
) -> Result<Agents, ConfigError> {
    let defaults_file = defaults.unwrap_or_default();
    only_bots_have_ids(src, "defaults", &defaults_file)?;
    let defaults = agent(&defaults_file, None, "defaults", src.path)?;
    if defaults_file.judges.is_some() {
        return Err(src.invalid("defaults.judges", "is only allowed in [arbiter]"));
    }
    only_implementer_has_max_attempts(src, "defaults", &defaults_file)?;
    let (arbiter, judges, order_swaps) =
        arbiter_and_judges(src, arbiter.unwrap_or_default(), &defaults_file)?;
    let (implementer, max_attempts) =
        implementer_section(src, implementer.unwrap_or_default(), &defaults_file)?;
    Ok(Agents {
        defaults_file,
        defaults,
        arbiter,
        judges,
        implementer,
        max_attempts,
        order_swaps,
    })
}

/// `[arbiter]` under `[defaults]`, then each of its judges under it: the arbiter, the judges
/// (at most 9) and `order_swaps`.
fn arbiter_and_judges(
    src: &Source<'_>,
    mut arbiter_file: AgentFile,
    defaults_file: &AgentFile,
) -> Result<(super::AgentConfig, Vec<super::AgentConfig>, u32), ConfigError> {
    let judge_files = arbiter_file.judges.take().unwrap_or_default();
    let order_swaps = src.int_in(
        "arbiter.order_swaps",
        arbiter_file.order_swaps.take(),
        1,
        0,
        1,
    )?;
    only_bots_have_ids(src, "arbiter", &arbiter_file)?;
    only_implementer_has_max_attempts(src, "arbiter", &arbiter_file)?;
    let arbiter = agent(&arbiter_file, Some(defaults_file), "arbiter", src.path)?;
    let judge_parent = super::agent::inherit(&arbiter_file, defaults_file);
    let mut judges = Vec::new();
    for (i, j) in judge_files.iter().enumerate() {
        let section = format!("arbiter.judges[{i}]");
        if j.judges.is_some() {
            return Err(src.invalid(&format!("{section}.judges"), "cannot be nested"));
        }
        only_bots_have_ids(src, &section, j)?;
        only_implementer_has_max_attempts(src, &section, j)?;
        judges.push(agent(j, Some(&judge_parent), &section, src.path)?);
    }
    if judges.len() > 9 {
        return Err(src.invalid(
            "arbiter.judges",
            format!("lists {} judges; at most 9 are allowed", judges.len()),
        ));
    }
    Ok((arbiter, judges, order_swaps))
}

/// `[implementer]` under `[defaults]`, and its `max_attempts`.
fn implementer_section(
    src: &Source<'_>,
    implementer_file: AgentFile,
    defaults_file: &AgentFile,
) -> Result<(super::AgentConfig, u32), ConfigError> {
    if implementer_file.judges.is_some() {
        return Err(src.invalid("implementer.judges", "is only allowed in [arbiter]"));
    }
    if implementer_file.order_swaps.is_some() {
        return Err(src.invalid("implementer.order_swaps", "is only allowed in [arbiter]"));
    }
    let max_attempts = src.int_in(
        "implementer.max_attempts",
        implementer_file.max_attempts,
        3,
        1,
        100,
    )?;
    only_bots_have_ids(src, "implementer", &implementer_file)?;
    let implementer = agent(
        &implementer_file,
        Some(defaults_file),
        "implementer",
        src.path,
    )?;
    Ok((implementer, max_attempts))
}

/// Refuses an `id` outside `[[bots]]`.
fn only_bots_have_ids(src: &Source<'_>, section: &str, f: &AgentFile) -> Result<(), ConfigError> {
    if f.id.is_some() {
        Err(src.invalid(&format!("{section}.id"), "is only allowed in [[bots]]"))
    } else {
        Ok(())
    }
}

/// `[marketplace] audit_rate`: a share, 0 to 1.
fn audit_rate(src: &Source<'_>, value: Option<f64>) -> Result<f64, ConfigError> {
    let v = value.unwrap_or(0.0);
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(src.invalid(
            "marketplace.audit_rate",
            format!("= {v} is out of range: allowed 0 (never audit) to 1 (audit every round)"),
        ))
    }
}

/// `[marketplace] seats`: 1 to the number of bots; unset seats every bot.
fn seats(src: &Source<'_>, m: &MarketplaceFile, bots: usize) -> Result<Option<u32>, ConfigError> {
    let Some(k) = m.seats else {
        return Ok(None);
    };
    if k < 1 || k > bots as i64 {
        return Err(src.invalid(
            "marketplace.seats",
            format!(
                "= {k} is out of range: allowed 1 to the {bots} configured bot(s) (unset: every bot proposes)"
            ),
        ));
    }
    Ok(Some(k as u32))
}

/// `[marketplace] seed`: a non-negative integer.
fn seed(src: &Source<'_>, value: Option<i64>) -> Result<Option<u64>, ConfigError> {
    match value {
        Some(v) if v < 0 => Err(src.invalid(
            "marketplace.seed",
            format!("= {v} is out of range: allowed 0 to {}", i64::MAX),
        )),
        v => Ok(v.map(|v| v as u64)),
    }
}

/// `[marketplace] max_cost_per_issue` and `value_per_merge`: a positive number of US dollars.
fn dollars(src: &Source<'_>, key: &str, value: Option<f64>) -> Result<Option<f64>, ConfigError> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(src.invalid(
            &format!("marketplace.{key}"),
            format!("= {v} is out of range: allowed a positive number of US dollars"),
        )),
        v => Ok(v),
    }
}

/// `max_attempts` belongs to `[implementer]` and `order_swaps` to `[arbiter]` alone.
fn only_implementer_has_max_attempts(
    src: &Source<'_>,
    section: &str,
    f: &AgentFile,
) -> Result<(), ConfigError> {
    if f.order_swaps.is_some() && section != "arbiter" {
        return Err(src.invalid(
            &format!("{section}.order_swaps"),
            "is only allowed in [arbiter]",
        ));
    }
    if f.max_attempts.is_some() {
        Err(src.invalid(
            &format!("{section}.max_attempts"),
            "is only allowed in [implementer]",
        ))
    } else {
        Ok(())
    }
}

/// `[[bots]]`, else `num_bots` bots `smart_bot_1…N` on `[defaults]`. Returns the bots and
/// their number.
fn bots(
    src: &Source<'_>,
    list: Option<Vec<AgentFile>>,
    m: &MarketplaceFile,
    defaults_file: &AgentFile,
    defaults: &super::AgentConfig,
) -> Result<(Vec<BotConfig>, u32), ConfigError> {
    let list = match list {
        None => {
            let n = src.int_in("marketplace.num_bots", m.num_bots, 3, 1, 64)?;
            let bots = (1..=n)
                .map(|i| BotConfig {
                    id: format!("smart_bot_{i}"),
                    agent: defaults.clone(),
                })
                .collect();
            return Ok((bots, n));
        }
        Some(list) if list.is_empty() => {
            return Err(src.invalid("bots", "is empty; list at least one bot or remove it"))
        }
        Some(list) => list,
    };
    if let Some(n) = m.num_bots {
        if n != list.len() as i64 {
            return Err(src.invalid(
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
        let id = b
            .id
            .clone()
            .ok_or_else(|| src.invalid(&format!("{section}.id"), "is required for every bot"))?;
        if !valid_bot_id(&id) {
            return Err(src.invalid(
                &format!("{section}.id"),
                format!("= {id:?} is not a valid bot id: use 1 to 64 of a-z, 0-9, _ and -"),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(src.invalid(
                &format!("{section}.id"),
                format!("= {id:?} is used by two bots"),
            ));
        }
        if b.judges.is_some() {
            return Err(src.invalid(&format!("{section}.judges"), "is only allowed in [arbiter]"));
        }
        only_implementer_has_max_attempts(src, &section, b)?;
        let agent = agent(b, Some(defaults_file), &section, src.path)?;
        bots.push(BotConfig { id, agent });
    }
    if bots.len() > 64 {
        return Err(src.invalid(
            "bots",
            format!("lists {} bots; at most 64 are allowed", bots.len()),
        ));
    }
    let n = bots.len() as u32;
    Ok((bots, n))
}

/// `[checks]`: the timeout, named commands, the coverage command.
fn checks(src: &Source<'_>, file: Option<ChecksFile>) -> Result<ChecksConfig, ConfigError> {
    let mut checks = ChecksConfig::default();
    let Some(c) = file else {
        return Ok(checks);
    };
    if let Some(r) = c.require_test {
        checks.require_test = r;
    }
    if let Some(setup) = c.setup {
        if setup.trim().is_empty() {
            return Err(src.invalid("checks.setup", "is an empty command"));
        }
        checks.setup = Some(setup);
    }
    if let Some(t) = c.timeout_secs {
        if !(1..=86_400).contains(&t) {
            return Err(src.invalid(
                "checks.timeout_secs",
                format!("= {t} is out of range: allowed 1 to 86400"),
            ));
        }
        checks.timeout_secs = t as u64;
    }
    for (name, command) in c.commands {
        let key = format!("checks.{name}");
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(src.invalid(&key, "is not a valid check name: use a-z, 0-9, _ and -"));
        }
        if command.trim().is_empty() {
            return Err(src.invalid(&key, "is an empty command"));
        }
        checks.commands.insert(name, command);
    }
    if let Some(cov) = c.coverage {
        match cov.command {
            Some(cmd) if cmd.trim().is_empty() => {
                return Err(src.invalid("checks.coverage.command", "is an empty command"))
            }
            other => checks.coverage_command = other,
        }
    }
    Ok(checks)
}

/// `[github]`: the ready label.
fn github(src: &Source<'_>, file: Option<GithubFile>) -> Result<GithubConfig, ConfigError> {
    let file = file.unwrap_or_default();
    let stale_after_hours = file.stale_after_hours.unwrap_or(6);
    if !(1..=8760).contains(&stale_after_hours) {
        return Err(src.invalid(
            "github.stale_after_hours",
            format!("= {stale_after_hours} is out of range: allowed 1 to 8760"),
        ));
    }
    let ready_label = file.ready_label.unwrap_or_else(|| "ready".to_owned());
    if ready_label.trim().is_empty() || ready_label.len() > 50 {
        return Err(src.invalid(
            "github.ready_label",
            "must be a label name of 1 to 50 characters",
        ));
    }
    Ok(GithubConfig {
        ready_label,
        stale_after_hours: stale_after_hours as u64,
    })
}

/// `[gitlab] url` / `[forgejo] url`: an http(s) address with a host, no trailing `/`.
fn server_url(
    src: &Source<'_>,
    key: &str,
    file: Option<ServerFile>,
) -> Result<Option<String>, ConfigError> {
    let Some(url) = file.and_then(|f| f.url) else {
        return Ok(None);
    };
    let url = url.trim().trim_end_matches('/').to_owned();
    let ok = url.split_once("://").is_some_and(|(scheme, rest)| {
        matches!(scheme, "http" | "https") && !rest.is_empty() && !rest.contains(['?', '#', ' '])
    });
    if !ok {
        return Err(src.invalid(
            key,
            format!("= \"{url}\" must be the server's address, e.g. \"https://git.example.com\""),
        ));
    }
    Ok(Some(url))
}

/// `[limits]`: the run's cost and token caps.
fn limits(src: &Source<'_>, l: LimitsFile) -> Result<LimitsConfig, ConfigError> {
    if let Some(c) = l.max_cost_usd {
        if !(c.is_finite() && c > 0.0) {
            return Err(src.invalid(
                "limits.max_cost_usd",
                format!("= {c} must be a positive number of US dollars"),
            ));
        }
    }
    if let Some(t) = l.max_tokens {
        if t < 1 {
            return Err(src.invalid("limits.max_tokens", format!("= {t} must be at least 1")));
        }
    }
    Ok(LimitsConfig {
        max_cost_usd: l.max_cost_usd,
        max_tokens: l.max_tokens.map(|t| t as u64),
    })
}

/// `[git]`: the author of ralph's commits, the base branch, the remote.
fn git(src: &Source<'_>, g: GitFile) -> Result<GitConfig, ConfigError> {
    let author = g
        .author
        .unwrap_or_else(|| "ralph <ralph@localhost>".to_owned());
    let (author_name, author_email) = parse_author(&author).ok_or_else(|| {
        src.invalid(
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
            return Err(src.invalid("git.base", format!("= {base:?} is not a branch name")));
        }
    }
    let remote = g.remote.unwrap_or_else(|| "origin".to_owned());
    if !valid_ref(&remote) {
        return Err(src.invalid("git.remote", format!("= {remote:?} is not a remote name")));
    }
    Ok(GitConfig {
        author_name,
        author_email,
        base: g.base,
        remote,
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
