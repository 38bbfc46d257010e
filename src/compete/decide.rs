//! What happens after a round — the competition's state machine as one pure function. A round
//! ends at one of a few points (nothing left to do, a cap, no usable proposal, an implementation
//! that passed or failed); from that end, the phase, the round number and the round limit,
//! [`decide`] says whether the run continues with fresh proposals, replans with every bot,
//! completes, or stops and hands the issue to a human, and why. No model decides any of it.

use crate::market::Phase;
use crate::run_report::RunOutcome;

/// How a round ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundEnd {
    /// Every checkbox was already checked when the round began.
    NothingOpen,
    /// A `[limits]` cap was reached (before proposals or before judging).
    CapReached(String),
    /// No bot submitted a valid proposal.
    NoProposal,
    /// Every proposal scored below the human-review threshold.
    AllBelow { threshold: f64 },
    /// The winner's implementation passed verification; `remaining` checkboxes are still open.
    Passed { remaining: usize },
    /// No implementation attempt passed verification.
    Failed,
    /// The attempts failed only through the environment (a setup that failed, no check or test
    /// that could run): no change could have passed.
    Environment(String),
}

/// Where the run stands: the round that just ended and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub phase: Phase,
    /// 1-based.
    pub round: u32,
    pub max_rounds: u32,
}

/// Why a run stops before completing.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    /// `Escalated`, or `Aborted` for a cap.
    pub outcome: RunOutcome,
    /// For the escalation comment and the report.
    pub reason: String,
    /// The cap that was reached, for the report's `stopped`.
    pub cap: Option<String>,
}

/// What the run does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The next round, with fresh proposals for what remains.
    Continue,
    /// The next round is a replan: every bot gets the failure context.
    Replan,
    /// Every checkbox is checked: push and open the pull request.
    Complete,
    /// Hand the issue to a human.
    Escalate(Stop),
}

/// The reason given when the rounds ran out.
pub fn rounds_exhausted(max_rounds: u32) -> String {
    format!("max_iterations ({max_rounds}) rounds ran and checkboxes remain")
}

fn escalate(reason: impl Into<String>) -> Decision {
    Decision::Escalate(Stop {
        outcome: RunOutcome::Escalated,
        reason: reason.into(),
        cap: None,
    })
}

/// The decision after a round that ended with `end` at `at`. A run that would go on past
/// `max_rounds` escalates instead.
pub fn decide(end: &RoundEnd, at: Position) -> Decision {
    let next = |d: Decision| {
        if at.round >= at.max_rounds {
            escalate(rounds_exhausted(at.max_rounds))
        } else {
            d
        }
    };
    match end {
        RoundEnd::NothingOpen | RoundEnd::Passed { remaining: 0 } => Decision::Complete,
        RoundEnd::Passed { .. } => next(Decision::Continue),
        RoundEnd::Failed => match at.phase {
            Phase::Initial => next(Decision::Replan),
            Phase::Replan => escalate("the implementation failed, and so did the replan"),
        },
        RoundEnd::CapReached(cap) => Decision::Escalate(Stop {
            outcome: RunOutcome::Aborted,
            reason: format!("the run stopped at a cost cap: {cap}"),
            cap: Some(cap.clone()),
        }),
        RoundEnd::NoProposal => escalate("no bot submitted a valid proposal"),
        RoundEnd::Environment(why) => escalate(format!(
            "the environment failed, not the change: {why}. `ralph doctor` shows what the checks need"
        )),
        RoundEnd::AllBelow { threshold } => escalate(format!(
            "every proposal scored below {threshold}: a human should review the issue"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(phase: Phase, round: u32) -> Position {
        Position {
            phase,
            round,
            max_rounds: 5,
        }
    }

    fn reason(d: Decision) -> (RunOutcome, String) {
        match d {
            Decision::Escalate(s) => (s.outcome, s.reason),
            other => panic!("expected an escalation, got {other:?}"),
        }
    }

    #[test]
    fn success_with_boxes_left_continues_and_with_none_left_completes() {
        let passed = |remaining| RoundEnd::Passed { remaining };
        assert_eq!(
            decide(&passed(2), at(Phase::Initial, 1)),
            Decision::Continue
        );
        assert_eq!(decide(&passed(1), at(Phase::Replan, 2)), Decision::Continue);
        assert_eq!(
            decide(&passed(0), at(Phase::Initial, 1)),
            Decision::Complete
        );
        assert_eq!(decide(&passed(0), at(Phase::Replan, 5)), Decision::Complete);
        assert_eq!(
            decide(&RoundEnd::NothingOpen, at(Phase::Initial, 1)),
            Decision::Complete
        );
    }

    #[test]
    fn an_initial_failure_replans_and_a_replan_failure_escalates() {
        assert_eq!(
            decide(&RoundEnd::Failed, at(Phase::Initial, 1)),
            Decision::Replan
        );
        assert_eq!(
            reason(decide(&RoundEnd::Failed, at(Phase::Replan, 2))),
            (
                RunOutcome::Escalated,
                "the implementation failed, and so did the replan".into()
            )
        );
    }

    #[test]
    fn no_proposal_or_all_below_the_threshold_goes_to_a_human() {
        assert_eq!(
            reason(decide(&RoundEnd::NoProposal, at(Phase::Initial, 1))),
            (
                RunOutcome::Escalated,
                "no bot submitted a valid proposal".into()
            )
        );
        assert_eq!(
            reason(decide(
                &RoundEnd::AllBelow { threshold: 0.5 },
                at(Phase::Replan, 2)
            )),
            (
                RunOutcome::Escalated,
                "every proposal scored below 0.5: a human should review the issue".into()
            )
        );
    }

    #[test]
    fn the_last_round_cannot_continue_or_replan() {
        let last = at(Phase::Initial, 5);
        let exhausted = (
            RunOutcome::Escalated,
            "max_iterations (5) rounds ran and checkboxes remain".to_owned(),
        );
        assert_eq!(
            reason(decide(&RoundEnd::Passed { remaining: 1 }, last)),
            exhausted
        );
        assert_eq!(reason(decide(&RoundEnd::Failed, last)), exhausted);
        assert_eq!(rounds_exhausted(5), exhausted.1);
    }

    #[test]
    fn a_cap_aborts_with_the_cap_named() {
        let d = decide(
            &RoundEnd::CapReached("max_tokens 100 reached (120 used)".into()),
            at(Phase::Initial, 1),
        );
        assert_eq!(
            d,
            Decision::Escalate(Stop {
                outcome: RunOutcome::Aborted,
                reason: "the run stopped at a cost cap: max_tokens 100 reached (120 used)".into(),
                cap: Some("max_tokens 100 reached (120 used)".into()),
            })
        );
    }
}
