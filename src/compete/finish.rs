//! How a run ends. Complete: `<promise>COMPLETE</promise>`, the push, the pull request, the
//! labels released, the worktree removed. Otherwise the one escalation path — a failed replan,
//! human review, the rounds exhausted, a cap, an error, a panic, an interruption —: labels to
//! `attention-needed` and a comment saying what failed and where the work is. Either way the
//! run report and summary are kept in `.ralph/runs/N/`.

use super::crew::{Book, Crew};
use super::state::{runs_dir, Failure, RunState};
use crate::fsutil::write_atomic;
use crate::render::run::{escalation_comment, pr_body, run_summary, EscalationNote, FailureNote};
use crate::run_report::{RunOutcome, RunReport};
use crate::secret::redact;
use crate::settings::Settings;
use crate::tracker::workflow::{LABEL_ATTENTION, LABEL_IN_PROGRESS, LABEL_RALPH};
use crate::tracker::{IssueTracker, NewPullRequest, TrackerError};
use crate::workspace::Worktree;
use anyhow::Result;
use std::collections::BTreeMap;

/// Every checkbox is checked: push, open the pull request, release the labels.
pub(super) async fn complete(crew: &mut Crew<'_>, book: &mut Book, wt: &Worktree) -> Result<()> {
    let (tracker, n, printer) = (crew.input.tracker, crew.input.issue, crew.input.printer);
    if printer.json_mode() {
        printer.status("<promise>COMPLETE</promise>");
    } else {
        printer.data("<promise>COMPLETE</promise>\n")?;
    }
    book.report.outcome = RunOutcome::Complete;
    book.report.network_refused = crate::process::egress::refusals().all();
    if crew.input.options.no_push {
        printer.status(&format!(
            "- --no-push: the branch {} stays local (worktree {})",
            wt.branch,
            wt.path.display()
        ));
    } else {
        if book.pre.has_remote {
            let started = std::time::Instant::now();
            crew.input
                .workspace
                .push(wt, crew.input.options.token.as_ref())
                .await?;
            crew.timeline.since("push", started);
            printer.status(&format!("- Pushed {}", wt.branch));
        }
        let issue = tracker.issue(n).await?;
        let created = tracker
            .create_pull_request(&NewPullRequest {
                issue: n,
                title: crate::render::plain::inert(&issue.title),
                head: wt.branch.clone(),
                base: book.pre.base.clone(),
                body: redact(&pr_body(&book.report, &book.state.evidence)).into_owned(),
            })
            .await;
        let pr = match created {
            Ok(pr) => pr,
            // The work is done and pushed; a human opens the pull request.
            Err(TrackerError::PullRequestsNotAllowed { compare }) => {
                book.report.outcome = RunOutcome::Escalated;
                book.trouble.reason = format!(
                        "the work is done and pushed to `{}`, but GitHub Actions may not open pull requests in this repository: open it from {compare} — or allow it under Settings → Actions → General → Workflow permissions → \"Allow GitHub Actions to create and approve pull requests\"",
                        wt.branch
                    );
                printer.warn(&book.trouble.reason);
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let reference = tracker
            .pulls()
            .map_or_else(|| format!("#{}", pr.number), |p| p.pull_ref(pr.number));
        printer.status(&format!(
            "- Pull request {reference}{}",
            pr.url
                .as_deref()
                .map(|u| format!(": {u}"))
                .unwrap_or_default()
        ));
        book.report.pr_url = pr.url.or(Some(format!("#{}", pr.number)));
        crew.input.workspace.remove_worktree(wt).await?;
    }
    tracker.remove_label(n, LABEL_IN_PROGRESS).await?;
    tracker.remove_label(n, LABEL_RALPH).await?;
    Ok(())
}

/// The end of every run: the accounts into the report, the summary kept, and the issue
/// escalated when the run did not succeed (or stopped with `result`'s error) — with the
/// branch pushed first when passing rounds committed to it, so the work outlives the
/// machine.
pub(super) async fn finish(
    crew: Crew<'_>,
    mut book: Book,
    result: Result<()>,
) -> Result<RunReport> {
    book.report.accounts = crew.accounts.rows();
    book.report.total = crew.accounts.total();
    book.report.phases = crew.timeline.phases();
    book.report.critical_path = crate::timeline::critical_path(&book.report.phases);
    book.report.check_time = crate::timeline::check_time(&book.report.phases);
    book.report.wall_ms = u64::try_from(crew.timeline.elapsed().as_millis()).unwrap_or(u64::MAX);
    book.report.network_refused = crate::process::egress::refusals().all();
    if let Err(e) = keep_summary(crew.input.settings, &book.report, &book.state.evidence) {
        crew.input
            .printer
            .warn(&format!("could not write the run summary: {e:#}"));
    }
    let n = crew.input.issue;
    match result {
        Ok(()) => {
            if !book.report.outcome.succeeded() {
                let body = escalation_body(&crew, &book).await;
                escalate(crew.input.tracker, n, &body).await?;
                book.report.escalation = Some(book.trouble.reason.clone());
            }
            Ok(book.report)
        }
        Err(e) => {
            book.trouble.reason = format!("the run stopped unexpectedly: {e:#}");
            let body = escalation_body(&crew, &book).await;
            if let Err(e2) = escalate(crew.input.tracker, n, &body).await {
                crew.input
                    .printer
                    .warn(&format!("could not escalate #{n}: {e2:#}"));
            }
            // The labels moved: whatever stopped the run, it did not do "nothing".
            Err(e.context(crate::error::AfterChanges))
        }
    }
}

/// Pushes the branch when passing rounds committed to it (and pushing is allowed), then
/// writes the escalation comment.
async fn escalation_body(crew: &Crew<'_>, book: &Book) -> String {
    let mut pushed = false;
    if let (Some(wt), true) = (
        &book.worktree,
        book.state.commits > 0 && book.pre.has_remote && !crew.input.options.no_push,
    ) {
        match crew
            .input
            .workspace
            .push(wt, crew.input.options.token.as_ref())
            .await
        {
            Ok(()) => {
                pushed = true;
                crew.input
                    .printer
                    .status(&format!("- Pushed {} to keep its commits", wt.branch));
            }
            Err(e) => crew
                .input
                .printer
                .warn(&format!("could not push {}: {e}", wt.branch)),
        }
    }
    let t = &book.trouble;
    escalation_comment(&EscalationNote {
        issue: crew.input.issue,
        reason: &t.reason,
        initial: t.initial.as_ref().map(note),
        replan: t.replan.as_ref().map(note),
        last_round: t.last_round.as_ref(),
        verification: t.verification.as_ref(),
        remaining: &t.remaining,
        diff: t.diff.as_deref(),
        branch: &book.pre.branch,
        commits: book.state.commits,
        pushed,
        worktree: book.worktree.as_ref().map(|w| w.path.as_path()),
    })
}

/// Keeps the run report (`report.json`) and a markdown summary (`summary.md`) in
/// `.ralph/runs/N/`.
fn keep_summary(
    settings: &Settings,
    report: &RunReport,
    evidence: &BTreeMap<String, String>,
) -> Result<()> {
    let dir = runs_dir(settings, report.issue);
    std::fs::create_dir_all(&dir)?;
    let json = serde_json::to_string_pretty(report)? + "\n";
    write_atomic(&dir.join("report.json"), redact(&json).as_bytes())?;
    let md = run_summary(report, evidence);
    write_atomic(&dir.join("summary.md"), redact(&md).as_bytes())?;
    Ok(())
}

fn note(f: &Failure) -> FailureNote<'_> {
    FailureNote {
        bot: &f.context.failed_bot,
        kind: &f.context.kind,
        proposal_summary: &f.context.proposal_summary,
        reasons: &f.reasons,
    }
}

/// Hands the issue to a human: `attention-needed`, no `in-progress`/`ralph`, and the comment
/// saying what failed and where the work is.
async fn escalate(tracker: &dyn IssueTracker, n: u64, body: &str) -> Result<()> {
    tracker.remove_label(n, LABEL_IN_PROGRESS).await?;
    tracker.remove_label(n, LABEL_RALPH).await?;
    tracker.add_labels(n, &[LABEL_ATTENTION.to_owned()]).await?;
    tracker.comment(n, &redact(body)).await?;
    Ok(())
}

/// Escalates after an interruption (Ctrl-C, SIGTERM, SIGHUP): the same labels and comment
/// as any escalation, from the state saved after the last round; `--resume` continues.
pub async fn escalate_interrupted(
    settings: &Settings,
    tracker: &dyn IssueTracker,
    issue: u64,
    how: &str,
) -> Result<()> {
    let state = RunState::load(settings, issue).ok().flatten();
    let (branch, commits) = state.map(|s| (s.branch, s.commits)).unwrap_or_default();
    let reason = format!("the run stopped unexpectedly: it was interrupted ({how})");
    let wt = settings
        .checkouts()
        .map(|dir| dir.join(issue.to_string()))
        .unwrap_or_default();
    let body = escalation_comment(&EscalationNote {
        issue,
        reason: &reason,
        initial: None,
        replan: None,
        last_round: None,
        verification: None,
        remaining: &[],
        diff: None,
        branch: &branch,
        commits,
        pushed: false,
        worktree: wt.is_dir().then_some(wt.as_path()),
    });
    escalate(tracker, issue, &body).await
}
