//! A round's ledger events (docs/specification.md §8.2): built by one pure function from the
//! round's facts and its awards — one event per award, the winner's carrying the implementation's
//! score, accuracy and metrics, every bot's carrying its rank, scores and spend, and with
//! `[marketplace] seats` the round's seating — and then appended to the event store.

use crate::agent::accounts::Accounts;
use crate::checks::CheckKind;
use crate::ledger::{AuditOutcome, Event, EventScores, EventStore, JudgeOrder, Metrics, Tokens};
use crate::market::{Award, ImplementationScore, Phase};
use crate::run_report::{AuditReport, RoundReport};
use crate::verify::VerificationReport;
use anyhow::{Context as _, Result};
use chrono::{DateTime, Duration, Utc};

/// What the events of a round are made of.
pub struct RoundRecord<'a> {
    pub issue: u64,
    pub run_id: &'a str,
    pub round: u32,
    pub phase: Phase,
    pub report: &'a RoundReport,
    /// The bot whose proposal was implemented.
    pub winner_bot: &'a str,
    pub proposal_score: f64,
    pub implementation: &'a ImplementationScore,
    pub accuracy: f64,
    pub verification: &'a VerificationReport,
    /// Implementation attempts the round used.
    pub attempts: u32,
    /// The runner-up's audit, when the round was audited.
    pub audit: Option<&'a AuditReport>,
}

/// One event per award, in award order, stamped `now` plus one microsecond per event so their
/// order survives the fold. `accounts` are the round's own (tokens, cost and time of this
/// round, not the run's running total).
pub fn round_events(
    r: &RoundRecord<'_>,
    awarded: &[Award],
    accounts: &Accounts,
    now: DateTime<Utc>,
) -> Vec<Event> {
    awarded
        .iter()
        .enumerate()
        .map(|(i, award)| {
            let mut e = Event::new(r.issue, &award.bot_id, award.outcome, award.weight_delta);
            e.timestamp = now + Duration::microseconds(i as i64);
            let own = r.report.proposals.iter().find(|p| p.bot_id == award.bot_id);
            let is_winner = award.bot_id == r.winner_bot && award.outcome.is_implementation();
            e.run_id = Some(r.run_id.to_owned());
            e.round = Some(r.round);
            e.iteration_count = Some(r.attempts);
            e.phase = Some(r.phase);
            e.rank = own.and_then(|p| rank(r.report, &p.proposal_id));
            e.proposal_score = own.map(|p| p.total_score);
            e.success_probability = own.map(|p| p.success_probability);
            e.judge_order =
                r.report
                    .order
                    .as_ref()
                    .and_then(|o| o.top_flipped)
                    .map(|top_flipped| JudgeOrder {
                        top_flipped,
                        disagreement: own.and_then(|p| p.order_disagreement),
                    });
            e.audit = r
                .audit
                .filter(|_| is_winner)
                .and_then(|a| audit_outcome(r.report, a));
            e.scores = own.map(|p| EventScores {
                proposal: p.scores,
                implementation: is_winner.then_some(r.implementation.scores),
            });
            if is_winner {
                e.proposal_score = Some(r.proposal_score);
                e.implementation_score = Some(r.implementation.total);
                e.accuracy = Some(r.accuracy);
                e.metrics = Some(metrics(r.verification));
            }
            let spend = accounts.of(&award.bot_id);
            e.tokens = Some(Tokens {
                input: spend.input_tokens,
                output: spend.output_tokens,
            });
            e.cost_usd = spend.cost_usd;
            e.duration_ms = Some(spend.duration.as_millis() as u64);
            e.seating = r.report.seating.clone();
            e
        })
        .collect()
}

/// The 1-based place of proposal `id` in the round's ranking.
fn rank(report: &RoundReport, id: &str) -> Option<u32> {
    report
        .ranking
        .iter()
        .position(|ranked| ranked == id)
        .map(|i| i as u32 + 1)
}

/// What the runner-up's audit `a` came to, for the winner's event: `None` when it could not
/// be judged.
fn audit_outcome(report: &RoundReport, a: &AuditReport) -> Option<AuditOutcome> {
    a.passed.map(|passed| AuditOutcome {
        runner_up: a.bot_id.clone(),
        proposal_scores: report
            .proposals
            .iter()
            .find(|p| p.proposal_id == a.proposal_id)
            .map(|p| p.scores),
        passed,
        attempts: a.attempts,
        cost_usd: a.cost_usd,
        tokens: Some(Tokens {
            input: a.input_tokens,
            output: a.output_tokens,
        }),
        duration_ms: Some(a.duration_ms),
    })
}

/// The implemented change's metrics from its verification `v`.
fn metrics(v: &VerificationReport) -> Metrics {
    let (tests_passed, tests_ran) = v.tally(CheckKind::Test);
    let (quality_passed, quality_ran) = v.tally(CheckKind::Quality);
    Metrics {
        // False, not vacuously true, when no such check ran.
        tests_passed: Some(tests_ran > 0 && tests_passed == tests_ran),
        code_quality_passed: Some(quality_ran > 0 && quality_passed == quality_ran),
        coverage_delta: v.coverage.delta(),
        lines_changed: Some(v.diff.lines_changed()),
        files_affected: Some(v.diff.files_affected() as u64),
    }
}

/// Appends the events in order; returns their file names.
pub fn append(store: &EventStore, events: &[Event]) -> Result<Vec<String>> {
    events
        .iter()
        .map(|e| {
            store
                .append(e)
                .with_context(|| format!("cannot write an event to {}", store.dir().display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Role, Usage};
    use crate::fixtures::{proposal, round};
    use crate::market::Outcome;
    use crate::market::Scores;
    use crate::verify::Coverage;
    use crate::workspace::DiffStats;

    fn award(bot: &str, outcome: Outcome, delta: f64) -> Award {
        Award {
            bot_id: bot.into(),
            outcome,
            weight_delta: delta,
            accuracy_bonus: false,
        }
    }

    #[test]
    fn the_winner_carries_the_implementation_every_bot_its_rank_and_spend() {
        let mut report = round(
            vec![
                proposal("proposal_1", "b1", 0.6),
                proposal("proposal_2", "b2", 0.8),
            ],
            &["proposal_2", "proposal_1"],
        );
        report.proposals[1].scores.risk = 0.9;
        let implementation = ImplementationScore {
            scores: Scores {
                risk: 1.0,
                ..Scores::default()
            },
            total: 0.75,
            details: Default::default(),
        };
        let verification = VerificationReport {
            checks: vec![crate::fixtures::passed_check("test", CheckKind::Test, "t")],
            coverage: Coverage {
                before: Some(80.0),
                after: Some(81.0),
                ..Coverage::default()
            },
            diff: DiffStats {
                files: vec![],
                lines_added: 4,
                lines_removed: 1,
            },
            protected: vec![],
            require_test: true,
            setup: Vec::new(),
            new_tests: Vec::new(),
            settings_changes: Vec::new(),
            moved_tests: Vec::new(),
            taken: None,
        };
        let mut accounts = Accounts::default();
        accounts.record(
            "b2",
            Role::Propose,
            Usage {
                input_tokens: 10,
                cached_input_tokens: 0,
                output_tokens: 5,
                cost_usd: Some(0.5),
            },
            std::time::Duration::from_millis(1500),
        );
        let record = RoundRecord {
            issue: 3,
            run_id: "run-1",
            round: 2,
            phase: Phase::Replan,
            report: &report,
            winner_bot: "b2",
            proposal_score: 0.8,
            implementation: &implementation,
            accuracy: 0.95,
            verification: &verification,
            attempts: 2,
            audit: None,
        };
        let now: DateTime<Utc> = "2026-01-29T10:15:00Z".parse().unwrap();
        let events = round_events(
            &record,
            &[
                award("b2", Outcome::ReplanSuccess, 0.17),
                award("b1", Outcome::NotSelected, -0.02),
            ],
            &accounts,
            now,
        );
        assert_eq!(events.len(), 2);
        let (w, l) = (&events[0], &events[1]);
        assert!(w.timestamp < l.timestamp, "order survives the fold");
        assert_eq!((w.rank, l.rank), (Some(1), Some(2)));
        assert_eq!(w.implementation_score, Some(0.75));
        assert_eq!(w.accuracy, Some(0.95));
        let m = w.metrics.as_ref().unwrap();
        assert_eq!(m.tests_passed, Some(true));
        assert_eq!(m.code_quality_passed, Some(false), "no quality check ran");
        assert_eq!((w.iteration_count, l.iteration_count), (Some(2), Some(2)));
        assert_eq!(m.lines_changed, Some(5));
        assert!((m.coverage_delta.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(w.scores.as_ref().unwrap().proposal.risk, 0.9);
        assert_eq!(w.scores.as_ref().unwrap().implementation.unwrap().risk, 1.0);
        assert_eq!(
            w.tokens.as_ref().map(|t| (t.input, t.output)),
            Some((10, 5))
        );
        assert_eq!((w.cost_usd, w.duration_ms), (Some(0.5), Some(1500)));
        assert!(l.metrics.is_none() && l.implementation_score.is_none());
        assert_eq!(l.proposal_score, Some(0.6));
        assert!(l.scores.as_ref().unwrap().implementation.is_none());
        assert_eq!(
            (w.round, w.phase, w.run_id.as_deref()),
            (Some(2), Some(Phase::Replan), Some("run-1"))
        );

        let dir = tempfile::tempdir().unwrap();
        let names = append(&EventStore::new(dir.path()), &events).unwrap();
        assert_eq!(names.len(), 2);
        assert!(names[0].ends_with("-b2-replan_success.json"), "{names:?}");
    }
}
