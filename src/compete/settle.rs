//! Phase 4, settling a round: the implementation's score and accuracy, the awards of the
//! marketplace rules, then the side effects in an order an interruption cannot spoil — the
//! commit and check-off (or the reset), the events, the saved state — and how the round ended.

use super::attempt::{failure_of, Attempts};
use super::decide::RoundEnd;
use super::events::{append, round_events, RoundRecord};
use super::run::{Bench, Contest, Run, Selection};
use crate::checks::CheckKind;
use crate::ledger::EventStore;
use crate::market::{accuracy, awards, score_implementation, tables, Phase, RoundFacts, Verified};
use crate::run_report::CheckReport;
use crate::spec::check_off;
use crate::verify::VerificationReport;
use crate::workspace::CommitInfo;
use anyhow::Result;
use std::collections::BTreeSet;

impl Run<'_> {
    /// Phase 4: the implementation's score and the awards; the side effects first (commit and
    /// check-off, or the reset), then the events, then the state — an interruption never
    /// leaves events that a resumed run writes again. Returns how the round ended.
    pub(super) async fn settle(
        &mut self,
        bench: &Bench,
        contest: &Contest,
        sel: &Selection,
        attempts: Attempts,
    ) -> Result<RoundEnd> {
        let settings = self.input.settings;
        let config = &settings.config;
        let printer = self.input.printer;
        let paint = printer.paint_err();
        let mut round_report = sel.evaluated.report.clone();
        round_report.checks = attempts
            .verification
            .as_ref()
            .map(|v| {
                v.checks
                    .iter()
                    .map(|c| CheckReport {
                        name: c.name.clone(),
                        passed: c.passed(),
                        duration_ms: c.duration_ms,
                    })
                    .collect()
            })
            .unwrap_or_default();
        printer.status(&paint.bold("## Phase 4: Marketplace Update"));
        let passed = attempts.answer.is_some();
        let (satisfied, summary) = match &attempts.answer {
            Some(answer) => {
                let evidence = self
                    .verify_requirements(
                        bench,
                        contest,
                        sel,
                        answer,
                        attempts.verification.as_ref(),
                    )
                    .await?;
                let satisfied: BTreeSet<String> = evidence.keys().cloned().collect();
                self.state.evidence.extend(evidence);
                (satisfied, answer.summary.clone())
            }
            None => (BTreeSet::new(), String::new()),
        };
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
                innovation: None,
                concerns_addressed: None,
            },
            &config.scoring_weights,
            &tables().scoring,
        );
        let acc = accuracy(sel.proposal_score, implementation.total);
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
        let checked_off = if passed {
            self.commit_and_check_off(bench, contest, sel, &summary, &satisfied)
                .await?
        } else {
            self.input.workspace.reset_worktree(&bench.wt).await?;
            Vec::new()
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
            },
            &awarded,
            &self.accounts,
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

        if passed {
            let round = self.state.next_round;
            self.state.passed(v.coverage.after);
            self.state.save(settings)?;
            printer.status(&paint.bold("## Result: SUCCESS"));
            let remaining = contest.open.len() - checked_off.len();
            printer.status(&format!(
                "- Iteration {round}/{}; {remaining} checkbox(es) remain",
                self.input.options.max_iterations
            ));
            return Ok(RoundEnd::Passed { remaining });
        }
        let failure = failure_of(&sel.winner, &v);
        printer.status(&paint.bold("## Result: FAILURE"));
        for r in &failure.reasons {
            printer.status(&format!("- {r}"));
        }
        if self.state.phase == Phase::Initial {
            self.state.failed(failure);
            self.state.save(settings)?;
            printer.status("- Replanning with every bot");
        } else {
            self.trouble.initial = self.state.initial_failure.clone();
            self.trouble.replan = Some(failure.clone());
            self.trouble.last_round = Some(round_report);
            self.trouble.verification = attempts.verification;
            self.state.failed(failure);
            self.state.save(settings)?;
        }
        Ok(RoundEnd::Failed)
    }

    /// Commits the passing attempt (with the trailers) and checks off the satisfied boxes in
    /// the issue body; returns the ids checked off.
    async fn commit_and_check_off(
        &mut self,
        bench: &Bench,
        contest: &Contest,
        sel: &Selection,
        summary: &str,
        satisfied: &BTreeSet<String>,
    ) -> Result<Vec<String>> {
        let config = &self.input.settings.config;
        let message = format!(
            "{} (#{})\n\n{}",
            contest.issue.title,
            self.input.issue,
            summary.trim()
        );
        let id = self
            .input
            .workspace
            .commit(
                &bench.wt,
                &CommitInfo {
                    message: &message,
                    author_name: &config.git.author_name,
                    author_email: &config.git.author_email,
                    bot: &sel.winner.bot_id,
                    run_id: &self.state.run_id,
                },
            )
            .await?;
        let (body, flipped) = check_off(&contest.issue.body, satisfied);
        if !flipped.is_empty() {
            self.input.tracker.set_body(self.input.issue, &body).await?;
        }
        self.input.printer.status(&format!(
            "- Committed {} · checked off: {}",
            &id[..id.len().min(10)],
            if flipped.is_empty() {
                "none".to_owned()
            } else {
                flipped.join(", ")
            }
        ));
        Ok(flipped)
    }
}
