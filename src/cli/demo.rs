//! `ralph demo`: a complete competition, offline, on a sample repository in a temporary
//! directory (see `crate::demo`); prints every phase and the resulting leaderboard, then
//! removes the directory unless `--keep`.

use super::Context;
use crate::compete::agents::Agents;
use crate::compete::round::ledger_state;
use crate::compete::{compete, RunInput, RunOptions};
use crate::demo::{set_up, DEMO_ISSUE};
use crate::error::Exit;
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
    let tracker = tracker::open(&settings).await?;
    let agents = Agents::build(&settings.config, &settings.root, None);
    let workspace = GitWorkspace::new(&settings.root, &settings.config.git.remote);
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
        },
    })
    .await?;
    let state = ledger_state(&settings)?;
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "report": report,
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
    if args.keep {
        let kept = temp.keep();
        ctx.printer.status(&format!(
            "Kept the demo in {} (try `ralph -C {} leaderboard`)",
            kept.display(),
            dirs.repo.display()
        ));
    }
    Ok(match report.outcome {
        crate::run_report::RunOutcome::Complete => Exit::Success,
        _ => Exit::Failure,
    })
}
