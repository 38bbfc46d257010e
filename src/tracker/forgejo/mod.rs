//! Forgejo's API v1 — Gitea's and Codeberg's too: the tracker is the one of the APIs in GitHub's
//! shape ([`super::shaped`]), which Forgejo answers in for issues, comments and pull requests,
//! made here with Forgejo's endpoint (the token in `Authorization: token …`) and Forgejo's
//! [`Shape`] and [`Dialect`]: labels applied and removed by id (read once a run), lists paged by
//! `limit` (50 at most by default), an issue assigned by editing it, a label change read from
//! the issue's timeline, and (`pulls`) reviews with their line comments, commit statuses as CI
//! and a job's log from its page. `discover` finds the server, repository and token.

pub use super::discover::forgejo as discover;
mod dialect;

pub use super::shaped::ShapedTracker as ForgejoTracker;

use super::discover::Token;
use super::rest::{self, Api, RetryPolicy};
use super::shaped::{Shape, ShapedTracker};
use super::{Forge, Result};

pub use self::discover::Place;

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
    label_added: ("label", Some("1")),
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
