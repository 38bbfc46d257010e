//! Action mode (docs/specification.md §9, docs/github-action.md, docs/forges.md): inside GitHub
//! Actions or Forgejo Actions (`GITHUB_ACTIONS=true`) or GitLab CI (`GITLAB_CI=true`). The trust
//! gate — compete only on issues whose ready label was applied by someone with write access
//! (GitLab: Developer or above) — and what a run leaves for the pipeline: the markdown job
//! summary (`render::run::job_summary`) appended to `GITHUB_STEP_SUMMARY` (GitLab CI:
//! `RALPH_STEP_SUMMARY`, which the template keeps as the job's report artifact), the outputs
//! (`GITHUB_OUTPUT`: `outcome`, `pr-url`, `winner`, `branch`; GitLab CI: `RALPH_OUTPUT` as dotenv
//! lines `RALPH_OUTCOME=…`), and GitHub's error annotations.

use crate::error::UserError;
use crate::run_report::{RunOutcome, RunReport};
use crate::tracker::{IssueTracker, Permission};
use anyhow::{Context as _, Result};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Which CI ralph runs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ci {
    /// GitHub Actions, or Forgejo/Gitea Actions (which set the same variables).
    #[default]
    Actions,
    GitlabCi,
}

/// The files the runner gives a step, when ralph runs inside a CI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionEnv {
    pub ci: Ci,
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
}

impl ActionEnv {
    /// Action mode from the environment: `GITHUB_ACTIONS=true` (GitHub, Forgejo and Gitea
    /// Actions), else `GITLAB_CI=true`.
    pub fn detect(get: impl Fn(&str) -> Option<String>) -> Option<ActionEnv> {
        let path = |k: &str| get(k).filter(|v| !v.trim().is_empty()).map(PathBuf::from);
        if get(crate::env::GITHUB_ACTIONS).as_deref() == Some("true") {
            return Some(ActionEnv {
                ci: Ci::Actions,
                step_summary: path(crate::env::GITHUB_STEP_SUMMARY),
                output: path(crate::env::GITHUB_OUTPUT),
            });
        }
        if get(crate::env::GITLAB_CI).as_deref() == Some("true") {
            return Some(ActionEnv {
                ci: Ci::GitlabCi,
                step_summary: path(crate::env::RALPH_STEP_SUMMARY),
                output: path(crate::env::RALPH_OUTPUT),
            });
        }
        None
    }

    /// Appends `text` to the job summary, when the runner gave one.
    pub fn append_summary(&self, text: &str) -> Result<()> {
        match &self.step_summary {
            Some(p) => append(p, text),
            None => Ok(()),
        }
    }

    /// Appends the job summary and writes the outputs of a run.
    pub fn publish(&self, report: &RunReport) -> Result<()> {
        if let Some(p) = &self.step_summary {
            append(p, &crate::render::run::job_summary(report))?;
        }
        if let Some(p) = &self.output {
            let mut text = String::new();
            for (k, v) in outputs(report) {
                match self.ci {
                    Ci::Actions => {
                        let _ = writeln!(text, "{k}={}", one_line(&v));
                    }
                    // A dotenv report: names of letters, digits and `_`, one line per value.
                    Ci::GitlabCi => {
                        let key = format!("RALPH_{}", k.replace('-', "_").to_ascii_uppercase());
                        let _ = writeln!(text, "{key}={}", one_line(&v));
                    }
                }
            }
            append(p, &text)?;
        }
        Ok(())
    }

    /// The error annotations of a run, in the CI's own syntax (GitLab CI has none: the error
    /// is in the log already).
    pub fn annotations(&self, report: &RunReport) -> Vec<String> {
        match self.ci {
            Ci::Actions => annotations(report),
            Ci::GitlabCi => Vec::new(),
        }
    }
}

fn append(path: &Path, text: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    f.write_all(crate::secret::redact(text).as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A value safe for one `key=value` line.
fn one_line(v: &str) -> String {
    v.replace(['\r', '\n'], " ")
}

/// The step outputs: `outcome`, `pr-url`, `winner` (the bot of the last round's winner) and
/// `branch`; empty values when there is none.
pub fn outputs(report: &RunReport) -> Vec<(&'static str, String)> {
    let winner = report
        .rounds
        .iter()
        .rev()
        .find_map(|r| r.winner_bot.clone())
        .unwrap_or_default();
    vec![
        ("outcome", report.outcome.to_string()),
        ("pr-url", report.pr_url.clone().unwrap_or_default()),
        ("winner", winner),
        ("branch", report.branch.clone().unwrap_or_default()),
    ]
}

/// The fixed part of the child pipeline of the GitLab CI/CD template.
const GITLAB_CHILD: &str = include_str!("../templates/ralph/child.yml");

/// The child pipeline `ralph queue --gitlab-pipeline` prints for the GitLab CI/CD template
/// (templates/ralph.yml): its fixed part (the job templates and `ralph follow`), then a
/// competition job and a ledger job per issue in `issues`, in the queue's order.
pub fn gitlab_pipeline(issues: &[u64]) -> String {
    let mut out = GITLAB_CHILD.to_owned();
    for n in issues {
        let _ = write!(
            out,
            "\nralph-compete-{n}:\n  extends: .ralph-compete\n  variables:\n    RALPH_ISSUE: \"{n}\"\n\nralph-ledger-{n}:\n  extends: .ralph-ledger\n  needs:\n    - job: ralph-compete-{n}\n      artifacts: true\n"
        );
    }
    out
}

/// Escapes a workflow-command message (`%`, CR, LF).
fn escape(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Error annotations for a run that did not succeed.
pub fn annotations(report: &RunReport) -> Vec<String> {
    let why = match report.outcome {
        RunOutcome::Escalated => report.escalation.clone(),
        RunOutcome::Aborted => report.stopped.clone(),
        _ => None,
    };
    why.map(|w| {
        format!(
            "::error title=ralph: issue #{}::{}",
            report.issue,
            escape(&crate::secret::redact(&w))
        )
    })
    .into_iter()
    .collect()
}

/// The trust gate: the ready label must have been applied by a user with write access (or
/// more; on GitLab the Developer role or above). Refuses with exit 2, naming who applied it and
/// their permission.
pub async fn trust_gate(tracker: &dyn IssueTracker, issue: u64, ready_label: &str) -> Result<()> {
    let Some(login) = tracker.label_applied_by(issue, ready_label).await? else {
        return Err(UserError::usage(format!(
            "nobody on record applied `{ready_label}` to #{issue}, so ralph cannot tell it was approved"
        ))
        .with_hint(if crate::tracker::workflow::LABELS_BEFORE_READY.contains(&ready_label) {
            format!("a maintainer should remove and re-apply `{ready_label}`")
        } else {
            format!("a maintainer should remove and re-apply `{ready_label}` (or run `ralph ready {issue}`)")
        })
        .into());
    };
    let permission = tracker.permission(&login).await?;
    if permission < Permission::Write {
        return Err(UserError::usage(format!(
            "`{ready_label}` on #{issue} was applied by {login}, who has {} access; in CI ralph only works on issues a user with write access (GitLab: Developer or above) labelled",
            serde_json::to_value(permission)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_else(|| "no".into())
        ))
        .with_hint(format!(
            "someone with write access should review #{issue} and apply `{ready_label}` themselves"
        ))
        .into());
    }
    tracing::debug!(%login, ?permission, "trust gate passed");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::report;

    #[test]
    fn detection_needs_github_actions_true() {
        assert_eq!(ActionEnv::detect(|_| None), None);
        let env = ActionEnv::detect(|k| match k {
            "GITHUB_ACTIONS" => Some("true".into()),
            "GITHUB_OUTPUT" => Some("/tmp/out".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(env.output.as_deref(), Some(Path::new("/tmp/out")));
        assert_eq!(env.step_summary, None);
        let gitlab = ActionEnv::detect(|k| match k {
            "GITLAB_CI" => Some("true".into()),
            "RALPH_STEP_SUMMARY" => Some("/b/summary.md".into()),
            "GITHUB_OUTPUT" => Some("/not/read".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(gitlab.ci, Ci::GitlabCi);
        assert_eq!(
            gitlab.step_summary.as_deref(),
            Some(Path::new("/b/summary.md"))
        );
        assert_eq!(gitlab.output, None);
    }

    #[test]
    fn the_gitlab_pipeline_has_two_jobs_per_issue_after_its_fixed_part() {
        let yaml = gitlab_pipeline(&[12, 3]);
        assert!(yaml.starts_with(GITLAB_CHILD));
        let tail = &yaml[GITLAB_CHILD.len()..];
        assert_eq!(
            tail,
            "\nralph-compete-12:\n  extends: .ralph-compete\n  variables:\n    RALPH_ISSUE: \"12\"\n\nralph-ledger-12:\n  extends: .ralph-ledger\n  needs:\n    - job: ralph-compete-12\n      artifacts: true\n\nralph-compete-3:\n  extends: .ralph-compete\n  variables:\n    RALPH_ISSUE: \"3\"\n\nralph-ledger-3:\n  extends: .ralph-ledger\n  needs:\n    - job: ralph-compete-3\n      artifacts: true\n"
        );
        // With nothing ready, `ralph follow` still runs: the pipeline is never empty.
        assert!(gitlab_pipeline(&[]).contains("\nralph-follow:\n"));
    }

    #[test]
    fn gitlab_outputs_are_dotenv_lines() {
        let dir = tempfile::tempdir().unwrap();
        let env = ActionEnv {
            ci: Ci::GitlabCi,
            step_summary: None,
            output: Some(dir.path().join("ralph.env")),
        };
        env.publish(&report(RunOutcome::Complete)).unwrap();
        let out = std::fs::read_to_string(dir.path().join("ralph.env")).unwrap();
        assert_eq!(
            out,
            "RALPH_OUTCOME=complete\nRALPH_PR_URL=https://github.com/o/r/pull/13\nRALPH_WINNER=smart_bot_2\nRALPH_BRANCH=ralph/12-add-option\n"
        );
        assert!(env.annotations(&report(RunOutcome::Escalated)).is_empty());
    }

    #[test]
    fn outputs_and_annotations() {
        let r = report(RunOutcome::Complete);
        assert_eq!(
            outputs(&r),
            [
                ("outcome", "complete".to_owned()),
                ("pr-url", "https://github.com/o/r/pull/13".to_owned()),
                ("winner", "smart_bot_2".to_owned()),
                ("branch", "ralph/12-add-option".to_owned()),
            ]
        );
        assert!(annotations(&r).is_empty());
        let mut e = report(RunOutcome::Escalated);
        e.escalation = Some("100% failed\nagain".into());
        assert_eq!(
            annotations(&e),
            ["::error title=ralph: issue #12::100%25 failed%0Aagain"]
        );
    }

    #[test]
    fn publish_appends_to_the_runner_files() {
        let dir = tempfile::tempdir().unwrap();
        let env = ActionEnv {
            ci: Ci::Actions,
            step_summary: Some(dir.path().join("summary.md")),
            output: Some(dir.path().join("output")),
        };
        std::fs::write(dir.path().join("output"), "earlier=1\n").unwrap();
        env.publish(&report(RunOutcome::Complete)).unwrap();
        let out = std::fs::read_to_string(dir.path().join("output")).unwrap();
        assert_eq!(
            out,
            "earlier=1\noutcome=complete\npr-url=https://github.com/o/r/pull/13\nwinner=smart_bot_2\nbranch=ralph/12-add-option\n"
        );
        assert!(std::fs::read_to_string(dir.path().join("summary.md"))
            .unwrap()
            .contains("**Outcome:** complete"));
    }
}
