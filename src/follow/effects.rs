//! What following writes besides the revision itself: events in the ledger, and the
//! escalation of a pull request and its issue to a human.

use super::FollowInput;
use crate::follow_report::RevisionReport;
use crate::ledger::{Event, EventStore};
use crate::render::follow::escalation;
use crate::tracker::pulls::PullRequestTracker;
use crate::tracker::workflow::LABEL_ATTENTION;
use anyhow::Result;

/// Appends one event to the ledger; returns its file name.
pub(super) fn write_event(input: &FollowInput<'_>, e: &Event) -> Result<String> {
    let store = EventStore::new(input.settings.ralph_dir.join("events"));
    crate::compete::append(&store, std::slice::from_ref(e))?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("the event was not written"))
}

/// `attention-needed` on the pull request and its issue, with the reasons on both (a pull
/// request through `pulls`: on GitLab a merge request is no issue, and shares no numbers with
/// them).
pub(super) async fn escalate(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    pr: u64,
    issue: Option<u64>,
    reason: &str,
    revision: Option<&RevisionReport>,
) -> Result<()> {
    let body =
        crate::secret::redact(&escalation(&pulls.pull_ref(pr), reason, revision)).into_owned();
    let attention = [LABEL_ATTENTION.to_owned()];
    pulls.label_pull(pr, &attention).await?;
    pulls.comment_on_pull(pr, &body).await?;
    if let Some(n) = issue {
        input.tracker.add_labels(n, &attention).await?;
        input.tracker.comment(n, &body).await?;
    }
    input
        .printer
        .warn(&format!("#{pr} needs a human: {reason}"));
    Ok(())
}
