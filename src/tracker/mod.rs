//! Where issues live. [`IssueTracker`] is the narrow interface the competition needs (read an
//! issue, move labels, edit the body, comment, open a pull request, check who may trigger a
//! run); [`github::GithubTracker`] implements it over the GitHub REST API,
//! [`gitlab::GitlabTracker`] over GitLab's REST API v4, [`forgejo::ForgejoTracker`] over
//! Forgejo's (and Gitea's) API v1 — the three share one HTTP layer, [`rest`] — and
//! [`local::LocalTracker`] over markdown files in `.ralph/issues/`. [`open`] picks one from
//! the settings. The workflow rules on top (labels, the queue) are in [`workflow`]; what
//! happens to a pull request after it was opened (state, feedback, CI) is [`pulls`], which
//! both trackers also implement.

pub mod discover;
mod error;
pub mod forgejo;
pub mod github;
pub mod gitlab;
pub mod local;
pub mod pulls;
pub mod rest;
pub mod shaped;
pub mod workflow;

use crate::config::TrackerKind;
use crate::secret::GitToken;
use crate::settings::Settings;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use self::error::{Forge, ForgeInfo, TrackerError};

/// Whether an issue is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    Open,
    Closed,
}

impl fmt::Display for IssueState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
        })
    }
}

/// An issue, as much of it as ralph uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    pub state: IssueState,
    pub assignees: Vec<String>,
    /// The login of whoever opened it (`None` on the local tracker when not recorded).
    pub author: Option<String>,
    /// When it was opened (`None` on the local tracker when not recorded).
    pub created_at: Option<DateTime<Utc>>,
    /// GitHub lists pull requests among issues; ralph never competes on one.
    pub is_pull_request: bool,
    /// Where a person can read it (`None` on the local tracker).
    pub url: Option<String>,
}

impl Issue {
    pub fn has_label(&self, label: &str) -> bool {
        self.labels.iter().any(|l| l.eq_ignore_ascii_case(label))
    }
}

/// Which issues to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueQuery {
    /// Issues carrying all of these labels.
    pub labels: Vec<String>,
    /// `None`: open and closed.
    pub state: Option<IssueState>,
}

/// A repository label and how it should look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabelSpec {
    pub name: String,
    /// Six hex digits, no `#`.
    pub color: String,
    pub description: String,
}

impl LabelSpec {
    /// Whether a label of `color` (with or without `#`, any case) and `description` looks as
    /// specified.
    pub fn looks_like(&self, color: &str, description: Option<&str>) -> bool {
        color
            .trim_start_matches('#')
            .eq_ignore_ascii_case(&self.color)
            && description.unwrap_or("") == self.description
    }
}

/// What becomes of each of `labels` given the repository's `existing` labels (name, colour,
/// description): `Exists` or `ExistsDifferent` (left as the user set it), or `None` — to be
/// created. Names match in any case.
pub fn label_plan<'a>(
    labels: &'a [LabelSpec],
    existing: &[(&str, &str, Option<&str>)],
) -> Vec<(&'a LabelSpec, Option<LabelAction>)> {
    labels
        .iter()
        .map(|spec| {
            let found = existing
                .iter()
                .find(|(name, ..)| name.eq_ignore_ascii_case(&spec.name));
            let action = found.map(|(_, color, description)| {
                if spec.looks_like(color, *description) {
                    LabelAction::Exists
                } else {
                    LabelAction::ExistsDifferent
                }
            });
            (spec, action)
        })
        .collect()
}

/// What [`IssueTracker::ensure_labels`] did with one label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelAction {
    /// It did not exist and was created.
    Created,
    /// It existed as specified.
    Exists,
    /// It existed with another colour or description, which was left as the user set it.
    ExistsDifferent,
    /// The tracker needs no label set-up (local files take any label).
    NotNeeded,
}

/// A pull request ralph opened or found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    /// The branch with the change.
    pub head: String,
    /// The branch it merges into.
    pub base: String,
    pub url: Option<String>,
}

/// A pull request to open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewPullRequest {
    /// The issue it resolves (the local tracker files the PR under it).
    pub issue: u64,
    pub title: String,
    pub head: String,
    pub base: String,
    pub body: String,
}

/// A label's most recent application to an issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labeled {
    pub by: Option<String>,
    pub at: Option<DateTime<Utc>>,
}

/// A user's permission on the repository, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    None,
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl Permission {
    /// From GitHub's (and Forgejo's) `permission`/`role_name` strings; unknown roles count as
    /// read.
    pub fn from_github(s: &str) -> Permission {
        match s {
            "admin" | "owner" => Permission::Admin,
            "maintain" => Permission::Maintain,
            "write" | "push" => Permission::Write,
            "triage" => Permission::Triage,
            "none" => Permission::None,
            _ => Permission::Read,
        }
    }

    /// Write access or more: may trigger a run in Action mode (docs/specification.md §9).
    pub fn can_write(self) -> bool {
        self >= Permission::Write
    }
}

/// What a forge says of the token ralph uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenFacts {
    /// The name its owner gave it.
    pub name: String,
    pub scopes: Vec<String>,
    /// The scopes a competition needs that it lacks.
    pub missing: Vec<String>,
    /// When it expires (`YYYY-MM-DD`), if ever.
    pub expires: Option<String>,
    pub active: bool,
    /// What a token that lacks a scope should be made with instead.
    pub renew: String,
}

/// What a tracker can tell about the repository before a competition starts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RepoFacts {
    /// The repository's default branch.
    pub default_branch: Option<String>,
    /// What the credentials may do there.
    pub permission: Option<Permission>,
}

pub type Result<T, E = TrackerError> = std::result::Result<T, E>;

/// The tracker operations the competition needs. Implementations are cheap to share
/// (`&self` everywhere) and never print: they return data or a [`TrackerError`].
#[async_trait]
pub trait IssueTracker: Send + Sync {
    /// A short description for messages, e.g. `GitHub octo/repo` or `local .ralph/issues`.
    fn describe(&self) -> String;

    async fn issue(&self, number: u64) -> Result<Issue>;

    /// Every issue matching `query` (all pages), pull requests included: callers filter.
    async fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>>;

    /// Adds labels (already present ones are fine).
    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()>;

    /// Removes a label; `Ok(false)` when the issue did not have it.
    async fn remove_label(&self, number: u64, label: &str) -> Result<bool>;

    /// Creates the repository labels that do not exist; never changes existing ones.
    async fn ensure_labels(&self, labels: &[LabelSpec]) -> Result<Vec<(String, LabelAction)>>;

    /// Replaces the issue body.
    async fn set_body(&self, number: u64, body: &str) -> Result<()>;

    async fn comment(&self, number: u64, body: &str) -> Result<()>;

    async fn assign(&self, number: u64, logins: &[String]) -> Result<()>;

    /// The user the credentials belong to (`None` when the tracker has no users).
    async fn current_user(&self) -> Result<Option<String>>;

    /// Opens a pull request; when one is already open for the branch, returns that one.
    async fn create_pull_request(&self, pr: &NewPullRequest) -> Result<PullRequest>;

    /// The open pull request whose head is `branch`, if any.
    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>>;

    /// When and by whom `label` was most recently applied to the issue (`None` when the
    /// tracker has no record of it).
    async fn label_applied(&self, number: u64, label: &str) -> Result<Option<Labeled>>;

    /// The bodies of the issue's comments, oldest first.
    async fn comments(&self, number: u64) -> Result<Vec<String>>;

    /// Who most recently applied `label` to the issue (`None` when nobody on record).
    async fn label_applied_by(&self, number: u64, label: &str) -> Result<Option<String>> {
        Ok(self.label_applied(number, label).await?.and_then(|l| l.by))
    }

    /// A user's permission on the repository.
    async fn permission(&self, login: &str) -> Result<Permission>;

    /// The repository's default branch and the credentials' permission, where the tracker
    /// knows them (files know neither).
    async fn repository(&self) -> Result<RepoFacts> {
        Ok(RepoFacts::default())
    }

    /// What the tracker can tell of its token beyond the permission (`ralph doctor`): its
    /// scopes, where the forge lists them (GitLab) or answers which one a request lacks
    /// (Forgejo); `None` elsewhere.
    async fn token_facts(&self) -> Result<Option<TokenFacts>> {
        Ok(None)
    }

    /// The repository's label names (`None` where the tracker has no label list: any label
    /// can be used).
    async fn labels(&self) -> Result<Option<Vec<String>>> {
        Ok(None)
    }

    /// The tracker's pull requests after they were opened (`ralph follow`); `None` where it
    /// has none.
    fn pulls(&self) -> Option<&dyn pulls::PullRequestTracker> {
        None
    }

    /// The repository's default branch, where the tracker knows it.
    async fn default_branch(&self) -> Result<Option<String>> {
        Ok(self.repository().await?.default_branch)
    }
}

/// Text as ralph posts it (a comment, a pull request's title and body): without terminal escape
/// sequences or control characters — a check's coloured output would show as `[31m` noise.
pub fn posted(text: &str) -> String {
    crate::output::strip_ansi(text)
}

/// The token git pushes with (the branch, the ledger) for the configured tracker, with the
/// forge's user name; `None` leaves the push to the user's git credential setup. The local
/// tracker pushes with GitHub's token, as its remote usually is there.
pub fn push_token(settings: &Settings) -> Option<GitToken> {
    let get = crate::env::get;
    let (forge, token) = match settings.tracker {
        TrackerKind::Github | TrackerKind::Local => (Forge::Github, discover::token_from_env(get)),
        TrackerKind::Gitlab => (Forge::Gitlab, gitlab::discover::token(&get).ok()),
        TrackerKind::Forgejo => (Forge::Forgejo, forgejo::discover::token(&get).ok()),
    };
    token.map(|t| GitToken::new(forge.git_user(), t.secret))
}

/// Opens the tracker the settings name. For GitHub this finds the repository, the API URL
/// and the token (running `gh auth token` if needed); nothing is sent over the network yet.
pub async fn open(settings: &Settings) -> Result<Box<dyn IssueTracker>> {
    match settings.tracker {
        TrackerKind::Local => Ok(Box::new(local::LocalTracker::new(
            settings.ralph_dir.join("issues"),
        ))),
        TrackerKind::Github => {
            let repo = discover::repository(settings.repo.clone(), &settings.root).await?;
            let api = discover::api_url()?;
            let token = discover::token(&api).await?;
            Ok(Box::new(github::tracker(
                &api,
                repo,
                token,
                github::RetryPolicy::default(),
            )?))
        }
        TrackerKind::Forgejo => {
            let (place, token) = forgejo::discover::find(settings).await?;
            Ok(Box::new(forgejo::tracker(
                &place,
                token,
                rest::RetryPolicy::default(),
            )?))
        }
        TrackerKind::Gitlab => {
            let (place, token) = gitlab::discover::find(settings).await?;
            Ok(Box::new(gitlab::GitlabTracker::new(
                &place,
                token,
                rest::RetryPolicy::default(),
            )?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_plans_keep_what_exists_and_create_the_rest() {
        let specs = workflow::labels("ready");
        let existing = [
            (
                "READY",
                "#0E8A16",
                Some("Spec is ready: ralph may compete on this issue"),
            ),
            ("ralph", "5319e7", Some("mine")),
        ];
        let plan = label_plan(&specs, &existing);
        let got: Vec<(&str, Option<LabelAction>)> =
            plan.iter().map(|(s, a)| (s.name.as_str(), *a)).collect();
        assert_eq!(
            got,
            [
                ("ralph", Some(LabelAction::ExistsDifferent)),
                ("in-refinement", None),
                ("ready", Some(LabelAction::Exists)),
                ("in-progress", None),
                ("attention-needed", None),
                ("backlog-review", None),
            ]
        );
    }

    #[test]
    fn permissions_order_and_parse() {
        assert!(Permission::from_github("admin").can_write());
        assert!(Permission::from_github("maintain").can_write());
        assert!(Permission::from_github("write").can_write());
        assert!(!Permission::from_github("triage").can_write());
        assert!(!Permission::from_github("read").can_write());
        assert!(!Permission::from_github("none").can_write());
        assert_eq!(Permission::from_github("custom-role"), Permission::Read);
    }
}
