//! An agent CLI as a backend: what Claude Code ([`claude`](super::claude)) and Codex
//! ([`codex`](super::codex)) share. Both are started as the configured command's program and
//! leading arguments, then ralph's own arguments for the role, then the user's `args`; both get
//! their own keys, endpoints and state (a private copy for the call in the sandbox), the prompt
//! on stdin, and print a transcript — read line by line for the live view as it arrives, and
//! whole when the call ends, when the CLI's own report of an error beats the exit code. What
//! sets one CLI apart — its name, its arguments, how its transcript reads, the variables and
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

    /// ralph's arguments for `role` with the configured `model`, and the user's `extra` ones
    /// where the CLI takes them (after the command's leading arguments).
    fn args(role: Role, model: Option<&str>, extra: &[String]) -> Vec<String>;

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
    fn endpoints(home: Option<&Path>) -> Vec<String>;
}

/// The host (and port) of `url` as the sandbox's allowlist names it, when it is a URL.
pub fn endpoint_of(url: Option<String>) -> Option<String> {
    url.and_then(|u| crate::process::egress::endpoint(&u))
        .map(|r| r.text())
}

/// A backend that runs the agent CLI `C`.
pub struct CliBackend<C> {
    program: String,
    /// Leading arguments of `command` (`["npx", "-y", "@anthropic-ai/claude-code"]` → the
    /// last two).
    leading: Vec<String>,
    /// `args`, where `C` puts them among ralph's.
    extra: Vec<String>,
    model: Option<String>,
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
            model,
            cli: PhantomData,
        }
    }

    /// The arguments for a role.
    pub fn args(&self, role: Role) -> Vec<String> {
        let mut args = self.leading.clone();
        args.extend(C::args(role, self.model.as_deref(), &self.extra));
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
            .hosts(C::endpoints(home));
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
        match &self.model {
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
        // In the sandbox the CLI's state is a private copy for this call alone.
        let sandboxed = crate::process::sandbox::current().is_some_and(|s| s.status().active);
        let private = sandboxed
            .then(|| CallState::copy(C::NAME, home.as_deref()))
            .flatten();
        let cmd = self.command(call, home.as_deref(), private.as_ref());
        let out = run_agent_output(&backend, &cmd, call).await;
        if let Some(kept) = private
            .as_ref()
            .and_then(|s| s.keep_refreshed_login(C::NAME))
        {
            tracing::info!("{kept}");
        }
        drop(private);
        reply(&backend, &out?, C::parse)
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
            "codex reported an error: HTTP 529: overloaded"
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
