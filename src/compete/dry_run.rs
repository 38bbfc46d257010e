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
use crate::output::Printer;
use crate::run_report::{RunOutcome, RunReport};
use crate::settings::Settings;
use crate::spec::read_guidance;
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
    let config = &settings.config;
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
    let run_id = new_run_id(issue.number, Utc::now());
    let mut accounts = Accounts::default();

    super::site::phase(printer, &progress, "## Phase 1: Requirement Extraction");
    let extracted = extract(&issue, &guidance, &agents.arbiter, &prompts, &site).await?;
    if let Some((usage, duration)) = extracted.spend {
        accounts.record("arbiter", Role::Extract, usage, duration);
    }
    let warnings = announce(printer, &extracted);
    let reqs = &extracted.requirements;
    let mut report = dry_report(&issue, run_id, &extracted);

    // The bots' standing, folded in memory: a dry run writes no cache.
    let ledger = read_ledger(settings)?;
    let standings = standings(&state_of(settings, &ledger));
    if let Some(cap) = accounts.cap_reached(&config.limits) {
        return Ok(stop(report, accounts, warnings, cap.to_string(), printer));
    }

    super::site::phase(printer, &progress, "## Phase 2: Proposal Evaluation");
    let shared = Shared {
        settings,
        agents: &agents,
        prompts: &prompts,
        guidance: &guidance,
        printer,
        progress: &progress,
    };
    if let Some(warning) = seats::unseen_cost(config, &agents) {
        printer.warn(&warning);
    }
    let seating = seat(&SeatInput {
        config,
        agents: &agents,
        issue: &issue,
        round: 1,
        seed: run_seed(seed, config),
        accounts: &accounts,
        ledger: &ledger,
    });
    if let Some(s) = &seating {
        seats::announce(printer, s);
        if s.seated().next().is_none() {
            return Ok(stop(report, accounts, warnings, no_seat(s), printer));
        }
    }
    let ask = Ask {
        issue: &issue,
        reqs,
        site: &site,
        seating: seating.as_ref(),
    };
    let (arrived, skipped) = gather(&shared, ask, &standings, None, &mut accounts).await?;
    let evaluated = evaluate(&shared, ask, arrived, skipped, seed, None, &mut accounts).await?;
    report.rounds.push(evaluated.report);
    if let Some(why) = evaluated.stopped {
        return Ok(stop(report, accounts, warnings, why, printer));
    }
    super::site::phase(printer, &progress, "## Result: DRY RUN");
    printer.status("- Nothing was written: no labels, no events, no branch");
    report.accounts = accounts.rows();
    report.total = accounts.total();
    report.warnings = warnings;
    progress.end_phase();
    Ok(report)
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
