//! Exit codes and the one place errors are turned into them and rendered for the user:
//! `error: …`, one `Caused by: …` line per cause, and a `hint: …` when there is something to do.

use crate::config::ConfigError;
use crate::output::{sanitize, Paint};
use crate::secret::redact;
use crate::tracker::TrackerError;
use std::fmt::Write as _;
use std::io;

/// The process exit codes of SPEC §2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what it was asked.
    Success = 0,
    /// The command ran and found a failure (a failed competition, invalid event files).
    Failure = 1,
    /// Usage, configuration or preflight error: nothing was done.
    Usage = 2,
    /// Interrupted by Ctrl-C.
    Interrupted = 130,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

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

/// How an error ends the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub exit: Exit,
    pub hint: Option<String>,
    /// The error is a closed stdout (`ralph leaderboard | head`): exit quietly with 0.
    pub broken_pipe: bool,
}

/// Finds the exit code and hint of an error by looking through its causes. Errors ralph does
/// not know exit with 1.
pub fn classify(err: &anyhow::Error) -> Classified {
    let mut out = Classified {
        exit: Exit::Failure,
        hint: None,
        broken_pipe: false,
    };
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<UserError>() {
            out.exit = e.exit;
            out.hint = out.hint.or_else(|| e.hint.clone());
            break;
        }
        if let Some(e) = cause.downcast_ref::<TrackerError>() {
            out.exit = e.exit();
            out.hint = out.hint.or_else(|| e.hint());
            break;
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            out.exit = Exit::Usage;
            out.hint = Some(e.hint());
            break;
        }
        if let Some(e) = cause.downcast_ref::<crate::workspace::WorkspaceError>() {
            if let Some(hint) = e.hint() {
                out.exit = Exit::Usage;
                out.hint = Some(hint.to_owned());
                break;
            }
        }
        if cause
            .downcast_ref::<crate::agent::prompts::PromptError>()
            .is_some()
        {
            out.exit = Exit::Usage;
            out.hint = Some(
                "fix or remove the template override in .ralph/prompts/ (its variables are listed in prompts/README.md of ralph's source)".into(),
            );
            break;
        }
        if let Some(e) = cause.downcast_ref::<io::Error>() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                out.broken_pipe = true;
                out.exit = Exit::Success;
            }
        }
    }
    out
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

/// Renders an error for stderr. Every line is sanitised: error messages may quote file
/// names or content that came from outside.
pub fn render(err: &anyhow::Error, hint: Option<&str>, paint: Paint) -> String {
    let mut out = String::new();
    let mut chain = err.chain();
    if let Some(top) = chain.next() {
        let _ = writeln!(
            out,
            "{} {}",
            paint.error("error:"),
            sanitize_multiline(&top.to_string())
        );
    }
    for cause in chain {
        let _ = writeln!(
            out,
            "{} {}",
            paint.dim("Caused by:"),
            sanitize_multiline(&cause.to_string())
        );
    }
    if let Some(hint) = hint {
        let _ = writeln!(out, "{} {}", paint.hint("hint:"), sanitize_multiline(hint));
    }
    out
}

/// Sanitises each line and indents continuation lines under the label.
fn sanitize_multiline(text: &str) -> String {
    redact(text)
        .lines()
        .map(sanitize)
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

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

    #[test]
    fn user_errors_keep_their_exit_code_and_hint_through_context() {
        let err = anyhow::Error::new(UserError::usage("bad input").with_hint("try again"))
            .context("while doing the thing");
        let c = classify(&err);
        assert_eq!(c.exit, Exit::Usage);
        assert_eq!(c.hint.as_deref(), Some("try again"));
        let text = render(&err, c.hint.as_deref(), Paint::plain());
        assert_eq!(
            text,
            "error: while doing the thing\nCaused by: bad input\nhint: try again\n"
        );
    }

    #[test]
    fn unknown_errors_exit_one_and_broken_pipes_exit_zero() {
        let err = anyhow::anyhow!("disk on fire");
        assert_eq!(classify(&err).exit, Exit::Failure);
        let pipe: anyhow::Result<()> =
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed")).context("writing stdout");
        let c = classify(&pipe.unwrap_err());
        assert!(c.broken_pipe);
        assert_eq!(c.exit, Exit::Success);
    }

    #[test]
    fn rendered_errors_have_no_control_characters() {
        let err = anyhow::anyhow!("bad file \u{1b}[31mred\u{202e}txt.json");
        let text = render(&err, None, Paint::plain());
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
    }
}
