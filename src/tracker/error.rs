//! What can go wrong talking to a tracker, and which forge it was: [`Forge`] names GitHub,
//! GitLab or Forgejo (Gitea and Codeberg speak Forgejo's API) in every message and knows what
//! each wants of a token, so one [`TrackerError`] serves the three REST trackers and the local
//! one. Each variant says what happened and, through [`TrackerError::hint`], what to do.

use crate::error::Exit;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// A forge ralph talks to over its REST API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Forge {
    Github,
    Gitlab,
    /// Forgejo, Gitea and Codeberg (API v1).
    Forgejo,
}

/// What ralph knows of one forge, for its messages, hints and git: one value a forge, in place of
/// a `match` a fact.
#[derive(Debug)]
pub struct ForgeInfo {
    /// The name in messages.
    pub name: &'static str,
    /// The variables a token is read from, for messages.
    pub token_vars: &'static str,
    /// What a token needs, for hints.
    pub token_needs: &'static str,
    /// The variable that points ralph at the server, for hints.
    pub server_var: &'static str,
    /// How to name the repository, for hints.
    pub repo_hint: &'static str,
    /// The user name git sends with the token in HTTP basic authentication. GitHub takes
    /// `x-access-token`; GitLab takes any name with a personal, project or group access token
    /// (`oauth2` also with an OAuth token); Forgejo takes any name when the password is a token.
    pub git_user: &'static str,
    /// What to do without a token.
    pub no_token: &'static str,
    /// What to do about a server address that is no API root.
    pub bad_api_url: &'static str,
    /// How to make a token anew, after "create a new one".
    pub renew: &'static str,
    /// What a 404 may mean besides a wrong number.
    pub not_found: &'static str,
}

static GITHUB: ForgeInfo = ForgeInfo {
    name: "GitHub",
    token_vars: "GITHUB_TOKEN (or GH_TOKEN)",
    token_needs: "the `repo` scope (classic token) or Issues and Pull requests: Read and write (fine-grained token) on this repository",
    server_var: "GITHUB_API_URL",
    repo_hint: "pass --repo OWNER/NAME, set GITHUB_REPOSITORY, or add a GitHub `origin` remote",
    git_user: "x-access-token",
    no_token: "set GITHUB_TOKEN (or GH_TOKEN) to a token that can write issues and pull requests, or run `gh auth login`; use --tracker local to work offline",
    bad_api_url: "set GITHUB_API_URL to the API root, e.g. https://api.github.com or https://HOST/api/v3, or unset it",
    renew: "(it needs issues and pull requests write access) and export it as GITHUB_TOKEN",
    not_found: "check the issue number and the repository (--repo OWNER/NAME); GitHub also answers 404 when the token cannot see a private repository",
};

static GITLAB: ForgeInfo = ForgeInfo {
    name: "GitLab",
    token_vars: "GITLAB_TOKEN",
    token_needs: "the `api` scope and at least the Developer role in the project (a project access token, or a personal access token)",
    server_var: "GITLAB_URL",
    repo_hint: "pass --repo GROUP/PROJECT (subgroups too: GROUP/SUB/PROJECT), or add an `origin` remote on the GitLab server; in GitLab CI, CI_PROJECT_PATH names it",
    git_user: "oauth2",
    no_token: "set GITLAB_TOKEN to a token with the `api` scope and at least the Developer role in the project (a project access token, or a personal access token); use --tracker local to work offline",
    bad_api_url: "set GITLAB_URL to the server's address, e.g. https://gitlab.example.com, or unset it",
    renew: "with the `api` scope and at least the Developer role in the project (a project access token, or a personal access token)",
    not_found: "check the issue number and the project (--repo GROUP/PROJECT); GitLab also answers 404 when the token cannot see a private project",
};

static FORGEJO: ForgeInfo = ForgeInfo {
    name: "Forgejo",
    token_vars: "FORGEJO_TOKEN (or GITEA_TOKEN)",
    token_needs: "the scopes write:issue, write:repository and read:user (Settings → Applications → Access tokens) and write access to the repository",
    server_var: "FORGEJO_URL",
    repo_hint: "pass --repo OWNER/NAME, or add an `origin` remote on the Forgejo server; in Forgejo Actions, GITHUB_REPOSITORY names it",
    git_user: "x-access-token",
    no_token: "set FORGEJO_TOKEN (or GITEA_TOKEN) to a token with the scopes write:issue, write:repository and read:user (Settings → Applications → Access tokens) and write access to the repository; use --tracker local to work offline",
    bad_api_url: "set FORGEJO_URL to the server's address, e.g. https://forgejo.example.com, or unset it",
    renew: "with the scopes write:issue, write:repository and read:user (Settings → Applications → Access tokens) and write access to the repository",
    not_found: "check the issue number and the repository (--repo OWNER/NAME); Forgejo also answers 404 when the token cannot see a private repository",
};

impl Forge {
    /// What ralph knows of this forge.
    pub fn info(self) -> &'static ForgeInfo {
        match self {
            Forge::Github => &GITHUB,
            Forge::Gitlab => &GITLAB,
            Forge::Forgejo => &FORGEJO,
        }
    }

    /// The name in messages.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The variables a token is read from, for messages.
    pub fn token_vars(self) -> &'static str {
        self.info().token_vars
    }

    /// What a token needs, for hints.
    pub fn token_needs(self) -> &'static str {
        self.info().token_needs
    }

    /// The variable that points ralph at the server, for hints.
    pub fn server_var(self) -> &'static str {
        self.info().server_var
    }

    fn repo_hint(self) -> &'static str {
        self.info().repo_hint
    }

    /// The user name git sends with the token ([`ForgeInfo::git_user`]).
    pub fn git_user(self) -> &'static str {
        self.info().git_user
    }
}

impl fmt::Display for Forge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong talking to a tracker.
#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    #[error("no {forge} token: {looked}")]
    NoToken { forge: Forge, looked: String },
    #[error("only CI_JOB_TOKEN is set, and GitLab's CI job token cannot read or label issues, comment, or create merge requests")]
    JobTokenOnly,
    #[error("cannot tell which {forge} repository to use: {reason}")]
    NoRepository { forge: Forge, reason: String },
    #[error("{var} `{url}` is not a usable URL: {reason}")]
    BadApiUrl {
        forge: Forge,
        var: String,
        url: String,
        reason: String,
    },
    #[error("{forge} rejected the token from {source_name} (401 Bad credentials)")]
    BadCredentials { forge: Forge, source_name: String },
    #[error("{forge} refused to {action} (403 Forbidden): {message}")]
    Forbidden {
        forge: Forge,
        action: String,
        message: String,
    },
    #[error("GitHub Actions may not open pull requests in this repository (403): open it from {compare}")]
    PullRequestsNotAllowed { compare: String },
    #[error("{what} not found")]
    NotFound {
        what: String,
        /// The forge, or `None` for the local tracker's files.
        forge: Option<Forge>,
    },
    #[error("{forge} could not {action} ({status}): {message}")]
    Unprocessable {
        forge: Forge,
        action: String,
        /// 422 Unprocessable, or 409 Conflict (the object exists already).
        status: u16,
        message: String,
    },
    #[error("{forge}'s rate limit is used up until {reset} (while trying to {action})")]
    RateLimited {
        forge: Forge,
        action: String,
        reset: DateTime<Utc>,
    },
    #[error("{forge} answered {status} to `{action}` after {attempts} attempt(s): {message}")]
    Http {
        forge: Forge,
        action: String,
        status: u16,
        attempts: u32,
        message: String,
    },
    #[error("could not reach {forge} to {action} after {attempts} attempt(s): {message}")]
    Connection {
        forge: Forge,
        action: String,
        attempts: u32,
        message: String,
    },
    #[error("unexpected answer from {forge} to `{action}`: {message}")]
    Decode {
        forge: Forge,
        action: String,
        message: String,
    },
    #[error("{path}: {message}")]
    LocalFormat { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    LocalIo {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl TrackerError {
    /// The exit code: set-up and preflight problems are 2, failures during work are 1.
    pub fn exit(&self) -> Exit {
        match self {
            TrackerError::NoToken { .. }
            | TrackerError::JobTokenOnly
            | TrackerError::NoRepository { .. }
            | TrackerError::BadApiUrl { .. }
            | TrackerError::BadCredentials { .. }
            | TrackerError::Forbidden { .. }
            | TrackerError::NotFound { .. }
            | TrackerError::LocalFormat { .. } => Exit::Usage,
            TrackerError::Unprocessable { .. }
            | TrackerError::PullRequestsNotAllowed { .. }
            | TrackerError::RateLimited { .. }
            | TrackerError::Http { .. }
            | TrackerError::Connection { .. }
            | TrackerError::Decode { .. }
            | TrackerError::LocalIo { .. } => Exit::Failure,
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            TrackerError::NoToken { forge, .. } => forge.info().no_token.into(),
            TrackerError::JobTokenOnly => "add a project access token (role Developer, scope `api`) as a masked CI/CD variable named GITLAB_TOKEN: ralph uses it for the API and the push".into(),
            TrackerError::NoRepository { forge, .. } => forge.repo_hint().into(),
            TrackerError::BadApiUrl { forge, .. } => forge.info().bad_api_url.into(),
            TrackerError::BadCredentials { forge, source_name } => format!("the token from {source_name} is invalid, expired or revoked: create a new one {}", forge.info().renew),
            TrackerError::PullRequestsNotAllowed { .. } => "a maintainer can open the pull request from that link; to let ralph open them, allow it under Settings → Actions → General → Workflow permissions → \"Allow GitHub Actions to create and approve pull requests\" (in an organisation, its Actions settings must allow it too)".into(),
            TrackerError::Forbidden { forge, .. } => format!("the token needs {}", forge.token_needs()),
            TrackerError::NotFound { forge: None, .. } => "local issues are markdown files .ralph/issues/N.md (front matter with title, labels, state); see docs/configuration.md#local-issues".into(),
            TrackerError::NotFound { forge: Some(forge), .. } => forge.info().not_found.into(),
            TrackerError::RateLimited { .. } => "wait until the reset time, or use a token with a higher rate limit".into(),
            TrackerError::Http { forge, status, .. } if *status >= 500 => format!("{forge} seems to be having trouble: try again later"),
            TrackerError::Connection { forge, .. } => format!("check the network connection and {}", forge.server_var()),
            TrackerError::LocalFormat { .. } => "a local issue file starts with a front-matter block: ---, title: …, labels: [a, b], state: open, ---, then the body".into(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_an_exit_code_and_set_up_errors_have_hints() {
        let e = TrackerError::BadCredentials {
            forge: Forge::Github,
            source_name: "GITHUB_TOKEN".into(),
        };
        assert_eq!(e.exit(), Exit::Usage);
        assert!(e.hint().unwrap().contains("GITHUB_TOKEN"));
        let e = TrackerError::RateLimited {
            forge: Forge::Gitlab,
            action: "get issue #1".into(),
            reset: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        };
        assert_eq!(e.exit(), Exit::Failure);
        assert!(e.to_string().starts_with("GitLab's rate limit"));
        assert!(e.to_string().contains("2027-01-15"));
        for e in [
            TrackerError::NoToken {
                forge: Forge::Forgejo,
                looked: "FORGEJO_TOKEN and GITEA_TOKEN are unset".into(),
            },
            TrackerError::JobTokenOnly,
            TrackerError::NoRepository {
                forge: Forge::Gitlab,
                reason: "x".into(),
            },
            TrackerError::NotFound {
                what: "issue #3".into(),
                forge: Some(Forge::Github),
            },
        ] {
            assert_eq!(e.exit(), Exit::Usage);
            assert!(e.hint().is_some());
        }
    }

    #[test]
    fn each_forge_names_its_own_variables_and_needs() {
        let gitlab = TrackerError::NoToken {
            forge: Forge::Gitlab,
            looked: "GITLAB_TOKEN is unset".into(),
        };
        assert_eq!(gitlab.to_string(), "no GitLab token: GITLAB_TOKEN is unset");
        let hint = gitlab.hint().unwrap();
        assert!(
            hint.contains("GITLAB_TOKEN") && hint.contains("`api`"),
            "{hint}"
        );
        let job = TrackerError::JobTokenOnly;
        assert!(job.to_string().contains("cannot read or label issues"));
        assert!(job.hint().unwrap().contains("GITLAB_TOKEN"));
        let forgejo = TrackerError::Forbidden {
            forge: Forge::Forgejo,
            action: "comment".into(),
            message: "token does not have at least one of required scope(s): [write:issue]".into(),
        };
        assert!(forgejo.to_string().starts_with("Forgejo refused"));
        assert!(forgejo.hint().unwrap().contains("write:issue"));
        assert_eq!(Forge::Gitlab.git_user(), "oauth2");
        assert_eq!(Forge::Github.git_user(), "x-access-token");
    }
}
