//! How good the marketplace's decisions are, from the events: the judges' order flip rate
//! (`judge_order`, `[arbiter] order_swaps`) and what the audited rounds say about selection
//! (`audit`, `[marketplace] audit_rate`): how often the winner passed when either of the top
//! two did, the rounds where only the runner-up passed, and what the audits cost.

use super::event::Event;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How many of the latest rounds judged in both orders the flip rate looks at.
const FLIP_WINDOW: usize = 20;

/// The decision figures of the leaderboard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    pub order: OrderHealth,
    pub audits: AuditSummary,
}

/// The judges' order bias over the latest rounds judged in both orders.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrderHealth {
    /// Rounds looked at: the latest [`FLIP_WINDOW`] judged in both orders.
    pub rounds: u64,
    /// Of those, the rounds whose forward and reversed readings had different winners.
    pub flipped: u64,
    /// `flipped / rounds`; `None` before any round was judged in both orders.
    pub flip_rate: Option<f64>,
    /// The mean disagreement of the proposals of those rounds (0 to 1).
    pub mean_disagreement: Option<f64>,
}

/// What the audited rounds say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditSummary {
    /// Rounds whose runner-up was implemented and judged.
    pub audited: u64,
    /// Of those, rounds where the winner or the runner-up passed.
    pub either_passed: u64,
    /// Of those, rounds where the winner passed.
    pub winner_passed: u64,
    /// Rounds where the runner-up passed.
    pub runner_up_passed: u64,
    /// `winner_passed / either_passed`: how often the marketplace picked a passing proposal
    /// when one of the top two would pass. `None` while no audited round had a pass.
    pub selection_efficiency: Option<f64>,
    /// Rounds where the runner-up passed and the winner failed, oldest first.
    pub regret: Vec<RegretRound>,
    /// What the audits cost: known money, tokens in and out, time.
    pub cost_usd: Option<f64>,
    pub tokens: u64,
    pub duration_ms: u64,
}

/// An audited round the marketplace got wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegretRound {
    pub issue: u64,
    #[serde(default)]
    pub run_id: Option<String>,
    pub round: u32,
    pub winner: String,
    pub runner_up: String,
}

/// What one round's events say about the judges' reading order.
#[derive(Default)]
struct RoundOrder {
    first_seen: usize,
    top_flipped: bool,
    disagreements: Vec<f64>,
}

/// Reads the decision figures from the events, in fold order. An audit is on the winner's
/// event, which also says whether the winner passed; the order check is on every event of
/// the round.
pub fn decisions<'a>(events: impl IntoIterator<Item = &'a Event>) -> Decisions {
    let mut rounds: HashMap<(Option<&'a str>, u64, u32), RoundOrder> = HashMap::new();
    let mut audits = AuditSummary::default();
    let mut cost: Option<f64> = None;
    for (i, e) in events.into_iter().enumerate() {
        if let (Some(a), true) = (&e.audit, e.outcome.is_implementation()) {
            let won = e.outcome.is_success();
            audits.audited += 1;
            audits.runner_up_passed += u64::from(a.passed);
            if won || a.passed {
                audits.either_passed += 1;
                audits.winner_passed += u64::from(won);
            }
            if a.passed && !won {
                audits.regret.push(RegretRound {
                    issue: e.issue_number,
                    run_id: e.run_id.clone(),
                    round: e.round_number().unwrap_or(0),
                    winner: e.bot_id.clone(),
                    runner_up: a.runner_up.clone(),
                });
            }
            if let Some(c) = a.cost_usd {
                cost = Some(cost.unwrap_or(0.0) + c);
            }
            audits.tokens += a.tokens.map_or(0, |t| t.input + t.output);
            audits.duration_ms += a.duration_ms.unwrap_or(0);
        }
        let (Some(o), Some(round)) = (&e.judge_order, e.round_number()) else {
            continue;
        };
        let run = e.run_id.as_deref();
        let key = (run, if run.is_some() { 0 } else { e.issue_number }, round);
        let facts = rounds.entry(key).or_insert_with(|| RoundOrder {
            first_seen: i,
            ..RoundOrder::default()
        });
        facts.top_flipped |= o.top_flipped;
        facts.disagreements.extend(o.disagreement);
    }
    audits.selection_efficiency = (audits.either_passed > 0)
        .then(|| audits.winner_passed as f64 / audits.either_passed as f64);
    audits.cost_usd = cost;

    let mut ordered: Vec<RoundOrder> = rounds.into_values().collect();
    ordered.sort_by_key(|f| f.first_seen);
    let recent: Vec<&RoundOrder> = ordered.iter().rev().take(FLIP_WINDOW).collect();
    let flipped = recent.iter().filter(|f| f.top_flipped).count() as u64;
    let gaps: Vec<f64> = recent
        .iter()
        .flat_map(|f| f.disagreements.iter().copied())
        .collect();
    Decisions {
        order: OrderHealth {
            rounds: recent.len() as u64,
            flipped,
            flip_rate: (!recent.is_empty()).then(|| flipped as f64 / recent.len() as f64),
            mean_disagreement: (!gaps.is_empty())
                .then(|| gaps.iter().sum::<f64>() / gaps.len() as f64),
        },
        audits,
    }
}

impl Decisions {
    /// The order check in a sentence.
    pub fn describe_order(&self) -> String {
        let o = &self.order;
        match o.flip_rate {
            None => "no round judged in both orders yet (`[arbiter] order_swaps = 1`)".to_owned(),
            Some(rate) => format!(
                "the top proposal flipped with the reading order in {} of the last {} rounds judged both ways (flip rate {rate:.2}){}",
                o.flipped,
                o.rounds,
                o.mean_disagreement
                    .map(|d| format!("; mean disagreement {d:.2}"))
                    .unwrap_or_default()
            ),
        }
    }

    /// The audits in a sentence.
    pub fn describe_audits(&self) -> String {
        let a = &self.audits;
        if a.audited == 0 {
            return "no audited round yet (`[marketplace] audit_rate`)".to_owned();
        }
        let efficiency = match a.selection_efficiency {
            Some(e) => format!(
                "selection efficiency {e:.2} (the winner passed in {} of the {} rounds where either of the top two passed)",
                a.winner_passed, a.either_passed
            ),
            None => "no selection efficiency yet: neither of the top two passed in any".to_owned(),
        };
        let cost = match a.cost_usd {
            Some(c) => format!("${c:.2}, "),
            None => String::new(),
        };
        format!(
            "{} audited round(s): {efficiency}; {} regret round(s); audits cost {cost}{} tokens, {:.1} s",
            a.audited,
            a.regret.len(),
            a.tokens,
            a.duration_ms as f64 / 1000.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{AuditOutcome, JudgeOrder, Tokens};
    use crate::market::Outcome;

    fn event(run: &str, round: u32, bot: &str, outcome: Outcome) -> Event {
        let mut e = Event::new(1, bot, outcome, 0.0);
        e.run_id = Some(run.into());
        e.round = Some(round);
        e
    }

    fn audited(run: &str, winner_passed: bool, runner_up_passed: bool) -> Vec<Event> {
        let outcome = if winner_passed {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        let mut w = event(run, 1, "a", outcome);
        w.audit = Some(AuditOutcome {
            runner_up: "b".into(),
            proposal_scores: None,
            passed: runner_up_passed,
            attempts: 1,
            cost_usd: Some(0.5),
            tokens: Some(Tokens {
                input: 100,
                output: 10,
            }),
            duration_ms: Some(2000),
        });
        vec![w, event(run, 1, "b", Outcome::NotSelected)]
    }

    #[test]
    fn selection_efficiency_counts_rounds_where_either_of_the_top_two_passed() {
        let events: Vec<Event> = [
            audited("r1", true, true),
            audited("r2", true, false),
            audited("r3", false, true),
            audited("r4", false, false),
        ]
        .concat();
        let d = decisions(&events);
        let a = &d.audits;
        assert_eq!((a.audited, a.either_passed, a.winner_passed), (4, 3, 2));
        assert_eq!(a.runner_up_passed, 2);
        assert!((a.selection_efficiency.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.regret.len(), 1);
        assert_eq!(a.regret[0].run_id.as_deref(), Some("r3"));
        assert_eq!(
            (a.regret[0].winner.as_str(), a.regret[0].runner_up.as_str()),
            ("a", "b")
        );
        assert_eq!(a.cost_usd, Some(2.0));
        assert_eq!((a.tokens, a.duration_ms), (440, 8000));
        assert!(
            d.describe_audits().contains("selection efficiency 0.67"),
            "{}",
            d.describe_audits()
        );
    }

    #[test]
    fn without_audits_or_swaps_the_sentences_say_how_to_get_them() {
        let d = decisions(&[event("r", 1, "a", Outcome::Success)]);
        assert_eq!(d.audits.audited, 0);
        assert!(d.describe_audits().contains("audit_rate"));
        assert!(d.describe_order().contains("order_swaps"));
        // An audit on an event that is not an implementation's is not a comparison.
        let mut odd = audited("r", true, true);
        odd[0].outcome = Outcome::NotSelected;
        assert_eq!(decisions(&odd).audits.audited, 0);
    }

    #[test]
    fn the_flip_rate_covers_the_latest_rounds_judged_both_ways() {
        let mut events = Vec::new();
        for round in 1..=25u32 {
            for bot in ["a", "b"] {
                let mut e = event("r", round, bot, Outcome::NotSelected);
                e.judge_order = Some(JudgeOrder {
                    // The first five rounds flipped; they fall out of the window.
                    top_flipped: round <= 5 || round == 25,
                    disagreement: Some(0.1),
                });
                events.push(e);
            }
        }
        let o = decisions(&events).order;
        assert_eq!((o.rounds, o.flipped), (20, 1));
        assert!((o.flip_rate.unwrap() - 0.05).abs() < 1e-12);
        assert!((o.mean_disagreement.unwrap() - 0.1).abs() < 1e-12);
    }
}
