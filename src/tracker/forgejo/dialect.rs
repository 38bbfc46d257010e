//! Forgejo's [`Dialect`]: the token's scopes, asked for by requests that change nothing; a pull request's reviews
//! (`REQUEST_CHANGES`, `COMMENT`, `APPROVED`) with each review's comments on lines of the diff;
//! the commit statuses of a commit as CI (Forgejo Actions reports its jobs so); and a failing
//! job's log, read from the job's page on the same server (`…/actions/runs/R/jobs/J/logs`) —
//! the API has no job logs.

use super::Forgejo;
use crate::tracker::pulls::{review_verdict, CiCheck, Feedback, FeedbackKind};
use crate::tracker::rest::{segment, Request};
use crate::tracker::shaped::wire::{CombinedStatus, LineComment, Review};
use crate::tracker::shaped::{Dialect, Shape, ShapedTracker};
use crate::tracker::{Forge, Result, TokenFacts, TrackerError};
use ::http::Method;
use async_trait::async_trait;
use serde::Deserialize;

/// A review as Forgejo lists it: GitHub's fields and how many line comments it holds.
#[derive(Debug, Deserialize)]
struct ForgejoReview {
    #[serde(flatten)]
    review: Review,
    #[serde(default)]
    comments_count: u64,
    #[serde(default)]
    dismissed: bool,
}

/// Whether `url` is the page of an Actions job (`…/actions/runs/R/jobs/J`) on the server `web`.
fn job_page(web: &str, url: &str) -> bool {
    let Some(path) = url.strip_prefix(web).filter(|p| p.starts_with('/')) else {
        return false;
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    matches!(
        parts.as_slice(),
        [_, _, "actions", "runs", run, "jobs", job]
            if run.bytes().all(|b| b.is_ascii_digit()) && job.bytes().all(|b| b.is_ascii_digit())
    )
}

#[async_trait]
impl Dialect for Forgejo {
    fn shape(&self) -> &'static Shape {
        &super::SHAPE
    }

    /// Forgejo shows no token its own scopes, but names the scope a request lacks before it
    /// does anything ("token does not have at least one of required scope(s)"), the level by
    /// the request's method: each scope ralph needs is asked for by a request that changes
    /// nothing — reading the token's user, editing issue 0 and pull request 0, which do not
    /// exist.
    async fn token_facts(&self, t: &ShapedTracker) -> Result<Option<TokenFacts>> {
        let probes = [
            ("read:user", "/user".to_owned()),
            ("write:issue", t.path("/issues/0")),
            ("write:repository", t.path("/pulls/0")),
        ];
        let (mut scopes, mut missing) = (Vec::new(), Vec::new());
        for (scope, path) in probes {
            let action = format!("check the token's {scope} scope");
            let asked = if scope.starts_with("read:") {
                t.api.send(Request::new(Method::GET, path, action)).await
            } else {
                let nothing = serde_json::json!({});
                let subject = "the token's scopes";
                t.api
                    .send_json(Method::PATCH, path, &nothing, action, subject)
                    .await
            };
            match asked {
                Err(TrackerError::Forbidden { message, .. })
                    if message.contains("required scope") =>
                {
                    missing.push(scope.to_owned())
                }
                Err(e @ TrackerError::BadCredentials { .. }) => return Err(e),
                // Past the scope check: the request was the token's to make.
                _ => scopes.push(scope.to_owned()),
            }
        }
        Ok(Some(TokenFacts {
            name: t.api.token_source().to_owned(),
            scopes,
            missing,
            expires: None,
            active: true,
            renew: format!("create a token {}", Forge::Forgejo.info().renew),
        }))
    }

    /// Its submitted reviews (drafts and dismissed ones left out), with their line comments.
    async fn reviews(&self, t: &ShapedTracker, number: u64) -> Result<Vec<Feedback>> {
        let reviews: Vec<ForgejoReview> = t
            .api
            .get_all(
                t.paged(&format!("/pulls/{number}/reviews")),
                &format!("read the reviews of pull request #{number}"),
                &t.pr_subject(number),
            )
            .await?;
        let mut out = Vec::new();
        for r in reviews.into_iter().filter(|r| !r.dismissed) {
            let (id, count) = (r.review.id, r.comments_count);
            let Some(at) = r.review.submitted_at else {
                continue;
            };
            out.push(Feedback {
                id: format!("review-{id}"),
                author: r.review.user.map(|u| u.login),
                at,
                body: r.review.body.unwrap_or_default(),
                kind: FeedbackKind::Review {
                    verdict: review_verdict(&r.review.state),
                },
            });
            if count > 0 {
                let lines: Vec<LineComment> = t
                    .api
                    .get(
                        t.path(&format!("/pulls/{number}/reviews/{id}/comments")),
                        format!("read the comments of review {id}"),
                        t.pr_subject(number),
                    )
                    .await?;
                out.extend(lines.into_iter().map(Feedback::from));
            }
        }
        Ok(out)
    }

    /// The commit statuses of `sha`.
    async fn ci(&self, t: &ShapedTracker, sha: &str) -> Result<Vec<CiCheck>> {
        let combined: CombinedStatus = t
            .api
            .get(
                t.path(&format!("/commits/{}/status", segment(sha))),
                format!("read the commit statuses of {sha}"),
                format!("commit {sha} in {}", t.repo),
            )
            .await?;
        Ok(combined.statuses.into_iter().map(CiCheck::from).collect())
    }

    /// The raw log of the Actions job whose page the check links to, on this server only (the
    /// token goes nowhere else).
    async fn job_log(&self, t: &ShapedTracker, check: &CiCheck) -> Result<String> {
        let url = check.url.as_deref().unwrap_or_default();
        if !job_page(&t.web, url) {
            return Err(TrackerError::NotFound {
                what: format!(
                    "a log of `{}` (its link is no Actions job here)",
                    check.name
                ),
                forge: Some(Forge::Forgejo),
            });
        }
        let reply = t
            .api
            .send(
                Request::new(
                    Method::GET,
                    format!("{}/logs", url.trim_end_matches('/')),
                    format!("read the log of `{}`", check.name),
                )
                .subject(format!("the log of `{}`", check.name)),
            )
            .await?;
        let html = reply
            .headers
            .get(::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("html"));
        if html {
            return Err(TrackerError::NotFound {
                what: format!(
                    "the log of `{}` (the server answered with a web page)",
                    check.name
                ),
                forge: Some(Forge::Forgejo),
            });
        }
        Ok(String::from_utf8_lossy(&reply.body).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::shaped::wire::LabelLogEntry;
    use serde_json::json;

    #[test]
    fn job_logs_are_read_only_from_actions_pages_on_this_server() {
        let web = "https://codeberg.org";
        assert!(job_page(
            web,
            "https://codeberg.org/o/r/actions/runs/12/jobs/0"
        ));
        assert!(!job_page(
            web,
            "https://evil.example/o/r/actions/runs/12/jobs/0"
        ));
        assert!(!job_page(
            web,
            "https://codeberg.org.evil/o/r/actions/runs/1/jobs/0"
        ));
        assert!(!job_page(web, "https://codeberg.org/o/r/pulls/3"));
        let r: ForgejoReview = serde_json::from_value(serde_json::json!({
            "id": 4, "user": {"login": "m"}, "body": "b", "state": "REQUEST_CHANGES",
            "submitted_at": "2026-11-20T11:00:00Z", "comments_count": 2, "dismissed": false,
            "stale": false, "official": true, "commit_id": "abc"
        }))
        .unwrap();
        assert_eq!(r.review.state, "REQUEST_CHANGES");
        assert_eq!(r.comments_count, 2);
    }

    #[test]
    fn a_timeline_label_entry_reads() {
        let e: LabelLogEntry = serde_json::from_value(json!({
            "id": 9, "type": "label", "body": "1", "created_at": "2026-11-02T10:00:00+01:00",
            "user": {"id": 3, "login": "maintainer", "username": "maintainer"},
            "label": {"id": 5, "name": "ready", "color": "0e8a16", "description": "", "url": "u"}
        }))
        .unwrap();
        assert_eq!(e.kind(), "label");
        assert_eq!(e.label.unwrap().name, "ready");
        assert_eq!(e.user.unwrap().login, "maintainer");
        assert_eq!(
            crate::tracker::Permission::from_github("owner"),
            crate::tracker::Permission::Admin
        );
    }
}
