//! [`PullRequestTracker`] over the GitHub REST API: pull requests (`/pulls`), their reviews,
//! inline review comments and conversation comments, the check runs and commit statuses of a
//! commit, and an Actions job's log. The pull request, review and comment shapes (Forgejo's too)
//! are in `wire`; the check runs' are here, lenient alike.

use super::super::pulls::{
    check_run_state, review_verdict, status_state, CiCheck, Feedback, FeedbackKind, PullFacts,
    PullRequestTracker,
};
use super::super::rest::{segment, Request};
use super::super::{IssueTracker, Result};
use super::wire::{ours, Comment, Pull, Review, User};
use super::GithubTracker;
use ::http::Method;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct InlineComment {
    id: u64,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    path: String,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    original_line: Option<u64>,
    created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
struct CheckRuns {
    #[serde(default)]
    check_runs: Vec<CheckRun>,
}

#[derive(Debug, Deserialize)]
struct CheckRun {
    id: u64,
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    /// Set for GitHub Actions jobs: the check run is the job.
    #[serde(default)]
    app: Option<App>,
}

#[derive(Debug, Deserialize)]
struct App {
    #[serde(default)]
    slug: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CombinedStatus {
    #[serde(default)]
    statuses: Vec<Status>,
}

#[derive(Debug, Deserialize)]
struct Status {
    context: String,
    state: String,
    #[serde(default)]
    target_url: Option<String>,
}

impl GithubTracker {
    fn pulls_subject(&self) -> String {
        format!("pull requests of {}", self.repo)
    }

    /// Every page of `<under>/{number}/<list>` of a pull request (`what` names it in errors).
    async fn list<T: serde::de::DeserializeOwned>(
        &self,
        number: u64,
        under: &str,
        list: &str,
        what: &str,
    ) -> Result<Vec<T>> {
        self.api
            .get_all(
                self.path(&format!("{under}/{number}/{list}?per_page=100")),
                &format!("read the {what} of pull request #{number}"),
                &format!("pull request #{number} in {}", self.repo),
            )
            .await
    }
}

#[async_trait]
impl PullRequestTracker for GithubTracker {
    async fn pull_requests(&self, head_prefix: &str) -> Result<Vec<PullFacts>> {
        let pulls: Vec<Pull> = self
            .api
            .get_all(
                self.path("/pulls?state=all&sort=updated&direction=desc&per_page=100"),
                "list the pull requests",
                &self.pulls_subject(),
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
                format!("pull request #{number} in {}", self.repo),
            )
            .await?;
        Ok(pull.into())
    }

    async fn feedback(&self, number: u64) -> Result<Vec<Feedback>> {
        let reviews: Vec<Review> = self.list(number, "/pulls", "reviews", "reviews").await?;
        let inline: Vec<InlineComment> = self
            .list(number, "/pulls", "comments", "review comments")
            .await?;
        let comments: Vec<Comment> = self.list(number, "/issues", "comments", "comments").await?;
        let mut out: Vec<Feedback> = Vec::new();
        for r in reviews {
            // A pending review is the reviewer's draft: not submitted, not feedback yet.
            let Some(at) = r.submitted_at else { continue };
            out.push(Feedback {
                id: format!("review-{}", r.id),
                author: r.user.map(|u| u.login),
                at,
                body: r.body.unwrap_or_default(),
                kind: FeedbackKind::Review {
                    verdict: review_verdict(&r.state),
                },
            });
        }
        out.extend(inline.into_iter().map(|c| Feedback {
            id: format!("inline-{}", c.id),
            author: c.user.map(|u| u.login),
            at: c.created_at,
            body: c.body.unwrap_or_default(),
            kind: FeedbackKind::Inline {
                path: c.path,
                line: c.line.or(c.original_line),
            },
        }));
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
        let subject = format!("commit {sha} in {}", self.repo);
        let sha = segment(sha);
        let runs: CheckRuns = self
            .api
            .get(
                self.path(&format!("/commits/{sha}/check-runs?per_page=100")),
                format!("read the check runs of {sha}"),
                subject.clone(),
            )
            .await?;
        let combined: CombinedStatus = self
            .api
            .get(
                self.path(&format!("/commits/{sha}/status?per_page=100")),
                format!("read the commit statuses of {sha}"),
                subject,
            )
            .await?;
        let mut out: Vec<CiCheck> = runs
            .check_runs
            .into_iter()
            .map(|r| {
                let actions = r
                    .app
                    .as_ref()
                    .and_then(|a| a.slug.as_deref())
                    .is_none_or(|s| s == "github-actions");
                CiCheck {
                    state: check_run_state(&r.status, r.conclusion.as_deref()),
                    job: actions.then_some(r.id),
                    name: r.name,
                    url: r.html_url,
                    log: None,
                }
            })
            .collect();
        out.extend(combined.statuses.into_iter().map(|s| CiCheck {
            name: s.context,
            state: status_state(&s.state),
            job: None,
            url: s.target_url,
            log: None,
        }));
        Ok(out)
    }

    async fn job_log(&self, check: &CiCheck) -> Result<String> {
        let Some(job) = check.job else {
            return Err(super::super::TrackerError::NotFound {
                what: format!("a job log of `{}` (not a GitHub Actions job)", check.name),
                forge: Some(super::super::Forge::Github),
            });
        };
        let reply = self
            .api
            .send(
                Request::new(
                    Method::GET,
                    self.path(&format!("/actions/jobs/{job}/logs")),
                    format!("read the log of job {job}"),
                )
                .subject(format!("job {job} in {}", self.repo)),
            )
            .await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }

    /// A pull request is an issue on GitHub: the issue's comments and labels are its own.
    async fn comment_on_pull(&self, number: u64, body: &str) -> Result<()> {
        IssueTracker::comment(self, number, body).await
    }

    async fn label_pull(&self, number: u64, labels: &[String]) -> Result<()> {
        IssueTracker::add_labels(self, number, labels).await
    }
}
