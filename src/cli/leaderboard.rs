//! `ralph leaderboard` (alias `status`): the bots ranked by weight, from the cached fold when
//! the ledger's file names are unchanged; `--rebuild` folds every file afresh; `--json` for
//! machines, `--html FILE` for a page with a chart.

use super::Context;
use crate::error::Exit;
use crate::fsutil::write_atomic;
use crate::ledger::backends::BackendStanding;
use crate::ledger::{
    ArbiterHealth, BotStanding, CacheUse, EventSummary, Ledger, LedgerState, Skipped,
};
use crate::render;
use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct LeaderboardArgs {
    /// Also write a self-contained HTML report with a chart of each bot's weight over time
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Ignore the cache: read and fold every event file, then rewrite the cache (picks up an
    /// event file edited in place)
    #[arg(long)]
    pub rebuild: bool,
}

pub fn run(ctx: &Context, args: LeaderboardArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let ledger = Ledger::new(&settings.ralph_dir);
    let params = settings.config.fold_params();
    let folded = if args.rebuild {
        ledger.rebuild(&params)
    } else {
        ledger.state(&params)
    };
    let (state, cache) = folded.with_context(|| {
        format!(
            "cannot read the event log in {}",
            ledger.store().dir().display()
        )
    })?;
    tracing::debug!(?cache, events = state.event_count, "ledger state");

    // Per backend, from what the configuration runs each bot with now.
    let backends = crate::ledger::backends::by_backend(&state.bots, |id| {
        let bot = settings.config.bots.iter().find(|b| b.id == id)?;
        Some(bot.agent.backend.as_str().to_owned())
    });
    if let Some(path) = &args.html {
        let name = settings
            .repo
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| {
                settings
                    .root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "repository".to_owned());
        let page = render::html::render(&state, &backends, &name, chrono::Utc::now());
        write_atomic(path, page.as_bytes())
            .with_context(|| format!("cannot write the HTML report to {}", path.display()))?;
        ctx.printer
            .status(&format!("Wrote the HTML leaderboard to {}", path.display()));
    }

    if ctx.printer.json_mode() {
        ctx.printer.json(&json(&state, &backends, cache))?;
    } else {
        let mut text = render::terminal::leaderboard(&state, ctx.printer.paint());
        if state.event_count > 0 {
            text.push_str(&render::terminal::backends(&backends, ctx.printer.paint()));
        }
        ctx.printer.data(&text)?;
        if !settings.ralph_dir.is_dir() {
            ctx.printer.status(&format!(
                "No .ralph directory in {}: showing the default bots. `ralph init` creates one.",
                settings.root.display()
            ));
        }
    }
    warn_skipped(ctx, &state);
    Ok(Exit::Success)
}

/// The `--json` document (README: "JSON output").
#[derive(Serialize)]
struct LeaderboardJson<'a> {
    bots: &'a [BotStanding],
    total_budget_pool: u32,
    event_count: u64,
    skipped: &'a [Skipped],
    recent: &'a [EventSummary],
    arbiter_health: ArbiterHealth,
    /// The judges' order flip rate and the audits' selection efficiency.
    decisions: &'a crate::ledger::decisions::Decisions,
    /// With `[marketplace] seats`: seats won, posteriors, costs, the latest draw.
    #[serde(skip_serializing_if = "Option::is_none")]
    seating: Option<&'a crate::ledger::seats::SeatBoard>,
    /// The bots grouped by the backend the configuration runs them with.
    backends: &'a [BackendStanding],
    /// `hit` (no event file was read), `rebuilt` or `uncached`.
    cache: &'static str,
}

fn json<'a>(
    state: &'a LedgerState,
    backends: &'a [BackendStanding],
    cache: CacheUse,
) -> LeaderboardJson<'a> {
    LeaderboardJson {
        bots: &state.bots,
        backends,
        total_budget_pool: state.total_budget_pool,
        event_count: state.event_count,
        skipped: &state.skipped,
        recent: &state.recent,
        arbiter_health: state.arbiter_health,
        decisions: &state.decisions,
        seating: state.seating.as_ref(),
        cache: match cache {
            CacheUse::Hit => "hit",
            CacheUse::Rebuilt => "rebuilt",
            CacheUse::Uncached => "uncached",
        },
    }
}

fn warn_skipped(ctx: &Context, state: &LedgerState) {
    if state.skipped.is_empty() {
        return;
    }
    ctx.printer.warn(&format!(
        "skipped {} event file(s) that could not be used (they are kept; `ralph events verify` lists them):",
        state.skipped.len()
    ));
    for s in state.skipped.iter().take(10) {
        ctx.printer.warn(&format!("  {}: {}", s.file, s.reason));
    }
    if state.skipped.len() > 10 {
        ctx.printer
            .warn(&format!("  … and {} more", state.skipped.len() - 10));
    }
}
