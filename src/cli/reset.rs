//! `ralph reset`: delete the event log and the caches (`marketplace.json`, `runs/`), keeping
//! the configuration, local issues and prompt overrides. Asks on a terminal; otherwise needs
//! `--yes`, and refuses without it.

use super::Context;
use crate::error::Exit;
use crate::ledger::Ledger;
use anyhow::{Context as _, Result};
use clap::Args;
use std::fs;
use std::io;

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
    let confirmed = super::prompt::confirm(
        &question,
        args.yes,
        format!(
            "refusing to delete {} event file(s) without confirmation",
            files.len()
        ),
        "run `ralph reset --yes` to confirm when not on a terminal",
    )
    .await?;
    if !confirmed {
        ctx.printer.status("Nothing deleted.");
        return Ok(Exit::Success);
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
