//! `ralph reset`: delete the event log, the caches (`marketplace.json`, `runs/`) and ralph's
//! checkouts of the repository (their branches stay), keeping the configuration, local issues
//! and prompt overrides. Asks on a terminal; otherwise needs `--yes`, and refuses without it.
//! With `--issue N`, only what the runs on issue N left (see [`super::reset_issue`]).

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
    /// Only issue N: remove its branch, ralph's checkouts of it and its run state, so that
    /// `ralph compete N` starts again from scratch (events, caches and the remote stay)
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
}

pub async fn run(ctx: &Context, args: ResetArgs) -> Result<Exit> {
    if let Some(n) = args.issue {
        return super::reset_issue::run(ctx, n, args.yes).await;
    }
    let ralph = &ctx.ralph_dir;
    let ledger = Ledger::new(ralph);
    let files = ledger
        .store()
        .list()
        .with_context(|| format!("cannot list {}", ledger.store().dir().display()))?;
    let cache = ledger.cache_path();
    let runs = ralph.join("runs");
    let checkouts = checkouts_of(ctx);
    let legacy = ctx.root.join(crate::workspace::LEGACY_DIR);
    let has_checkouts = checkouts.as_ref().is_some_and(|d| d.is_dir()) || legacy.is_dir();
    if files.is_empty() && !cache.exists() && !runs.exists() && !has_checkouts {
        ctx.printer
            .status("Nothing to reset: no events, no caches and no checkouts.");
        return Ok(Exit::Success);
    }
    let question = format!(
        "Delete {} event file(s) in {}, the caches{}? The configuration is kept. [y/N] ",
        files.len(),
        ledger.store().dir().display(),
        match (&checkouts, has_checkouts) {
            (Some(dir), true) => format!(
                " and ralph's checkouts of this repository in {} (their branches stay)",
                dir.display()
            ),
            _ => String::new(),
        }
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
    // Checkouts a run is still working in stay: their locks are under `runs/`, checked first.
    let removed = remove_checkouts(ctx, checkouts.as_deref()).await;
    if runs.exists() {
        fs::remove_dir_all(&runs).with_context(|| format!("cannot delete {}", runs.display()))?;
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "deleted_events": deleted,
            "caches_cleared": true,
            "removed_checkouts": removed,
        }))?;
    } else {
        ctx.printer.data(&format!(
            "Deleted {deleted} event file(s), the caches and {} checkout(s).\n",
            removed.len()
        ))?;
    }
    Ok(Exit::Success)
}

/// The folder of the repository's checkouts, as the configuration (or, when it cannot be read,
/// the default) places it.
pub(super) fn checkouts_of(ctx: &Context) -> Option<std::path::PathBuf> {
    match ctx.settings() {
        Ok(settings) => settings.checkouts().ok(),
        Err(_) => crate::workspace::checkouts_dir(&ctx.root, None).ok(),
    }
}

/// Removes ralph's checkouts of the repository (and an earlier version's, inside it) with their
/// registrations, but those a running competition holds; what it removed. What it could not
/// remove is said as a warning.
async fn remove_checkouts(ctx: &Context, checkouts: Option<&std::path::Path>) -> Vec<String> {
    let busy = |label: &str| super::checkout_in_use(&ctx.ralph_dir, label);
    let mut removed = Vec::new();
    let legacy = crate::workspace::retire_legacy(&ctx.root, &busy).await;
    let current = match checkouts {
        Some(dir) => crate::workspace::remove_checkouts(&ctx.root, dir, &busy).await,
        None => Ok(Default::default()),
    };
    for done in [legacy, current] {
        match done {
            Ok(done) => {
                removed.extend(done.removed);
                for kept in done.kept {
                    ctx.printer.warn(&format!("a checkout was left: {kept}"));
                }
            }
            Err(e) => ctx
                .printer
                .warn(&format!("could not remove the checkouts: {e}")),
        }
    }
    removed
}
