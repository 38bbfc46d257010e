//! Where the Forgejo tracker finds its server, repository and token (Forgejo, Gitea and
//! Codeberg alike). The server: `FORGEJO_URL`, else — inside Forgejo or Gitea Actions —
//! `FORGEJO_SERVER_URL` or `GITHUB_SERVER_URL` (the runner sets them to its own forge), else
//! `[forgejo] url`, else the `origin` remote's host; there is no default server. The repository:
//! `--repo OWNER/NAME`, else `GITHUB_REPOSITORY` inside Actions, else the `origin` remote. The
//! token: `FORGEJO_TOKEN`, `GITEA_TOKEN`, and inside Forgejo or Gitea Actions `GITHUB_TOKEN`
//! (what ralph's action passes) — never outside them, where it is a GitHub token. Pure over
//! what it is given ([`place`]); [`find`] asks git for the remote when needed.

use super::{check_url, first_token, flat, origin_url, parse_remote, Token, TokenSource};
use crate::settings::{RepoSlug, Settings};
use crate::tracker::{Forge, Result, TrackerError};

/// The server and repository the Forgejo tracker works with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The API's base (`https://codeberg.org/api/v1`).
    pub api: String,
    /// The web address, for links and job logs (`https://codeberg.org`).
    pub web: String,
    pub repo: RepoSlug,
}

/// Whether ralph runs inside Forgejo or Gitea Actions.
fn in_actions(get: &impl Fn(&str) -> Option<String>) -> bool {
    [crate::env::FORGEJO_ACTIONS, crate::env::GITEA_ACTIONS]
        .iter()
        .any(|v| get(v).as_deref() == Some("true"))
}

/// The server and repository from the flag, the environment (`get`), the configuration and
/// the `origin` remote's URL (see the module's documentation).
pub fn place(
    get: &impl Fn(&str) -> Option<String>,
    flag: Option<RepoSlug>,
    configured: Option<&str>,
    origin: Option<&str>,
) -> Result<Place> {
    let set = |name: &str| super::value(get, name);
    let actions = in_actions(get);
    let remote = origin.and_then(parse_remote);
    let from_actions = || {
        [
            crate::env::FORGEJO_URL,
            "FORGEJO_SERVER_URL",
            crate::env::GITHUB_SERVER_URL,
        ]
        .into_iter()
        .filter(|v| actions || *v == crate::env::FORGEJO_URL)
        .find_map(|v| set(v).map(|url| (v, url)))
    };
    let web =
        match (from_actions(), configured, &remote) {
            (Some((var, url)), _, _) => check_url(Forge::Forgejo, var, &url)?,
            (None, Some(c), _) => check_url(Forge::Forgejo, "[forgejo] url", c)?,
            (None, None, Some(r)) => r.server.clone(),
            (None, None, None) => return Err(TrackerError::NoRepository {
                forge: Forge::Forgejo,
                reason:
                    "no server: set FORGEJO_URL or `[forgejo] url`, or add an `origin` remote on it"
                        .into(),
            }),
        };
    let no = |reason: String| TrackerError::NoRepository {
        forge: Forge::Forgejo,
        reason,
    };
    let repo = match (
        flag,
        set(crate::env::GITHUB_REPOSITORY).filter(|_| actions),
        remote,
    ) {
        (Some(slug), _, _) => slug,
        (None, Some(r), _) => r
            .parse()
            .map_err(|e: String| no(format!("GITHUB_REPOSITORY: {e}")))?,
        (None, None, Some(r)) => {
            let mut parts = r.path.rsplit('/');
            let (name, owner) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            // The URL may carry credentials: never echo it.
            format!("{owner}/{name}").parse().map_err(|_| {
                no("the `origin` remote does not look like OWNER/NAME on a Forgejo server".into())
            })?
        }
        (None, None, None) => {
            return Err(no("no --repo and no `origin` remote to read it from".into()))
        }
    };
    Ok(Place {
        api: format!("{web}/api/v1"),
        web,
        repo: flat(Forge::Forgejo, repo)?,
    })
}

/// The token: `FORGEJO_TOKEN`, `GITEA_TOKEN`, then (inside Forgejo or Gitea Actions only)
/// `GITHUB_TOKEN`.
pub fn token(get: &impl Fn(&str) -> Option<String>) -> Result<Token> {
    let mut vars = vec![
        (
            crate::env::FORGEJO_TOKEN,
            TokenSource::Var(crate::env::FORGEJO_TOKEN),
        ),
        (
            crate::env::GITEA_TOKEN,
            TokenSource::Var(crate::env::GITEA_TOKEN),
        ),
    ];
    if in_actions(get) {
        vars.push((crate::env::GITHUB_TOKEN, TokenSource::GithubToken));
    }
    first_token(get, &vars).ok_or_else(|| TrackerError::NoToken {
        forge: Forge::Forgejo,
        looked: if in_actions(get) {
            "FORGEJO_TOKEN, GITEA_TOKEN and GITHUB_TOKEN are unset".into()
        } else {
            "FORGEJO_TOKEN and GITEA_TOKEN are unset".into()
        },
    })
}

/// The place and token for `settings`, asking git for the `origin` remote only when needed.
pub async fn find(settings: &Settings) -> Result<(Place, Token)> {
    let get = crate::env::get;
    let configured = settings.config.forges.forgejo.as_deref();
    let token = token(&get)?;
    match place(&get, settings.repo.clone(), configured, None) {
        Ok(p) => Ok((p, token)),
        Err(TrackerError::NoRepository { .. }) => {
            let url = origin_url(Forge::Forgejo, &settings.root, crate::env::FORGEJO_URL).await?;
            Ok((
                place(&get, settings.repo.clone(), configured, Some(&url))?,
                token,
            ))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracker::discover::env;

    #[test]
    fn forgejo_actions_name_the_server_repository_and_token() {
        let actions = env(&[
            ("FORGEJO_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://codeberg.org"),
            ("GITHUB_REPOSITORY", "forgejo/forgejo"),
            ("GITHUB_TOKEN", "automatic-token-1234"),
        ]);
        let p = place(&actions, None, None, None).unwrap();
        assert_eq!(p.api, "https://codeberg.org/api/v1");
        assert_eq!(p.repo.to_string(), "forgejo/forgejo");
        assert_eq!(token(&actions).unwrap().source.to_string(), "GITHUB_TOKEN");
    }

    #[test]
    fn outside_actions_github_variables_are_not_forgejos() {
        let github = env(&[
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_TOKEN", "ghp_not_for_forgejo_123"),
        ]);
        let err = token(&github).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no Forgejo token: FORGEJO_TOKEN and GITEA_TOKEN are unset"
        );
        let p = place(
            &github,
            None,
            None,
            Some("git@git.example.org:team/tool.git"),
        )
        .unwrap();
        assert_eq!(
            (p.web.as_str(), p.repo.to_string().as_str()),
            ("https://git.example.org", "team/tool")
        );
        let err = place(&github, None, None, None).unwrap_err();
        assert!(err.to_string().contains("FORGEJO_URL"), "{err}");
        let t = token(&env(&[("GITEA_TOKEN", " gitea-token-5678 ")])).unwrap();
        assert_eq!(t.secret.expose(), "gitea-token-5678");
    }

    #[test]
    fn the_url_flag_and_configuration_come_first_and_nesting_is_refused() {
        let explicit = env(&[("FORGEJO_URL", "http://127.0.0.1:3000/")]);
        let p = place(
            &explicit,
            Some("o/r".parse().unwrap()),
            Some("https://cfg"),
            None,
        )
        .unwrap();
        assert_eq!(p.api, "http://127.0.0.1:3000/api/v1");
        let p = place(
            &env(&[]),
            Some("o/r".parse().unwrap()),
            Some("https://cfg.example"),
            None,
        )
        .unwrap();
        assert_eq!(p.web, "https://cfg.example");
        let err = place(&explicit, Some("a/b/c".parse().unwrap()), None, None).unwrap_err();
        assert!(err.to_string().contains("OWNER/NAME"), "{err}");
    }
}
