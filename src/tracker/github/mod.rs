//! GitHub's REST API: the tracker is the one of the APIs in GitHub's shape
//! ([`super::shaped`]), made here with GitHub's endpoint (base URL from `GITHUB_API_URL`, the
//! token as a bearer, GitHub's media type and API version) and GitHub's [`Shape`] and
//! [`Dialect`]: lists by `per_page`, labels by name, who applied a label from the issue's
//! events, and (`reviews`) the reviews, check runs and Actions job logs. (octocrab was the
//! transport until ralph used nothing of it but its raw `_get`/`_post`; its models were never
//! used, and it brought 38 crates of its own.)

mod dialect;

pub use super::rest::RetryPolicy;
pub use super::shaped::ShapedTracker as GithubTracker;

use super::discover::Token;
use super::rest::{self, Api};
use super::shaped::{Shape, ShapedTracker};
use super::{Forge, Result};
use crate::settings::RepoSlug;

/// The web address of the GitHub server whose API is at `api_url`: `GITHUB_SERVER_URL` when
/// Actions sets it, else `https://github.com` for api.github.com, else the API's address
/// without `/api/v3` (GitHub Enterprise Server).
fn web_url(api_url: &str) -> String {
    if let Some(server) = crate::env::get(crate::env::GITHUB_SERVER_URL).filter(|s| !s.is_empty()) {
        return server.trim_end_matches('/').to_owned();
    }
    let api = api_url.trim_end_matches('/');
    if api == "https://api.github.com" {
        return "https://github.com".into();
    }
    api.trim_end_matches("/api/v3").to_owned()
}

/// GitHub's own ways.
struct Github;

static SHAPE: Shape = Shape {
    forge: Forge::Github,
    page: "per_page=100",
    issue_list: "sort=created&direction=asc",
    pull_list: "sort=updated&direction=desc",
    labels_by_id: false,
    color_hash: false,
    assigns_by_edit: false,
    filters_by_head: true,
    forbidden_is_stranger: false,
    label_log: "events",
    label_added: ("labeled", None),
};

/// A tracker for `repo` on the GitHub API at `api_url`, authenticated with `token`.
pub fn tracker(
    api_url: &str,
    repo: RepoSlug,
    token: Token,
    policy: RetryPolicy,
) -> Result<GithubTracker> {
    let endpoint = rest::Endpoint {
        forge: Forge::Github,
        var: crate::env::GITHUB_API_URL,
        url: api_url,
        auth: (
            ::http::header::AUTHORIZATION,
            format!("Bearer {}", token.secret.expose()),
        ),
        headers: vec![
            (
                ::http::header::ACCEPT,
                ::http::HeaderValue::from_static("application/vnd.github+json"),
            ),
            (
                ::http::header::HeaderName::from_static("x-github-api-version"),
                ::http::HeaderValue::from_static("2022-11-28"),
            ),
        ],
    };
    let api = Api::connect(endpoint, policy, token.source.to_string())?;
    Ok(ShapedTracker::new(api, repo, web_url(api_url), &Github))
}
