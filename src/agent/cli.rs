//! An agent CLI as a backend: what Claude Code ([`claude`](super::claude)), Codex
//! ([`codex`](super::codex)), Gemini CLI ([`gemini`](super::gemini)), Qwen Code
//! ([`qwen`](super::qwen)), OpenCode ([`opencode`](super::opencode)) and Aider
//! ([`aider`](super::aider)) share. Each is started as the configured command's program and
//! leading arguments, then ralph's own arguments for the role, then the user's `args`; each gets
//! its own keys, endpoints and state, the prompt on stdin, and prints a transcript — read line
//! by line for the live view as it arrives, and whole when the call ends, when the CLI's own
//! report of an error beats the exit code.
//!
//! State comes two ways. Claude Code and Codex keep a login the user made: in the sandbox a call
//! gets a private copy of it. The other four take a key from the environment: every call, sandbox
//! or not, gets a fresh home of its own holding only the settings ralph writes (no telemetry, no
//! update check, no retries that outlast the call, the model's address), thrown away after it.
//! What sets one CLI apart — its name, its arguments, how its transcript reads, the variables and
//! hosts it needs — is its [`AgentCli`], in its own file.

use super::state::CallState;
use super::subprocess::{agent_cmd, exit_error, run_agent_output, AgentStateView};
use super::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use crate::process::sandbox::prepare_agent_state;
use crate::process::{Cmd, Output};
use async_trait::async_trait;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// What one agent CLI is: its name, its arguments, how its transcript reads, the variables and
/// hosts it needs.
pub trait AgentCli: Send + Sync + 'static {
    /// `claude`, `codex`: in messages, and whose state folders, keys and endpoints a call gets.
    const NAME: &'static str;
    /// Whether its transcript carries the call's cost.
    const REPORTS_COST: bool;
    /// Variables a call in the sandbox runs with, unless the user set them.
    const SANDBOX_ENV: &'static [(&'static str, &'static str)] = &[];
    /// Each call gets a fresh home ([`AgentCli::home_files`], [`AgentCli::call_env`]) instead of
    /// the user's state.
    const FRESH_HOME: bool = false;

    /// ralph's arguments for `role` with the configured model, and the user's `extra` ones
    /// where the CLI takes them (after the command's leading arguments).
    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String>;

    /// The files of a call's fresh home: (path relative to it, contents); `prompt` is the
    /// call's, for a CLI that reads it from a file.
    fn home_files(
        _role: Role,
        _model: &ModelSettings,
        _prompt: &str,
    ) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The variables a call with a fresh home at `home` (as the CLI sees it) runs with: where
    /// its state goes, the key under the name the CLI reads, the model's address.
    fn call_env(_role: Role, _model: &ModelSettings, _home: &Path) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Reads a whole transcript.
    fn parse(stdout: &str) -> Result<Transcript, CliError>;

    /// What one line of the transcript says the agent does, for the live view (`workdir` is
    /// shown relative).
    fn activity(line: &str, workdir: &str) -> Option<String>;

    /// The variables of ralph's environment it needs (names and globs): its own settings and
    /// API key, which no other agent, check or setup gets.
    fn own_env(home: Option<&Path>) -> Vec<String>;

    /// Where it calls its model: the sandbox lets it reach only that, and
    /// `[sandbox.network] agents_allow`.
    fn endpoints(home: Option<&Path>, model: &ModelSettings) -> Vec<String>;

    /// The HTTP status an exit code stands for, for a CLI that exits with the API's status
    /// (Gemini CLI: the status modulo 256) when its transcript does not name it.
    fn exit_status(_code: i32) -> Option<u16> {
        None
    }
}

/// What an agent's configuration tells its CLI: the model, and where and with which key it
/// reaches it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSettings {
    /// `model`, as the CLI names it.
    pub model: Option<String>,
    /// `base_url`: a self-hosted or OpenAI-compatible server.
    pub base_url: Option<String>,
    /// `api_key_env`: the variable of ralph's environment holding the key, passed to the CLI
    /// under the name it reads.
    pub key_var: Option<String>,
}

impl ModelSettings {
    /// The key `api_key_env` names, when it is set here.
    pub fn key(&self) -> Option<String> {
        self.key_var.as_deref().and_then(crate::env::non_empty)
    }
}

/// The host (and port) of `url` as the sandbox's allowlist names it, when it is a URL.
pub fn endpoint_of(url: Option<String>) -> Option<String> {
    url.and_then(|u| crate::process::egress::endpoint(&u))
        .map(|r| r.text())
}

/// Where a model is served: `base_url`'s host, else its vendor's API, read from the provider
/// the model's name starts with (`anthropic/…`, `openrouter/…`) or its family (`claude-…`,
/// `gpt-…`, `gemini-…`); none for a name ralph does not know (`[sandbox.network]
/// agents_allow` then names the host).
pub fn model_hosts(model: &ModelSettings) -> Vec<String> {
    if let Some(own) = endpoint_of(model.base_url.clone()) {
        return vec![own];
    }
    const VENDORS: [(&[&str], &str); 8] = [
        (
            &["anthropic", "claude", "sonnet", "opus", "haiku"],
            "api.anthropic.com",
        ),
        (
            &["openai", "gpt", "o1", "o3", "o4", "chatgpt"],
            "api.openai.com",
        ),
        (&["google", "gemini"], "generativelanguage.googleapis.com"),
        (&["openrouter"], "openrouter.ai"),
        (&["groq"], "api.groq.com"),
        (&["deepseek"], "api.deepseek.com"),
        (&["mistral", "codestral"], "api.mistral.ai"),
        (&["xai", "grok"], "api.x.ai"),
    ];
    let Some(family) = model_family(model) else {
        return Vec::new();
    };
    VENDORS
        .iter()
        .find(|(names, _)| names.contains(&family.as_str()))
        .map(|(_, host)| vec![(*host).to_owned()])
        .unwrap_or_default()
}

/// Where a CLI that reads its address from `var` calls its model: `base_url`'s host, else
/// `var`'s in ralph's environment, else `default`.
pub fn address_or(model: &ModelSettings, var: &str, default: &str) -> Vec<String> {
    let own =
        endpoint_of(model.base_url.clone()).or_else(|| endpoint_of(crate::env::non_empty(var)));
    vec![own.unwrap_or_else(|| default.to_owned())]
}

/// The provider or family a model's name starts with, lower-cased: `anthropic` of
/// `anthropic/claude-sonnet-4-5`, `gpt` of `gpt-4.1`.
pub fn model_family(model: &ModelSettings) -> Option<String> {
    let name = model.model.as_deref()?.to_ascii_lowercase();
    name.split(['/', '-', ':', '.']).next().map(str::to_owned)
}

/// A backend that runs the agent CLI `C`.
pub struct CliBackend<C> {
    program: String,
    /// Leading arguments of `command` (`["npx", "-y", "@anthropic-ai/claude-code"]` → the
    /// last two).
    leading: Vec<String>,
    /// `args`, where `C` puts them among ralph's.
    extra: Vec<String>,
    model: ModelSettings,
    cli: PhantomData<fn() -> C>,
}

impl<C: AgentCli> CliBackend<C> {
    /// `command` is the program and its leading arguments (empty: `program`).
    pub fn new(
        program: String,
        command: &[String],
        extra: &[String],
        model: Option<String>,
    ) -> CliBackend<C> {
        let (program, leading) = match command.split_first() {
            Some((p, rest)) => (p.clone(), rest.to_vec()),
            None => (program, Vec::new()),
        };
        CliBackend {
            program,
            leading,
            extra: extra.to_vec(),
            model: ModelSettings {
                model,
                ..ModelSettings::default()
            },
            cli: PhantomData,
        }
    }

    /// The same backend reaching its model at `base_url` with the key in `key_var`.
    pub fn reaching(mut self, base_url: Option<String>, key_var: Option<String>) -> CliBackend<C> {
        self.model.base_url = base_url;
        self.model.key_var = key_var;
        self
    }

    /// The arguments for a role.
    pub fn args(&self, role: Role) -> Vec<String> {
        let mut args = self.leading.clone();
        args.extend(C::args(role, &self.model, &self.extra));
        args
    }

    /// The command of one call: the CLI's own environment and hosts, its state (`private`, or
    /// the user's own without a sandbox to show a copy), the live view fed from its stdout.
    fn command(&self, call: &AgentCall, home: Option<&Path>, private: Option<&CallState>) -> Cmd {
        let view = match private {
            Some(state) => AgentStateView::Private(state.shown.clone()),
            None => AgentStateView::Real(prepare_agent_state(C::NAME, home)),
        };
        let mut cmd = agent_cmd(&self.program, &self.args(call.role), call, &view, &[])
            .own_env(C::own_env(home))
            .own_env(self.model.key_var.clone())
            .hosts(C::endpoints(home, &self.model));
        if let Some(state) = private {
            for (k, v) in &state.env {
                cmd = cmd.env(k, v);
            }
            for (var, value) in C::SANDBOX_ENV {
                if !crate::env::is_set(var) {
                    cmd = cmd.env(var, value);
                }
            }
        }
        if let Some(sink) = call.activity.clone() {
            // The stream, read as it arrives: each line's activity goes to the live view.
            let workdir = call.workdir.to_string_lossy().into_owned();
            cmd = cmd.on_stdout_line(std::sync::Arc::new(move |line: &str| {
                if let Some(a) = C::activity(line, &workdir) {
                    sink.report(&a);
                }
            }));
        }
        cmd
    }
}

#[async_trait]
impl<C: AgentCli> Backend for CliBackend<C> {
    fn describe(&self) -> String {
        match &self.model.model {
            Some(m) => format!("{} ({m})", C::NAME),
            None => C::NAME.into(),
        }
    }

    fn reports_cost(&self) -> bool {
        C::REPORTS_COST
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let backend = self.describe();
        let home = crate::env::non_empty("HOME").map(PathBuf::from);
        // A fresh home for this call alone, or — in the sandbox — a private copy of the CLI's
        // state (its login).
        let sandboxed = crate::process::sandbox::current().is_some_and(|s| s.status().active);
        let private = if C::FRESH_HOME {
            let files = C::home_files(call.role, &self.model, &call.prompt);
            let state =
                CallState::fresh(C::NAME, &files, sandboxed).map_err(|e| AgentError::Start {
                    backend: backend.clone(),
                    message: format!("could not make its private home: {e}"),
                })?;
            let at = state.shown[0].1.clone();
            Some(state.with_env(C::call_env(call.role, &self.model, &at)))
        } else {
            sandboxed
                .then(|| CallState::copy(C::NAME, home.as_deref()))
                .flatten()
        };
        let cmd = self.command(call, home.as_deref(), private.as_ref());
        let out = run_agent_output(&backend, &cmd, call).await;
        if let Some(kept) = private
            .as_ref()
            .and_then(|s| s.keep_refreshed_login(C::NAME))
        {
            tracing::info!("{kept}");
        }
        drop(private);
        let out = out?;
        reply(&backend, &out, |stdout| {
            C::parse(stdout).map_err(|mut e| {
                if e.reported && e.status.is_none() {
                    e.status = out.code.and_then(C::exit_status);
                }
                e
            })
        })
    }
}

/// The reply a CLI's output makes, its transcript read by `parse`. On a non-zero exit the
/// transcript is read first: the CLI's own report of what went wrong beats the exit code and
/// the stderr tail, which are the fallback.
fn reply(
    backend: &str,
    out: &Output,
    parse: impl FnOnce(&str) -> Result<Transcript, CliError>,
) -> Result<AgentReply, AgentError> {
    let t = match (parse(&out.stdout), out.success()) {
        (Ok(t), true) => t,
        (Err(e), _) if e.reported => return Err(reported_error(backend, e)),
        (Err(e), true) => {
            return Err(AgentError::Reported {
                backend: backend.to_owned(),
                message: e.message,
            })
        }
        (_, false) => return Err(exit_error(backend, out)),
    };
    tracing::debug!(tools = ?t.tools_used, skipped = t.skipped_lines, "{backend}: transcript");
    for w in &t.warnings {
        tracing::warn!("{backend}: {w}");
    }
    Ok(AgentReply {
        text: t.text,
        usage: t.usage,
        duration: out.duration,
        session_id: t.session_id,
        tools_used: t.tools_used,
        warnings: t.warnings,
    })
}

/// What a CLI's transcript says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The answer.
    pub text: String,
    pub usage: Usage,
    /// The CLI's id for the session (Claude Code) or thread (Codex).
    pub session_id: Option<String>,
    /// The tools used (Claude Code) or the kinds of work items (Codex), in order.
    pub tools_used: Vec<String>,
    /// Lines that are none of the events the CLI's reader knows (warnings printed by the CLI,
    /// a cut in the middle).
    pub skipped_lines: usize,
    /// What went wrong without ending the call (the CLI's retries of the model API).
    pub warnings: Vec<String>,
}

/// The lines of a JSONL transcript that are events `E`, in order, and how many other lines
/// (not blank) it holds.
pub fn jsonl_events<E: serde::de::DeserializeOwned>(stdout: &str) -> (Vec<E>, usize) {
    let mut skipped = 0;
    let events = stdout
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .filter_map(|line| {
            let event = serde_json::from_str(line).ok();
            skipped += usize::from(event.is_none());
            event
        })
        .collect();
    (events, skipped)
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

/// An API error a CLI put in its answer's text (Gemini CLI, Qwen Code):
/// `[API Error: 429 Rate limit reached…]` or `[API Error: {"error":{"code":401,…}}]`, as its
/// HTTP status, when it names one, and its message.
pub fn api_error_in(text: &str) -> Option<(Option<u16>, String)> {
    let start = text.find("[API Error:")?;
    let inner = text[start + "[API Error:".len()..].trim_start();
    let inner = inner.rfind(']').map_or(inner, |end| &inner[..end]).trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(inner) {
        let e = v.get("error").unwrap_or(&v);
        let status = e
            .get("code")
            .and_then(serde_json::Value::as_u64)
            .and_then(|c| u16::try_from(c).ok());
        if let Some(message) = e.get("message").and_then(serde_json::Value::as_str) {
            return Some((status, message.to_owned()));
        }
    }
    let digits: String = inner.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse::<u16>() {
        Ok(status) if (100..600).contains(&status) => {
            Some((Some(status), inner[digits.len()..].trim().to_owned()))
        }
        _ => Some((None, inner.to_owned())),
    }
}

/// What an HTTP status of the model API means for the call, in ralph's words.
pub fn status_reason(status: u16, message: &str) -> &'static str {
    match status {
        400 | 422 => "the model API refused the request",
        401 | 403 => "the credentials were rejected",
        402 => "the account is out of credit",
        404 => "the model was not found",
        408 | 504 => "the model API timed out",
        429 if message.to_ascii_lowercase().contains("quota") => "out of quota",
        429 => "rate limited",
        500..=599 => "the model API failed",
        _ => "the model API answered an error",
    }
}

/// The error of a CLI that reported one: a credentials error for 401/403, else the message
/// with what its status means.
fn reported_error(backend: &str, e: CliError) -> AgentError {
    match e.status {
        Some(401 | 403) => AgentError::Auth {
            backend: backend.to_owned(),
            message: format!("HTTP {}: {}", e.status.unwrap_or_default(), e.message),
        },
        Some(status) => AgentError::Reported {
            backend: backend.to_owned(),
            message: format!(
                "{} (HTTP {status}): {}",
                status_reason(status, &e.message),
                e.message
            ),
        },
        None => AgentError::Reported {
            backend: backend.to_owned(),
            message: e.message,
        },
    }
}

/// A real transcript, recorded (tests/fixtures/agents/real/README.md says how each was made).
#[cfg(test)]
pub fn real_transcript(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/agents/real/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::ClaudeBackend;
    use std::time::Duration;

    #[test]
    fn command_and_args_frame_ralphs_arguments() {
        let command = [
            "npx".to_owned(),
            "-y".into(),
            "@anthropic-ai/claude-code".into(),
        ];
        let b = ClaudeBackend::new(
            "claude".into(),
            &command,
            &["--max-turns".into(), "30".into()],
            None,
        );
        assert_eq!(b.program, "npx");
        let args = b.args(Role::Verify);
        assert_eq!(&args[..3], ["-y", "@anthropic-ai/claude-code", "-p"]);
        assert_eq!(&args[args.len() - 2..], ["--max-turns", "30"]);
        let b = ClaudeBackend::new("/opt/claude".into(), &[], &[], Some("opus".into()));
        assert_eq!(
            (b.program.as_str(), b.describe()),
            ("/opt/claude", "claude (opus)".into())
        );
    }

    #[test]
    fn a_models_host_is_its_base_url_or_its_vendors() {
        let m = |model: &str, url: Option<&str>| ModelSettings {
            model: Some(model.into()),
            base_url: url.map(String::from),
            key_var: None,
        };
        assert_eq!(
            model_hosts(&m("x", Some("https://llm.corp.test:8443/v1"))),
            ["llm.corp.test:8443"]
        );
        assert_eq!(
            model_hosts(&m("anthropic/claude-sonnet-4-5", None)),
            ["api.anthropic.com"]
        );
        assert_eq!(model_hosts(&m("sonnet", None)), ["api.anthropic.com"]);
        assert_eq!(model_hosts(&m("gpt-4.1", None)), ["api.openai.com"]);
        assert_eq!(
            model_hosts(&m("openrouter/qwen/qwen3-coder", None)),
            ["openrouter.ai"]
        );
        assert_eq!(
            model_hosts(&m("gemini/gemini-2.5-pro", None)),
            ["generativelanguage.googleapis.com"]
        );
        assert!(model_hosts(&m("mystery-7b", None)).is_empty());
        assert!(model_hosts(&ModelSettings::default()).is_empty());
    }

    #[test]
    fn api_errors_in_text_name_their_status() {
        let gemini = r#"[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]"#;
        assert_eq!(
            api_error_in(gemini),
            Some((Some(401), "API key not valid.".into()))
        );
        let qwen = "[API Error: 429 Rate limit reached for m (quota)]\nPossible quota limitations";
        assert_eq!(
            api_error_in(qwen),
            Some((Some(429), "Rate limit reached for m (quota)".into()))
        );
        assert_eq!(
            api_error_in("[API Error: Model stream ended without a finish reason.]"),
            Some((None, "Model stream ended without a finish reason.".into()))
        );
        assert_eq!(api_error_in("an answer about API errors"), None);
        assert_eq!(
            status_reason(429, "Resource has been exhausted (e.g. check quota)"),
            "out of quota"
        );
        assert_eq!(status_reason(429, "slow down"), "rate limited");
        assert_eq!(status_reason(404, ""), "the model was not found");
    }

    #[test]
    fn jsonl_events_skip_blank_lines_and_count_the_others() {
        let (events, skipped) =
            jsonl_events::<serde_json::Value>("{\"a\":1}\n\n  \nnot json\n {\"b\":2} \n{cut");
        assert_eq!(events.len(), 2);
        assert_eq!(skipped, 2, "the line that is not JSON and the cut one");
    }

    fn output(code: i32, stdout: &str) -> Output {
        Output {
            code: Some(code),
            stdout: stdout.into(),
            stderr: "the stderr tail".into(),
            truncated: false,
            timed_out: false,
            duration: Duration::from_secs(2),
        }
    }

    #[test]
    fn the_transcripts_report_beats_the_exit_code() {
        let answer = |_: &str| {
            Ok(Transcript {
                text: "the answer".into(),
                warnings: vec!["a retry".into()],
                ..Transcript::default()
            })
        };
        let r = reply("claude", &output(0, ""), answer).unwrap();
        assert_eq!(
            (r.text.as_str(), r.duration),
            ("the answer", Duration::from_secs(2))
        );
        assert_eq!(r.warnings, ["a retry"]);
        let e = reply("claude", &output(1, ""), answer).unwrap_err();
        assert!(
            matches!(e, AgentError::Exit { .. }),
            "an answer, but exit 1: {e}"
        );
        let auth = |_: &str| Err(CliError::reported("invalid key", Some(401)));
        let e = reply("codex", &output(1, ""), auth).unwrap_err();
        assert_eq!(
            e.to_string(),
            "codex rejected the credentials: HTTP 401: invalid key"
        );
        let overloaded = |_: &str| Err(CliError::reported("overloaded", Some(529)));
        let e = reply("codex", &output(1, ""), overloaded).unwrap_err();
        assert_eq!(
            e.to_string(),
            "codex reported an error: the model API failed (HTTP 529): overloaded"
        );
        let missing = |_: &str| Err(CliError::missing("no result"));
        let e = reply("claude", &output(0, ""), missing).unwrap_err();
        assert_eq!(e.to_string(), "claude reported an error: no result");
        let e = reply("claude", &output(3, ""), missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            "claude exited with exit code 3: the stderr tail"
        );
    }
}
