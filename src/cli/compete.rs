//! `ralph compete N`: the competition on issue N (SPEC §6). This version runs the read-only
//! front half, `--dry-run`: requirements, proposals from every bot, blind judging, scoring and
//! the ranking, printed as a table (or, with `--json`, the run report) — nothing is written to
//! the tracker, the ledger or git. The implementation half (worktree, checks, events, PR) is
//! not built yet, so without `--dry-run` the command refuses with exit 2 and says so.

use super::Context;
use crate::compete::agents::Agents;
use crate::compete::report::{render_round, RunOutcome};
use crate::compete::{dry_run, DryRunInput};
use crate::error::{Exit, UserError};
use crate::tracker::{self, IssueState};
use anyhow::Result;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompeteArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
    /// Proposals, scores and ranking only; nothing is written anywhere
    #[arg(long)]
    pub dry_run: bool,
    /// Use only the first K configured bots
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub bots: Option<u32>,
    /// Record every agent's answers into DIR, in the layout the replay backend reads
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// The blind-order seed (to reproduce a ranking); random by default
    #[arg(long, value_name = "SEED", hide = true)]
    pub seed: Option<u64>,
}

pub async fn run(ctx: &Context, args: CompeteArgs) -> Result<Exit> {
    if !args.dry_run {
        return Err(UserError::usage(
            "ralph compete runs only with --dry-run in this version: the implementation \
             phase (worktree, checks, events, pull request) is not built yet",
        )
        .with_hint(format!(
            "run `ralph compete {} --dry-run` to see the proposals, scores and ranking",
            args.issue
        ))
        .into());
    }
    let mut settings = ctx.settings()?;
    if let Some(k) = args.bots {
        let have = settings.config.bots.len();
        if k as usize > have {
            return Err(UserError::usage(format!(
                "--bots {k} asks for more bots than the {have} configured"
            ))
            .with_hint("list more [[bots]] in .ralph/config.toml, or raise marketplace.num_bots")
            .into());
        }
        settings.config.bots.truncate(k as usize);
    }
    let tracker = tracker::open(&settings).await?;
    let issue = super::fetch_issue(tracker.as_ref(), args.issue).await?;
    if issue.state == IssueState::Closed {
        ctx.printer.warn(&format!(
            "#{} is closed; the dry run goes ahead, a real run would refuse",
            issue.number
        ));
    }
    let agents = Agents::build(&settings.config, &settings.root, args.record.as_deref());
    let spinners = std::io::stderr().is_terminal() && ctx.global.quiet == 0;
    let report = dry_run(DryRunInput {
        settings: &settings,
        issue,
        agents,
        printer: &ctx.printer,
        spinners,
        seed: args.seed,
    })
    .await?;
    if ctx.printer.json_mode() {
        ctx.printer.json(&report)?;
    } else {
        for round in &report.rounds {
            ctx.printer.data(&render_round(
                round,
                &settings.config.scoring_weights,
                ctx.printer.paint(),
            ))?;
        }
        let t = &report.total;
        ctx.printer.status(&format!(
            "Spent: {} call(s), {} tokens{}, {:.1}s of agent time",
            t.calls,
            t.tokens(),
            t.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default(),
            t.duration.as_secs_f64()
        ));
    }
    Ok(match report.outcome {
        RunOutcome::Aborted | RunOutcome::Escalated => Exit::Failure,
        _ => Exit::Success,
    })
}
