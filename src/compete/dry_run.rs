//! `ralph compete N --dry-run`: one read-only round — requirements, proposals, blinding,
//! judging, scoring, ranking — reported and written nowhere. No label changes, no events, no
//! branch, no cache file: the ledger is folded in memory for the bots' standings.

use super::agents::Agents;
use super::extract::{extract, Extracted};
use super::round::{evaluate, gather, read_ledger, standings, state_of, Ask, Shared};
use super::seats::{self, no_seat, run_seed, seat, SeatInput};
use super::site::{new_run_id, CallSite};
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::agent::{Phase, Role};
use crate::ledger::Loaded;
use crate::output::Printer;
use crate::run_report::{RunOutcome, RunReport};
use crate::settings::Settings;
use crate::spec::{read_guidance, Requirements};
use crate::tracker::Issue;
use anyhow::Result;
use chrono::Utc;

/// What a dry run needs.
pub struct DryRunInput<'a> {
    pub settings: &'a Settings,
    pub issue: Issue,
    pub agents: Agents,
    pub printer: &'a Printer,
    /// The live view of the running agents.
    pub progress: crate::progress::Progress,
    /// The blind-order seed, and the seats' (before `[marketplace] seed`); random when `None`.
    pub seed: Option<u64>,
}

/// Runs the dry run and returns its report.
pub async fn dry_run(input: DryRunInput<'_>) -> Result<RunReport> {
    let DryRunInput {
        settings,
        issue,
        agents,
        printer,
        progress,
        seed,
    } = input;
    let _heartbeat = progress.heartbeat();
    let prompts = Prompts::load(&settings.ralph_dir)?;
    let guidance = read_guidance(&settings.root);
    let site = CallSite {
        issue: issue.number,
        round: 1,
        phase: Phase::Initial,
        workdir: settings.root.clone(),
        progress: progress.clone(),
        variant: None,
    };
    let round = DryRound {
        shared: Shared {
            settings,
            agents: &agents,
            prompts: &prompts,
            guidance: &guidance,
            printer,
            progress: &progress,
        },
        issue: &issue,
        site: &site,
        seed,
    };
    round.run().await
}

/// What the dry run's phases share: the round's context, the issue, where the agents are
/// called from, and the blind-order seed.
struct DryRound<'a> {
    shared: Shared<'a>,
    issue: &'a Issue,
    site: &'a CallSite,
    seed: Option<u64>,
}

impl DryRound<'_> {
    /// Extracts the requirements, then has the bots propose and the judges score them,
    /// stopping early when a cap is reached or no bot can be seated.
    async fn run(&self) -> Result<RunReport> {
        let Shared {
            settings, printer, ..
        } = self.shared;
        let run_id = new_run_id(self.issue.number, Utc::now());
        let mut accounts = Accounts::default();
        let (extracted, warnings) = self.extract(&mut accounts).await?;
        let mut report = dry_report(self.issue, run_id, &extracted);
        // Read for the seats and the bots' standings, folded in memory: a dry run writes no cache.
        let ledger = read_ledger(settings)?;
        if let Some(cap) = accounts.cap_reached(&settings.config.limits) {
            return Ok(stop(report, accounts, warnings, cap.to_string(), printer));
        }
        let reqs = &extracted.requirements;
        if let Some(why) = self
            .propose(reqs, &ledger, &mut report, &mut accounts)
            .await?
        {
            return Ok(stop(report, accounts, warnings, why, printer));
        }
        super::site::phase(printer, self.shared.progress, "## Result: DRY RUN");
        printer.status("- Nothing was written: no labels, no events, no branch");
        report.accounts = accounts.rows();
        report.total = accounts.total();
        report.warnings = warnings;
        self.shared.progress.end_phase();
        Ok(report)
    }

    /// Phase 1: extracts the issue's requirements, records the arbiter's spend and says what
    /// was found; returns the extraction and the run's warnings so far.
    async fn extract(&self, accounts: &mut Accounts) -> Result<(Extracted, Vec<String>)> {
        let Shared {
            agents,
            prompts,
            guidance,
            printer,
            progress,
            ..
        } = self.shared;
        super::site::phase(printer, progress, "## Phase 1: Requirement Extraction");
        let extracted = extract(self.issue, guidance, &agents.arbiter, prompts, self.site).await?;
        if let Some((usage, duration)) = extracted.spend {
            accounts.record("arbiter", Role::Extract, usage, duration);
        }
        let warnings = announce(printer, &extracted);
        Ok((extracted, warnings))
    }

    /// Phase 2: seats the bots, gathers their proposals, blinds, judges and scores them, and
    /// adds the round to `report`; returns why the run stops, when it does.
    async fn propose(
        &self,
        reqs: &Requirements,
        ledger: &Loaded,
        report: &mut RunReport,
        accounts: &mut Accounts,
    ) -> Result<Option<String>> {
        let Shared {
            settings,
            agents,
            printer,
            progress,
            ..
        } = self.shared;
        let config = &settings.config;
        super::site::phase(printer, progress, "## Phase 2: Proposal Evaluation");
        if let Some(warning) = seats::unseen_cost(config, agents) {
            printer.warn(&warning);
        }
        let seating = seat(&SeatInput {
            config,
            agents,
            issue: self.issue,
            round: 1,
            seed: run_seed(self.seed, config),
            accounts,
            ledger,
        });
        if let Some(s) = &seating {
            seats::announce(printer, s);
            if s.seated().next().is_none() {
                return Ok(Some(no_seat(s)));
            }
        }
        let ask = Ask {
            issue: self.issue,
            reqs,
            site: self.site,
            seating: seating.as_ref(),
        };
        let standings = standings(&state_of(settings, ledger));
        let (arrived, skipped) = gather(&self.shared, ask, &standings, None, accounts).await?;
        let evaluated = evaluate(
            &self.shared,
            ask,
            arrived,
            skipped,
            self.seed,
            None,
            accounts,
        )
        .await?;
        report.rounds.push(evaluated.report);
        Ok(evaluated.stopped)
    }
}

/// Says what the extraction found (its warnings, the checkboxes open and their components,
/// the implicit requirements, a note when none is open) and returns the run's warnings so far.
fn announce(printer: &Printer, extracted: &Extracted) -> Vec<String> {
    for w in &extracted.warnings {
        printer.warn(w);
    }
    let mut warnings = extracted.warnings.clone();
    let reqs = &extracted.requirements;
    let open = reqs.open().count();
    let components: usize = reqs.open().map(|r| r.components.len()).sum();
    printer.status(&format!(
        "- {} checkbox(es), {open} open ({components} components), by {}",
        reqs.explicit_requirements.len(),
        extracted.source
    ));
    printer.status(&format!(
        "- {} implicit requirement(s)",
        reqs.implicit_requirements.len()
    ));
    if open == 0 {
        let note = "every checkbox is already checked: the bots are scored on the implicit requirements alone";
        printer.warn(note);
        warnings.push(note.into());
    }
    warnings
}

/// The dry run's report before the proposals: the issue, the run id, the requirements and
/// how they were extracted.
fn dry_report(issue: &Issue, run_id: String, extracted: &Extracted) -> RunReport {
    RunReport {
        issue: issue.number,
        title: issue.title.clone(),
        run_id,
        outcome: RunOutcome::DryRun,
        requirements: extracted.requirements.clone(),
        extraction: extracted.source,
        rounds: Vec::new(),
        events: Vec::new(),
        accounts: Vec::new(),
        total: Default::default(),
        stopped: None,
        branch: None,
        pr_url: None,
        escalation: None,
        warnings: Vec::new(),
        sandbox: crate::process::sandbox::current().map(|s| s.status().clone()),
        git_tampering: Vec::new(),
        network_refused: Vec::new(),
        phases: Vec::new(),
        critical_path: Vec::new(),
        check_time: Default::default(),
        wall_ms: 0,
    }
}

/// Ends the run early because a cap was reached, keeping what was done.
fn stop(
    mut report: RunReport,
    accounts: Accounts,
    warnings: Vec<String>,
    why: String,
    printer: &Printer,
) -> RunReport {
    printer.warn(&format!("stopping the run: {why}"));
    report.outcome = RunOutcome::Aborted;
    report.stopped = Some(why);
    report.accounts = accounts.rows();
    report.total = accounts.total();
    report.warnings = warnings;
    report
}
