//! `ralph replay`: past rounds re-scored and re-ranked under another configuration, so a
//! scoring change can be tried on past competitions before it goes live. Pure: the rounds
//! come in already read ([`load`] finds and parses the files), the configuration's weights,
//! `order_swaps` and the scoring tables come in as [`Options`], and what comes out is, per
//! round, the recorded ranking and winner beside the new ones, and a [`Summary`].
//!
//! Two kinds of round, two depths of replay:
//! - a **recording** (`scoring.r<N>.json` of `ralph compete N --record DIR`) keeps the round's
//!   scoring inputs, so everything is recomputed the way the round itself computed it: the four
//!   objective dimensions from each proposal and the requirements (with the scoring tables of
//!   this build of ralph), the judges' two dimensions from the recorded readings combined
//!   (`market::order::combine`), the weighted total, the ranking. With `order_swaps = 0` only
//!   the forward readings (`reversed == false`) are used — what the judges would have said had
//!   they read the proposals once; with `order_swaps ≥ 1` every reading is used, and a round
//!   recorded with one reading per judge cannot show the effect of a second (a note says so).
//!   A recording keeps no totals: its "old" totals are recomputed under the weights it records,
//!   with every reading it records; its old ranking and winner are the recorded ones.
//! - a **run report** round (`.ralph/runs/<issue>/report.json`) keeps only each proposal's six
//!   scores: those are re-weighted and re-ranked; the objective dimensions, the scoring tables
//!   and `order_swaps` cannot be applied without the proposals and the readings.
//!
//! A round recorded with seats (`[marketplace] seats`) is replayed with the same seats: the
//! seated bots' proposals are the ones ranked, and the seating comes out with the round, so
//! the replay shows who was seated and why; no seat is drawn again.

pub mod load;
pub mod recording;

use crate::config::Config;
use crate::market::order::combine;
use crate::market::seating::Seating;
use crate::market::{
    rank, score_proposal, tables, Entry, Phase, Scores, ScoringParams, Specialist, Subjective,
    Targets,
};
use chrono::{DateTime, Utc};
use recording::RecordedRound;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A past round and the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    pub file: PathBuf,
    pub input: Input,
}

/// What is known of a past round.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The round's scoring inputs (`--record`): everything is recomputed.
    Recorded(Box<RecordedRound>),
    /// A round of a kept run report: its six scores per proposal are re-weighted.
    Report(Box<ReportRound>),
}

impl Input {
    pub fn issue(&self) -> u64 {
        match self {
            Input::Recorded(r) => r.issue,
            Input::Report(r) => r.issue,
        }
    }

    pub fn round(&self) -> u32 {
        match self {
            Input::Recorded(r) => r.round,
            Input::Report(r) => r.round,
        }
    }

    /// The recorded ranking, best first.
    pub fn ranking(&self) -> &[String] {
        match self {
            Input::Recorded(r) => &r.ranking,
            Input::Report(r) => &r.ranking,
        }
    }

    /// The seats the round was recorded with, if it had seats.
    pub fn seating(&self) -> Option<&Seating> {
        match self {
            Input::Recorded(r) => r.seating.as_ref(),
            Input::Report(r) => r.seating.as_ref(),
        }
    }

    /// Each proposal id with its bot, in blind order.
    fn bots(&self) -> Vec<(&str, &str)> {
        match self {
            Input::Recorded(r) => r
                .proposals
                .iter()
                .map(|p| (p.proposal_id.as_str(), p.bot_id.as_str()))
                .collect(),
            Input::Report(r) => r
                .proposals
                .iter()
                .map(|p| (p.proposal_id.as_str(), p.bot_id.as_str()))
                .collect(),
        }
    }
}

/// A round as a run report keeps it (`rounds[]` of `report.json`; the fields replay needs).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportRound {
    /// The report's issue (set by the reader: it is not a field of the round).
    #[serde(default)]
    pub issue: u64,
    pub round: u32,
    pub phase: Phase,
    pub proposals: Vec<ReportProposal>,
    pub ranking: Vec<String>,
    pub winner: Option<String>,
    /// The round's seats, with `[marketplace] seats`.
    #[serde(default)]
    pub seating: Option<Seating>,
}

/// A scored proposal of a run report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReportProposal {
    pub proposal_id: String,
    pub bot_id: String,
    pub total_score: f64,
    pub scores: Scores,
    pub submission_time: DateTime<Utc>,
}

/// The configuration a round is replayed under.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    pub weights: Scores,
    /// 0: only the forward readings; 1 or more: every reading.
    pub order_swaps: u32,
    pub params: &'a ScoringParams,
    pub specialists: &'a [Specialist],
}

impl Options<'static> {
    /// The configuration's weights and `order_swaps`, with this build's scoring tables.
    pub fn from_config(config: &Config) -> Options<'static> {
        Options {
            weights: config.scoring_weights,
            order_swaps: config.order_swaps,
            params: &tables().scoring,
            specialists: &tables().specialists,
        }
    }
}

/// How a round was replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// From a recording: every score recomputed.
    Recomputed,
    /// From a run report: the reported scores re-weighted.
    Reweighted,
}

/// One proposal of a replayed round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedProposal {
    pub proposal_id: String,
    pub bot_id: String,
    /// The total the round ranked it by (a report's `total_score`; for a recording,
    /// recomputed under the recorded weights).
    pub old_total: f64,
    pub new_total: f64,
    /// 1-based; `None` when the recorded ranking does not name it.
    pub old_rank: Option<usize>,
    pub new_rank: usize,
    /// The six scores the new total weighs.
    pub scores: Scores,
}

/// A round replayed: the recorded decision beside the new one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replayed {
    pub file: PathBuf,
    pub issue: u64,
    pub round: u32,
    pub phase: Phase,
    pub method: Method,
    /// Best first under the new configuration.
    pub proposals: Vec<ReplayedProposal>,
    pub old_ranking: Vec<String>,
    pub new_ranking: Vec<String>,
    pub old_winner: Option<String>,
    pub new_winner: Option<String>,
    /// Under the new configuration every proposal is below the human-review threshold.
    pub human_review: bool,
    pub ranking_changed: bool,
    pub winner_changed: bool,
    /// What the replay could not do, or did differently, for this round.
    pub notes: Vec<String>,
    /// The seats the round was recorded with (`[marketplace] seats`): the replay ranks the
    /// proposals of the same seated bots, and draws none again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<Seating>,
}

/// A proposal picked as a round's winner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pick {
    pub proposal_id: String,
    pub bot_id: String,
    /// The old total for the old winner, the new total for the new one.
    pub total: f64,
}

/// A round whose winner would change; `None` is "no winner: human review".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WinnerChange {
    pub issue: u64,
    pub round: u32,
    pub from: Option<Pick>,
    pub to: Option<Pick>,
}

/// What changed over all the rounds replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub rounds: usize,
    pub rankings_changed: usize,
    pub winners_changed: usize,
    pub winner_changes: Vec<WinnerChange>,
}

/// The note of every round replayed from a run report.
pub const REWEIGHTED_NOTE: &str = "re-weighted from the report's scores: the six scores are as reported (the objective dimensions, the scoring tables and order_swaps need a recording, `ralph compete N --record DIR`)";

/// Replays every round, in the order given.
pub fn replay(rounds: &[Round], options: &Options<'_>) -> Vec<Replayed> {
    rounds.iter().map(|r| replay_round(r, options)).collect()
}

/// Replays one round.
pub fn replay_round(round: &Round, options: &Options<'_>) -> Replayed {
    let (method, phase, rows, notes, old_ranking, old_winner) = match &round.input {
        Input::Recorded(r) => {
            let (rows, notes) = recompute(r, options);
            let (ranking, winner) = (r.ranking.clone(), r.winner.clone());
            (Method::Recomputed, r.phase, rows, notes, ranking, winner)
        }
        Input::Report(r) => (
            Method::Reweighted,
            r.phase,
            reweight(r, &options.weights),
            vec![REWEIGHTED_NOTE.to_owned()],
            r.ranking.clone(),
            r.winner.clone(),
        ),
    };
    let entries: Vec<Entry> = rows
        .iter()
        .map(|row| Entry {
            proposal_id: row.proposal_id.clone(),
            total: row.new_total,
            submitted_at: row.submitted_at,
        })
        .collect();
    let ranking = rank(&entries, options.params.ranking.human_review_below);
    let new_winner = ranking.winner().map(String::from);
    let mut notes = notes;
    // The top two level: the earlier submission wins, not the weights.
    let mut totals: Vec<f64> = entries.iter().map(|e| e.total).collect();
    totals.sort_by(|a, b| b.total_cmp(a));
    if totals.len() > 1 && (totals[0] - totals[1]).abs() < 1e-9 {
        notes.push(format!(
            "the top two tie at {:.3}: the earlier submission wins the tie",
            totals[0]
        ));
    }
    let proposals = ranking
        .order
        .iter()
        .filter_map(|id| rows.iter().find(|row| &row.proposal_id == id))
        .enumerate()
        .map(|(i, row)| ReplayedProposal {
            proposal_id: row.proposal_id.clone(),
            bot_id: row.bot_id.clone(),
            old_total: row.old_total,
            new_total: row.new_total,
            old_rank: old_ranking
                .iter()
                .position(|p| p == &row.proposal_id)
                .map(|at| at + 1),
            new_rank: i + 1,
            scores: row.scores,
        })
        .collect();
    Replayed {
        file: round.file.clone(),
        issue: round.input.issue(),
        round: round.input.round(),
        phase,
        method,
        proposals,
        ranking_changed: old_ranking != ranking.order,
        winner_changed: old_winner != new_winner,
        human_review: ranking.human_review,
        new_ranking: ranking.order,
        old_ranking,
        old_winner,
        new_winner,
        notes,
        seating: round.input.seating().cloned(),
    }
}

/// A proposal's figures before ranking.
struct Row {
    proposal_id: String,
    bot_id: String,
    submitted_at: DateTime<Utc>,
    old_total: f64,
    new_total: f64,
    scores: Scores,
}

/// A recorded round scored the way `compete::round::evaluate` scores it, twice: under the
/// recorded weights with every reading (the old totals), and under `options` (the new ones).
fn recompute(r: &RecordedRound, options: &Options<'_>) -> (Vec<Row>, Vec<String>) {
    let mut notes = Vec::new();
    let targets = Targets::from_requirements(&r.requirements);
    let reversed = r.readings.iter().filter(|x| x.reversed).count();
    let forward = r.readings.len() - reversed;
    let new_readings: Vec<_> = if options.order_swaps == 0 {
        if reversed > 0 {
            notes.push(format!(
                "order_swaps = 0: only the {forward} forward reading(s) are used, the {reversed} reversed one(s) are left out"
            ));
        }
        r.readings.iter().filter(|x| !x.reversed).cloned().collect()
    } else {
        // A round of one proposal has nothing to reverse.
        if reversed == 0 && forward > 0 && r.proposals.len() > 1 {
            notes.push(format!(
                "recorded with one reading per judge: order_swaps = {} cannot be tried on it, its forward reading(s) are used",
                options.order_swaps
            ));
        }
        r.readings.clone()
    };
    let old_views = combine(&r.readings).views;
    let new_views = combine(&new_readings).views;
    let why = r.judge_unavailable.as_deref().unwrap_or("no reading");
    let score = |p: &crate::market::Proposal, view: Option<&Subjective>, weights: &Scores| {
        let view = view
            .cloned()
            .unwrap_or_else(|| Subjective::unavailable(options.params, why));
        score_proposal(
            p,
            &targets,
            &view,
            weights,
            options.params,
            options.specialists,
        )
    };
    let rows: Vec<Row> = r
        .proposals
        .iter()
        .map(|p| {
            let old = score(&p.proposal, old_views.get(&p.proposal_id), &r.weights);
            let new = score(&p.proposal, new_views.get(&p.proposal_id), &options.weights);
            Row {
                proposal_id: p.proposal_id.clone(),
                bot_id: p.bot_id.clone(),
                submitted_at: p.submitted_at,
                old_total: old.total,
                new_total: new.total,
                scores: new.scores,
            }
        })
        .collect();
    // The recording recomputed as it was ranked: a different order means this ralph scores
    // the same inputs differently (its scoring tables changed since).
    let entries: Vec<Entry> = rows
        .iter()
        .map(|row| Entry {
            proposal_id: row.proposal_id.clone(),
            total: row.old_total,
            submitted_at: row.submitted_at,
        })
        .collect();
    let again = rank(&entries, options.params.ranking.human_review_below);
    if again.order != r.ranking {
        notes.push(format!(
            "recomputed under its own weights the round ranks [{}], not as recorded [{}]: this ralph's scoring tables (scoring/) differ from the ones it was recorded with",
            again.order.join(", "),
            r.ranking.join(", ")
        ));
    }
    (rows, notes)
}

/// A report round's six scores re-weighted.
fn reweight(r: &ReportRound, weights: &Scores) -> Vec<Row> {
    r.proposals
        .iter()
        .map(|p| Row {
            proposal_id: p.proposal_id.clone(),
            bot_id: p.bot_id.clone(),
            submitted_at: p.submission_time,
            old_total: p.total_score,
            new_total: p.scores.weighted_total(weights),
            scores: p.scores,
        })
        .collect()
}

/// Counts the changes; each changed winner with its bot and total.
pub fn summarize(replayed: &[Replayed]) -> Summary {
    let pick = |r: &Replayed, id: &Option<String>, old: bool| -> Option<Pick> {
        let id = id.as_ref()?;
        let p = r.proposals.iter().find(|p| &p.proposal_id == id);
        Some(Pick {
            proposal_id: id.clone(),
            bot_id: p.map(|p| p.bot_id.clone()).unwrap_or_default(),
            total: p.map_or(0.0, |p| if old { p.old_total } else { p.new_total }),
        })
    };
    let winner_changes: Vec<WinnerChange> = replayed
        .iter()
        .filter(|r| r.winner_changed)
        .map(|r| WinnerChange {
            issue: r.issue,
            round: r.round,
            from: pick(r, &r.old_winner, true),
            to: pick(r, &r.new_winner, false),
        })
        .collect();
    Summary {
        rounds: replayed.len(),
        rankings_changed: replayed.iter().filter(|r| r.ranking_changed).count(),
        winners_changed: winner_changes.len(),
        winner_changes,
    }
}

/// Leaves out the report rounds that a recording among `rounds` also holds (the same issue,
/// round, ranking and bot behind each proposal): the recording replays them more fully.
/// Returns the rounds kept and how many were left out.
pub fn drop_recorded_reports(rounds: Vec<Round>) -> (Vec<Round>, usize) {
    let recorded: Vec<&Input> = rounds
        .iter()
        .map(|r| &r.input)
        .filter(|i| matches!(i, Input::Recorded(_)))
        .collect();
    fn sorted(i: &Input) -> Vec<(&str, &str)> {
        let mut v = i.bots();
        v.sort();
        v
    }
    let same = |a: &Input, b: &Input| {
        a.issue() == b.issue()
            && a.round() == b.round()
            && a.ranking() == b.ranking()
            && sorted(a) == sorted(b)
    };
    let keep: Vec<bool> = rounds
        .iter()
        .map(|r| {
            !matches!(r.input, Input::Report(_)) || !recorded.iter().any(|x| same(x, &r.input))
        })
        .collect();
    let dropped = keep.iter().filter(|k| !**k).count();
    let kept = rounds
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect();
    (kept, dropped)
}

#[cfg(test)]
mod tests;
