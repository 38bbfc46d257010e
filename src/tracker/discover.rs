//! Finding what the GitHub tracker needs from the environment: the repository (`--repo`, then
//! `GITHUB_REPOSITORY`, then the `origin` remote, https or ssh), the API base URL
//! (`GITHUB_API_URL`) and the token (`GITHUB_TOKEN`, `GH_TOKEN`, then `gh auth token`).

use super::{Result, TrackerError};
use crate::process::{self, Cmd};
use crate::secret::Secret;
use crate::settings::RepoSlug;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// The public GitHub API.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Where a token came from: named in errors so the user knows which one to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    GithubToken,
    GhToken,
    GhCli,
    /// Handed in by the caller (tests, embedding).
    Explicit,
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenSource::GithubToken => "GITHUB_TOKEN",
            TokenSource::GhToken => "GH_TOKEN",
            TokenSource::GhCli => "`gh auth token`",
            TokenSource::Explicit => "the configured token",
        })
    }
}

/// A GitHub token and where it came from. `Debug` shows the source, never the value.
#[derive(Debug, Clone)]
pub struct Token {
    pub secret: Secret,
    pub source: TokenSource,
}

impl Token {
    pub fn new(value: impl Into<String>, source: TokenSource) -> Token {
        Token {
            secret: Secret::new(value),
            source,
        }
    }
}

/// The API base URL: `GITHUB_API_URL` when set, else the public API.
pub fn api_url() -> Result<String> {
    api_url_from(crate::env::get(crate::env::GITHUB_API_URL).as_deref())
}

/// Checks an API base URL (scheme http or https, a host) and trims a trailing slash.
pub fn api_url_from(value: Option<&str>) -> Result<String> {
    let raw = match value.map(str::trim) {
        None | Some("") => return Ok(DEFAULT_API_URL.to_owned()),
        Some(v) => v,
    };
    let bad = |reason: &str| TrackerError::BadApiUrl {
        url: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let uri: http::Uri = raw.parse().map_err(|_| bad("it does not parse as a URL"))?;
    match uri.scheme_str() {
        Some("http") | Some("https") => {}
        _ => return Err(bad("it must start with https:// (or http://)")),
    }
    if uri.authority().is_none() {
        return Err(bad("it has no host"));
    }
    if uri.query().is_some() {
        return Err(bad("it must not carry a query string"));
    }
    Ok(raw.trim_end_matches('/').to_owned())
}

/// The token from the environment: `GITHUB_TOKEN`, then `GH_TOKEN` (blank values skipped).
pub fn token_from_env(get: impl Fn(&str) -> Option<String>) -> Option<Token> {
    [
        (crate::env::GITHUB_TOKEN, TokenSource::GithubToken),
        (crate::env::GH_TOKEN, TokenSource::GhToken),
    ]
    .into_iter()
    .find_map(|(var, source)| {
        let value = get(var)?;
        let value = value.trim();
        (!value.is_empty()).then(|| Token::new(value, source))
    })
}

/// The token: from the environment, else `gh auth token` (for the API's host when it is not
/// the public API).
pub async fn token(api_url: &str) -> Result<Token> {
    if let Some(t) = token_from_env(crate::env::get) {
        return Ok(t);
    }
    let mut cmd = Cmd::new("gh")
        .args(["auth", "token"])
        .timeout(Duration::from_secs(15))
        .max_output(64 * 1024);
    if let Some(host) = gh_hostname(api_url) {
        cmd = cmd.args(["--hostname", &host]);
    }
    match process::run(&cmd).await {
        Ok(out) if out.success() => {
            let value = out.stdout.trim();
            if value.is_empty() {
                Err(TrackerError::NoToken)
            } else {
                Ok(Token::new(value, TokenSource::GhCli))
            }
        }
        Ok(out) => {
            tracing::debug!(code = ?out.code, "`gh auth token` failed");
            Err(TrackerError::NoToken)
        }
        Err(e) => {
            tracing::debug!(error = %e, "`gh auth token` not available");
            Err(TrackerError::NoToken)
        }
    }
}

/// The `gh --hostname` for an API URL: `None` for the public API.
fn gh_hostname(api_url: &str) -> Option<String> {
    let uri: http::Uri = api_url.parse().ok()?;
    let host = uri.host()?;
    (host != "api.github.com").then(|| host.to_owned())
}

/// The repository: `--repo`, else `GITHUB_REPOSITORY`, else the `origin` remote of `root`.
pub async fn repository(flag: Option<RepoSlug>, root: &Path) -> Result<RepoSlug> {
    if let Some(r) = flag {
        return Ok(r);
    }
    if let Some(value) = crate::env::get(crate::env::GITHUB_REPOSITORY) {
        if !value.trim().is_empty() {
            return value
                .trim()
                .parse()
                .map_err(|e: String| TrackerError::NoRepository {
                    reason: format!("GITHUB_REPOSITORY: {e}"),
                });
        }
    }
    let cmd = Cmd::new("git")
        .args(["config", "--get", "remote.origin.url"])
        .current_dir(root)
        .timeout(Duration::from_secs(15))
        .max_output(64 * 1024);
    let out = process::run(&cmd)
        .await
        .map_err(|e| TrackerError::NoRepository {
            reason: format!("no --repo, and git could not be asked for the origin remote ({e})"),
        })?;
    let url = out.stdout.trim();
    if !out.success() || url.is_empty() {
        return Err(TrackerError::NoRepository {
            reason: format!(
                "no --repo, no GITHUB_REPOSITORY, and {} has no `origin` remote",
                root.display()
            ),
        });
    }
    parse_remote_url(url).ok_or_else(|| TrackerError::NoRepository {
        // The URL may carry credentials (https://user:token@host/…): never echo it.
        reason: "the `origin` remote does not look like OWNER/NAME on a GitHub host".into(),
    })
}

/// OWNER/NAME from a git remote URL: `https://host/o/n(.git)`, `ssh://git@host[:port]/o/n`,
/// `git://host/o/n`, scp-like `git@host:o/n.git`; credentials in the URL are ignored. The last
/// two path segments are taken, so GitHub Enterprise paths work too.
pub fn parse_remote_url(url: &str) -> Option<RepoSlug> {
    let url = url.trim();
    let path = if let Some((_, rest)) = url.split_once("://") {
        // scheme://[userinfo@]host[:port]/path
        let (_, path) = rest.split_once('/')?;
        path
    } else if let Some((host, path)) = url.split_once(':') {
        // scp-like [user@]host:path; a bare Windows or local path is not a GitHub remote.
        if host.contains('/') || host.is_empty() {
            return None;
        }
        path
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut parts = path.rsplit('/');
    let name = parts.next()?;
    let owner = parts.next()?;
    format!("{owner}/{name}").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_in_every_common_form() {
        let cases = [
            (
                "https://github.com/octo-org/octo-repo.git",
                "octo-org/octo-repo",
            ),
            (
                "https://github.com/octo-org/octo-repo",
                "octo-org/octo-repo",
            ),
            (
                "https://github.com/octo-org/octo-repo/",
                "octo-org/octo-repo",
            ),
            ("http://github.com/a/b.c", "a/b.c"),
            ("https://x-access-token:ghs_abc@github.com/o/r.git", "o/r"),
            (
                "git@github.com:octo-org/octo-repo.git",
                "octo-org/octo-repo",
            ),
            ("git@github.com:octo-org/octo-repo", "octo-org/octo-repo"),
            ("ssh://git@github.com/o/r.git", "o/r"),
            ("ssh://git@github.com:22/o/r.git", "o/r"),
            ("git://github.com/o/r.git", "o/r"),
            ("https://ghe.corp.example/enterprise/o/r.git", "o/r"),
            ("  git@ghe.example:team/tool.git\n", "team/tool"),
        ];
        for (url, want) in cases {
            let got = parse_remote_url(url).unwrap_or_else(|| panic!("{url}"));
            assert_eq!(got.to_string(), want, "{url}");
        }
        for bad in [
            "",
            "/local/path/repo",
            "../repo",
            "https://github.com/only",
            "file",
        ] {
            assert!(parse_remote_url(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn api_urls_are_checked() {
        assert_eq!(api_url_from(None).unwrap(), DEFAULT_API_URL);
        assert_eq!(api_url_from(Some("")).unwrap(), DEFAULT_API_URL);
        assert_eq!(
            api_url_from(Some("https://ghe.example/api/v3/")).unwrap(),
            "https://ghe.example/api/v3"
        );
        assert_eq!(
            api_url_from(Some("http://127.0.0.1:8080")).unwrap(),
            "http://127.0.0.1:8080"
        );
        for bad in ["ftp://x", "not a url", "/api/v3", "https://h/api?x=1"] {
            let err = api_url_from(Some(bad)).unwrap_err();
            assert!(matches!(err, TrackerError::BadApiUrl { .. }), "{bad}");
        }
        assert_eq!(gh_hostname(DEFAULT_API_URL), None);
        assert_eq!(
            gh_hostname("https://ghe.example/api/v3").as_deref(),
            Some("ghe.example")
        );
    }

    #[test]
    fn tokens_come_from_github_token_then_gh_token() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let t = token_from_env(env(&[
            ("GITHUB_TOKEN", "ghp_first_token_1"),
            ("GH_TOKEN", "x"),
        ]))
        .unwrap();
        assert_eq!(t.source, TokenSource::GithubToken);
        assert_eq!(t.secret.expose(), "ghp_first_token_1");
        let t = token_from_env(env(&[
            ("GITHUB_TOKEN", "  "),
            ("GH_TOKEN", " gho_second_2\n"),
        ]))
        .unwrap();
        assert_eq!(t.source, TokenSource::GhToken);
        assert_eq!(t.secret.expose(), "gho_second_2");
        assert!(token_from_env(env(&[])).is_none());
        assert!(!format!("{t:?}").contains("gho_second_2"));
    }
}
