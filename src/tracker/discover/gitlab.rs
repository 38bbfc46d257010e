//! Where the GitLab tracker finds its server, project and token. The server: `GITLAB_URL`, else
//! GitLab CI's `CI_API_V4_URL`/`CI_SERVER_URL`, else `[gitlab] url`, else the `origin` remote's
//! host, else gitlab.com. The project: `--repo GROUP/…/PROJECT`, else `CI_PROJECT_PATH`, else
//! the `origin` remote's whole path. The token: `GITLAB_TOKEN`; `CI_JOB_TOKEN` alone is refused
//! with the fix, since GitLab's job token cannot use the issue, note or merge request APIs.
//! Pure over what it is given ([`place`]); [`find`] asks git for the remote when needed.

use super::{check_url, first_token, origin_url, parse_remote, Token, TokenSource};
use crate::settings::{RepoSlug, Settings};
use crate::tracker::{Forge, Result, TrackerError};

/// gitlab.com, when nothing names another server.
const DEFAULT_SERVER: &str = "https://gitlab.com";

/// The server and project the GitLab tracker works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The REST API's base (`https://gitlab.example.com/api/v4`).
    pub api: String,
    /// The web address, for links (`https://gitlab.example.com`).
    pub web: String,
    pub project: RepoSlug,
}

/// The server and project from the flag, the environment (`get`), the configuration and the
/// `origin` remote's URL, in that order (see the module's documentation).
pub fn place(
    get: &impl Fn(&str) -> Option<String>,
    flag: Option<RepoSlug>,
    configured: Option<&str>,
    origin: Option<&str>,
) -> Result<Place> {
    let set = |name: &str| super::value(get, name);
    let remote = origin.and_then(parse_remote);
    let (api, web) = if let Some(url) = set(crate::env::GITLAB_URL) {
        let web = check_url(Forge::Gitlab, crate::env::GITLAB_URL, &url)?;
        (format!("{web}/api/v4"), web)
    } else if let Some(api) = set(crate::env::CI_API_V4_URL) {
        let api = check_url(Forge::Gitlab, crate::env::CI_API_V4_URL, &api)?;
        let web = match set(crate::env::CI_SERVER_URL) {
            Some(s) => check_url(Forge::Gitlab, crate::env::CI_SERVER_URL, &s)?,
            None => api.trim_end_matches("/api/v4").to_owned(),
        };
        (api, web)
    } else {
        let web = match (set(crate::env::CI_SERVER_URL), configured, &remote) {
            (Some(s), _, _) => check_url(Forge::Gitlab, crate::env::CI_SERVER_URL, &s)?,
            (None, Some(c), _) => check_url(Forge::Gitlab, "[gitlab] url", c)?,
            (None, None, Some(r)) => r.server.clone(),
            (None, None, None) => DEFAULT_SERVER.to_owned(),
        };
        (format!("{web}/api/v4"), web)
    };
    let no = |reason: &str| TrackerError::NoRepository {
        forge: Forge::Gitlab,
        reason: reason.to_owned(),
    };
    let project = match (flag, set(crate::env::CI_PROJECT_PATH), remote) {
        (Some(slug), _, _) => slug,
        (None, Some(path), _) => path
            .parse()
            .map_err(|e: String| no(&format!("CI_PROJECT_PATH: {e}")))?,
        (None, None, Some(r)) => r.path.parse().map_err(|_| {
            // The URL may carry credentials: never echo it.
            no("the `origin` remote does not look like GROUP/PROJECT on a GitLab server")
        })?,
        (None, None, None) => {
            return Err(no(
                "no --repo, no CI_PROJECT_PATH, and no `origin` remote to read it from",
            ))
        }
    };
    Ok(Place { api, web, project })
}

/// The token: `GITLAB_TOKEN`; with only `CI_JOB_TOKEN`, the refusal that says why.
pub fn token(get: &impl Fn(&str) -> Option<String>) -> Result<Token> {
    let gitlab = TokenSource::Var(crate::env::GITLAB_TOKEN);
    if let Some(t) = first_token(get, &[(crate::env::GITLAB_TOKEN, gitlab)]) {
        return Ok(t);
    }
    let job = TokenSource::Var(crate::env::CI_JOB_TOKEN);
    if first_token(get, &[(crate::env::CI_JOB_TOKEN, job)]).is_some() {
        return Err(TrackerError::JobTokenOnly);
    }
    Err(TrackerError::NoToken {
        forge: Forge::Gitlab,
        looked: "GITLAB_TOKEN is unset".into(),
    })
}

/// The place and token for `settings`, asking git for the `origin` remote only when the flag
/// and the environment leave the server or the project open.
pub async fn find(settings: &Settings) -> Result<(Place, Token)> {
    let get = crate::env::get;
    let configured = settings.config.forges.gitlab.as_deref();
    let token = token(&get)?;
    let without_remote = place(&get, settings.repo.clone(), configured, None);
    let needs_remote = match &without_remote {
        Err(TrackerError::NoRepository { .. }) => true,
        Ok(_) => {
            configured.is_none()
                && [
                    crate::env::GITLAB_URL,
                    crate::env::CI_API_V4_URL,
                    crate::env::CI_SERVER_URL,
                ]
                .iter()
                .all(|v| crate::env::non_empty(v).is_none())
        }
        Err(_) => false,
    };
    if !needs_remote {
        return Ok((without_remote?, token));
    }
    let origin = origin_url(Forge::Gitlab, &settings.root, crate::env::CI_PROJECT_PATH).await;
    match origin {
        Ok(url) => Ok((
            place(&get, settings.repo.clone(), configured, Some(&url))?,
            token,
        )),
        // No remote: the project must come from elsewhere; the server is gitlab.com.
        Err(e) => Ok((without_remote.map_err(|_| e)?, token)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::discover::env;

    #[test]
    fn gitlab_ci_names_the_server_and_the_nested_project() {
        let ci = env(&[
            ("CI_SERVER_URL", "https://gitlab.example.com"),
            ("CI_API_V4_URL", "https://gitlab.example.com/api/v4"),
            ("CI_PROJECT_PATH", "group/sub/project"),
        ]);
        let p = place(&ci, None, None, Some("https://github.com/o/r.git")).unwrap();
        assert_eq!(p.api, "https://gitlab.example.com/api/v4");
        assert_eq!(p.web, "https://gitlab.example.com");
        assert_eq!(p.project.to_string(), "group/sub/project");
    }

    #[test]
    fn gitlab_url_then_the_configuration_then_the_remote_then_gitlab_com() {
        let none = env(&[]);
        let explicit = env(&[("GITLAB_URL", "http://127.0.0.1:9/")]);
        let flag: Option<RepoSlug> = Some("g/p".parse().unwrap());
        let p = place(&explicit, flag.clone(), Some("https://cfg.example"), None).unwrap();
        assert_eq!(
            (p.api.as_str(), p.web.as_str()),
            ("http://127.0.0.1:9/api/v4", "http://127.0.0.1:9")
        );
        let p = place(
            &none,
            flag.clone(),
            Some("https://cfg.example"),
            Some("git@other:x/y.git"),
        )
        .unwrap();
        assert_eq!(p.web, "https://cfg.example");
        let p = place(&none, None, None, Some("git@gitlab.corp:team/sub/tool.git")).unwrap();
        assert_eq!(p.web, "https://gitlab.corp");
        assert_eq!(p.project.to_string(), "team/sub/tool");
        let p = place(&none, flag, None, None).unwrap();
        assert_eq!(p.api, "https://gitlab.com/api/v4");
        let err = place(&none, None, None, None).unwrap_err();
        assert!(matches!(
            err,
            TrackerError::NoRepository {
                forge: Forge::Gitlab,
                ..
            }
        ));
        let err = place(&env(&[("GITLAB_URL", "ftp://x")]), None, None, None).unwrap_err();
        assert!(err.to_string().starts_with("GITLAB_URL `ftp://x`"), "{err}");
    }

    #[test]
    fn the_job_token_alone_is_refused_with_the_reason() {
        let t = token(&env(&[
            ("GITLAB_TOKEN", " glpat-abcdefgh12345 "),
            ("CI_JOB_TOKEN", "x"),
        ]))
        .unwrap();
        assert_eq!(t.secret.expose(), "glpat-abcdefgh12345");
        assert_eq!(t.source.to_string(), "GITLAB_TOKEN");
        let err = token(&env(&[("CI_JOB_TOKEN", "glcbt-64_abcdefgh")])).unwrap_err();
        assert!(matches!(err, TrackerError::JobTokenOnly));
        assert!(err.to_string().contains("create merge requests"));
        let err = token(&env(&[])).unwrap_err();
        assert_eq!(err.to_string(), "no GitLab token: GITLAB_TOKEN is unset");
    }
}
