//! The leaderboard's advice on seats (docs/ledger.md#seats): over the latest seated rounds,
//! what the seats cost and merged against what seating every bot would have cost, and which
//! bots earned no seat of their own there (only seats to be explored, or none): candidates to
//! remove from `[[bots]]`. Pure: from the events, in fold order, and the bots' records.

use super::SeatRecord;
use crate::ledger::Event;
use crate::market::seating::{SeatReason, Seating};
use crate::market::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How many of the latest seated rounds the advice looks at.
pub const ADVICE_ROUNDS: usize = 50;

/// What the latest seated rounds say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeatAdvice {
    /// The rounds looked at, and the issues they were of.
    pub rounds: u32,
    pub issues: u32,
    /// What the seated bots' proposals cost, where known.
    pub spent_usd: f64,
    /// Pull requests of those issues that were merged.
    pub merged: u32,
    /// What every bot that could start would have cost in those rounds: each seated bot what
    /// it spent, each other its cost per proposal now, else what the round's draw counted for
    /// it; `None` when a bot's cost is unknown.
    pub every_bot_usd: Option<f64>,
    /// The bots whose cost is unknown, so that `every_bot_usd` could not be counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<String>,
    /// Configured bots that were never seated by their draw in those rounds (only explored,
    /// or never seated): candidates to remove from `[[bots]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unearned: Vec<String>,
}

/// The advice over the latest [`ADVICE_ROUNDS`] rounds whose events carry their seating;
/// `None` before any did.
pub fn advise(records: &[SeatRecord], events: &[&Event]) -> Option<SeatAdvice> {
    let mut seen = BTreeSet::new();
    let mut rounds: Vec<(u64, &Seating)> = Vec::new();
    for e in events {
        if let (Some(s), Some(round)) = (&e.seating, e.round_number()) {
            let key = (e.run_id.as_deref(), e.issue_number, round);
            if seen.insert(key) {
                rounds.push((e.issue_number, s));
            }
        }
    }
    if rounds.is_empty() {
        return None;
    }
    let latest = &rounds[rounds.len().saturating_sub(ADVICE_ROUNDS)..];
    let issues: BTreeSet<u64> = latest.iter().map(|(issue, _)| *issue).collect();
    let merged = events
        .iter()
        .filter(|e| e.outcome == Outcome::Merged && issues.contains(&e.issue_number))
        .count() as u32;
    let cost_now = |bot: &str| {
        records
            .iter()
            .find(|r| r.bot_id == bot)
            .and_then(|r| r.cost_per_proposal)
    };
    let mut spent = 0.0;
    let mut every = 0.0;
    let mut unpriced = BTreeSet::new();
    for (_, s) in latest {
        for b in s
            .bots
            .iter()
            .filter(|b| b.reason != SeatReason::Unavailable)
        {
            let cost = if b.seated {
                b.spent_usd.or(b.cost_usd.filter(|_| !b.cost_assumed))
            } else {
                None
            };
            if let Some(c) = cost {
                spent += c;
            }
            match cost.or_else(|| cost_now(&b.bot_id)).or(b.cost_usd) {
                Some(c) => every += c,
                None => {
                    unpriced.insert(b.bot_id.clone());
                }
            }
        }
    }
    let unearned = records
        .iter()
        .filter(|r| {
            !latest.iter().any(|(_, s)| {
                s.bots
                    .iter()
                    .any(|b| b.bot_id == r.bot_id && b.seated && b.reason == SeatReason::Drawn)
            })
        })
        .map(|r| r.bot_id.clone())
        .collect();
    Some(SeatAdvice {
        rounds: latest.len() as u32,
        issues: issues.len() as u32,
        spent_usd: spent,
        merged,
        every_bot_usd: unpriced.is_empty().then_some(every),
        unpriced: unpriced.into_iter().collect(),
        unearned,
    })
}

impl SeatAdvice {
    /// The advice in sentences, for the terminal.
    pub fn lines(&self) -> Vec<String> {
        let per_merge = if self.merged > 0 {
            format!(" (${:.2} each)", self.spent_usd / f64::from(self.merged))
        } else {
            String::new()
        };
        let mut out = vec![format!(
            "Over the latest {} round(s), {} issue(s): the seats' proposals cost ${:.2}; {} pull request(s) merged{per_merge}.",
            self.rounds, self.issues, self.spent_usd, self.merged
        )];
        match self.every_bot_usd {
            Some(every) if self.spent_usd > 0.0 => out.push(format!(
                "Every bot in every round would have cost about ${every:.2} ({:.1}× as much); what it would have merged the ledger cannot know.",
                every / self.spent_usd
            )),
            Some(every) => out.push(format!(
                "Every bot in every round would have cost about ${every:.2}."
            )),
            None => out.push(format!(
                "What every bot would have cost is unknown: no cost is known for {}.",
                self.unpriced.join(", ")
            )),
        }
        if !self.unearned.is_empty() {
            out.push(format!(
                "Not seated by the draw in these rounds (only explored, or never seated): {} — candidates to remove from `[[bots]]`.",
                self.unearned.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::seating::SeatDraw;

    fn record(bot: &str, cost: Option<f64>) -> SeatRecord {
        crate::fixtures::seat_record(bot, 3, cost)
    }

    /// A round of issue `issue` seating `seated` (each with what it spent) among a, b, c;
    /// `explored` was seated to be explored.
    fn round(issue: u64, seated: &[(&str, f64)], explored: &str) -> Event {
        let bots = ["a", "b", "c"]
            .iter()
            .map(|id| {
                let spent = seated.iter().find(|(s, _)| s == id).map(|(_, c)| *c);
                SeatDraw {
                    bot_id: id.to_string(),
                    alpha: 1.0,
                    beta: 1.0,
                    mean: 0.5,
                    sample: Some(0.5),
                    history: 3,
                    cost_usd: spent,
                    cost_assumed: false,
                    seated: spent.is_some(),
                    reason: match spent {
                        Some(_) if *id == explored => SeatReason::Exploring,
                        Some(_) => SeatReason::Drawn,
                        None => SeatReason::Outdrawn,
                    },
                    worth_usd: None,
                    spent_usd: spent,
                }
            })
            .collect();
        let mut e = Event::new(issue, seated[0].0, Outcome::NotSelected, 0.0);
        e.run_id = Some(format!("run-{issue}"));
        e.round = Some(1);
        e.seating = Some(Seating {
            seats: 3,
            of: 3,
            seed: 1,
            round: 1,
            labels: Vec::new(),
            budget_usd: None,
            value_per_merge: Some(10.0),
            value_tuned: None,
            bots,
            notes: Vec::new(),
        });
        e
    }

    #[test]
    fn the_advice_prices_the_seats_against_every_bot_and_names_the_unearned() {
        let mut merged = Event::new(2, "a", Outcome::Merged, 0.1);
        merged.round = None;
        let events = [
            round(1, &[("a", 0.5), ("c", 0.1)], "c"),
            round(1, &[("a", 0.5), ("c", 0.1)], "c"),
            round(2, &[("a", 0.7)], ""),
            merged,
        ];
        let refs: Vec<&Event> = events.iter().collect();
        let records = [
            record("a", Some(0.6)),
            record("b", Some(2.0)),
            record("c", Some(0.1)),
        ];
        let advice = advise(&records, &refs).unwrap();
        // The repeated event of a round counts once.
        assert_eq!((advice.rounds, advice.issues, advice.merged), (2, 2, 1));
        assert!((advice.spent_usd - 1.3).abs() < 1e-9, "{advice:?}");
        // Round 1: 0.5 + 2.0 + 0.1; round 2: 0.7 + 2.0 + 0.1.
        assert!((advice.every_bot_usd.unwrap() - 5.4).abs() < 1e-9);
        assert_eq!(advice.unearned, ["b", "c"]);
        let text = advice.lines().join("\n");
        assert!(
            text.contains("cost $1.30; 1 pull request(s) merged ($1.30 each)"),
            "{text}"
        );
        assert!(text.contains("about $5.40 (4.2× as much)"), "{text}");
        assert!(
            text.contains("only explored, or never seated): b, c"),
            "{text}"
        );
        // A bot whose cost is unknown: every bot's cost is not guessed.
        let unknown = [record("a", Some(0.6)), record("b", None), record("c", None)];
        let advice = advise(&unknown, &refs).unwrap();
        assert_eq!(advice.every_bot_usd, None);
        assert_eq!(advice.unpriced, ["b", "c"]);
        assert!(advice.lines()[1].contains("no cost is known for b, c"));
        assert_eq!(advise(&records, &[]), None);
    }
}
