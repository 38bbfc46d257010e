//! [`IssueTracker`] over GitLab's REST API v4 (gitlab.com or self-hosted): issues and their
//! task lists, labels, notes, merge requests, and the write-access gate (who added a label —
//! resource label events — and that user's access level, Developer or above). The shared REST
//! layer (`super::rest`) is the transport, with the token in the `PRIVATE-TOKEN` header;
//! `wire` holds the JSON shapes; `pulls` what happens to a merge request after it was opened;
//! `discover` where the server, project and token come from.
//!
//! GitLab numbers issues and merge requests separately (`iid`s per project), and takes users
//! by id where GitHub takes logins: the ids ralph meets (its own, label events', notes'
//! authors) are remembered, so a login costs a lookup (`/users?username=`) only once.

pub use super::discover::gitlab as discover;
mod pulls;
mod wire;

use self::wire::{LabelEvent, Note, User, WireIssue, WireLabel, WireProject};
use super::discover::Token;
use super::rest::{self, segment, Api, Request, RetryPolicy};
use super::{
    Forge, Issue, IssueQuery, IssueState, IssueTracker, LabelAction, LabelSpec, Labeled,
    NewPullRequest, Permission, PullRequest, RepoFacts, Result, TokenFacts, TrackerError,
};
use crate::settings::RepoSlug;
use ::http::Method;
use async_trait::async_trait;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Mutex;

pub use self::discover::Place;

/// The GitLab tracker for one project.
pub struct GitlabTracker {
    api: Api,
    project: RepoSlug,
    /// `/projects/<the project's path, encoded>`.
    root: String,
    /// Usernames to ids, as met.
    users: Mutex<BTreeMap<String, u64>>,
    /// The token's own user, once asked.
    me: tokio::sync::OnceCell<Option<User>>,
}

impl GitlabTracker {
    /// A tracker for the project at `place`, authenticated with `token`.
    pub fn new(place: &Place, token: Token, policy: RetryPolicy) -> Result<GitlabTracker> {
        let endpoint = rest::Endpoint {
            forge: Forge::Gitlab,
            var: crate::env::GITLAB_URL,
            url: &place.api,
            auth: (
                ::http::header::HeaderName::from_static("private-token"),
                token.secret.expose().to_owned(),
            ),
            headers: vec![(
                ::http::header::ACCEPT,
                ::http::HeaderValue::from_static("application/json"),
            )],
        };
        Ok(GitlabTracker {
            api: Api::connect(endpoint, policy, token.source.to_string())?,
            root: format!("/projects/{}", segment(&place.project.to_string())),
            project: place.project.clone(),
            users: Mutex::new(BTreeMap::new()),
            me: tokio::sync::OnceCell::new(),
        })
    }

    /// `/projects/:id` followed by `rest`.
    fn path(&self, rest: &str) -> String {
        format!("{}{rest}", self.root)
    }

    fn issue_subject(&self, number: u64) -> String {
        format!("issue #{number} in {}", self.project)
    }

    fn project_subject(&self) -> String {
        format!("project {}", self.project)
    }

    /// Remembers the ids of `users`.
    fn met<'a>(&self, users: impl IntoIterator<Item = &'a User>) {
        let mut known = self.users.lock().unwrap_or_else(|e| e.into_inner());
        for u in users {
            known.insert(u.username.to_ascii_lowercase(), u.id);
        }
    }

    /// The id of the user `login`, or `None` when GitLab has no such user.
    async fn user_id(&self, login: &str) -> Result<Option<u64>> {
        let known = {
            let users = self.users.lock().unwrap_or_else(|e| e.into_inner());
            users.get(&login.to_ascii_lowercase()).copied()
        };
        if known.is_some() {
            return Ok(known);
        }
        let found: Vec<User> = self
            .api
            .get(
                format!("/users?username={}", segment(login)),
                format!("find the user {login}"),
                format!("user {login}"),
            )
            .await?;
        self.met(&found);
        Ok(found
            .into_iter()
            .find(|u| u.username.eq_ignore_ascii_case(login))
            .map(|u| u.id))
    }

    async fn project_facts(&self) -> Result<WireProject> {
        self.api
            .get(self.path(""), "read the project", self.project_subject())
            .await
    }

    /// `PUT` on issue `number` with `body`.
    async fn update_issue(
        &self,
        number: u64,
        body: serde_json::Value,
        action: String,
    ) -> Result<()> {
        self.api
            .send_json(
                Method::PUT,
                self.path(&format!("/issues/{number}")),
                &body,
                action,
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    /// Every label of the project (its groups' included).
    async fn all_labels(&self) -> Result<Vec<WireLabel>> {
        self.api
            .get_all(
                self.path("/labels?per_page=100"),
                "list labels",
                &self.project_subject(),
            )
            .await
    }

    /// Creates `spec` unless someone did meanwhile.
    async fn create_label(&self, spec: &LabelSpec) -> Result<LabelAction> {
        let created = self
            .api
            .send_json(
                Method::POST,
                self.path("/labels"),
                &json!({
                    "name": spec.name,
                    "color": format!("#{}", spec.color),
                    "description": spec.description,
                }),
                format!("create label {}", spec.name),
                self.project_subject(),
            )
            .await;
        match created {
            Ok(_) => Ok(LabelAction::Created),
            // 409 "Label already exists": created meanwhile, fine.
            Err(TrackerError::Unprocessable { status: 409, .. }) => Ok(LabelAction::Exists),
            Err(e) => Err(e),
        }
    }

    /// The token's own user.
    async fn me(&self) -> Result<Option<User>> {
        self.me
            .get_or_try_init(|| async {
                let me: User = self
                    .api
                    .get("/user", "find the token's user", "the token's user")
                    .await?;
                self.met([&me]);
                Ok(Some(me))
            })
            .await
            .cloned()
    }
}

#[async_trait]
impl IssueTracker for GitlabTracker {
    fn pulls(&self) -> Option<&dyn super::pulls::PullRequestTracker> {
        Some(self)
    }

    fn describe(&self) -> String {
        format!("GitLab {}", self.project)
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
            Some(IssueState::Open) => "opened",
            Some(IssueState::Closed) => "closed",
            None => "all",
        };
        let mut path = self.path(&format!(
            "/issues?state={state}&order_by=created_at&sort=asc&per_page=100"
        ));
        if !query.labels.is_empty() {
            let labels: Vec<String> = query.labels.iter().map(|l| segment(l)).collect();
            path.push_str(&format!("&labels={}", labels.join(",")));
        }
        let wire: Vec<WireIssue> = self
            .api
            .get_all(path, "list issues", &self.project_subject())
            .await?;
        Ok(wire.into_iter().map(Issue::from).collect())
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        if labels.is_empty() {
            return Ok(());
        }
        self.update_issue(
            number,
            json!({ "add_labels": labels.join(",") }),
            format!("add labels {} to issue #{number}", labels.join(", ")),
        )
        .await
    }

    /// GitLab removes a label the issue lacks without a word, and cannot tell which it was:
    /// the answer is always `true` (every caller that cares has looked at the issue first).
    async fn remove_label(&self, number: u64, label: &str) -> Result<bool> {
        self.update_issue(
            number,
            json!({ "remove_labels": label }),
            format!("remove label {label} from issue #{number}"),
        )
        .await?;
        Ok(true)
    }

    async fn labels(&self) -> Result<Option<Vec<String>>> {
        Ok(Some(
            self.all_labels()
                .await?
                .into_iter()
                .map(|l| l.name)
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
                None => self.create_label(spec).await?,
            };
            done.push((spec.name.clone(), action));
        }
        Ok(done)
    }

    async fn set_body(&self, number: u64, body: &str) -> Result<()> {
        self.update_issue(
            number,
            json!({ "description": body }),
            format!("update the description of issue #{number}"),
        )
        .await
    }

    async fn comment(&self, number: u64, body: &str) -> Result<()> {
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/notes")),
                &json!({ "body": super::posted(body) }),
                format!("comment on issue #{number}"),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn comments(&self, number: u64) -> Result<Vec<String>> {
        let notes: Vec<Note> = self
            .api
            .get_all(
                self.path(&format!(
                    "/issues/{number}/notes?sort=asc&order_by=created_at&per_page=100"
                )),
                &format!("read the notes of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        Ok(notes
            .into_iter()
            .filter(|n| !n.system)
            .filter_map(|n| n.body)
            .collect())
    }

    async fn assign(&self, number: u64, logins: &[String]) -> Result<()> {
        if logins.is_empty() {
            return Ok(());
        }
        let mut ids = Vec::new();
        for login in logins {
            match self.user_id(login).await? {
                Some(id) => ids.push(id),
                None => {
                    return Err(TrackerError::NotFound {
                        what: format!("user {login}"),
                        forge: Some(Forge::Gitlab),
                    })
                }
            }
        }
        self.update_issue(
            number,
            json!({ "assignee_ids": ids }),
            format!("assign issue #{number} to {}", logins.join(", ")),
        )
        .await
    }

    async fn current_user(&self) -> Result<Option<String>> {
        Ok(self.me().await?.map(|u| u.username))
    }

    async fn create_pull_request(&self, pr: &NewPullRequest) -> Result<PullRequest> {
        let created = self
            .api
            .send_json(
                Method::POST,
                self.path("/merge_requests"),
                &json!({
                    "source_branch": pr.head,
                    "target_branch": pr.base,
                    "title": super::posted(&pr.title),
                    "description": super::posted(&pr.body),
                }),
                format!("open a merge request from {} into {}", pr.head, pr.base),
                format!("project {} or branch {}", self.project, pr.base),
            )
            .await;
        match created {
            Ok(reply) => Ok(reply
                .json::<wire::MergeRequest>("open a merge request")?
                .into()),
            // 409 "Another open merge request already exists for this source branch".
            Err(e @ TrackerError::Unprocessable { .. }) => {
                self.find_pull_request(&pr.head).await?.ok_or(e)
            }
            Err(e) => Err(e),
        }
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let found: Vec<wire::MergeRequest> = self
            .api
            .get_all(
                self.path(&format!(
                    "/merge_requests?state=opened&source_branch={}&per_page=100",
                    segment(branch)
                )),
                &format!("find a merge request for {branch}"),
                &self.project_subject(),
            )
            .await?;
        Ok(found
            .into_iter()
            .find(|m| m.source_branch == branch)
            .map(PullRequest::from))
    }

    async fn label_applied(&self, number: u64, label: &str) -> Result<Option<Labeled>> {
        let events: Vec<LabelEvent> = self
            .api
            .get_all(
                self.path(&format!(
                    "/issues/{number}/resource_label_events?per_page=100"
                )),
                &format!("read the label events of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        self.met(events.iter().filter_map(|e| e.user.as_ref()));
        Ok(events
            .into_iter()
            .filter(|e| {
                e.action == "add"
                    && e.label
                        .as_ref()
                        .is_some_and(|l| l.name.eq_ignore_ascii_case(label))
            })
            .map(|e| Labeled {
                by: e.user.map(|u| u.username),
                at: e.created_at,
            })
            .next_back())
    }

    async fn repository(&self) -> Result<RepoFacts> {
        let project = self.project_facts().await?;
        Ok(RepoFacts {
            default_branch: project.default_branch.filter(|b| !b.is_empty()),
            permission: Some(project.permissions.unwrap_or_default().strongest()),
        })
    }

    /// The user's role in the project, inherited ones included (`/members/all/:id`).
    async fn permission(&self, login: &str) -> Result<Permission> {
        let Some(id) = self.user_id(login).await? else {
            return Ok(Permission::None);
        };
        let member = self
            .api
            .get::<wire::Access>(
                self.path(&format!("/members/all/{id}")),
                format!("read the role of {login}"),
                format!("user {login} in {}", self.project),
            )
            .await;
        match member {
            Ok(m) => Ok(wire::permission(m.access_level)),
            // Not a member.
            Err(TrackerError::NotFound { .. }) => Ok(Permission::None),
            Err(e) => Err(e),
        }
    }

    /// The token's name and scopes (`/personal_access_tokens/self`: personal, project and group
    /// access tokens alike); everything ralph does needs `api`.
    async fn token_facts(&self) -> Result<Option<TokenFacts>> {
        let t: wire::TokenSelf = self
            .api
            .send(Request::new(
                Method::GET,
                "/personal_access_tokens/self",
                "read the token's scopes",
            ))
            .await?
            .json("read the token's scopes")?;
        let missing = if t.scopes.iter().any(|s| s == "api") {
            Vec::new()
        } else {
            vec!["api".to_owned()]
        };
        Ok(Some(TokenFacts {
            name: t.name,
            scopes: t.scopes,
            missing,
            expires: t.expires_at,
            active: t.active,
            renew: "create a token with the `api` scope (it covers issues, notes, merge requests and the push) and the Developer role".into(),
        }))
    }
}
