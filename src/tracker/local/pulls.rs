//! The local tracker's pull requests, `.ralph/issues/N.prs.json` (a JSON list per issue N), and
//! what happens to them after they were opened, so `ralph follow` works without GitHub. ralph
//! writes a record when it opens a pull request; a person (or the demo) adds to it:
//!
//! ```json
//! [{
//!   "number": 5, "title": "Add a greet function", "head": "ralph/3-add-a-greet-function",
//!   "base": "main", "created_at": "2026-11-20T10:00:00Z",
//!   "state": "open",                        // open | closed | merged
//!   "merged_at": null, "merge_commit": null, // set both when merging by hand
//!   "labels": [],
//!   "reviews": [{"author": "maintainer", "at": "2026-11-20T11:00:00Z",
//!                "state": "changes_requested", "body": "Please also …",
//!                "comments": [{"path": "greet.py", "line": 3, "body": "…"}]}],
//!   "comments": [{"author": "maintainer", "at": "…", "body": "/ralph …"}],
//!   "checks": {"<commit sha>": [{"name": "test", "state": "failed", "log": "…"}]}
//! }]
//! ```
//!
//! Only `number`, `title`, `head` and `base` are required. ralph's replies are appended to
//! `comments` (author `ralph`), its labels to `labels`. Review ids are their place in the list
//! (`review-1`, `inline-1.2`, `comment-3`): append, never reorder.

use super::super::pulls::{
    CiCheck, CiState, Feedback, FeedbackKind, PullFacts, PullRequestTracker, PullState,
    ReviewVerdict,
};
use super::super::{IssueTracker, PullRequest, Result, TrackerError};
use super::LocalTracker;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The author ralph's own comments carry in the files.
pub const RALPH_AUTHOR: &str = "ralph";

/// One pull request record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalPull {
    pub number: u64,
    pub title: String,
    pub head: String,
    pub base: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default = "open")]
    pub state: PullState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<LocalReview>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<LocalComment>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, Vec<LocalCheck>>,
}

fn open() -> PullState {
    PullState::Open
}

/// A review: its verdict, summary and inline comments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalReview {
    #[serde(default)]
    pub author: Option<String>,
    pub at: DateTime<Utc>,
    pub state: ReviewVerdict,
    #[serde(default)]
    pub body: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<LocalInline>,
}

/// A comment on a line of the diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalInline {
    pub path: String,
    #[serde(default)]
    pub line: Option<u64>,
    pub body: String,
}

/// A conversation comment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalComment {
    #[serde(default)]
    pub author: Option<String>,
    pub at: DateTime<Utc>,
    pub body: String,
}

/// A CI check on a commit, with its log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalCheck {
    pub name: String,
    pub state: CiState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

impl LocalPull {
    /// A new open record for a pull request ralph opens now.
    pub fn opened(pr: &PullRequest) -> LocalPull {
        LocalPull {
            number: pr.number,
            title: pr.title.clone(),
            head: pr.head.clone(),
            base: pr.base.clone(),
            url: pr.url.clone(),
            state: PullState::Open,
            created_at: Some(Utc::now()),
            merged_at: None,
            merge_commit: None,
            labels: Vec::new(),
            reviews: Vec::new(),
            comments: Vec::new(),
            checks: BTreeMap::new(),
        }
    }

    pub fn summary(&self) -> PullRequest {
        PullRequest {
            number: self.number,
            title: self.title.clone(),
            head: self.head.clone(),
            base: self.base.clone(),
            url: self.url.clone(),
        }
    }

    fn facts(&self) -> PullFacts {
        PullFacts {
            number: self.number,
            title: self.title.clone(),
            url: self.url.clone(),
            head: self.head.clone(),
            // The branch is in the local repository: `follow` reads its head from git.
            head_sha: None,
            base: self.base.clone(),
            base_sha: None,
            state: self.state,
            created_at: self.created_at,
            merged_at: self.merged_at,
            merge_commit: self.merge_commit.clone(),
            labels: self.labels.clone(),
        }
    }

    /// Reviews, their inline comments and the conversation, oldest first.
    fn feedback(&self) -> Vec<Feedback> {
        let mut out = Vec::new();
        for (i, r) in self.reviews.iter().enumerate() {
            out.push(Feedback {
                id: format!("review-{}", i + 1),
                author: r.author.clone(),
                at: r.at,
                body: r.body.clone(),
                kind: FeedbackKind::Review { verdict: r.state },
            });
            out.extend(r.comments.iter().enumerate().map(|(j, c)| Feedback {
                id: format!("inline-{}.{}", i + 1, j + 1),
                author: r.author.clone(),
                at: r.at,
                body: c.body.clone(),
                kind: FeedbackKind::Inline {
                    path: c.path.clone(),
                    line: c.line,
                },
            }));
        }
        out.extend(self.comments.iter().enumerate().map(|(i, c)| Feedback {
            id: format!("comment-{}", i + 1),
            author: c.author.clone(),
            at: c.at,
            body: c.body.clone(),
            kind: FeedbackKind::Conversation,
        }));
        out.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.id.cmp(&b.id)));
        out
    }
}

impl LocalTracker {
    /// The record of pull request `number`, with the issue whose file holds it.
    pub(super) fn find_pull(&self, number: u64) -> Result<Option<(u64, LocalPull)>> {
        Ok(self
            .all_pulls()?
            .into_iter()
            .find(|(_, p)| p.number == number))
    }

    /// Changes pull request `number`'s record; `false` when there is none.
    pub(super) fn update_pull(
        &self,
        number: u64,
        change: impl FnOnce(&mut LocalPull),
    ) -> Result<bool> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let Some((issue, _)) = self.find_pull(number)? else {
            return Ok(false);
        };
        let path = self.prs_path(issue);
        let mut pulls = self.load_pulls(&path)?;
        if let Some(p) = pulls.iter_mut().find(|p| p.number == number) {
            change(p);
        }
        self.save_pulls(&path, &pulls)?;
        Ok(true)
    }

    fn pull(&self, number: u64) -> Result<LocalPull> {
        self.find_pull(number)?
            .map(|(_, p)| p)
            .ok_or_else(|| TrackerError::NotFound {
                what: format!(
                    "pull request #{number} (no record in {})",
                    self.dir.display()
                ),
                forge: None,
            })
    }
}

#[async_trait]
impl PullRequestTracker for LocalTracker {
    fn has_users(&self) -> bool {
        false
    }

    async fn pull_requests(&self, head_prefix: &str) -> Result<Vec<PullFacts>> {
        let mut all: Vec<PullFacts> = self
            .all_pulls()?
            .into_iter()
            .filter(|(_, p)| p.head.starts_with(head_prefix))
            .map(|(_, p)| p.facts())
            .collect();
        all.sort_by_key(|p| p.number);
        Ok(all)
    }

    async fn pull_request(&self, number: u64) -> Result<PullFacts> {
        Ok(self.pull(number)?.facts())
    }

    async fn feedback(&self, number: u64) -> Result<Vec<Feedback>> {
        Ok(self.pull(number)?.feedback())
    }

    async fn ci(&self, sha: &str) -> Result<Vec<CiCheck>> {
        Ok(self
            .all_pulls()?
            .into_iter()
            .flat_map(|(_, p)| p.checks.get(sha).cloned().unwrap_or_default())
            .map(|c| CiCheck {
                name: c.name,
                state: c.state,
                job: None,
                url: None,
                log: c.log,
            })
            .collect())
    }

    async fn job_log(&self, check: &CiCheck) -> Result<String> {
        Err(TrackerError::NotFound {
            what: format!(
                "a job of `{}`: the local tracker keeps logs with its checks",
                check.name
            ),
            forge: None,
        })
    }

    async fn comment_on_pull(&self, number: u64, body: &str) -> Result<()> {
        IssueTracker::comment(self, number, body).await
    }

    async fn label_pull(&self, number: u64, labels: &[String]) -> Result<()> {
        IssueTracker::add_labels(self, number, labels).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_written_record_reads_with_defaults_and_orders_its_feedback() {
        let p: LocalPull = serde_json::from_value(serde_json::json!({
            "number": 5, "title": "T", "head": "ralph/3-t", "base": "main",
            "reviews": [{"author": "m", "at": "2026-11-20T11:00:00Z", "state": "changes_requested",
                         "body": "b", "comments": [{"path": "a.py", "line": 3, "body": "here"}]}],
            "comments": [{"author": "m", "at": "2026-11-20T10:00:00Z", "body": "/ralph first"}]
        }))
        .unwrap();
        assert_eq!(p.state, PullState::Open);
        let f = p.feedback();
        let ids: Vec<&str> = f.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["comment-1", "inline-1.1", "review-1"]);
        assert_eq!(
            f[1].kind,
            FeedbackKind::Inline {
                path: "a.py".into(),
                line: Some(3)
            }
        );
        // Written back, the defaults stay out of the file.
        let json = serde_json::to_value(LocalPull::opened(&p.summary())).unwrap();
        assert!(json.get("reviews").is_none() && json.get("checks").is_none());
    }
}
