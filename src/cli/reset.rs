//! `ralph reset`: delete the event log and the caches (`marketplace.json`, `runs/`), keeping
//! the configuration, local issues and prompt overrides. Asks on a terminal; otherwise needs
//! `--yes`, and refuses without it.

use super::Context;
use crate::error::{Exit, UserError};
use crate::ledger::Ledger;
use anyhow::{Context as _, Result};
use clap::Args;
use std::fs;
use std::io::{self, BufRead, IsTerminal, Write};

#[derive(Debug, Args)]
pub struct ResetArgs {
    /// Do not ask for confirmation
    #[arg(short, long)]
    pub yes: bool,
}

pub async fn run(ctx: &Context, args: ResetArgs) -> Result<Exit> {
    let ralph = &ctx.ralph_dir;
    let ledger = Ledger::new(ralph);
    let files = ledger
        .store()
        .list()
        .with_context(|| format!("cannot list {}", ledger.store().dir().display()))?;
    let cache = ledger.cache_path();
    let runs = ralph.join("runs");
    if files.is_empty() && !cache.exists() && !runs.exists() {
        ctx.printer
            .status("Nothing to reset: no events and no caches.");
        return Ok(Exit::Success);
    }
    let question = format!(
        "Delete {} event file(s) in {}, and the caches? The configuration is kept. [y/N] ",
        files.len(),
        ledger.store().dir().display()
    );
    if !args.yes {
        if !io::stdin().is_terminal() {
            return Err(UserError::usage(format!(
                "refusing to delete {} event file(s) without confirmation",
                files.len()
            ))
            .with_hint("run `ralph reset --yes` to confirm when not on a terminal")
            .into());
        }
        let confirmed = tokio::task::spawn_blocking(move || ask(&question))
            .await
            .context("the confirmation prompt failed")??;
        if !confirmed {
            ctx.printer.status("Nothing deleted.");
            return Ok(Exit::Success);
        }
    }
    let mut deleted = 0usize;
    for f in &files {
        let path = ledger.store().dir().join(&f.name);
        match fs::remove_file(&path) {
            Ok(()) => deleted += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot delete {}", path.display())),
        }
    }
    if cache.exists() {
        fs::remove_file(&cache).with_context(|| format!("cannot delete {}", cache.display()))?;
    }
    if runs.exists() {
        fs::remove_dir_all(&runs).with_context(|| format!("cannot delete {}", runs.display()))?;
    }
    if ctx.printer.json_mode() {
        ctx.printer
            .json(&serde_json::json!({ "deleted_events": deleted, "caches_cleared": true }))?;
    } else {
        ctx.printer.data(&format!(
            "Deleted {deleted} event file(s) and the caches.\n"
        ))?;
    }
    Ok(Exit::Success)
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
