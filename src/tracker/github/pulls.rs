//! [`PullRequestTracker`] over the GitHub REST API: pull requests (`/pulls`), their reviews,
//! inline review comments and conversation comments, the check runs and commit statuses of a
//! commit, and an Actions job's log. The JSON shapes read are here, lenient like `wire`'s.

use super::super::pulls::{
    check_run_state, review_verdict, status_state, CiCheck, Feedback, FeedbackKind, PullFacts,
    PullRequestTracker, PullState,
};
use super::super::rest::{segment, Request};
use super::super::{IssueTracker, Result};
use super::wire::{LabelRef, User};
use super::GithubTracker;
use ::http::Method;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Ref {
    #[serde(rename = "ref")]
    name: String,
    #[serde(default)]
    sha: Option<String>,
    /// The repository the branch is in (a fork's for a pull request from a fork; `null` when
    /// the fork was deleted).
    #[serde(default)]
    repo: Option<RepoName>,
}

#[derive(Debug, Deserialize)]
struct RepoName {
    full_name: String,
}

/// The pull requests from branches of `repo` itself whose branch starts with `prefix`: a fork
/// can name a branch `ralph/12-…` too, but only people who may write to the repository can
/// push one there.
fn ours(pulls: Vec<Pull>, prefix: &str, repo: &str) -> Vec<Pull> {
    pulls
        .into_iter()
        .filter(|p| p.head.name.starts_with(prefix))
        .filter(|p| {
            p.head
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(repo))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct Pull {
    number: u64,
    #[serde(default)]
    title: String,
    #[serde(default)]
    html_url: Option<String>,
    head: Ref,
    base: Ref,
    #[serde(default)]
    state: String,
    /// Only on a single pull request; a list has `merged_at`.
    #[serde(default)]
    merged: Option<bool>,
    #[serde(default)]
    merged_at: Option<DateTime<Utc>>,
    #[serde(default)]
    merge_commit_sha: Option<String>,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    labels: Vec<LabelRef>,
}

impl From<Pull> for PullFacts {
    fn from(p: Pull) -> PullFacts {
        let merged = p.merged.unwrap_or(false) || p.merged_at.is_some();
        PullFacts {
            number: p.number,
            title: p.title,
            url: p.html_url,
            head: p.head.name,
            head_sha: p.head.sha,
            base: p.base.name,
            base_sha: p.base.sha,
            state: match (merged, p.state.as_str()) {
                (true, _) => PullState::Merged,
                (false, "closed") => PullState::Closed,
                _ => PullState::Open,
            },
            created_at: p.created_at,
            merged_at: p.merged_at,
            // GitHub fills it with a test merge while the pull request is open.
            merge_commit: if merged { p.merge_commit_sha } else { None },
            labels: p.labels.into_iter().map(LabelRef::name).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Review {
    id: u64,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    state: String,
    #[serde(default)]
    submitted_at: Option<DateTime<Utc>>,
}

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
struct Comment {
    id: u64,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    body: Option<String>,
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

    async fn job_log(&self, job: u64) -> Result<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_repositorys_own_ralph_branches_are_followed() {
        let pull = |n: u64, head: &str, repo: serde_json::Value| -> Pull {
            serde_json::from_value(serde_json::json!({
                "number": n, "state": "open",
                "head": {"ref": head, "repo": repo}, "base": {"ref": "main"}
            }))
            .unwrap()
        };
        let list = vec![
            pull(
                1,
                "ralph/3-x",
                serde_json::json!({"full_name": "Octo-Org/octo-repo"}),
            ),
            pull(
                2,
                "ralph/3-x",
                serde_json::json!({"full_name": "mallory/octo-repo"}),
            ),
            pull(3, "ralph/4-y", serde_json::Value::Null),
            pull(
                4,
                "feature/z",
                serde_json::json!({"full_name": "octo-org/octo-repo"}),
            ),
        ];
        let kept: Vec<u64> = ours(list, "ralph/", "octo-org/octo-repo")
            .iter()
            .map(|p| p.number)
            .collect();
        assert_eq!(kept, [1]);
    }

    #[test]
    fn a_merged_pull_request_keeps_its_merge_commit_and_an_open_one_does_not() {
        let merged: Pull = serde_json::from_value(serde_json::json!({
            "number": 7, "title": "t", "state": "closed", "merged": true,
            "merged_at": "2026-11-20T10:00:00Z", "merge_commit_sha": "abc",
            "head": {"ref": "ralph/3-x", "sha": "h"}, "base": {"ref": "main", "sha": "b"},
            "labels": [{"name": "ralph"}]
        }))
        .unwrap();
        let facts = PullFacts::from(merged);
        assert_eq!(facts.state, PullState::Merged);
        assert_eq!(facts.merge_commit.as_deref(), Some("abc"));
        assert_eq!(facts.labels, ["ralph"]);
        let open: Pull = serde_json::from_value(serde_json::json!({
            "number": 8, "state": "open", "merge_commit_sha": "test-merge",
            "head": {"ref": "ralph/4-y"}, "base": {"ref": "main"}
        }))
        .unwrap();
        let facts = PullFacts::from(open);
        assert_eq!(facts.state, PullState::Open);
        assert_eq!(facts.merge_commit, None);
        let closed: Pull = serde_json::from_value(serde_json::json!({
            "number": 9, "state": "closed", "merged_at": null,
            "head": {"ref": "ralph/5-z"}, "base": {"ref": "main"}
        }))
        .unwrap();
        assert_eq!(PullFacts::from(closed).state, PullState::Closed);
    }
}
