//! [`PullRequestTracker`] over the APIs in GitHub's shape: pull requests from ralph's branches of
//! the repository itself (not forks'), the conversation on them (a pull request is an issue:
//! its comments and labels are the issue's), with the reviews, CI and job logs read the forge's
//! own way ([`super::Dialect`]).

use super::wire::{ours, Comment, Pull};
use super::ShapedTracker;
use crate::tracker::pulls::{CiCheck, Feedback, FeedbackKind, PullFacts, PullRequestTracker};
use crate::tracker::{IssueTracker, Result};
use async_trait::async_trait;

#[async_trait]
impl PullRequestTracker for ShapedTracker {
    async fn pull_requests(&self, head_prefix: &str) -> Result<Vec<PullFacts>> {
        let pulls: Vec<Pull> = self
            .api
            .get_all(
                self.paged(&format!("/pulls?state=all&{}", self.shape().pull_list)),
                "list the pull requests",
                &format!("pull requests of {}", self.repo),
            )
            .await?;
        Ok(ours(pulls, head_prefix, &self.repo.to_string())
            .into_iter()
            .map(PullFacts::from)
            .collect())
    }

    async fn pull_request(&self, number: u64) -> Result<PullFacts> {
        let pull: Pull = self
            .api
            .get(
                self.path(&format!("/pulls/{number}")),
                format!("read pull request #{number}"),
                self.pr_subject(number),
            )
            .await?;
        Ok(pull.into())
    }

    async fn feedback(&self, number: u64) -> Result<Vec<Feedback>> {
        let mut out = self.dialect.reviews(self, number).await?;
        let comments: Vec<Comment> = self
            .api
            .get_all(
                self.paged(&format!("/issues/{number}/comments")),
                &format!("read the comments of pull request #{number}"),
                &self.pr_subject(number),
            )
            .await?;
        out.extend(comments.into_iter().map(|c| Feedback {
            id: format!("comment-{}", c.id),
            author: c.user.map(|u| u.login),
            at: c.created_at,
            body: c.body.unwrap_or_default(),
            kind: FeedbackKind::Conversation,
        }));
        out.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    async fn ci(&self, sha: &str) -> Result<Vec<CiCheck>> {
        self.dialect.ci(self, sha).await
    }

    async fn job_log(&self, check: &CiCheck) -> Result<String> {
        self.dialect.job_log(self, check).await
    }

    async fn comment_on_pull(&self, number: u64, body: &str) -> Result<()> {
        IssueTracker::comment(self, number, body).await
    }

    async fn label_pull(&self, number: u64, labels: &[String]) -> Result<()> {
        IssueTracker::add_labels(self, number, labels).await
    }
}
