//! Phase 4, settling a round: the implementation's score and accuracy, the awards of the
//! marketplace rules, then the side effects in an order an interruption cannot spoil — the
//! check-off of the boxes the verify role found satisfied (the commit was made by the passing
//! attempt) or the reset, the events, the saved state — and how the round ended.

use super::crew::{Book, Contest, Crew, Selection};
use super::decide::RoundEnd;
use super::events::{append, round_events, RoundRecord};
use super::findings::failure_of;
use super::findings::Attempts;
use super::prepare::cache_dir;
use crate::agent::accounts::Accounts;
use crate::checks::baseline::Baseline;
use crate::checks::{CheckKind, CheckStatus};
use crate::ledger::EventStore;
use crate::market::{
    accuracy, awards, score_implementation, tables, Award, ImplementationScore, Phase, RoundFacts,
    Scores, Verified,
};
use crate::run_report::{
    CheckReport, CheckState, CoverageReport, ImplementationReport, RemainingBox, RoundReport,
};
use crate::spec::check_off;
use crate::verify::VerificationReport;
use anyhow::Result;
use std::collections::BTreeSet;

/// The report's line per check of a verification.
pub(super) fn check_reports(v: &VerificationReport) -> Vec<CheckReport> {
    v.checks
        .iter()
        .map(|c| CheckReport {
            name: c.name.clone(),
            passed: c.passed(),
            status: match c.status {
                CheckStatus::Passed => CheckState::Passed,
                CheckStatus::Failed => CheckState::Failed,
                CheckStatus::TimedOut => CheckState::TimedOut,
                CheckStatus::Unavailable => CheckState::Unavailable,
                CheckStatus::FailingOnBase => CheckState::FailingOnBase,
                CheckStatus::Skipped => CheckState::Skipped,
            },
            duration_ms: c.duration_ms,
            advisory: c.advisory.clone(),
        })
        .collect()
}

/// What a round's attempts come to, decided before any effect.
#[derive(Debug)]
pub(super) enum Settled {
    /// A run cap stopped the attempts before any passed: nothing to settle, no event.
    Cap(String),
    /// Only the environment failed: no bot gains or loses weight.
    Environment(String),
    /// The change was scored and the marketplace rules awarded.
    Scored(Box<Scored>),
}

/// A scored round: the implementation's score, the accuracy, the awards.
#[derive(Debug)]
pub(super) struct Scored {
    pub implementation: ImplementationScore,
    pub accuracy: f64,
    pub awarded: Vec<Award>,
    /// The boxes the passing attempt's verification found satisfied (empty on a failure).
    pub satisfied: BTreeSet<String>,
    /// The passing attempt's verification, else the last one's (empty when none ran).
    pub verification: VerificationReport,
}

/// How a round settles: the round's report with the attempts' results, and what it comes to.
#[derive(Debug)]
pub(super) struct Settlement {
    pub report: RoundReport,
    pub settled: Settled,
}

/// The facts a round settles on.
pub(super) struct Facts<'a> {
    pub sel: &'a Selection,
    pub attempts: &'a Attempts,
    /// The boxes open when the round began.
    pub open: &'a BTreeSet<String>,
    pub phase: Phase,
    pub all_bots: Vec<String>,
    pub weights: &'a Scores,
}

/// Settles a round from its facts: pure, so every path is a unit test.
pub(super) fn settlement(f: &Facts<'_>) -> Settlement {
    let attempts = f.attempts;
    let mut report = f.sel.evaluated.report.clone();
    with_attempts(&mut report, attempts);
    if let (Some(cap), None) = (&attempts.cap, &attempts.passed) {
        return Settlement {
            report,
            settled: Settled::Cap(cap.clone()),
        };
    }
    if let (Some(why), None) = (&attempts.environment, &attempts.passed) {
        report.environment_failure = Some(why.clone());
        return Settlement {
            report,
            settled: Settled::Environment(why.clone()),
        };
    }
    let satisfied: BTreeSet<String> = attempts
        .passed
        .as_ref()
        .map(|p| p.verdict.satisfied.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(p) = &attempts.passed {
        report.verified_by_claims = !p.verdict.by_verify_role;
        report.implementation_summary = Some(p.summary.clone());
    }
    let verification = attempts
        .verification
        .clone()
        .unwrap_or_else(VerificationReport::none);
    let implementation = implementation_score(f, &satisfied, &verification);
    let acc = accuracy(f.sel.proposal_score, implementation.total);
    report.implementation = Some(ImplementationReport {
        scores: implementation.scores,
        total: implementation.total,
        accuracy: acc,
        details: implementation.details.clone(),
        review: attempts.review.clone(),
    });
    let awarded = awards(
        &RoundFacts {
            phase: f.phase,
            winner: f.sel.winner.bot_id.clone(),
            passed: attempts.passed.is_some(),
            accuracy: acc,
            proposers: f.sel.proposers.clone(),
            all_bots: f.all_bots.clone(),
            resubmitted_same: f.sel.resubmitted.clone(),
        },
        &tables().deltas,
    );
    Settlement {
        report,
        settled: Settled::Scored(Box::new(Scored {
            implementation,
            accuracy: acc,
            awarded,
            satisfied,
            verification,
        })),
    }
}

/// The round's report with what the attempts did: how many, the coverage (when measured), the
/// checks and new tests of the verification, the audit.
fn with_attempts(report: &mut RoundReport, attempts: &Attempts) {
    report.attempts = attempts.used;
    report.coverage = attempts
        .verification
        .as_ref()
        .filter(|v| v.coverage.before.is_some() || v.coverage.after.is_some())
        .map(|v| CoverageReport {
            before: v.coverage.before,
            after: v.coverage.after,
        });
    report.checks = attempts
        .verification
        .as_ref()
        .map(check_reports)
        .unwrap_or_default();
    report.new_tests = attempts
        .verification
        .as_ref()
        .map(|v| v.new_tests.clone())
        .unwrap_or_default();
    report.settings_changes = attempts
        .verification
        .as_ref()
        .map(|v| v.settings_changes.clone())
        .unwrap_or_default();
    report.moved_tests = attempts
        .verification
        .as_ref()
        .map(|v| v.moved_tests.clone())
        .unwrap_or_default();
    report.audit = attempts.audit.clone();
}

/// The implementation's score: the open boxes the winner addressed against those the
/// verification found `satisfied`, the checks, the coverage, the size against the estimate,
/// the attempts against the budget and the review, weighed by `f.weights`.
fn implementation_score(
    f: &Facts<'_>,
    satisfied: &BTreeSet<String>,
    verification: &VerificationReport,
) -> ImplementationScore {
    let winner = &f.sel.winner;
    let addressed: BTreeSet<String> = winner
        .proposal
        .spec_alignment
        .checkboxes_addressed
        .iter()
        .filter(|id| f.open.contains(*id))
        .cloned()
        .collect();
    score_implementation(
        &Verified {
            addressed,
            verified: satisfied.clone(),
            quality: verification.tally(CheckKind::Quality),
            tests: verification.tally(CheckKind::Test),
            coverage_delta: verification.coverage.delta(),
            lines_changed: verification.diff.lines_changed(),
            lines_estimated: winner.proposal.estimated_complexity.lines_of_code,
            attempts_used: f.attempts.used,
            budget: f.sel.budget,
            review: f.attempts.review.clone(),
        },
        f.weights,
        &tables().scoring,
    )
}

/// Settles the round from its attempts; `spend` is what the round's calls cost. Returns how
/// the round ended.
pub(super) async fn settle(
    crew: &mut Crew<'_>,
    book: &mut Book,
    contest: &Contest,
    sel: &Selection,
    attempts: Attempts,
    spend: &Accounts,
) -> Result<RoundEnd> {
    let settings = crew.input.settings;
    let printer = crew.input.printer;
    let Settlement { report, settled } = settlement(&Facts {
        sel,
        attempts: &attempts,
        open: &contest.open,
        phase: book.state.phase,
        // With seats, "every bot" of a collective failure is every seated bot.
        all_bots: match &sel.evaluated.report.seating {
            Some(s) => s.seated().map(|b| b.bot_id.clone()).collect(),
            None => settings.config.bot_ids(),
        },
        weights: &settings.config.scoring_weights,
    });
    let scored = match settled {
        Settled::Cap(cap) => {
            // Stopped between attempts: the round's report stays, and a resumed run plays
            // the round again.
            book.report.rounds.push(report);
            return Ok(RoundEnd::CapReached(cap));
        }
        Settled::Environment(why) => {
            return environment_failure(crew, book, report, why, &attempts).await;
        }
        Settled::Scored(scored) => scored,
    };
    let round_report = report;
    let Scored {
        implementation,
        accuracy: acc,
        awarded,
        satisfied,
        verification: v,
    } = *scored;
    super::site::phase(
        printer,
        &crew.input.progress,
        "## Phase 4: Marketplace Update",
    );
    let checked_off = check_off_or_reset(crew, book, contest, &attempts, &satisfied).await?;
    let record = RoundRecord {
        issue: crew.input.issue,
        run_id: &book.state.run_id,
        round: book.state.next_round,
        phase: book.state.phase,
        report: &sel.evaluated.report,
        winner_bot: &sel.winner.bot_id,
        proposal_score: sel.proposal_score,
        implementation: &implementation,
        accuracy: acc,
        verification: &v,
        attempts: attempts.used,
        audit: attempts.audit.as_ref(),
    };
    let events = round_events(&record, &awarded, spend, chrono::Utc::now());
    record_events(crew, book, &events, &awarded)?;
    book.report.rounds.push(round_report.clone());
    book.trouble.remaining = remaining_boxes(contest, &checked_off, &attempts);

    match &attempts.passed {
        Some(p) => {
            let remaining = contest.open.len() - checked_off.len();
            let commit = p.commit.clone();
            round_passed(crew, book, &commit, &v, remaining)
        }
        None => round_failed(crew, book, sel, attempts, round_report),
    }
}

/// Keeps the passing attempt's evidence in the run state and checks its satisfied boxes off
/// in the issue; after a failed round the worktree is reset instead. Returns the ids checked
/// off.
async fn check_off_or_reset(
    crew: &mut Crew<'_>,
    book: &mut Book,
    contest: &Contest,
    attempts: &Attempts,
    satisfied: &BTreeSet<String>,
) -> Result<Vec<String>> {
    if let Some(p) = &attempts.passed {
        book.state.evidence.extend(p.verdict.satisfied.clone());
    }
    Ok(match &attempts.passed {
        Some(p) => check_off_boxes(crew, contest, &p.commit, satisfied).await?,
        None => {
            crew.input
                .workspace
                .reset_worktree(&book.worktree()?)
                .await?;
            Vec::new()
        }
    })
}

/// The open boxes not checked off, with the verify role's reason for each it found
/// unsatisfied.
fn remaining_boxes(
    contest: &Contest,
    checked_off: &[String],
    attempts: &Attempts,
) -> Vec<RemainingBox> {
    contest
        .reqs
        .open()
        .filter(|r| !checked_off.contains(&r.id))
        .map(|r| RemainingBox {
            id: r.id.clone(),
            text: r.text.clone(),
            reason: attempts.unsatisfied.get(&r.id).cloned(),
        })
        .collect()
}

/// A round that only the environment failed: nothing is awarded, the worktree is reset.
async fn environment_failure(
    crew: &mut Crew<'_>,
    book: &mut Book,
    report: RoundReport,
    why: String,
    attempts: &Attempts,
) -> Result<RoundEnd> {
    let printer = crew.input.printer;
    super::site::phase(
        printer,
        &crew.input.progress,
        "## Result: ENVIRONMENT FAILURE",
    );
    printer.status(&format!("- {why}"));
    printer.status("- No bot gains or loses weight: the environment failed, not a change");
    crew.input
        .workspace
        .reset_worktree(&book.worktree()?)
        .await?;
    book.trouble.diff = attempts.last_diff.clone();
    book.trouble.verification = attempts.verification.clone();
    book.trouble.last_round = Some(report.clone());
    book.report.rounds.push(report);
    Ok(RoundEnd::Environment(why))
}

/// Writes the round's events to the ledger and says each award.
fn record_events(
    crew: &mut Crew<'_>,
    book: &mut Book,
    events: &[crate::ledger::Event],
    awarded: &[Award],
) -> Result<()> {
    let store = EventStore::new(crew.input.settings.ralph_dir.join("events"));
    let written = append(&store, events)?;
    book.state.events.extend(written.iter().cloned());
    for (award, file) in awarded.iter().zip(&written) {
        crew.input.printer.status(&format!(
            "- {}: {} {:+.2} → {file}",
            award.bot_id, award.outcome, award.weight_delta
        ));
    }
    book.report.events.extend(written);
    Ok(())
}

/// A passed round: the commit's checks are the next round's baseline; the state is saved.
fn round_passed(
    crew: &mut Crew<'_>,
    book: &mut Book,
    commit: &str,
    v: &VerificationReport,
    remaining: usize,
) -> Result<RoundEnd> {
    let settings = crew.input.settings;
    let printer = crew.input.printer;
    let round = book.state.next_round;
    // The next round starts from this commit: its checks are the new baseline.
    crew.baseline = Baseline::from_results(
        commit,
        &v.checks,
        v.coverage.after,
        v.coverage.after_missing.clone(),
    );
    if let Err(e) = crew.baseline.save(&cache_dir(settings)) {
        printer.warn(&format!("cannot cache the baseline: {e}"));
    }
    book.state.passed();
    book.state.save(settings)?;
    super::site::phase(printer, &crew.input.progress, "## Result: SUCCESS");
    printer.status(&format!(
        "- Iteration {round}/{}; {remaining} checkbox(es) remain",
        crew.input.options.max_iterations
    ));
    Ok(RoundEnd::Passed { remaining })
}

/// A failed round: its reasons said, kept for the replan (or the escalation after one).
fn round_failed(
    crew: &mut Crew<'_>,
    book: &mut Book,
    sel: &Selection,
    attempts: Attempts,
    round_report: RoundReport,
) -> Result<RoundEnd> {
    let settings = crew.input.settings;
    let printer = crew.input.printer;
    let failure = failure_of(&sel.winner, &attempts);
    super::site::phase(printer, &crew.input.progress, "## Result: FAILURE");
    for r in &failure.reasons {
        printer.status(&format!("- {r}"));
    }
    book.trouble.diff = attempts.last_diff.clone();
    book.trouble.verification = attempts.verification;
    if book.state.phase == Phase::Initial {
        book.state.failed(failure);
        book.state.save(settings)?;
        printer.status("- Replanning with every bot");
    } else {
        book.trouble.initial = book.state.initial_failure.clone();
        book.trouble.replan = Some(failure.clone());
        book.trouble.last_round = Some(round_report);
        book.state.failed(failure);
        book.state.save(settings)?;
    }
    Ok(RoundEnd::Failed)
}

/// Checks off the satisfied boxes in the issue body (only their `[ ]`, every other byte
/// kept); returns the ids checked off.
async fn check_off_boxes(
    crew: &mut Crew<'_>,
    contest: &Contest,
    commit: &str,
    satisfied: &BTreeSet<String>,
) -> Result<Vec<String>> {
    let (body, flipped) = check_off(&contest.issue.body, satisfied);
    if !flipped.is_empty() {
        crew.input.tracker.set_body(crew.input.issue, &body).await?;
    }
    crew.input.printer.status(&format!(
        "- Committed {} · checked off: {}",
        &commit[..commit.len().min(10)],
        if flipped.is_empty() {
            "none".to_owned()
        } else {
            flipped.join(", ")
        }
    ));
    Ok(flipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compete::findings::{Passed, Verdict};
    use crate::compete::round::{Arrived, Evaluated};
    use crate::market::Outcome;
    use std::collections::BTreeMap;

    fn selection() -> Selection {
        Selection {
            evaluated: Evaluated {
                report: crate::fixtures::round(
                    vec![
                        crate::fixtures::proposal("proposal_1", "a", 0.8),
                        crate::fixtures::proposal("proposal_2", "b", 0.6),
                    ],
                    &["proposal_1", "proposal_2"],
                ),
                proposals: BTreeMap::new(),
                stopped: None,
            },
            winner: Arrived {
                bot_id: "a".into(),
                proposal: crate::fixtures::sample(),
                submitted_at: chrono::Utc::now(),
                repaired: false,
                warnings: vec![],
                tools_used: vec![],
                cost_usd: None,
            },
            proposal_score: 0.8,
            budget: 2,
            proposers: vec!["a".into(), "b".into()],
            resubmitted: vec![],
        }
    }

    fn passed() -> Passed {
        Passed {
            summary: "did it".into(),
            verdict: Verdict {
                satisfied: BTreeMap::from([("req_1".to_owned(), "in lib.sh".to_owned())]),
                unsatisfied: BTreeMap::new(),
                by_verify_role: false,
            },
            commit: "abc".into(),
        }
    }

    fn settle(attempts: &Attempts, phase: Phase) -> Settlement {
        let open = BTreeSet::from(["req_1".to_owned()]);
        let sel = selection();
        let weights = tables().default_weights;
        settlement(&Facts {
            sel: &sel,
            attempts,
            open: &open,
            phase,
            all_bots: vec!["a".into(), "b".into(), "c".into()],
            weights: &weights,
        })
    }

    fn outcomes(s: &Settlement) -> Vec<(String, Outcome)> {
        match &s.settled {
            Settled::Scored(scored) => scored
                .awarded
                .iter()
                .map(|a| (a.bot_id.clone(), a.outcome))
                .collect(),
            other => panic!("not scored: {other:?}"),
        }
    }

    #[test]
    fn a_cap_or_the_environment_settles_nothing() {
        let capped = Attempts {
            used: 1,
            cap: Some("the cost cap".into()),
            ..Attempts::default()
        };
        let s = settle(&capped, Phase::Initial);
        assert!(matches!(&s.settled, Settled::Cap(c) if c == "the cost cap"));
        assert_eq!(s.report.attempts, 1);
        assert!(s.report.implementation.is_none());

        let broken = Attempts {
            used: 2,
            environment: Some("the setup failed".into()),
            ..Attempts::default()
        };
        let s = settle(&broken, Phase::Initial);
        assert!(matches!(&s.settled, Settled::Environment(w) if w == "the setup failed"));
        assert_eq!(
            s.report.environment_failure.as_deref(),
            Some("the setup failed")
        );
    }

    #[test]
    fn a_passing_attempt_is_scored_and_awarded_even_when_a_cap_came_after() {
        let attempts = Attempts {
            passed: Some(passed()),
            used: 1,
            cap: Some("the token cap".into()),
            ..Attempts::default()
        };
        let s = settle(&attempts, Phase::Initial);
        assert_eq!(
            outcomes(&s),
            [
                ("a".to_owned(), Outcome::Success),
                ("b".to_owned(), Outcome::NotSelected)
            ]
        );
        assert!(s.report.verified_by_claims, "no verify role answered");
        assert_eq!(s.report.implementation_summary.as_deref(), Some("did it"));
        let implementation = s.report.implementation.as_ref().unwrap();
        let Settled::Scored(scored) = &s.settled else {
            unreachable!()
        };
        assert_eq!(scored.satisfied, BTreeSet::from(["req_1".to_owned()]));
        assert_eq!(implementation.accuracy, scored.accuracy);
        assert_eq!(
            scored.accuracy,
            accuracy(0.8, scored.implementation.total),
            "the proposal's score against the implementation's"
        );
    }

    #[test]
    fn a_failed_round_is_the_winners_failure_and_a_replan_says_which() {
        let failed = Attempts {
            used: 2,
            last_reasons: vec!["check `test` failed".into()],
            ..Attempts::default()
        };
        assert_eq!(
            outcomes(&settle(&failed, Phase::Initial)),
            [("a".to_owned(), Outcome::Failure)]
        );
        let replanned = settle(&failed, Phase::Replan);
        assert!(outcomes(&replanned).contains(&("a".to_owned(), Outcome::ReplanFailure)));
        let passing = Attempts {
            passed: Some(passed()),
            used: 1,
            ..Attempts::default()
        };
        assert!(outcomes(&settle(&passing, Phase::Replan))
            .contains(&("a".to_owned(), Outcome::ReplanSuccess)));
    }
}
