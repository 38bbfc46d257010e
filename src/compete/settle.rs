//! Phase 4, settling a round: the implementation's score and accuracy, the awards of the
//! marketplace rules, then the side effects in an order an interruption cannot spoil — the
//! check-off of the boxes the verify role found satisfied (the commit was made by the passing
//! attempt) or the reset, the events, the saved state — and how the round ended.

use super::attempt::{failure_of, Attempts};
use super::decide::RoundEnd;
use super::events::{append, round_events, RoundRecord};
use super::prepare::cache_dir;
use super::run::{Contest, Run, Selection};
use crate::agent::accounts::Accounts;
use crate::checks::baseline::Baseline;
use crate::checks::{CheckKind, CheckStatus};
use crate::ledger::EventStore;
use crate::market::{accuracy, awards, score_implementation, tables, RoundFacts, Verified};
use crate::run_report::RemainingBox;
use crate::run_report::{CheckReport, CheckState, CoverageReport, ImplementationReport};
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
            },
            duration_ms: c.duration_ms,
        })
        .collect()
}

impl Run<'_> {
    /// Settles the round from its attempts; `spend` is what the round's calls cost. Returns how
    /// the round ended.
    pub(super) async fn settle(
        &mut self,
        contest: &Contest,
        sel: &Selection,
        attempts: Attempts,
        spend: &Accounts,
    ) -> Result<RoundEnd> {
        let settings = self.input.settings;
        let config = &settings.config;
        let printer = self.input.printer;
        let mut round_report = sel.evaluated.report.clone();
        round_report.attempts = attempts.used;
        round_report.coverage = attempts
            .verification
            .as_ref()
            .filter(|v| v.coverage.before.is_some() || v.coverage.after.is_some())
            .map(|v| CoverageReport {
                before: v.coverage.before,
                after: v.coverage.after,
            });
        round_report.checks = attempts
            .verification
            .as_ref()
            .map(check_reports)
            .unwrap_or_default();
        round_report.new_tests = attempts
            .verification
            .as_ref()
            .map(|v| v.new_tests.clone())
            .unwrap_or_default();
        round_report.audit = attempts.audit.clone();
        if let (Some(cap), None) = (&attempts.cap, &attempts.passed) {
            // Stopped between attempts: no outcome to settle, no events; the round's report
            // stays, and a resumed run plays the round again.
            self.report.rounds.push(round_report);
            return Ok(RoundEnd::CapReached(cap.clone()));
        }
        if let (Some(why), None) = (&attempts.environment, &attempts.passed) {
            // No change could have passed: no bot gains or loses weight for it.
            super::phase(
                printer,
                &self.input.progress,
                "## Result: ENVIRONMENT FAILURE",
            );
            printer.status(&format!("- {why}"));
            printer.status("- No bot gains or loses weight: the environment failed, not a change");
            self.input
                .workspace
                .reset_worktree(&self.bench_wt()?)
                .await?;
            round_report.environment_failure = Some(why.clone());
            self.trouble.diff = attempts.last_diff.clone();
            self.trouble.verification = attempts.verification.clone();
            self.trouble.last_round = Some(round_report.clone());
            self.report.rounds.push(round_report);
            return Ok(RoundEnd::Environment(why.clone()));
        }
        super::phase(
            printer,
            &self.input.progress,
            "## Phase 4: Marketplace Update",
        );
        let passed = attempts.passed.is_some();
        let satisfied: BTreeSet<String> = attempts
            .passed
            .as_ref()
            .map(|p| p.verdict.satisfied.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(p) = &attempts.passed {
            round_report.verified_by_claims = !p.verdict.by_verify_role;
            round_report.implementation_summary = Some(p.summary.clone());
            self.state.evidence.extend(p.verdict.satisfied.clone());
        }
        let v = attempts
            .verification
            .clone()
            .unwrap_or_else(VerificationReport::none);
        let addressed: BTreeSet<String> = sel
            .winner
            .proposal
            .spec_alignment
            .checkboxes_addressed
            .iter()
            .filter(|id| contest.open.contains(*id))
            .cloned()
            .collect();
        let implementation = score_implementation(
            &Verified {
                addressed,
                verified: satisfied.clone(),
                quality: v.tally(CheckKind::Quality),
                tests: v.tally(CheckKind::Test),
                coverage_delta: v.coverage.delta(),
                lines_changed: v.diff.lines_changed(),
                lines_estimated: sel.winner.proposal.estimated_complexity.lines_of_code,
                attempts_used: attempts.used,
                budget: sel.budget,
                review: attempts.review.clone(),
            },
            &config.scoring_weights,
            &tables().scoring,
        );
        let acc = accuracy(sel.proposal_score, implementation.total);
        round_report.implementation = Some(ImplementationReport {
            scores: implementation.scores,
            total: implementation.total,
            accuracy: acc,
            details: implementation.details.clone(),
            review: attempts.review.clone(),
        });
        let awarded = awards(
            &RoundFacts {
                phase: self.state.phase,
                winner: sel.winner.bot_id.clone(),
                passed,
                accuracy: acc,
                proposers: sel.proposers.clone(),
                all_bots: config.bot_ids(),
                resubmitted_same: sel.resubmitted.clone(),
            },
            &tables().deltas,
        );
        let checked_off = match &attempts.passed {
            Some(p) => self.check_off(contest, &p.commit, &satisfied).await?,
            None => {
                self.input
                    .workspace
                    .reset_worktree(&self.bench_wt()?)
                    .await?;
                Vec::new()
            }
        };
        let events = round_events(
            &RoundRecord {
                issue: self.input.issue,
                run_id: &self.state.run_id,
                round: self.state.next_round,
                phase: self.state.phase,
                report: &sel.evaluated.report,
                winner_bot: &sel.winner.bot_id,
                proposal_score: sel.proposal_score,
                implementation: &implementation,
                accuracy: acc,
                verification: &v,
                attempts: attempts.used,
                audit: attempts.audit.as_ref(),
            },
            &awarded,
            spend,
            chrono::Utc::now(),
        );
        let written = append(&EventStore::new(settings.ralph_dir.join("events")), &events)?;
        self.state.events.extend(written.iter().cloned());
        for (award, file) in awarded.iter().zip(&written) {
            printer.status(&format!(
                "- {}: {} {:+.2} → {file}",
                award.bot_id, award.outcome, award.weight_delta
            ));
        }
        self.report.events.extend(written);
        self.report.rounds.push(round_report.clone());
        self.trouble.remaining = contest
            .reqs
            .open()
            .filter(|r| !checked_off.contains(&r.id))
            .map(|r| RemainingBox {
                id: r.id.clone(),
                text: r.text.clone(),
                reason: attempts.unsatisfied.get(&r.id).cloned(),
            })
            .collect();

        if let Some(p) = &attempts.passed {
            let round = self.state.next_round;
            // The next round starts from this commit: its checks are the new baseline.
            self.baseline = Baseline::from_results(&p.commit, &v.checks, v.coverage.after);
            if let Err(e) = self.baseline.save(&cache_dir(settings)) {
                printer.warn(&format!("cannot cache the baseline: {e}"));
            }
            self.state.passed();
            self.state.save(settings)?;
            super::phase(printer, &self.input.progress, "## Result: SUCCESS");
            let remaining = contest.open.len() - checked_off.len();
            printer.status(&format!(
                "- Iteration {round}/{}; {remaining} checkbox(es) remain",
                self.input.options.max_iterations
            ));
            return Ok(RoundEnd::Passed { remaining });
        }
        let failure = failure_of(&sel.winner, &attempts);
        super::phase(printer, &self.input.progress, "## Result: FAILURE");
        for r in &failure.reasons {
            printer.status(&format!("- {r}"));
        }
        self.trouble.diff = attempts.last_diff.clone();
        self.trouble.verification = attempts.verification;
        if self.state.phase == crate::market::Phase::Initial {
            self.state.failed(failure);
            self.state.save(settings)?;
            printer.status("- Replanning with every bot");
        } else {
            self.trouble.initial = self.state.initial_failure.clone();
            self.trouble.replan = Some(failure.clone());
            self.trouble.last_round = Some(round_report);
            self.state.failed(failure);
            self.state.save(settings)?;
        }
        Ok(RoundEnd::Failed)
    }

    /// The worktree of the run (made before the first round).
    fn bench_wt(&self) -> Result<crate::workspace::Worktree> {
        self.worktree
            .clone()
            .ok_or_else(|| anyhow::anyhow!("the run has no worktree"))
    }

    /// Checks off the satisfied boxes in the issue body (only their `[ ]`, every other byte
    /// kept); returns the ids checked off.
    async fn check_off(
        &mut self,
        contest: &Contest,
        commit: &str,
        satisfied: &BTreeSet<String>,
    ) -> Result<Vec<String>> {
        let (body, flipped) = check_off(&contest.issue.body, satisfied);
        if !flipped.is_empty() {
            self.input.tracker.set_body(self.input.issue, &body).await?;
        }
        self.input.printer.status(&format!(
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
}
