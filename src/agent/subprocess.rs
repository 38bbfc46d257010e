//! What every subprocess backend shares: the environment of docs/specification.md §4 (`RALPH_ROLE`,
//! `RALPH_BOT_ID`, `RALPH_ISSUE`, `RALPH_ROUND`, `RALPH_PHASE`, `RALPH_WORKDIR`), the working
//! directory, secrets scrubbed from the environment, the prompt on stdin, the timeout and the
//! bounded capture — and turning the outcome into an [`AgentError`] when it failed.

use super::{AgentCall, AgentError, AgentReply, Usage};
use crate::error::chain_text;
use crate::process::sandbox::prepare_agent_state;
use crate::process::{self, Cmd, Confinement, Kind, Output, ProcessError};
use std::path::PathBuf;

/// Each captured stream keeps at most this much (head and tail): a bot printing a gigabyte
/// costs ralph 16 MiB.
pub const MAX_AGENT_OUTPUT: usize = 16 << 20;

/// The command for one call: `program args…` in the call's working directory, with the
/// protocol environment, the prompt on stdin and the call's timeout, confined as an agent that
/// may also write `state` (its CLI's own state: private copies shown at the real paths, or —
/// without a sandbox to show them — the real paths) and read `files` (its configured scripts).
pub fn agent_cmd(
    program: &str,
    args: &[String],
    call: &AgentCall,
    state: &AgentStateView,
    files: &[PathBuf],
) -> Cmd {
    let mut confinement = Confinement::new(Kind::Agent, &call.workdir).label(match &call.bot_id {
        Some(bot) => format!("{} {bot}", call.role.as_str()),
        None => call.role.as_str().to_owned(),
    });
    // Only the implementer changes its worktree; every other role reads it.
    if call.role != super::Role::Implement {
        confinement = confinement.reading();
    }
    match state {
        AgentStateView::Real(paths) => {
            for s in paths {
                confinement = confinement.writable(s);
            }
        }
        AgentStateView::Private(shown) => {
            for (copy, at) in shown {
                confinement = confinement.private(copy, at);
            }
        }
    }
    for f in files {
        confinement = confinement.readable(f);
    }
    let mut cmd = Cmd::new(program)
        .confine(confinement)
        .args(args)
        .current_dir(&call.workdir)
        .stdin(call.prompt.clone().into_bytes())
        .timeout(call.timeout)
        .max_output(MAX_AGENT_OUTPUT)
        .env("RALPH_ROLE", call.role.as_str())
        .env("RALPH_ISSUE", call.issue.to_string())
        .env("RALPH_ROUND", call.round.to_string())
        .env("RALPH_PHASE", call.phase.as_str())
        .env("RALPH_WORKDIR", &call.workdir)
        .env("RALPH_ATTEMPT", call.attempt.to_string())
        .env_remove("RALPH_BOT_ID");
    if let Some(bot) = &call.bot_id {
        cmd = cmd.env("RALPH_BOT_ID", bot);
    }
    for var in crate::env::SCRUBBED {
        cmd = cmd.env_remove(var);
    }
    cmd
}

/// The variables of ralph's environment the agent CLI `cli` needs (names and globs): its own
/// settings and API key, which no other agent, check or setup gets. Codex also gets the
/// `env_key` (and `env_http_headers` variables) of every model provider its `config.toml`
/// names.
pub fn own_env(cli: &str, home: Option<&std::path::Path>) -> Vec<String> {
    let mut out: Vec<String> = match cli {
        "claude" => [
            "ANTHROPIC_*",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_*",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "DISABLE_*",
            "MAX_THINKING_TOKENS",
            "API_TIMEOUT_MS",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_TIMEOUT_MS",
        ]
        .map(String::from)
        .to_vec(),
        "codex" => ["OPENAI_*", "OPENAI_API_KEY", "CODEX_*", "RUST_LOG"]
            .map(String::from)
            .to_vec(),
        _ => Vec::new(),
    };
    if cli == "codex" {
        out.extend(codex_provider_keys(home));
    }
    out
}

/// Where the agent CLI `cli` calls its model (the sandbox lets it reach only that, and
/// `[sandbox.network] agents_allow`): Claude Code's `ANTHROPIC_BASE_URL`, else Anthropic's API
/// and the hosts its login is refreshed at; Codex's provider in its `config.toml` (or
/// `OPENAI_BASE_URL`), else OpenAI's API and, for a ChatGPT login, ChatGPT and its auth host.
pub fn endpoints(cli: &str, home: Option<&std::path::Path>) -> Vec<String> {
    use crate::process::egress::endpoint;
    let from = |url: Option<String>| url.and_then(|u| endpoint(&u)).map(|r| r.text());
    match cli {
        "claude" => match from(crate::env::non_empty("ANTHROPIC_BASE_URL")) {
            Some(own) => vec![own],
            None => [
                "api.anthropic.com",
                "platform.claude.com",
                "console.anthropic.com",
            ]
            .map(String::from)
            .to_vec(),
        },
        "codex" => {
            let configured = codex_config(home).and_then(|c| {
                let name = c.get("model_provider")?.as_str()?.to_owned();
                let url = c
                    .get("model_providers")?
                    .get(&name)?
                    .get("base_url")?
                    .as_str()?;
                Some(url.to_owned())
            });
            match from(configured).or_else(|| from(crate::env::non_empty("OPENAI_BASE_URL"))) {
                Some(own) => vec![own],
                None => ["api.openai.com", "chatgpt.com", "auth.openai.com"]
                    .map(String::from)
                    .to_vec(),
            }
        }
        _ => Vec::new(),
    }
}

/// Codex's `config.toml`, parsed, when there is one.
fn codex_config(home: Option<&std::path::Path>) -> Option<toml::Table> {
    let dir = crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")))?;
    crate::fsutil::read_regular_text(&dir.join("config.toml"), 1 << 20)
        .ok()?
        .parse()
        .ok()
}

/// The variables Codex's `config.toml` names for its model providers' keys and headers.
fn codex_provider_keys(home: Option<&std::path::Path>) -> Vec<String> {
    let Some(config) = codex_config(home) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let providers = config.get("model_providers").and_then(|p| p.as_table());
    for provider in providers.into_iter().flat_map(|t| t.values()) {
        if let Some(key) = provider.get("env_key").and_then(|k| k.as_str()) {
            out.push(key.to_owned());
        }
        let headers = provider.get("env_http_headers").and_then(|h| h.as_table());
        out.extend(
            headers
                .into_iter()
                .flat_map(|h| h.values())
                .filter_map(|v| v.as_str().map(str::to_owned)),
        );
    }
    out
}

/// What an agent CLI's state looks like to it.
#[derive(Debug, Clone)]
pub enum AgentStateView {
    /// The user's own state folders, writable (no sandbox to show it a copy).
    Real(Vec<PathBuf>),
    /// Private copies, shown at the real paths: (copy, real path).
    Private(Vec<(PathBuf, PathBuf)>),
}

/// Runs an agent command; returns its output whatever its exit code (a CLI reports its own
/// errors on stdout), failing only when it could not start or ran out of time.
pub async fn run_agent_output(
    backend: &str,
    cmd: &Cmd,
    call: &AgentCall,
) -> Result<Output, AgentError> {
    let out = process::run(cmd).await.map_err(|e| AgentError::Start {
        backend: backend.to_owned(),
        message: match &e {
            ProcessError::NotFound { program } => {
                format!(
                    "`{program}` was not found on PATH (install it, or configure another backend)"
                )
            }
            other => chain_text(other),
        },
    })?;
    if out.timed_out {
        return Err(AgentError::Timeout {
            backend: backend.to_owned(),
            after: call.timeout,
        });
    }
    if out.truncated {
        tracing::warn!(
            "{backend}: output exceeded {MAX_AGENT_OUTPUT} bytes; the middle was dropped"
        );
    }
    Ok(out)
}

/// The exit-code error of a program that failed without saying why on stdout.
fn exit_error(backend: &str, out: &Output) -> AgentError {
    AgentError::Exit {
        backend: backend.to_owned(),
        status: match out.code {
            Some(c) => format!("exit code {c}"),
            None => "a signal".to_owned(),
        },
        tail: out.tail(20),
    }
}

/// Runs an agent command and returns its output when it exited 0 in time.
pub async fn run_agent(backend: &str, cmd: &Cmd, call: &AgentCall) -> Result<Output, AgentError> {
    let out = run_agent_output(backend, cmd, call).await?;
    if out.success() {
        Ok(out)
    } else {
        Err(exit_error(backend, &out))
    }
}

/// What a CLI's transcript yields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub text: String,
    pub usage: Usage,
    pub session_id: Option<String>,
    pub tools_used: Vec<String>,
    pub warnings: Vec<String>,
}

/// Why a transcript holds no answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CliError {
    pub message: String,
    /// The HTTP status of the model API's error, when the CLI reported one.
    pub status: Option<u16>,
    /// The CLI said what went wrong (an error event or result); otherwise the transcript
    /// merely lacks an answer, and the exit code and stderr say more.
    pub reported: bool,
}

impl CliError {
    /// The CLI reported this error itself.
    pub fn reported(message: impl Into<String>, status: Option<u16>) -> CliError {
        CliError {
            message: message.into(),
            status,
            reported: true,
        }
    }

    /// The transcript has no answer and no error in it.
    pub fn missing(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            status: None,
            reported: false,
        }
    }
}

/// The error of a CLI that reported one: a credentials error for 401/403, else the message.
fn reported_error(backend: &str, e: CliError) -> AgentError {
    match e.status {
        Some(401 | 403) => AgentError::Auth {
            backend: backend.to_owned(),
            message: format!("HTTP {}: {}", e.status.unwrap_or_default(), e.message),
        },
        Some(status) => AgentError::Reported {
            backend: backend.to_owned(),
            message: format!("HTTP {status}: {}", e.message),
        },
        None => AgentError::Reported {
            backend: backend.to_owned(),
            message: e.message,
        },
    }
}

/// Runs an agent CLI whose stdout is a transcript, and parses it with `parse`. On a non-zero
/// exit the transcript is read first: the CLI's own report of what went wrong beats the exit
/// code and the stderr tail, which are the fallback. `cli` (`claude`, `codex`) names whose
/// state folders the agent may write.
pub async fn call_cli(
    backend: &str,
    cli: &str,
    program: &str,
    args: &[String],
    call: &AgentCall,
    activity_of: fn(&str, &str) -> Option<String>,
    parse: impl FnOnce(&str) -> Result<Parsed, CliError>,
) -> Result<AgentReply, AgentError> {
    let home = crate::env::non_empty("HOME").map(PathBuf::from);
    // In the sandbox the CLI's state is a private copy for this call alone.
    let sandboxed = crate::process::sandbox::current().is_some_and(|s| s.status().active);
    let private = sandboxed
        .then(|| super::state::CallState::copy(cli, home.as_deref()))
        .flatten();
    let view = match &private {
        Some(state) => AgentStateView::Private(state.shown.clone()),
        None => AgentStateView::Real(prepare_agent_state(cli, home.as_deref())),
    };
    let mut cmd = agent_cmd(program, args, call, &view, &[])
        .own_env(own_env(cli, home.as_deref()))
        .hosts(endpoints(cli, home.as_deref()));
    for (k, v) in private.iter().flat_map(|s| &s.env) {
        cmd = cmd.env(k, v);
    }
    // In the sandbox Claude Code's telemetry, bootstrap and event calls would be refused on
    // every call: off, unless the user says otherwise.
    const QUIET: &str = "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC";
    if cli == "claude" && private.is_some() && !crate::env::is_set(QUIET) {
        cmd = cmd.env(QUIET, "1");
    }
    if let Some(sink) = call.activity.clone() {
        // The stream, read as it arrives: each line's activity goes to the live view.
        let workdir = call.workdir.to_string_lossy().into_owned();
        cmd = cmd.on_stdout_line(std::sync::Arc::new(move |line: &str| {
            if let Some(a) = activity_of(line, &workdir) {
                sink.report(&a);
            }
        }));
    }
    let out = run_agent_output(backend, &cmd, call).await;
    if let Some(kept) = private.as_ref().and_then(|s| s.keep_refreshed_login(cli)) {
        tracing::info!("{kept}");
    }
    drop(private);
    let out = out?;
    let parsed = match (parse(&out.stdout), out.success()) {
        (Ok(parsed), true) => parsed,
        (Err(e), _) if e.reported => return Err(reported_error(backend, e)),
        (Err(e), true) => {
            return Err(AgentError::Reported {
                backend: backend.to_owned(),
                message: e.message,
            })
        }
        (_, false) => return Err(exit_error(backend, &out)),
    };
    for w in &parsed.warnings {
        tracing::warn!("{backend}: {w}");
    }
    Ok(AgentReply {
        text: parsed.text,
        usage: parsed.usage,
        duration: out.duration,
        session_id: parsed.session_id,
        tools_used: parsed.tools_used,
        warnings: parsed.warnings,
    })
}
