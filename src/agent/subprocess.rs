//! What every subprocess backend shares: the environment of docs/specification.md §4 (`RALPH_ROLE`,
//! `RALPH_BOT_ID`, `RALPH_ISSUE`, `RALPH_ROUND`, `RALPH_PHASE`, `RALPH_WORKDIR`), the working
//! directory, secrets scrubbed from the environment, the prompt on stdin, the timeout and the
//! bounded capture — and turning the outcome into an [`AgentError`] when it failed.

use super::{AgentCall, AgentError};
use crate::error::chain_text;
use crate::process::{self, Cmd, Confinement, Kind, Output, ProcessError};
use std::path::PathBuf;

/// Each captured stream keeps at most this much (head and tail): a bot printing a gigabyte
/// costs ralph 16 MiB.
const MAX_AGENT_OUTPUT: usize = 16 << 20;

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
pub fn exit_error(backend: &str, out: &Output) -> AgentError {
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
