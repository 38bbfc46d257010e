//! Exit codes (docs/specification.md §2), the error a command raises when the user can act on it
//! ([`UserError`]: a message, a hint, an exit code), and [`chain_text`]. A leaf: it imports
//! nothing of ralph, so every module may use it; which adapter error maps to which exit code
//! is decided next to the command line (`cli::exit`).

/// The process exit codes of docs/specification.md §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what it was asked.
    Success = 0,
    /// The command ran and found a failure (a failed competition, invalid event files).
    Failure = 1,
    /// Usage, configuration or preflight error: nothing was done.
    Usage = 2,
    /// Stopped by a hang-up (SIGHUP): 128 + 1.
    HangUp = 129,
    /// Interrupted by Ctrl-C (SIGINT): 128 + 2.
    Interrupted = 130,
    /// Terminated (SIGTERM, how CI cancels a job): 128 + 15.
    Terminated = 143,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The context of an error raised after a competition changed something (labels, a branch):
/// whatever the cause, the run exits 1, never 2 ("nothing was done").
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the run stopped after it had changed the issue")]
pub struct AfterChanges;

/// An error the user can act on, with its exit code and an optional hint.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
    pub exit: Exit,
}

impl UserError {
    /// A usage or preflight error (exit 2).
    pub fn usage(message: impl Into<String>) -> UserError {
        UserError {
            message: message.into(),
            hint: None,
            exit: Exit::Usage,
        }
    }

    /// A failure found by the command (exit 1).
    pub fn failure(message: impl Into<String>) -> UserError {
        UserError {
            message: message.into(),
            hint: None,
            exit: Exit::Failure,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> UserError {
        self.hint = Some(hint.into());
        self
    }
}

/// An error and its causes on one line, `outer: inner: …`, each message once: layered errors
/// (HTTP clients, process spawns) often repeat their inner error's words.
pub fn chain_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn chain_text_joins_causes_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("client error (Connect): {0}")]
        struct Outer(#[source] io::Error);
        let e = Outer(io::Error::new(io::ErrorKind::ConnectionRefused, "refused"));
        assert_eq!(chain_text(&e), "client error (Connect): refused");
        let e = anyhow::Error::new(io::Error::other("disk full")).context("cannot write");
        assert_eq!(chain_text(e.as_ref()), "cannot write: disk full");
    }
}
