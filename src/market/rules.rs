//! The outcome rules (docs/specification.md §8.1): from the facts of a finished round to the ledger
//! events it earns, each with its weight delta from `scoring/deltas.toml`. This is the only place
//! where those numbers are applied.

use super::tables::DeltaTable;
use super::{Outcome, Phase};
use serde::Serialize;

/// What happened in a round whose winner was implemented.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundFacts {
    pub phase: Phase,
    /// The bot whose proposal was implemented.
    pub winner: String,
    /// Whether the implementation passed verification.
    pub passed: bool,
    /// `1 − |proposal − implementation|` of the winner.
    pub accuracy: f64,
    /// Bots that submitted a valid proposal this round (the winner among them).
    pub proposers: Vec<String>,
    /// Every configured bot (for `collective_failure`).
    pub all_bots: Vec<String>,
    /// Bots whose failed proposal was resubmitted unchanged this round (replan only).
    pub resubmitted_same: Vec<String>,
}

/// One event to write: which bot, which outcome, which delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Award {
    pub bot_id: String,
    pub outcome: Outcome,
    pub weight_delta: f64,
    /// The accuracy bonus is part of `weight_delta`.
    pub accuracy_bonus: bool,
}

impl Award {
    fn new(bot: &str, outcome: Outcome, table: &DeltaTable) -> Award {
        Award {
            bot_id: bot.to_owned(),
            outcome,
            weight_delta: table.base(outcome),
            accuracy_bonus: false,
        }
    }
}

/// The events a round earns, in a fixed order: the winner's, then `not_selected` for the other
/// proposers in their order, then `resubmitted_same`, then `collective_failure` for every bot.
pub fn awards(facts: &RoundFacts, table: &DeltaTable) -> Vec<Award> {
    let mut out = Vec::new();
    let winner_outcome = match (facts.phase, facts.passed) {
        (Phase::Initial, true) => Outcome::Success,
        (Phase::Replan, true) => Outcome::ReplanSuccess,
        (Phase::Initial, false) => Outcome::Failure,
        (Phase::Replan, false) => Outcome::ReplanFailure,
    };
    let mut winner = Award::new(&facts.winner, winner_outcome, table);
    let bonus = table.accuracy_bonus;
    if facts.passed && facts.accuracy > bonus.threshold {
        winner.weight_delta += bonus.delta;
        winner.accuracy_bonus = true;
    }
    out.push(winner);
    if facts.passed {
        let mut seen = std::collections::BTreeSet::new();
        for bot in &facts.proposers {
            if bot != &facts.winner && seen.insert(bot) {
                out.push(Award::new(bot, Outcome::NotSelected, table));
            }
        }
    }
    if facts.phase == Phase::Replan {
        for bot in &facts.resubmitted_same {
            out.push(Award::new(bot, Outcome::ResubmittedSame, table));
        }
        if !facts.passed {
            for bot in &facts.all_bots {
                out.push(Award::new(bot, Outcome::CollectiveFailure, table));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::tables;

    fn facts(phase: Phase, passed: bool, accuracy: f64) -> RoundFacts {
        RoundFacts {
            phase,
            winner: "a".into(),
            passed,
            accuracy,
            proposers: vec!["a".into(), "b".into(), "c".into()],
            all_bots: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            resubmitted_same: vec![],
        }
    }

    fn summary(awards: &[Award]) -> Vec<(String, Outcome, f64)> {
        awards
            .iter()
            .map(|a| {
                (
                    a.bot_id.clone(),
                    a.outcome,
                    (a.weight_delta * 1000.0).round() / 1000.0,
                )
            })
            .collect()
    }

    fn row(bot: &str, o: Outcome, d: f64) -> (String, Outcome, f64) {
        (bot.into(), o, d)
    }

    #[test]
    fn initial_success_rewards_the_winner_and_charges_the_others() {
        let t = &tables().deltas;
        assert_eq!(
            summary(&awards(&facts(Phase::Initial, true, 0.5), t)),
            [
                row("a", Outcome::Success, 0.10),
                row("b", Outcome::NotSelected, -0.02),
                row("c", Outcome::NotSelected, -0.02),
            ]
        );
    }

    #[test]
    fn the_accuracy_bonus_needs_strictly_more_than_the_threshold() {
        let t = &tables().deltas;
        let at = |phase, acc| awards(&facts(phase, true, acc), t)[0].clone();
        assert!(!at(Phase::Initial, 0.85).accuracy_bonus);
        assert_eq!(at(Phase::Initial, 0.85).weight_delta, 0.10);
        let above = at(Phase::Initial, 0.850001);
        assert!(above.accuracy_bonus);
        assert!((above.weight_delta - 0.15).abs() < 1e-12);
        let replan = at(Phase::Replan, 0.9);
        assert_eq!(replan.outcome, Outcome::ReplanSuccess);
        assert!((replan.weight_delta - 0.17).abs() < 1e-12);
        assert_eq!(at(Phase::Replan, 0.8).weight_delta, 0.12);
        // A failed winner never gets the bonus, however accurate.
        let failed = awards(&facts(Phase::Initial, false, 0.99), t);
        assert!(!failed[0].accuracy_bonus);
    }

    #[test]
    fn initial_failure_charges_only_the_winner() {
        let t = &tables().deltas;
        assert_eq!(
            summary(&awards(&facts(Phase::Initial, false, 0.3), t)),
            [row("a", Outcome::Failure, -0.15)]
        );
    }

    #[test]
    fn replan_failure_charges_the_winner_and_every_bot() {
        let t = &tables().deltas;
        let mut f = facts(Phase::Replan, false, 0.3);
        f.resubmitted_same = vec!["b".into()];
        assert_eq!(
            summary(&awards(&f, t)),
            [
                row("a", Outcome::ReplanFailure, -0.20),
                row("b", Outcome::ResubmittedSame, -0.05),
                row("a", Outcome::CollectiveFailure, -0.05),
                row("b", Outcome::CollectiveFailure, -0.05),
                row("c", Outcome::CollectiveFailure, -0.05),
                row("d", Outcome::CollectiveFailure, -0.05),
            ]
        );
    }

    #[test]
    fn replan_success_with_a_resubmission() {
        let t = &tables().deltas;
        let mut f = facts(Phase::Replan, true, 0.2);
        f.winner = "b".into();
        f.resubmitted_same = vec!["a".into()];
        f.proposers = vec!["b".into(), "c".into()]; // a's resubmission was refused
        assert_eq!(
            summary(&awards(&f, t)),
            [
                row("b", Outcome::ReplanSuccess, 0.12),
                row("c", Outcome::NotSelected, -0.02),
                row("a", Outcome::ResubmittedSame, -0.05),
            ]
        );
    }
}
