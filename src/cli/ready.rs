//! `ralph ready N`: mark issue N as ready for a competition — add the ready label, remove
//! `in-refinement` (SPEC §2).

use super::Context;
use crate::error::{Exit, UserError};
use crate::tracker::{self, workflow, IssueState};
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct ReadyArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
}

pub async fn run(ctx: &Context, args: ReadyArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let tracker = tracker::open(&settings).await?;
    let ready = settings.config.github.ready_label.clone();
    // Read first: a clear "not found" beats a failed label call, and a closed issue or a pull
    // request is refused rather than labelled.
    let issue = super::fetch_issue(tracker.as_ref(), args.issue).await?;
    if issue.state == IssueState::Closed {
        return Err(
            UserError::usage(format!("issue #{} is closed", issue.number))
                .with_hint("reopen it first if it should be worked on")
                .into(),
        );
    }
    let added = !issue.has_label(&ready);
    if added {
        tracker
            .add_labels(issue.number, std::slice::from_ref(&ready))
            .await?;
    }
    let removed = if issue.has_label(workflow::LABEL_IN_REFINEMENT) {
        tracker
            .remove_label(issue.number, workflow::LABEL_IN_REFINEMENT)
            .await?
    } else {
        false
    };
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "issue": issue.number,
            "added": if added { vec![ready.as_str()] } else { vec![] },
            "removed": if removed { vec![workflow::LABEL_IN_REFINEMENT] } else { vec![] },
        }))?;
    } else {
        let mut changes = Vec::new();
        if added {
            changes.push(format!("+{ready}"));
        }
        if removed {
            changes.push(format!("-{}", workflow::LABEL_IN_REFINEMENT));
        }
        let line = if changes.is_empty() {
            format!("issue #{} was already ready\n", issue.number)
        } else {
            format!(
                "issue #{} is ready ({})\n",
                issue.number,
                changes.join(", ")
            )
        };
        ctx.printer.data(&line)?;
    }
    Ok(Exit::Success)
}
