//! `ralph follow [N…]`: after the pull request — reviews and failing CI answered with revision
//! rounds on the pull request's branch, merges, closes and reverts settled in the ledger once
//! (see [`crate::follow`]). In GitHub Actions the job summary lists what it did.

use super::Context;
use crate::action::ActionEnv;
use crate::error::Exit;
use crate::follow::{follow, FollowInput};
use crate::render::follow::summary;
use crate::tracker;
use crate::workspace::GitWorkspace;
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct FollowArgs {
    /// Only the pull requests of these issues (default: every pull request of ralph's)
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issues: Vec<u64>,
    /// Commit revisions but do not push them (and so do not change the pull request)
    #[arg(long)]
    pub no_push: bool,
}

pub async fn run(ctx: &Context, args: FollowArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let sandbox = ctx.sandbox(&settings).await?;
    ctx.retire_old_checkouts(&settings).await;
    let tracker = tracker::open(&settings).await?;
    let token = crate::tracker::push_token(&settings);
    let remote = &settings.config.git.remote;
    let workspace =
        GitWorkspace::new(&settings.root, settings.checkouts()?, remote).with_token(token.clone());
    let has_remote =
        git2::Repository::open(&settings.root).is_ok_and(|r| r.find_remote(remote).is_ok());
    let report = follow(&FollowInput {
        settings: &settings,
        tracker: tracker.as_ref(),
        workspace: &workspace,
        printer: &ctx.printer,
        progress: ctx.tracker(&settings),
        token,
        sandbox: Some(sandbox),
        issues: args.issues.clone(),
        push: has_remote && !args.no_push,
    })
    .await?;
    if let Some(env) = ActionEnv::detect(crate::env::get) {
        env.append_summary(&summary(&report))?;
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&report)?;
    } else {
        let events = report.events().count();
        ctx.printer.status(&format!(
            "Followed {} pull request(s) · {events} event(s) written",
            report.pulls.len()
        ));
    }
    Ok(if report.failures.is_empty() {
        Exit::Success
    } else {
        Exit::Failure
    })
}
