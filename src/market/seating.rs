//! Seats (`[marketplace] seats`, docs/specification.md §8.6): which of the configured bots
//! propose in a round. Each bot's chance of winning *and delivering* is a Beta posterior that
//! `ledger::seats` builds from the events. The round's first drawn seat is its anchor: the bot
//! whose seat is worth most by its record (the value of a merged pull request × its posterior
//! mean, less its cost per proposal), so that a round is never gambled on a lucky sample. The
//! other seats are Thompson sampling, priced: one sample θ from every posterior, and seat by
//! seat the bot whose seat adds the most is seated, its worth being the value of a merge × (θ ×
//! the chance that no bot seated so far delivers, less the chance the judges wrongly prefer it
//! to one that does), less its cost per proposal; seating stops when the next seat would not
//! pay, when `seats` are taken, or when a cap has no room. So a round takes one seat when the
//! ledger is sure of a bot and more when it is not; a bot that keeps losing is seated ever less,
//! yet never never; a cheap bot as good as a dear one takes the seat; a bot without any history
//! is seated to be explored; and two bots that may have changed — the most surprising suspect
//! (else the bot longest without a seat) and the bot longest without a seat — are tried in the
//! last seats when that pays. Pure: the inputs come in, the seating comes out with every input
//! and reason in it, and the seed makes it reproducible.

use crate::mix::SplitMix64;
use plan::{held, suspect, Plan};
use serde::{Deserialize, Serialize};

/// What the draw knows of one configured bot.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub bot_id: String,
    /// Beta(α, β) of winning and delivering: 1 + weighted wins, 1 + weighted losses.
    pub alpha: f64,
    pub beta: f64,
    /// Observations of the bot under any label (rounds it was seated in, pull requests that
    /// settled): 0 makes it a newcomer.
    pub history: u32,
    /// Seated rounds since it was last seated.
    pub idle: u32,
    /// How many of its latest rounds departed from its earlier record, which the posterior
    /// sets aside (`ledger::seats`).
    pub departed: Option<u32>,
    /// How many times likelier its latest placings are for a bot of unknown chance than for
    /// its record, where they beat it (1: they do not): a bot that may have changed.
    pub surprise: f64,
    /// Its measured cost per proposal, in US dollars, when a proposal of it reported one.
    pub cost_usd: Option<f64>,
    /// What a proposal of it should cost by what its backend and model are known to cost
    /// (its configured price, or another bot's measure on the same backend and model): the
    /// price it counts until it has a measure of its own.
    pub cost_estimate_usd: Option<f64>,
    /// Why it cannot propose at all (its backend could not be built): never seated.
    pub unavailable: Option<String>,
}

/// What one round's draw is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatAsk {
    /// `[marketplace] seats`: the most a round seats.
    pub seats: u32,
    /// What a merged pull request is worth, in US dollars (`[marketplace] value_per_merge`):
    /// the rate at which a chance of a merge is weighed against a bot's price.
    pub value_per_merge: f64,
    /// The chance that the judges pick a proposal that fails over one that would deliver:
    /// what one more proposal risks (`scoring/seating.toml`, or what the ledger's audits
    /// measured).
    pub misjudge: f64,
    /// A bot idle for this many seated rounds has its sample drawn from its record held
    /// loosely and is tried again in the last seat (`scoring/seating.toml`).
    pub stale_after: u32,
    /// A bot whose latest placings beat its record this many times to 1 (its `surprise`) is
    /// held loosely too, and tried again before the idle ones (`scoring/seating.toml`).
    pub suspect_odds: f64,
    /// Whether the first drawn seat goes to the bot whose seat is worth most by its record
    /// (ralph's draw); without, every seat is drawn by the samples (the draw before anchors,
    /// which the seating benchmark keeps as a row).
    pub anchor: bool,
    /// What the round's proposals may cost at most, when a cap applies.
    pub budget_usd: Option<f64>,
    /// The run's seed: the round's draw is seeded from it, `issue` and `round`.
    pub seed: u64,
    /// The issue's number, so that runs with one configured seed draw afresh per issue (0
    /// leaves the seed as it is).
    pub issue: u64,
    pub round: u32,
    /// The issue's topic labels, which the posteriors were weighed by (recorded only).
    pub labels: Vec<String>,
}

/// A round's seating: everything the draw was given and what it decided, for the events, the
/// run report, the terminal, the pull request and the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seating {
    /// The seats there were (`[marketplace] seats`).
    pub seats: u32,
    /// The configured bots.
    pub of: u32,
    /// The run's seed (`--seed`, `[marketplace] seed`, else drawn); the round's draw uses it
    /// with the round's number.
    pub seed: u64,
    pub round: u32,
    /// The issue's topic labels the evidence was weighed by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// What the seated bots' proposals could cost, when a cap applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// What a merged pull request was taken to be worth; none in the seatings of the ralph
    /// that always filled every seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_per_merge: Option<f64>,
    /// When the ledger tuned `value_per_merge` (it was not configured): how, over which rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_tuned: Option<value::ValueFit>,
    /// Every configured bot: the seated ones in the order they were seated, then the others,
    /// best sample first, then those that cannot start.
    pub bots: Vec<SeatDraw>,
    /// What else bore on the draw (no cost known, every bot seated, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One bot in a round's draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeatDraw {
    pub bot_id: String,
    pub alpha: f64,
    pub beta: f64,
    /// The posterior's mean, `α / (α + β)`.
    pub mean: f64,
    /// Its Thompson sample this round; none for a bot that cannot start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<f64>,
    pub history: u32,
    /// The cost per proposal the draw counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The cost is not the bot's own measure (it has none): nothing for a newcomer, else the
    /// lowest of the others'.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_assumed: bool,
    pub seated: bool,
    pub reason: SeatReason,
    /// What its seat was worth: the value of a merge × the chance it added that a seated bot
    /// delivers, when it was seated, or would have added after the last seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worth_usd: Option<f64>,
    /// What its proposal cost this round, once known (after the proposals): how the ledger
    /// measures the cost of a seated bot that earned no event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_usd: Option<f64>,
}

/// Why a bot was seated or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatReason {
    /// Seated to be explored: a newcomer, or a suspect or idle bot tried in a last seat.
    Exploring,
    /// Seated by its record (the anchor) or by its sample and its price: its seat adds more
    /// than it costs.
    Drawn,
    /// Not seated: the seats went to bots whose seat added more, or what its own would add is
    /// worth less than its price.
    Outdrawn,
    /// Not seated: its sample would have seated it, the money would not.
    OverBudget,
    /// Not seated: it cannot start.
    Unavailable,
}

impl Seating {
    /// The seated bots, in the order they were seated.
    pub fn seated(&self) -> impl Iterator<Item = &SeatDraw> {
        self.bots.iter().filter(|b| b.seated)
    }

    /// Whether `bot` has a seat.
    pub fn is_seated(&self, bot: &str) -> bool {
        self.seated().any(|b| b.bot_id == bot)
    }

    /// `seated: 2 of 8 (at most 3) — alpha 0.62 $0.40, delta ≈$0.00 (exploring)`: the
    /// samples the bots drew and their prices; under a cap `seated: 2 of 8 within $1.00 — …`.
    pub fn line(&self) -> String {
        let within = self
            .budget_usd
            .map(|b| format!(" within ${b:.2}"))
            .unwrap_or_default();
        let count = self.seated().count();
        let most = if (count as u32) < self.seats && (count as u32) < self.of {
            format!(" (at most {})", self.seats)
        } else {
            String::new()
        };
        let priced = self.priced();
        let each: Vec<String> = self.seated().map(|b| b.describe(priced)).collect();
        let who = if each.is_empty() {
            "nobody".to_owned()
        } else {
            each.join(", ")
        };
        format!("seated: {count} of {}{most}{within} — {who}", self.of)
    }

    /// `not seated: beta 0.41 $0.60 (adds $0.12), epsilon 0.70 $1.20 (over budget), zeta
    /// (cannot start)`; `None` when every bot was seated.
    pub fn left_out_line(&self) -> Option<String> {
        let priced = self.priced();
        let each: Vec<String> = self
            .bots
            .iter()
            .filter(|b| !b.seated)
            .map(|b| b.describe(priced))
            .collect();
        (!each.is_empty()).then(|| format!("not seated: {}", each.join(", ")))
    }

    /// Whether prices bore on the draw: a cap, or a bot whose price is more than nothing.
    fn priced(&self) -> bool {
        self.budget_usd.is_some()
            || self
                .bots
                .iter()
                .any(|b| b.cost_usd.is_some_and(|c| c > 0.0))
    }
}

impl SeatDraw {
    /// `alpha 0.62`, `delta (exploring)`, `beta 0.70 $1.20 (over budget)`, `gamma 0.20 $0.30
    /// (adds $0.12)` when its seat would not pay.
    fn describe(&self, priced: bool) -> String {
        let mut out = self.bot_id.clone();
        if self.reason != SeatReason::Exploring {
            if let Some(s) = self.sample {
                out.push_str(&format!(" {s:.2}"));
            }
        }
        if priced {
            if let Some(c) = self.cost_usd {
                let assumed = if self.cost_assumed { "≈" } else { "" };
                out.push_str(&format!(" {assumed}${c:.2}"));
            }
        }
        let pays = match (self.worth_usd, self.cost_usd) {
            (Some(worth), Some(cost)) => worth > cost,
            _ => true,
        };
        match self.reason {
            SeatReason::Exploring => out.push_str(" (exploring)"),
            SeatReason::OverBudget => out.push_str(" (over budget)"),
            SeatReason::Unavailable => out.push_str(" (cannot start)"),
            SeatReason::Outdrawn if !pays => {
                let worth = self.worth_usd.unwrap_or(0.0);
                let sign = if worth < 0.0 { "−" } else { "" };
                out.push_str(&format!(" (adds {sign}${:.2})", worth.abs()));
            }
            SeatReason::Drawn | SeatReason::Outdrawn => {}
        }
        out
    }
}

/// The seed of round `round`'s draw for issue `issue` in a run seeded `seed`: a replan draws
/// afresh, and so does another issue under the same configured seed.
fn round_seed(seed: u64, issue: u64, round: u32) -> u64 {
    crate::mix::finalize(
        seed ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ issue.wrapping_mul(0xC2B2_AE3D_27D4_EB4F),
    )
}

/// Draws the round's seats from the candidates (in configuration order).
pub fn draw(candidates: &[Candidate], ask: &SeatAsk) -> Seating {
    let mut rng = SplitMix64::new(round_seed(ask.seed, ask.issue, ask.round));
    // One sample per bot that can start, in configuration order: the seed fixes them all.
    let samples: Vec<Option<f64>> = candidates
        .iter()
        .map(|c| {
            let (alpha, beta) = held(c, ask);
            c.unavailable
                .is_none()
                .then(|| beta_sample(&mut rng, alpha, beta))
        })
        .collect();
    let mut notes = Vec::new();
    let costs = prices(candidates, &mut notes);
    let any_known = candidates
        .iter()
        .any(|c| c.cost_usd.is_some() || c.cost_estimate_usd.is_some());
    if ask.budget_usd.is_some() && !any_known {
        notes.push(
            "no bot's cost per proposal is known yet: the cost cap cannot shape the seats"
                .to_owned(),
        );
    }
    let budget = ask.budget_usd.filter(|_| any_known);
    let plan = Plan::new(candidates, &samples, ask);
    for c in candidates {
        if let Some(n) = c.departed {
            notes.push(format!(
                "{}: its latest {n} round(s) depart from its record, which is set aside: it is explored afresh",
                c.bot_id
            ));
        }
    }
    let rate = (ask.value_per_merge, ask.misjudge);
    let choose = |budget: Option<f64>| plan.choose(&samples, &costs, rate, budget);
    let free = choose(None);
    let chosen = if budget.is_some() {
        choose(budget)
    } else {
        free.clone()
    };
    for &i in &chosen.tried {
        let c = &candidates[i];
        if suspect(c, ask) {
            notes.push(format!(
                "{}: its latest rounds beat its record {:.1} to 1: it is tried again",
                c.bot_id, c.surprise
            ));
        }
    }
    if chosen.seated.len() == plan.available.len() && !plan.available.is_empty() {
        notes.push("every bot that can start has a seat".to_owned());
    }
    let unseated = plan
        .available
        .iter()
        .copied()
        .filter(|i| !chosen.seated.contains(i));
    let cannot = (0..candidates.len()).filter(|&i| samples[i].is_none());
    let order: Vec<usize> = chosen
        .seated
        .iter()
        .copied()
        .chain(unseated)
        .chain(cannot)
        .collect();
    let bots = order
        .into_iter()
        .map(|i| {
            let reason = plan.reason(i, samples[i], &chosen, &free.seated);
            SeatDraw {
                bot_id: candidates[i].bot_id.clone(),
                alpha: candidates[i].alpha,
                beta: candidates[i].beta,
                mean: candidates[i].alpha / (candidates[i].alpha + candidates[i].beta),
                sample: samples[i],
                history: candidates[i].history,
                cost_usd: costs[i].0,
                cost_assumed: costs[i].1,
                seated: chosen.seated.contains(&i),
                reason,
                worth_usd: chosen.worth[i],
                spent_usd: None,
            }
        })
        .collect();
    Seating {
        seats: ask.seats,
        of: candidates.len() as u32,
        seed: ask.seed,
        round: ask.round,
        labels: ask.labels.clone(),
        budget_usd: budget,
        value_per_merge: Some(ask.value_per_merge),
        value_tuned: None,
        bots,
        notes,
    }
}

/// The cost per proposal each candidate counts, and whether it is assumed rather than its
/// own measure: its measure; else what its backend and model are known to cost; for a
/// newcomer without either, nothing, so that it is seated and its cost learnt rather than
/// guessed out for ever; for a bot with a history but no measure (its backend reports no
/// cost), the lowest of the others' measures (nothing when none is known, said in `notes`).
fn prices(candidates: &[Candidate], notes: &mut Vec<String>) -> Vec<(Option<f64>, bool)> {
    let lowest = candidates
        .iter()
        .filter(|c| c.unavailable.is_none())
        .filter_map(|c| c.cost_usd)
        .reduce(f64::min);
    if lowest.is_none() && candidates.iter().all(|c| c.cost_estimate_usd.is_none()) {
        notes.push(
            "no bot's cost per proposal is known yet: the seats are priced at nothing".to_owned(),
        );
    }
    candidates
        .iter()
        .map(|c| match (c.cost_usd, c.cost_estimate_usd) {
            (Some(cost), _) => (Some(cost), false),
            (None, Some(estimate)) => (Some(estimate), true),
            (None, None) if c.history == 0 => (Some(0.0), true),
            (None, None) => (Some(lowest.unwrap_or(0.0)), true),
        })
        .collect()
}

/// A uniform draw in (0, 1].
fn open_unit(rng: &mut SplitMix64) -> f64 {
    1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = open_unit(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * open_unit(rng)).cos()
}

/// A Gamma(shape, 1) draw: Marsaglia and Tsang's method, boosted below shape 1.
fn gamma_sample(rng: &mut SplitMix64, shape: f64) -> f64 {
    if shape < 1.0 {
        let boosted = gamma_sample(rng, shape + 1.0);
        return boosted * open_unit(rng).powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = open_unit(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A Beta(α, β) draw, as `X / (X + Y)` of two Gamma draws.
pub fn beta_sample(rng: &mut SplitMix64, alpha: f64, beta: f64) -> f64 {
    let x = gamma_sample(rng, alpha.max(1e-6));
    let y = gamma_sample(rng, beta.max(1e-6));
    if x + y > 0.0 {
        x / (x + y)
    } else {
        0.5
    }
}

mod plan;
#[cfg(test)]
mod tests;
pub mod value;
