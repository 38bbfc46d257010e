//! `ralph compete N`: the competition end to end (docs/specification.md §6), as a short loop over
//! [`decide`](super::decide). Admission (lock, refusals, the git preflight — nothing changed
//! when any refuses), the claim (labels, assignment), then rounds: requirements, budgets,
//! proposals, blinding, ranking (`select`), the implementation attempts and ralph's own
//! verification (`attempt`), the outcome with its events — until the decision is to complete
//! (push, pull request) or to stop (escalation, `finish`). The run state is saved after each
//! round so `--resume` continues without writing an event twice.

use super::admit::{admit, admit_agents, admit_checks, claim};
use super::crew::{Bench, Book, Contest, Crew, RunInput, Selection};
use super::decide::{decide, rounds_exhausted, Decision, Position, RoundEnd, Stop};
use super::extract::extract;
use super::guard;
use super::prepare::{discard, open, ready, Ground};
use super::site::{new_run_id, CallSite};
use super::state::{JudgedTrees, RunLock, RunState};
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::agent::Role;
use crate::checks::baseline::Baseline;
use crate::render::verification::render_terminal;
use crate::run_report::{RunOutcome, RunReport};
use crate::spec::{read_guidance, Requirements};
use crate::timeline::Timeline;
use crate::tracker::Issue;
use crate::workspace::{Preflight, PreflightOptions, Worktree};
use anyhow::Result;
use futures_util::FutureExt as _;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A competition in progress: who works on it and what it records.
pub(super) struct Run<'a> {
    pub crew: Crew<'a>,
    pub book: Book,
}

/// A round's first half: the requirements, and the winner or why there is none.
pub(super) struct Front {
    /// The run's spending before the round, to tell the round's own.
    before: Accounts,
    at: Position,
    outcome: Result<(Contest, Selection), RoundEnd>,
}

/// Runs the competition. On any error after the labels changed, the issue is escalated with
/// "the run stopped unexpectedly" and the run state is kept for `--resume`.
pub async fn compete(mut input: RunInput<'_>) -> Result<RunReport> {
    let _lock = RunLock::acquire(&input.settings.ralph_dir, input.issue)?;
    // Off a terminal, a line per running agent or check every heartbeat, until the run ends.
    let _heartbeat = input.progress.heartbeat();
    let progress = input.progress.clone();
    let (issue, prior) = admit(&input).await?;
    let pre = preflight(&input, &issue).await?;
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
        coverage_missing: None,
        native_unbuilt: None,
        setup_failed: None,
    };
    let mut run = Run::new(input, pre, &issue, prior, &bench, pending, timeline);
    run.announce(&bench);
    // Saved before any agent runs, so that an interrupted first round can be resumed.
    run.book.state.save(run.crew.input.settings)?;
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
                RunState::forget(ground.settings, run.crew.input.issue);
            }
            return Err(e);
        }
    };
    // From here on the issue is ours: every way out goes through the outcome or escalation.
    if let Err(e) = claim(&run.crew.input).await {
        discard(&ground, &bench.wt).await;
        return Err(e);
    }
    // A panic must not leave the issue `in-progress`: it is escalated like any other error.
    let result = std::panic::AssertUnwindSafe(run.rounds(&bench, Some(front)))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| Err(panicked(panic)));
    let finished = super::finish::finish(run.crew, run.book, result).await;
    progress.end_phase();
    finished
}

/// The git preflight of the issue's branch, from the base the options or the configuration
/// name, else from the tracker's default branch (for a repository whose remote HEAD is not
/// set).
async fn preflight(input: &RunInput<'_>, issue: &Issue) -> Result<Preflight> {
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
    Ok(input
        .workspace
        .preflight(&PreflightOptions {
            issue: input.issue,
            title: &issue.title,
            base: base.as_deref(),
            default_branch: default_branch.as_deref(),
            resume: input.options.resume,
        })
        .await?)
}

/// A panic in the rounds, as the error the run is escalated with.
fn panicked(panic: Box<dyn std::any::Any + Send>) -> anyhow::Error {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "an unknown panic".into());
    anyhow::anyhow!("ralph panicked: {what}")
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
        let book = Book::new(
            pre,
            state,
            issue,
            input.options.sandbox.clone(),
            bench.wt.clone(),
        );
        let trees = JudgedTrees::load(input.settings, input.issue, &book.state.run_id);
        Run {
            crew: Crew {
                input,
                accounts: Accounts::default(),
                timeline,
                baseline,
                last_failed: Vec::new(),
                trees,
            },
            book,
        }
    }

    /// The branch, the worktree and the checks, before the first round.
    fn announce(&self, bench: &Bench) {
        self.crew.input.printer.status(&format!(
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
        let workspace = self.crew.input.workspace;
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
        self.crew.timeline.record("baseline", started, done);
        self.crew.baseline = baseline;
        front
    }

    /// The rounds, until the decision is to complete or to stop; the first one's first half
    /// (`opening`) is done already.
    async fn rounds(&mut self, bench: &Bench, opening: Option<Front>) -> Result<()> {
        self.book.state.save(self.crew.input.settings)?;
        let max = self.crew.input.options.max_iterations;
        let mut opening = opening;
        while self.book.state.next_round <= max {
            let front = match opening.take() {
                Some(front) => front,
                None => self.front(bench, &bench.wt).await?,
            };
            match self.back(bench, front).await? {
                Decision::Continue | Decision::Replan => {}
                Decision::Complete => {
                    return super::finish::complete(&mut self.crew, &mut self.book, &bench.wt).await
                }
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
        self.book.report.outcome = stop.outcome;
        if stop.cap.is_some() {
            self.book.report.stopped = stop.cap;
        }
        self.book.trouble.reason = stop.reason;
    }

    /// A round's first half: the requirements, the proposals, the judging and the ranking.
    async fn front(&mut self, bench: &Bench, wt: &Worktree) -> Result<Front> {
        let before = self.crew.accounts.clone();
        let at = Position {
            phase: self.book.state.phase,
            round: self.book.state.next_round,
            max_rounds: self.crew.input.options.max_iterations,
        };
        let ended = |end| Front {
            before: before.clone(),
            at,
            outcome: Err(end),
        };
        let started = Instant::now();
        let contest = self.requirements(bench, wt, at).await?;
        self.crew
            .timeline
            .since(format!("extraction r{}", at.round), started);
        if contest.open.is_empty() {
            return Ok(ended(RoundEnd::NothingOpen));
        }
        if let Some(cap) = self
            .crew
            .accounts
            .cap_reached(&self.crew.input.settings.config.limits)
        {
            return Ok(ended(RoundEnd::CapReached(cap.to_string())));
        }
        let selected = super::select::select(
            &mut self.crew,
            &mut self.book,
            bench,
            wt,
            &contest,
            at.round,
        )
        .await?;
        Ok(match selected {
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
        let printer = self.crew.input.printer;
        super::site::phase(
            printer,
            &self.crew.input.progress,
            "## Phase 3: Implementation",
        );
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
        let start = self.crew.input.workspace.head(&bench.wt).await?;
        let mut attempts =
            super::attempt::implement(&mut self.crew, &mut self.book, bench, &contest, &selection)
                .await?;
        if let Some(v) = &attempts.verification {
            // The live view printed each check as it finished; with it off, list them here.
            let with_checks = self.crew.input.progress.mode() == crate::progress::Mode::Off;
            printer.status(render_terminal(v, printer.paint_err(), with_checks).trim_end());
        }
        let started = Instant::now();
        attempts.review = super::review::review_change(
            &mut self.crew,
            bench,
            &contest,
            &selection.winner,
            &attempts,
        )
        .await?;
        self.crew
            .timeline
            .since(format!("review r{}", at.round), started);
        // A round the environment or a cap stopped tells nothing an audit could compare.
        if attempts.environment.is_none() && attempts.cap.is_none() {
            let started = Instant::now();
            attempts.audit = super::audit::audit(
                &mut self.crew,
                &mut self.book,
                bench,
                &contest,
                &selection,
                &start,
            )
            .await?;
            if attempts.audit.is_some() {
                self.crew
                    .timeline
                    .since(format!("audit r{}", at.round), started);
            }
        }
        let spend = self.crew.accounts.since(&before);
        let end = super::settle::settle(
            &mut self.crew,
            &mut self.book,
            &contest,
            &selection,
            attempts,
            &spend,
        )
        .await?;
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
        let (printer, n) = (self.crew.input.printer, self.crew.input.issue);
        // The agents read the state the round builds on: the run's worktree.
        let site = CallSite {
            issue: n,
            round: at.round,
            phase: at.phase,
            workdir: wt.path.clone(),
            progress: self.crew.input.progress.clone(),
            variant: None,
        };
        let issue = self.crew.input.tracker.issue(n).await?;
        super::site::phase(
            printer,
            &self.crew.input.progress,
            &format!(
                "## Round {}/{} ({}) · Phase 1: Requirement Extraction",
                at.round,
                at.max_rounds,
                at.phase.as_str()
            ),
        );
        let snap = guard::watch(self.crew.input.workspace, wt).await?;
        let mut extracted = extract(
            &issue,
            &bench.guidance,
            &self.crew.input.agents.arbiter,
            &bench.prompts,
            &site,
        )
        .await?;
        if let Some(changes) = guard::changed(
            self.crew.input.workspace,
            printer,
            wt,
            &snap,
            "The extract role",
        )
        .await?
        {
            extracted.requirements = Requirements::from_body(&issue.body);
            extracted.source = "checkboxes";
            extracted.warnings.push(format!(
                "the extract role's answer was discarded: it changed the repository ({changes})"
            ));
        }
        if let Some((usage, duration)) = extracted.spend {
            self.crew
                .accounts
                .record("arbiter", Role::Extract, usage, duration);
        }
        for w in &extracted.warnings {
            printer.warn(w);
            self.book.report.warnings.push(w.clone());
        }
        let reqs = extracted.requirements;
        self.book.report.requirements = reqs.clone();
        self.book.report.extraction = extracted.source;
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
}
