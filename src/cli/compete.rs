//! `ralph compete N`: the competition on issue N (docs/specification.md §6), or with `--dry-run`
//! its read-only front half (requirements, proposals, blind judging, scoring, ranking; nothing
//! written). Ctrl-C, SIGTERM or SIGHUP during a run kills the agents and checks, escalates the
//! issue through the same path as any failure, and exits 130, 143 or 129; `--resume` continues.

use super::Context;
use crate::action::{trust_gate, ActionEnv};
use crate::compete::agents::Agents;
use crate::compete::{compete, dry_run, escalate_interrupted, DryRunInput, RunInput, RunOptions};
use crate::error::{Exit, UserError};
use crate::render::run::render_round;
use crate::run_report::{RunOutcome, RunReport};
use crate::tracker::{self, IssueState};
use crate::workspace::GitWorkspace;
use anyhow::Result;
use clap::Args;
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
    /// Rounds at most (default: `max_iterations` from the configuration)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// Continue a stopped run from its last completed round
    #[arg(long, conflicts_with = "dry_run")]
    pub resume: bool,
    /// Stop before pushing: no push, no pull request; the branch stays local
    #[arg(long, conflicts_with = "dry_run")]
    pub no_push: bool,
    /// The branch to start from (default: `[git] base`, else the remote's default branch)
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Record every agent's answers into DIR, in the layout the replay backend reads
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// The seed of the seats' draw (`[marketplace] seats`) and, with --dry-run, of the blind
    /// order: the same seed and ledger draw the same seats (default: `[marketplace] seed`,
    /// else a fresh one)
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,
}

pub async fn run(ctx: &Context, args: CompeteArgs) -> Result<Exit> {
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
    // Before the tracker is asked anything: `required` without a sandbox changes nothing.
    let sandbox = ctx.sandbox(&settings).await?;
    let tracker = tracker::open(&settings).await?;
    if !args.dry_run {
        return competition(ctx, &settings, tracker.as_ref(), &args, sandbox).await;
    }
    let issue = super::fetch_issue(tracker.as_ref(), args.issue).await?;
    if issue.state == IssueState::Closed {
        ctx.printer.warn(&format!(
            "#{} is closed; the dry run goes ahead, a real run would refuse",
            issue.number
        ));
    }
    let agents = Agents::build(&settings.config, &settings.root, args.record.as_deref());
    let report = dry_run(DryRunInput {
        settings: &settings,
        issue,
        agents,
        printer: &ctx.printer,
        progress: ctx.tracker(&settings),
        seed: args.seed,
    })
    .await?;
    if let Some(env) = ActionEnv::detect(crate::env::get) {
        env.publish(&report)?;
    }
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

/// The real run, with Ctrl-C handled here so the issue is escalated before ralph exits.
async fn competition(
    ctx: &Context,
    settings: &crate::settings::Settings,
    tracker: &dyn crate::tracker::IssueTracker,
    args: &CompeteArgs,
    sandbox: crate::process::sandbox::Status,
) -> Result<Exit> {
    let action = ActionEnv::detect(crate::env::get);
    if action.is_some() {
        // docs/specification.md §9: in Actions, only issues a user with write access marked ready.
        trust_gate(tracker, args.issue, &settings.config.github.ready_label).await?;
    }
    ctx.retire_old_checkouts(settings).await;
    let agents = Agents::build(&settings.config, &settings.root, args.record.as_deref());
    let token = crate::tracker::push_token(settings);
    let workspace = GitWorkspace::new(
        &settings.root,
        settings.checkouts()?,
        &settings.config.git.remote,
    )
    .with_token(token.clone());
    let input = RunInput {
        settings,
        tracker,
        workspace: &workspace,
        issue: args.issue,
        agents,
        printer: &ctx.printer,
        progress: ctx.tracker(settings),
        options: RunOptions {
            max_iterations: args
                .max_iterations
                .unwrap_or(settings.config.max_iterations),
            resume: args.resume,
            no_push: args.no_push,
            base: args.base.clone(),
            token,
            sandbox: Some(sandbox),
            seed: crate::compete::seats::run_seed(args.seed, &settings.config),
        },
    };
    let report = tokio::select! {
        r = compete(input) => r?,
        how = super::signal::interrupted() => {
            eprintln!(
                "\n{} interrupted ({}): escalating #{}",
                ctx.printer.paint_err().warn("warning:"),
                how.name(),
                args.issue
            );
            // The agents and checks die first; the run's lock went with its future.
            crate::process::kill_all();
            if let Err(e) = escalate_interrupted(settings, tracker, args.issue, how.name()).await {
                ctx.printer.warn(&format!("could not escalate #{}: {e:#}", args.issue));
            }
            return Ok(how.exit());
        }
    };
    if let Some(env) = &action {
        publish(ctx, settings, env, &report)?;
    }
    outcome(ctx, &report)?;
    Ok(match report.outcome {
        RunOutcome::Complete | RunOutcome::Success | RunOutcome::DryRun => Exit::Success,
        RunOutcome::Aborted | RunOutcome::Escalated => Exit::Failure,
    })
}

/// In a GitHub Action: the report published, the leaderboard after the run added to the job
/// summary, and the report's annotations printed for the workflow (not in JSON mode).
fn publish(
    ctx: &Context,
    settings: &crate::settings::Settings,
    env: &ActionEnv,
    report: &RunReport,
) -> Result<()> {
    env.publish(report)?;
    // The leaderboard where the team looks: the standings after this run.
    if report.outcome != RunOutcome::DryRun {
        let ledger = crate::ledger::Ledger::new(&settings.ralph_dir);
        match ledger.state(&settings.config.fold_params()) {
            Ok((state, _)) => env.append_summary(&format!(
                "\n### Leaderboard after this run\n\n{}",
                crate::render::markdown::standings(&state)
            ))?,
            Err(e) => ctx
                .printer
                .warn(&format!("could not read the ledger: {e:#}")),
        }
    }
    if !ctx.printer.json_mode() {
        for a in env.annotations(report) {
            ctx.printer.data(&format!("{a}\n"))?;
        }
    }
    Ok(())
}

/// Says how the run ended — the report as JSON, or the outcome, the spending, the escalation
/// and where the time went.
fn outcome(ctx: &Context, report: &RunReport) -> Result<()> {
    for r in &report.network_refused {
        ctx.printer.warn(&format!(
            "network: blocked {}",
            crate::process::egress::refusal_line(r)
        ));
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(report)?;
    } else {
        let t = &report.total;
        ctx.printer.status(&format!(
            "Outcome: {} · {} event(s) · {} call(s), {} tokens{}",
            report.outcome,
            report.events.len(),
            t.calls,
            t.tokens(),
            t.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default()
        ));
        if let Some(why) = &report.escalation {
            ctx.printer.status(&format!("Escalated: {why}"));
        }
        ctx.printer.status(&crate::timeline::summary(
            std::time::Duration::from_millis(report.wall_ms),
            &report.phases,
            &report.critical_path,
        ));
    }
    Ok(())
}
