//! `ralph ready N`: mark issue N as ready for a competition — add the ready label, remove
//! `in-refinement` (docs/specification.md §2). It also re-arms an issue a stopped run left behind:
//! one labelled `in-progress` or `attention-needed` with no live run on this machine (its lock is
//! free) loses those labels and `ralph` — after a confirmation on a terminal, or with `--yes`.

use super::Context;
use crate::error::{Exit, UserError};
use crate::settings::Settings;
use crate::tracker::{self, workflow, Issue, IssueState, IssueTracker};
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct ReadyArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
    /// Re-arm an issue left `in-progress` or `attention-needed` without asking
    #[arg(short, long)]
    pub yes: bool,
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
    let Some(mut removed_labels) =
        rearm(&settings, tracker.as_ref(), &issue, &ready, args.yes).await?
    else {
        ctx.printer.status("Nothing changed.");
        return Ok(Exit::Success);
    };
    let added = !issue.has_label(&ready);
    if added {
        tracker
            .add_labels(issue.number, std::slice::from_ref(&ready))
            .await?;
    }
    if issue.has_label(workflow::LABEL_IN_REFINEMENT)
        && tracker
            .remove_label(issue.number, workflow::LABEL_IN_REFINEMENT)
            .await?
    {
        removed_labels.push(workflow::LABEL_IN_REFINEMENT);
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "issue": issue.number,
            "added": if added { vec![ready.as_str()] } else { vec![] },
            "removed": removed_labels,
        }))?;
    } else {
        ctx.printer
            .data(&ready_line(issue.number, &ready, added, &removed_labels))?;
    }
    Ok(Exit::Success)
}

/// Re-arms an issue a stopped run left `in-progress` or `attention-needed`: refused while a
/// run holds its lock here, else — once confirmed — those labels and `ralph` are removed.
/// Returns the labels removed (none when nothing was left behind); `None` when the user did
/// not confirm.
async fn rearm(
    settings: &Settings,
    tracker: &dyn IssueTracker,
    issue: &Issue,
    ready: &str,
    yes: bool,
) -> Result<Option<Vec<&'static str>>> {
    let left_behind: Vec<&str> = [workflow::LABEL_IN_PROGRESS, workflow::LABEL_ATTENTION]
        .into_iter()
        .filter(|l| issue.has_label(l))
        .collect();
    let mut removed_labels: Vec<&str> = Vec::new();
    if left_behind.is_empty() {
        return Ok(Some(removed_labels));
    }
    let n = issue.number;
    if crate::compete::RunLock::is_held(&settings.ralph_dir, n) {
        return Err(
            UserError::usage(format!("a `ralph compete {n}` is running on this machine"))
                .with_hint("wait for it to finish; it releases the issue itself")
                .into(),
        );
    }
    let labels = left_behind.join("` and `");
    let confirmed = super::prompt::confirm(
        &format!(
            "Issue #{n} is labelled `{labels}` and no run holds it here. Re-arm it as `{ready}`? [y/N] "
        ),
        yes,
        format!("issue #{n} is labelled `{labels}`: re-arming it needs confirmation"),
        "check that no run is working on it (on this machine or in CI), then run `ralph ready N --yes`",
    )
    .await?;
    if !confirmed {
        return Ok(None);
    }
    for label in [
        workflow::LABEL_IN_PROGRESS,
        workflow::LABEL_ATTENTION,
        workflow::LABEL_RALPH,
    ] {
        if issue.has_label(label) && tracker.remove_label(n, label).await? {
            removed_labels.push(label);
        }
    }
    Ok(Some(removed_labels))
}

/// The line that says what changed on issue `number`: `issue #7 is ready (+ready, -ralph)`, or
/// that it was already ready.
fn ready_line(number: u64, ready: &str, added: bool, removed: &[&str]) -> String {
    let mut changes = Vec::new();
    if added {
        changes.push(format!("+{ready}"));
    }
    changes.extend(removed.iter().map(|l| format!("-{l}")));
    if changes.is_empty() {
        format!("issue #{number} was already ready\n")
    } else {
        format!("issue #{number} is ready ({})\n", changes.join(", "))
    }
}
