//! The GitHub REST objects ralph reads, as lenient serde structs: only the fields used, every
//! optional field defaulted, so an API that adds or omits fields does not break ralph.

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

#[derive(Debug, Deserialize)]
pub struct WireLabel {
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

/// An issue event (`GET /repos/{o}/{r}/issues/{n}/events`).
#[derive(Debug, Deserialize)]
pub struct WireEvent {
    pub event: String,
    #[serde(default)]
    pub actor: Option<User>,
    #[serde(default)]
    pub label: Option<LabelName>,
    #[serde(default)]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
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
}
