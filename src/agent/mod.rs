//! Talking to models (docs/specification.md §4). Every model call is a *role* (`extract`,
//! `propose`, `judge`, `implement`, `verify`) run by a *backend*; [`Backend`] is the one narrow
//! interface: send one prompt, get the response text and its accounting back. The backends are
//! subprocess CLIs ([`command`], and the agent CLIs [`clis`] lists: [`claude`], [`codex`],
//! [`gemini`], [`qwen`], [`opencode`], [`aider`]), HTTP APIs ([`anthropic`], [`openai`]) and
//! recorded answers ([`replay`]). [`protocol`] turns response text into a role's typed answer.

pub mod accounts;
pub mod aider;
pub mod anthropic;
pub mod claude;
mod cli;
pub mod clis;
pub mod codex;
pub mod command;
pub mod fanout;
pub mod gemini;
mod http;
pub mod openai;
pub mod opencode;
pub mod prompts;
pub mod protocol;
pub mod qwen;
pub mod replay;
pub mod state;
mod subprocess;

use crate::config::{AgentConfig, BackendKind};
use async_trait::async_trait;
pub use cli::ModelSettings;
pub use clis::{agent_endpoints, cli_endpoints, cli_env, needed_clis, NeededCli, CLIS};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a model is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Extract,
    Propose,
    Judge,
    Implement,
    Verify,
    /// Drafts (or reviews) an issue's requirements: `ralph refine`.
    Refine,
    /// Scores the implemented change for innovation and the consultations' concerns.
    Review,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Extract => "extract",
            Role::Propose => "propose",
            Role::Judge => "judge",
            Role::Implement => "implement",
            Role::Verify => "verify",
            Role::Refine => "refine",
            Role::Review => "review",
        }
    }

    /// Whether the role may change files (only the implementer does).
    pub fn edits(self) -> bool {
        self == Role::Implement
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use crate::market::Phase;

/// One call: the prompt and everything a backend needs to place it.
#[derive(Debug, Clone)]
pub struct AgentCall {
    pub role: Role,
    pub prompt: String,
    /// The worktree for `implement`, the repository root otherwise.
    pub workdir: PathBuf,
    /// The bot making the call (`propose` only).
    pub bot_id: Option<String>,
    pub issue: u64,
    /// 1-based.
    pub round: u32,
    pub phase: Phase,
    pub timeout: Duration,
    /// 0 for the first attempt, 1 for the repair retry (replay keys on it).
    pub attempt: u32,
    /// Who a non-bot call speaks for in recordings and logs when it is not the default
    /// (`arbiter` / `implementer`): `judge_2` for the second of several judges.
    pub speaker: Option<String>,
    /// A second reading of the same question, kept apart in recordings: `reversed` for a
    /// judge's reading of the proposals in the reverse order (`[arbiter] order_swaps`).
    pub variant: Option<&'static str>,
    /// Where the backend reports what the agent is doing as its stream arrives (the live
    /// view; `None`: nobody is watching).
    pub activity: Option<crate::progress::ActivitySink>,
}

/// Tokens and money spent by a call, as far as the backend reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token, cached ones included.
    pub input_tokens: u64,
    /// The part of `input_tokens` read from the provider's cache (priced lower).
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// `None` when the backend does not report cost.
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// What came back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReply {
    pub text: String,
    pub usage: Usage,
    pub duration: Duration,
    /// The backend's own id for the session or request, for logs and `--resume`.
    pub session_id: Option<String>,
    /// The tools the agent used (Claude Code) or the kinds of work it did (Codex), in order:
    /// how a read-only agent that changed the repository is told apart.
    pub tools_used: Vec<String>,
    /// What the backend reported without failing (a reconnect, a skipped line).
    pub warnings: Vec<String>,
}

/// Why a call failed, sorted by what the caller reports ("failed to start", "timed out", …).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("could not start {backend}: {message}")]
    Start { backend: String, message: String },
    #[error("{backend} timed out after {}s", .after.as_secs())]
    Timeout { backend: String, after: Duration },
    #[error("{backend} exited with {status}: {tail}")]
    Exit {
        backend: String,
        status: String,
        tail: String,
    },
    #[error("{backend} rejected the credentials: {message}")]
    Auth { backend: String, message: String },
    #[error("{backend} answered HTTP {status} after {attempts} attempt(s): {message}")]
    Http {
        backend: String,
        status: u16,
        attempts: u32,
        message: String,
    },
    #[error("could not reach {backend} after {attempts} attempt(s): {message}")]
    Connection {
        backend: String,
        attempts: u32,
        message: String,
    },
    #[error("{backend} reported an error: {message}")]
    Reported { backend: String, message: String },
    #[error("{backend}: {message}")]
    Output { backend: String, message: String },
    #[error("{message}")]
    Config { message: String },
}

impl AgentError {
    /// The short reason shown when a bot is skipped.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentError::Start { .. } | AgentError::Config { .. } | AgentError::Auth { .. } => {
                "failed to start"
            }
            AgentError::Timeout { .. } => "timed out",
            AgentError::Exit { .. }
            | AgentError::Http { .. }
            | AgentError::Connection { .. }
            | AgentError::Reported { .. } => "failed",
            AgentError::Output { .. } => "invalid answer",
        }
    }
}

/// A model behind one interface. Implementations keep no per-call state: one backend value
/// serves concurrent calls.
#[async_trait]
pub trait Backend: Send + Sync {
    /// For messages: `claude (sonnet)`, `command ./bot.sh`, `replay recordings/`.
    fn describe(&self) -> String;

    /// Whether its replies carry their cost (otherwise only a configured `price` tells it).
    fn reports_cost(&self) -> bool {
        false
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError>;
}

/// Whether an agent configured so can start here, without starting it: its program is
/// installed, its API key is set (unless a keyless `base_url`), its recordings exist. `Err`
/// says what is missing and how to fix it.
pub fn can_start(config: &AgentConfig, root: &Path) -> Result<(), String> {
    use crate::process::on_path;
    let program = |p: &str| {
        if p.contains('/') && !Path::new(p).is_absolute() {
            root.join(p).to_string_lossy().into_owned()
        } else {
            p.to_owned()
        }
    };
    match config.backend {
        kind @ (BackendKind::Claude
        | BackendKind::Codex
        | BackendKind::Gemini
        | BackendKind::Qwen
        | BackendKind::Opencode
        | BackendKind::Aider) => clis::can_start(kind, config, &program),
        BackendKind::Command => match config.command.first() {
            Some(p) if on_path(&program(p)) => Ok(()),
            Some(p) => Err(format!(
                "`{p}` is not an executable program here: fix `command` in .ralph/config.toml"
            )),
            None => Err("`command` is empty".into()),
        },
        BackendKind::Replay => {
            let dir = config.dir.clone().unwrap_or_default();
            let dir = if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            };
            if dir.is_dir() {
                Ok(())
            } else {
                Err(format!(
                    "the recordings directory {} does not exist",
                    dir.display()
                ))
            }
        }
        // The HTTP backends check their model and key when they are built.
        BackendKind::Anthropic | BackendKind::Openai => {
            build(config, root).map(|_| ()).map_err(|e| e.to_string())
        }
    }
}

/// A backend that reports no cost, priced by the agent's configured `price`.
pub struct Priced {
    inner: Arc<dyn Backend>,
    price: crate::config::Price,
}

impl Priced {
    pub fn new(inner: Arc<dyn Backend>, price: crate::config::Price) -> Priced {
        Priced { inner, price }
    }
}

#[async_trait]
impl Backend for Priced {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn reports_cost(&self) -> bool {
        true
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let mut reply = self.inner.call(call).await?;
        if reply.usage.cost_usd.is_none() {
            let u = &reply.usage;
            let cost = self
                .price
                .cost(u.input_tokens, u.cached_input_tokens, u.output_tokens);
            reply.usage.cost_usd = Some(cost);
        }
        Ok(reply)
    }
}

/// Builds the backend an agent's configuration names. `root` resolves relative paths.
pub fn build(config: &AgentConfig, root: &Path) -> Result<Arc<dyn Backend>, AgentError> {
    let model = config.model.clone();
    Ok(match config.backend {
        BackendKind::Command => Arc::new(command::CommandBackend::new(config.command.clone())?),
        kind @ (BackendKind::Claude
        | BackendKind::Codex
        | BackendKind::Gemini
        | BackendKind::Qwen
        | BackendKind::Opencode
        | BackendKind::Aider) => clis::build(kind, config),
        BackendKind::Replay => {
            let dir = config.dir.clone().ok_or_else(|| AgentError::Config {
                message: "backend = \"replay\" needs `dir`".into(),
            })?;
            let dir = if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            };
            Arc::new(replay::ReplayBackend::new(dir))
        }
        BackendKind::Anthropic => Arc::new(anthropic::AnthropicBackend::new(
            config.base_url.clone(),
            config.api_key_env.clone(),
            model,
            config.max_tokens,
            config.temperature,
        )?),
        BackendKind::Openai => Arc::new(openai::OpenAiBackend::new(
            config.base_url.clone(),
            config.api_key_env.clone(),
            model,
            config.max_tokens,
            config.temperature,
        )?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_adds_and_keeps_unknown_cost_unknown() {
        let mut u = Usage::default();
        u.add(Usage {
            input_tokens: 10,
            cached_input_tokens: 0,
            output_tokens: 5,
            cost_usd: None,
        });
        assert_eq!(u.cost_usd, None);
        u.add(Usage {
            input_tokens: 1,
            cached_input_tokens: 0,
            output_tokens: 1,
            cost_usd: Some(0.5),
        });
        assert_eq!((u.total_tokens(), u.cost_usd), (17, Some(0.5)));
    }

    use crate::fixtures::agent_config as agent;

    #[test]
    fn every_backend_kind_builds_or_says_what_is_missing() {
        let root = Path::new("/repo");
        let err = |c: &AgentConfig| build(c, root).err().expect("an error").to_string();
        assert!(err(&agent(BackendKind::Command)).contains("needs `command"));
        assert!(err(&agent(BackendKind::Replay)).contains("needs `dir`"));
        assert!(err(&agent(BackendKind::Anthropic)).contains("needs `model`"));
        let mut a = agent(BackendKind::Anthropic);
        a.model = Some("claude-sonnet-4-5".into());
        a.api_key_env = Some("RALPH_TEST_UNSET_KEY_VAR".into());
        assert!(err(&a).contains("RALPH_TEST_UNSET_KEY_VAR"));
        let mut o = agent(BackendKind::Openai);
        o.model = Some("llama3.1".into());
        o.base_url = Some("http://localhost:11434/v1".into());
        assert_eq!(build(&o, root).unwrap().describe(), "openai (llama3.1)");
        let mut r = agent(BackendKind::Replay);
        r.dir = Some("recordings".into());
        assert_eq!(
            build(&r, root).unwrap().describe(),
            "replay /repo/recordings"
        );
        let mut c = agent(BackendKind::Claude);
        c.model = Some("sonnet".into());
        assert_eq!(build(&c, root).unwrap().describe(), "claude (sonnet)");
        assert_eq!(
            build(&agent(BackendKind::Codex), root).unwrap().describe(),
            "codex"
        );
        let mut cmd = agent(BackendKind::Command);
        cmd.command = vec!["./bot.sh".into(), "--fast".into()];
        assert_eq!(build(&cmd, root).unwrap().describe(), "command ./bot.sh");
    }

    #[test]
    fn error_kinds_name_the_skip_reason() {
        let e = AgentError::Timeout {
            backend: "claude".into(),
            after: Duration::from_secs(3),
        };
        assert_eq!(e.kind(), "timed out");
        assert_eq!(e.to_string(), "claude timed out after 3s");
        let e = AgentError::Output {
            backend: "x".into(),
            message: "no JSON".into(),
        };
        assert_eq!(e.kind(), "invalid answer");
    }
}
