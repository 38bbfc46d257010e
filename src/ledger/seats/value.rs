//! The value of a merge the ledger tunes when `[marketplace] value_per_merge` is not set
//! (docs/ledger.md#seats): the latest [`VALUE_ROUNDS`] seated rounds, each with the bots that
//! could start in it and have a history, as the ledger knows them now — their posterior for
//! the round's labels and their cost per proposal (else what the round counted) — priced by
//! `market::seating::value`: `value_multiple` times what a merge costs there when every bot
//! proposes. Pure: from the events, in fold order.

use super::{gather, SeatRecord};
use crate::ledger::Event;
use crate::market::seating::value::{fit_value, Offer, ValueFit};
use crate::market::seating::SeatReason;
use crate::market::SeatingParams;
use std::collections::{BTreeSet, HashMap};

/// How many of the latest seated rounds the value is tuned over.
pub const VALUE_ROUNDS: usize = 200;

/// Seated rounds the ledger needs before its tuned value replaces `scoring/seating.toml`'s
/// `value_per_merge`.
pub const MIN_VALUE_ROUNDS: usize = 10;

/// The value of a merge tuned from the latest seated rounds of `events` for `seats` seats and
/// the judges' `misjudge`; `None` before [`MIN_VALUE_ROUNDS`] rounds carried their seating.
pub fn tuned_value(
    params: &SeatingParams,
    bots: &[String],
    events: &[&Event],
    seats: u32,
    misjudge: f64,
) -> Option<ValueFit> {
    let mut seen = BTreeSet::new();
    let mut rounds = Vec::new();
    for e in events {
        if let (Some(s), Some(round)) = (&e.seating, e.round_number()) {
            if seen.insert((e.run_id.as_deref(), e.issue_number, round)) {
                rounds.push(s);
            }
        }
    }
    if rounds.len() < MIN_VALUE_ROUNDS {
        return None;
    }
    let latest = &rounds[rounds.len() - rounds.len().min(VALUE_ROUNDS)..];
    let g = gather(params, events);
    let mut known: HashMap<&[String], Vec<SeatRecord>> = HashMap::new();
    let offers: Vec<Vec<Offer>> = latest
        .iter()
        .map(|s| {
            let records = known
                .entry(&s.labels[..])
                .or_insert_with(|| g.records(params, bots, &s.labels));
            s.bots
                .iter()
                .filter(|b| b.reason != SeatReason::Unavailable)
                .filter_map(|b| {
                    // A bot without a history says nothing of what a seat adds.
                    let r = records
                        .iter()
                        .find(|r| r.bot_id == b.bot_id && r.history > 0)?;
                    Some(Offer {
                        theta: r.alpha / (r.alpha + r.beta),
                        cost: r.cost_per_proposal.or(b.cost_usd).unwrap_or(0.0),
                    })
                })
                .collect()
        })
        .collect();
    fit_value(&offers, seats as usize, misjudge, params.value_multiple)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Outcome;

    fn params() -> SeatingParams {
        crate::market::tables().seating
    }

    /// `n` rounds of `a` ($1.00 a proposal) and `b` ($0.10), both seated, `a` winning three in
    /// five and delivering.
    fn rounds(n: u64) -> Vec<Event> {
        let mut events = Vec::new();
        for issue in 1..=n {
            let a_wins = issue % 5 < 3;
            let seating = crate::fixtures::seating(&["a", "b"], &["a", "b"], &[], 1);
            for (bot, cost, won) in [("a", 1.0, a_wins), ("b", 0.1, !a_wins)] {
                let outcome = if won {
                    Outcome::Success
                } else {
                    Outcome::NotSelected
                };
                let mut e = Event::new(issue, bot, outcome, 0.0);
                e.run_id = Some(format!("run-{issue}"));
                e.round = Some(1);
                e.cost_usd = Some(cost);
                e.seating = Some(seating.clone());
                events.push(e);
            }
        }
        events
    }

    fn tuned(events: &[Event]) -> Option<ValueFit> {
        let refs: Vec<&Event> = events.iter().collect();
        let bots = ["a", "b"].map(String::from);
        tuned_value(&params(), &bots, &refs, 2, 0.05)
    }

    #[test]
    fn no_value_before_enough_seated_rounds() {
        assert_eq!(tuned(&rounds(MIN_VALUE_ROUNDS as u64 - 1)), None);
        // Events without a seating are no seated round.
        let mut events = rounds(MIN_VALUE_ROUNDS as u64);
        events.iter_mut().for_each(|e| e.seating = None);
        assert_eq!(tuned(&events), None);
    }

    #[test]
    fn the_value_is_the_multiple_of_what_a_merge_costs_when_both_bots_propose() {
        let fit = tuned(&rounds(MIN_VALUE_ROUNDS as u64)).unwrap();
        assert_eq!(fit.rounds, MIN_VALUE_ROUNDS as u32);
        assert_eq!(fit.multiple, params().value_multiple);
        // Both bots propose: $1.10 a round for a chance of about 0.76 that the winner
        // delivers (0.6 and 0.4, the misjudge risk taken off).
        assert!(
            (fit.every_bot_cost_usd - MIN_VALUE_ROUNDS as f64 * 1.1).abs() < 1e-9,
            "{fit:?}"
        );
        let per_merge = fit.every_bot_cost_usd / fit.every_bot_merges;
        assert!(per_merge > 1.3 && per_merge < 1.6, "{fit:?}");
        assert!(
            (fit.value_usd - fit.multiple * per_merge).abs() < 1e-9,
            "{fit:?}"
        );
        // At that value the dear strong bot's seat beside the cheap one pays (from about
        // $1.00 / (0.6 × 0.6 − 0.05 × 0.4 × 0.4) ≈ $2.84 on).
        assert!((fit.merges - fit.every_bot_merges).abs() < 1e-9, "{fit:?}");
        assert!(
            (fit.cost_usd - fit.every_bot_cost_usd).abs() < 1e-9,
            "{fit:?}"
        );
    }

    #[test]
    fn only_the_latest_rounds_count() {
        let events = rounds(VALUE_ROUNDS as u64 + 40);
        let fit = tuned(&events).unwrap();
        assert_eq!(fit.rounds, VALUE_ROUNDS as u32);
    }
}
