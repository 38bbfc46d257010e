//! The environment of every program ralph starts for an agent, a check, a setup command or a
//! hook: an allowlist, not the user's whole environment. ralph's own environment holds whatever
//! the user or the CI job put there — cloud keys, registry tokens, database URLs, webhooks — and
//! an agent that follows a prompt injection, or a test it wrote, would read all of it. So such a
//! process starts empty and gets back only:
//!
//! - what programs need to run ([`BASE`]: `PATH`, `HOME`, the locale, the terminal, proxies and
//!   CA bundles, the toolchains' own homes and caches);
//! - for a setup command, the package indexes it installs from ([`SETUP`]);
//! - for an agent, its own CLI's variables and API key (the backend names them: `ANTHROPIC_*`
//!   for Claude Code, `OPENAI_*` and its providers' `env_key`s for Codex) — to that agent only;
//! - what the user names in `[sandbox] env` (every kind), `agent_env` or `setup_env`: names, or
//!   globs with `*`.
//!
//! Whatever else is in ralph's environment is dropped. A name that looks like a secret
//! (`*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*KEY*`, `*CREDENTIAL*`) never passes through a glob or
//! the base list: only when the user or the backend names it exactly. The forges' tokens
//! (GitHub, GitLab, Forgejo), Actions' and GitLab CI's job credentials never pass at all.

use super::sandbox::Kind;
use std::ffi::OsString;
use std::sync::{Arc, RwLock};

/// What every confined program gets from ralph's environment (names; `*` at the end or the
/// start matches a prefix or a suffix).
pub const BASE: [&str; 95] = [
    // Running programs at all.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CI",
    "DEBIAN_FRONTEND",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "LD_LIBRARY_PATH",
    // Proxies and certificate bundles (a corporate network needs both).
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NIX_SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
    "PIP_CERT",
    "*_CA_BUNDLE",
    "*_CA_CERTS",
    "*_CA_CERTS_FILE",
    "*_SSL_ROOTS_FILE_PATH",
    // git's identity and the test fixtures' hermetic git (never its config parameters, which
    // can carry a credential).
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_NOSYSTEM",
    // The toolchains: where they live, their caches, their build settings.
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "PKG_CONFIG_PATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PIP_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
    "PIP_DEFAULT_TIMEOUT",
    "PIP_FIND_LINKS",
    "UV_CACHE_DIR",
    "POETRY_CACHE_DIR",
    "HATCH_DATA_DIR",
    "PDM_CACHE_DIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
    "CARGO_TERM_COLOR",
    "CARGO_INCREMENTAL",
    "CARGO_BUILD_JOBS",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUSTC_WRAPPER",
    "RUST_BACKTRACE",
    "GOPATH",
    "GOROOT",
    "GOMODCACHE",
    "GOCACHE",
    "GOFLAGS",
    "JAVA_HOME",
    "MAVEN_OPTS",
    "GRADLE_USER_HOME",
    "NVM_DIR",
    "NODE_PATH",
    "NODE_OPTIONS",
    "npm_config_cache",
    "YARN_CACHE_FOLDER",
];

/// What a setup command (an install) also gets: the indexes it installs from.
pub const SETUP: [&str; 9] = [
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "npm_config_registry",
    "PNPM_HOME",
    "GOPROXY",
    "GOPRIVATE",
];

/// Parts of a name that mark it as a secret: such a name passes only when named exactly.
const SECRET_WORDS: [&str; 6] = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"];

/// Names that never pass, whoever names them: the tokens that can push to the repository.
const NEVER: [&str; 19] = crate::env::SCRUBBED;

/// Whether `name` matches `pattern`: a name, a prefix ending in `*`, or a suffix after a
/// leading `*`.
fn matches(pattern: &str, name: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        name.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        name.ends_with(suffix)
    } else {
        pattern == name
    }
}

/// Whether `name` looks like a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

/// Whether `name` passes `patterns`: named exactly, or matched by a glob when it does not look
/// like a secret.
fn passes(patterns: &[impl AsRef<str>], name: &str) -> bool {
    patterns.iter().any(|p| {
        let p = p.as_ref();
        p == name || (p.contains('*') && matches(p, name) && !looks_secret(name))
    })
}

/// The allowlist of this ralph process: the base and what `[sandbox]` adds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// `[sandbox] env`: for every kind.
    pub every: Vec<String>,
    /// `[sandbox] agent_env`: for agents only.
    pub agents: Vec<String>,
    /// `[sandbox] setup_env`: for setup commands only.
    pub setup: Vec<String>,
}

impl Policy {
    /// Whether a process of `kind` gets the variable `name`, where `own` are the names and
    /// globs its own program needs (an agent's CLI variables and key).
    pub fn allows(&self, kind: Kind, own: &[String], name: &str) -> bool {
        if NEVER.contains(&name) {
            return false;
        }
        let base = BASE
            .iter()
            .any(|p| matches(p, name) && (p == &name || !looks_secret(name)));
        base || passes(&self.every, name)
            || passes(own, name)
            || match kind {
                Kind::Agent => passes(&self.agents, name),
                Kind::Setup | Kind::Rebuild => SETUP.contains(&name) || passes(&self.setup, name),
                Kind::Check => false,
            }
    }

    /// The variables of `from` a process of `kind` gets (see [`allows`](Self::allows)).
    pub fn filter(
        &self,
        kind: Kind,
        own: &[String],
        from: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        from.into_iter()
            .filter(|(k, _)| k.to_str().is_some_and(|k| self.allows(kind, own, k)))
            .collect()
    }

    /// The names in `from` no check gets and no agent gets beyond its own (`own_of_agents`: the
    /// globs of every agent backend configured): what the allowlist drops, for `ralph doctor`.
    pub fn dropped(
        &self,
        own_of_agents: &[String],
        from: impl IntoIterator<Item = OsString>,
    ) -> Vec<String> {
        let mut out: Vec<String> = from
            .into_iter()
            .filter_map(|k| k.into_string().ok())
            .filter(|k| {
                ![Kind::Agent, Kind::Check, Kind::Setup]
                    .iter()
                    .any(|kind| self.allows(*kind, own_of_agents, k))
            })
            .collect();
        out.sort();
        out
    }
}

fn registry() -> &'static RwLock<Option<Arc<Policy>>> {
    static CURRENT: RwLock<Option<Arc<Policy>>> = RwLock::new(None);
    &CURRENT
}

/// Makes `policy` the one every confined program of this process starts with.
pub fn install(policy: Policy) {
    *registry().write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(policy));
}

/// The installed policy, or the base one (nothing added) when none was installed.
pub fn current() -> Arc<Policy> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own() -> Vec<String> {
        vec!["ANTHROPIC_*".into(), "ANTHROPIC_API_KEY".into()]
    }

    #[test]
    fn secrets_in_ralphs_environment_reach_no_check() {
        let p = Policy::default();
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "NPM_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "PYPI_API_TOKEN",
            "DATABASE_URL",
            "SLACK_WEBHOOK_URL",
            "GITHUB_TOKEN",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ACTIONS_RUNTIME_TOKEN",
        ] {
            for kind in [Kind::Check, Kind::Setup, Kind::Agent] {
                assert!(!p.allows(kind, &[], name), "{name} reached a {kind:?}");
            }
        }
        for name in [
            "PATH",
            "HOME",
            "LC_ALL",
            "CARGO_HOME",
            "VIRTUAL_ENV",
            "HTTPS_PROXY",
        ] {
            assert!(p.allows(Kind::Check, &[], name), "{name}");
        }
    }

    #[test]
    fn an_agent_gets_its_own_key_and_no_other_process_does() {
        let p = Policy::default();
        assert!(p.allows(Kind::Agent, &own(), "ANTHROPIC_API_KEY"));
        assert!(p.allows(Kind::Agent, &own(), "ANTHROPIC_BASE_URL"));
        assert!(
            !p.allows(Kind::Agent, &own(), "ANTHROPIC_SECRET_THING"),
            "a glob does not pass a secret-looking name: only an exact one does"
        );
        assert!(!p.allows(Kind::Agent, &own(), "OPENAI_API_KEY"));
        assert!(!p.allows(Kind::Check, &[], "ANTHROPIC_BASE_URL"));
    }

    #[test]
    fn the_user_adds_names_and_globs_per_kind() {
        let p = Policy {
            every: vec!["MY_APP_*".into(), "DATABASE_URL".into()],
            agents: vec!["AWS_*".into(), "AWS_SECRET_ACCESS_KEY".into()],
            setup: vec!["NPM_TOKEN".into()],
        };
        assert!(p.allows(Kind::Check, &[], "MY_APP_MODE"));
        assert!(
            !p.allows(Kind::Check, &[], "MY_APP_TOKEN"),
            "globs pass no secret"
        );
        assert!(p.allows(Kind::Check, &[], "DATABASE_URL"));
        assert!(p.allows(Kind::Agent, &[], "AWS_SECRET_ACCESS_KEY"));
        assert!(p.allows(Kind::Agent, &[], "AWS_REGION"));
        assert!(!p.allows(Kind::Check, &[], "AWS_REGION"));
        assert!(p.allows(Kind::Setup, &[], "NPM_TOKEN"));
        assert!(!p.allows(Kind::Check, &[], "NPM_TOKEN"));
        assert!(p.allows(Kind::Setup, &[], "PIP_INDEX_URL"));
        assert!(!p.allows(Kind::Check, &[], "PIP_INDEX_URL"));
    }

    #[test]
    fn githubs_tokens_never_pass_even_when_named() {
        let p = Policy {
            every: vec!["GITHUB_TOKEN".into(), "GH_*".into()],
            ..Policy::default()
        };
        assert!(!p.allows(Kind::Check, &["GITHUB_TOKEN".into()], "GITHUB_TOKEN"));
        assert!(!p.allows(Kind::Agent, &[], "GH_TOKEN"));
    }

    #[test]
    fn dropped_names_are_listed_without_values() {
        let p = Policy::default();
        let env = [
            "PATH",
            "AWS_SECRET_ACCESS_KEY",
            "ANTHROPIC_API_KEY",
            "DATABASE_URL",
        ]
        .map(OsString::from);
        assert_eq!(
            p.dropped(&own(), env),
            ["AWS_SECRET_ACCESS_KEY", "DATABASE_URL"]
        );
    }
}
