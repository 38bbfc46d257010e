//! Seats (`[marketplace] seats`, docs/specification.md §8.6): which of the configured bots
//! propose in a round. Each bot's chance of winning *and delivering* is a Beta posterior that
//! `ledger::seats` builds from the events; the draw is Thompson sampling — one sample from every
//! posterior, the best samples seated — so a bot that keeps losing is seated ever less, yet
//! never never, while a bot without any history gets a seat to be explored. Under a money cap
//! the seats are the ones that give the best chance that a seated bot delivers within it,
//! counted with each bot's measured cost per proposal. Pure: the inputs come in, the seating
//! comes out with every input and reason in it, and the seed makes it reproducible.

use crate::mix::SplitMix64;
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
    /// Its measured cost per proposal, in US dollars, when a proposal of it reported one.
    pub cost_usd: Option<f64>,
    /// Why it cannot propose at all (its backend could not be built): never seated.
    pub unavailable: Option<String>,
}

/// What one round's draw is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatAsk {
    /// `[marketplace] seats`.
    pub seats: u32,
    /// What the round's proposals may cost at most, when a cap applies.
    pub budget_usd: Option<f64>,
    /// The run's seed: the round's draw is seeded from it and `round`.
    pub seed: u64,
    pub round: u32,
    /// The topic labels, which the posteriors were weighed by (recorded only).
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
    /// The topic labels the evidence was weighed by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// What the seated bots' proposals could cost, when a cap applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
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
    /// What its proposal cost this round, once known (after the proposals): how the ledger
    /// measures the cost of a seated bot that earned no event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_usd: Option<f64>,
}

/// Why a bot was seated or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatReason {
    /// Seated without any history: a newcomer is explored.
    Exploring,
    /// Seated by its sample (and, under a cap, its cost).
    Drawn,
    /// Not seated: other bots drew better.
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

    /// `seated: 3 of 8 — alpha 0.62, gamma 0.55, delta (exploring)`, the samples the bots
    /// drew; under a cap `seated: 2 of 8 within $1.00 — alpha 0.62 $0.40, …`.
    pub fn line(&self) -> String {
        let within = self
            .budget_usd
            .map(|b| format!(" within ${b:.2}"))
            .unwrap_or_default();
        let priced = self.budget_usd.is_some();
        let each: Vec<String> = self.seated().map(|b| b.describe(priced)).collect();
        let who = if each.is_empty() {
            "nobody".to_owned()
        } else {
            each.join(", ")
        };
        format!(
            "seated: {} of {}{within} — {who}",
            self.seated().count(),
            self.of
        )
    }

    /// `not seated: beta 0.41, epsilon 0.70 (over budget), zeta (cannot start)`; `None` when
    /// every bot was seated.
    pub fn left_out_line(&self) -> Option<String> {
        let priced = self.budget_usd.is_some();
        let each: Vec<String> = self
            .bots
            .iter()
            .filter(|b| !b.seated)
            .map(|b| b.describe(priced))
            .collect();
        (!each.is_empty()).then(|| format!("not seated: {}", each.join(", ")))
    }
}

impl SeatDraw {
    /// `alpha 0.62`, `delta (exploring)`, `beta 0.70 $1.20 (over budget)`.
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
        match self.reason {
            SeatReason::Exploring => out.push_str(" (exploring)"),
            SeatReason::OverBudget => out.push_str(" (over budget)"),
            SeatReason::Unavailable => out.push_str(" (cannot start)"),
            SeatReason::Drawn | SeatReason::Outdrawn => {}
        }
        out
    }
}

/// The seed of round `round`'s draw in a run seeded `seed`: a replan draws afresh.
fn round_seed(seed: u64, round: u32) -> u64 {
    crate::mix::finalize(seed ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Draws the round's seats from the candidates (in configuration order).
pub fn draw(candidates: &[Candidate], ask: &SeatAsk) -> Seating {
    let mut rng = SplitMix64::new(round_seed(ask.seed, ask.round));
    // One sample per bot that can start, in configuration order: the seed fixes them all.
    let samples: Vec<Option<f64>> = candidates
        .iter()
        .map(|c| {
            c.unavailable
                .is_none()
                .then(|| beta_sample(&mut rng, c.alpha, c.beta))
        })
        .collect();
    let mut notes = Vec::new();
    let priced = prices(candidates, ask.budget_usd, &mut notes);
    let budget = ask.budget_usd.filter(|_| priced.is_some());
    let k = ask.seats as usize;
    let plan = Plan::new(candidates, &samples, k);
    if k >= plan.available.len() && !plan.available.is_empty() {
        notes.push("every bot that can start has a seat".to_owned());
    }
    let seated = match (budget, &priced) {
        (Some(budget), Some(costs)) => {
            within_budget(&plan.exploring, &plan.rest, &samples, costs, k, budget)
        }
        _ => plan.free.clone(),
    };
    let costs = priced.unwrap_or_else(|| measured(candidates));
    let unseated = plan
        .available
        .iter()
        .copied()
        .filter(|i| !seated.contains(i));
    let cannot = (0..candidates.len()).filter(|&i| samples[i].is_none());
    let order: Vec<usize> = seated
        .iter()
        .copied()
        .chain(unseated)
        .chain(cannot)
        .collect();
    Seating {
        seats: ask.seats,
        of: candidates.len() as u32,
        seed: ask.seed,
        round: ask.round,
        labels: ask.labels.clone(),
        budget_usd: budget,
        bots: order
            .into_iter()
            .map(|i| plan.describe(&candidates[i], i, samples[i], costs[i], &seated))
            .collect(),
        notes,
    }
}

/// How a round's seats go before any money is counted: the bots that can start, best sample
/// first; the newcomers explored; the rest; and the seats their samples alone would take.
struct Plan {
    available: Vec<usize>,
    exploring: Vec<usize>,
    rest: Vec<usize>,
    free: Vec<usize>,
}

impl Plan {
    fn new(candidates: &[Candidate], samples: &[Option<f64>], k: usize) -> Plan {
        let sample = |i: usize| samples[i].unwrap_or(f64::NEG_INFINITY);
        let mut available: Vec<usize> = (0..candidates.len())
            .filter(|&i| samples[i].is_some())
            .collect();
        available.sort_by(|a, b| sample(*b).total_cmp(&sample(*a)).then(a.cmp(b)));
        // Newcomers are explored first, but while any bot has a history one seat stays drawn.
        let anyone_known = available.iter().any(|&i| candidates[i].history > 0);
        let explore = if anyone_known { k.saturating_sub(1) } else { k };
        let exploring: Vec<usize> = available
            .iter()
            .copied()
            .filter(|&i| candidates[i].history == 0)
            .take(explore)
            .collect();
        let rest: Vec<usize> = available
            .iter()
            .copied()
            .filter(|i| !exploring.contains(i))
            .collect();
        let free = exploring
            .iter()
            .chain(rest.iter().take(k.saturating_sub(exploring.len())))
            .copied()
            .collect();
        Plan {
            available,
            exploring,
            rest,
            free,
        }
    }

    /// Candidate `c` (index `i`) in the record, with why it was seated or not.
    fn describe(
        &self,
        c: &Candidate,
        i: usize,
        sample: Option<f64>,
        (cost_usd, cost_assumed): (Option<f64>, bool),
        seated: &[usize],
    ) -> SeatDraw {
        let reason = match (seated.contains(&i), sample) {
            (_, None) => SeatReason::Unavailable,
            (true, _) if self.exploring.contains(&i) => SeatReason::Exploring,
            (true, _) => SeatReason::Drawn,
            (false, _) if self.free.contains(&i) => SeatReason::OverBudget,
            (false, _) => SeatReason::Outdrawn,
        };
        SeatDraw {
            bot_id: c.bot_id.clone(),
            alpha: c.alpha,
            beta: c.beta,
            mean: c.alpha / (c.alpha + c.beta),
            sample,
            history: c.history,
            cost_usd,
            cost_assumed,
            seated: seated.contains(&i),
            reason,
            spent_usd: None,
        }
    }
}

/// Each candidate's measured cost, not assumed.
fn measured(candidates: &[Candidate]) -> Vec<(Option<f64>, bool)> {
    candidates.iter().map(|c| (c.cost_usd, false)).collect()
}

/// The cost each candidate counts under a cap: its own measure; for a newcomer without one,
/// nothing, so that it is seated once and its cost learnt rather than guessed out for ever;
/// for a bot with a history but no measure (its backend reports no cost), the lowest of the
/// others' (`true`: assumed). `None` when there is no cap, or when no bot's cost is known yet
/// (said in `notes`): then the cap cannot shape the seats.
fn prices(
    candidates: &[Candidate],
    budget: Option<f64>,
    notes: &mut Vec<String>,
) -> Option<Vec<(Option<f64>, bool)>> {
    budget?;
    let known: Vec<f64> = candidates
        .iter()
        .filter(|c| c.unavailable.is_none())
        .filter_map(|c| c.cost_usd)
        .collect();
    if known.is_empty() {
        notes.push(
            "no bot's cost per proposal is known yet: the cost cap cannot shape the seats"
                .to_owned(),
        );
        return None;
    }
    let lowest = known.iter().copied().fold(f64::INFINITY, f64::min);
    Some(
        candidates
            .iter()
            .map(|c| match c.cost_usd {
                Some(cost) => (Some(cost), false),
                None if c.history == 0 => (Some(0.0), true),
                None => (Some(lowest), true),
            })
            .collect(),
    )
}

/// The seats within `budget`: the newcomers to explore first, each while its cost fits, then
/// the `rest` that give the best chance that a seated bot delivers. That chance,
/// `1 − Π (1 − θᵢ)` over the seated samples θ, is largest where `Σ −ln(1 − θᵢ)` is, so the
/// choice is a knapsack with additive values.
fn within_budget(
    exploring: &[usize],
    rest: &[usize],
    samples: &[Option<f64>],
    costs: &[(Option<f64>, bool)],
    k: usize,
    budget: f64,
) -> Vec<usize> {
    let cost = |i: usize| costs[i].0.unwrap_or(0.0);
    let mut left = budget;
    let mut seated = Vec::new();
    for &i in exploring {
        if cost(i) <= left {
            left -= cost(i);
            seated.push(i);
        }
    }
    let value = |i: usize| {
        let theta = samples[i].unwrap_or(0.0).clamp(1e-9, 1.0 - 1e-9);
        -(1.0 - theta).ln()
    };
    let items: Vec<(f64, f64)> = rest.iter().map(|&i| (value(i), cost(i))).collect();
    let mut chosen: Vec<usize> = knapsack(&items, k.saturating_sub(seated.len()), left)
        .into_iter()
        .map(|at| rest[at])
        .collect();
    // `rest` is in sample order: keep it.
    chosen.sort_by_key(|i| rest.iter().position(|r| r == i));
    seated.extend(chosen);
    seated
}

/// Steps the budget is counted in by [`knapsack`]: costs are rounded up to a step, so what
/// is chosen never costs more than the budget.
const BUDGET_STEPS: usize = 1000;

/// The indices of at most `k` of `items` (value, cost) whose costs sum to at most `budget`,
/// with the largest total value, the cheapest of equals: a 0/1 knapsack with a bound on the
/// number of items, by dynamic programming over [`BUDGET_STEPS`] steps of the budget.
pub fn knapsack(items: &[(f64, f64)], k: usize, budget: f64) -> Vec<usize> {
    let k = k.min(items.len());
    if k == 0 || budget.is_nan() || budget < 0.0 {
        return Vec::new();
    }
    let steps = BUDGET_STEPS;
    let step = budget / steps as f64;
    let units: Vec<Option<usize>> = items
        .iter()
        .map(|&(_, c)| {
            if c <= 0.0 {
                Some(0)
            } else if step <= 0.0 || c > budget {
                None
            } else {
                Some(((c / step) - 1e-9).ceil().max(0.0) as usize).filter(|u| *u <= steps)
            }
        })
        .collect();
    let width = steps + 1;
    let at = |j: usize, b: usize| j * width + b;
    let mut best = vec![f64::NEG_INFINITY; (k + 1) * width];
    best[at(0, 0)] = 0.0;
    let mut took = vec![false; items.len() * (k + 1) * width];
    for (i, &(value, _)) in items.iter().enumerate() {
        let Some(u) = units[i] else { continue };
        for j in (1..=k.min(i + 1)).rev() {
            for b in (u..=steps).rev() {
                let from = best[at(j - 1, b - u)];
                if from.is_finite() && from + value > best[at(j, b)] + 1e-12 {
                    best[at(j, b)] = from + value;
                    took[(i * (k + 1) + j) * width + b] = true;
                }
            }
        }
    }
    // The best value, then the fewest steps spent, then the fewest items.
    let mut end = (0, 0);
    for b in 0..=steps {
        for j in 0..=k {
            let (v, e) = (best[at(j, b)], best[at(end.0, end.1)]);
            if v > e + 1e-12 {
                end = (j, b);
            }
        }
    }
    let (mut j, mut b) = end;
    let mut chosen = Vec::new();
    for i in (0..items.len()).rev() {
        if j > 0 && took[(i * (k + 1) + j) * width + b] {
            chosen.push(i);
            b -= units[i].unwrap_or(0);
            j -= 1;
        }
    }
    chosen.reverse();
    chosen
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

#[cfg(test)]
mod tests;
