//! What a merged pull request is worth to the seats when `[marketplace] value_per_merge` is not
//! set, tuned from the ledger (docs/ledger.md#seats): the least value at which the seats, as
//! the ledger now knows every bot (its posterior of winning and delivering, its cost per
//! proposal), would keep all but `tolerance` of the merges that seating at any price would
//! make, over the latest seated rounds. The value is the exchange rate of merges and dollars;
//! the ledger cannot know what a merge is worth to a team, but it can find the price at which
//! one more seat stops adding merges worth having: the same merges for the least money. Pure.

use serde::{Deserialize, Serialize};

/// One bot of a past round, as the ledger knows it now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offer {
    /// Its posterior mean of winning and delivering, for the round's labels.
    pub theta: f64,
    /// Its cost per proposal, in US dollars.
    pub cost: f64,
}

/// What the seats would have merged and cost over the rounds, at one value of a merge.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frontier {
    /// The value of a merge; infinite: seats at any price.
    value: f64,
    /// Expected merges, one round's chance that its winner delivers summed over the rounds.
    merges: f64,
    /// What the seated proposals would cost, in US dollars.
    cost: f64,
}

/// The tuned value, and what the seats would merge and cost at it and at any price, over the
/// rounds it was fitted to (recorded on the round's seating).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ValueFit {
    /// The rounds it was fitted to.
    pub rounds: u32,
    /// The value of a merge, in US dollars.
    pub value_usd: f64,
    /// The share of the merges of seats at any price it may give up.
    pub tolerance: f64,
    pub merges: f64,
    pub cost_usd: f64,
    pub any_price_merges: f64,
    pub any_price_cost_usd: f64,
}

impl ValueFit {
    /// `a merge is taken to be worth $12.16 (tuned over the latest 200 seated rounds: there,
    /// seats at that value make 99.6% of the merges of seats at any price for 48% of the
    /// money; `[marketplace] value_per_merge` sets a value)`.
    pub fn line(&self) -> String {
        let share = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 100.0 };
        format!(
            "a merge is taken to be worth ${:.2} (tuned over the latest {} seated rounds: there, seats at that value make {:.1}% of the merges of seats at any price for {:.0}% of the money; `[marketplace] value_per_merge` sets a value)",
            self.value_usd,
            self.rounds,
            share(self.merges, self.any_price_merges),
            share(self.cost_usd, self.any_price_cost_usd),
        )
    }
}

/// The values tried, in US dollars: from $1 up, each 5% more than the last, to about $100,000.
fn grid() -> impl Iterator<Item = f64> {
    (0..=236).map(|k| 1.05f64.powi(k))
}

/// The seats one round would take at `value`, as the draw takes them by record: the anchor
/// (the bot worth most, `value` × θ less its cost), then while a seat is left the bot whose
/// seat adds most, `value` × (θ × miss − `misjudge` × (1 − miss) × (1 − θ)) less its cost, while
/// that is more than nothing. Returns the chance that the round's winner delivers, and the
/// seats' cost.
fn round_at(bots: &[Offer], seats: usize, value: f64, misjudge: f64) -> (f64, f64) {
    let theta = |o: &Offer| o.theta.clamp(0.0, 1.0);
    let adds = |o: &Offer, miss: f64| theta(o) * miss - misjudge * (1.0 - miss) * (1.0 - theta(o));
    // At any price (an infinite value) a seat pays when it adds a chance; else by its net.
    let net = |chance: f64, cost: f64| {
        if value.is_finite() {
            value * chance - cost
        } else {
            chance
        }
    };
    let mut taken = vec![false; bots.len()];
    let (mut miss, mut cost) = (1.0, 0.0);
    for seat in 0..seats.min(bots.len()) {
        let best = (0..bots.len()).filter(|&i| !taken[i]).max_by(|&a, &b| {
            let gain = |i: usize| {
                if seat == 0 {
                    net(theta(&bots[i]), bots[i].cost)
                } else {
                    net(adds(&bots[i], miss), bots[i].cost)
                }
            };
            gain(a)
                .total_cmp(&gain(b))
                .then(bots[b].cost.total_cmp(&bots[a].cost))
                .then(b.cmp(&a))
        });
        let Some(i) = best else { break };
        let add = adds(&bots[i], miss);
        // A round always has its anchor; every further seat must pay.
        if seat > 0 && net(add, bots[i].cost) <= 0.0 {
            break;
        }
        taken[i] = true;
        miss *= 1.0 - theta(&bots[i]);
        cost += bots[i].cost;
    }
    (chance(bots, &taken, misjudge), cost)
}

/// The chance that the winner of the `taken` bots delivers: their adds summed best first, so
/// that the same seats have the same chance however they were taken (the draw's add of one
/// more seat depends on who sits already).
fn chance(bots: &[Offer], taken: &[bool], misjudge: f64) -> f64 {
    let mut thetas: Vec<f64> = (0..bots.len())
        .filter(|&i| taken[i])
        .map(|i| bots[i].theta.clamp(0.0, 1.0))
        .collect();
    thetas.sort_by(|a, b| b.total_cmp(a));
    let mut miss = 1.0;
    let mut chance = 0.0;
    for t in thetas {
        chance += t * miss - misjudge * (1.0 - miss) * (1.0 - t);
        miss *= 1.0 - t;
    }
    chance
}

/// What the seats would merge and cost over `rounds` at `value`.
fn frontier(rounds: &[Vec<Offer>], seats: usize, value: f64, misjudge: f64) -> Frontier {
    let (merges, cost) = rounds
        .iter()
        .map(|bots| round_at(bots, seats, value, misjudge))
        .fold((0.0, 0.0), |(m, c), (dm, dc)| (m + dm, c + dc));
    Frontier {
        value,
        merges,
        cost,
    }
}

/// The least value on the grid at which the seats keep all but `tolerance` (a share) of the
/// merges that seats at any price would make over `rounds`; `None` without a round, or when
/// the seats at any price would cost nothing (no cost is known: there is nothing to trade).
pub fn fit_value(
    rounds: &[Vec<Offer>],
    seats: usize,
    misjudge: f64,
    tolerance: f64,
) -> Option<ValueFit> {
    if rounds.is_empty() || seats == 0 {
        return None;
    }
    let any_price = frontier(rounds, seats, f64::INFINITY, misjudge);
    if any_price.cost <= 0.0 {
        return None;
    }
    let enough = any_price.merges * (1.0 - tolerance);
    let tuned = grid()
        .map(|v| frontier(rounds, seats, v, misjudge))
        .find(|f| f.merges >= enough - 1e-9)
        // Beyond the grid's last value every seat that adds a chance pays: call it that.
        .unwrap_or(Frontier {
            value: grid().last().unwrap_or(1.0),
            ..any_price
        });
    Some(ValueFit {
        rounds: rounds.len() as u32,
        value_usd: tuned.value,
        tolerance,
        merges: tuned.merges,
        cost_usd: tuned.cost,
        any_price_merges: any_price.merges,
        any_price_cost_usd: any_price.cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(theta: f64, cost: f64) -> Offer {
        Offer { theta, cost }
    }

    #[test]
    fn the_anchor_is_the_bot_worth_most_and_always_seated() {
        let bots = [offer(0.6, 1.0), offer(0.5, 0.1)];
        // At $2 the strong bot nets 0.2, the cheap one 0.9: the cheap one anchors.
        let (chance, cost) = round_at(&bots, 1, 2.0, 0.0);
        assert_eq!((chance, cost), (0.5, 0.1));
        // At $100 the strong one nets more.
        assert_eq!(round_at(&bots, 1, 100.0, 0.0), (0.6, 1.0));
        // A value too low for any seat to pay still seats the anchor.
        assert_eq!(round_at(&bots, 2, 0.01, 0.0), (0.5, 0.1));
    }

    #[test]
    fn a_seat_is_added_only_while_it_pays() {
        let bots = [offer(0.5, 0.0), offer(0.5, 1.0)];
        // The second adds 0.5 × 0.5 = 0.25 of a merge for $1: it pays above $4.
        assert_eq!(round_at(&bots, 2, 3.9, 0.0), (0.5, 0.0));
        assert_eq!(round_at(&bots, 2, 4.1, 0.0), (0.75, 1.0));
        // No more seats than asked.
        assert_eq!(round_at(&bots, 1, 1e6, 0.0), (0.5, 0.0));
    }

    #[test]
    fn the_misjudge_risk_can_make_a_seat_a_loss_at_any_price() {
        // With one bot at 0.9, a 0.1 bot adds 0.1 × 0.1 − 0.2 × 0.9 × 0.9 < 0.
        let bots = [offer(0.9, 0.0), offer(0.1, 0.0)];
        let (chance, _) = round_at(&bots, 2, f64::INFINITY, 0.2);
        assert_eq!(chance, 0.9);
        let (chance, _) = round_at(&bots, 2, f64::INFINITY, 0.0);
        assert!((chance - 0.91).abs() < 1e-12);
    }

    #[test]
    fn the_same_seats_have_the_same_chance_whoever_anchors() {
        let bots = [offer(0.6, 1.0), offer(0.4, 0.1)];
        // At $3.50 the cheap bot anchors and the dear one pays beside it; at any price the
        // dear one anchors. The same two seats: the same chance.
        let cheap_first = round_at(&bots, 2, 3.5, 0.05);
        let dear_first = round_at(&bots, 2, f64::INFINITY, 0.05);
        assert_eq!(cheap_first, dear_first);
        assert!((cheap_first.0 - (0.6 + 0.4 * 0.4 - 0.05 * 0.6 * 0.6)).abs() < 1e-12);
    }

    #[test]
    fn the_fit_is_the_least_value_that_keeps_the_merges() {
        let rounds = vec![vec![offer(0.5, 0.0), offer(0.5, 1.0)]; 10];
        let fit = fit_value(&rounds, 2, 0.0, 0.01).unwrap();
        assert_eq!(fit.rounds, 10);
        assert!((fit.any_price_merges - 7.5).abs() < 1e-9);
        assert!((fit.any_price_cost_usd - 10.0).abs() < 1e-9);
        // The second seat pays from $4 on: the least grid value above it.
        assert!(fit.value_usd > 4.0 && fit.value_usd < 4.0 * 1.05 + 1e-9);
        assert!((fit.merges - 7.5).abs() < 1e-9);
        // Giving up a third of the merges, the anchor alone will do, at the grid's first value.
        let fit = fit_value(&rounds, 2, 0.0, 0.34).unwrap();
        assert_eq!(fit.value_usd, 1.0);
        assert!((fit.merges - 5.0).abs() < 1e-9);
        assert_eq!(fit.cost_usd, 0.0);
    }

    #[test]
    fn the_fit_follows_the_price_level() {
        let cheap = vec![vec![offer(0.6, 0.1), offer(0.4, 0.1), offer(0.3, 0.1)]; 5];
        let dear: Vec<Vec<Offer>> = cheap
            .iter()
            .map(|r| r.iter().map(|o| offer(o.theta, o.cost * 10.0)).collect())
            .collect();
        let a = fit_value(&cheap, 3, 0.05, 0.005).unwrap().value_usd;
        let b = fit_value(&dear, 3, 0.05, 0.005).unwrap().value_usd;
        assert!(b / a > 9.0 && b / a < 11.1, "{a} {b}");
    }

    #[test]
    fn nothing_to_fit() {
        assert_eq!(fit_value(&[], 3, 0.05, 0.01), None);
        assert_eq!(fit_value(&[vec![offer(0.5, 1.0)]], 0, 0.05, 0.01), None);
        // A round without a bot, or bots that cost nothing: there is nothing to trade.
        assert_eq!(fit_value(&[vec![]], 3, 0.05, 0.01), None);
        let free = vec![vec![offer(0.5, 0.0), offer(0.4, 0.0)]; 4];
        assert_eq!(fit_value(&free, 3, 0.05, 0.01), None);
    }

    #[test]
    fn the_line_says_the_value_and_what_it_keeps() {
        let rounds = vec![vec![offer(0.5, 0.0), offer(0.5, 1.0)]; 10];
        let line = fit_value(&rounds, 2, 0.0, 0.34).unwrap().line();
        assert!(
            line.starts_with("a merge is taken to be worth $1.00 (tuned over the latest 10 seated rounds: there, seats at that value make 66.7% of the merges of seats at any price for 0% of the money;"),
            "{line}"
        );
    }

    #[test]
    fn a_value_beyond_the_grid_is_its_last() {
        // The second bot adds a chance of 1e-6 for $1: only a value of $10⁶ pays for it.
        let rounds = vec![vec![offer(0.999_999, 0.0), offer(0.5, 1.0)]; 3];
        let fit = fit_value(&rounds, 2, 0.0, 0.0).unwrap();
        assert!(fit.value_usd > 90_000.0, "{}", fit.value_usd);
        assert!((fit.merges - fit.any_price_merges).abs() < 1e-12);
    }
}
