//! Folding the event log into the marketplace state (docs/specification.md §8.3): weights,
//! efficiency, successes, failures, accuracy and budgets. Pure: the caller loads and orders the
//! events.

use super::budget::allocate;
use super::event::Event;
use super::merges::{MergeStats, MergeTally};
use super::stats::{self, BetaSummary, Rating};
use super::weights::project;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// At most this many points of weight history are kept for the chart; beyond it the history
/// is sampled evenly (always keeping the first and the last point).
pub const HISTORY_LIMIT: usize = 2000;

/// What the fold needs from the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoldParams {
    /// The configured bots, in configuration order.
    pub bots: Vec<String>,
    pub weight_min: f64,
    pub weight_max: f64,
    /// The iteration budget pool: `num_bots × base_budget_per_bot`.
    pub pool: u32,
    /// `[marketplace] seats`, when set: the leaderboard also shows the seats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seats: Option<u32>,
}

/// One bot's standing after the fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BotStanding {
    pub bot_id: String,
    /// Current weight; 0 for retired bots, which no longer take part.
    pub weight: f64,
    /// `successes / (successes + failures)`, 1.0 before any attempt.
    pub efficiency: f64,
    pub successes: u32,
    pub failures: u32,
    /// Mean accuracy over the bot's implemented proposals that recorded one.
    pub average_accuracy: Option<f64>,
    /// Share of the iteration budget pool; 0 for retired bots.
    pub budget: u32,
    /// Found in events but no longer configured.
    pub retired: bool,
    /// Number of events about this bot.
    pub event_count: u64,
    /// Sum of the bot's weight deltas as recorded in its events.
    pub total_delta: f64,
    pub last_event: Option<DateTime<Utc>>,
    /// Success rate when selected: Beta(1 + successes, 1 + failures), mean and 90% interval.
    pub success_rate: BetaSummary,
    /// Proposal skill from the per-round rankings (Weng–Lin); `conservative` is μ − 3σ.
    pub rating: Rating,
    /// Brier score of the bot's `success_probability` on its implemented proposals (lower is
    /// better; 0.25 is a coin flip); `None` before any such forecast.
    pub brier_score: Option<f64>,
    /// What the maintainers made of its pull requests (`ralph follow`).
    #[serde(default)]
    pub pull_requests: MergeStats,
}

/// How well the arbiter's proposal scores predict the implementation scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ArbiterHealth {
    /// Spearman's rank correlation between proposal and implementation scores of every
    /// implemented proposal; `None` with fewer than three or without variation.
    pub rank_correlation: Option<f64>,
    /// How many implemented proposals had both scores.
    pub pairs: u64,
    /// Why `rank_correlation` is `None`: `too_few` pairs, or one side without variation
    /// (`constant_first`: every proposal score the same; `constant_second`: every
    /// implementation score; `constant_both`).
    #[serde(default)]
    pub undefined: Option<stats::Undefined>,
}

impl ArbiterHealth {
    /// The health in a sentence, the numbers the right way round.
    pub fn describe(&self) -> String {
        let n = self.pairs;
        let same = |what: &str| {
            format!("undefined — all {n} implemented proposals have the same {what}, so there is no ranking to compare")
        };
        match (self.rank_correlation, self.undefined) {
            (Some(rho), _) => format!(
                "proposal vs implementation score rank correlation {rho:+.2} over {n} implemented proposals"
            ),
            (None, Some(stats::Undefined::ConstantFirst)) => same("proposal score"),
            (None, Some(stats::Undefined::ConstantSecond)) => same("implementation score"),
            (None, Some(stats::Undefined::ConstantBoth)) => {
                same("proposal score and the same implementation score")
            }
            (None, _) => format!(
                "not enough implemented proposals with both scores yet: {n} of the {} needed",
                stats::MIN_PAIRS
            ),
        }
    }
}

/// The weights of the configured bots after events, for the chart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WeightHistory {
    /// Column order of `points[].weights`.
    pub bots: Vec<String>,
    pub points: Vec<HistoryPoint>,
}

/// The weights after one event (`event_index` 0 is the starting point, before any event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    pub event_index: u64,
    pub timestamp: Option<DateTime<Utc>>,
    pub weights: Vec<f64>,
}

/// The result of a fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Folded {
    /// Active bots by weight (heaviest first, ties by id), then retired bots by id.
    pub bots: Vec<BotStanding>,
    pub history: WeightHistory,
    pub event_count: u64,
    pub arbiter_health: ArbiterHealth,
}

#[derive(Default)]
struct Tally {
    successes: u32,
    failures: u32,
    accuracy_sum: f64,
    accuracy_n: u32,
    events: u64,
    total_delta: f64,
    last: Option<DateTime<Utc>>,
    brier_sum: f64,
    brier_n: u32,
    merges: MergeTally,
}

impl Tally {
    fn add(&mut self, event: &Event) {
        self.events += 1;
        self.total_delta += event.weight_delta;
        self.last = Some(event.timestamp);
        self.merges.add(event);
        if event.outcome.is_success() {
            self.successes += 1;
        } else if event.outcome.is_failure() {
            self.failures += 1;
        }
        if event.outcome.is_implementation() {
            if let Some(a) = event.accuracy {
                self.accuracy_sum += a;
                self.accuracy_n += 1;
            }
            if let Some(p) = event.success_probability {
                let happened = if event.outcome.is_success() { 1.0 } else { 0.0 };
                self.brier_sum += (p - happened) * (p - happened);
                self.brier_n += 1;
            }
        }
    }

    fn efficiency(&self) -> f64 {
        efficiency(self.successes, self.failures)
    }

    /// The standing of `bot_id`, whose events this tallies, with its `rating`, `weight` and
    /// `budget`.
    fn standing(
        &self,
        bot_id: &str,
        rating: Rating,
        weight: f64,
        budget: u32,
        retired: bool,
    ) -> BotStanding {
        BotStanding {
            success_rate: stats::success_rate(self.successes, self.failures),
            rating,
            brier_score: stats::brier_score(self.brier_sum, self.brier_n),
            bot_id: bot_id.to_owned(),
            weight,
            efficiency: self.efficiency(),
            successes: self.successes,
            failures: self.failures,
            average_accuracy: (self.accuracy_n > 0)
                .then(|| self.accuracy_sum / f64::from(self.accuracy_n)),
            budget,
            retired,
            event_count: self.events,
            total_delta: self.total_delta,
            last_event: self.last,
            pull_requests: self.merges.stats(),
        }
    }
}

/// `successes / (successes + failures)`, 1.0 with no attempts.
pub fn efficiency(successes: u32, failures: u32) -> f64 {
    let attempts = successes + failures;
    if attempts == 0 {
        1.0
    } else {
        f64::from(successes) / f64::from(attempts)
    }
}

/// Folds `events`, which must already be in timestamp order, into the marketplace state.
/// Configured bots start at `1/N`; each event's delta takes effect at once, after which the
/// weights are projected back onto the bounded simplex ([`project`]). Events of bots that are
/// no longer configured count towards those bots' statistics only.
pub fn fold<'a>(params: &FoldParams, events: impl IntoIterator<Item = &'a Event>) -> Folded {
    let n = params.bots.len();
    let index: BTreeMap<&str, usize> = params
        .bots
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_str(), i))
        .collect();
    let mut weights = vec![if n == 0 { 0.0 } else { 1.0 / n as f64 }; n];
    let mut tallies: Vec<Tally> = (0..n).map(|_| Tally::default()).collect();
    let mut retired: BTreeMap<String, Tally> = BTreeMap::new();
    // The weights after every event, flat (n per point): one buffer instead of a vector per
    // event; the chart's points are sampled from it at the end.
    let mut trace: Vec<f64> = weights.clone();
    let mut stamps: Vec<Option<DateTime<Utc>>> = vec![None];
    let mut count = 0u64;
    let mut rounds = Rounds::default();
    let mut score_pairs = Vec::new();
    for event in events {
        count += 1;
        rounds.add(event);
        if event.outcome.is_implementation() {
            if let (Some(p), Some(i)) = (event.proposal_score, event.implementation_score) {
                score_pairs.push((p, i));
            }
        }
        match index.get(event.bot_id.as_str()) {
            Some(&i) => {
                weights[i] += event.weight_delta;
                project(&mut weights, params.weight_min, params.weight_max);
                tallies[i].add(event);
            }
            None => retired.entry(event.bot_id.clone()).or_default().add(event),
        }
        trace.extend_from_slice(&weights);
        stamps.push(Some(event.timestamp));
    }

    let shares: Vec<f64> = (0..n)
        .map(|i| weights[i] * tallies[i].efficiency())
        .collect();
    let budgets = allocate(params.pool, &shares);
    let ratings = rounds.ratings();
    let standing = |bot_id: &str, tally: &Tally, weight: f64, budget: u32, retired: bool| {
        let rating = ratings.get(bot_id).copied().unwrap_or_default();
        tally.standing(bot_id, rating, weight, budget, retired)
    };
    let mut bots: Vec<BotStanding> = (0..n)
        .map(|i| standing(&params.bots[i], &tallies[i], weights[i], budgets[i], false))
        .collect();
    bots.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.bot_id.cmp(&b.bot_id)));
    bots.extend(
        retired
            .iter()
            .map(|(id, tally)| standing(id, tally, 0.0, 0, true)),
    );
    Folded {
        bots,
        history: history(&params.bots, &stamps, &trace),
        event_count: count,
        arbiter_health: arbiter_health(&score_pairs),
    }
}

/// The chart's history of the `bots`' weights: at most [`HISTORY_LIMIT`] of the points the
/// fold traced (`trace` holds one row of weights per point, `stamps` each point's time),
/// evenly sampled.
fn history(bots: &[String], stamps: &[Option<DateTime<Utc>>], trace: &[f64]) -> WeightHistory {
    let n = bots.len();
    WeightHistory {
        bots: bots.to_vec(),
        points: sample_indices(stamps.len(), HISTORY_LIMIT)
            .map(|k| HistoryPoint {
                event_index: k as u64,
                timestamp: stamps[k],
                weights: trace[k * n..(k + 1) * n].to_vec(),
            })
            .collect(),
    }
}

/// How well the arbiter's proposal scores foretold the implementation scores: their rank
/// correlation over the `(proposal, implementation)` pairs, or why it is undefined.
fn arbiter_health(score_pairs: &[(f64, f64)]) -> ArbiterHealth {
    let rho = stats::spearman_or_why(score_pairs);
    ArbiterHealth {
        rank_correlation: rho.ok(),
        pairs: score_pairs.len() as u64,
        undefined: rho.err(),
    }
}

/// The rankings of every round, gathered while folding. A round is identified by its run
/// (`run_id`, or the issue for the prototype's events, which have none) and its number.
/// Everything is borrowed from the events: folding allocates nothing per event here.
#[derive(Default)]
struct Rounds<'a> {
    /// Round key → the round's placings.
    rounds: HashMap<(RunKey<'a>, u32), Placings<'a>>,
    seen: u64,
}

/// The run a round belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum RunKey<'a> {
    Run(&'a str),
    Issue(u64),
}

/// The order in which a round first appeared, and its participants with their place.
type Placings<'a> = (u64, Vec<(&'a str, u32)>);

impl<'a> Rounds<'a> {
    /// Records the bot's place in its round. The winner is first (or its recorded `rank`); a
    /// winner whose implementation failed counts as last; bots not selected take their recorded
    /// rank, else tie for second. Penalty events (`collective_failure`, `resubmitted_same`)
    /// are not placings.
    fn add(&mut self, event: &'a Event) {
        use crate::market::Outcome;
        let Some(round) = event.round_number() else {
            return;
        };
        let place = match event.outcome {
            Outcome::Failure | Outcome::ReplanFailure => u32::MAX,
            Outcome::Success | Outcome::ReplanSuccess => event.rank.unwrap_or(1),
            Outcome::NotSelected => event.rank.unwrap_or(2),
            // Penalties and what happened after the pull request are not placings.
            Outcome::CollectiveFailure
            | Outcome::ResubmittedSame
            | Outcome::Merged
            | Outcome::ClosedUnmerged
            | Outcome::Reverted
            | Outcome::RevisionSuccess
            | Outcome::RevisionFailure => return,
        };
        let run = match &event.run_id {
            Some(id) => RunKey::Run(id),
            None => RunKey::Issue(event.issue_number),
        };
        self.seen += 1;
        let seen = self.seen;
        let entry = self
            .rounds
            .entry((run, round))
            .or_insert_with(|| (seen, Vec::new()));
        if !entry.1.iter().any(|(bot, _)| *bot == event.bot_id) {
            entry.1.push((&event.bot_id, place));
        }
    }

    /// Replays the rounds in the order they began.
    fn ratings(self) -> BTreeMap<String, Rating> {
        let mut rounds: Vec<_> = self.rounds.into_values().collect();
        rounds.sort_by_key(|(seen, _)| *seen);
        let mut ratings = BTreeMap::new();
        for (_, ranking) in rounds {
            stats::update_ratings(&mut ratings, &ranking);
        }
        ratings
    }
}

/// Indices of at most `limit` of `len` points, evenly spaced, always including the first and
/// the last, in increasing order.
fn sample_indices(len: usize, limit: usize) -> impl Iterator<Item = usize> {
    let step = if len <= limit || limit < 2 {
        1.0
    } else {
        (len - 1) as f64 / (limit - 1) as f64
    };
    let count = if len <= limit || limit < 2 {
        len
    } else {
        limit
    };
    let mut last = None;
    (0..count).filter_map(move |k| {
        let i = ((k as f64) * step).round() as usize;
        (last != Some(i)).then(|| {
            last = Some(i);
            i
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Outcome;
    use chrono::Duration;

    fn params(bots: &[&str]) -> FoldParams {
        FoldParams {
            bots: bots.iter().map(|b| b.to_string()).collect(),
            weight_min: 0.05,
            weight_max: 0.60,
            pool: bots.len() as u32 * 10,
            seats: None,
        }
    }

    fn event(seq: i64, bot: &str, outcome: Outcome, delta: f64, accuracy: Option<f64>) -> Event {
        let mut e = Event::new(1, bot, outcome, delta);
        e.timestamp =
            "2026-01-01T00:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::seconds(seq);
        e.accuracy = accuracy;
        e
    }

    fn weight(f: &Folded, bot: &str) -> f64 {
        f.bots.iter().find(|b| b.bot_id == bot).unwrap().weight
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn no_events_means_equal_weights_and_full_efficiency() {
        let f = fold(&params(&["a", "b", "c"]), &[]);
        assert_eq!(f.event_count, 0);
        for b in &f.bots {
            assert!(close(b.weight, 1.0 / 3.0));
            assert_eq!(b.efficiency, 1.0);
            assert_eq!(b.budget, 10);
            assert_eq!(b.average_accuracy, None);
        }
        assert_eq!(f.history.points.len(), 1);
    }

    #[test]
    fn hand_computed_sequence() {
        // Start 1/3 each.
        // 1. a success +0.15: a = 0.48333, sum 1.15 → a 0.42029, b = c = 0.28986.
        // 2. b not_selected −0.02: b 0.26986, sum 0.98 → a 0.42887, b 0.27537, c 0.29577.
        // 3. c failure −0.15: c 0.14577, sum 0.85 → a 0.50455, b 0.32396, c 0.17149.
        let events = [
            event(1, "a", Outcome::Success, 0.15, Some(0.9)),
            event(2, "b", Outcome::NotSelected, -0.02, None),
            event(3, "c", Outcome::Failure, -0.15, Some(0.4)),
        ];
        let f = fold(&params(&["a", "b", "c"]), &events);
        let third = 1.0 / 3.0;
        let (a1, b1) = ((third + 0.15) / 1.15, third / 1.15);
        let (a2, b2, c2) = (a1 / 0.98, (b1 - 0.02) / 0.98, b1 / 0.98);
        let (a3, b3, c3) = (a2 / 0.85, b2 / 0.85, (c2 - 0.15) / 0.85);
        assert!(close(weight(&f, "a"), a3), "{}", weight(&f, "a"));
        assert!(close(weight(&f, "b"), b3));
        assert!(close(weight(&f, "c"), c3));
        assert_eq!(
            f.bots.iter().map(|b| b.bot_id.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        let a = &f.bots[0];
        assert_eq!((a.successes, a.failures, a.efficiency), (1, 0, 1.0));
        assert_eq!(a.average_accuracy, Some(0.9));
        let c = &f.bots[2];
        assert_eq!((c.successes, c.failures, c.efficiency), (0, 1, 0.0));
        // Budgets ∝ weight × efficiency: c has efficiency 0 → 1; a and b split 29.
        assert_eq!(c.budget, 1);
        assert_eq!(f.bots.iter().map(|b| b.budget).sum::<u32>(), 30);
        assert_eq!(f.history.points.len(), 4);
        assert!(close(f.history.points[1].weights[0], a1));
    }

    #[test]
    fn clamping_at_both_bounds() {
        // Three successes for a: the cap of 0.60 binds; repeated failures for c: floor 0.05.
        let mut events = Vec::new();
        for k in 0..3 {
            events.push(event(k, "a", Outcome::Success, 0.15, None));
        }
        for k in 3..8 {
            events.push(event(k, "c", Outcome::ReplanFailure, -0.20, None));
        }
        let f = fold(&params(&["a", "b", "c"]), &events);
        assert!(close(weight(&f, "a"), 0.60));
        assert!(close(weight(&f, "c"), 0.05));
        assert!(close(weight(&f, "b"), 0.35));
    }

    #[test]
    fn two_bots_where_the_cap_binds() {
        // a +0.10: 0.6/0.5 → 0.5455/0.4545. a +0.15: 0.6955/0.4545 → cap: 0.60/0.40.
        let events = [
            event(1, "a", Outcome::Success, 0.10, None),
            event(2, "a", Outcome::Success, 0.15, None),
        ];
        let f = fold(&params(&["a", "b"]), &events);
        assert!(close(f.history.points[1].weights[0], 0.6 / 1.1));
        assert!(close(weight(&f, "a"), 0.60));
        assert!(close(weight(&f, "b"), 0.40));
    }

    #[test]
    fn a_delta_that_pushes_a_weight_below_zero() {
        // Two bots at 0.5; b −0.7 → −0.2 → counts as 0 → floor... but a is capped at 0.6, so
        // b holds the remaining 0.4.
        let f = fold(
            &params(&["a", "b"]),
            &[event(1, "b", Outcome::ReplanFailure, -0.7, None)],
        );
        assert!(close(weight(&f, "a"), 0.60));
        assert!(close(weight(&f, "b"), 0.40));
        // Three bots: c −0.5 → 0 → min 0.05; a and b share 0.95 equally.
        let f = fold(
            &params(&["a", "b", "c"]),
            &[event(1, "c", Outcome::ReplanFailure, -0.5, None)],
        );
        assert!(close(weight(&f, "c"), 0.05));
        assert!(close(weight(&f, "a"), 0.475));
    }

    #[test]
    fn retired_bots_keep_statistics_but_no_weight() {
        let events = [
            event(1, "old", Outcome::Success, 0.10, Some(0.8)),
            event(2, "a", Outcome::Failure, -0.15, Some(0.2)),
        ];
        let f = fold(&params(&["a", "b"]), &events);
        let old = f.bots.last().unwrap();
        assert!(old.retired);
        assert_eq!(
            (old.bot_id.as_str(), old.weight, old.budget, old.successes),
            ("old", 0.0, 0, 1)
        );
        let active: f64 = f.bots.iter().filter(|b| !b.retired).map(|b| b.weight).sum();
        assert!(close(active, 1.0));
        // The retired bot's event leaves the active weights unchanged.
        assert_eq!(f.history.points[1].weights, f.history.points[0].weights);
    }

    #[test]
    fn accuracy_counts_only_implemented_proposals() {
        let mut not_selected = event(2, "a", Outcome::NotSelected, -0.02, Some(0.1));
        not_selected.accuracy = Some(0.1);
        let events = [
            event(1, "a", Outcome::Success, 0.15, Some(0.9)),
            not_selected,
            event(3, "a", Outcome::ReplanSuccess, 0.12, Some(0.7)),
        ];
        let f = fold(&params(&["a", "b"]), &events);
        let a = f.bots.iter().find(|b| b.bot_id == "a").unwrap();
        assert!(close(a.average_accuracy.unwrap(), 0.8));
        assert_eq!(a.successes, 2);
        assert_eq!(a.event_count, 3);
    }

    #[test]
    fn extras_rate_rank_and_check_the_arbiter() {
        let mut events = Vec::new();
        // Round 1 of run r1: a wins and passes; b not selected. Round 2: b wins and fails.
        for (seq, bot, outcome, round, p, i, prob) in [
            (1, "a", Outcome::Success, 1, 0.9, 0.85, Some(0.8)),
            (2, "b", Outcome::NotSelected, 1, 0.6, f64::NAN, None),
            (3, "b", Outcome::Failure, 2, 0.7, 0.3, Some(0.9)),
            (4, "a", Outcome::NotSelected, 2, 0.5, f64::NAN, None),
            (5, "a", Outcome::Success, 3, 0.8, 0.75, Some(0.6)),
            (6, "b", Outcome::CollectiveFailure, 3, 0.1, f64::NAN, None),
        ] {
            let mut e = event(seq, bot, outcome, 0.0, None);
            e.run_id = Some("r1".into());
            e.round = Some(round);
            e.proposal_score = Some(p);
            e.implementation_score = (!i.is_nan()).then_some(i);
            e.success_probability = prob;
            events.push(e);
        }
        let f = fold(&params(&["a", "b"]), &events);
        let a = f.bots.iter().find(|b| b.bot_id == "a").unwrap();
        let b = f.bots.iter().find(|b| b.bot_id == "b").unwrap();
        // a: 2 successes → Beta(3,1), mean 0.75. b: 1 failure → Beta(1,2), mean 1/3.
        assert!(close(a.success_rate.mean, 0.75));
        assert!(close(b.success_rate.mean, 1.0 / 3.0));
        // a beat b in rounds 1 and 2 (b failed, so it counts last); round 3 has one placing.
        assert!(a.rating.mu > 25.0 && b.rating.mu < 25.0);
        assert!(a.rating.conservative > b.rating.conservative);
        // Brier: a (0.8−1)², (0.6−1)² → (0.04 + 0.16)/2 = 0.1; b (0.9 − 0)² = 0.81.
        assert!(close(a.brier_score.unwrap(), 0.1));
        assert!(close(b.brier_score.unwrap(), 0.81));
        // Arbiter: proposal 0.9, 0.7, 0.8 vs implementation 0.85, 0.3, 0.75 → same order.
        assert_eq!(f.arbiter_health.pairs, 3);
        assert!(close(f.arbiter_health.rank_correlation.unwrap(), 1.0));
        assert!(f
            .arbiter_health
            .describe()
            .starts_with("proposal vs implementation score rank correlation +1.00 over 3"));
    }

    #[test]
    fn arbiter_health_says_why_there_is_no_correlation() {
        let implemented = |n: usize, impl_score: fn(usize) -> f64| -> Vec<Event> {
            (0..n)
                .map(|k| {
                    let mut e = event(k as i64, "a", Outcome::Success, 0.0, None);
                    e.proposal_score = Some(0.5 + k as f64 / 100.0);
                    e.implementation_score = Some(impl_score(k));
                    e
                })
                .collect()
        };
        // 46 implementations, all scored the same: the count is not "too few".
        let f = fold(&params(&["a"]), &implemented(46, |_| 0.5));
        let h = f.arbiter_health;
        assert_eq!((h.pairs, h.rank_correlation), (46, None));
        assert_eq!(h.undefined, Some(stats::Undefined::ConstantSecond));
        assert_eq!(
            h.describe(),
            "undefined — all 46 implemented proposals have the same implementation score, so there is no ranking to compare"
        );
        let f = fold(&params(&["a"]), &implemented(2, |k| k as f64 / 2.0));
        assert_eq!(
            f.arbiter_health.describe(),
            "not enough implemented proposals with both scores yet: 2 of the 3 needed"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_event_sequence_keeps_weights_and_budgets_valid(
            bots in 1usize..7,
            base in 1u32..20,
            min in 0.0f64..0.15,
            max in 0.3f64..1.0,
            seq in proptest::collection::vec((0usize..8, 0usize..7, -0.5f64..0.5), 0..60),
        ) {
            let ids: Vec<String> = (0..bots).map(|i| format!("bot_{i}")).collect();
            let params = FoldParams { bots: ids.clone(), weight_min: min, weight_max: max, pool: bots as u32 * base, seats: None };
            // Bot index 7 is never configured: a retired bot's events mix in.
            let events: Vec<Event> = seq
                .iter()
                .enumerate()
                .map(|(k, &(b, o, delta))| {
                    let id = if b < bots { ids[b].as_str() } else { "retired_bot" };
                    event(k as i64, id, crate::market::Outcome::ALL[o], delta, Some(0.5))
                })
                .collect();
            let f = fold(&params, &events);
            let (lo, hi) = crate::ledger::effective_bounds(bots, min, max);
            let active: Vec<&BotStanding> = f.bots.iter().filter(|b| !b.retired).collect();
            proptest::prop_assert_eq!(active.len(), bots);
            let sum: f64 = active.iter().map(|b| b.weight).sum();
            proptest::prop_assert!((sum - 1.0).abs() < 1e-9, "sum {}", sum);
            for b in &active {
                proptest::prop_assert!(b.weight >= lo - 1e-12 && b.weight <= hi + 1e-12);
                proptest::prop_assert!(b.budget >= 1);
                proptest::prop_assert!((0.0..=1.0).contains(&b.efficiency));
            }
            proptest::prop_assert_eq!(active.iter().map(|b| b.budget).sum::<u32>(), params.pool);
            for p in &f.history.points {
                proptest::prop_assert!((p.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn history_is_sampled_beyond_the_limit() {
        let events: Vec<Event> = (0..5000)
            .map(|k| {
                event(
                    k,
                    if k % 2 == 0 { "a" } else { "b" },
                    Outcome::NotSelected,
                    -0.02,
                    None,
                )
            })
            .collect();
        let f = fold(&params(&["a", "b"]), &events);
        let pts = &f.history.points;
        assert_eq!(pts.len(), HISTORY_LIMIT);
        assert_eq!(pts[0].event_index, 0);
        assert_eq!(pts.last().unwrap().event_index, 5000);
        assert!(pts.windows(2).all(|w| w[0].event_index < w[1].event_index));
    }
}
