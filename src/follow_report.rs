//! What `ralph follow` did, per pull request: the outcomes it settled in the ledger (and the
//! event files), the revision round it ran with what became of each request, the feedback it
//! ignored and why, or why it left the pull request alone. `--json` prints it; the terminal,
//! the pull request's reply and the job summary are rendered from it (`render::follow`).

use crate::market::Outcome;
use crate::run_report::CheckReport;
use crate::tracker::pulls::PullState;
use serde::Serialize;

/// Everything one `ralph follow` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FollowReport {
    pub pulls: Vec<PullReport>,
    /// Pull requests that could not be followed, and why.
    pub failures: Vec<String>,
}

impl FollowReport {
    /// Every event file written.
    pub fn events(&self) -> impl Iterator<Item = &String> {
        self.pulls.iter().flat_map(|p| &p.events)
    }
}

/// One pull request.
#[derive(Debug, Clone, Serialize)]
pub struct PullReport {
    pub number: u64,
    /// The issue it resolves (from its branch).
    pub issue: Option<u64>,
    pub url: Option<String>,
    pub state: PullState,
    /// The winning bot, whose weight its outcomes move.
    pub bot: Option<String>,
    /// The outcomes settled now (each is settled once per pull request).
    pub settled: Vec<Outcome>,
    /// The event files written now.
    pub events: Vec<String>,
    pub action: FollowAction,
    /// Feedback left alone, and why.
    pub ignored: Vec<IgnoredFeedback>,
    pub revision: Option<RevisionReport>,
}

/// What was done beyond settling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FollowAction {
    /// A revision round ran (see `revision`).
    Revised,
    /// Handed to a human with `attention-needed`.
    Escalated { reason: String },
    /// Nothing to do.
    Left { reason: String },
}

/// A piece of feedback `follow` did not act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredFeedback {
    pub id: String,
    pub author: Option<String>,
    pub reason: String,
}

/// A revision round and what became of each request.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RevisionReport {
    /// The round's number on this pull request.
    pub round: u32,
    pub max: u32,
    pub passed: bool,
    pub commit: Option<String>,
    pub pushed: bool,
    /// Why the push was refused: the pull request did not get the revision, no event is
    /// written and the next `follow` tries again.
    pub push_error: Option<String>,
    /// What the implementer said it did.
    pub summary: Option<String>,
    pub items: Vec<RevisionItem>,
    /// Why the round failed.
    pub reasons: Vec<String>,
    /// Nothing could be verified: the environment, not the change (no event is written).
    pub environment: Option<String>,
    pub checks: Vec<CheckReport>,
    pub attempts: u32,
}

/// One request of a revision round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevisionItem {
    /// The requirement id (`feedback_1`, `ci_1`).
    pub id: String,
    /// The feedback id on the tracker, or the CI check's name.
    pub source: String,
    /// Where: `review (changes requested)`, `greet.py:3`, `conversation`, `CI`.
    pub place: String,
    pub author: Option<String>,
    /// The request, shortened for tables.
    pub request: String,
    pub done: bool,
    /// The evidence when done, the reason when not.
    pub note: String,
}
