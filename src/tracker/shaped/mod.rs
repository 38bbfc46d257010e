//! [`IssueTracker`] and [`PullRequestTracker`](super::pulls::PullRequestTracker) over the REST
//! APIs in GitHub's shape — GitHub's, and Forgejo's API v1 (Gitea's, Codeberg's) — as one
//! implementation. Issues, their labels, comments and assignees, the repository, a user's
//! permission and pull requests are the same requests on both, read by one `wire`; what differs
//! is the forge's own: data in a [`Shape`] (how a list is paged, whether labels are applied by
//! id, how an issue is assigned, …) and a small [`Dialect`] for what is read differently (who
//! applied a label, a pull request's reviews, its CI and a job's log). `super::github` and
//! `super::forgejo` hold those and make the tracker; `super::rest` is the transport.

mod pulls;
pub(super) mod wire;

use self::wire::{
    LabelLogEntry, User, WireComment, WireIssue, WireLabel, WirePermission, WirePull, WireRepo,
};
use super::pulls::{CiCheck, Feedback};
use super::rest::{segment, Api, Request};
use super::{
    Forge, Issue, IssueQuery, IssueState, IssueTracker, LabelAction, LabelSpec, Labeled,
    NewPullRequest, Permission, PullRequest, RepoFacts, Result, TokenFacts, TrackerError,
};
use crate::settings::RepoSlug;
use ::http::Method;
use async_trait::async_trait;
use serde_json::json;

/// What a forge of GitHub's shape does its own way, as data.
#[derive(Debug)]
pub struct Shape {
    pub forge: Forge,
    /// The query that asks for a whole page of a list (`per_page=100`, `limit=50`).
    pub page: &'static str,
    /// The query that lists a repository's issues, not its pull requests, oldest first.
    pub issue_list: &'static str,
    /// The query that lists pull requests, the last updated first.
    pub pull_list: &'static str,
    /// Labels are applied and removed by id (the repository's labels read once a run), not by
    /// name.
    pub labels_by_id: bool,
    /// A new label's colour is sent with its `#`.
    pub color_hash: bool,
    /// An issue is assigned by editing it, not by `POST …/assignees`.
    pub assigns_by_edit: bool,
    /// The open pull requests of a branch are asked for by `head=owner:branch`.
    pub filters_by_head: bool,
    /// The permission endpoint answers 403, not only 404, for a user who is no collaborator.
    pub forbidden_is_stranger: bool,
    /// The list under an issue that says who changed its labels (`events`, `timeline`).
    pub label_log: &'static str,
    /// The kind of an entry of it that adds a label, and the body that says so where the kind
    /// also removes one (Forgejo's `label` entry, body `1`).
    pub label_added: (&'static str, Option<&'static str>),
}

/// What a forge of GitHub's shape reads its own way.
#[async_trait]
pub trait Dialect: Send + Sync {
    fn shape(&self) -> &'static Shape;

    /// A pull request's submitted reviews and their comments on lines of the diff.
    async fn reviews(&self, t: &ShapedTracker, number: u64) -> Result<Vec<Feedback>>;

    /// The CI results of commit `sha`.
    async fn ci(&self, t: &ShapedTracker, sha: &str) -> Result<Vec<CiCheck>>;

    /// The log of a failing check's job.
    async fn job_log(&self, t: &ShapedTracker, check: &CiCheck) -> Result<String>;

    /// What the forge tells of the token's scopes ([`IssueTracker::token_facts`]).
    async fn token_facts(&self, _t: &ShapedTracker) -> Result<Option<TokenFacts>> {
        Ok(None)
    }

    /// What a refusal to open a pull request means on this forge, where it means more than the
    /// error says (GitHub Actions may be forbidden to open one).
    fn pull_refused(
        &self,
        _t: &ShapedTracker,
        _pr: &NewPullRequest,
        _e: &TrackerError,
    ) -> Option<TrackerError> {
        None
    }
}

/// The tracker of one repository on a forge of GitHub's shape.
pub struct ShapedTracker {
    pub(super) api: Api,
    pub(super) repo: RepoSlug,
    /// The web address of the server, for links and job pages (`https://github.com`).
    pub(super) web: String,
    dialect: &'static dyn Dialect,
    /// The repository's labels, where labels are applied by id: read once, read again after
    /// ralph creates one.
    labels: tokio::sync::Mutex<Option<Vec<WireLabel>>>,
}

impl ShapedTracker {
    pub(super) fn new(
        api: Api,
        repo: RepoSlug,
        web: String,
        dialect: &'static dyn Dialect,
    ) -> Self {
        ShapedTracker {
            api,
            repo,
            web,
            dialect,
            labels: tokio::sync::Mutex::new(None),
        }
    }

    fn shape(&self) -> &'static Shape {
        self.dialect.shape()
    }

    /// `/repos/{owner}/{name}` followed by `rest`.
    pub(super) fn path(&self, rest: &str) -> String {
        format!(
            "/repos/{}/{}{rest}",
            segment(&self.repo.owner),
            segment(&self.repo.name)
        )
    }

    /// `path` with a whole page asked for.
    pub(super) fn paged(&self, rest: &str) -> String {
        let sep = if rest.contains('?') { '&' } else { '?' };
        self.path(&format!("{rest}{sep}{}", self.shape().page))
    }

    pub(super) fn issue_subject(&self, number: u64) -> String {
        format!("issue #{number} in {}", self.repo)
    }

    pub(super) fn pr_subject(&self, number: u64) -> String {
        format!("pull request #{number} in {}", self.repo)
    }

    fn repo_subject(&self) -> String {
        format!("repository {}", self.repo)
    }

    /// The repository's labels: read each time, or once a run where labels go by id.
    async fn repo_labels(&self) -> Result<Vec<WireLabel>> {
        let subject = self.repo_subject();
        if !self.shape().labels_by_id {
            return self
                .api
                .get_all(self.paged("/labels"), "list labels", &subject)
                .await;
        }
        let mut cache = self.labels.lock().await;
        if let Some(labels) = cache.as_ref() {
            return Ok(labels.clone());
        }
        let labels: Vec<WireLabel> = self
            .api
            .get_all(self.paged("/labels"), "list labels", &subject)
            .await?;
        *cache = Some(labels.clone());
        Ok(labels)
    }

    /// How label `name` is named in a request's path or body: its id where labels go by id.
    async fn label_key(&self, name: &str) -> Result<Option<serde_json::Value>> {
        if !self.shape().labels_by_id {
            return Ok(Some(json!(name)));
        }
        Ok(self
            .repo_labels()
            .await?
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
            .map(|l| json!(l.id)))
    }

    /// Creates `spec` unless someone did meanwhile.
    async fn create_label(&self, spec: &LabelSpec) -> Result<LabelAction> {
        let color = if self.shape().color_hash {
            format!("#{}", spec.color)
        } else {
            spec.color.clone()
        };
        let created = self
            .api
            .send_json(
                Method::POST,
                self.path("/labels"),
                &json!({"name": spec.name, "color": color, "description": spec.description}),
                format!("create label {}", spec.name),
                self.repo_subject(),
            )
            .await;
        *self.labels.lock().await = None;
        match created {
            Ok(_) => Ok(LabelAction::Created),
            // Created meanwhile by someone else: fine.
            Err(TrackerError::Unprocessable { message, .. })
                if message.contains("already_exists") || message.contains("already exists") =>
            {
                Ok(LabelAction::Exists)
            }
            Err(e) => Err(e),
        }
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
impl IssueTracker for ShapedTracker {
    fn pulls(&self) -> Option<&dyn super::pulls::PullRequestTracker> {
        Some(self)
    }

    fn describe(&self) -> String {
        format!("{} {}", self.shape().forge, self.repo)
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
        let mut path = self.paged(&format!(
            "/issues?state={state}&{}",
            self.shape().issue_list
        ));
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
        let mut keys = Vec::new();
        for name in labels {
            match self.label_key(name).await? {
                Some(key) => keys.push(key),
                None => {
                    return Err(TrackerError::NotFound {
                        what: format!("label `{name}` in {} (run `ralph setup`)", self.repo),
                        forge: Some(self.shape().forge),
                    })
                }
            }
        }
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/labels")),
                &json!({ "labels": keys }),
                format!("add labels {} to issue #{number}", labels.join(", ")),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<bool> {
        let key = match self.label_key(label).await? {
            Some(serde_json::Value::String(name)) => segment(&name),
            Some(id) => id.to_string(),
            None => return Ok(false),
        };
        let req = Request::new(
            Method::DELETE,
            self.path(&format!("/issues/{number}/labels/{key}")),
            format!("remove label {label} from issue #{number}"),
        )
        .subject(format!("label {label} on issue #{number} in {}", self.repo));
        match self.api.send(req).await {
            Ok(_) => Ok(true),
            // 404 both for a missing issue and for a label the issue lacks: tell them apart by
            // asking for the issue.
            Err(TrackerError::NotFound { .. }) => {
                self.issue(number).await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    async fn labels(&self) -> Result<Option<Vec<String>>> {
        let labels = self.repo_labels().await?;
        Ok(Some(labels.into_iter().map(|l| l.name).collect()))
    }

    async fn ensure_labels(&self, labels: &[LabelSpec]) -> Result<Vec<(String, LabelAction)>> {
        let existing = self.repo_labels().await?;
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
                format!("comment on issue #{number}"),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn comments(&self, number: u64) -> Result<Vec<String>> {
        let comments: Vec<WireComment> = self
            .api
            .get_all(
                self.paged(&format!("/issues/{number}/comments")),
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
        let action = format!("assign issue #{number} to {}", logins.join(", "));
        if self.shape().assigns_by_edit {
            return self
                .edit(number, json!({ "assignees": logins }), action)
                .await;
        }
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/assignees")),
                &json!({ "assignees": logins }),
                action,
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn current_user(&self) -> Result<Option<String>> {
        match self
            .api
            .get::<User>("/user", "find the token's user", "the token's user")
            .await
        {
            Ok(u) => Ok(Some(u.login)),
            // An Actions job's automatic token (a GitHub App's, Forgejo's) has no user: 403 or
            // 404.
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
            Err(e) => match self.dialect.pull_refused(self, pr, &e) {
                Some(refused) => Err(refused),
                // "A pull request already exists for owner:branch" (GitHub's 422, Forgejo's
                // 409, 422 on older Giteas): return that one.
                None if matches!(e, TrackerError::Unprocessable { .. }) => {
                    self.find_pull_request(&pr.head).await?.ok_or(e)
                }
                None => Err(e),
            },
        }
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let path = if self.shape().filters_by_head {
            self.paged(&format!(
                "/pulls?state=open&head={}:{}",
                segment(&self.repo.owner),
                segment(branch)
            ))
        } else {
            self.paged("/pulls?state=open")
        };
        let pulls: Vec<WirePull> = self
            .api
            .get_all(
                path,
                &format!("find a pull request for {branch}"),
                &self.repo_subject(),
            )
            .await?;
        Ok(pulls
            .into_iter()
            .find(|p| p.head.name == branch)
            .map(PullRequest::from))
    }

    async fn token_facts(&self) -> Result<Option<TokenFacts>> {
        self.dialect.token_facts(self).await
    }

    async fn label_applied(&self, number: u64, label: &str) -> Result<Option<Labeled>> {
        let log = self.shape().label_log;
        let entries: Vec<LabelLogEntry> = self
            .api
            .get_all(
                self.paged(&format!("/issues/{number}/{log}")),
                &format!("read the {log} of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        let (added, body) = self.shape().label_added;
        Ok(entries
            .into_iter()
            .filter(|e| {
                e.kind() == added
                    && (body.is_none() || e.body.as_deref() == body)
                    && e.label
                        .as_ref()
                        .is_some_and(|l| l.name.eq_ignore_ascii_case(label))
            })
            .map(|e| Labeled {
                by: e.actor.or(e.user).map(|u| u.login),
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
            Ok(p) => {
                // role_name (GitHub's) is finer (maintain, triage) where present.
                let role = p
                    .role_name
                    .filter(|r| !r.is_empty())
                    .unwrap_or(p.permission);
                Ok(Permission::from_github(&role))
            }
            // Not a collaborator.
            Err(TrackerError::NotFound { .. }) => Ok(Permission::None),
            Err(TrackerError::Forbidden { .. }) if self.shape().forbidden_is_stranger => {
                Ok(Permission::None)
            }
            Err(e) => Err(e),
        }
    }
}
