//! `ralph demo`: a complete competition, offline, on a sample repository in a temporary
//! directory (see `crate::demo`), then what happens after the pull request — a maintainer's
//! review answered by `ralph follow` with a revision, the merge settled in the ledger; prints
//! every phase and the resulting leaderboard, then removes the directory unless `--keep`.

use super::Context;
use crate::compete::agents::Agents;
use crate::compete::round::ledger_state;
use crate::compete::{compete, RunInput, RunOptions};
use crate::demo::{merge, review, set_up, DEMO_ISSUE, REVIEW};
use crate::error::Exit;
use crate::follow::{follow, FollowInput};
use crate::follow_report::FollowReport;
use crate::render;
use crate::settings::Settings;
use crate::tracker;
use crate::workspace::GitWorkspace;
use anyhow::{Context as _, Result};
use clap::Args;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the sample repository afterwards (its path is printed)
    #[arg(long)]
    pub keep: bool,
}

pub async fn run(ctx: &Context, args: DemoArgs) -> Result<Exit> {
    let temp = tempfile::Builder::new()
        .prefix("ralph-demo-")
        .tempdir()
        .context("cannot create a temporary directory for the demo")?;
    let dirs = set_up(temp.path())?;
    ctx.printer.status(&format!(
        "Sample repository: {} (issue #{DEMO_ISSUE}, three bots answering from recordings)",
        dirs.repo.display()
    ));
    let settings = Settings::load(dirs.repo.clone(), None, None)?;
    // The sample and its scripts are ralph's own: no warning where bubblewrap is missing.
    let sandbox = ctx.install_sandbox(&settings, false).await?;
    let sandbox_status = sandbox.clone();
    let tracker = tracker::open(&settings).await?;
    let agents = Agents::build(&settings.config, &settings.root, None);
    // The sample's checkouts beside it, in the demo's folder: gone with it.
    let workspace = GitWorkspace::new(
        &settings.root,
        temp.path().join("checkouts"),
        &settings.config.git.remote,
    );
    let report = compete(RunInput {
        settings: &settings,
        tracker: tracker.as_ref(),
        workspace: &workspace,
        issue: DEMO_ISSUE,
        agents,
        printer: &ctx.printer,
        progress: ctx.tracker(&settings),
        options: RunOptions {
            max_iterations: settings.config.max_iterations,
            resume: false,
            no_push: false,
            base: None,
            token: None,
            sandbox: Some(sandbox),
            seed: crate::compete::seats::run_seed(None, &settings.config),
        },
    })
    .await?;
    let complete = report.outcome == crate::run_report::RunOutcome::Complete;
    let followed = if complete {
        let input = FollowInput {
            settings: &settings,
            tracker: tracker.as_ref(),
            workspace: &workspace,
            printer: &ctx.printer,
            progress: ctx.tracker(&settings),
            token: None,
            sandbox: Some(sandbox_status),
            issues: vec![DEMO_ISSUE],
            // The sample has no remote: the revision stays on the local branch.
            push: false,
        };
        after_the_pull_request(ctx, &settings, &input).await?
    } else {
        Vec::new()
    };
    show(ctx, &settings, &report, &followed)?;
    if args.keep {
        let kept = temp.keep();
        ctx.printer.status(&format!(
            "Kept the demo in {} (try `ralph -C {} leaderboard`)",
            kept.display(),
            dirs.repo.display()
        ));
    }
    let followed_well = followed.iter().all(|f| f.failures.is_empty());
    Ok(if complete && followed_well {
        Exit::Success
    } else {
        Exit::Failure
    })
}

/// After the pull request: the maintainer's review, `ralph follow` answering it with a revision,
/// the merge, and `ralph follow` settling it. Returns what each `follow` did.
async fn after_the_pull_request(
    ctx: &Context,
    settings: &Settings,
    input: &FollowInput<'_>,
) -> Result<Vec<FollowReport>> {
    let bold = |s: &str| ctx.printer.paint_err().bold(s);
    ctx.printer
        .status(&bold("## After the pull request: a maintainer reviews it"));
    ctx.printer
        .status(&format!("- maintainer requests changes: \"{REVIEW}\""));
    review(&settings.root)?;
    ctx.printer.status("- ralph follow");
    let first = follow(input).await?;
    for r in first.pulls.iter().filter_map(|p| p.revision.as_ref()) {
        ctx.printer.status(&format!(
            "- ralph's reply on the pull request:\n{}",
            crate::render::follow::revision_reply(r)
                .lines()
                .skip(1)
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    ctx.printer
        .status(&bold("## The maintainer merges the pull request"));
    let merged = merge(&settings.root)?;
    ctx.printer.status(&format!(
        "- main is now at {} · ralph follow",
        &merged[..merged.len().min(10)]
    ));
    let second = follow(input).await?;
    Ok(vec![first, second])
}

/// The run report, what `follow` did and the leaderboard: a JSON document, or the leaderboard
/// table.
fn show(
    ctx: &Context,
    settings: &Settings,
    report: &crate::run_report::RunReport,
    followed: &[FollowReport],
) -> Result<()> {
    let state = ledger_state(settings)?;
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "report": report,
            "follow": followed,
            "leaderboard": state,
        }))?;
    } else {
        ctx.printer.status(
            &ctx.printer
                .paint_err()
                .bold("## Leaderboard after the demo"),
        );
        ctx.printer
            .data(&render::terminal::leaderboard(&state, ctx.printer.paint()))?;
    }
    Ok(())
}
