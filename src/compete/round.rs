//! The parts of a round that the dry run and the full competition share: the bots' standing,
//! gathering proposals, and evaluating them — blinding, judging, scoring, ranking — with the
//! phase output on stderr.

use super::agents::{Agent, Agents};
use super::judge::{judge, Judged};
use super::propose::{proposals, FailureContext, ProposeRound, Standing};
use super::site::{random_seed, CallSite};
use crate::agent::accounts::Accounts;
use crate::agent::fanout::BotOutcome;
use crate::agent::prompts::Prompts;
use crate::agent::Role;
use crate::ledger::{Ledger, LedgerState, Loaded};
use crate::market::order::OrderCheck;
use crate::market::seating::Seating;
use crate::market::{
    blind_label, blind_order, rank, score_proposal, tables, Entry, Proposal, ProposalScore,
    Subjective, Targets,
};
use crate::output::Printer;
use crate::progress::Progress;
use crate::replay::recording::{self, RecordedProposal, RecordedRound};
use crate::run_report::{JudgesReport, ProposalReport, RoundReport, SkippedBot};
use crate::settings::Settings;
use crate::spec::{Guidance, Requirements};
use crate::tracker::Issue;
use anyhow::Result;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

/// What every phase of a run needs.
pub struct Shared<'a> {
    pub settings: &'a Settings,
    pub agents: &'a Agents,
    pub prompts: &'a Prompts,
    pub guidance: &'a [Guidance],
    pub printer: &'a Printer,
    /// The live view of the running agents.
    pub progress: &'a Progress,
}

/// What the bots and the judges are asked about this round: the issue, its requirements,
/// where the calls happen, and — with `[marketplace] seats` — which bots are asked.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    pub issue: &'a Issue,
    pub reqs: &'a Requirements,
    pub site: &'a CallSite,
    /// The round's seats; `None`: every bot proposes.
    pub seating: Option<&'a Seating>,
}

/// A proposal that arrived, before blinding.
#[derive(Debug, Clone)]
pub struct Arrived {
    pub bot_id: String,
    pub proposal: Proposal,
    pub submitted_at: DateTime<Utc>,
    pub repaired: bool,
    pub warnings: Vec<String>,
    /// The tools the bot used while proposing.
    pub tools_used: Vec<String>,
    /// What the proposal cost, when its backend says.
    pub cost_usd: Option<f64>,
}

/// The ledger's events as they are now.
pub fn read_ledger(settings: &Settings) -> Result<Loaded> {
    Ledger::new(&settings.ralph_dir).load()
}

/// The ledger folded in memory (no cache is written).
pub fn ledger_state(settings: &Settings) -> Result<LedgerState> {
    Ok(state_of(settings, &read_ledger(settings)?))
}

/// `loaded` folded in memory.
pub fn state_of(settings: &Settings, loaded: &Loaded) -> LedgerState {
    Ledger::build_state(&settings.config.fold_params(), loaded)
}

/// Every bot's weight, efficiency and budget.
pub fn standings(state: &LedgerState) -> BTreeMap<String, Standing> {
    state
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
        .collect()
}

/// Asks every bot for a proposal — every seated bot, with seats; returns the proposals in bot
/// order and the skipped bots.
pub async fn gather(
    shared: &Shared<'_>,
    ask: Ask<'_>,
    standings: &BTreeMap<String, Standing>,
    failure: Option<&FailureContext>,
    accounts: &mut Accounts,
) -> Result<(Vec<Arrived>, Vec<SkippedBot>)> {
    let round = ProposeRound {
        issue: ask.issue,
        requirements: ask.reqs,
        guidance: shared.guidance,
        standings,
        failure,
        site: ask.site,
        concurrency: shared.settings.config.marketplace.concurrency as usize,
    };
    let asked: Vec<&Agent> = shared
        .agents
        .bots
        .iter()
        .filter(|b| ask.seating.is_none_or(|s| s.is_seated(&b.name)))
        .collect();
    let results = proposals(&asked, shared.prompts, &round, shared.progress).await?;
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
                    tools_used: asked.tools_used,
                    cost_usd: asked.usage.cost_usd,
                });
            }
            BotOutcome::Skipped { reason, detail } => skipped.push(SkippedBot {
                bot_id: r.bot_id,
                reason: reason.to_owned(),
                detail,
            }),
        }
    }
    Ok((arrived, skipped))
}

/// A round after evaluation: its report, and each blinded proposal with what the bot sent.
pub struct Evaluated {
    pub report: RoundReport,
    /// By proposal id.
    pub proposals: BTreeMap<String, Arrived>,
    /// A run cap was reached before judging: the judge was not asked.
    pub stopped: Option<String>,
}

impl Evaluated {
    /// The winning proposal, its bot and its report entry.
    pub fn winner(&self) -> Option<(&Arrived, &ProposalReport)> {
        let id = self.report.winner.as_ref()?;
        let arrived = self.proposals.get(id)?;
        let scored = self
            .report
            .proposals
            .iter()
            .find(|p| &p.proposal_id == id)?;
        Some((arrived, scored))
    }
}

/// Blinds, judges, scores and ranks the arrived proposals, printing the phase. With
/// `no_judge` the judges are not asked: the subjective scores are neutral with that reason.
pub async fn evaluate(
    shared: &Shared<'_>,
    ask: Ask<'_>,
    arrived: Vec<Arrived>,
    skipped: Vec<SkippedBot>,
    seed: Option<u64>,
    no_judge: Option<&str>,
    accounts: &mut Accounts,
) -> Result<Evaluated> {
    let (site, reqs) = (ask.site, ask.reqs);
    let config = &shared.settings.config;
    let printer = shared.printer;
    printer.status(&received_line(arrived.len(), &skipped));

    // Blinding: a fresh order per round; the judge sees only the labels.
    let seed = seed.unwrap_or_else(random_seed);
    let blinded = blind(arrived, seed);

    let mut stopped = None;
    let judged = if blinded.is_empty() || no_judge.is_some() {
        None
    } else if let Some(cap) = accounts.cap_reached(&config.limits) {
        stopped = Some(cap.to_string());
        None
    } else {
        Some(judge_round(shared, ask, &blinded, accounts).await?)
    };

    let params = &tables().scoring;
    let targets = Targets::from_requirements(reqs);
    let unavailable = stopped.as_deref().or(no_judge).unwrap_or("not asked");
    let order = judged
        .as_ref()
        .map(|j| order_check(j, &blinded, &targets, config, unavailable));
    let scored = proposal_reports(&blinded, judged.as_ref(), &targets, config, unavailable);
    let ranked = ranked(&scored, params.ranking.human_review_below);
    printer.status(&ranked.line);
    if let Some(line) = order.as_ref().and_then(flip_line) {
        printer.status(&line);
    }
    printer.status(&selected_line(&ranked, params.ranking.human_review_below));
    let report = RoundReport {
        judges: judged
            .as_ref()
            .map(|j| JudgesReport {
                answered: j.answered.clone(),
                failures: j.failures.clone(),
            })
            .unwrap_or_default(),
        seating: ask.seating.map(|s| with_spend(s, &blinded)),
        ..RoundReport::judged(
            site.round,
            site.phase,
            seed,
            scored,
            skipped,
            ranked.ranking,
            order,
        )
    };
    if let Some(dir) = &shared.agents.record {
        let judging = Judging {
            seed,
            blinded: &blinded,
            judged: judged.as_ref(),
            unavailable,
        };
        let round = recorded_round(ask, &judging, config.scoring_weights, &report);
        recording::write(dir, &round);
    }
    Ok(Evaluated {
        report,
        proposals: blinded.into_iter().collect(),
        stopped,
    })
}

/// How a round's proposals were judged: the blinding seed, the blinded proposals, the judges'
/// answers (none when they were not asked) and why they were not.
struct Judging<'a> {
    seed: u64,
    blinded: &'a [(String, Arrived)],
    judged: Option<&'a Judged>,
    unavailable: &'a str,
}

/// What `--record` keeps of a judged round (`report`), for the replay backend.
fn recorded_round(
    ask: Ask<'_>,
    judging: &Judging<'_>,
    weights: crate::market::Scores,
    report: &RoundReport,
) -> RecordedRound {
    let Ask {
        issue, reqs, site, ..
    } = ask;
    let judged = judging.judged;
    RecordedRound {
        version: recording::RECORDING_VERSION,
        issue: issue.number,
        round: site.round,
        phase: site.phase,
        seed: judging.seed,
        requirements: reqs.clone(),
        proposals: recorded_proposals(judging.blinded),
        readings: judged.map(|j| j.readings.clone()).unwrap_or_default(),
        judge_unavailable: judge_unavailable(judged, judging.unavailable),
        weights,
        ranking: report.ranking.clone(),
        winner: report.winner.clone(),
        seating: report.seating.clone(),
    }
}

/// The round's seating with what each seated bot's proposal cost, where its backend said.
fn with_spend(seating: &Seating, blinded: &[(String, Arrived)]) -> Seating {
    let mut s = seating.clone();
    for b in s.bots.iter_mut().filter(|b| b.seated) {
        b.spent_usd = blinded
            .iter()
            .find(|(_, a)| a.bot_id == b.bot_id)
            .and_then(|(_, a)| a.cost_usd);
    }
    s
}

/// The console's line on the round's winner, or that none reached `threshold`.
fn selected_line(ranked: &Ranked, threshold: f64) -> String {
    match (&ranked.winner, &ranked.winner_bot) {
        (Some(w), Some(bot)) => format!("- Selected: {w} ({bot})"),
        _ => format!("- No winner: every proposal is below {threshold}; a human must review"),
    }
}

/// The round's ranking of its scored proposals, the winner and its bot, and the line that
/// lists them best first.
struct Ranked {
    ranking: crate::market::Ranking,
    winner: Option<String>,
    winner_bot: Option<String>,
    line: String,
}

/// Ranks the scored proposals (ties to the earlier submission; none wins below `threshold`).
fn ranked(scored: &[ProposalReport], threshold: f64) -> Ranked {
    let entries: Vec<Entry> = scored
        .iter()
        .map(|p| Entry {
            proposal_id: p.proposal_id.clone(),
            total: p.total_score,
            submitted_at: p.submission_time,
        })
        .collect();
    let ranking = rank(&entries, threshold);
    let by_id = |id: &str| scored.iter().find(|p| p.proposal_id == id);
    let winner = ranking.winner().map(String::from);
    let winner_bot = winner.as_deref().and_then(by_id).map(|p| p.bot_id.clone());
    let listing: Vec<String> = ranking
        .order
        .iter()
        .filter_map(|id| by_id(id))
        .map(|p| format!("{}: {:.3}", p.proposal_id, p.total_score))
        .collect();
    Ranked {
        line: format!("- Rankings: [{}]", listing.join(", ")),
        ranking,
        winner,
        winner_bot,
    }
}

/// The line that says how many proposals arrived and which bots were skipped, and why.
fn received_line(arrived: usize, skipped: &[SkippedBot]) -> String {
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        let each: Vec<String> = skipped
            .iter()
            .map(|s| format!("{} ({})", s.bot_id, s.reason))
            .collect();
        format!("; skipped: {}", each.join(", "))
    };
    format!("- Received {arrived} proposal(s){skipped}")
}

/// Asks the judges about the blinded proposals; their spend is recorded, their failures said.
async fn judge_round(
    shared: &Shared<'_>,
    ask: Ask<'_>,
    blinded: &[(String, Arrived)],
    accounts: &mut Accounts,
) -> Result<Judged> {
    let for_judge: Vec<(String, Proposal)> = blinded
        .iter()
        .map(|(id, a)| (id.clone(), a.proposal.clone()))
        .collect();
    let j = judge(
        &shared.agents.judges,
        shared.prompts,
        ask.issue,
        ask.reqs,
        &for_judge,
        shared.settings.config.order_swaps,
        ask.site,
    )
    .await?;
    for (name, usage, duration) in &j.spend {
        accounts.record(name, Role::Judge, *usage, *duration);
    }
    for f in &j.failures {
        shared
            .printer
            .warn(&format!("judge {} failed: {}", f.judge, f.reason));
    }
    Ok(j)
}

/// The round's proposals in a blind order drawn from `seed`, labelled `proposal_1…K`.
fn blind(arrived: Vec<Arrived>, seed: u64) -> Vec<(String, Arrived)> {
    let order = blind_order(arrived.len(), seed);
    let mut slots: Vec<Option<Arrived>> = arrived.into_iter().map(Some).collect();
    order
        .iter()
        .enumerate()
        .filter_map(|(i, &at)| slots[at].take().map(|a| (blind_label(i), a)))
        .collect()
}

/// Each blinded proposal's report: its scores under the judges' view (neutral, with
/// `unavailable` as the reason, where no judge answered).
fn proposal_reports(
    blinded: &[(String, Arrived)],
    judged: Option<&Judged>,
    targets: &Targets,
    config: &crate::config::Config,
    unavailable: &str,
) -> Vec<ProposalReport> {
    let params = &tables().scoring;
    blinded
        .iter()
        .map(|(id, a)| {
            let view = judged
                .and_then(|j| j.views.get(id).cloned())
                .unwrap_or_else(|| Subjective::unavailable(params, unavailable));
            let s = score(a, targets, &view, config);
            ProposalReport {
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
                order_disagreement: judged.and_then(|j| j.combined.disagreement.get(id).copied()),
            }
        })
        .collect()
}

/// The blinded proposals as `--record` keeps them.
fn recorded_proposals(blinded: &[(String, Arrived)]) -> Vec<RecordedProposal> {
    blinded
        .iter()
        .map(|(id, a)| RecordedProposal {
            proposal_id: id.clone(),
            bot_id: a.bot_id.clone(),
            submitted_at: a.submitted_at,
            proposal: a.proposal.clone(),
        })
        .collect()
}

/// Why the recorded round has no judge reading, if it has none.
fn judge_unavailable(judged: Option<&Judged>, unavailable: &str) -> Option<String> {
    match judged {
        None => Some(unavailable.to_owned()),
        Some(j) if j.readings.is_empty() => Some(
            j.failures
                .iter()
                .map(|f| format!("{}: {}", f.judge, f.reason))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Some(_) => None,
    }
}

/// A proposal's six scores under the configuration's weights and the built-in tables.
fn score(
    a: &Arrived,
    targets: &Targets,
    view: &Subjective,
    config: &crate::config::Config,
) -> ProposalScore {
    let t = tables();
    score_proposal(
        &a.proposal,
        targets,
        view,
        &config.scoring_weights,
        &t.scoring,
        &t.specialists,
    )
}

/// Which proposal would have won had the judges read only the round's order, and only the
/// reverse order: the round's order check.
fn order_check(
    judged: &Judged,
    blinded: &[(String, Arrived)],
    targets: &Targets,
    config: &crate::config::Config,
    unavailable: &str,
) -> OrderCheck {
    let params = &tables().scoring;
    let top = |views: &BTreeMap<String, Subjective>| -> Option<String> {
        if views.is_empty() {
            return None;
        }
        let entries: Vec<Entry> = blinded
            .iter()
            .map(|(id, a)| {
                let view = views
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| Subjective::unavailable(params, unavailable));
                let s = score(a, targets, &view, config);
                Entry {
                    proposal_id: id.clone(),
                    total: s.total,
                    submitted_at: a.submitted_at,
                }
            })
            .collect();
        rank(&entries, params.ranking.human_review_below)
            .winner()
            .map(String::from)
    };
    OrderCheck::new(
        config.order_swaps,
        top(&judged.combined.forward),
        top(&judged.combined.reversed),
    )
}

/// The console line of a round judged in both orders.
fn flip_line(check: &OrderCheck) -> Option<String> {
    match (check.top_flipped?, &check.forward_top, &check.reversed_top) {
        (true, Some(f), Some(r)) => Some(format!(
            "- Order check: the top proposal flipped with the order ({f} read forward, {r} reversed); the two readings are averaged"
        )),
        _ => Some("- Order check: the same top proposal in both orders".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranking_names_the_winner_and_lists_best_first() {
        let mut late = crate::fixtures::proposal("proposal_2", "b", 0.7);
        late.submission_time += chrono::Duration::seconds(5);
        let scored = vec![
            crate::fixtures::proposal("proposal_1", "a", 0.6),
            late,
            crate::fixtures::proposal("proposal_3", "c", 0.7),
        ];
        let r = ranked(&scored, 0.5);
        assert_eq!(
            r.winner.as_deref(),
            Some("proposal_3"),
            "a tie goes to the earlier submission"
        );
        assert_eq!(r.winner_bot.as_deref(), Some("c"));
        assert_eq!(
            r.line,
            "- Rankings: [proposal_3: 0.700, proposal_2: 0.700, proposal_1: 0.600]"
        );
        let none = ranked(&scored, 0.9);
        assert_eq!((none.winner, none.winner_bot), (None, None));
        assert!(none.ranking.human_review);
    }

    #[test]
    fn the_received_line_names_the_skipped_bots_and_why() {
        assert_eq!(received_line(2, &[]), "- Received 2 proposal(s)");
        let skipped = [SkippedBot {
            bot_id: "c".into(),
            reason: "timed out".into(),
            detail: String::new(),
        }];
        assert_eq!(
            received_line(1, &skipped),
            "- Received 1 proposal(s); skipped: c (timed out)"
        );
    }
}
