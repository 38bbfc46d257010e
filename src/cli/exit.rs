//! The one place an error becomes an exit code and text for the user: which adapter errors
//! (tracker, configuration, workspace, prompt templates) are usage errors (exit 2) and what
//! hint goes with each, and the rendering — `error: …`, one `Caused by: …` line per cause, and
//! a `hint: …` when there is something to do.

use crate::agent::prompts::PromptError;
use crate::config::ConfigError;
use crate::error::{AfterChanges, Exit, UserError};
use crate::output::{sanitize, Paint};
use crate::secret::redact;
use crate::tracker::TrackerError;
use crate::workspace::WorkspaceError;
use std::fmt::Write as _;
use std::io;

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
    // anyhow finds its context types on the error itself, not among the causes.
    let changed = err.downcast_ref::<AfterChanges>().is_some();
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
        if let Some(e) = cause.downcast_ref::<WorkspaceError>() {
            if let Some(hint) = e.hint() {
                out.exit = Exit::Usage;
                out.hint = Some(hint.to_owned());
                break;
            }
        }
        if cause.downcast_ref::<PromptError>().is_some() {
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
    if changed && out.exit == Exit::Usage {
        out.exit = Exit::Failure;
    }
    out
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
    use crate::error::UserError;
    use anyhow::Context;

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
    fn after_a_competition_changed_anything_no_error_exits_two() {
        let err = anyhow::Error::new(UserError::usage("refused").with_hint("do this"))
            .context(crate::error::AfterChanges);
        let c = classify(&err);
        assert_eq!(c.exit, Exit::Failure);
        assert_eq!(c.hint.as_deref(), Some("do this"));
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
