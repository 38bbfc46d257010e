//! `ralph queue`: the issues ralph may compete on next — open, labelled ready, not
//! `in-progress` or `attention-needed`, not assigned to someone else, not pull requests —
//! oldest first; and the stale ones: `in-progress` for longer than `[github]
//! stale_after_hours` (by the label's event time) with no run of this machine holding them — a
//! cancelled or lost job's. `--json` prints `{"include":[{"issue":12},…],"stale":[…]}` (the
//! Action makes its matrix of `include`); in Actions the job summary lists both.
//! `--gitlab-pipeline` prints the GitLab CI child pipeline of the queue instead (the template's
//! jobs per issue). `--refine` lists instead the issues waiting for a draft: `in-refinement`,
//! no ralph draft yet.

use super::Context;
use crate::action::ActionEnv;
use crate::error::Exit;
use crate::output::sanitize;
use crate::tracker::{self, workflow, Issue, IssueQuery, IssueState, IssueTracker};
use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct QueueArgs {
    /// At most this many issues
    #[arg(long, value_name = "K")]
    pub limit: Option<usize>,
    /// The issues waiting for a draft instead: labelled in-refinement, with no ralph draft yet
    #[arg(long, conflicts_with = "gitlab_pipeline")]
    pub refine: bool,
    /// Print the GitLab CI child pipeline instead: a competition and a ledger job per ready
    /// issue, then `ralph follow` (the GitLab CI/CD template runs it)
    #[arg(long)]
    pub gitlab_pipeline: bool,
}

/// Open issues labelled `in-refinement` that have no ralph draft (in the body or a comment),
/// oldest first.
async fn to_refine(tracker: &dyn IssueTracker, limit: Option<usize>) -> Result<Vec<Issue>> {
    let mut issues = tracker
        .issues(&IssueQuery {
            labels: vec![workflow::LABEL_IN_REFINEMENT.to_owned()],
            state: Some(IssueState::Open),
        })
        .await?;
    issues.retain(|i| !i.is_pull_request);
    issues.sort_by_key(|i| (i.created_at.is_none(), i.created_at, i.number));
    let mut out = Vec::new();
    for i in issues {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let comments = tracker.comments(i.number).await?;
        if !crate::refine::has_draft(&i.body, &comments) {
            out.push(i);
        }
    }
    Ok(out)
}

#[derive(Serialize)]
struct Matrix {
    include: Vec<Entry>,
    stale: Vec<Stale>,
}

/// An issue left `in-progress` for too long.
#[derive(Serialize)]
struct Stale {
    issue: u64,
    title: String,
    in_progress_since: DateTime<Utc>,
    hours: u64,
}

/// Whole hours since `at` when more than `limit` have passed.
fn stale_hours(at: DateTime<Utc>, now: DateTime<Utc>, limit: u64) -> Option<u64> {
    let hours = (now - at).num_hours();
    (hours >= 0 && hours as u64 >= limit).then_some(hours as u64)
}

/// The open `in-progress` issues whose label is older than `limit` hours, oldest first.
async fn stale(
    tracker: &dyn IssueTracker,
    ralph_dir: &std::path::Path,
    limit: u64,
) -> Result<Vec<Stale>> {
    let issues = tracker
        .issues(&IssueQuery {
            labels: vec![workflow::LABEL_IN_PROGRESS.to_owned()],
            state: Some(IssueState::Open),
        })
        .await?;
    let now = Utc::now();
    let mut out = Vec::new();
    for i in issues.into_iter().filter(|i| !i.is_pull_request) {
        if crate::compete::RunLock::is_held(ralph_dir, i.number) {
            continue;
        }
        let Some(at) = tracker
            .label_applied(i.number, workflow::LABEL_IN_PROGRESS)
            .await?
            .and_then(|l| l.at)
        else {
            continue;
        };
        if let Some(hours) = stale_hours(at, now, limit) {
            out.push(Stale {
                issue: i.number,
                title: i.title,
                in_progress_since: at,
                hours,
            });
        }
    }
    out.sort_by_key(|s| s.in_progress_since);
    Ok(out)
}

/// The job summary of a queue job.
fn summary(queue: &[crate::tracker::Issue], stale: &[Stale], limit: u64) -> String {
    let mut md = String::from("## ralph queue\n\n");
    if queue.is_empty() {
        md.push_str("No issue is ready.\n");
    } else {
        md.push_str(&format!(
            "{} issue(s) ready, oldest first:\n\n",
            queue.len()
        ));
        for i in queue {
            md.push_str(&format!(
                "- #{} {}\n",
                i.number,
                crate::render::markdown::cell(&i.title)
            ));
        }
    }
    if !stale.is_empty() {
        md.push_str(&format!(
            "\n**Stale**: `in-progress` for more than {limit} h — a cancelled or lost job's? Once no job works on one, re-arm it with `ralph ready N --yes`.\n\n"
        ));
        for s in stale {
            md.push_str(&format!(
                "- #{} {} — since {} ({} h)\n",
                s.issue,
                crate::render::markdown::cell(&s.title),
                s.in_progress_since.format("%Y-%m-%d %H:%M UTC"),
                s.hours
            ));
        }
    }
    md
}

#[derive(Serialize)]
struct Entry {
    issue: u64,
}

pub async fn run(ctx: &Context, args: QueueArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let tracker = tracker::open(&settings).await?;
    if args.refine {
        let issues = to_refine(tracker.as_ref(), args.limit).await?;
        if ctx.printer.json_mode() {
            ctx.printer.json(&serde_json::json!({
                "include": issues.iter().map(|i| Entry { issue: i.number }).collect::<Vec<_>>()
            }))?;
        } else if issues.is_empty() {
            ctx.printer.status(
                "no issue waits for a draft (open, labelled in-refinement, no ralph draft yet)",
            );
        } else {
            ctx.printer.data(&listing(&issues))?;
        }
        return Ok(Exit::Success);
    }
    let ready = settings.config.github.ready_label.clone();
    let issues = tracker
        .issues(&IssueQuery {
            labels: vec![ready.clone()],
            state: Some(IssueState::Open),
        })
        .await?;
    // Issues assigned to the token's own user stay in the queue.
    let me = if issues.iter().any(|i| !i.assignees.is_empty()) {
        tracker.current_user().await?
    } else {
        None
    };
    let queue = workflow::queue(issues, &ready, me.as_deref(), args.limit);
    let limit = settings.config.github.stale_after_hours;
    let stale = stale(tracker.as_ref(), &settings.ralph_dir, limit).await?;
    if let Some(env) = ActionEnv::detect(crate::env::get) {
        env.append_summary(&summary(&queue, &stale, limit))?;
    }
    if args.gitlab_pipeline {
        let numbers: Vec<u64> = queue.iter().map(|i| i.number).collect();
        ctx.printer
            .data(&crate::action::gitlab_pipeline(&numbers))?;
        return Ok(Exit::Success);
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&Matrix {
            include: queue.iter().map(|i| Entry { issue: i.number }).collect(),
            stale,
        })?;
        return Ok(Exit::Success);
    }
    for s in &stale {
        ctx.printer.warn(&format!(
            "#{} has been in-progress for {} h (since {}): if no run works on it, re-arm it with `ralph ready {} --yes`",
            s.issue,
            s.hours,
            s.in_progress_since.format("%Y-%m-%d %H:%M UTC"),
            s.issue
        ));
    }
    if queue.is_empty() {
        ctx.printer.status(&format!(
            "no issue is ready on {} (open, labelled {ready}, not in-progress or attention-needed, not assigned to someone else)",
            sanitize(&tracker.describe())
        ));
        return Ok(Exit::Success);
    }
    ctx.printer.data(&listing(&queue))?;
    Ok(Exit::Success)
}

/// One line per issue: number, creation date, title.
fn listing(issues: &[Issue]) -> String {
    let mut out = String::new();
    for i in issues {
        let created = i
            .created_at
            .map(|c| c.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "#{:<6} {created:<10}  {}\n",
            i.number,
            sanitize(&i.title)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_after_the_limit_and_named_in_the_summary() {
        let now: DateTime<Utc> = "2026-11-23T12:00:00Z".parse().unwrap();
        let at = |h: i64| now - chrono::Duration::hours(h);
        assert_eq!(stale_hours(at(7), now, 6), Some(7));
        assert_eq!(stale_hours(at(6), now, 6), Some(6));
        assert_eq!(stale_hours(at(5), now, 6), None);
        assert_eq!(
            stale_hours(at(-1), now, 6),
            None,
            "a clock ahead is not stale"
        );
        let md = summary(
            &[],
            &[Stale {
                issue: 12,
                title: "Add | a flag".into(),
                in_progress_since: at(30),
                hours: 30,
            }],
            6,
        );
        assert!(md.contains("No issue is ready."));
        assert!(
            md.contains("- #12 Add \\| a flag — since 2026-11-22 06:00 UTC (30 h)"),
            "{md}"
        );
        assert!(md.contains("`ralph ready N --yes`"));
    }
}
