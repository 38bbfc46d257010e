//! The run report (docs/specification.md §2, `ralph compete --json`), as data: how the run ended,
//! and per round the proposals with their six scores and total, the ranking, the winner, the
//! skipped bots with their reasons, the judges and the checks. The competition fills it in;
//! `render::run` turns it into text for terminals, pull requests, comments and job summaries.

use crate::agent::accounts::{AccountRow, Spend};
use crate::agent::Phase;
use crate::market::Scores;
use crate::spec::Requirements;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every checkbox is done.
    Complete,
    /// The rounds run succeeded; checkboxes remain.
    Success,
    /// Handed to a human (`attention-needed`).
    Escalated,
    /// Stopped before the end (a run cap, an interruption).
    Aborted,
    /// `--dry-run`: proposals, scores and ranking only.
    DryRun,
}

impl RunOutcome {
    /// The word of the JSON report and the Action's `outcome` output.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Complete => "complete",
            RunOutcome::Success => "success",
            RunOutcome::Escalated => "escalated",
            RunOutcome::Aborted => "aborted",
            RunOutcome::DryRun => "dry_run",
        }
    }

    /// Whether the run ended without handing the issue to a human.
    pub fn succeeded(self) -> bool {
        matches!(
            self,
            RunOutcome::Complete | RunOutcome::Success | RunOutcome::DryRun
        )
    }
}

impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `ralph compete --json`.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub issue: u64,
    pub title: String,
    pub run_id: String,
    pub outcome: RunOutcome,
    /// The requirements of the last round, and how they were found (`extract` or `checkboxes`).
    pub requirements: Requirements,
    pub extraction: &'static str,
    pub rounds: Vec<RoundReport>,
    /// Event files written, by name.
    pub events: Vec<String>,
    /// Tokens, cost and time per agent and role, and in total.
    pub accounts: Vec<AccountRow>,
    pub total: Spend,
    /// Why the run stopped early, when it did (a `[limits]` cap).
    pub stopped: Option<String>,
    /// The branch of the run (none for a dry run).
    pub branch: Option<String>,
    /// The pull request opened when the issue was completed.
    pub pr_url: Option<String>,
    /// Why the run was escalated to a human.
    pub escalation: Option<String>,
    pub warnings: Vec<String>,
    /// How the agents and checks were confined (`None`: not known, e.g. a run driven by tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::process::sandbox::Status>,
    /// Changes an agent or a check made to the repository's git directory (hooks, config,
    /// the worktree's links), each with who made it; ralph restored every one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_tampering: Vec<String>,
    /// Connections the sandbox's network policy refused, by who tried and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_refused: Vec<crate::process::egress::Refusal>,
    /// Where the run's time went: each phase on the run's clock, in start order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<crate::timeline::PhaseTime>,
    /// The checks' time: how many times they ran (the baseline, each attempt) and for how long.
    #[serde(default)]
    pub check_time: crate::timeline::CheckTime,
    /// The phases that decided when the run ended, first to last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critical_path: Vec<String>,
    /// The run's wall time.
    #[serde(default)]
    pub wall_ms: u64,
}

/// One round of the run.
#[derive(Debug, Clone, Serialize)]
pub struct RoundReport {
    pub round: u32,
    pub phase: Phase,
    /// The seed of the blind order (`proposal_1…K`), to reproduce it.
    pub seed: u64,
    /// In blind order.
    pub proposals: Vec<ProposalReport>,
    pub skipped: Vec<SkippedBot>,
    /// Proposal ids, best first.
    pub ranking: Vec<String>,
    /// The winning proposal id; `None` when the round went to human review.
    pub winner: Option<String>,
    pub winner_bot: Option<String>,
    /// Every proposal scored below the threshold (`scoring/proposal.toml`).
    pub human_review: bool,
    pub judges: JudgesReport,
    /// The checks of the round's passing attempt, else of its last one.
    pub checks: Vec<CheckReport>,
    /// The tests that attempt's change adds or edits, and whether they ran and passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_tests: Vec<crate::checks::new_tests::NewTest>,
    /// The change's edits to a check's settings that its checks also pass under the base's
    /// settings: kept, named for the maintainer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings_changes: Vec<crate::workspace::Finding>,
    /// Test files the change deletes, or tests it removes, whose tests still run and pass
    /// elsewhere: moved, named for the maintainer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved_tests: Vec<crate::workspace::Finding>,
    /// Implementation attempts the round used.
    #[serde(default)]
    pub attempts: u32,
    /// The verify role could not answer: the boxes checked off are the ones the proposal and
    /// the implementer both claimed, with every check passing.
    #[serde(default)]
    pub verified_by_claims: bool,
    /// What the implementer said it did, when an attempt passed.
    #[serde(default)]
    pub implementation_summary: Option<String>,
    /// Coverage before the change (the baseline's) and after it, in percent, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<CoverageReport>,
    /// The attempts failed only through the environment: what is wrong with it (no events
    /// were written for the round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_failure: Option<String>,
    /// The implemented change's score, the proposal's accuracy and the review of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<ImplementationReport>,
    /// The order check: the winners of the forward and the reversed readings and whether the
    /// top flipped; absent when no judge was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<crate::market::order::OrderCheck>,
    /// The audit of an audited round (`[marketplace] audit_rate`): the runner-up implemented
    /// under the same rules and never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditReport>,
    /// With `[marketplace] seats`: who was seated to propose and why (docs/specification.md
    /// §8.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<crate::market::seating::Seating>,
}

/// The implementation's six scores (how each was reached in `details`), their weighted total,
/// the accuracy of the proposal's score, and the `review` role's judgement of the change.
#[derive(Debug, Clone, Serialize)]
pub struct ImplementationReport {
    pub scores: Scores,
    pub total: f64,
    pub accuracy: f64,
    pub details: BTreeMap<&'static str, String>,
    pub review: crate::market::Review,
}

/// Coverage around a round's change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoverageReport {
    pub before: Option<f64>,
    pub after: Option<f64>,
}

impl RoundReport {
    /// A round's report as judging leaves it: its proposals scored and ranked, the winner (if
    /// any) named, nothing implemented yet and no judge named (the caller adds them).
    pub fn judged(
        round: u32,
        phase: Phase,
        seed: u64,
        proposals: Vec<ProposalReport>,
        skipped: Vec<SkippedBot>,
        ranking: crate::market::Ranking,
        order: Option<crate::market::order::OrderCheck>,
    ) -> RoundReport {
        let winner = ranking.winner().map(String::from);
        let winner_bot = winner.as_ref().and_then(|w| {
            proposals
                .iter()
                .find(|p| &p.proposal_id == w)
                .map(|p| p.bot_id.clone())
        });
        RoundReport {
            round,
            phase,
            seed,
            proposals,
            skipped,
            human_review: ranking.human_review,
            ranking: ranking.order,
            winner,
            winner_bot,
            judges: JudgesReport::default(),
            checks: Vec::new(),
            new_tests: Vec::new(),
            settings_changes: Vec::new(),
            moved_tests: Vec::new(),
            attempts: 0,
            verified_by_claims: false,
            implementation_summary: None,
            environment_failure: None,
            implementation: None,
            coverage: None,
            order,
            audit: None,
            seating: None,
        }
    }

    /// The proposals best first, with their 1-based rank.
    pub fn ranked(&self) -> impl Iterator<Item = (usize, &ProposalReport)> {
        self.ranking
            .iter()
            .filter_map(|id| self.proposals.iter().find(|p| &p.proposal_id == id))
            .enumerate()
            .map(|(i, p)| (i + 1, p))
    }
}

/// A scored proposal.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalReport {
    pub proposal_id: String,
    pub bot_id: String,
    pub total_score: f64,
    pub scores: Scores,
    /// How each dimension's score was reached (formula or the judge's reasoning).
    pub reasons: BTreeMap<&'static str, String>,
    pub submission_time: DateTime<Utc>,
    pub success_probability: f64,
    pub approach_summary: String,
    pub files_affected: Vec<String>,
    /// The answer needed the repair retry.
    pub repaired: bool,
    pub warnings: Vec<String>,
    /// How far the judges' scores of this proposal moved when the proposals were read in the
    /// reverse order (0 to 1; `[arbiter] order_swaps`); absent when judged in one order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_disagreement: Option<f64>,
}

/// The runner-up's implementation in an audited round.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    pub proposal_id: String,
    pub bot_id: String,
    /// Whether an attempt passed the checks; `None` when the audit could not run.
    pub passed: Option<bool>,
    pub attempts: u32,
    /// The checks of the last attempt.
    pub checks: Vec<CheckReport>,
    /// Why the audit did not run or did not finish.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the audit cost: tokens, known money and time.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
}

/// A bot without a proposal this round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedBot {
    pub bot_id: String,
    /// `failed to start`, `timed out`, `failed`, `invalid answer`.
    pub reason: String,
    pub detail: String,
}

/// Which judges answered, and why the others did not.
#[derive(Debug, Clone, Default, Serialize)]
pub struct JudgesReport {
    pub answered: Vec<String>,
    pub failures: Vec<JudgeFailure>,
}

/// A judge that gave no usable answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeFailure {
    pub judge: String,
    pub reason: String,
}

/// A check ralph ran on the implementation.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub name: String,
    /// It ran and passed (false for an unavailable check too: read `status`).
    pub passed: bool,
    /// `passed`, `failed`, `timed_out`, `unavailable`, `failing_on_base` or `skipped`.
    pub status: CheckState,
    pub duration_ms: u64,
    /// Why it only advised (a check ralph adds that the project does not run): its failure
    /// was shown, not held against the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
}

/// How a check came out, as every rendering shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    Passed,
    Failed,
    TimedOut,
    /// Its tool is missing: it said nothing about the change.
    Unavailable,
    /// It fails on the base too, and no worse with the change: not held against it.
    FailingOnBase,
    /// Not run: an earlier check had already failed for the change.
    Skipped,
}

impl CheckState {
    /// The mark and the word of markdown renderings.
    pub fn markdown(self) -> &'static str {
        match self {
            CheckState::Passed => "✅ passed",
            CheckState::Failed => "❌ failed",
            CheckState::TimedOut => "⏱️ timed out",
            CheckState::Unavailable => "➖ unavailable",
            CheckState::FailingOnBase => "⚠️ failing on base",
            CheckState::Skipped => "⏭️ not run",
        }
    }
}

/// An open checkbox when the run stopped, with the verify role's reason when it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemainingBox {
    pub id: String,
    pub text: String,
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_display_as_their_json_words() {
        for o in [
            RunOutcome::Complete,
            RunOutcome::Success,
            RunOutcome::Escalated,
            RunOutcome::Aborted,
            RunOutcome::DryRun,
        ] {
            assert_eq!(serde_json::to_value(o).unwrap(), o.to_string());
        }
        assert!(RunOutcome::Complete.succeeded() && !RunOutcome::Aborted.succeeded());
    }
}
