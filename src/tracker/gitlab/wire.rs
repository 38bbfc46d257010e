//! The GitLab REST v4 objects ralph reads, as lenient serde structs: only the fields used, every
//! optional one defaulted, so a field GitLab adds or drops elsewhere cannot break a run. An
//! issue's and a merge request's number is their `iid` (per project); `id` is global.

use super::super::pulls::{CiState, PullFacts, PullState};
use super::super::{Issue, IssueState, Permission, PullRequest};
use chrono::{DateTime, Utc};
use serde::Deserialize;

/// A user as GitLab embeds one (`author`, `user`, `assignees`).
#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: u64,
    pub username: String,
}

/// `GET /projects/:id/issues/:iid`.
#[derive(Debug, Deserialize)]
pub struct WireIssue {
    pub iid: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `opened` or `closed`.
    #[serde(default)]
    pub state: String,
    /// Label names (GitLab lists them as strings unless asked for details).
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub assignees: Vec<User>,
    #[serde(default)]
    pub author: Option<User>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub web_url: Option<String>,
}

impl From<WireIssue> for Issue {
    fn from(w: WireIssue) -> Issue {
        Issue {
            number: w.iid,
            title: w.title,
            body: w.description.unwrap_or_default(),
            labels: w.labels,
            state: if w.state == "closed" {
                IssueState::Closed
            } else {
                IssueState::Open
            },
            assignees: w.assignees.into_iter().map(|u| u.username).collect(),
            author: w.author.map(|u| u.username),
            created_at: w.created_at,
            // Merge requests have numbers of their own: an issue is never one.
            is_pull_request: false,
            url: w.web_url,
        }
    }
}

/// A project label (`GET /projects/:id/labels`); `color` is `#rrggbb`.
#[derive(Debug, Deserialize)]
pub struct WireLabel {
    pub name: String,
    #[serde(default)]
    pub color: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// A resource label event (`GET /projects/:id/issues/:iid/resource_label_events`).
#[derive(Debug, Deserialize)]
pub struct LabelEvent {
    /// `add` or `remove`.
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub label: Option<LabelName>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize)]
pub struct LabelName {
    pub name: String,
}

/// A note (a comment) on an issue or a merge request.
#[derive(Debug, Deserialize)]
pub struct Note {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub author: Option<User>,
    pub created_at: DateTime<Utc>,
    /// GitLab's own notes (label changes, pushes, "requested changes"): not anyone's words.
    #[serde(default)]
    pub system: bool,
    /// `null` (a plain comment), `DiscussionNote` (a thread) or `DiffNote` (a line of the diff).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub resolvable: bool,
    #[serde(default)]
    pub resolved: bool,
    #[serde(default)]
    pub position: Option<Position>,
}

/// Where a diff note is.
#[derive(Debug, Deserialize)]
pub struct Position {
    #[serde(default)]
    pub new_path: Option<String>,
    #[serde(default)]
    pub old_path: Option<String>,
    #[serde(default)]
    pub new_line: Option<u64>,
    #[serde(default)]
    pub old_line: Option<u64>,
}

/// `GET /projects/:id/merge_requests[/:iid]`.
#[derive(Debug, Deserialize)]
pub struct MergeRequest {
    pub iid: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub web_url: Option<String>,
    pub source_branch: String,
    pub target_branch: String,
    #[serde(default)]
    pub source_project_id: Option<u64>,
    #[serde(default)]
    pub target_project_id: Option<u64>,
    /// `opened`, `closed`, `locked` or `merged`.
    #[serde(default)]
    pub state: String,
    /// The head commit.
    #[serde(default)]
    pub sha: Option<String>,
    #[serde(default)]
    pub merge_commit_sha: Option<String>,
    #[serde(default)]
    pub squash_commit_sha: Option<String>,
    #[serde(default)]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub merged_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub labels: Vec<String>,
    /// Only on a single merge request.
    #[serde(default)]
    pub diff_refs: Option<DiffRefs>,
}

#[derive(Debug, Deserialize)]
pub struct DiffRefs {
    /// The target branch's head the diff was last computed against.
    #[serde(default)]
    pub start_sha: Option<String>,
}

impl MergeRequest {
    /// Whether it comes from a branch of the project itself, not a fork's.
    pub fn is_the_projects_own(&self) -> bool {
        matches!((self.source_project_id, self.target_project_id), (Some(s), Some(t)) if s == t)
    }
}

impl From<MergeRequest> for PullRequest {
    fn from(m: MergeRequest) -> PullRequest {
        PullRequest {
            number: m.iid,
            title: m.title,
            head: m.source_branch,
            base: m.target_branch,
            url: m.web_url,
        }
    }
}

impl From<MergeRequest> for PullFacts {
    fn from(m: MergeRequest) -> PullFacts {
        let merged = m.state == "merged";
        // A merge commit, else the squash commit, else (a fast-forward) the head itself is
        // what the target branch got.
        let merge_commit = merged
            .then(|| {
                m.merge_commit_sha
                    .clone()
                    .or(m.squash_commit_sha.clone())
                    .or(m.sha.clone())
            })
            .flatten();
        PullFacts {
            number: m.iid,
            title: m.title,
            url: m.web_url,
            head: m.source_branch,
            head_sha: m.sha,
            base: m.target_branch,
            base_sha: m.diff_refs.and_then(|d| d.start_sha),
            state: match m.state.as_str() {
                "merged" => PullState::Merged,
                "closed" | "locked" => PullState::Closed,
                _ => PullState::Open,
            },
            created_at: m.created_at,
            merged_at: m.merged_at,
            merge_commit,
            labels: m.labels,
        }
    }
}

/// A commit status (`GET /projects/:id/repository/commits/:sha/statuses`): the pipeline's jobs
/// (whose id is the job's) and external statuses alike.
#[derive(Debug, Deserialize)]
pub struct CommitStatus {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub allow_failure: bool,
    #[serde(default)]
    pub target_url: Option<String>,
}

impl CommitStatus {
    /// Whether it is a job of a pipeline (its log can be read), not an external status.
    pub fn is_job(&self) -> bool {
        self.target_url
            .as_deref()
            .is_some_and(|u| u.contains("/-/jobs/"))
    }
}

/// The CI state of a GitLab job or commit status; a job allowed to fail says nothing.
pub fn ci_state(status: &str, allow_failure: bool) -> CiState {
    match status {
        "success" => CiState::Passed,
        "failed" if allow_failure => CiState::Neutral,
        "failed" | "canceled" | "canceling" => CiState::Failed,
        "skipped" | "manual" => CiState::Neutral,
        _ => CiState::Pending,
    }
}

/// `GET /projects/:id`: the fields ralph reads.
#[derive(Debug, Deserialize)]
pub struct WireProject {
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub permissions: Option<ProjectPermissions>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ProjectPermissions {
    #[serde(default)]
    pub project_access: Option<Access>,
    #[serde(default)]
    pub group_access: Option<Access>,
}

/// A role, as GitLab's numeric access level.
#[derive(Debug, Deserialize)]
pub struct Access {
    pub access_level: u32,
}

impl ProjectPermissions {
    /// The stronger of the project's and the group's grant.
    pub fn strongest(&self) -> Permission {
        let level = [&self.project_access, &self.group_access]
            .iter()
            .filter_map(|a| a.as_ref().map(|a| a.access_level))
            .max()
            .unwrap_or(0);
        permission(level)
    }
}

/// A GitLab access level as a permission: Owner (50) admin, Maintainer (40) maintain, Developer
/// (30) write — what the gate asks for —, Reporter (20) and Planner (15), who may label issues,
/// triage; Guest (10) read; Minimal access (5) and no membership none.
pub fn permission(access_level: u32) -> Permission {
    match access_level {
        50.. => Permission::Admin,
        40..=49 => Permission::Maintain,
        30..=39 => Permission::Write,
        15..=29 => Permission::Triage,
        10..=14 => Permission::Read,
        _ => Permission::None,
    }
}

/// `GET /personal_access_tokens/self`: what the token may do.
#[derive(Debug, Deserialize)]
pub struct TokenSelf {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub scopes: Vec<String>,
    #[serde(default)]
    pub active: bool,
    #[serde(default)]
    pub expires_at: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_levels_map_to_permissions_and_developer_is_the_gate() {
        assert_eq!(permission(50), Permission::Admin);
        assert_eq!(permission(40), Permission::Maintain);
        assert!(permission(30).can_write());
        assert!(
            !permission(20).can_write(),
            "a Reporter may label, not trigger"
        );
        assert_eq!(permission(20), Permission::Triage);
        assert_eq!(permission(15), Permission::Triage);
        assert_eq!(permission(10), Permission::Read);
        assert_eq!(permission(5), Permission::None);
        assert_eq!(permission(0), Permission::None);
        let p: ProjectPermissions = serde_json::from_value(serde_json::json!({
            "project_access": {"access_level": 20, "notification_level": 3},
            "group_access": {"access_level": 40, "notification_level": 3}
        }))
        .unwrap();
        assert_eq!(p.strongest(), Permission::Maintain);
        let none: ProjectPermissions = serde_json::from_value(
            serde_json::json!({"project_access": null, "group_access": null}),
        )
        .unwrap();
        assert_eq!(none.strongest(), Permission::None);
    }

    #[test]
    fn job_states_and_allowed_failures() {
        assert_eq!(ci_state("success", false), CiState::Passed);
        assert_eq!(ci_state("failed", false), CiState::Failed);
        assert_eq!(ci_state("failed", true), CiState::Neutral);
        assert_eq!(ci_state("canceled", false), CiState::Failed);
        for pending in [
            "created",
            "pending",
            "running",
            "waiting_for_resource",
            "preparing",
            "scheduled",
        ] {
            assert_eq!(ci_state(pending, false), CiState::Pending, "{pending}");
        }
        assert_eq!(ci_state("manual", false), CiState::Neutral);
        assert_eq!(ci_state("skipped", false), CiState::Neutral);
    }

    #[test]
    fn merge_requests_know_their_state_merge_commit_and_fork() {
        let mr: MergeRequest = serde_json::from_value(serde_json::json!({
            "id": 900, "iid": 4, "project_id": 7, "title": "T", "state": "merged",
            "source_branch": "ralph/3-x", "target_branch": "main",
            "source_project_id": 7, "target_project_id": 7,
            "sha": "head", "merge_commit_sha": null, "squash_commit_sha": "sq",
            "merged_at": "2026-11-20T10:00:00.000Z", "labels": ["ralph"],
            "web_url": "https://gitlab.example.com/g/p/-/merge_requests/4"
        }))
        .unwrap();
        assert!(mr.is_the_projects_own());
        let facts = PullFacts::from(mr);
        assert_eq!(facts.state, PullState::Merged);
        assert_eq!(facts.merge_commit.as_deref(), Some("sq"));
        let open: MergeRequest = serde_json::from_value(serde_json::json!({
            "iid": 5, "state": "opened", "source_branch": "ralph/4-y", "target_branch": "main",
            "source_project_id": 99, "target_project_id": 7, "sha": "h",
            "diff_refs": {"base_sha": "mb", "head_sha": "h", "start_sha": "tip"}
        }))
        .unwrap();
        assert!(!open.is_the_projects_own(), "from a fork");
        let facts = PullFacts::from(open);
        assert_eq!(facts.state, PullState::Open);
        assert_eq!(facts.base_sha.as_deref(), Some("tip"));
        assert_eq!(facts.merge_commit, None);
    }
}
