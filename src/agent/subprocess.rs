//! What every subprocess backend shares: the environment of SPEC §4 (`RALPH_ROLE`,
//! `RALPH_BOT_ID`, `RALPH_ISSUE`, `RALPH_ROUND`, `RALPH_PHASE`, `RALPH_WORKDIR`), the working
//! directory, secrets scrubbed from the environment, the prompt on stdin, the timeout and the
//! bounded capture — and turning the outcome into an [`AgentError`] when it failed.

use super::{AgentCall, AgentError, AgentReply, Usage};
use crate::error::chain_text;
use crate::process::{self, Cmd, Output, ProcessError};

/// Each captured stream keeps at most this much (head and tail): a bot printing a gigabyte
/// costs ralph 16 MiB.
pub const MAX_AGENT_OUTPUT: usize = 16 << 20;

/// The command for one call: `program args…` in the call's working directory, with the
/// protocol environment, the prompt on stdin and the call's timeout.
pub fn agent_cmd(program: &str, args: &[String], call: &AgentCall) -> Cmd {
    let mut cmd = Cmd::new(program)
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

/// Runs an agent command and returns its output when it exited 0 in time.
pub async fn run_agent(backend: &str, cmd: &Cmd, call: &AgentCall) -> Result<Output, AgentError> {
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
    if !out.success() {
        let status = match out.code {
            Some(c) => format!("exit code {c}"),
            None => "a signal".to_owned(),
        };
        return Err(AgentError::Exit {
            backend: backend.to_owned(),
            status,
            tail: out.tail(20),
        });
    }
    if out.truncated {
        tracing::warn!(
            "{backend}: output exceeded {MAX_AGENT_OUTPUT} bytes; the middle was dropped"
        );
    }
    Ok(out)
}

/// What a CLI's transcript yields.
pub struct Parsed {
    pub text: String,
    pub usage: Usage,
    pub session_id: Option<String>,
}

/// Runs an agent CLI whose stdout is a transcript, and parses it with `parse` (whose error is
/// the CLI's own report).
pub async fn call_cli(
    backend: &str,
    program: &str,
    args: &[String],
    call: &AgentCall,
    parse: impl FnOnce(&str) -> Result<Parsed, String>,
) -> Result<AgentReply, AgentError> {
    let cmd = agent_cmd(program, args, call);
    let out = run_agent(backend, &cmd, call).await?;
    let parsed = parse(&out.stdout).map_err(|message| AgentError::Reported {
        backend: backend.to_owned(),
        message,
    })?;
    Ok(AgentReply {
        text: parsed.text,
        usage: parsed.usage,
        duration: out.duration,
        session_id: parsed.session_id,
    })
}
