//! Finding what a tracker needs from the environment, for every forge in one place. For GitHub
//! (here): the repository (`--repo`, then `GITHUB_REPOSITORY`, then the `origin` remote, https
//! or ssh), the API base URL (`GITHUB_API_URL`) and the token (`GITHUB_TOKEN`, `GH_TOKEN`, then
//! `gh auth token`). GitLab's and Forgejo's rules are in `gitlab` and `forgejo` beside it. What
//! every forge shares: a token and where it came from, a checked server URL, and the `origin`
//! remote taken apart into its host and path.

pub mod forgejo;
pub mod gitlab;

use super::{Forge, Result, TrackerError};
use crate::process::{self, Cmd};
use crate::secret::Secret;
use crate::settings::RepoSlug;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// The public GitHub API.
const DEFAULT_API_URL: &str = "https://api.github.com";

/// Where a token came from: named in errors so the user knows which one to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    GithubToken,
    GhToken,
    GhCli,
    /// Another environment variable (`GITLAB_TOKEN`, `FORGEJO_TOKEN`…).
    Var(&'static str),
    /// Handed in by the caller (tests, embedding).
    Explicit,
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenSource::GithubToken => "GITHUB_TOKEN",
            TokenSource::GhToken => "GH_TOKEN",
            TokenSource::GhCli => "`gh auth token`",
            TokenSource::Var(name) => name,
            TokenSource::Explicit => "the configured token",
        })
    }
}

/// A token and where it came from. `Debug` shows the source, never the value.
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

/// Checks a GitHub API base URL (see [`check_url`]); unset or blank is the public API.
fn api_url_from(value: Option<&str>) -> Result<String> {
    match value.map(str::trim) {
        None | Some("") => Ok(DEFAULT_API_URL.to_owned()),
        Some(v) => check_url(Forge::Github, crate::env::GITHUB_API_URL, v),
    }
}

/// Checks a server or API URL `var` named (scheme http or https, a host, no query) and trims a
/// trailing slash.
pub fn check_url(forge: Forge, var: &str, raw: &str) -> Result<String> {
    let raw = raw.trim();
    let bad = |reason: &str| TrackerError::BadApiUrl {
        forge,
        var: var.to_owned(),
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
    first_token(
        &get,
        &[
            (crate::env::GITHUB_TOKEN, TokenSource::GithubToken),
            (crate::env::GH_TOKEN, TokenSource::GhToken),
        ],
    )
}

/// The first of `vars` that `get` finds set and not blank, as a token from it.
pub fn first_token(
    get: &impl Fn(&str) -> Option<String>,
    vars: &[(&str, TokenSource)],
) -> Option<Token> {
    vars.iter().find_map(|(var, source)| {
        let value = get(var)?;
        let value = value.trim();
        (!value.is_empty()).then(|| Token::new(value, *source))
    })
}

/// What `gh auth token` found nothing of, for the error.
fn no_github_token() -> TrackerError {
    TrackerError::NoToken {
        forge: Forge::Github,
        looked: "GITHUB_TOKEN and GH_TOKEN are unset and `gh auth token` gave none".into(),
    }
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
                Err(no_github_token())
            } else {
                Ok(Token::new(value, TokenSource::GhCli))
            }
        }
        Ok(out) => {
            tracing::debug!(code = ?out.code, "`gh auth token` failed");
            Err(no_github_token())
        }
        Err(e) => {
            tracing::debug!(error = %e, "`gh auth token` not available");
            Err(no_github_token())
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
    let no = |reason: String| TrackerError::NoRepository {
        forge: Forge::Github,
        reason,
    };
    if let Some(r) = flag {
        return flat(Forge::Github, r);
    }
    if let Some(value) = crate::env::non_empty(crate::env::GITHUB_REPOSITORY) {
        let slug = value
            .parse()
            .map_err(|e: String| no(format!("GITHUB_REPOSITORY: {e}")))?;
        return flat(Forge::Github, slug);
    }
    let url = origin_url(Forge::Github, root, "GITHUB_REPOSITORY").await?;
    // The URL may carry credentials (https://user:token@host/…): never echo it.
    parse_remote_url(&url).ok_or_else(|| {
        no("the `origin` remote does not look like OWNER/NAME on a GitHub host".into())
    })
}

/// `slug` when it is OWNER/NAME: GitHub and Forgejo have no nested groups.
pub fn flat(forge: Forge, slug: RepoSlug) -> Result<RepoSlug> {
    if slug.owner.contains('/') {
        return Err(TrackerError::NoRepository {
            forge,
            reason: format!("`{slug}` has more than two parts; a {forge} repository is OWNER/NAME"),
        });
    }
    Ok(slug)
}

/// The URL of the `origin` remote of `root`; `env_var` names the variable that would have
/// made it unnecessary, for the error.
pub async fn origin_url(forge: Forge, root: &Path, env_var: &str) -> Result<String> {
    let no = |reason: String| TrackerError::NoRepository { forge, reason };
    let cmd = Cmd::new("git")
        .args(["config", "--get", "remote.origin.url"])
        .current_dir(root)
        .timeout(Duration::from_secs(15))
        .max_output(64 * 1024);
    let out = process::run(&cmd).await.map_err(|e| {
        no(format!(
            "no --repo, and git could not be asked for the origin remote ({e})"
        ))
    })?;
    let url = out.stdout.trim();
    if !out.success() || url.is_empty() {
        return Err(no(format!(
            "no --repo, no {env_var}, and {} has no `origin` remote",
            root.display()
        )));
    }
    Ok(url.to_owned())
}

/// A git remote URL taken apart: where the server is, and the repository's path on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// `https://host[:port]` for an http(s) remote (its own scheme and port), `https://host`
    /// for ssh, scp-like and git remotes: the address the server's web and API answer at.
    pub server: String,
    /// The repository's path, without `.git` (`group/sub/project`).
    pub path: String,
}

/// Takes apart a git remote URL: `https://host/o/n(.git)`, `ssh://git@host[:port]/o/n`,
/// `git://host/o/n`, scp-like `git@host:o/n.git`; credentials in the URL are dropped, never
/// kept. A local path is no remote.
pub fn parse_remote(url: &str) -> Option<Remote> {
    let url = url.trim();
    let (server, path) = if let Some((scheme, rest)) = url.split_once("://") {
        // scheme://[userinfo@]host[:port]/path
        let (authority, path) = rest.split_once('/')?;
        let hostport = authority.rsplit('@').next().unwrap_or(authority);
        let server = match scheme {
            "http" | "https" => format!("{scheme}://{hostport}"),
            "ssh" | "git" | "git+ssh" | "ssh+git" => {
                let host = hostport.split(':').next().unwrap_or(hostport);
                format!("https://{host}")
            }
            _ => return None,
        };
        (server, path)
    } else if let Some((host, path)) = url.split_once(':') {
        // scp-like [user@]host:path; a bare Windows or local path is not a remote.
        if host.contains('/') || host.is_empty() {
            return None;
        }
        let host = host.rsplit('@').next().unwrap_or(host);
        (format!("https://{host}"), path)
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    (!path.is_empty() && !server.ends_with("://")).then(|| Remote {
        server,
        path: path.to_owned(),
    })
}

/// OWNER/NAME from a git remote URL (see [`parse_remote`]). The last two path segments are
/// taken, so GitHub Enterprise paths work too.
fn parse_remote_url(url: &str) -> Option<RepoSlug> {
    let remote = parse_remote(url)?;
    let mut parts = remote.path.rsplit('/');
    let name = parts.next()?;
    let owner = parts.next()?;
    format!("{owner}/{name}").parse().ok()
}

/// The variable `name` of the environment `get`, trimmed; `None` when unset or empty.
fn value(get: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    get(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// A process environment of `pairs` only, for the tests of every forge's discovery.
#[cfg(test)]
pub(super) fn env(
    pairs: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| (*v).to_owned())
    }
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
    fn remotes_name_their_server_and_whole_path() {
        let cases = [
            (
                "https://gitlab.example.com/group/sub/project.git",
                "https://gitlab.example.com",
                "group/sub/project",
            ),
            (
                "https://gitlab-ci-token:glcbt-secret@gitlab.example.com/g/p.git",
                "https://gitlab.example.com",
                "g/p",
            ),
            (
                "http://127.0.0.1:8080/o/r.git",
                "http://127.0.0.1:8080",
                "o/r",
            ),
            (
                "git@codeberg.org:forgejo/forgejo.git",
                "https://codeberg.org",
                "forgejo/forgejo",
            ),
            (
                "ssh://git@git.example:2222/a/b/c",
                "https://git.example",
                "a/b/c",
            ),
        ];
        for (url, server, path) in cases {
            let r = parse_remote(url).unwrap_or_else(|| panic!("{url}"));
            assert_eq!(
                (r.server.as_str(), r.path.as_str()),
                (server, path),
                "{url}"
            );
            assert!(!format!("{r:?}").contains("secret"));
        }
        for bad in [
            "/srv/git/repo.git",
            "file:///srv/git/r",
            "https://host",
            "file",
        ] {
            assert!(parse_remote(bad).is_none(), "{bad}");
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
