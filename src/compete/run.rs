//! `ralph compete N`: the competition end to end (docs/specification.md §6), as a short loop over
//! [`decide`](super::decide). Admission (lock, refusals, the git preflight — nothing changed
//! when any refuses), the claim (labels, assignment), then rounds: requirements, budgets,
//! proposals, blinding, ranking, the implementation attempts and ralph's own verification
//! (`attempt`), the outcome with its events — until the decision is to complete (push, pull
//! request) or to stop (escalation, `finish`). The run state is saved after each round so
//! `--resume` continues without writing an event twice.

use super::agents::Agents;
use super::decide::{decide, rounds_exhausted, Decision, Position, RoundEnd, Stop};
use super::extract::extract;
use super::guard;
use super::prepare::{discard, open, ready, Ground};
use super::round::{evaluate, gather, ledger_state, standings, Arrived, Ask, Evaluated, Shared};
use super::site::{new_run_id, CallSite};
use super::state::{RunLock, RunState, Trouble};
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::agent::{Phase, Role};
use crate::checks::baseline::Baseline;
use crate::checks::{detect, CheckPlan};
use crate::error::UserError;
use crate::market::{same_proposal, tables};
use crate::output::Printer;
use crate::render::verification::render_terminal;
use crate::run_report::{RunOutcome, RunReport, SkippedBot};
use crate::secret::Secret;
use crate::settings::Settings;
use crate::spec::{read_guidance, Guidance, Requirements};
use crate::timeline::Timeline;
use crate::tracker::workflow::{LABEL_ATTENTION, LABEL_IN_PROGRESS, LABEL_RALPH};
use crate::tracker::{Issue, IssueState, IssueTracker};
use crate::workspace::{Preflight, PreflightOptions, Workspace, Worktree};
use anyhow::Result;
use futures_util::FutureExt as _;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The options of `ralph compete N`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub max_iterations: u32,
    pub resume: bool,
    pub no_push: bool,
    pub base: Option<String>,
    /// The GitHub token for the push, when there is one.
    pub token: Option<Secret>,
    /// How the agents and checks are confined, for the report and the pull request.
    pub sandbox: Option<crate::process::sandbox::Status>,
}

/// What a run needs.
pub struct RunInput<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a dyn IssueTracker,
    pub workspace: &'a dyn Workspace,
    pub issue: u64,
    pub agents: Agents,
    pub printer: &'a Printer,
    /// The live view of the running agents and checks.
    pub progress: crate::progress::Progress,
    pub options: RunOptions,
}

/// A competition in progress: what it was given, where its branch is, what it has done.
pub(super) struct Run<'a> {
    pub input: RunInput<'a>,
    pub pre: Preflight,
    pub state: RunState,
    pub report: RunReport,
    pub accounts: Accounts,
    pub worktree: Option<Worktree>,
    pub trouble: Trouble,
    /// The checks on the commit the next attempt starts from.
    pub baseline: Baseline,
    /// Where the run's time goes.
    pub timeline: Timeline,
}

/// A round's first half: the requirements, and the winner or why there is none.
pub(super) struct Front {
    /// The run's spending before the round, to tell the round's own.
    before: Accounts,
    at: Position,
    outcome: Result<(Contest, Selection), RoundEnd>,
}

/// What every round works with, made once the run has its worktree.
pub(super) struct Bench {
    pub prompts: Prompts,
    pub guidance: Vec<Guidance>,
    pub wt: Worktree,
    pub plan: CheckPlan,
    /// Per check (and coverage command).
    pub timeout: Duration,
}

/// One round's question: the issue as it is now, its requirements, which are open, and where
/// the calls happen.
pub(super) struct Contest {
    pub site: CallSite,
    pub issue: Issue,
    pub reqs: Requirements,
    pub open: BTreeSet<String>,
}

impl Contest {
    pub fn ask(&self) -> Ask<'_> {
        Ask {
            issue: &self.issue,
            reqs: &self.reqs,
            site: &self.site,
        }
    }
}

/// The round's winner and what the marketplace needs to settle it.
pub(super) struct Selection {
    pub evaluated: Evaluated,
    pub winner: Arrived,
    pub proposal_score: f64,
    /// Implementation attempts the winner gets.
    pub budget: u32,
    /// Bots with a valid proposal this round.
    pub proposers: Vec<String>,
    /// A failed bot whose resubmission was refused.
    pub resubmitted: Vec<String>,
}

/// Runs the competition. On any error after the labels changed, the issue is escalated with
/// "the run stopped unexpectedly" and the run state is kept for `--resume`.
pub async fn compete(mut input: RunInput<'_>) -> Result<RunReport> {
    let _lock = RunLock::acquire(&input.settings.ralph_dir, input.issue)?;
    // Off a terminal, a line per running agent or check every heartbeat, until the run ends.
    let _heartbeat = input.progress.heartbeat();
    let progress = input.progress.clone();
    let (issue, prior) = admit(&input).await?;
    let base = input
        .options
        .base
        .clone()
        .or_else(|| input.settings.config.git.base.clone());
    // The tracker's default branch, for a repository whose remote HEAD is not set.
    let default_branch = match &base {
        Some(_) => None,
        None => input.tracker.default_branch().await.unwrap_or_else(|e| {
            tracing::debug!("the tracker's default branch is unknown: {e}");
            None
        }),
    };
    let pre = input
        .workspace
        .preflight(&PreflightOptions {
            issue: input.issue,
            title: &issue.title,
            base: base.as_deref(),
            default_branch: default_branch.as_deref(),
            resume: input.options.resume,
        })
        .await?;
    admit_agents(&mut input)?;
    admit_checks(&input)?;
    let prompts = Prompts::load(&input.settings.ralph_dir)?;
    let guidance = read_guidance(&input.settings.root);
    let ground = Ground {
        settings: input.settings,
        workspace: input.workspace,
        printer: input.printer,
        resume: input.options.resume,
        progress: input.progress.clone(),
    };
    let timeline = Timeline::default();
    let opened = open(&ground, &pre).await?;
    let bench = Bench {
        prompts,
        guidance,
        wt: opened.wt,
        plan: opened.plan,
        timeout: Duration::from_secs(input.settings.config.checks.timeout_secs),
    };
    // The baseline is not known yet: the first round's agents start while it runs.
    let pending = Baseline {
        commit: String::new(),
        checks: Vec::new(),
        coverage: None,
    };
    let mut run = Run::new(input, pre, &issue, prior, &bench, pending, timeline);
    run.announce(&bench);
    // Saved before any agent runs, so that an interrupted first round can be resumed.
    run.state.save(run.input.settings)?;
    let opening = run
        .opening(&bench, ready(&ground, &bench.wt, &bench.plan))
        .await;
    // Nothing has changed yet when the baseline refuses or the first round fails early: the
    // agents were stopped with the future, the worktree and the state go, no label moved.
    let front = match opening {
        Ok(front) => front,
        Err(e) => {
            discard(&ground, &bench.wt).await;
            if !ground.resume {
                RunState::forget(ground.settings, run.input.issue);
            }
            return Err(e);
        }
    };
    // From here on the issue is ours: every way out goes through the outcome or escalation.
    if let Err(e) = claim(&run.input).await {
        discard(&ground, &bench.wt).await;
        return Err(e);
    }
    // A panic must not leave the issue `in-progress`: it is escalated like any other error.
    let result = std::panic::AssertUnwindSafe(run.rounds(&bench, Some(front)))
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
    let finished = run.finish(result).await;
    progress.end_phase();
    finished
}

/// The refusals about the issue, before anything changes: a pull request, a closed issue,
/// nothing to resume, not ready, already in progress, no open checkbox. Returns the issue and,
/// on `--resume`, the saved state.
async fn admit(input: &RunInput<'_>) -> Result<(Issue, Option<RunState>)> {
    let n = input.issue;
    let issue = input.tracker.issue(n).await?;
    let ready = &input.settings.config.github.ready_label;
    if issue.is_pull_request {
        return Err(UserError::usage(format!("#{n} is a pull request, not an issue")).into());
    }
    if issue.state == IssueState::Closed {
        return Err(UserError::usage(format!("issue #{n} is closed"))
            .with_hint("reopen it if it should be worked on")
            .into());
    }
    if input.options.resume {
        let prior = RunState::load(input.settings, n)?.ok_or_else(|| {
            UserError::usage(format!("there is no run of issue #{n} to resume"))
                .with_hint(format!("start one with `ralph compete {n}`"))
        })?;
        return Ok((issue, Some(prior)));
    }
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
            "another run may be working on it; to continue a stopped run use `ralph compete {n} --resume`, or re-arm it with `ralph ready {n}`"
        ))
        .into());
    }
    if Requirements::from_body(&issue.body).open().next().is_none() {
        return Err(UserError::usage(format!(
            "issue #{n} has no open checkbox: there is nothing to compete on"
        ))
        .with_hint(crate::spec::requirements_hint(n))
        .into());
    }
    Ok((issue, None))
}

/// At least one check must be configured or detected: ralph never takes an agent's word.
fn admit_checks(input: &RunInput<'_>) -> Result<()> {
    let plan = detect(&input.settings.root, &input.settings.config.checks);
    if plan.checks.is_empty() {
        return Err(UserError::usage(
            "no check is configured or detected: ralph cannot verify an implementation",
        )
        .with_hint(format!(
            "name the checks under [checks] in .ralph/config.toml, e.g.\n{}",
            crate::checks::example(&input.settings.root)
        ))
        .into());
    }
    Ok(())
}

/// The agents must be able to start before anything changes: the implementer, the arbiter and
/// at least one bot; a bot that cannot is skipped for the run with a warning.
fn admit_agents(input: &mut RunInput<'_>) -> Result<()> {
    if let Some(cap) = input.settings.config.limits.max_cost_usd {
        let unknown = input.agents.without_cost();
        if !unknown.is_empty() {
            input.printer.warn(&format!(
                "`limits.max_cost_usd` = {cap} cannot see what {} spend: their backend reports no cost; set `price` on them",
                unknown.join(", ")
            ));
        }
    }
    match input.agents.usable() {
        Err(fatal) => Err(UserError::usage(format!(
            "the competition cannot start its agents:\n  {}",
            fatal.join("\n  ")
        ))
        .with_hint("install the missing programs or set the keys, or change the agents in .ralph/config.toml; `ralph doctor` checks everything")
        .into()),
        Ok(skipped) => {
            for s in &skipped {
                input.printer.warn(&format!("skipping a bot for this run: {s}"));
            }
            input.agents.bots.retain(|b| b.backend.is_ok());
            Ok(())
        }
    }
}

/// Labels `ready` → `in-progress` + `ralph`, and the issue assigned to the token's user.
async fn claim(input: &RunInput<'_>) -> Result<()> {
    let (tracker, n, printer) = (input.tracker, input.issue, input.printer);
    tracker
        .add_labels(n, &[LABEL_IN_PROGRESS.to_owned(), LABEL_RALPH.to_owned()])
        .await?;
    tracker
        .remove_label(n, &input.settings.config.github.ready_label)
        .await?;
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
    Ok(())
}

impl<'a> Run<'a> {
    fn new(
        input: RunInput<'a>,
        pre: Preflight,
        issue: &Issue,
        prior: Option<RunState>,
        bench: &Bench,
        baseline: Baseline,
        timeline: Timeline,
    ) -> Self {
        let state = prior.unwrap_or_else(|| {
            RunState::new(
                new_run_id(input.issue, chrono::Utc::now()),
                input.issue,
                pre.branch.clone(),
            )
        });
        let report = RunReport {
            issue: input.issue,
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
            sandbox: input.options.sandbox.clone(),
            git_tampering: Vec::new(),
            phases: Vec::new(),
            critical_path: Vec::new(),
            wall_ms: 0,
        };
        Run {
            input,
            pre,
            state,
            report,
            accounts: Accounts::default(),
            worktree: Some(bench.wt.clone()),
            trouble: Trouble::default(),
            baseline,
            timeline,
        }
    }

    /// The branch, the worktree and the checks, before the first round.
    fn announce(&self, bench: &Bench) {
        self.input.printer.status(&format!(
            "Branch {} in {} · checks from {}: {}",
            bench.wt.branch,
            bench.wt.path.display(),
            bench.plan.source,
            bench
                .plan
                .checks
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }

    /// The first round's requirements, proposals and judging, while `baseline` makes the
    /// environment and runs the checks on the base: the first attempt needs the baseline, the
    /// bots do not. A baseline that refuses stops the agents at once (the round's future is
    /// dropped with their processes) and is returned as it is.
    async fn opening(
        &mut self,
        bench: &Bench,
        baseline: impl std::future::Future<Output = Result<Baseline>>,
    ) -> Result<Front> {
        let started = Instant::now();
        let baseline = async move {
            let b = baseline.await;
            (b, Instant::now())
        };
        // The agents read a checkout of their own, of the same commit: the worktree is the
        // environment's and the baseline's meanwhile, and what they write there is not the
        // agents' doing.
        let workspace = self.input.workspace;
        let head = workspace.head(&bench.wt).await?;
        let name = format!(
            "{}-read",
            bench
                .wt
                .path
                .file_name()
                .map_or_else(|| "worktree".into(), |n| n.to_string_lossy())
        );
        let reading = workspace.create_scratch(&bench.wt, &name, &head).await?;
        let both: Result<(Result<Front>, (Baseline, Instant))> = async {
            let front = self.front(bench, &reading);
            tokio::pin!(front, baseline);
            Ok(tokio::select! {
                (b, done) = &mut baseline => {
                    let b = b?;
                    (front.await, (b, done))
                }
                f = &mut front => {
                    let f = f?;
                    let (b, done) = baseline.await;
                    (Ok(f), (b?, done))
                }
            })
        }
        .await;
        // Gone whatever happened (a refusal stopped the agents with their future).
        if let Err(e) = workspace.remove_scratch(&reading).await {
            tracing::warn!("could not remove {}: {e}", reading.path.display());
        }
        let (mut front, (baseline, done)) = both?;
        // The rest of the round works in the run's worktree.
        if let Ok(Front {
            outcome: Ok((contest, _)),
            ..
        }) = &mut front
        {
            contest.site.workdir = bench.wt.path.clone();
        }
        self.timeline.record("baseline", started, done);
        self.baseline = baseline;
        front
    }

    /// The rounds, until the decision is to complete or to stop; the first one's first half
    /// (`opening`) is done already.
    async fn rounds(&mut self, bench: &Bench, opening: Option<Front>) -> Result<()> {
        self.state.save(self.input.settings)?;
        let max = self.input.options.max_iterations;
        let mut opening = opening;
        while self.state.next_round <= max {
            let front = match opening.take() {
                Some(front) => front,
                None => self.front(bench, &bench.wt).await?,
            };
            match self.back(bench, front).await? {
                Decision::Continue | Decision::Replan => {}
                Decision::Complete => return self.complete(&bench.wt).await,
                Decision::Escalate(stop) => {
                    self.stop(stop);
                    return Ok(());
                }
            }
        }
        self.stop(Stop {
            outcome: RunOutcome::Escalated,
            reason: rounds_exhausted(max),
            cap: None,
        });
        Ok(())
    }

    /// Ends the run early: the outcome, the cap that stopped it, the reason for the comment.
    fn stop(&mut self, stop: Stop) {
        self.report.outcome = stop.outcome;
        if stop.cap.is_some() {
            self.report.stopped = stop.cap;
        }
        self.trouble.reason = stop.reason;
    }

    /// A round's first half: the requirements, the proposals, the judging and the ranking.
    async fn front(&mut self, bench: &Bench, wt: &Worktree) -> Result<Front> {
        let before = self.accounts.clone();
        let at = Position {
            phase: self.state.phase,
            round: self.state.next_round,
            max_rounds: self.input.options.max_iterations,
        };
        let ended = |end| Front {
            before: before.clone(),
            at,
            outcome: Err(end),
        };
        let started = Instant::now();
        let contest = self.requirements(bench, wt, at).await?;
        self.timeline
            .since(format!("extraction r{}", at.round), started);
        if contest.open.is_empty() {
            return Ok(ended(RoundEnd::NothingOpen));
        }
        if let Some(cap) = self
            .accounts
            .cap_reached(&self.input.settings.config.limits)
        {
            return Ok(ended(RoundEnd::CapReached(cap.to_string())));
        }
        Ok(match self.select(bench, wt, &contest, at.round).await? {
            Ok(selection) => Front {
                before,
                at,
                outcome: Ok((contest, selection)),
            },
            Err(end) => ended(end),
        })
    }

    /// A round's second half: the implementation, the review, the audit and the outcome.
    async fn back(&mut self, bench: &Bench, front: Front) -> Result<Decision> {
        let Front {
            before,
            at,
            outcome,
        } = front;
        let (contest, selection) = match outcome {
            Ok(picked) => picked,
            Err(end) => return Ok(decide(&end, at)),
        };
        let printer = self.input.printer;
        super::site::phase(printer, &self.input.progress, "## Phase 3: Implementation");
        printer.status(&format!(
            "- Implementing {} ({}) with up to {} attempt(s)",
            selection
                .evaluated
                .report
                .winner
                .clone()
                .unwrap_or_default(),
            selection.winner.bot_id,
            selection.budget
        ));
        let start = self.input.workspace.head(&bench.wt).await?;
        let mut attempts = self.implement(bench, &contest, &selection).await?;
        if let Some(v) = &attempts.verification {
            // The live view printed each check as it finished; with it off, list them here.
            let with_checks = self.input.progress.mode() == crate::progress::Mode::Off;
            printer.status(render_terminal(v, printer.paint_err(), with_checks).trim_end());
        }
        let started = Instant::now();
        attempts.review = self
            .review_change(bench, &contest, &selection, &attempts)
            .await?;
        self.timeline
            .since(format!("review r{}", at.round), started);
        // A round the environment or a cap stopped tells nothing an audit could compare.
        if attempts.environment.is_none() && attempts.cap.is_none() {
            let started = Instant::now();
            attempts.audit = self.audit(bench, &contest, &selection, &start).await?;
            if attempts.audit.is_some() {
                self.timeline.since(format!("audit r{}", at.round), started);
            }
        }
        let spend = self.accounts.since(&before);
        let end = self.settle(&contest, &selection, attempts, &spend).await?;
        Ok(decide(&end, at))
    }

    /// Phase 1: the issue as it is now and its requirements (the `extract` role, else the
    /// checkboxes).
    async fn requirements(
        &mut self,
        bench: &Bench,
        wt: &Worktree,
        at: Position,
    ) -> Result<Contest> {
        let (printer, n) = (self.input.printer, self.input.issue);
        // The agents read the state the round builds on: the run's worktree.
        let site = CallSite {
            issue: n,
            round: at.round,
            phase: at.phase,
            workdir: wt.path.clone(),
            progress: self.input.progress.clone(),
        };
        let issue = self.input.tracker.issue(n).await?;
        super::site::phase(
            printer,
            &self.input.progress,
            &format!(
                "## Round {}/{} ({}) · Phase 1: Requirement Extraction",
                at.round,
                at.max_rounds,
                at.phase.as_str()
            ),
        );
        let snap = guard::watch(self.input.workspace, wt).await?;
        let mut extracted = extract(
            &issue,
            &bench.guidance,
            &self.input.agents.arbiter,
            &bench.prompts,
            &site,
        )
        .await?;
        if let Some(changes) =
            guard::changed(self.input.workspace, printer, wt, &snap, "The extract role").await?
        {
            extracted.requirements = Requirements::from_body(&issue.body);
            extracted.source = "checkboxes";
            extracted.warnings.push(format!(
                "the extract role's answer was discarded: it changed the repository ({changes})"
            ));
        }
        if let Some((usage, duration)) = extracted.spend {
            self.accounts
                .record("arbiter", Role::Extract, usage, duration);
        }
        for w in &extracted.warnings {
            printer.warn(w);
            self.report.warnings.push(w.clone());
        }
        let reqs = extracted.requirements;
        self.report.requirements = reqs.clone();
        self.report.extraction = extracted.source;
        let open: BTreeSet<String> = reqs.open().map(|r| r.id.clone()).collect();
        printer.status(&format!(
            "- {} checkbox(es), {} open; {} implicit requirement(s)",
            reqs.explicit_requirements.len(),
            open.len(),
            reqs.implicit_requirements.len()
        ));
        Ok(Contest {
            site,
            issue,
            reqs,
            open,
        })
    }

    /// Phase 2: every bot's proposal (a failed bot's same proposal refused in a replan),
    /// blinded, judged and ranked. `Err` is how the round ends when there is no winner.
    async fn select(
        &mut self,
        bench: &Bench,
        wt: &Worktree,
        contest: &Contest,
        round: u32,
    ) -> Result<Result<Selection, RoundEnd>> {
        let settings = self.input.settings;
        let printer = self.input.printer;
        super::site::phase(
            printer,
            &self.input.progress,
            "## Phase 2: Proposal Evaluation",
        );
        let standing = standings(&ledger_state(settings)?);
        let failure = self.state.failure.as_ref().map(|f| &f.context);
        let shared = Shared {
            settings,
            agents: &self.input.agents,
            prompts: &bench.prompts,
            guidance: &bench.guidance,
            printer,
            progress: &self.input.progress,
        };
        let workspace = self.input.workspace;
        let started = Instant::now();
        let snap = guard::watch(workspace, wt).await?;
        let (mut arrived, mut skipped) = gather(
            &shared,
            contest.ask(),
            &standing,
            failure,
            &mut self.accounts,
        )
        .await?;
        if let Some(changes) = guard::changed(workspace, printer, wt, &snap, "A bot").await? {
            // The bots that used a writing tool lose their proposal for the round.
            let (bad, good): (Vec<Arrived>, Vec<Arrived>) = arrived
                .into_iter()
                .partition(|a| guard::wrote(&a.tools_used));
            if bad.is_empty() {
                printer
                    .warn("no bot could be told to have made the change: every proposal is kept");
            }
            skipped.extend(bad.into_iter().map(|a| SkippedBot {
                reason: "changed the repository".into(),
                detail: format!("{changes} (with {})", a.tools_used.join(", ")),
                bot_id: a.bot_id,
            }));
            arrived = good;
        }
        self.timeline.since(format!("proposals r{round}"), started);
        let resubmitted = self.refuse_resubmission(&mut arrived);
        let proposers: Vec<String> = arrived.iter().map(|a| a.bot_id.clone()).collect();
        let started = Instant::now();
        let snap = guard::watch(workspace, wt).await?;
        let mut evaluated = evaluate(
            &shared,
            contest.ask(),
            arrived.clone(),
            skipped.clone(),
            None,
            None,
            &mut self.accounts,
        )
        .await?;
        if let Some(changes) = guard::changed(workspace, printer, wt, &snap, "A judge").await? {
            // Scored again in the same blind order, the judges' answers left out.
            let why =
                format!("the judge's answer was discarded: it changed the repository ({changes})");
            evaluated = evaluate(
                &shared,
                contest.ask(),
                arrived,
                skipped,
                Some(evaluated.report.seed),
                Some(&why),
                &mut self.accounts,
            )
            .await?;
        }
        self.timeline.since(format!("judging r{round}"), started);
        if let Some(why) = &evaluated.stopped {
            self.report.rounds.push(evaluated.report.clone());
            return Ok(Err(RoundEnd::CapReached(why.clone())));
        }
        let Some((winner, scored)) = evaluated.winner() else {
            let end = if evaluated.report.proposals.is_empty() {
                RoundEnd::NoProposal
            } else {
                RoundEnd::AllBelow {
                    threshold: tables().scoring.ranking.human_review_below,
                }
            };
            self.trouble.last_round = Some(evaluated.report.clone());
            self.report.rounds.push(evaluated.report);
            return Ok(Err(end));
        };
        let (winner, proposal_score) = (winner.clone(), scored.total_score);
        let budget = standing
            .get(&winner.bot_id)
            .map_or(1, |s| s.budget.max(1))
            .min(settings.config.max_attempts);
        Ok(Ok(Selection {
            evaluated,
            winner,
            proposal_score,
            budget,
            proposers,
            resubmitted,
        }))
    }

    /// In a replan the failed bot must bring a new proposal: the same one again is refused.
    /// Returns the bots refused.
    fn refuse_resubmission(&self, arrived: &mut Vec<Arrived>) -> Vec<String> {
        let (Phase::Replan, Some(failure)) = (self.state.phase, &self.state.failure) else {
            return Vec::new();
        };
        let failed_bot = &failure.context.failed_bot;
        let Some(pos) = arrived.iter().position(|a| &a.bot_id == failed_bot) else {
            return Vec::new();
        };
        let (same, similarity) = same_proposal(
            &failure.proposal,
            &arrived[pos].proposal,
            &tables().scoring.similarity,
        );
        if !same {
            return Vec::new();
        }
        // A rule of the market applied, not something that went wrong: a status line.
        self.input.printer.status(&format!(
            "- {failed_bot} resubmitted its failed proposal (similarity {similarity:.2}): refused"
        ));
        arrived.remove(pos);
        vec![failed_bot.clone()]
    }
}
