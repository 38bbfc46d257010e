//! [`PullRequestTracker`] over GitLab's REST API v4: merge requests from ralph's branches of
//! the project itself (not forks'), their notes as feedback, the commit's statuses — a
//! pipeline's jobs among them — as CI, and a job's log (`/jobs/:id/trace`).
//!
//! Feedback, GitLab's way: a comment on a line of the diff (a diff note) and an unresolved
//! thread started on the merge request (a discussion) ask for a change, like GitHub's inline
//! comments and reviews requesting changes; a plain comment must be addressed to ralph
//! (`/ralph …` or a mention). Resolved threads and GitLab's own system notes are not feedback.

use super::super::pulls::{
    CiCheck, Feedback, FeedbackKind, PullFacts, PullRequestTracker, ReviewVerdict,
};
use super::super::rest::{segment, Request};
use super::super::Result;
use super::wire::{ci_state, CommitStatus, MergeRequest, Note};
use super::GitlabTracker;
use ::http::Method;
use async_trait::async_trait;
use serde_json::json;

/// A note as feedback, or `None` when it is none (GitLab's own, or a resolved thread).
fn feedback_of(n: Note) -> Option<Feedback> {
    if n.system || n.resolved {
        return None;
    }
    let kind = match n.kind.as_deref() {
        Some("DiffNote") => {
            let p = n.position.as_ref();
            FeedbackKind::Inline {
                path: p
                    .and_then(|p| p.new_path.clone().or(p.old_path.clone()))
                    .unwrap_or_default(),
                line: p.and_then(|p| p.new_line.or(p.old_line)),
            }
        }
        Some("DiscussionNote") if n.resolvable => FeedbackKind::Review {
            verdict: ReviewVerdict::ChangesRequested,
        },
        _ => FeedbackKind::Conversation,
    };
    let id = match kind {
        FeedbackKind::Inline { .. } => format!("inline-{}", n.id),
        FeedbackKind::Review { .. } => format!("thread-{}", n.id),
        FeedbackKind::Conversation => format!("comment-{}", n.id),
    };
    Some(Feedback {
        id,
        author: n.author.map(|u| u.username),
        at: n.created_at,
        body: n.body.unwrap_or_default(),
        kind,
    })
}

impl GitlabTracker {
    fn mr_subject(&self, number: u64) -> String {
        format!("merge request !{number} in {}", self.project)
    }

    async fn merge_request(&self, number: u64) -> Result<MergeRequest> {
        self.api
            .get(
                self.path(&format!("/merge_requests/{number}")),
                format!("read merge request !{number}"),
                self.mr_subject(number),
            )
            .await
    }
}

#[async_trait]
impl PullRequestTracker for GitlabTracker {
    /// The merge requests from the project's own `head_prefix…` branches; each open one read
    /// once more for the target branch's commit it was last compared with (only a single merge
    /// request carries it).
    async fn pull_requests(&self, head_prefix: &str) -> Result<Vec<PullFacts>> {
        let all: Vec<MergeRequest> = self
            .api
            .get_all(
                self.path("/merge_requests?state=all&order_by=updated_at&sort=desc&per_page=100"),
                "list the merge requests",
                &format!("merge requests of {}", self.project),
            )
            .await?;
        let mut out = Vec::new();
        for mr in all {
            if !mr.source_branch.starts_with(head_prefix) || !mr.is_the_projects_own() {
                continue;
            }
            let mr = if mr.state == "opened" {
                self.merge_request(mr.iid).await?
            } else {
                mr
            };
            out.push(PullFacts::from(mr));
        }
        Ok(out)
    }

    async fn pull_request(&self, number: u64) -> Result<PullFacts> {
        Ok(self.merge_request(number).await?.into())
    }

    async fn feedback(&self, number: u64) -> Result<Vec<Feedback>> {
        let notes: Vec<Note> = self
            .api
            .get_all(
                self.path(&format!(
                    "/merge_requests/{number}/notes?sort=asc&order_by=created_at&per_page=100"
                )),
                &format!("read the notes of merge request !{number}"),
                &self.mr_subject(number),
            )
            .await?;
        self.met(notes.iter().filter_map(|n| n.author.as_ref()));
        let mut out: Vec<Feedback> = notes.into_iter().filter_map(feedback_of).collect();
        out.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    /// The commit's latest status per job and external check.
    async fn ci(&self, sha: &str) -> Result<Vec<CiCheck>> {
        let statuses: Vec<CommitStatus> = self
            .api
            .get_all(
                self.path(&format!(
                    "/repository/commits/{}/statuses?per_page=100",
                    segment(sha)
                )),
                &format!("read the statuses of {sha}"),
                &format!("commit {sha} in {}", self.project),
            )
            .await?;
        Ok(statuses
            .into_iter()
            .map(|s| CiCheck {
                state: ci_state(&s.status, s.allow_failure),
                job: s.is_job().then_some(s.id),
                name: s.name,
                url: s.target_url,
                log: None,
            })
            .collect())
    }

    async fn job_log(&self, check: &CiCheck) -> Result<String> {
        let Some(job) = check.job else {
            return Err(super::super::TrackerError::NotFound {
                what: format!(
                    "a job log of `{}` (an external status, not a job)",
                    check.name
                ),
                forge: Some(super::super::Forge::Gitlab),
            });
        };
        let reply = self
            .api
            .send(
                Request::new(
                    Method::GET,
                    self.path(&format!("/jobs/{job}/trace")),
                    format!("read the log of job {job}"),
                )
                .subject(format!("job {job} in {}", self.project)),
            )
            .await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }

    async fn comment_on_pull(&self, number: u64, body: &str) -> Result<()> {
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/merge_requests/{number}/notes")),
                &json!({ "body": super::super::posted(body) }),
                format!("comment on merge request !{number}"),
                self.mr_subject(number),
            )
            .await?;
        Ok(())
    }

    fn pull_ref(&self, number: u64) -> String {
        format!("!{number}")
    }

    async fn label_pull(&self, number: u64, labels: &[String]) -> Result<()> {
        self.api
            .send_json(
                Method::PUT,
                self.path(&format!("/merge_requests/{number}")),
                &json!({ "add_labels": labels.join(",") }),
                format!("label merge request !{number}"),
                self.mr_subject(number),
            )
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(v: serde_json::Value) -> Note {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn diff_notes_and_open_threads_ask_plain_comments_must_be_addressed() {
        let at = "2026-11-20T10:00:00.000Z";
        let diff = note(
            json!({"id": 1, "body": "rename", "author": {"id": 2, "username": "m"},
            "created_at": at, "type": "DiffNote", "resolvable": true, "resolved": false,
            "position": {"new_path": "lib.sh", "new_line": 4, "old_path": "lib.sh", "old_line": null}}),
        );
        let f = feedback_of(diff).unwrap();
        assert_eq!(f.id, "inline-1");
        assert_eq!(
            f.kind,
            FeedbackKind::Inline {
                path: "lib.sh".into(),
                line: Some(4)
            }
        );
        let thread = note(
            json!({"id": 3, "body": "add shout", "author": {"id": 2, "username": "m"},
            "created_at": at, "type": "DiscussionNote", "resolvable": true, "resolved": false}),
        );
        let f = feedback_of(thread).unwrap();
        assert_eq!(f.id, "thread-3");
        assert!(matches!(
            f.kind,
            FeedbackKind::Review {
                verdict: ReviewVerdict::ChangesRequested
            }
        ));
        let plain = note(
            json!({"id": 4, "body": "/ralph also x", "author": {"id": 2, "username": "m"},
            "created_at": at, "type": null, "resolvable": false}),
        );
        assert_eq!(feedback_of(plain).unwrap().kind, FeedbackKind::Conversation);
        let resolved = note(json!({"id": 5, "body": "done", "created_at": at,
            "type": "DiscussionNote", "resolvable": true, "resolved": true}));
        assert!(feedback_of(resolved).is_none());
        let system = note(
            json!({"id": 6, "body": "requested changes", "created_at": at,
            "system": true}),
        );
        assert!(feedback_of(system).is_none());
    }
}
