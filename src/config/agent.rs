//! One agent section (`[defaults]`, `[arbiter]`, its `judges`, `[implementer]`, a `[[bots]]`
//! entry) resolved into an [`AgentConfig`]: first what it inherits from its parent section — the
//! one rule, [`inherit`], used for `[defaults]` → every role and bot and for `[arbiter]` → its
//! judges — then every check of its values.

use super::file::{AgentFile, PriceFile};
use super::{AgentConfig, BackendKind, ConfigError};
use std::path::Path;

/// How long a call may take when no section says.
pub(super) const DEFAULT_TIMEOUT_SECS: u64 = 900;

/// The keys `own` inherits from `parent`. A section that names no backend inherits every key of
/// its parent; one that names the parent's backend inherits the keys it leaves unset; one that
/// names another backend inherits only the backend-neutral keys (`timeout_secs`, `max_tokens`,
/// `temperature`). A parent without a backend means `claude`. The result names its backend;
/// `id` stays the section's own; `judges`, `max_attempts` and `order_swaps` are never
/// inherited.
pub(super) fn inherit(own: &AgentFile, parent: &AgentFile) -> AgentFile {
    let parent_backend = parent.backend.unwrap_or(BackendKind::Claude);
    let backend = own.backend.unwrap_or(parent_backend);
    let same = backend == parent_backend;
    fn pick<T: Clone>(own: &Option<T>, parent: &Option<T>, same: bool) -> Option<T> {
        own.clone()
            .or_else(|| if same { parent.clone() } else { None })
    }
    AgentFile {
        id: own.id.clone(),
        backend: Some(backend),
        model: pick(&own.model, &parent.model, same),
        command: pick(&own.command, &parent.command, same),
        base_url: pick(&own.base_url, &parent.base_url, same),
        timeout_secs: own.timeout_secs.or(parent.timeout_secs),
        dir: pick(&own.dir, &parent.dir, same),
        api_key_env: pick(&own.api_key_env, &parent.api_key_env, same),
        max_tokens: own.max_tokens.or(parent.max_tokens),
        temperature: own.temperature.or(parent.temperature),
        args: pick(&own.args, &parent.args, same),
        price: pick(&own.price, &parent.price, same),
        judges: None,
        max_attempts: None,
        order_swaps: None,
    }
}

/// Resolves the section `own`, named `section` in messages, under `parent` (`None` for
/// `[defaults]` itself). Backend-specific keys are only allowed where the section itself names
/// a backend that uses them.
pub(super) fn agent(
    own: &AgentFile,
    parent: Option<&AgentFile>,
    section: &str,
    path: &Path,
) -> Result<AgentConfig, ConfigError> {
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        key: format!("{section}.{key}"),
        message,
    };
    let f = inherit(own, parent.unwrap_or(&AgentFile::default()));
    let backend = f.backend.unwrap_or(BackendKind::Claude);
    let timeout = check_values(&f, &invalid)?;
    check_backend_keys(own, backend, &invalid)?;
    let command = f.command.unwrap_or_default();
    if backend == BackendKind::Command && command.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(invalid("command", "is required with backend = \"command\": the program and its arguments, e.g. [\"./bot.sh\"]".into()));
    }
    if own.command.is_some() && command.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(invalid(
            "command",
            "is empty: name the program and its leading arguments, e.g. [\"npx\", \"-y\", \"@openai/codex\"]".into(),
        ));
    }
    let price = match f.price {
        None => None,
        Some(p) => Some(price(p, &invalid)?),
    };
    if backend == BackendKind::Replay && f.dir.is_none() {
        return Err(invalid(
            "dir",
            "is required with backend = \"replay\": the directory of recorded responses".into(),
        ));
    }
    Ok(AgentConfig {
        backend,
        model: f.model,
        command,
        base_url: f.base_url,
        timeout_secs: timeout as u64,
        dir: f.dir,
        api_key_env: f.api_key_env,
        max_tokens: f.max_tokens.map(|t| t as u32),
        temperature: f.temperature,
        args: f.args.unwrap_or_default(),
        price,
    })
}

/// The error of a key of the section being resolved: the key (without the section) and what is
/// wrong with its value.
type Invalid<'a> = dyn Fn(&str, String) -> ConfigError + 'a;

/// Checks the values of the inherited section `f` that stand on their own (the timeout, the
/// token and temperature ranges, the model, the base URL, the key variable) and returns the
/// timeout in seconds.
fn check_values(f: &AgentFile, invalid: &Invalid) -> Result<i64, ConfigError> {
    let timeout = f.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS as i64);
    if !(1..=86_400).contains(&timeout) {
        return Err(invalid(
            "timeout_secs",
            format!("= {timeout} is out of range: allowed 1 to 86400"),
        ));
    }
    if let Some(t) = f.max_tokens {
        if !(1..=10_000_000).contains(&t) {
            return Err(invalid(
                "max_tokens",
                format!("= {t} is out of range: allowed 1 to 10000000"),
            ));
        }
    }
    if let Some(t) = f.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(invalid(
                "temperature",
                format!("= {t} is out of range: allowed 0 to 2"),
            ));
        }
    }
    if f.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(invalid(
            "model",
            "is empty; remove it to use the backend's default model".into(),
        ));
    }
    if let Some(url) = &f.base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid(
                "base_url",
                format!("= {url:?} must start with http:// or https://"),
            ));
        }
    }
    if let Some(var) = &f.api_key_env {
        if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(invalid(
                "api_key_env",
                format!("= {var:?} is not an environment variable name"),
            ));
        }
    }
    Ok(timeout)
}

/// Refuses a backend-specific key the section `own` sets itself when its `backend` does not use
/// that key.
fn check_backend_keys(
    own: &AgentFile,
    backend: BackendKind,
    invalid: &Invalid,
) -> Result<(), ConfigError> {
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
    use BackendKind::*;
    const CLI: &[BackendKind] = &[Claude, Codex, Gemini, Qwen, Opencode, Aider];
    // The HTTP APIs, and the CLIs that take their model's address and key from ralph.
    const REACHED: &[BackendKind] = &[Anthropic, Openai, Gemini, Qwen, Opencode, Aider];
    let command = [&[Command][..], CLI].concat();
    only_for("command", own.command.is_some(), &command)?;
    only_for("args", own.args.is_some(), CLI)?;
    only_for("dir", own.dir.is_some(), &[Replay])?;
    only_for("base_url", own.base_url.is_some(), REACHED)?;
    only_for("api_key_env", own.api_key_env.is_some(), REACHED)?;
    Ok(())
}

/// The section's `price`, each value checked: US dollars per million tokens, 0 or more, with
/// both the input and the output price given.
fn price(p: PriceFile, invalid: &Invalid) -> Result<super::Price, ConfigError> {
    let each = [
        ("price.input_per_mtok", p.input_per_mtok),
        ("price.output_per_mtok", p.output_per_mtok),
        ("price.cached_input_per_mtok", p.cached_input_per_mtok),
    ];
    for (key, v) in each {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                return Err(invalid(
                    key,
                    format!("= {v} must be a number of US dollars per million tokens, 0 or more"),
                ));
            }
        }
    }
    match (p.input_per_mtok, p.output_per_mtok) {
        (Some(input_per_mtok), Some(output_per_mtok)) => Ok(super::Price {
            input_per_mtok,
            output_per_mtok,
            cached_input_per_mtok: p.cached_input_per_mtok,
        }),
        _ => Err(invalid(
            "price",
            "needs both input_per_mtok and output_per_mtok".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(backend: Option<BackendKind>, model: Option<&str>) -> AgentFile {
        AgentFile {
            backend,
            model: model.map(String::from),
            timeout_secs: Some(60),
            temperature: Some(0.5),
            ..AgentFile::default()
        }
    }

    #[test]
    fn the_same_backend_inherits_everything_another_only_the_neutral_keys() {
        let parent = section(Some(BackendKind::Openai), Some("gpt"));
        let same = inherit(&section(None, None), &parent);
        assert_eq!(same.backend, Some(BackendKind::Openai));
        assert_eq!(same.model.as_deref(), Some("gpt"));
        let named_same = inherit(&section(Some(BackendKind::Openai), None), &parent);
        assert_eq!(named_same.model.as_deref(), Some("gpt"));
        let other = inherit(
            &AgentFile {
                backend: Some(BackendKind::Claude),
                ..AgentFile::default()
            },
            &parent,
        );
        assert_eq!(
            other.model, None,
            "a model of another backend means nothing"
        );
        assert_eq!(
            (other.timeout_secs, other.temperature),
            (Some(60), Some(0.5))
        );
        // A parent without a backend is claude: naming claude is naming the same backend.
        let claude = inherit(
            &section(Some(BackendKind::Claude), None),
            &section(None, Some("opus")),
        );
        assert_eq!(claude.model.as_deref(), Some("opus"));
        // Own keys always win; judges are never inherited.
        let own = inherit(&section(None, Some("mine")), &parent);
        assert_eq!(own.model.as_deref(), Some("mine"));
        assert!(own.judges.is_none());
    }
}
