//! What happens to a pull request after ralph opened it, as `ralph follow` reads it: its state
//! (open, closed, merged, and the merge commit), the feedback on it (reviews, inline review
//! comments, conversation comments — each with its author and time), and the project's CI on a
//! commit (check runs and commit statuses as one list, with the job whose log tells why a check
//! failed), and what ralph writes on it (its replies, the `attention-needed` label). A narrow
//! trait every tracker implements: GitHub, GitLab (merge requests) and Forgejo over their REST
//! APIs, the local tracker over its pull-request files.

use super::Result;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Where a pull request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PullState {
    Open,
    /// Closed without being merged.
    Closed,
    Merged,
}

/// A pull request as `follow` needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullFacts {
    pub number: u64,
    pub title: String,
    pub url: Option<String>,
    /// The branch with the change (`ralph/12-add-a-flag`).
    pub head: String,
    /// The head commit, where the tracker knows it.
    pub head_sha: Option<String>,
    /// The branch it merges into.
    pub base: String,
    /// The base commit the pull request was last compared with, where the tracker knows it.
    pub base_sha: Option<String>,
    pub state: PullState,
    pub created_at: Option<DateTime<Utc>>,
    pub merged_at: Option<DateTime<Utc>>,
    /// The commit the merge made on the base branch (a merge, squash or rebase commit).
    pub merge_commit: Option<String>,
    pub labels: Vec<String>,
}

/// What a review said overall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewVerdict {
    ChangesRequested,
    Commented,
    Approved,
    /// Dismissed, pending or unknown.
    Other,
}

/// Where a piece of feedback was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FeedbackKind {
    /// A review's summary.
    Review { verdict: ReviewVerdict },
    /// A comment on a line of the diff.
    Inline { path: String, line: Option<u64> },
    /// A comment in the pull request's conversation.
    Conversation,
}

/// One piece of feedback on a pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Feedback {
    /// Unique within the pull request (`review-12`, `inline-34`, `comment-56`).
    pub id: String,
    /// The author's login; `None` where the tracker has no users.
    pub author: Option<String>,
    pub at: DateTime<Utc>,
    pub body: String,
    #[serde(flatten)]
    pub kind: FeedbackKind,
}

/// A CI check's state on a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiState {
    /// Queued or running.
    Pending,
    Passed,
    /// Failed, errored, timed out or cancelled.
    Failed,
    /// Skipped or neutral: says nothing about the change.
    Neutral,
}

/// One check run or commit status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CiCheck {
    pub name: String,
    pub state: CiState,
    /// The job whose log says why (GitHub Actions check runs, GitLab jobs), for
    /// [`PullRequestTracker::job_log`].
    pub job: Option<u64>,
    pub url: Option<String>,
    /// The log, where the tracker keeps it with the check (the local tracker).
    #[serde(skip)]
    pub log: Option<String>,
}

/// The pull requests of a tracker, after they were opened.
#[async_trait]
pub trait PullRequestTracker: Send + Sync {
    /// Whether feedback has authors whose permission means something (the local tracker has
    /// no users: whoever edits its files may write).
    fn has_users(&self) -> bool {
        true
    }

    /// Every pull request (open and closed) whose head branch starts with `head_prefix`.
    async fn pull_requests(&self, head_prefix: &str) -> Result<Vec<PullFacts>>;

    /// One pull request.
    async fn pull_request(&self, number: u64) -> Result<PullFacts>;

    /// Its reviews, inline review comments and conversation comments, oldest first.
    async fn feedback(&self, number: u64) -> Result<Vec<Feedback>>;

    /// The check runs and commit statuses on `sha`.
    async fn ci(&self, sha: &str) -> Result<Vec<CiCheck>>;

    /// The log of a failing check's job (as the tracker serves it; the caller bounds it): by
    /// its `job` id on GitHub and GitLab, by its page on Forgejo; an error where there is none.
    async fn job_log(&self, check: &CiCheck) -> Result<String>;

    /// Comments on pull request `number` (ralph's replies and escalations).
    async fn comment_on_pull(&self, number: u64, body: &str) -> Result<()>;

    /// Adds labels to pull request `number` (already present ones are fine).
    async fn label_pull(&self, number: u64, labels: &[String]) -> Result<()>;

    /// How the forge's markdown refers to pull request `number` (`#7`; GitLab's merge
    /// requests `!7`, where `#7` is an issue).
    fn pull_ref(&self, number: u64) -> String {
        format!("#{number}")
    }
}

/// The CI check state a GitHub check run's `status` and `conclusion` make.
pub fn check_run_state(status: &str, conclusion: Option<&str>) -> CiState {
    if status != "completed" {
        return CiState::Pending;
    }
    match conclusion {
        Some("success") => CiState::Passed,
        Some("failure" | "timed_out" | "cancelled" | "action_required" | "startup_failure") => {
            CiState::Failed
        }
        Some(_) => CiState::Neutral,
        None => CiState::Pending,
    }
}

/// The CI check state of a GitHub commit status's `state`.
pub fn status_state(state: &str) -> CiState {
    match state {
        "success" => CiState::Passed,
        "failure" | "error" => CiState::Failed,
        "pending" => CiState::Pending,
        _ => CiState::Neutral,
    }
}

/// The review verdict of a GitHub review's `state` (Forgejo's `REQUEST_CHANGES` and
/// `COMMENT` too).
pub fn review_verdict(state: &str) -> ReviewVerdict {
    match state.to_ascii_uppercase().as_str() {
        "CHANGES_REQUESTED" | "REQUEST_CHANGES" => ReviewVerdict::ChangesRequested,
        "COMMENTED" | "COMMENT" => ReviewVerdict::Commented,
        "APPROVED" => ReviewVerdict::Approved,
        _ => ReviewVerdict::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_runs_and_statuses_map_to_one_state() {
        assert_eq!(check_run_state("queued", None), CiState::Pending);
        assert_eq!(check_run_state("in_progress", None), CiState::Pending);
        assert_eq!(
            check_run_state("completed", Some("success")),
            CiState::Passed
        );
        for bad in ["failure", "timed_out", "cancelled", "action_required"] {
            assert_eq!(check_run_state("completed", Some(bad)), CiState::Failed);
        }
        assert_eq!(
            check_run_state("completed", Some("skipped")),
            CiState::Neutral
        );
        assert_eq!(
            check_run_state("completed", Some("neutral")),
            CiState::Neutral
        );
        assert_eq!(status_state("error"), CiState::Failed);
        assert_eq!(status_state("pending"), CiState::Pending);
        assert_eq!(status_state("success"), CiState::Passed);
        assert_eq!(
            review_verdict("CHANGES_REQUESTED"),
            ReviewVerdict::ChangesRequested
        );
        assert_eq!(
            review_verdict("changes_requested"),
            ReviewVerdict::ChangesRequested
        );
        assert_eq!(review_verdict("DISMISSED"), ReviewVerdict::Other);
        assert_eq!(
            review_verdict("REQUEST_CHANGES"),
            ReviewVerdict::ChangesRequested
        );
        assert_eq!(review_verdict("COMMENT"), ReviewVerdict::Commented);
        assert_eq!(review_verdict("PENDING"), ReviewVerdict::Other);
        assert_eq!(status_state("warning"), CiState::Neutral);
    }
}
