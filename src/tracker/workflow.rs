//! The label workflow (docs/specification.md §2, §6): the six labels `ralph setup` creates, what
//! `ralph ready` moves, and which issues `ralph queue` offers. Pure: the commands fetch, this
//! decides.

use super::{Issue, IssueState, LabelSpec};

pub const LABEL_RALPH: &str = "ralph";
pub const LABEL_IN_REFINEMENT: &str = "in-refinement";
pub const LABEL_IN_PROGRESS: &str = "in-progress";
pub const LABEL_ATTENTION: &str = "attention-needed";
pub const LABEL_BACKLOG_REVIEW: &str = "backlog-review";
/// The labels that put an issue up for refinement (`ralph refine`), before `ready`.
pub const LABELS_BEFORE_READY: [&str; 2] = [LABEL_IN_REFINEMENT, LABEL_BACKLOG_REVIEW];

/// The workflow labels with their colours and descriptions. `ready` is the configured ready
/// label (`[github] ready_label`).
pub fn labels(ready_label: &str) -> Vec<LabelSpec> {
    let spec = |name: &str, color: &str, description: &str| LabelSpec {
        name: name.to_owned(),
        color: color.to_owned(),
        description: description.to_owned(),
    };
    vec![
        spec(LABEL_RALPH, "5319e7", "ralph is working on this issue"),
        spec(
            LABEL_IN_REFINEMENT,
            "fbca04",
            "The spec is being refined: not ready for ralph yet",
        ),
        spec(
            ready_label,
            "0e8a16",
            "Spec is ready: ralph may compete on this issue",
        ),
        spec(
            LABEL_IN_PROGRESS,
            "1d76db",
            "A ralph competition is running on this issue",
        ),
        spec(
            LABEL_ATTENTION,
            "d93f0b",
            "ralph escalated: a human needs to look at this issue",
        ),
        spec(
            LABEL_BACKLOG_REVIEW,
            "c5def5",
            "Waiting for backlog review before refinement",
        ),
    ]
}

/// An issue's topic labels (`bug`, `area/docs`): every label but the workflow's, lower-cased,
/// sorted, each once. The seats of a round are drawn from what the bots did on issues that
/// share one (docs/specification.md §8.6).
pub fn topic_labels(issue: &Issue, ready_label: &str) -> Vec<String> {
    let workflow = [
        LABEL_RALPH,
        LABEL_IN_REFINEMENT,
        ready_label,
        LABEL_IN_PROGRESS,
        LABEL_ATTENTION,
        LABEL_BACKLOG_REVIEW,
    ];
    let mut topics: Vec<String> = issue
        .labels
        .iter()
        .filter(|l| !workflow.iter().any(|w| w.eq_ignore_ascii_case(l)))
        .map(|l| l.trim().to_lowercase())
        .filter(|l| !l.is_empty() && !l.chars().any(char::is_control))
        .collect();
    topics.sort();
    topics.dedup();
    topics
}

/// Whether ralph may pick up an issue from the queue: open, labelled ready, not a pull
/// request, not `in-progress` or `attention-needed`, and assigned to nobody or only to `me`.
fn is_queueable(issue: &Issue, ready_label: &str, me: Option<&str>) -> bool {
    issue.state == IssueState::Open
        && !issue.is_pull_request
        && issue.has_label(ready_label)
        && !issue.has_label(LABEL_IN_PROGRESS)
        && !issue.has_label(LABEL_ATTENTION)
        && issue
            .assignees
            .iter()
            .all(|a| me.is_some_and(|me| a.eq_ignore_ascii_case(me)))
}

/// The queue: queueable issues, oldest first (creation time, then number; issues without a
/// creation time sort by number after dated ones), at most `limit`.
pub fn queue(
    mut issues: Vec<Issue>,
    ready_label: &str,
    me: Option<&str>,
    limit: Option<usize>,
) -> Vec<Issue> {
    issues.retain(|i| is_queueable(i, ready_label, me));
    issues.sort_by(|a, b| {
        let key = |i: &Issue| (i.created_at.is_none(), i.created_at, i.number);
        key(a).cmp(&key(b))
    });
    if let Some(limit) = limit {
        issues.truncate(limit);
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn issue(number: u64, labels: &[&str], created: Option<i64>) -> Issue {
        Issue {
            number,
            title: format!("issue {number}"),
            body: String::new(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            state: IssueState::Open,
            assignees: vec![],
            author: None,
            created_at: created.map(|s| DateTime::<Utc>::from_timestamp(s, 0).unwrap()),
            is_pull_request: false,
            url: None,
        }
    }

    #[test]
    fn topic_labels_leave_the_workflow_out() {
        let i = issue(
            1,
            &[
                "ready",
                "Bug",
                "in-progress",
                "ralph",
                "area/docs",
                "bug",
                " ",
            ],
            None,
        );
        assert_eq!(topic_labels(&i, "ready"), ["area/docs", "bug"]);
        let custom = issue(2, &["go", "ready"], None);
        assert_eq!(topic_labels(&custom, "go"), ["ready"]);
    }

    #[test]
    fn six_labels_with_colours_and_descriptions() {
        let l = labels("ready");
        let names: Vec<&str> = l.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ralph",
                "in-refinement",
                "ready",
                "in-progress",
                "attention-needed",
                "backlog-review"
            ]
        );
        for spec in &l {
            assert_eq!(spec.color.len(), 6);
            assert!(spec.color.chars().all(|c| c.is_ascii_hexdigit()));
            assert!(!spec.description.is_empty() && spec.description.len() <= 100);
        }
        assert_eq!(labels("go")[2].name, "go");
    }

    #[test]
    fn the_queue_filters_and_orders() {
        let mut closed = issue(1, &["ready"], Some(10));
        closed.state = IssueState::Closed;
        let mut pr = issue(2, &["ready"], Some(10));
        pr.is_pull_request = true;
        let mut theirs = issue(3, &["ready"], Some(10));
        theirs.assignees = vec!["someone".into()];
        let mut mine = issue(4, &["ready"], Some(300));
        mine.assignees = vec!["Me".into()];
        let issues = vec![
            closed,
            pr,
            theirs,
            mine,
            issue(5, &["ready", "in-progress"], Some(10)),
            issue(6, &["ready", "attention-needed"], Some(10)),
            issue(7, &["bug"], Some(10)),
            issue(8, &["READY"], Some(200)),
            issue(9, &["ready"], None),
            issue(10, &["ready"], Some(100)),
        ];
        let got: Vec<u64> = queue(issues.clone(), "ready", Some("me"), None)
            .iter()
            .map(|i| i.number)
            .collect();
        assert_eq!(got, [10, 8, 4, 9]);
        // Without a known user, any assignee means someone else.
        let got: Vec<u64> = queue(issues.clone(), "ready", None, Some(2))
            .iter()
            .map(|i| i.number)
            .collect();
        assert_eq!(got, [10, 8]);
        assert!(queue(issues, "ready", None, Some(0)).is_empty());
    }
}
