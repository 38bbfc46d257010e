//! `ralph events`: list the ledger's events (filtered by `--bot` / `--issue`), and
//! `ralph events verify`: read and validate every event file, name the bad ones, and check that
//! the leaderboard's cache still matches the files (exit 1 on either).

use super::Context;
use crate::error::Exit;
use crate::ledger::{CacheCheck, Event, EventFile, Ledger, Loaded, LoadedEvent, Skipped};
use crate::render;
use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use serde::Serialize;

/// One element of `ralph events --json`: the file name, then the event's own fields.
#[derive(Serialize)]
struct EventRow<'a> {
    file: &'a str,
    #[serde(flatten)]
    event: &'a Event,
}

/// The document of `ralph events verify --json`.
#[derive(Serialize)]
struct VerifyJson<'a> {
    directory: String,
    valid: usize,
    invalid: &'a [Skipped],
    /// `current`, `stale` (an event file changed in place), `absent`, or null when the
    /// configuration could not be read to check it.
    cache: Option<CacheCheck>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EventsArgs {
    #[command(subcommand)]
    pub action: Option<EventsAction>,
    /// Only events of this bot
    #[arg(long, value_name = "BOT_ID")]
    pub bot: Option<String>,
    /// Only events of this issue
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum EventsAction {
    /// Read and validate every event file, name each bad one, and check the leaderboard's
    /// cache against the files (exit 1 on a bad file or a stale cache)
    Verify,
    /// Commit the new event files to a branch and push them (for CI), retrying on races
    Push(PushArgs),
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The branch to commit the events to (default: `[git] base`, else the remote's default
    /// branch, else the current branch)
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
}

pub async fn run(ctx: &Context, args: EventsArgs) -> Result<Exit> {
    if let Some(EventsAction::Push(push)) = &args.action {
        return push_events(ctx, push).await;
    }
    let ledger = Ledger::new(&ctx.ralph_dir);
    let files = ledger.store().list().with_context(|| {
        format!(
            "cannot read the event log in {}",
            ledger.store().dir().display()
        )
    })?;
    let loaded = ledger.store().load(&files);
    match args.action {
        Some(EventsAction::Verify) => verify(ctx, &ledger, &files, &loaded),
        Some(EventsAction::Push(_)) => unreachable!("handled above"),
        None => list(ctx, &args, &loaded),
    }
}

fn list(ctx: &Context, args: &EventsArgs, loaded: &Loaded) -> Result<Exit> {
    let selected: Vec<&LoadedEvent> = loaded
        .events
        .iter()
        .filter(|l| args.bot.as_deref().is_none_or(|b| l.event.bot_id == b))
        .filter(|l| args.issue.is_none_or(|n| l.event.issue_number == n))
        .collect();
    if ctx.printer.json_mode() {
        let rows: Vec<EventRow<'_>> = selected
            .iter()
            .map(|l| EventRow {
                file: &l.file,
                event: &l.event,
            })
            .collect();
        ctx.printer.json(&rows)?;
    } else if selected.is_empty() {
        ctx.printer.status(if loaded.events.is_empty() {
            "No events yet."
        } else {
            "No events match."
        });
    } else {
        ctx.printer
            .data(&render::terminal::events(&selected, ctx.printer.paint()))?;
    }
    if !loaded.skipped.is_empty() {
        ctx.printer.warn(&format!(
            "{} event file(s) could not be used; `ralph events verify` names them",
            loaded.skipped.len()
        ));
    }
    Ok(Exit::Success)
}

fn verify(ctx: &Context, ledger: &Ledger, files: &[EventFile], loaded: &Loaded) -> Result<Exit> {
    let valid = loaded.events.len();
    let bad = &loaded.skipped;
    // The leaderboard trusts its cache while the file names are unchanged; every file has
    // just been read, so this is where a file changed in place shows. The fold parameters
    // come from the configuration; without one there is nothing to compare.
    let cache = match ctx.settings() {
        Ok(settings) => Some(ledger.check_cache(&settings.config.fold_params(), files, loaded)),
        Err(e) => {
            tracing::debug!("the ledger cache is not checked: {e:#}");
            None
        }
    };
    let stale = cache == Some(CacheCheck::Stale);
    if ctx.printer.json_mode() {
        ctx.printer.json(&VerifyJson {
            directory: ledger.store().dir().display().to_string(),
            valid,
            invalid: bad,
            cache,
        })?;
    } else {
        let p = ctx.printer.paint();
        let mut text = String::new();
        for s in bad {
            text.push_str(&format!(
                "{} {}: {}\n",
                p.bad("bad"),
                crate::output::sanitize(&s.file),
                crate::output::sanitize(&s.reason)
            ));
        }
        if stale {
            text.push_str(&format!(
                "{} {}: it does not match the event files under the same names, so one was changed in place; `ralph leaderboard --rebuild` rewrites it\n",
                p.bad("stale"),
                ledger.cache_path().display()
            ));
        }
        text.push_str(&format!(
            "{valid} valid event file(s), {} bad in {}{}\n",
            bad.len(),
            ledger.store().dir().display(),
            if stale {
                "; the leaderboard's cache is stale"
            } else {
                ""
            }
        ));
        ctx.printer.data(&text)?;
    }
    Ok(if bad.is_empty() && !stale {
        Exit::Success
    } else {
        Exit::Failure
    })
}

/// `ralph events push`: the new event files, committed and pushed from a temporary worktree.
async fn push_events(ctx: &Context, args: &PushArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let git = &settings.config.git;
    let root = settings.root.clone();
    let remote = git.remote.clone();
    let branch = args
        .branch
        .clone()
        .or_else(|| git.base.clone())
        .or_else(|| crate::workspace::default_branch(&root, &remote))
        .ok_or_else(|| {
            crate::error::UserError::usage("cannot tell which branch the events belong on")
                .with_hint("pass --branch BRANCH, or set `[git] base` in .ralph/config.toml")
        })?;
    let token = crate::tracker::push_token(&settings);
    let checkouts = settings.checkouts()?;
    let pushed = crate::workspace::push_events(
        &root,
        &crate::workspace::LedgerTarget {
            remote: &remote,
            branch: &branch,
            author_name: &git.author_name,
            author_email: &git.author_email,
            message: "ralph: record marketplace events",
            token: token.as_ref(),
            deadline: std::time::Duration::from_secs(settings.config.push_deadline_secs.into()),
            checkouts: &checkouts,
        },
    )
    .await?;
    if ctx.printer.json_mode() {
        ctx.printer.json(&pushed)?;
    } else if pushed.files.is_empty() {
        ctx.printer.status(&format!(
            "No new event files: `{branch}` already has them all"
        ));
    } else {
        ctx.printer.status(&format!(
            "Pushed {} event file(s) to `{}` ({} attempt(s))",
            pushed.files.len(),
            pushed.branch,
            pushed.attempts
        ));
    }
    Ok(Exit::Success)
}
