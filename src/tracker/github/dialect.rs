//! GitHub's [`Dialect`]: a pull request's reviews and
//! their inline comments, the check runs and commit statuses of a commit, an Actions job's log,
//! and the refusal to let Actions open pull requests. The pull request, review and comment
//! shapes are the shared `wire`'s; the check runs' are here, lenient alike.

use super::Github;
use crate::tracker::pulls::{check_run_state, review_verdict, CiCheck, Feedback, FeedbackKind};
use crate::tracker::rest::{segment, Request};
use crate::tracker::shaped::wire::{CombinedStatus, LineComment, Review};
use crate::tracker::shaped::{Dialect, Shape, ShapedTracker};
use crate::tracker::{Forge, NewPullRequest, Result, TrackerError};
use ::http::Method;
use async_trait::async_trait;
use serde::Deserialize;

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

/// Every page of `<under>/{number}/<list>` of a pull request (`what` names it in errors).
async fn list<T: serde::de::DeserializeOwned>(
    t: &ShapedTracker,
    number: u64,
    under: &str,
    list: &str,
    what: &str,
) -> Result<Vec<T>> {
    t.api
        .get_all(
            t.paged(&format!("{under}/{number}/{list}")),
            &format!("read the {what} of pull request #{number}"),
            &t.pr_subject(number),
        )
        .await
}

#[async_trait]
impl Dialect for Github {
    fn shape(&self) -> &'static Shape {
        &super::SHAPE
    }

    /// A repository (or organisation) that forbids Actions to open pull requests.
    fn pull_refused(
        &self,
        t: &ShapedTracker,
        pr: &NewPullRequest,
        e: &TrackerError,
    ) -> Option<TrackerError> {
        match e {
            TrackerError::Forbidden { message, .. }
                if message.contains("not permitted to create or approve pull requests") =>
            {
                Some(TrackerError::PullRequestsNotAllowed {
                    compare: format!(
                        "{}/{}/{}/compare/{}...{}?expand=1",
                        t.web, t.repo.owner, t.repo.name, pr.base, pr.head
                    ),
                })
            }
            _ => None,
        }
    }

    /// The submitted reviews (a pending one is the reviewer's draft) and the inline comments.
    async fn reviews(&self, t: &ShapedTracker, number: u64) -> Result<Vec<Feedback>> {
        let reviews: Vec<Review> = list(t, number, "/pulls", "reviews", "reviews").await?;
        let inline: Vec<LineComment> =
            list(t, number, "/pulls", "comments", "review comments").await?;
        let mut out: Vec<Feedback> = Vec::new();
        for r in reviews {
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
        out.extend(inline.into_iter().map(Feedback::from));
        Ok(out)
    }

    /// The check runs (an Actions job's is the job) and the commit statuses of `sha`.
    async fn ci(&self, t: &ShapedTracker, sha: &str) -> Result<Vec<CiCheck>> {
        let subject = format!("commit {sha} in {}", t.repo);
        let sha = segment(sha);
        let runs: CheckRuns = t
            .api
            .get(
                t.paged(&format!("/commits/{sha}/check-runs")),
                format!("read the check runs of {sha}"),
                subject.clone(),
            )
            .await?;
        let combined: CombinedStatus = t
            .api
            .get(
                t.paged(&format!("/commits/{sha}/status")),
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
        out.extend(combined.statuses.into_iter().map(CiCheck::from));
        Ok(out)
    }

    /// The log of the Actions job a check run is.
    async fn job_log(&self, t: &ShapedTracker, check: &CiCheck) -> Result<String> {
        let Some(job) = check.job else {
            return Err(TrackerError::NotFound {
                what: format!("a job log of `{}` (not a GitHub Actions job)", check.name),
                forge: Some(Forge::Github),
            });
        };
        let reply = t
            .api
            .send(
                Request::new(
                    Method::GET,
                    t.path(&format!("/actions/jobs/{job}/logs")),
                    format!("read the log of job {job}"),
                )
                .subject(format!("job {job} in {}", t.repo)),
            )
            .await?;
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }
}
