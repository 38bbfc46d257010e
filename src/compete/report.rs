//! The run report (SPEC §2, `ralph compete --json`) and its terminal rendering: per round the
//! proposals with their six scores and total, the ranking, the winner, the skipped bots with
//! their reasons, and how each score was reached.

use crate::agent::accounts::{AccountRow, Spend};
use crate::agent::Phase;
use crate::market::{Dimension, Scores};
use crate::output::Paint;
use crate::report::{Align, Table};
use crate::spec::Requirements;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every checkbox is done.
    Complete,
    /// The rounds run succeeded; checkboxes remain.
    Success,
    /// Handed to a human (`attention-needed`).
    Escalated,
    /// Stopped before the end (a run cap, an interruption).
    Aborted,
    /// `--dry-run`: proposals, scores and ranking only.
    DryRun,
}

/// `ralph compete --json`.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub issue: u64,
    pub title: String,
    pub run_id: String,
    pub outcome: RunOutcome,
    /// The requirements of the last round, and how they were found (`extract` or `checkboxes`).
    pub requirements: Requirements,
    pub extraction: &'static str,
    pub rounds: Vec<RoundReport>,
    /// Event files written, by name.
    pub events: Vec<String>,
    /// Tokens, cost and time per agent and role, and in total.
    pub accounts: Vec<AccountRow>,
    pub total: Spend,
    /// Why the run stopped early, when it did (a `[limits]` cap).
    pub stopped: Option<String>,
    /// The branch of the run (none for a dry run).
    pub branch: Option<String>,
    /// The pull request opened when the issue was completed.
    pub pr_url: Option<String>,
    /// Why the run was escalated to a human.
    pub escalation: Option<String>,
    pub warnings: Vec<String>,
}

/// One round of the run.
#[derive(Debug, Clone, Serialize)]
pub struct RoundReport {
    pub round: u32,
    pub phase: Phase,
    /// The seed of the blind order (`proposal_1…K`), to reproduce it.
    pub seed: u64,
    /// In blind order.
    pub proposals: Vec<ProposalReport>,
    pub skipped: Vec<SkippedBot>,
    /// Proposal ids, best first.
    pub ranking: Vec<String>,
    /// The winning proposal id; `None` when the round went to human review.
    pub winner: Option<String>,
    pub winner_bot: Option<String>,
    /// Every proposal scored below the threshold (`scoring/proposal.toml`).
    pub human_review: bool,
    pub judges: JudgesReport,
    pub checks: Vec<CheckReport>,
}

/// A scored proposal.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalReport {
    pub proposal_id: String,
    pub bot_id: String,
    pub total_score: f64,
    pub scores: Scores,
    /// How each dimension's score was reached (formula or the judge's reasoning).
    pub reasons: BTreeMap<&'static str, String>,
    pub submission_time: DateTime<Utc>,
    pub success_probability: f64,
    pub approach_summary: String,
    pub files_affected: Vec<String>,
    /// The answer needed the repair retry.
    pub repaired: bool,
    pub warnings: Vec<String>,
}

/// A bot without a proposal this round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedBot {
    pub bot_id: String,
    /// `failed to start`, `timed out`, `failed`, `invalid answer`.
    pub reason: String,
    pub detail: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct JudgesReport {
    pub answered: Vec<String>,
    pub failures: Vec<crate::compete::judge::JudgeFailure>,
}

/// A check ralph ran on the implementation.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub name: String,
    pub passed: bool,
    pub duration_ms: u64,
}

fn short(d: Dimension) -> &'static str {
    match d {
        Dimension::SpecAlignment => "spec",
        Dimension::TechnicalQuality => "quality",
        Dimension::Innovation => "innov",
        Dimension::Risk => "risk",
        Dimension::Efficiency => "effic",
        Dimension::SpecialistValidation => "special",
    }
}

/// The round as text: ranking table, winner, skipped bots, then each proposal's reasons.
pub fn render_round(r: &RoundReport, weights: &Scores, paint: Paint) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint.bold(&format!(
            "Round {} ({}): {} proposal(s), {} bot(s) skipped",
            r.round,
            r.phase.as_str(),
            r.proposals.len(),
            r.skipped.len()
        ))
    );
    if !r.proposals.is_empty() {
        let mut headers = vec![
            ("#", Align::Right),
            ("proposal", Align::Left),
            ("bot", Align::Left),
            ("total", Align::Right),
        ];
        headers.extend(Dimension::ALL.iter().map(|d| (short(*d), Align::Right)));
        let mut table = Table::new(&headers);
        for (rank, id) in r.ranking.iter().enumerate() {
            let Some(p) = r.proposals.iter().find(|p| &p.proposal_id == id) else {
                continue;
            };
            let mut cells = vec![
                (rank + 1).to_string(),
                p.proposal_id.clone(),
                p.bot_id.clone(),
                format!("{:.3}", p.total_score),
            ];
            cells.extend(
                Dimension::ALL
                    .iter()
                    .map(|d| format!("{:.2}", p.scores.get(*d))),
            );
            table.row(cells);
        }
        let winner = r.winner.clone();
        out.push_str(&table.render("  ", paint, |row, col, cell| {
            if row == 0 && col == 1 && winner.is_some() {
                paint.good(cell)
            } else {
                cell.to_owned()
            }
        }));
        let w: Vec<String> = Dimension::ALL
            .iter()
            .map(|d| format!("{} {}", short(*d), weights.get(*d)))
            .collect();
        let _ = writeln!(
            out,
            "  {}",
            paint.dim(&format!("weights: {}", w.join(", ")))
        );
    }
    match (&r.winner, &r.winner_bot) {
        (Some(p), Some(bot)) => {
            let _ = writeln!(out, "  Winner: {p} ({bot})");
        }
        _ if r.human_review => {
            let _ = writeln!(
                out,
                "  {}",
                paint.bad(
                    "No winner: every proposal scored below the threshold; a human must review"
                )
            );
        }
        _ => {}
    }
    for s in &r.skipped {
        let _ = writeln!(
            out,
            "  {} {}: {} ({})",
            paint.warn("skipped"),
            s.bot_id,
            s.reason,
            s.detail
        );
    }
    for f in &r.judges.failures {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            paint.warn("judge failed"),
            f.judge,
            f.reason
        );
    }
    for id in &r.ranking {
        let Some(p) = r.proposals.iter().find(|p| &p.proposal_id == id) else {
            continue;
        };
        let _ = writeln!(
            out,
            "\n  {} — {} · success probability {:.2}{}",
            paint.bold(&p.proposal_id),
            p.bot_id,
            p.success_probability,
            if p.repaired {
                " · answered after a repair"
            } else {
                ""
            }
        );
        let _ = writeln!(out, "    {}", p.approach_summary.trim());
        let _ = writeln!(out, "    files: {}", p.files_affected.join(", "));
        for d in Dimension::ALL {
            let reason = p.reasons.get(d.key()).map(String::as_str).unwrap_or("");
            let _ = writeln!(
                out,
                "    {:<22} {:.3}  {}",
                d.key(),
                p.scores.get(d),
                paint.dim(reason.trim())
            );
        }
        for w in &p.warnings {
            let _ = writeln!(out, "    {} {w}", paint.warn("warning:"));
        }
    }
    out
}
