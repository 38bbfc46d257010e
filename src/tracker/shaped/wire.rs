//! The objects of GitHub's REST API ralph reads, as lenient serde structs: only the fields used,
//! every optional field defaulted, so an API that adds or omits fields does not break ralph.
//! Forgejo's API v1 (Gitea's, Codeberg's) answers in the same shapes — issues, labels,
//! comments, pull requests and their reviews — so one reading serves both.

use super::super::pulls::{status_state, CiCheck, Feedback, FeedbackKind, PullFacts, PullState};
use super::super::{Issue, IssueState, PullRequest};
use chrono::{DateTime, Utc};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct User {
    pub login: String,
}

/// Issue labels come as objects; some endpoints and old payloads use bare strings.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum LabelRef {
    Object { name: String },
    Name(String),
}

impl LabelRef {
    pub fn name(self) -> String {
        match self {
            LabelRef::Object { name } | LabelRef::Name(name) => name,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct WireIssue {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub labels: Vec<LabelRef>,
    #[serde(default)]
    pub assignees: Option<Vec<User>>,
    #[serde(default)]
    pub assignee: Option<User>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub pull_request: Option<serde::de::IgnoredAny>,
}

impl From<WireIssue> for Issue {
    fn from(w: WireIssue) -> Issue {
        let mut assignees: Vec<String> = w
            .assignees
            .unwrap_or_default()
            .into_iter()
            .map(|u| u.login)
            .collect();
        if let Some(a) = w.assignee {
            if !assignees.contains(&a.login) {
                assignees.push(a.login);
            }
        }
        Issue {
            number: w.number,
            title: w.title,
            body: w.body.unwrap_or_default(),
            labels: w.labels.into_iter().map(LabelRef::name).collect(),
            state: match w.state.as_deref() {
                Some("closed") => IssueState::Closed,
                _ => IssueState::Open,
            },
            assignees,
            author: w.user.map(|u| u.login),
            created_at: w.created_at,
            is_pull_request: w.pull_request.is_some(),
            url: w.html_url,
        }
    }
}

/// A repository label; Forgejo applies it by its `id` (GitHub by name, and sends one too).
#[derive(Debug, Clone, Deserialize)]
pub struct WireLabel {
    #[serde(default)]
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub color: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Branch {
    #[serde(rename = "ref")]
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub struct WirePull {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    pub head: Branch,
    pub base: Branch,
    #[serde(default)]
    pub html_url: Option<String>,
}

impl From<WirePull> for PullRequest {
    fn from(w: WirePull) -> PullRequest {
        PullRequest {
            number: w.number,
            title: w.title,
            head: w.head.name,
            base: w.base.name,
            url: w.html_url,
        }
    }
}

/// An entry of an issue's label log: a GitHub issue event (`…/issues/{n}/events`: `event`,
/// `actor`) or a Forgejo timeline entry (`…/issues/{n}/timeline`: `type`, `body`, `user`).
#[derive(Debug, Deserialize)]
pub struct LabelLogEntry {
    #[serde(default)]
    pub event: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub actor: Option<User>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub label: Option<LabelName>,
    #[serde(default)]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl LabelLogEntry {
    /// Its kind (`labeled`, `label`…), whichever field the forge names it by.
    pub fn kind(&self) -> &str {
        self.event.as_deref().or(self.kind.as_deref()).unwrap_or("")
    }
}

/// An issue comment, as far as ralph reads it.
#[derive(Debug, Deserialize)]
pub struct WireComment {
    #[serde(default)]
    pub body: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct LabelName {
    pub name: String,
}

/// `GET /repos/{o}/{r}`: the fields ralph reads.
#[derive(Debug, Deserialize)]
pub struct WireRepo {
    #[serde(default)]
    pub default_branch: Option<String>,
    /// What the authenticated user may do (absent without credentials).
    #[serde(default)]
    pub permissions: Option<WireRepoPermissions>,
}

#[derive(Debug, Default, Deserialize)]
pub struct WireRepoPermissions {
    #[serde(default)]
    pub admin: bool,
    #[serde(default)]
    pub maintain: bool,
    #[serde(default)]
    pub push: bool,
    #[serde(default)]
    pub triage: bool,
    #[serde(default)]
    pub pull: bool,
}

impl WireRepoPermissions {
    /// The strongest permission granted.
    pub fn strongest(&self) -> super::super::Permission {
        use super::super::Permission;
        if self.admin {
            Permission::Admin
        } else if self.maintain {
            Permission::Maintain
        } else if self.push {
            Permission::Write
        } else if self.triage {
            Permission::Triage
        } else if self.pull {
            Permission::Read
        } else {
            Permission::None
        }
    }
}

/// `GET /repos/{o}/{r}/collaborators/{user}/permission`.
#[derive(Debug, Deserialize)]
pub struct WirePermission {
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub role_name: Option<String>,
}

/// A pull request's branch (`head`, `base`).
#[derive(Debug, Deserialize)]
pub struct Ref {
    #[serde(rename = "ref")]
    pub name: String,
    #[serde(default)]
    pub sha: Option<String>,
    /// The repository the branch is in (a fork's for a pull request from a fork; `null` when
    /// the fork was deleted).
    #[serde(default)]
    pub repo: Option<RepoName>,
}

#[derive(Debug, Deserialize)]
pub struct RepoName {
    pub full_name: String,
}

/// The pull requests from branches of `repo` itself whose branch starts with `prefix`: a fork
/// can name a branch `ralph/12-…` too, but only people who may write to the repository can
/// push one there.
pub fn ours(pulls: Vec<Pull>, prefix: &str, repo: &str) -> Vec<Pull> {
    pulls
        .into_iter()
        .filter(|p| p.head.name.starts_with(prefix))
        .filter(|p| {
            p.head
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(repo))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
pub struct Pull {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub html_url: Option<String>,
    pub head: Ref,
    pub base: Ref,
    #[serde(default)]
    pub state: String,
    /// Only on a single pull request; a list has `merged_at`.
    #[serde(default)]
    pub merged: Option<bool>,
    #[serde(default)]
    pub merged_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub merge_commit_sha: Option<String>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub labels: Vec<LabelRef>,
}

impl From<Pull> for PullFacts {
    fn from(p: Pull) -> PullFacts {
        let merged = p.merged.unwrap_or(false) || p.merged_at.is_some();
        PullFacts {
            number: p.number,
            title: p.title,
            url: p.html_url,
            head: p.head.name,
            head_sha: p.head.sha,
            base: p.base.name,
            base_sha: p.base.sha,
            state: match (merged, p.state.as_str()) {
                (true, _) => PullState::Merged,
                (false, "closed") => PullState::Closed,
                _ => PullState::Open,
            },
            created_at: p.created_at,
            merged_at: p.merged_at,
            // GitHub fills it with a test merge while the pull request is open.
            merge_commit: if merged { p.merge_commit_sha } else { None },
            labels: p.labels.into_iter().map(LabelRef::name).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct Review {
    pub id: u64,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub submitted_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub body: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A comment on a line of a pull request's diff: GitHub's review comment (`line`,
/// `original_line`), or Forgejo's comment of a review (`position`, `original_position`, 0 on
/// the old side).
#[derive(Debug, Deserialize)]
pub struct LineComment {
    pub id: u64,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub path: String,
    #[serde(default, alias = "position")]
    pub line: Option<u64>,
    #[serde(default, alias = "original_position")]
    pub original_line: Option<u64>,
    pub created_at: DateTime<Utc>,
}

impl From<LineComment> for Feedback {
    fn from(c: LineComment) -> Feedback {
        Feedback {
            id: format!("inline-{}", c.id),
            author: c.user.map(|u| u.login),
            at: c.created_at,
            body: c.body.unwrap_or_default(),
            kind: FeedbackKind::Inline {
                path: c.path,
                line: c.line.filter(|l| *l > 0).or(c.original_line),
            },
        }
    }
}

/// `GET …/commits/{sha}/status`: a commit's statuses.
#[derive(Debug, Deserialize)]
pub struct CombinedStatus {
    #[serde(default)]
    pub statuses: Vec<CommitStatus>,
}

#[derive(Debug, Deserialize)]
pub struct CommitStatus {
    #[serde(default)]
    pub context: String,
    /// `pending`, `success`, `error`, `failure` (Forgejo: `warning` too), as GitHub's `state`
    /// or Forgejo's `status`.
    #[serde(default, alias = "status")]
    pub state: String,
    #[serde(default)]
    pub target_url: Option<String>,
}

impl From<CommitStatus> for CiCheck {
    fn from(s: CommitStatus) -> CiCheck {
        CiCheck {
            name: s.context,
            state: status_state(&s.state),
            job: None,
            url: s.target_url,
            log: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_issue_object_parses() {
        let json = include_str!("../../../tests/fixtures/github/issue_12.json");
        let issue: Issue = serde_json::from_str::<WireIssue>(json).unwrap().into();
        assert_eq!(issue.number, 12);
        assert_eq!(issue.state, IssueState::Open);
        assert_eq!(issue.labels, ["ready", "enhancement"]);
        assert_eq!(issue.author.as_deref(), Some("octocat"));
        assert!(!issue.is_pull_request);
        assert!(issue.body.contains("- [ ]"));
    }

    #[test]
    fn pull_requests_in_issue_lists_are_marked_and_nulls_tolerated() {
        let json = r#"{"number":7,"title":"t","body":null,"state":"closed","labels":["x"],
            "assignees":null,"assignee":{"login":"a"},"user":null,"pull_request":{"url":"u"}}"#;
        let issue: Issue = serde_json::from_str::<WireIssue>(json).unwrap().into();
        assert!(issue.is_pull_request);
        assert_eq!(issue.state, IssueState::Closed);
        assert_eq!(issue.body, "");
        assert_eq!(issue.labels, ["x"]);
        assert_eq!(issue.assignees, ["a"]);
    }

    #[test]
    fn only_the_repositorys_own_ralph_branches_are_followed() {
        let pull = |n: u64, head: &str, repo: serde_json::Value| -> Pull {
            serde_json::from_value(serde_json::json!({
                "number": n, "state": "open",
                "head": {"ref": head, "repo": repo}, "base": {"ref": "main"}
            }))
            .unwrap()
        };
        let list = vec![
            pull(
                1,
                "ralph/3-x",
                serde_json::json!({"full_name": "Octo-Org/octo-repo"}),
            ),
            pull(
                2,
                "ralph/3-x",
                serde_json::json!({"full_name": "mallory/octo-repo"}),
            ),
            pull(3, "ralph/4-y", serde_json::Value::Null),
            pull(
                4,
                "feature/z",
                serde_json::json!({"full_name": "octo-org/octo-repo"}),
            ),
        ];
        let kept: Vec<u64> = ours(list, "ralph/", "octo-org/octo-repo")
            .iter()
            .map(|p| p.number)
            .collect();
        assert_eq!(kept, [1]);
    }

    #[test]
    fn a_merged_pull_request_keeps_its_merge_commit_and_an_open_one_does_not() {
        let merged: Pull = serde_json::from_value(serde_json::json!({
            "number": 7, "title": "t", "state": "closed", "merged": true,
            "merged_at": "2026-11-20T10:00:00Z", "merge_commit_sha": "abc",
            "head": {"ref": "ralph/3-x", "sha": "h"}, "base": {"ref": "main", "sha": "b"},
            "labels": [{"name": "ralph"}]
        }))
        .unwrap();
        let facts = PullFacts::from(merged);
        assert_eq!(facts.state, PullState::Merged);
        assert_eq!(facts.merge_commit.as_deref(), Some("abc"));
        assert_eq!(facts.labels, ["ralph"]);
        let open: Pull = serde_json::from_value(serde_json::json!({
            "number": 8, "state": "open", "merge_commit_sha": "test-merge",
            "head": {"ref": "ralph/4-y"}, "base": {"ref": "main"}
        }))
        .unwrap();
        let facts = PullFacts::from(open);
        assert_eq!(facts.state, PullState::Open);
        assert_eq!(facts.merge_commit, None);
        let closed: Pull = serde_json::from_value(serde_json::json!({
            "number": 9, "state": "closed", "merged_at": null,
            "head": {"ref": "ralph/5-z"}, "base": {"ref": "main"}
        }))
        .unwrap();
        assert_eq!(PullFacts::from(closed).state, PullState::Closed);
    }
}
