//! The evidence behind a round's seats (docs/specification.md §8.6), folded from the events:
//! each configured bot's Beta posterior of winning *and delivering* for an issue with given
//! topic labels, how much history it has and its measured cost per proposal
//! ([`seat_records`]), and for the leaderboard the seats each bot won, what a merged pull
//! request of it cost and the latest draw ([`board`]). Pure: the caller loads and orders the
//! events.
//!
//! A round a bot was seated in is one observation: a win when it won and its implementation
//! passed (`success`, `replan_success`), a loss when it was outranked, failed or penalised —
//! and, where the round's events carry their seating, when it was seated and has no event of
//! the round (skipped, or outranked in a round that failed). A pull request that settled is
//! one more observation of `merge_weight` (merged: a win; closed or reverted: a loss). Issues
//! sharing no topic label with the one seated count `other_labels`; each newer observation of
//! the bot leaves an older one `memory` of its weight. A bot's cost per proposal comes from what
//! its proposals cost: the seating's `spent_usd` for every seated bot, else its events'
//! `cost_usd`, each round once.

mod advice;
mod value;

use super::event::Event;
use crate::market::seating::{Candidate, Seating};
use crate::market::{Outcome, SeatingParams};
use advice::advise;
pub use advice::{SeatAdvice, ADVICE_ROUNDS};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
pub use value::{tuned_value, MIN_VALUE_ROUNDS, VALUE_ROUNDS};

/// One bot's record as the draw sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatRecord {
    pub bot_id: String,
    /// Beta(α, β): 1 + weighted wins, 1 + weighted losses.
    pub alpha: f64,
    pub beta: f64,
    /// Observations under any label.
    pub history: u32,
    /// How many of its latest placings departed from its earlier record, which was set aside.
    pub departed: Option<u32>,
    /// How many times likelier its latest placings are for a bot of unknown chance than for
    /// the bot its record describes, where they beat the record (1: they do not).
    pub surprise: f64,
    /// Seated rounds since it was last seated or placed.
    pub idle: u32,
    /// The mean of its latest `cost_window` proposals that reported a cost.
    pub cost_per_proposal: Option<f64>,
    /// Every known cost of its proposals.
    pub proposal_cost_usd: f64,
    /// Rounds it was seated in (of those whose events carry their seating).
    pub seats_won: u32,
    /// Its pull requests that were merged.
    pub merged: u32,
}

impl SeatRecord {
    /// The draw's candidate: this record, and why the bot cannot start if it cannot.
    pub fn candidate(&self, unavailable: Option<String>) -> Candidate {
        Candidate {
            bot_id: self.bot_id.clone(),
            alpha: self.alpha,
            beta: self.beta,
            history: self.history,
            idle: self.idle,
            departed: self.departed,
            surprise: self.surprise,
            cost_usd: self.cost_per_proposal,
            cost_estimate_usd: None,
            unavailable,
        }
    }
}

/// The seats on the leaderboard (with `[marketplace] seats`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeatBoard {
    /// `[marketplace] seats`.
    pub seats: u32,
    /// Rounds whose events carry their seating.
    pub rounds: u32,
    /// The configured bots, best posterior first.
    pub bots: Vec<SeatStanding>,
    /// The latest round's draw.
    pub latest: Option<LatestSeating>,
    /// What the latest seated rounds cost against every bot, and who earned no seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advice: Option<SeatAdvice>,
}

/// One bot's seats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeatStanding {
    pub bot_id: String,
    pub seats_won: u32,
    /// The mean of its posterior of winning and delivering, over every label.
    pub posterior_mean: f64,
    pub alpha: f64,
    pub beta: f64,
    pub history: u32,
    pub cost_per_proposal: Option<f64>,
    pub merged: u32,
    /// Its proposals' known cost over its merged pull requests; `None` before a merge.
    pub cost_per_merged_pr: Option<f64>,
}

/// The latest seating the events carry, and the round it was drawn for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatestSeating {
    pub issue: u64,
    #[serde(default)]
    pub run_id: Option<String>,
    pub seating: Seating,
}

/// A round: its run (the run id, else the issue for events without one) and number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RoundKey<'a> {
    Run(&'a str, u32),
    Issue(u64, u32),
}

fn round_key(e: &Event) -> Option<RoundKey<'_>> {
    let round = e.round_number()?;
    Some(match &e.run_id {
        Some(run) => RoundKey::Run(run, round),
        None => RoundKey::Issue(e.issue_number, round),
    })
}

/// What one round's events say: where it starts, its seating, who has a placing in it.
struct RoundSeen<'a> {
    first: usize,
    seating: Option<&'a Seating>,
    placed: BTreeSet<&'a str>,
}

/// A round's placing of a bot: won and delivered (`true`) or not.
fn placing(outcome: Outcome) -> Option<bool> {
    match outcome {
        Outcome::Success | Outcome::ReplanSuccess => Some(true),
        Outcome::NotSelected
        | Outcome::Failure
        | Outcome::ReplanFailure
        | Outcome::CollectiveFailure
        | Outcome::ResubmittedSame => Some(false),
        _ => None,
    }
}

/// One observation of a bot: won or lost, how much it weighs, the issue it is about, and
/// whether it is a round's placing (else a pull request that settled).
struct Observation {
    win: bool,
    weight: f64,
    issue: u64,
    placing: bool,
}

/// Everything gathered about the configured bots in one pass over the events.
/// Borrowed from the events: a pass allocates nothing per event.
#[derive(Default)]
struct Gathered<'a> {
    observations: HashMap<&'a str, Vec<Observation>>,
    costs: HashMap<&'a str, Vec<f64>>,
    seats: HashMap<&'a str, u32>,
    merged: HashMap<&'a str, u32>,
    /// The number of seated rounds gathered when each bot was last seated or placed.
    last_seen: HashMap<&'a str, u32>,
    /// The topic labels of every issue a seating named.
    labels: HashMap<u64, &'a [String]>,
    rounds: u32,
}

fn gather<'a>(params: &SeatingParams, events: &[&'a Event]) -> Gathered<'a> {
    let mut rounds: HashMap<RoundKey<'a>, RoundSeen<'a>> = HashMap::new();
    let mut g = Gathered::default();
    for (at, e) in events.iter().enumerate() {
        if let Some(s) = &e.seating {
            g.labels.insert(e.issue_number, &s.labels);
        }
        let Some(key) = round_key(e) else { continue };
        let seen = rounds.entry(key).or_insert_with(|| RoundSeen {
            first: at,
            seating: None,
            placed: BTreeSet::new(),
        });
        if seen.seating.is_none() {
            seen.seating = e.seating.as_ref();
        }
        if placing(e.outcome).is_some() {
            seen.placed.insert(&e.bot_id);
        }
    }
    let starts: HashMap<usize, &RoundSeen<'a>> = rounds.values().map(|r| (r.first, r)).collect();
    let mut once: HashSet<(RoundKey<'a>, &'a str)> = HashSet::new();
    let mut costed: HashSet<(RoundKey<'a>, &'a str)> = HashSet::new();
    for (at, e) in events.iter().enumerate() {
        if let Some((seating, seen)) = starts.get(&at).and_then(|r| r.seating.map(|s| (s, r))) {
            g.seated_round(seating, &seen.placed, e.issue_number);
            // The seating knows what every seated bot's proposal cost, an event or not.
            for b in seating.seated() {
                if let (Some(cost), Some(key)) = (b.spent_usd, round_key(e)) {
                    costed.insert((key, &b.bot_id));
                    g.costs.entry(&b.bot_id).or_default().push(cost);
                }
            }
        }
        let key = round_key(e);
        let (bot, issue) = (e.bot_id.as_str(), e.issue_number);
        if let Some(win) = placing(e.outcome) {
            g.last_seen.insert(bot, g.rounds);
            if key.is_none_or(|k| once.insert((k, bot))) {
                g.observe(bot, win, 1.0, issue, true);
            }
            if let Some(cost) = e.cost_usd {
                if key.is_none_or(|k| costed.insert((k, bot))) {
                    g.costs.entry(bot).or_default().push(cost);
                }
            }
        }
        match e.outcome {
            Outcome::Merged => {
                g.observe(bot, true, params.merge_weight, issue, false);
                *g.merged.entry(bot).or_default() += 1;
            }
            Outcome::ClosedUnmerged | Outcome::Reverted => {
                g.observe(bot, false, params.merge_weight, issue, false)
            }
            _ => {}
        }
    }
    g
}

impl<'a> Gathered<'a> {
    fn observe(&mut self, bot: &'a str, win: bool, weight: f64, issue: u64, placing: bool) {
        self.observations.entry(bot).or_default().push(Observation {
            win,
            weight,
            issue,
            placing,
        });
    }

    /// A round with its seating: a seat won by every seated bot, and a loss for each seated
    /// bot the round's events do not place.
    fn seated_round(&mut self, seating: &'a Seating, placed: &BTreeSet<&str>, issue: u64) {
        self.rounds += 1;
        for b in seating.seated() {
            *self.seats.entry(&b.bot_id).or_default() += 1;
            self.last_seen.insert(&b.bot_id, self.rounds);
            if !placed.contains(b.bot_id.as_str()) {
                self.observe(&b.bot_id, false, 1.0, issue, true);
            }
        }
    }

    /// How much an observation about `issue` weighs for an issue labelled `labels`.
    fn label_weight(&self, params: &SeatingParams, issue: u64, labels: &[String]) -> f64 {
        if labels.is_empty() {
            return 1.0;
        }
        let shares = self
            .labels
            .get(&issue)
            .is_some_and(|theirs| theirs.iter().any(|l| labels.contains(l)));
        if shares {
            1.0
        } else {
            params.other_labels
        }
    }

    /// The weighted wins and losses of every prefix `seen[..k]`, in one pass, the newest
    /// last: each newer observation leaves the older ones `memory` of their weight. Beta(α, β)
    /// of a prefix is 1 + its wins, 1 + its losses.
    fn prefixes(
        &self,
        params: &SeatingParams,
        seen: &[Observation],
        labels: &[String],
    ) -> Vec<(f64, f64)> {
        let mut prefix = Vec::with_capacity(seen.len() + 1);
        let (mut wins, mut losses) = (0.0, 0.0);
        prefix.push((wins, losses));
        for o in seen {
            let w = o.weight * self.label_weight(params, o.issue, labels);
            wins *= params.memory;
            losses *= params.memory;
            if o.win {
                wins += w;
            } else {
                losses += w;
            }
            prefix.push((wins, losses));
        }
        prefix
    }

    /// Where the bot's record starts to count, and how many of its latest placings depart
    /// from what came before (none: they do not), `prefix` being `seen`'s prefixes. A run of
    /// its latest placings, of at most `drift_window`, departs when it is `drift_odds` times
    /// likelier for a bot of unknown chance (a uniform prior) than for the bot its earlier
    /// record describes (its posterior mean): a new model under the same id. Then the earlier
    /// record is set aside and the bot is explored afresh; the likeliest run counts.
    fn departure(
        params: &SeatingParams,
        seen: &[Observation],
        prefix: &[(f64, f64)],
    ) -> (usize, Option<u32>, f64) {
        let placings: Vec<usize> = (0..seen.len()).filter(|&k| seen[k].placing).collect();
        let mut best: Option<(f64, usize, u32)> = None;
        let mut surprise = 1.0f64;
        for len in 1..=params.drift_window.min(placings.len()) {
            let split = placings[placings.len() - len];
            if split == 0 {
                break;
            }
            let (a, b) = (1.0 + prefix[split].0, 1.0 + prefix[split].1);
            let mean = a / (a + b);
            let wins = placings[placings.len() - len..]
                .iter()
                .filter(|&&k| seen[k].win)
                .count();
            // Only a run better than the record departs: a bot that got worse keeps its seats
            // long enough for its record to say so, and a strong bot's bad run is no new model.
            if (wins as f64) <= mean * len as f64 {
                continue;
            }
            let odds = fresh_likelihood(wins, len)
                / (mean.powi(wins as i32) * (1.0 - mean).powi((len - wins) as i32));
            surprise = surprise.max(odds);
            if odds >= params.drift_odds && best.is_none_or(|(o, ..)| odds > o) {
                best = Some((odds, split, len as u32));
            }
        }
        match best {
            Some((_, split, len)) => (split, Some(len), 1.0),
            None => (0, None, surprise),
        }
    }

    /// Every bot's record (in `bots` order) for an issue with the topic `labels`.
    fn records(
        &self,
        params: &SeatingParams,
        bots: &[String],
        labels: &[String],
    ) -> Vec<SeatRecord> {
        bots.iter()
            .map(|b| self.record(params, b, labels))
            .collect()
    }

    fn record(&self, params: &SeatingParams, bot: &str, labels: &[String]) -> SeatRecord {
        let empty = Vec::new();
        let all = self.observations.get(bot).unwrap_or(&empty);
        let n = all.len();
        let prefix = self.prefixes(params, all, labels);
        let (start, departed, surprise) = Self::departure(params, all, &prefix);
        let (wins, losses) = if start == 0 {
            prefix[n]
        } else {
            self.prefixes(params, &all[start..], labels)[n - start]
        };
        let (alpha, beta) = (1.0 + wins, 1.0 + losses);
        let costs = self.costs.get(bot).map_or(&[][..], |c| &c[..]);
        let latest = &costs[costs.len().saturating_sub(params.cost_window)..];
        SeatRecord {
            bot_id: bot.to_owned(),
            alpha,
            beta,
            history: n as u32,
            departed,
            surprise,
            idle: self.rounds - self.last_seen.get(bot).copied().unwrap_or(0),
            cost_per_proposal: (!latest.is_empty())
                .then(|| latest.iter().sum::<f64>() / latest.len() as f64),
            proposal_cost_usd: costs.iter().sum(),
            seats_won: self.seats.get(bot).copied().unwrap_or(0),
            merged: self.merged.get(bot).copied().unwrap_or(0),
        }
    }
}

/// The chance of `wins` in `n` rounds in a given order for a bot whose chance is unknown
/// (uniform): `wins! (n − wins)! / (n + 1)!`.
fn fresh_likelihood(wins: usize, n: usize) -> f64 {
    let factorial = |k: usize| (1..=k).map(|i| i as f64).product::<f64>();
    factorial(wins) * factorial(n - wins) / factorial(n + 1)
}

/// Every configured bot's record (in `bots` order) for an issue with the topic `labels`
/// (lower-case; none: every issue weighs alike), from `events` in fold order.
pub fn seat_records(
    params: &SeatingParams,
    bots: &[String],
    events: &[&Event],
    labels: &[String],
) -> Vec<SeatRecord> {
    gather(params, events).records(params, bots, labels)
}

/// The mean tokens of a proposal, input and output, over the round events that carry them;
/// `None` before any did. What a newcomer with a configured price is estimated to spend.
pub fn proposal_tokens(events: &[&Event]) -> Option<(f64, f64)> {
    let sized: Vec<_> = events
        .iter()
        .filter(|e| placing(e.outcome).is_some())
        .filter_map(|e| e.tokens.as_ref())
        .collect();
    let n = sized.len() as f64;
    (!sized.is_empty()).then(|| {
        let input: u64 = sized.iter().map(|t| t.input).sum();
        let output: u64 = sized.iter().map(|t| t.output).sum();
        (input as f64 / n, output as f64 / n)
    })
}

/// The leaderboard's seats: every configured bot's seats won, posterior over every label,
/// cost per proposal and per merged pull request, and the latest draw.
pub fn board(seats: u32, params: &SeatingParams, bots: &[String], events: &[&Event]) -> SeatBoard {
    let g = gather(params, events);
    let records = g.records(params, bots, &[]);
    let advice = advise(&records, events);
    let mut standings: Vec<SeatStanding> = records
        .into_iter()
        .map(|r| SeatStanding {
            posterior_mean: r.alpha / (r.alpha + r.beta),
            cost_per_merged_pr: (r.merged > 0 && r.proposal_cost_usd > 0.0)
                .then(|| r.proposal_cost_usd / f64::from(r.merged)),
            bot_id: r.bot_id,
            seats_won: r.seats_won,
            alpha: r.alpha,
            beta: r.beta,
            history: r.history,
            cost_per_proposal: r.cost_per_proposal,
            merged: r.merged,
        })
        .collect();
    standings.sort_by(|a, b| {
        b.posterior_mean
            .total_cmp(&a.posterior_mean)
            .then(a.bot_id.cmp(&b.bot_id))
    });
    let latest = events.iter().rev().find_map(|e| {
        e.seating.as_ref().map(|s| LatestSeating {
            issue: e.issue_number,
            run_id: e.run_id.clone(),
            seating: s.clone(),
        })
    });
    SeatBoard {
        seats,
        rounds: g.rounds,
        bots: standings,
        latest,
        advice,
    }
}

#[cfg(test)]
mod tests;
