//! Forgejo's API v1 — Gitea's and Codeberg's too: the tracker is the one of the APIs in GitHub's
//! shape ([`super::shaped`]), which Forgejo answers in for issues, comments and pull requests,
//! made here with Forgejo's endpoint (the token in `Authorization: token …`) and Forgejo's
//! [`Shape`] and [`Dialect`]: labels applied and removed by id (read once a run), lists paged by
//! `limit` (50 at most by default), an issue assigned by editing it, a label change read from
//! the issue's timeline, and (`pulls`) reviews with their line comments, commit statuses as CI
//! and a job's log from its page. `discover` finds the server, repository and token.

pub use super::discover::forgejo as discover;
mod pulls;

pub use super::shaped::ShapedTracker as ForgejoTracker;

use super::discover::Token;
use super::pulls::{CiCheck, Feedback};
use super::rest::{self, Api, Request, RetryPolicy};
use super::shaped::wire::{User, WireLabel};
use super::shaped::{Applied, Dialect, Shape, ShapedTracker};
use super::{Forge, Result, TokenFacts, TrackerError};
use ::http::Method;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Deserialize;

pub use self::discover::Place;

/// An entry of an issue's timeline (`GET …/issues/{n}/timeline`): a label change is `type`
/// `label`, with `body` `1` when it was added.
#[derive(Debug, Deserialize)]
struct TimelineEntry {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    label: Option<WireLabel>,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
}

/// Forgejo's own ways.
struct Forgejo;

static SHAPE: Shape = Shape {
    forge: Forge::Forgejo,
    page: "limit=50",
    issue_list: "type=issues",
    pull_list: "sort=recentupdate",
    labels_by_id: true,
    color_hash: true,
    assigns_by_edit: true,
    filters_by_head: false,
    forbidden_is_stranger: true,
    label_log: "timeline",
};

/// A tracker for the repository at `place`, authenticated with `token`.
pub fn tracker(place: &Place, token: Token, policy: RetryPolicy) -> Result<ForgejoTracker> {
    let endpoint = rest::Endpoint {
        forge: Forge::Forgejo,
        var: crate::env::FORGEJO_URL,
        url: &place.api,
        auth: (
            ::http::header::AUTHORIZATION,
            format!("token {}", token.secret.expose()),
        ),
        headers: vec![(
            ::http::header::ACCEPT,
            ::http::HeaderValue::from_static("application/json"),
        )],
    };
    let api = Api::connect(endpoint, policy, token.source.to_string())?;
    Ok(ShapedTracker::new(
        api,
        place.repo.clone(),
        place.web.clone(),
        &Forgejo,
    ))
}

#[async_trait]
impl Dialect for Forgejo {
    fn shape(&self) -> &'static Shape {
        &SHAPE
    }

    /// A timeline entry that added a label (`type` `label`, `body` `1`).
    fn applied(&self, entry: serde_json::Value) -> Option<Applied> {
        let e: TimelineEntry = serde_json::from_value(entry).ok()?;
        (e.kind == "label" && e.body.as_deref() == Some("1")).then_some(Applied {
            label: e.label?.name,
            by: e.user.map(|u| u.login),
            at: e.created_at,
        })
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

    async fn reviews(&self, t: &ShapedTracker, number: u64) -> Result<Vec<Feedback>> {
        pulls::reviews(t, number).await
    }

    async fn ci(&self, t: &ShapedTracker, sha: &str) -> Result<Vec<CiCheck>> {
        pulls::ci(t, sha).await
    }

    async fn job_log(&self, t: &ShapedTracker, check: &CiCheck) -> Result<String> {
        pulls::job_log(t, check).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_timeline_label_entry_reads() {
        let e: TimelineEntry = serde_json::from_value(json!({
            "id": 9, "type": "label", "body": "1", "created_at": "2026-11-02T10:00:00+01:00",
            "user": {"id": 3, "login": "maintainer", "username": "maintainer"},
            "label": {"id": 5, "name": "ready", "color": "0e8a16", "description": "", "url": "u"}
        }))
        .unwrap();
        assert_eq!(e.kind, "label");
        assert_eq!(e.label.unwrap().id, 5);
        assert_eq!(e.user.unwrap().login, "maintainer");
        assert_eq!(
            super::super::Permission::from_github("owner"),
            super::super::Permission::Admin
        );
    }
}
