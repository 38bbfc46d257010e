//! Asking the person at the terminal: a yes/no question on stderr, the answer from stdin, and
//! the rule every destructive or re-arming command follows — ask on a terminal, otherwise
//! refuse unless `--yes` was given.

use crate::error::UserError;
use anyhow::{Context as _, Result};
use std::io::{self, BufRead, IsTerminal, Write};

/// `true` when the user confirmed: `--yes`, or "y" at the prompt on a terminal. Off a terminal
/// without `--yes` it refuses with `refusal` and a hint to pass `--yes`.
pub async fn confirm(question: &str, yes: bool, refusal: String, hint: &str) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !io::stdin().is_terminal() {
        return Err(UserError::usage(refusal).with_hint(hint).into());
    }
    let question = question.to_owned();
    tokio::task::spawn_blocking(move || ask(&question))
        .await
        .context("the confirmation prompt failed")?
        .context("cannot read the answer")
}

fn ask(question: &str) -> io::Result<bool> {
    // The stderr lock must not be held while waiting for the answer: Ctrl-C prints on stderr
    // from another thread, which would otherwise wait for this one forever.
    {
        let mut err = io::stderr().lock();
        err.write_all(question.as_bytes())?;
        err.flush()?;
    }
    let mut answer = String::new();
    io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
