//! [`IssueTracker`] over the GitHub REST API. The shared REST layer (`super::rest`) is the
//! transport and the retry and error rules (base URL from `GITHUB_API_URL`, the token in the
//! `Authorization` header); `wire` holds the JSON shapes read — only the fields ralph uses, so
//! a field GitHub adds or drops elsewhere cannot break a run. (octocrab was the transport
//! until ralph used nothing of it but its raw `_get`/`_post`; its models were never used, and
//! it brought 38 crates of its own.)

mod pulls;
pub(super) mod wire;

pub use super::rest::RetryPolicy;

use self::wire::{
    WireComment, WireEvent, WireIssue, WireLabel, WirePermission, WirePull, WireRepo,
};
use super::discover::Token;
use super::rest::{self, segment, Api};
use super::{
    Forge, Issue, IssueQuery, IssueState, IssueTracker, LabelAction, LabelSpec, Labeled,
    NewPullRequest, Permission, PullRequest, RepoFacts, Result, TrackerError,
};
use crate::settings::RepoSlug;
use ::http::Method;
use async_trait::async_trait;
use serde_json::json;

/// The GitHub tracker for one repository.
pub struct GithubTracker {
    api: Api,
    repo: RepoSlug,
    /// The web address of the server, for links (`https://github.com`).
    web: String,
}

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

impl GithubTracker {
    /// Creates `spec` unless someone did meanwhile.
    async fn create_label(&self, spec: &LabelSpec) -> Result<LabelAction> {
        let created = self
            .api
            .send_json(
                Method::POST,
                self.path("/labels"),
                &json!({
                    "name": spec.name,
                    "color": spec.color,
                    "description": spec.description,
                }),
                format!("create label {}", spec.name),
                format!("repository {}", self.repo),
            )
            .await;
        match created {
            Ok(_) => Ok(LabelAction::Created),
            // Created meanwhile by someone else: fine.
            Err(TrackerError::Unprocessable { message, .. })
                if message.contains("already_exists") =>
            {
                Ok(LabelAction::Exists)
            }
            Err(e) => Err(e),
        }
    }

    /// A tracker for `repo` on the API at `api_url`, authenticated with `token`.
    pub fn new(
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
        Ok(GithubTracker {
            api: Api::connect(endpoint, policy, token.source.to_string())?,
            repo,
            web: web_url(api_url),
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
}

#[async_trait]
impl IssueTracker for GithubTracker {
    fn pulls(&self) -> Option<&dyn super::pulls::PullRequestTracker> {
        Some(self)
    }

    fn describe(&self) -> String {
        format!("GitHub {}", self.repo)
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
        let mut path = self.path(&format!(
            "/issues?state={state}&sort=created&direction=asc&per_page=100"
        ));
        if !query.labels.is_empty() {
            let labels: Vec<String> = query.labels.iter().map(|l| segment(l)).collect();
            path.push_str(&format!("&labels={}", labels.join(",")));
        }
        let wire: Vec<WireIssue> = self
            .api
            .get_all(path, "list issues", &format!("repository {}", self.repo))
            .await?;
        Ok(wire.into_iter().map(Issue::from).collect())
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        if labels.is_empty() {
            return Ok(());
        }
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/labels")),
                &json!({ "labels": labels }),
                format!("add labels {} to issue #{number}", labels.join(", ")),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<bool> {
        let req = rest::Request::new(
            Method::DELETE,
            self.path(&format!("/issues/{number}/labels/{}", segment(label))),
            format!("remove label {label} from issue #{number}"),
        )
        .subject(format!("label {label} on issue #{number} in {}", self.repo));
        match self.api.send(req).await {
            Ok(_) => Ok(true),
            // GitHub answers 404 both for a missing issue and for a label the issue lacks:
            // tell them apart by asking for the issue.
            Err(TrackerError::NotFound { .. }) => {
                self.issue(number).await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    async fn labels(&self) -> Result<Option<Vec<String>>> {
        let existing: Vec<WireLabel> = self
            .api
            .get_all(
                self.path("/labels?per_page=100"),
                "list labels",
                &format!("repository {}", self.repo),
            )
            .await?;
        Ok(Some(existing.into_iter().map(|l| l.name).collect()))
    }

    async fn ensure_labels(&self, labels: &[LabelSpec]) -> Result<Vec<(String, LabelAction)>> {
        let existing: Vec<WireLabel> = self
            .api
            .get_all(
                self.path("/labels?per_page=100"),
                "list labels",
                &format!("repository {}", self.repo),
            )
            .await?;
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
        self.api
            .send_json(
                Method::PATCH,
                self.path(&format!("/issues/{number}")),
                &json!({ "body": body }),
                format!("update the body of issue #{number}"),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
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
                self.path(&format!("/issues/{number}/comments?per_page=100")),
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
        self.api
            .send_json(
                Method::POST,
                self.path(&format!("/issues/{number}/assignees")),
                &json!({ "assignees": logins }),
                format!("assign issue #{number} to {}", logins.join(", ")),
                self.issue_subject(number),
            )
            .await?;
        Ok(())
    }

    async fn current_user(&self) -> Result<Option<String>> {
        match self
            .api
            .get::<wire::User>("/user", "find the token's user", "the token's user")
            .await
        {
            Ok(u) => Ok(Some(u.login)),
            // Tokens of GitHub Apps (Actions' GITHUB_TOKEN) have no user: 403 or 404.
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
            // "A pull request already exists for owner:branch": return that one.
            Err(e @ TrackerError::Unprocessable { .. }) => {
                self.find_pull_request(&pr.head).await?.ok_or(e)
            }
            // A repository (or organisation) that forbids Actions to open pull requests.
            Err(TrackerError::Forbidden { message, .. })
                if message.contains("not permitted to create or approve pull requests") =>
            {
                Err(TrackerError::PullRequestsNotAllowed {
                    compare: format!(
                        "{}/{}/{}/compare/{}...{}?expand=1",
                        self.web, self.repo.owner, self.repo.name, pr.base, pr.head
                    ),
                })
            }
            Err(e) => Err(e),
        }
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let path = self.path(&format!(
            "/pulls?state=open&head={}:{}&per_page=100",
            segment(&self.repo.owner),
            segment(branch)
        ));
        let pulls: Vec<WirePull> = self
            .api
            .get_all(
                path,
                &format!("find a pull request for {branch}"),
                &format!("repository {}", self.repo),
            )
            .await?;
        Ok(pulls
            .into_iter()
            .find(|p| p.head.name == branch)
            .map(PullRequest::from))
    }

    async fn label_applied(&self, number: u64, label: &str) -> Result<Option<Labeled>> {
        let events: Vec<WireEvent> = self
            .api
            .get_all(
                self.path(&format!("/issues/{number}/events?per_page=100")),
                &format!("read the events of issue #{number}"),
                &self.issue_subject(number),
            )
            .await?;
        Ok(events
            .into_iter()
            .filter(|e| {
                e.event == "labeled"
                    && e.label
                        .as_ref()
                        .is_some_and(|l| l.name.eq_ignore_ascii_case(label))
            })
            .map(|e| Labeled {
                by: e.actor.map(|a| a.login),
                at: e.created_at,
            })
            .next_back())
    }

    async fn repository(&self) -> Result<RepoFacts> {
        let repo = self
            .api
            .get::<WireRepo>(
                self.path(""),
                "read the repository".to_owned(),
                format!("repository {}", self.repo),
            )
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
                // role_name is finer (maintain, triage) where present.
                let role = p
                    .role_name
                    .filter(|r| !r.is_empty())
                    .unwrap_or(p.permission);
                Ok(Permission::from_github(&role))
            }
            // Not a collaborator.
            Err(TrackerError::NotFound { .. }) => Ok(Permission::None),
            Err(e) => Err(e),
        }
    }
}
