//! A revision round on a pull request ralph opened (`ralph follow`): the maintainers' feedback
//! and the checks the change broke in the project's CI are the open requirements; the winning
//! bot's proposal and the issue's own requirements are the context. It runs exactly like an
//! implementation attempt — a worktree on the pull request's branch at its head, the environment
//! and the baseline there, up to `[implementer] max_attempts` attempts each verified by ralph's
//! checks, the change's own tests, the protected paths and the `verify` role, then the `review`
//! role — and a passing attempt is committed with ralph's trailers and pushed. The worktree is
//! removed afterwards; the branch stays.

use super::agents::Agents;
use super::attempt::attempts;
use super::crew::{Bench, Book, Contest, Crew, RunInput, RunOptions};
use super::crew::{Purpose, Target};
use super::findings::Attempts;
use super::prepare::{cache_dir, forget_setup, ready, Ground};
use super::round::Arrived;
use super::settle::check_reports;
use super::site::{new_run_id, CallSite};
use super::state::RunState;
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::checks::baseline::Baseline;
use crate::checks::detect;
use crate::checks::environment::variables;
use crate::market::{Phase, Review};
use crate::output::Printer;
use crate::run_report::CheckReport;
use crate::secret::GitToken;
use crate::settings::Settings;
use crate::spec::{read_guidance, Requirements};
use crate::timeline::Timeline;
use crate::tracker::{Issue, IssueTracker};
use crate::workspace::{Preflight, Workspace, Worktree};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// What a revision round needs.
pub struct RevisionInput<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a dyn IssueTracker,
    pub workspace: &'a dyn Workspace,
    pub agents: Agents,
    pub printer: &'a Printer,
    pub progress: crate::progress::Progress,
    pub token: Option<GitToken>,
    pub sandbox: Option<crate::process::sandbox::Status>,
    /// The issue the pull request resolves.
    pub issue: Issue,
    pub pull: u64,
    /// The pull request's branch, its head commit, and the branch it merges into.
    pub branch: String,
    pub head: String,
    pub base: String,
    /// Whether the branch is pushed when the revision passes.
    pub push: bool,
    /// The issue's requirements with the feedback and the broken checks as open boxes.
    pub requirements: Requirements,
    /// The open boxes' ids.
    pub open: BTreeSet<String>,
    /// The winning bot and its proposal (as far as it is known).
    pub proposal: Arrived,
    /// The revision round's number on this pull request (1-based).
    pub round: u32,
}

/// What a revision round came to.
#[derive(Debug, Clone, Default)]
pub struct RevisionResult {
    /// An attempt passed and was committed.
    pub passed: bool,
    pub commit: Option<String>,
    pub pushed: bool,
    /// The push was refused (the branch moved meanwhile, credentials): the work is committed
    /// locally only, and the round is tried again.
    pub push_error: Option<String>,
    /// What the implementer said it did, when an attempt passed.
    pub summary: Option<String>,
    /// Open box id → evidence, for the boxes the passing attempt satisfied.
    pub satisfied: BTreeMap<String, String>,
    /// Open box id → why not.
    pub unsatisfied: BTreeMap<String, String>,
    /// Why the last attempt failed.
    pub reasons: Vec<String>,
    /// Nothing could be verified (the environment, the baseline): nobody's failure.
    pub environment: Option<String>,
    pub checks: Vec<CheckReport>,
    pub attempts: u32,
    /// The `review` role's judgement of the change.
    pub review: Option<Review>,
    pub accounts: Accounts,
}

/// Runs a revision round on the pull request's branch; the worktree is removed afterwards,
/// whatever happened.
pub async fn revise(input: RevisionInput<'_>) -> Result<RevisionResult> {
    let (settings, workspace, printer) = (input.settings, input.workspace, input.printer);
    let name = format!("pr-{}", input.pull);
    let wt = workspace
        .revision_worktree(&name, &input.branch, &input.head)
        .await?;
    let result = in_worktree(input, &wt).await;
    cleanup(settings, workspace, printer, &wt).await;
    result
}

/// The round in its worktree: the environment and the baseline, the attempts, the review, the
/// push.
async fn in_worktree(input: RevisionInput<'_>, wt: &Worktree) -> Result<RevisionResult> {
    let settings = input.settings;
    let mut plan = detect(&wt.path, &settings.config.checks);
    plan.env = variables(&wt.path, &cache_dir(settings));
    let ground = Ground {
        settings,
        workspace: input.workspace,
        printer: input.printer,
        // The branch is the pull request's: never deleted here.
        resume: true,
        progress: input.progress.clone(),
    };
    let baseline = match ready(&ground, wt, &plan).await {
        Ok(b) => b,
        Err(e) => {
            return Ok(RevisionResult {
                environment: Some(format!("{e:#}")),
                ..RevisionResult::default()
            })
        }
    };
    let bench = Bench {
        prompts: Prompts::load(&settings.ralph_dir)?,
        guidance: read_guidance(&settings.root),
        wt: wt.clone(),
        plan,
        timeout: Duration::from_secs(settings.config.checks.timeout_secs),
    };
    let contest = contest(&input, wt);
    let (proposal, push, token) = (input.proposal.clone(), input.push, input.token.clone());
    let (mut crew, mut book) = crew_and_book(input, wt, baseline);
    let target = Target {
        wt,
        plan: &bench.plan,
        proposal: &proposal,
        budget: settings.config.max_attempts,
        purpose: Purpose::Revision,
    };
    let done = attempts(&mut crew, &mut book, &bench, &contest, &target).await?;
    let review = match &done.passed {
        Some(_) => super::review::review_change(&mut crew, &bench, &contest, &proposal, &done)
            .await
            .ok(),
        None => None,
    };
    let mut result = result_of(&done, review);
    if result.passed && push {
        let printer = crew.input.printer;
        match crew.input.workspace.push(wt, token.as_ref()).await {
            Ok(()) => {
                result.pushed = true;
                printer.status(&format!("- Pushed {}", wt.branch));
            }
            Err(e) => {
                printer.warn(&format!("could not push {}: {e}", wt.branch));
                result.push_error = Some(e.to_string());
            }
        }
    }
    result.accounts = crew.accounts;
    Ok(result)
}

/// Where the round's calls happen and what they are asked: the feedback as open boxes.
fn contest(input: &RevisionInput<'_>, wt: &Worktree) -> Contest {
    Contest {
        site: CallSite {
            issue: input.issue.number,
            round: input.round,
            phase: Phase::Initial,
            workdir: wt.path.clone(),
            progress: input.progress.clone(),
            variant: Some("revision"),
        },
        issue: input.issue.clone(),
        reqs: input.requirements.clone(),
        open: input.open.clone(),
    }
}

/// The crew and the book of a revision: a run of one round on the pull request's branch.
fn crew_and_book<'a>(
    input: RevisionInput<'a>,
    wt: &Worktree,
    baseline: Baseline,
) -> (Crew<'a>, Book) {
    let n = input.issue.number;
    let pre = Preflight {
        root: input.settings.root.clone(),
        issue: n,
        base: input.base.clone(),
        base_from: format!("pull request #{}", input.pull),
        branch: input.branch.clone(),
        has_remote: input.push,
    };
    let state = RunState::new(new_run_id(n, chrono::Utc::now()), n, input.branch.clone());
    let book = Book::new(pre, state, &input.issue, input.sandbox.clone(), wt.clone());
    let crew = Crew {
        input: RunInput {
            settings: input.settings,
            tracker: input.tracker,
            workspace: input.workspace,
            issue: n,
            agents: input.agents,
            printer: input.printer,
            progress: input.progress,
            options: RunOptions {
                max_iterations: 1,
                resume: false,
                no_push: !input.push,
                base: Some(input.base),
                token: input.token,
                sandbox: input.sandbox,
                // A revision round has no proposals, so no seats.
                seed: 0,
            },
        },
        accounts: Accounts::default(),
        timeline: Timeline::default(),
        baseline,
        last_failed: Vec::new(),
        // One round: the trees it judges are kept in memory only.
        trees: Default::default(),
    };
    (crew, book)
}

/// What the attempts came to, as the revision's result (not yet pushed, no spend yet).
fn result_of(done: &Attempts, review: Option<Review>) -> RevisionResult {
    let mut result = RevisionResult {
        passed: done.passed.is_some(),
        attempts: done.used,
        reasons: done.last_reasons.clone(),
        unsatisfied: done.unsatisfied.clone(),
        environment: done.environment.clone(),
        checks: done
            .verification
            .as_ref()
            .map(check_reports)
            .unwrap_or_default(),
        review,
        ..RevisionResult::default()
    };
    if let Some(cap) = &done.cap {
        result.reasons.push(format!("stopped: {cap}"));
    }
    if let Some(p) = &done.passed {
        result.commit = Some(p.commit.clone());
        result.summary = Some(p.summary.clone());
        result.satisfied = p.verdict.satisfied.clone();
        result.unsatisfied = p.verdict.unsatisfied.clone();
    }
    result
}

/// Removes the revision's worktree (the branch stays) and forgets its environment's setup.
async fn cleanup(settings: &Settings, workspace: &dyn Workspace, printer: &Printer, wt: &Worktree) {
    if let Err(e) = workspace.remove_worktree(wt).await {
        printer.warn(&format!(
            "could not remove the revision's worktree {}: {e}",
            wt.path.display()
        ));
    }
    forget_setup(settings, wt);
}
