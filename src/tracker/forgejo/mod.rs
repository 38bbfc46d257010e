//! [`IssueTracker`] over Forgejo's API v1 — Gitea's and Codeberg's too: issues and their task
//! lists, labels, comments, pull requests, and the write-access gate (who applied a label — the
//! issue's timeline — and that user's collaborator permission). The shared REST layer
//! (`super::rest`) is the transport, with the token in `Authorization: token …`; Forgejo answers
//! in GitHub's shapes for issues, comments and pull requests, so `super::github::wire` reads
//! them. What differs: labels are applied and removed by id (looked up once per run), lists are
//! paged by `limit` (50 at most by default), a label change is a timeline comment, and pull
//! requests' CI is commit statuses only. `pulls` follows pull requests; `discover` finds the
//! server, repository and token.

pub mod discover;
mod pulls;

use super::discover::Token;
use super::github::wire::{User, WireComment, WireIssue, WirePermission, WirePull, WireRepo};
use super::rest::{self, segment, Api, Request, RetryPolicy};
use super::{
    Forge, Issue, IssueQuery, IssueState, IssueTracker, LabelAction, LabelSpec, Labeled,
    NewPullRequest, Permission, PullRequest, RepoFacts, Result, TrackerError,
};
use crate::settings::RepoSlug;
use ::http::Method;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

pub use self::discover::Place;

/// Items per page: Forgejo's default maximum.
const PAGE: u32 = 50;

/// A repository label, with the id Forgejo applies it by.
#[derive(Debug, Clone, Deserialize)]
struct Label {
    id: u64,
    name: String,
    /// `rrggbb`, with or without `#` depending on the version.
    #[serde(default)]
    color: String,
    #[serde(default)]
    description: Option<String>,
}

/// An entry of an issue's timeline (`GET …/issues/{n}/timeline`): a label change is `type`
/// `label`, with `body` `1` when it was added.
#[derive(Debug, Deserialize)]
struct TimelineEntry {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    label: Option<Label>,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
}

/// The Forgejo tracker for one repository.
pub struct ForgejoTracker {
    api: Api,
    repo: RepoSlug,
    /// The web address, for job logs on the same host.
    web: String,
    /// The repository's labels, read once per run.
    labels: tokio::sync::OnceCell<Vec<Label>>,
}

impl ForgejoTracker {
    /// A tracker for the repository at `place`, authenticated with `token`.
    pub fn new(place: &Place, token: Token, policy: RetryPolicy) -> Result<ForgejoTracker> {
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
        Ok(ForgejoTracker {
            api: Api::connect(endpoint, policy, token.source.to_string())?,
            repo: place.repo.clone(),
            web: place.web.clone(),
            labels: tokio::sync::OnceCell::new(),
        })
    }

    /// `/repos/{owner}/{name}` followed by `rest`.
    fn path(&self, rest: &str) -> String {
        format!(
            "/repos/{}/{}{rest}",
            segment(&self.repo.owner),
            segment(&self.repo.name)
        )
    }

    fn issue_subject(&self, number: u64) -> String {
        format!("issue #{number} in {}", self.repo)
    }

    fn repo_subject(&self) -> String {
        format!("repository {}", self.repo)
    }

    /// The repository's labels (read once).
    async fn all_labels(&self) -> Result<&Vec<Label>> {
        self.labels
            .get_or_try_init(|| async {
                self.api
                    .get_all(
                        self.path(&format!("/labels?limit={PAGE}")),
                        "list labels",
                        &self.repo_subject(),
                    )
                    .await
            })
            .await
    }

    /// The id of label `name`.
    async fn label_id(&self, name: &str) -> Result<Option<u64>> {
        Ok(self
            .all_labels()
            .await?
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
            .map(|l| l.id))
    }

    /// `PATCH` on issue (or pull request) `number` with `body`.
    async fn edit(&self, number: u64, body: serde_json::Value, action: String) -> Result<()> {
        self.api
            .send_json(
                Method::PATCH,
                self.path(&format!("/issues/{number}")),
                &body,
                action,
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }
}

#[async_trait]
impl IssueTracker for ForgejoTracker {
    fn pulls(&self) -> Option<&dyn super::pulls::PullRequestTracker> {
        Some(self)
    }

    fn describe(&self) -> String {
        format!("Forgejo {}", self.repo)
    }

    async fn issue(&self, number: u64) -> Result<Issue> {
        let wire: WireIssue = self
            .api
            .get(
                self.path(&format!("/issues/{number}")),
                format!("get issue #{number}"),
                self.issue_subject(number),
            )
            .await?;
        Ok(wire.into())
    }

    async fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>> {
        let state = match query.state {
            Some(IssueState::Open) => "open",
            Some(IssueState::Closed) => "closed",
            None => "all",
        };
        let mut path = self.path(&format!("/issues?state={state}&type=issues&limit={PAGE}"));
        if !query.labels.is_empty() {
            let labels: Vec<String> = query.labels.iter().map(|l| segment(l)).collect();
            path.push_str(&format!("&labels={}", labels.join(",")));
        }
        let wire: Vec<WireIssue> = self
            .api
            .get_all(path, "list issues", &self.repo_subject())
            .await?;
        Ok(wire.into_iter().map(Issue::from).collect())
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        if labels.is_empty() {
            return Ok(());
        }
        let mut ids = Vec::new();
        for name in labels {
            match self.label_id(name).await? {
                Some(id) => ids.push(id),
                None => {
                    return Err(TrackerError::NotFound {
                        what: format!("label `{name}` in {} (run `ralph setup`)", self.repo),
                        forge: Some(Forge::Forgejo),
                    })
                }
            }
        }
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/labels")),
                &json!({ "labels": ids }),
                format!("add labels {} to #{number}", labels.join(", ")),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<bool> {
        let Some(id) = self.label_id(label).await? else {
            return Ok(false);
        };
        let req = Request::new(
            Method::DELETE,
            self.path(&format!("/issues/{number}/labels/{id}")),
            format!("remove label {label} from #{number}"),
        )
        .subject(format!("label {label} on #{number} in {}", self.repo));
        match self.api.send(req).await {
            Ok(_) => Ok(true),
            Err(TrackerError::NotFound { .. }) => {
                self.issue(number).await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    async fn labels(&self) -> Result<Option<Vec<String>>> {
        Ok(Some(
            self.all_labels()
                .await?
                .iter()
                .map(|l| l.name.clone())
                .collect(),
        ))
    }

    async fn ensure_labels(&self, labels: &[LabelSpec]) -> Result<Vec<(String, LabelAction)>> {
        let existing = self.all_labels().await?;
        let seen: Vec<(&str, &str, Option<&str>)> = existing
            .iter()
            .map(|l| (l.name.as_str(), l.color.as_str(), l.description.as_deref()))
            .collect();
        let mut done = Vec::new();
        for (spec, known) in super::label_plan(labels, &seen) {
            let action = match known {
                Some(action) => action,
                None => {
                    self.api
                        .send_json(
                            Method::POST,
                            self.path("/labels"),
                            &json!({
                                "name": spec.name,
                                "color": format!("#{}", spec.color),
                                "description": spec.description,
                            }),
                            format!("create label {}", spec.name),
                            self.repo_subject(),
                        )
                        .await?;
                    LabelAction::Created
                }
            };
            done.push((spec.name.clone(), action));
        }
        Ok(done)
    }

    async fn set_body(&self, number: u64, body: &str) -> Result<()> {
        self.edit(
            number,
            json!({ "body": body }),
            format!("update the body of issue #{number}"),
        )
        .await
    }

    async fn comment(&self, number: u64, body: &str) -> Result<()> {
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/comments")),
                &json!({ "body": super::posted(body) }),
                format!("comment on #{number}"),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn comments(&self, number: u64) -> Result<Vec<String>> {
        let comments: Vec<WireComment> = self
            .api
            .get_all(
                self.path(&format!("/issues/{number}/comments?limit={PAGE}")),
                &format!("read the comments of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        Ok(comments.into_iter().filter_map(|c| c.body).collect())
    }

    async fn assign(&self, number: u64, logins: &[String]) -> Result<()> {
        if logins.is_empty() {
            return Ok(());
        }
        self.edit(
            number,
            json!({ "assignees": logins }),
            format!("assign issue #{number} to {}", logins.join(", ")),
        )
        .await
    }

    async fn current_user(&self) -> Result<Option<String>> {
        match self
            .api
            .get::<User>("/user", "find the token's user", "the token's user")
            .await
        {
            Ok(u) => Ok(Some(u.login)),
            // The automatic token of Forgejo Actions has no user.
            Err(TrackerError::Forbidden { .. }) | Err(TrackerError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create_pull_request(&self, pr: &NewPullRequest) -> Result<PullRequest> {
        let created = self
            .api
            .send_json(
                Method::POST,
                self.path("/pulls"),
                &json!({
                    "title": super::posted(&pr.title),
                    "head": pr.head,
                    "base": pr.base,
                    "body": super::posted(&pr.body),
                }),
                format!("open a pull request from {} into {}", pr.head, pr.base),
                format!("repository {} or branch {}", self.repo, pr.base),
            )
            .await;
        match created {
            Ok(reply) => Ok(reply.json::<WirePull>("open a pull request")?.into()),
            // 409 "pull request already exists for these targets" (422 on older Giteas).
            Err(e @ TrackerError::Unprocessable { .. }) => {
                self.find_pull_request(&pr.head).await?.ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let pulls: Vec<WirePull> = self
            .api
            .get_all(
                self.path(&format!("/pulls?state=open&limit={PAGE}")),
                &format!("find a pull request for {branch}"),
                &self.repo_subject(),
            )
            .await?;
        Ok(pulls
            .into_iter()
            .find(|p| p.head.name == branch)
            .map(PullRequest::from))
    }

    async fn label_applied(&self, number: u64, label: &str) -> Result<Option<Labeled>> {
        let timeline: Vec<TimelineEntry> = self
            .api
            .get_all(
                self.path(&format!("/issues/{number}/timeline?limit={PAGE}")),
                &format!("read the timeline of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        Ok(timeline
            .into_iter()
            .filter(|e| {
                e.kind == "label"
                    && e.body.as_deref() == Some("1")
                    && e.label
                        .as_ref()
                        .is_some_and(|l| l.name.eq_ignore_ascii_case(label))
            })
            .map(|e| Labeled {
                by: e.user.map(|u| u.login),
                at: e.created_at,
            })
            .next_back())
    }

    async fn repository(&self) -> Result<RepoFacts> {
        let repo = self
            .api
            .get::<WireRepo>(self.path(""), "read the repository", self.repo_subject())
            .await?;
        Ok(RepoFacts {
            default_branch: repo.default_branch.filter(|b| !b.is_empty()),
            permission: repo.permissions.map(|p| p.strongest()),
        })
    }

    async fn permission(&self, login: &str) -> Result<Permission> {
        let result = self
            .api
            .get::<WirePermission>(
                self.path(&format!("/collaborators/{}/permission", segment(login))),
                format!("read the permission of {login}"),
                format!("user {login} in {}", self.repo),
            )
            .await;
        match result {
            Ok(p) => Ok(Permission::from_github(&p.permission)),
            // Not a collaborator (Forgejo answers 403 or 404).
            Err(TrackerError::NotFound { .. }) | Err(TrackerError::Forbidden { .. }) => {
                Ok(Permission::None)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(Permission::from_github("owner"), Permission::Admin);
    }
}
