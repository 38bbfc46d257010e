//! `ralph refine N`: drafts the checkbox spec of a prose issue (or reviews the checkboxes it
//! has) with the arbiter's `refine` role, comments it on the issue — or writes it into the body
//! with `--write`, or only prints it with `--dry-run` — and labels the issue `in-refinement`
//! for a maintainer's review; `ralph ready N` follows. In Actions only issues a user with write
//! access labelled (`in-refinement` or `backlog-review`) are refined.

use super::Context;
use crate::action::trust_gate;
use crate::error::{Exit, UserError};
use crate::refine::run::{refine, RefineOptions};
use crate::tracker::{self, workflow};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct RefineArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
    /// Write the task list into the issue's body (between ralph's markers) as well
    #[arg(long, conflicts_with = "dry_run")]
    pub write: bool,
    /// Print the draft; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Record the agent's answer into DIR, in the layout the replay backend reads
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
}

pub async fn run(ctx: &Context, args: RefineArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    ctx.sandbox(&settings).await?;
    ctx.retire_old_checkouts(&settings).await;
    let tracker = tracker::open(&settings).await?;
    if crate::action::ActionEnv::detect(crate::env::get).is_some() && !args.dry_run {
        // Only what a maintainer put up for refinement is refined on a schedule.
        let issue = super::fetch_issue(tracker.as_ref(), args.issue).await?;
        let label = workflow::LABELS_BEFORE_READY
            .into_iter()
            .find(|l| issue.has_label(l))
            .ok_or_else(|| {
                UserError::usage(format!(
                    "#{} is not labelled `{}` or `{}`",
                    args.issue,
                    workflow::LABEL_IN_REFINEMENT,
                    workflow::LABEL_BACKLOG_REVIEW
                ))
                .with_hint("in Actions ralph refines only issues a maintainer labelled for it")
            })?;
        trust_gate(tracker.as_ref(), args.issue, label).await?;
    }
    let refined = refine(
        &settings,
        tracker.as_ref(),
        &ctx.printer,
        &RefineOptions {
            issue: args.issue,
            write: args.write,
            dry_run: args.dry_run,
            record: args.record.clone(),
            progress: ctx.tracker(&settings),
        },
    )
    .await?;
    if ctx.printer.json_mode() {
        ctx.printer.json(&refined)?;
        return Ok(Exit::Success);
    }
    if args.dry_run {
        ctx.printer.data(&refined.comment)?;
        return Ok(Exit::Success);
    }
    let n = args.issue;
    ctx.printer.status(&format!(
        "{} #{n}: {} requirement(s), {} question(s){}; labelled `{}`",
        if refined.review {
            "Reviewed"
        } else {
            "Drafted"
        },
        refined.answer.requirements.len(),
        refined.answer.questions.len(),
        if refined.body_written {
            ", written into the body and commented"
        } else {
            ", commented"
        },
        workflow::LABEL_IN_REFINEMENT
    ));
    ctx.printer.status(&format!(
        "Review it, edit the issue, then `ralph ready {n}` and `ralph compete {n}`"
    ));
    Ok(Exit::Success)
}
