//! `ralph compete N --dry-run`: one read-only round — requirements, proposals, blinding,
//! judging, scoring, ranking — reported and written nowhere. No label changes, no events, no
//! branch, no cache file: the ledger is folded in memory for the bots' standings.

use super::agents::Agents;
use super::extract::extract;
use super::judge::judge;
use super::propose::{proposals, ProposeRound, Standing};
use super::report::{JudgesReport, ProposalReport, RoundReport, RunOutcome, RunReport, SkippedBot};
use super::{new_run_id, random_seed, CallSite};
use crate::agent::accounts::Accounts;
use crate::agent::fanout::{BotOutcome, Progress};
use crate::agent::prompts::Prompts;
use crate::agent::{Phase, Role};
use crate::ledger::Ledger;
use crate::market::{
    blind_label, blind_order, rank, score_proposal, tables, Entry, Proposal, Targets,
};
use crate::output::Printer;
use crate::settings::Settings;
use crate::spec::read_guidance;
use crate::tracker::Issue;
use anyhow::{Context as _, Result};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// What a dry run needs.
pub struct DryRunInput<'a> {
    pub settings: &'a Settings,
    pub issue: Issue,
    pub agents: Agents,
    pub printer: &'a Printer,
    /// Show per-bot spinners (stderr is a terminal and not `-q`).
    pub spinners: bool,
    /// The blind-order seed; random when `None`.
    pub seed: Option<u64>,
}

/// A proposal that arrived, before blinding.
struct Arrived {
    bot_id: String,
    proposal: Proposal,
    submitted_at: DateTime<Utc>,
    repaired: bool,
    warnings: Vec<String>,
}

/// Runs the dry run and returns its report.
pub async fn dry_run(input: DryRunInput<'_>) -> Result<RunReport> {
    let DryRunInput {
        settings,
        issue,
        agents,
        printer,
        spinners,
        seed,
    } = input;
    let config = &settings.config;
    let prompts = Prompts::load(&settings.ralph_dir)?;
    let guidance = read_guidance(&settings.root);
    let site = CallSite {
        issue: issue.number,
        round: 1,
        phase: Phase::Initial,
        workdir: settings.root.clone(),
    };
    let run_id = new_run_id(issue.number, Utc::now());
    let mut accounts = Accounts::default();
    let mut warnings = Vec::new();
    let paint = printer.paint_err();

    printer.status(&paint.bold("## Phase 1: Requirement Extraction"));
    let extracted = extract(&issue, &guidance, &agents.arbiter, &prompts, &site).await?;
    if let Some((usage, duration)) = extracted.spend {
        accounts.record("arbiter", Role::Extract, usage, duration);
    }
    for w in &extracted.warnings {
        printer.warn(w);
    }
    warnings.extend(extracted.warnings.iter().cloned());
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

    let mut report = RunReport {
        issue: issue.number,
        title: issue.title.clone(),
        run_id,
        outcome: RunOutcome::DryRun,
        requirements: reqs.clone(),
        extraction: extracted.source,
        rounds: Vec::new(),
        events: Vec::new(),
        accounts: Vec::new(),
        total: Default::default(),
        stopped: None,
        warnings: Vec::new(),
    };

    // The bots' standing, folded in memory: a dry run writes no cache.
    let ledger = Ledger::new(&settings.ralph_dir);
    let loaded = ledger.store().load_all().with_context(|| {
        format!(
            "cannot read the event log in {}",
            ledger.store().dir().display()
        )
    })?;
    let state = Ledger::build_state(&config.fold_params(), &loaded);
    let standings: BTreeMap<String, Standing> = state
        .bots
        .iter()
        .map(|b| {
            (
                b.bot_id.clone(),
                Standing {
                    weight: b.weight,
                    efficiency: b.efficiency,
                    budget: b.budget,
                },
            )
        })
        .collect();

    if let Some(cap) = accounts.cap_reached(&config.limits) {
        return Ok(stop(report, accounts, warnings, cap.to_string(), printer));
    }

    printer.status(&paint.bold("## Phase 2: Proposal Evaluation"));
    let round = ProposeRound {
        issue: &issue,
        requirements: reqs,
        guidance: &guidance,
        standings: &standings,
        failure: None,
        site: &site,
        concurrency: config.marketplace.concurrency as usize,
    };
    let results = proposals(&agents.bots, &prompts, &round, &Progress::new(spinners)).await?;
    let mut arrived = Vec::new();
    let mut skipped = Vec::new();
    for r in results {
        match r.outcome {
            BotOutcome::Proposal {
                asked,
                submitted_at,
            } => {
                accounts.record(&r.bot_id, Role::Propose, asked.usage, asked.duration);
                arrived.push(Arrived {
                    bot_id: r.bot_id,
                    proposal: asked.answer,
                    submitted_at,
                    repaired: asked.repaired,
                    warnings: asked.warnings,
                });
            }
            BotOutcome::Skipped { reason, detail } => skipped.push(SkippedBot {
                bot_id: r.bot_id,
                reason: reason.to_owned(),
                detail,
            }),
        }
    }
    printer.status(&format!(
        "- Received {} proposal(s){}",
        arrived.len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(
                "; skipped: {}",
                skipped
                    .iter()
                    .map(|s| format!("{} ({})", s.bot_id, s.reason))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));

    // Blinding: a fresh order per round; the judge sees only the labels.
    let seed = seed.unwrap_or_else(random_seed);
    let order = blind_order(arrived.len(), seed);
    let mut slots: Vec<Option<Arrived>> = arrived.into_iter().map(Some).collect();
    let blinded: Vec<(String, Arrived)> = order
        .iter()
        .enumerate()
        .filter_map(|(i, &at)| slots[at].take().map(|a| (blind_label(i), a)))
        .collect();

    let mut stopped = None;
    let judged = if blinded.is_empty() {
        None
    } else if let Some(cap) = accounts.cap_reached(&config.limits) {
        stopped = Some(cap.to_string());
        None
    } else {
        let for_judge: Vec<(String, Proposal)> = blinded
            .iter()
            .map(|(id, a)| (id.clone(), a.proposal.clone()))
            .collect();
        let j = judge(&agents.judges, &prompts, &issue, reqs, &for_judge, &site).await?;
        for (name, usage, duration) in &j.spend {
            accounts.record(name, Role::Judge, *usage, *duration);
        }
        for f in &j.failures {
            printer.warn(&format!("judge {} failed: {}", f.judge, f.reason));
        }
        Some(j)
    };

    let params = &tables().scoring;
    let targets = Targets::from_requirements(reqs);
    let mut scored = Vec::new();
    for (id, a) in &blinded {
        let view = judged
            .as_ref()
            .and_then(|j| j.views.get(id).cloned())
            .unwrap_or_else(|| {
                crate::market::Subjective::unavailable(
                    params,
                    stopped.as_deref().unwrap_or("not asked"),
                )
            });
        let s = score_proposal(
            &a.proposal,
            &targets,
            &view,
            &config.scoring_weights,
            params,
            &tables().specialists,
        );
        scored.push(ProposalReport {
            proposal_id: id.clone(),
            bot_id: a.bot_id.clone(),
            total_score: s.total,
            scores: s.scores,
            reasons: s.details,
            submission_time: a.submitted_at,
            success_probability: a.proposal.success_probability,
            approach_summary: a.proposal.approach_summary.clone(),
            files_affected: a.proposal.paths().into_iter().map(String::from).collect(),
            repaired: a.repaired,
            warnings: a.warnings.clone(),
        });
    }
    let entries: Vec<Entry> = scored
        .iter()
        .map(|p| Entry {
            proposal_id: p.proposal_id.clone(),
            total: p.total_score,
            submitted_at: p.submission_time,
        })
        .collect();
    let ranking = rank(&entries, params.ranking.human_review_below);
    let winner = ranking.winner().map(String::from);
    let winner_bot = winner.as_ref().and_then(|w| {
        scored
            .iter()
            .find(|p| &p.proposal_id == w)
            .map(|p| p.bot_id.clone())
    });
    let listing: Vec<String> = ranking
        .order
        .iter()
        .filter_map(|id| scored.iter().find(|p| &p.proposal_id == id))
        .map(|p| format!("{}: {:.3}", p.proposal_id, p.total_score))
        .collect();
    printer.status(&format!("- Rankings: [{}]", listing.join(", ")));
    match (&winner, &winner_bot) {
        (Some(w), Some(bot)) => printer.status(&format!("- Selected: {w} ({bot})")),
        _ => printer.status(&format!(
            "- No winner: every proposal is below {}; a human must review",
            params.ranking.human_review_below
        )),
    }

    report.rounds.push(RoundReport {
        round: site.round,
        phase: site.phase,
        seed,
        proposals: scored,
        skipped,
        human_review: ranking.human_review,
        ranking: ranking.order,
        winner,
        winner_bot,
        judges: judged
            .map(|j| JudgesReport {
                answered: j.answered,
                failures: j.failures,
            })
            .unwrap_or_default(),
        checks: Vec::new(),
    });
    if let Some(why) = stopped {
        return Ok(stop(report, accounts, warnings, why, printer));
    }
    printer.status(&paint.bold("## Result: DRY RUN"));
    printer.status("- Nothing was written: no labels, no events, no branch");
    report.accounts = accounts.rows();
    report.total = accounts.total();
    report.warnings = warnings;
    Ok(report)
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
