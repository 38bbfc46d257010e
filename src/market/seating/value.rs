//! What a merged pull request is worth to the seats when `[marketplace] value_per_merge` is not
//! set, tuned from the ledger (docs/ledger.md#seats): `value_multiple` times what a merge costs
//! when every bot proposes, over the latest seated rounds, as the ledger now knows every bot
//! (its posterior of winning and delivering, its cost per proposal). The value is the exchange
//! rate of merges and dollars: the ledger cannot know what a merge is worth to a team, but it
//! knows what a merge cost before seats were priced, and one rate for every round buys the most
//! merges for the money. So the rate follows the price level of the bots, and not which of
//! them is strong this month. Pure.

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
    /// Expected merges, one round's chance that its winner delivers summed over the rounds.
    merges: f64,
    /// What the seated proposals would cost, in US dollars.
    cost: f64,
}

/// The tuned value, and what the seats would merge and cost at it and with every bot
/// proposing, over the rounds it was tuned on (recorded on the round's seating).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ValueFit {
    /// The rounds it was tuned on.
    pub rounds: u32,
    /// The value of a merge, in US dollars.
    pub value_usd: f64,
    /// How many times what a merge costs when every bot proposes the value is
    /// (`scoring/seating.toml`'s `value_multiple`); 0 on a seating recorded before it was.
    #[serde(default)]
    pub multiple: f64,
    /// Expected merges and cost of the seats at this value.
    pub merges: f64,
    pub cost_usd: f64,
    /// Expected merges and cost with every bot proposing; 0 on a seating recorded before.
    #[serde(default)]
    pub every_bot_merges: f64,
    #[serde(default)]
    pub every_bot_cost_usd: f64,
}

impl ValueFit {
    /// `a merge is taken to be worth $16.20 (5 × the $3.24 a merge costs when every bot
    /// proposes, over the latest 200 seated rounds; at this value the seats make 99.1% of those
    /// merges for 48% of the money; `[marketplace] value_per_merge` sets a value)`.
    pub fn line(&self) -> String {
        let share = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 100.0 };
        // A seating recorded before the multiple was says only where it was tuned.
        if !(self.multiple > 0.0 && self.every_bot_merges > 0.0) {
            return format!(
                "a merge is taken to be worth ${:.2} (tuned over the latest {} seated rounds; `[marketplace] value_per_merge` sets a value)",
                self.value_usd, self.rounds
            );
        }
        format!(
            "a merge is taken to be worth ${:.2} ({} × the ${:.2} a merge costs when every bot proposes, over the latest {} seated rounds; at this value the seats make {:.1}% of those merges for {:.0}% of the money; `[marketplace] value_per_merge` sets a value)",
            self.value_usd,
            self.multiple,
            self.every_bot_cost_usd / self.every_bot_merges,
            self.rounds,
            share(self.merges, self.every_bot_merges),
            share(self.cost_usd, self.every_bot_cost_usd),
        )
    }
}

/// The seats one round would take at `value`, as the draw takes them by record: the anchor
/// (the bot worth most, `value` × θ less its cost), then while a seat is left the bot whose
/// seat adds most, `value` × (θ × miss − `misjudge` × (1 − miss) × (1 − θ)) less its cost, while
/// that is more than nothing. Returns the chance that the round's winner delivers, and the
/// seats' cost.
fn round_at(bots: &[Offer], seats: usize, value: f64, misjudge: f64) -> (f64, f64) {
    let theta = |o: &Offer| o.theta.clamp(0.0, 1.0);
    let adds = |o: &Offer, miss: f64| theta(o) * miss - misjudge * (1.0 - miss) * (1.0 - theta(o));
    let net = |chance: f64, cost: f64| value * chance - cost;
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
    Frontier { merges, cost }
}

/// What every bot proposing would merge and cost over `rounds`.
fn every_bot(rounds: &[Vec<Offer>], misjudge: f64) -> Frontier {
    rounds.iter().fold(
        Frontier {
            merges: 0.0,
            cost: 0.0,
        },
        |f, bots| Frontier {
            merges: f.merges + chance(bots, &vec![true; bots.len()], misjudge),
            cost: f.cost + bots.iter().map(|o| o.cost).sum::<f64>(),
        },
    )
}

/// `multiple` times what a merge costs over `rounds` when every bot proposes, and what the
/// `seats` would merge and cost at that value; `None` without a round or a seat, or when every
/// bot would merge nothing or cost nothing (no cost is known: there is nothing to trade).
pub fn fit_value(
    rounds: &[Vec<Offer>],
    seats: usize,
    misjudge: f64,
    multiple: f64,
) -> Option<ValueFit> {
    if rounds.is_empty() || seats == 0 {
        return None;
    }
    let every = every_bot(rounds, misjudge);
    if every.cost <= 0.0 || every.merges <= 0.0 {
        return None;
    }
    let value = multiple * every.cost / every.merges;
    let tuned = frontier(rounds, seats, value, misjudge);
    Some(ValueFit {
        rounds: rounds.len() as u32,
        value_usd: value,
        multiple,
        merges: tuned.merges,
        cost_usd: tuned.cost,
        every_bot_merges: every.merges,
        every_bot_cost_usd: every.cost,
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
    fn the_misjudge_risk_can_make_a_free_seat_a_loss() {
        // With one bot at 0.9, a 0.1 bot adds 0.1 × 0.1 − 0.2 × 0.9 × 0.9 < 0.
        let bots = [offer(0.9, 0.0), offer(0.1, 0.0)];
        let (chance, _) = round_at(&bots, 2, 1e6, 0.2);
        assert_eq!(chance, 0.9);
        let (chance, _) = round_at(&bots, 2, 1e6, 0.0);
        assert!((chance - 0.91).abs() < 1e-12);
    }

    #[test]
    fn the_same_seats_have_the_same_chance_whoever_anchors() {
        let bots = [offer(0.6, 1.0), offer(0.4, 0.1)];
        // At $3.50 the cheap bot anchors and the dear one pays beside it; at $1,000,000 the
        // dear one anchors. The same two seats: the same chance.
        let cheap_first = round_at(&bots, 2, 3.5, 0.05);
        let dear_first = round_at(&bots, 2, 1e6, 0.05);
        assert_eq!(cheap_first, dear_first);
        assert!((cheap_first.0 - (0.6 + 0.4 * 0.4 - 0.05 * 0.6 * 0.6)).abs() < 1e-12);
    }

    #[test]
    fn the_value_is_the_multiple_of_what_a_merge_costs_when_every_bot_proposes() {
        let rounds = vec![vec![offer(0.5, 0.0), offer(0.5, 1.0)]; 10];
        // Both bots propose: 0.75 of a merge for $1 a round, $4/3 a merge.
        let fit = fit_value(&rounds, 2, 0.0, 2.0).unwrap();
        assert_eq!(fit.rounds, 10);
        assert_eq!(fit.multiple, 2.0);
        assert!((fit.every_bot_merges - 7.5).abs() < 1e-9);
        assert!((fit.every_bot_cost_usd - 10.0).abs() < 1e-9);
        assert!((fit.value_usd - 8.0 / 3.0).abs() < 1e-9);
        // The second seat pays above $4: at $2.67 the anchor sits alone.
        assert!((fit.merges - 5.0).abs() < 1e-9);
        assert_eq!(fit.cost_usd, 0.0);
        // At four times, $5.33: both sit.
        let fit = fit_value(&rounds, 2, 0.0, 4.0).unwrap();
        assert!((fit.value_usd - 16.0 / 3.0).abs() < 1e-9);
        assert!((fit.merges - 7.5).abs() < 1e-9);
        assert!((fit.cost_usd - 10.0).abs() < 1e-9);
    }

    #[test]
    fn every_bot_counts_even_one_that_no_seat_would_take() {
        // A weak dear bot: its misjudge risk takes more than it adds, and its price counts.
        let rounds = vec![vec![offer(0.9, 1.0), offer(0.1, 3.0)]; 2];
        let fit = fit_value(&rounds, 2, 0.2, 1.0).unwrap();
        let merges = 0.9 + 0.1 * 0.1 - 0.2 * 0.9 * 0.9;
        assert!((fit.every_bot_merges - 2.0 * merges).abs() < 1e-12);
        assert!((fit.value_usd - 4.0 / merges).abs() < 1e-9);
        // At that value only the strong bot sits: more merges than every bot, for a quarter.
        assert!((fit.merges - 1.8).abs() < 1e-12);
        assert!((fit.cost_usd - 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_value_follows_the_price_level_not_the_order_of_the_bots() {
        let cheap = vec![vec![offer(0.6, 0.1), offer(0.4, 0.1), offer(0.3, 0.1)]; 5];
        let scaled = |k: f64| -> Vec<Vec<Offer>> {
            cheap
                .iter()
                .map(|r| r.iter().rev().map(|o| offer(o.theta, o.cost * k)).collect())
                .collect()
        };
        let a = fit_value(&cheap, 3, 0.05, 5.0).unwrap();
        let b = fit_value(&scaled(10.0), 3, 0.05, 5.0).unwrap();
        assert!(
            (b.value_usd / a.value_usd - 10.0).abs() < 1e-9,
            "{a:?} {b:?}"
        );
        // The same seats at either price level.
        assert!((a.merges - b.merges).abs() < 1e-9);
        let c = fit_value(&scaled(1.0), 3, 0.05, 5.0).unwrap();
        assert!((c.value_usd - a.value_usd).abs() < 1e-9 && (c.merges - a.merges).abs() < 1e-9);
    }

    #[test]
    fn nothing_to_fit() {
        assert_eq!(fit_value(&[], 3, 0.05, 5.0), None);
        assert_eq!(fit_value(&[vec![offer(0.5, 1.0)]], 0, 0.05, 5.0), None);
        // A round without a bot, bots that cost nothing, or bots that never deliver: there is
        // nothing to trade.
        assert_eq!(fit_value(&[vec![]], 3, 0.05, 5.0), None);
        let free = vec![vec![offer(0.5, 0.0), offer(0.4, 0.0)]; 4];
        assert_eq!(fit_value(&free, 3, 0.05, 5.0), None);
        let hopeless = vec![vec![offer(0.0, 1.0)]; 4];
        assert_eq!(fit_value(&hopeless, 3, 0.05, 5.0), None);
    }

    #[test]
    fn the_line_says_the_value_and_where_it_comes_from() {
        let rounds = vec![vec![offer(0.5, 0.0), offer(0.5, 1.0)]; 10];
        let line = fit_value(&rounds, 2, 0.0, 2.0).unwrap().line();
        assert!(
            line.starts_with("a merge is taken to be worth $2.67 (2 × the $1.33 a merge costs when every bot proposes, over the latest 10 seated rounds; at this value the seats make 66.7% of those merges for 0% of the money;"),
            "{line}"
        );
    }

    #[test]
    fn a_seating_recorded_before_the_multiple_still_reads() {
        let old = r#"{"rounds":40,"value_usd":9.91,"tolerance":0.005,"merges":30.0,"cost_usd":12.0,"any_price_merges":30.1,"any_price_cost_usd":12.5}"#;
        let fit: ValueFit = serde_json::from_str(old).unwrap();
        assert_eq!((fit.rounds, fit.value_usd, fit.multiple), (40, 9.91, 0.0));
        assert_eq!(
            fit.line(),
            "a merge is taken to be worth $9.91 (tuned over the latest 40 seated rounds; `[marketplace] value_per_merge` sets a value)"
        );
    }
}
