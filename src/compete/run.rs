//! `ralph compete N`: the competition end to end (SPEC §6). Preflight, labels, then rounds —
//! requirements, budgets, proposals, blinding, ranking, implementation with up to the winner's
//! budget of attempts, verification by ralph's own checks, outcome — until every checkbox is
//! checked (push, pull request) or a replan fails (escalation). The decisions between rounds
//! (continue, complete, retry, escalate) follow from the facts; no model decides whether checks
//! passed. Every outcome's events are written when it happens; the run state is saved after
//! each round so `--resume` continues without writing an event twice.

use super::agents::Agents;
use super::extract::{extract, prompt_json, PromptIssue};
use super::propose::{FailedCheck, FailureContext};
use super::round::{evaluate, gather, ledger_state, standings, Arrived, Evaluated, Shared};
use super::{new_run_id, CallSite};
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::agent::protocol::{ask, AnswerContext, ImplementAnswer, VerifyAnswer};
use crate::agent::{Phase, Role};
use crate::checks::{detect, CheckKind, CheckPlan};
use crate::error::UserError;
use crate::fsutil::write_atomic;
use crate::ledger::{Event, EventScores, EventStore, Metrics, Tokens};
use crate::market::{
    accuracy, awards, same_proposal, score_implementation, tables, Award, Proposal, RoundFacts,
    Verified,
};
use crate::output::Printer;
use crate::render::run::{escalation_comment, pr_body, run_summary, EscalationNote, FailureNote};
use crate::render::verification::render_terminal;
use crate::run_report::{CheckReport, RoundReport, RunOutcome, RunReport};
use crate::secret::{redact, Secret};
use crate::settings::Settings;
use crate::spec::{check_off, read_guidance, Requirements};
use crate::tracker::workflow::{LABEL_ATTENTION, LABEL_IN_PROGRESS, LABEL_RALPH};
use crate::tracker::{IssueState, IssueTracker, NewPullRequest};
use crate::verify::{measure_coverage, verify, VerificationReport};
use crate::workspace::{
    self, commit, create_worktree, patch_text, CommitInfo, Preflight, PreflightOptions, Worktree,
};
use anyhow::{Context as _, Result};
use futures_util::FutureExt as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most diff text the `verify` role is shown.
const MAX_VERIFY_DIFF: usize = 200_000;

/// The options of `ralph compete N`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub max_iterations: u32,
    pub resume: bool,
    pub no_push: bool,
    pub base: Option<String>,
    /// The GitHub token for the push, when there is one.
    pub token: Option<Secret>,
}

/// What a run needs.
pub struct RunInput<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a dyn IssueTracker,
    pub issue: u64,
    pub agents: Agents,
    pub printer: &'a Printer,
    pub spinners: bool,
    pub options: RunOptions,
}

/// A failed round, remembered for the replan and the escalation comment.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Failure {
    context: FailureContext,
    /// The proposal that failed, to recognise its resubmission.
    proposal: Proposal,
    /// One line per reason, for the escalation comment.
    reasons: Vec<String>,
}

/// `.ralph/runs/N/state.json`: what `--resume` needs, written atomically after every round.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunState {
    run_id: String,
    issue: u64,
    branch: String,
    /// The next round to run (1-based).
    next_round: u32,
    phase: Phase,
    failure: Option<Failure>,
    /// The initial failure, kept for the escalation comment after a failed replan.
    initial_failure: Option<Failure>,
    /// Event files written so far.
    events: Vec<String>,
    coverage_before: Option<f64>,
    /// Why each checked-off requirement counts as done, for the pull request.
    #[serde(default)]
    evidence: std::collections::BTreeMap<String, String>,
}

fn runs_dir(settings: &Settings, issue: u64) -> PathBuf {
    settings.ralph_dir.join("runs").join(issue.to_string())
}

impl RunState {
    fn path(settings: &Settings, issue: u64) -> PathBuf {
        runs_dir(settings, issue).join("state.json")
    }

    fn load(settings: &Settings, issue: u64) -> Result<Option<RunState>> {
        let path = RunState::path(settings, issue);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("the run state {} is damaged", path.display())
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    fn save(&self, settings: &Settings) -> Result<()> {
        let path = RunState::path(settings, self.issue);
        std::fs::create_dir_all(path.parent().unwrap_or(&settings.ralph_dir))
            .with_context(|| format!("cannot create {}", path.display()))?;
        let text = serde_json::to_string_pretty(self)? + "\n";
        write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// A per-issue lock file, `.ralph/runs/N.lock`, holding the process id: two runs on the same
/// issue never proceed at once; runs on different issues can. Removed when dropped.
pub struct RunLock {
    path: PathBuf,
}

impl RunLock {
    pub fn acquire(ralph_dir: &Path, issue: u64) -> Result<RunLock> {
        let dir = ralph_dir.join("runs");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(format!("{issue}.lock"));
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    let _ = writeln!(f, "{}", std::process::id());
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid: Option<u32> = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| t.trim().parse().ok());
                    if pid.is_some_and(alive) {
                        return Err(UserError::usage(format!(
                            "another `ralph compete {issue}` is running (process {})",
                            pid.unwrap_or_default()
                        ))
                        .with_hint(format!(
                            "wait for it to finish; if it is gone, delete {}",
                            path.display()
                        ))
                        .into());
                    }
                    // A stale lock from a process that no longer exists.
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()))
                }
            }
        }
        Err(anyhow::anyhow!("cannot take the lock {}", path.display()))
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // Signal 0 checks that the process exists without touching it.
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 sends nothing; it only reports whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// Runs git2 work on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, workspace::WorkspaceError> + Send + 'static,
) -> Result<T> {
    Ok(tokio::task::spawn_blocking(f)
        .await
        .context("a git task stopped")??)
}

/// Everything the escalation comment says.
#[derive(Debug, Default)]
struct Trouble {
    reason: String,
    initial: Option<Failure>,
    replan: Option<Failure>,
    last_round: Option<RoundReport>,
    verification: Option<VerificationReport>,
}

/// Runs the competition. On any error after the labels changed, the issue is escalated with
/// "the run stopped unexpectedly" and the run state is kept for `--resume`.
pub async fn compete(input: RunInput<'_>) -> Result<RunReport> {
    let settings = input.settings;
    let tracker = input.tracker;
    let n = input.issue;
    let printer = input.printer;
    let _lock = RunLock::acquire(&settings.ralph_dir, n)?;
    let issue = tracker.issue(n).await?;
    let ready = &settings.config.github.ready_label;
    if issue.is_pull_request {
        return Err(UserError::usage(format!("#{n} is a pull request, not an issue")).into());
    }
    if issue.state == IssueState::Closed {
        return Err(UserError::usage(format!("issue #{n} is closed"))
            .with_hint("reopen it if it should be worked on")
            .into());
    }
    let prior = if input.options.resume {
        Some(RunState::load(settings, n)?.ok_or_else(|| {
            UserError::usage(format!("there is no run of issue #{n} to resume"))
                .with_hint(format!("start one with `ralph compete {n}`"))
        })?)
    } else {
        if !issue.has_label(ready) {
            return Err(
                UserError::usage(format!("issue #{n} is not labelled `{ready}`"))
                    .with_hint(format!(
                        "mark it ready with `ralph ready {n}` once its spec is complete"
                    ))
                    .into(),
            );
        }
        if issue.has_label(LABEL_IN_PROGRESS) {
            return Err(UserError::usage(format!(
                "issue #{n} is already `{LABEL_IN_PROGRESS}`"
            ))
            .with_hint(format!(
                "another run may be working on it; to continue a stopped run use `ralph compete {n} --resume`"
            ))
            .into());
        }
        None
    };
    let config = &settings.config;
    let root = settings.root.clone();
    let title = issue.title.clone();
    let base = input
        .options
        .base
        .clone()
        .or_else(|| config.git.base.clone());
    let remote = config.git.remote.clone();
    let resume = input.options.resume;
    let pre: Preflight = blocking(move || {
        workspace::preflight(
            &root,
            &PreflightOptions {
                issue: n,
                title: &title,
                base: base.as_deref(),
                remote: &remote,
                resume,
            },
        )
    })
    .await?;

    // From here on the issue is ours: every way out goes through the outcome or escalation.
    tracker
        .add_labels(n, &[LABEL_IN_PROGRESS.to_owned(), LABEL_RALPH.to_owned()])
        .await?;
    tracker.remove_label(n, ready).await?;
    tracker.remove_label(n, LABEL_ATTENTION).await?;
    match tracker.current_user().await {
        Ok(Some(me)) => {
            if let Err(e) = tracker.assign(n, &[me]).await {
                printer.warn(&format!("could not assign #{n}: {e:#}"));
            }
        }
        Ok(None) => {}
        Err(e) => printer.warn(&format!("could not tell the token's user: {e:#}")),
    }

    let mut state = prior.unwrap_or_else(|| RunState {
        run_id: new_run_id(n, chrono::Utc::now()),
        issue: n,
        branch: pre.branch.clone(),
        next_round: 1,
        phase: Phase::Initial,
        failure: None,
        initial_failure: None,
        events: Vec::new(),
        coverage_before: None,
        evidence: Default::default(),
    });
    let mut report = RunReport {
        issue: n,
        title: issue.title.clone(),
        run_id: state.run_id.clone(),
        outcome: RunOutcome::Success,
        requirements: Requirements::from_body(&issue.body),
        extraction: "checkboxes",
        rounds: Vec::new(),
        events: state.events.clone(),
        accounts: Vec::new(),
        total: Default::default(),
        stopped: None,
        branch: Some(pre.branch.clone()),
        pr_url: None,
        escalation: None,
        warnings: Vec::new(),
    };
    let mut accounts = Accounts::default();
    let mut worktree: Option<Worktree> = None;
    let mut trouble = Trouble::default();
    // A panic must not leave the issue `in-progress`: it is escalated like any other error.
    let result = std::panic::AssertUnwindSafe(rounds(
        &input,
        &pre,
        &mut state,
        &mut report,
        &mut accounts,
        &mut worktree,
        &mut trouble,
    ))
    .catch_unwind()
    .await
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an unknown panic".into());
        Err(anyhow::anyhow!("ralph panicked: {what}"))
    });
    report.accounts = accounts.rows();
    report.total = accounts.total();
    if let Err(e) = keep_summary(settings, &report, &state.evidence) {
        printer.warn(&format!("could not write the run summary: {e:#}"));
    }
    match result {
        Ok(()) => {
            if report.outcome == RunOutcome::Escalated || report.outcome == RunOutcome::Aborted {
                escalate(tracker, n, &trouble, &pre, worktree.as_ref()).await?;
                report.escalation = Some(trouble.reason.clone());
            }
            Ok(report)
        }
        Err(e) => {
            trouble.reason = format!("the run stopped unexpectedly: {e:#}");
            if let Err(e2) = escalate(tracker, n, &trouble, &pre, worktree.as_ref()).await {
                printer.warn(&format!("could not escalate #{n}: {e2:#}"));
            }
            Err(e)
        }
    }
}

/// Escalates after an interruption (Ctrl-C): the same labels and comment as any escalation.
pub async fn escalate_interrupted(
    settings: &Settings,
    tracker: &dyn IssueTracker,
    issue: u64,
) -> Result<()> {
    let state = RunState::load(settings, issue).ok().flatten();
    let pre = Preflight {
        root: settings.root.clone(),
        issue,
        base: String::new(),
        branch: state.as_ref().map(|s| s.branch.clone()).unwrap_or_default(),
        has_remote: false,
    };
    let trouble = Trouble {
        reason: "the run stopped unexpectedly: it was interrupted (Ctrl-C)".into(),
        ..Trouble::default()
    };
    let wt_path = settings.ralph_dir.join("worktrees").join(issue.to_string());
    let wt = wt_path.is_dir().then(|| Worktree {
        path: wt_path,
        branch: pre.branch.clone(),
        base_commit: String::new(),
    });
    escalate(tracker, issue, &trouble, &pre, wt.as_ref()).await
}

#[allow(clippy::too_many_arguments)]
async fn rounds(
    input: &RunInput<'_>,
    pre: &Preflight,
    state: &mut RunState,
    report: &mut RunReport,
    accounts: &mut Accounts,
    worktree_slot: &mut Option<Worktree>,
    trouble: &mut Trouble,
) -> Result<()> {
    let settings = input.settings;
    let config = &settings.config;
    let tracker = input.tracker;
    let printer = input.printer;
    let paint = printer.paint_err();
    let n = input.issue;
    let prompts = Prompts::load(&settings.ralph_dir)?;
    let guidance = read_guidance(&settings.root);
    let shared = Shared {
        settings,
        agents: &input.agents,
        prompts: &prompts,
        guidance: &guidance,
        printer,
        spinners: input.spinners,
    };
    let remote = config.git.remote.clone();
    let p2 = pre.clone();
    let wt = blocking(move || create_worktree(&p2, &remote)).await?;
    *worktree_slot = Some(wt.clone());
    let plan = detect(&wt.path, &config.checks);
    let timeout = Duration::from_secs(config.checks.timeout_secs);
    printer.status(&format!(
        "Branch {} in {} · checks from {}: {}",
        wt.branch,
        wt.path.display(),
        plan.source,
        plan.checks
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if state.coverage_before.is_none() {
        state.coverage_before = measure_coverage(plan.coverage.as_deref(), &wt.path, timeout).await;
    }
    state.save(settings)?;

    let max = input.options.max_iterations;
    while state.next_round <= max {
        let round = state.next_round;
        let phase = state.phase;
        let site = CallSite {
            issue: n,
            round,
            phase,
            workdir: settings.root.clone(),
        };
        let issue = tracker.issue(n).await?;
        printer.status(&paint.bold(&format!(
            "## Round {round}/{max} ({}) · Phase 1: Requirement Extraction",
            phase.as_str()
        )));
        let extracted = extract(&issue, &guidance, &input.agents.arbiter, &prompts, &site).await?;
        if let Some((usage, duration)) = extracted.spend {
            accounts.record("arbiter", Role::Extract, usage, duration);
        }
        for w in &extracted.warnings {
            printer.warn(w);
            report.warnings.push(w.clone());
        }
        let reqs = extracted.requirements;
        report.requirements = reqs.clone();
        report.extraction = extracted.source;
        let open: BTreeSet<String> = reqs.open().map(|r| r.id.clone()).collect();
        printer.status(&format!(
            "- {} checkbox(es), {} open; {} implicit requirement(s)",
            reqs.explicit_requirements.len(),
            open.len(),
            reqs.implicit_requirements.len()
        ));
        if open.is_empty() {
            return complete(input, pre, &wt, report, &state.evidence).await;
        }
        if let Some(cap) = accounts.cap_reached(&config.limits) {
            report.outcome = RunOutcome::Aborted;
            report.stopped = Some(cap.to_string());
            trouble.reason = format!("the run stopped at a cost cap: {cap}");
            return Ok(());
        }

        printer.status(&paint.bold("## Phase 2: Proposal Evaluation"));
        let ledger = ledger_state(settings)?;
        let standing = standings(&ledger);
        let (mut arrived, skipped) = gather(
            &shared,
            &issue,
            &reqs,
            &standing,
            state.failure.as_ref().map(|f| &f.context),
            &site,
            accounts,
        )
        .await?;
        // The failed bot must bring a new proposal: the same one again is refused.
        let mut resubmitted = Vec::new();
        if let (Phase::Replan, Some(failure)) = (phase, &state.failure) {
            let failed_bot = &failure.context.failed_bot;
            if let Some(pos) = arrived.iter().position(|a| &a.bot_id == failed_bot) {
                let (same, similarity) = same_proposal(
                    &failure.proposal,
                    &arrived[pos].proposal,
                    &tables().scoring.similarity,
                );
                if same {
                    printer.warn(&format!(
                        "{failed_bot} resubmitted its failed proposal (similarity {similarity:.2}): refused"
                    ));
                    arrived.remove(pos);
                    resubmitted.push(failed_bot.clone());
                }
            }
        }
        let proposers: Vec<String> = arrived.iter().map(|a| a.bot_id.clone()).collect();
        let evaluated = evaluate(
            &shared, &issue, &reqs, arrived, skipped, &site, None, accounts,
        )
        .await?;
        if let Some(why) = &evaluated.stopped {
            report.rounds.push(evaluated.report.clone());
            report.outcome = RunOutcome::Aborted;
            report.stopped = Some(why.clone());
            trouble.reason = format!("the run stopped at a cost cap: {why}");
            return Ok(());
        }
        let Some((winner, scored)) = evaluated.winner() else {
            trouble.reason = if evaluated.report.proposals.is_empty() {
                "no bot submitted a valid proposal".into()
            } else {
                format!(
                    "every proposal scored below {}: a human should review the issue",
                    tables().scoring.ranking.human_review_below
                )
            };
            trouble.last_round = Some(evaluated.report.clone());
            report.rounds.push(evaluated.report);
            report.outcome = RunOutcome::Escalated;
            return Ok(());
        };
        let winner = winner.clone();
        let proposal_score = scored.total_score;
        let budget = standing.get(&winner.bot_id).map_or(1, |s| s.budget.max(1));

        printer.status(&paint.bold("## Phase 3: Implementation"));
        printer.status(&format!(
            "- Implementing {} ({}) with up to {budget} attempt(s)",
            evaluated.report.winner.clone().unwrap_or_default(),
            winner.bot_id
        ));
        let (outcome, verification, attempts) = implement(
            input, &prompts, &site, &wt, &plan, &reqs, &issue, &winner, budget, state, accounts,
        )
        .await?;
        let mut round_report = evaluated.report.clone();
        round_report.checks = verification
            .as_ref()
            .map(|v| {
                v.checks
                    .iter()
                    .map(|c| CheckReport {
                        name: c.name.clone(),
                        passed: c.passed(),
                        duration_ms: c.duration_ms,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(v) = &verification {
            printer.status(render_terminal(v, paint).trim_end());
        }
        let passed = outcome.is_some();

        // Phase 4: the outcome, the implementation score and the events.
        printer.status(&paint.bold("## Phase 4: Marketplace Update"));
        let (satisfied, summary) = match &outcome {
            Some(answer) => {
                let evidence = verify_requirements(
                    input,
                    &prompts,
                    &site,
                    &wt,
                    &reqs,
                    &issue,
                    &open,
                    &winner,
                    answer,
                    verification.as_ref(),
                    accounts,
                )
                .await?;
                let satisfied: BTreeSet<String> = evidence.keys().cloned().collect();
                state.evidence.extend(evidence);
                (satisfied, answer.summary.clone())
            }
            None => (BTreeSet::new(), String::new()),
        };
        let v = verification.clone().unwrap_or_else(|| VerificationReport {
            checks: Vec::new(),
            coverage: Default::default(),
            diff: Default::default(),
            protected: Vec::new(),
        });
        let addressed: BTreeSet<String> = winner
            .proposal
            .spec_alignment
            .checkboxes_addressed
            .iter()
            .filter(|id| open.contains(*id))
            .cloned()
            .collect();
        let implementation = score_implementation(
            &Verified {
                addressed,
                verified: satisfied.clone(),
                quality: v.tally(CheckKind::Quality),
                tests: v.tally(CheckKind::Test),
                coverage_delta: v.coverage.delta(),
                lines_changed: v.diff.lines_changed(),
                lines_estimated: winner.proposal.estimated_complexity.lines_of_code,
                attempts_used: attempts,
                budget,
                innovation: None,
                concerns_addressed: None,
            },
            &config.scoring_weights,
            &tables().scoring,
        );
        let acc = accuracy(proposal_score, implementation.total);
        let facts = RoundFacts {
            phase,
            winner: winner.bot_id.clone(),
            passed,
            accuracy: acc,
            proposers: proposers.clone(),
            all_bots: config.bot_ids(),
            resubmitted_same: resubmitted,
        };
        let awarded = awards(&facts, &tables().deltas);
        // The side effects first (commit and check-off, or the reset), then the events, then
        // the state: an interruption never leaves events that a resumed run writes again.
        let mut changed = Vec::new();
        if passed {
            let message = format!("{} (#{n})\n\n{}", issue.title, summary.trim());
            let (w2, bot, run_id) = (wt.clone(), winner.bot_id.clone(), state.run_id.clone());
            let (name, email) = (
                config.git.author_name.clone(),
                config.git.author_email.clone(),
            );
            let id = blocking(move || {
                commit(
                    &w2,
                    &CommitInfo {
                        message: &message,
                        author_name: &name,
                        author_email: &email,
                        bot: &bot,
                        run_id: &run_id,
                    },
                )
            })
            .await?;
            let (body, flipped) = check_off(&issue.body, &satisfied);
            changed = flipped;
            if !changed.is_empty() {
                tracker.set_body(n, &body).await?;
            }
            printer.status(&format!(
                "- Committed {} · checked off: {}",
                &id[..id.len().min(10)],
                if changed.is_empty() {
                    "none".to_owned()
                } else {
                    changed.join(", ")
                }
            ));
        } else {
            let w2 = wt.clone();
            blocking(move || workspace::reset_worktree(&w2)).await?;
        }
        let written = write_events(
            settings,
            state,
            &awarded,
            &evaluated,
            &winner,
            proposal_score,
            &implementation,
            acc,
            &v,
            accounts,
        )?;
        for (award, file) in awarded.iter().zip(&written) {
            printer.status(&format!(
                "- {}: {} {:+.2} → {file}",
                award.bot_id, award.outcome, award.weight_delta
            ));
        }
        report.events.extend(written.iter().cloned());
        report.rounds.push(round_report.clone());

        if passed {
            state.coverage_before = v.coverage.after.or(state.coverage_before);
            state.failure = None;
            state.initial_failure = None;
            state.phase = Phase::Initial;
            state.next_round += 1;
            state.save(settings)?;
            printer.status(&paint.bold("## Result: SUCCESS"));
            let remaining = open.len() - changed.len();
            printer.status(&format!(
                "- Iteration {round}/{max}; {remaining} checkbox(es) remain"
            ));
            if remaining == 0 {
                return complete(input, pre, &wt, report, &state.evidence).await;
            }
            continue;
        }

        // The implementation failed: replan or escalate.
        let failure = failure_of(&winner, &v);
        printer.status(&paint.bold("## Result: FAILURE"));
        for r in &failure.reasons {
            printer.status(&format!("- {r}"));
        }
        if phase == Phase::Initial {
            state.initial_failure = Some(failure.clone());
            state.failure = Some(failure);
            state.phase = Phase::Replan;
            state.next_round += 1;
            state.save(settings)?;
            printer.status("- Replanning with every bot");
            continue;
        }
        trouble.reason = "the implementation failed, and so did the replan".into();
        trouble.initial = state.initial_failure.clone();
        trouble.replan = Some(failure);
        trouble.last_round = Some(round_report);
        trouble.verification = verification;
        state.next_round += 1;
        state.save(settings)?;
        report.outcome = RunOutcome::Escalated;
        return Ok(());
    }
    trouble.reason = format!("max_iterations ({max}) rounds ran and checkboxes remain");
    report.outcome = RunOutcome::Escalated;
    Ok(())
}

/// What a failed implementation tells the replan (seed 001's categories).
fn failure_of(winner: &Arrived, v: &VerificationReport) -> Failure {
    let mut reasons = v.failure_reasons();
    if reasons.is_empty() {
        reasons.push("the implementer produced no passing attempt".into());
    }
    let kind = if !v.protected.is_empty() {
        "protected_paths"
    } else if v.failing_checks().any(|c| c.kind == CheckKind::Test) {
        "tests"
    } else if v.failing_checks().next().is_some() {
        "quality"
    } else if v.coverage.dropped() {
        "coverage"
    } else {
        "implementation"
    };
    Failure {
        context: FailureContext {
            failed_bot: winner.bot_id.clone(),
            proposal_summary: winner.proposal.approach_summary.clone(),
            kind: kind.into(),
            checks: v
                .failing_checks()
                .map(|c| FailedCheck {
                    name: c.name.clone(),
                    output_tail: c.output_tail.clone(),
                })
                .collect(),
        },
        proposal: winner.proposal.clone(),
        reasons,
    }
}

/// The implementer's attempts: after a failed one the worktree is reset and the implementer
/// gets the failing checks. Returns its answer when an attempt passed verification, the last
/// verification, and the attempts used.
#[allow(clippy::too_many_arguments)]
async fn implement(
    input: &RunInput<'_>,
    prompts: &Prompts,
    site: &CallSite,
    wt: &Worktree,
    plan: &CheckPlan,
    reqs: &Requirements,
    issue: &crate::tracker::Issue,
    winner: &Arrived,
    budget: u32,
    state: &RunState,
    accounts: &mut Accounts,
) -> Result<(Option<ImplementAnswer>, Option<VerificationReport>, u32)> {
    let printer = input.printer;
    let implementer = &input.agents.implementer;
    let timeout = Duration::from_secs(input.settings.config.checks.timeout_secs);
    let mut previous: Vec<FailedCheck> = Vec::new();
    let mut last = None;
    let mut used = 0;
    for attempt in 1..=budget {
        used = attempt;
        if attempt > 1 {
            let w2 = wt.clone();
            blocking(move || workspace::reset_worktree(&w2)).await?;
        }
        let prompt = prompts.render(
            Role::Implement,
            &serde_json::json!({
                "issue": PromptIssue::new(issue),
                "branch": wt.branch,
                "checks": plan.checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "requirements_json": prompt_json(reqs),
                "proposal_json": prompt_json(&winner.proposal),
                "previous_failures": previous,
                "attempt": attempt,
                "budget": budget,
            }),
        )?;
        let backend = match &implementer.backend {
            Ok(b) => b.clone(),
            Err(why) => {
                return Err(anyhow::anyhow!("the implementer cannot start: {why}"));
            }
        };
        let mut call = site.call(Role::Implement, prompt, implementer.timeout);
        call.workdir = wt.path.clone();
        call.attempt = (attempt - 1) * 2;
        let ctx = AnswerContext {
            requirement_ids: reqs
                .explicit_requirements
                .iter()
                .map(|r| r.id.clone())
                .collect(),
            ..AnswerContext::default()
        };
        let answer = match ask::<ImplementAnswer>(backend.as_ref(), &call, &ctx).await {
            Ok(asked) => {
                accounts.record("implementer", Role::Implement, asked.usage, asked.duration);
                Some(asked.answer)
            }
            Err(e) => {
                printer.warn(&format!("attempt {attempt}: the implementer failed: {e}"));
                None
            }
        };
        let v = verify(wt, plan, state.coverage_before, timeout).await?;
        let ok = v.passed() && answer.is_some();
        printer.status(&format!(
            "- Attempt {attempt}/{budget}: {}",
            if ok {
                "verification passed".to_owned()
            } else {
                let mut r = v.failure_reasons();
                if answer.is_none() {
                    r.insert(0, "the implementer gave no answer".into());
                }
                r.join("; ")
            }
        ));
        if ok {
            return Ok((answer, Some(v), attempt));
        }
        previous = v
            .failing_checks()
            .map(|c| FailedCheck {
                name: c.name.clone(),
                output_tail: c.output_tail.clone(),
            })
            .chain(v.protected.iter().map(|f| FailedCheck {
                name: format!("protected path {}", f.path),
                output_tail: f.reason.clone(),
            }))
            .collect();
        last = Some(v);
    }
    Ok((None, last, used))
}

/// Which open checkboxes the implementation satisfies: the `verify` role's answer, limited to
/// the open ones; when the arbiter cannot answer, the checkboxes both the proposal and the
/// implementer claim (the checks passed, so the claim has their support).
#[allow(clippy::too_many_arguments)]
async fn verify_requirements(
    input: &RunInput<'_>,
    prompts: &Prompts,
    site: &CallSite,
    wt: &Worktree,
    reqs: &Requirements,
    issue: &crate::tracker::Issue,
    open: &BTreeSet<String>,
    winner: &Arrived,
    answer: &ImplementAnswer,
    verification: Option<&VerificationReport>,
    accounts: &mut Accounts,
) -> Result<std::collections::BTreeMap<String, String>> {
    let w2 = wt.clone();
    let diff = blocking(move || patch_text(&w2, MAX_VERIFY_DIFF)).await?;
    let checks: Vec<serde_json::Value> = verification
        .map(|v| {
            v.checks
                .iter()
                .map(|c| serde_json::json!({"name": c.name, "passed": c.passed()}))
                .collect()
        })
        .unwrap_or_default();
    let prompt = prompts.render(
        Role::Verify,
        &serde_json::json!({
            "issue": PromptIssue::new(issue),
            "requirements_json": prompt_json(reqs),
            "checks": checks,
            "diff": crate::spec::strip_for_prompt(&diff),
        }),
    )?;
    let arbiter = &input.agents.arbiter;
    let fallback = || -> std::collections::BTreeMap<String, String> {
        winner
            .proposal
            .spec_alignment
            .checkboxes_addressed
            .iter()
            .filter(|id| open.contains(*id) && answer.checkboxes_completed.contains(id))
            .map(|id| {
                (
                    id.clone(),
                    "claimed by the proposal and the implementer; every check passed".to_owned(),
                )
            })
            .collect()
    };
    let Ok(backend) = &arbiter.backend else {
        input
            .printer
            .warn("no arbiter to verify the requirements: using the claims the checks support");
        return Ok(fallback());
    };
    let call = site.call(Role::Verify, prompt, arbiter.timeout);
    let ctx = AnswerContext {
        requirement_ids: open.clone(),
        ..AnswerContext::default()
    };
    match ask::<VerifyAnswer>(backend.as_ref(), &call, &ctx).await {
        Ok(asked) => {
            accounts.record("arbiter", Role::Verify, asked.usage, asked.duration);
            Ok(asked
                .answer
                .satisfied
                .into_iter()
                .filter(|s| open.contains(&s.id))
                .map(|s| (s.id, crate::spec::strip_for_prompt(&s.evidence)))
                .collect())
        }
        Err(e) => {
            input.printer.warn(&format!(
                "the verify role failed ({e}): using the claims the checks support"
            ));
            Ok(fallback())
        }
    }
}

/// Writes one event per award, with the round's facts, and records them in the state (which
/// the caller saves together with the round's progress).
#[allow(clippy::too_many_arguments)]
fn write_events(
    settings: &Settings,
    state: &mut RunState,
    awarded: &[Award],
    evaluated: &Evaluated,
    winner: &Arrived,
    proposal_score: f64,
    implementation: &crate::market::ImplementationScore,
    acc: f64,
    v: &VerificationReport,
    accounts: &Accounts,
) -> Result<Vec<String>> {
    let store = EventStore::new(settings.ralph_dir.join("events"));
    let round = &evaluated.report;
    let mut written = Vec::new();
    for award in awarded {
        let mut e = Event::new(
            state.issue,
            &award.bot_id,
            award.outcome,
            award.weight_delta,
        );
        let own = round.proposals.iter().find(|p| p.bot_id == award.bot_id);
        let is_winner = award.bot_id == winner.bot_id && award.outcome.is_implementation();
        e.run_id = Some(state.run_id.clone());
        e.round = Some(state.next_round);
        e.iteration_count = Some(state.next_round);
        e.phase = Some(state.phase);
        e.rank = own.and_then(|p| {
            round
                .ranking
                .iter()
                .position(|id| id == &p.proposal_id)
                .map(|i| i as u32 + 1)
        });
        e.proposal_score = own.map(|p| p.total_score);
        e.success_probability = own.map(|p| p.success_probability);
        e.scores = own.map(|p| EventScores {
            proposal: p.scores,
            implementation: is_winner.then_some(implementation.scores),
        });
        if is_winner {
            e.proposal_score = Some(proposal_score);
            e.implementation_score = Some(implementation.total);
            e.accuracy = Some(acc);
            e.metrics = Some(Metrics {
                tests_passed: Some(v.tally(CheckKind::Test).0 == v.tally(CheckKind::Test).1),
                code_quality_passed: Some(
                    v.tally(CheckKind::Quality).0 == v.tally(CheckKind::Quality).1,
                ),
                coverage_delta: v.coverage.delta(),
                lines_changed: Some(v.diff.lines_changed()),
                files_affected: Some(v.diff.files_affected() as u64),
            });
        }
        let spend = accounts.of(&award.bot_id);
        e.tokens = Some(Tokens {
            input: spend.input_tokens,
            output: spend.output_tokens,
        });
        e.cost_usd = spend.cost_usd;
        e.duration_ms = Some(spend.duration.as_millis() as u64);
        let name = store
            .append(&e)
            .with_context(|| format!("cannot write an event to {}", store.dir().display()))?;
        state.events.push(name.clone());
        written.push(name);
    }
    Ok(written)
}

/// Every checkbox is checked: push, open the pull request, release the labels.
async fn complete(
    input: &RunInput<'_>,
    pre: &Preflight,
    wt: &Worktree,
    report: &mut RunReport,
    evidence: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let tracker = input.tracker;
    let n = input.issue;
    let printer = input.printer;
    if printer.json_mode() {
        printer.status("<promise>COMPLETE</promise>");
    } else {
        printer.data("<promise>COMPLETE</promise>\n")?;
    }
    report.outcome = RunOutcome::Complete;
    if input.options.no_push {
        printer.status(&format!(
            "- --no-push: the branch {} stays local (worktree {})",
            wt.branch,
            wt.path.display()
        ));
    } else {
        if pre.has_remote {
            let (w2, remote, token) = (
                wt.clone(),
                input.settings.config.git.remote.clone(),
                input.options.token.clone(),
            );
            blocking(move || workspace::push(&w2, &remote, token.as_ref())).await?;
            printer.status(&format!("- Pushed {}", wt.branch));
        }
        let issue = tracker.issue(n).await?;
        let pr = tracker
            .create_pull_request(&NewPullRequest {
                issue: n,
                title: issue.title.clone(),
                head: wt.branch.clone(),
                base: pre.base.clone(),
                body: redact(&pr_body(report, evidence)).into_owned(),
            })
            .await?;
        printer.status(&format!(
            "- Pull request #{}{}",
            pr.number,
            pr.url
                .as_deref()
                .map(|u| format!(": {u}"))
                .unwrap_or_default()
        ));
        report.pr_url = pr.url.or(Some(format!("#{}", pr.number)));
        let w2 = wt.clone();
        let root = pre.root.clone();
        blocking(move || workspace::remove_worktree(&root, &w2)).await?;
    }
    tracker.remove_label(n, LABEL_IN_PROGRESS).await?;
    tracker.remove_label(n, LABEL_RALPH).await?;
    Ok(())
}

/// Keeps the run report (`report.json`) and a markdown summary (`summary.md`) in
/// `.ralph/runs/N/`.
fn keep_summary(
    settings: &Settings,
    report: &RunReport,
    evidence: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let dir = runs_dir(settings, report.issue);
    std::fs::create_dir_all(&dir)?;
    let json = serde_json::to_string_pretty(report)? + "\n";
    write_atomic(&dir.join("report.json"), redact(&json).as_bytes())?;
    let md = run_summary(report, evidence);
    write_atomic(&dir.join("summary.md"), redact(&md).as_bytes())?;
    Ok(())
}

/// Hands the issue to a human: `attention-needed`, no `in-progress`/`ralph`, and a comment
/// saying what failed and where the work is.
async fn escalate(
    tracker: &dyn IssueTracker,
    n: u64,
    trouble: &Trouble,
    pre: &Preflight,
    wt: Option<&Worktree>,
) -> Result<()> {
    fn note(f: &Failure) -> FailureNote<'_> {
        FailureNote {
            bot: &f.context.failed_bot,
            kind: &f.context.kind,
            proposal_summary: &f.context.proposal_summary,
            reasons: &f.reasons,
        }
    }
    let body = escalation_comment(&EscalationNote {
        issue: n,
        reason: &trouble.reason,
        initial: trouble.initial.as_ref().map(note),
        replan: trouble.replan.as_ref().map(note),
        last_round: trouble.last_round.as_ref(),
        verification: trouble.verification.as_ref(),
        branch: &pre.branch,
        worktree: wt.map(|w| w.path.as_path()),
    });
    tracker.remove_label(n, LABEL_IN_PROGRESS).await?;
    tracker.remove_label(n, LABEL_RALPH).await?;
    tracker.add_labels(n, &[LABEL_ATTENTION.to_owned()]).await?;
    tracker.comment(n, &redact(&body)).await?;
    Ok(())
}
