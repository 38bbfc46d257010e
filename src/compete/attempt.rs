//! Phase 3: the implementer's attempts on the winning proposal, each verified by ralph's own
//! checks (after a failed attempt the worktree is reset and the implementer gets the failing
//! checks), then the `verify` role deciding which open checkboxes the passing change satisfies,
//! and the failure context a replan gets when no attempt passed.

use super::extract::{prompt_json, PromptIssue};
use super::propose::{FailedCheck, FailureContext};
use super::round::Arrived;
use super::run::{Bench, Contest, Run, Selection};
use super::state::Failure;
use crate::agent::protocol::{ask, AnswerContext, ImplementAnswer, VerifyAnswer};
use crate::agent::Role;
use crate::checks::CheckKind;
use crate::verify::{verify, VerificationReport};
use anyhow::Result;
use std::collections::BTreeMap;

/// The most diff text the `verify` role is shown.
const MAX_VERIFY_DIFF: usize = 200_000;

/// What the attempts came to.
pub(super) struct Attempts {
    /// The implementer's answer of the attempt that passed verification; `None` when none did.
    pub answer: Option<ImplementAnswer>,
    /// The passing attempt's verification, else the last one's.
    pub verification: Option<VerificationReport>,
    /// Attempts made.
    pub used: u32,
}

/// The failing checks and protected paths of a verification, for the next attempt's prompt.
fn failures_for_prompt(v: &VerificationReport) -> Vec<FailedCheck> {
    v.failing_checks()
        .map(|c| FailedCheck {
            name: c.name.clone(),
            output_tail: c.output_tail.clone(),
        })
        .chain(v.protected.iter().map(|f| FailedCheck {
            name: format!("protected path {}", f.path),
            output_tail: f.reason.clone(),
        }))
        .collect()
}

impl Run<'_> {
    /// Up to the winner's budget of attempts; stops at the first that passes verification.
    pub(super) async fn implement(
        &mut self,
        bench: &Bench,
        contest: &Contest,
        sel: &Selection,
    ) -> Result<Attempts> {
        let printer = self.input.printer;
        let implementer = &self.input.agents.implementer;
        let backend = match &implementer.backend {
            Ok(b) => b.clone(),
            Err(why) => return Err(anyhow::anyhow!("the implementer cannot start: {why}")),
        };
        let budget = sel.budget;
        let mut previous: Vec<FailedCheck> = Vec::new();
        let mut last = None;
        let mut used = 0;
        for attempt in 1..=budget {
            used = attempt;
            if attempt > 1 {
                self.input.workspace.reset_worktree(&bench.wt).await?;
            }
            let prompt = bench.prompts.render(
                Role::Implement,
                &serde_json::json!({
                    "issue": PromptIssue::new(&contest.issue),
                    "branch": bench.wt.branch,
                    "checks": bench.plan.checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                    "requirements_json": prompt_json(&contest.reqs),
                    "proposal_json": prompt_json(&sel.winner.proposal),
                    "previous_failures": previous,
                    "attempt": attempt,
                    "budget": budget,
                }),
            )?;
            let mut call = contest
                .site
                .call(Role::Implement, prompt, implementer.timeout);
            call.workdir = bench.wt.path.clone();
            call.attempt = (attempt - 1) * 2;
            let ctx = AnswerContext {
                requirement_ids: contest
                    .reqs
                    .explicit_requirements
                    .iter()
                    .map(|r| r.id.clone())
                    .collect(),
                ..AnswerContext::default()
            };
            let answer = match ask::<ImplementAnswer>(backend.as_ref(), &call, &ctx).await {
                Ok(asked) => {
                    self.accounts.record(
                        "implementer",
                        Role::Implement,
                        asked.usage,
                        asked.duration,
                    );
                    Some(asked.answer)
                }
                Err(e) => {
                    printer.warn(&format!("attempt {attempt}: the implementer failed: {e}"));
                    None
                }
            };
            let v = verify(
                self.input.workspace,
                &bench.wt,
                &bench.plan,
                self.state.coverage_before,
                bench.timeout,
            )
            .await?;
            let ok = v.passed() && answer.is_some();
            printer.status(&format!(
                "- Attempt {attempt}/{budget}: {}",
                if ok {
                    "verification passed".to_owned()
                } else {
                    let mut r = v.failure_reasons();
                    if answer.is_none() {
                        r.insert(0, "the implementer gave no answer".into());
                    }
                    r.join("; ")
                }
            ));
            if ok {
                return Ok(Attempts {
                    answer,
                    verification: Some(v),
                    used: attempt,
                });
            }
            previous = failures_for_prompt(&v);
            last = Some(v);
        }
        Ok(Attempts {
            answer: None,
            verification: last,
            used,
        })
    }

    /// Which open checkboxes the implementation satisfies: the `verify` role's answer, limited
    /// to the open ones; when the arbiter cannot answer, the checkboxes both the proposal and
    /// the implementer claim (the checks passed, so the claim has their support).
    pub(super) async fn verify_requirements(
        &mut self,
        bench: &Bench,
        contest: &Contest,
        sel: &Selection,
        answer: &ImplementAnswer,
        verification: Option<&VerificationReport>,
    ) -> Result<BTreeMap<String, String>> {
        let printer = self.input.printer;
        let open = &contest.open;
        let diff = self
            .input
            .workspace
            .patch_text(&bench.wt, MAX_VERIFY_DIFF)
            .await?;
        let checks: Vec<serde_json::Value> = verification
            .map(|v| {
                v.checks
                    .iter()
                    .map(|c| serde_json::json!({"name": c.name, "passed": c.passed()}))
                    .collect()
            })
            .unwrap_or_default();
        let prompt = bench.prompts.render(
            Role::Verify,
            &serde_json::json!({
                "issue": PromptIssue::new(&contest.issue),
                "requirements_json": prompt_json(&contest.reqs),
                "checks": checks,
                "diff": crate::spec::strip_for_prompt(&diff),
            }),
        )?;
        let fallback = || -> BTreeMap<String, String> {
            sel.winner
                .proposal
                .spec_alignment
                .checkboxes_addressed
                .iter()
                .filter(|id| open.contains(*id) && answer.checkboxes_completed.contains(id))
                .map(|id| {
                    (
                        id.clone(),
                        "claimed by the proposal and the implementer; every check passed"
                            .to_owned(),
                    )
                })
                .collect()
        };
        let arbiter = &self.input.agents.arbiter;
        let Ok(backend) = &arbiter.backend else {
            printer
                .warn("no arbiter to verify the requirements: using the claims the checks support");
            return Ok(fallback());
        };
        let call = contest.site.call(Role::Verify, prompt, arbiter.timeout);
        let ctx = AnswerContext {
            requirement_ids: open.clone(),
            ..AnswerContext::default()
        };
        match ask::<VerifyAnswer>(backend.as_ref(), &call, &ctx).await {
            Ok(asked) => {
                self.accounts
                    .record("arbiter", Role::Verify, asked.usage, asked.duration);
                Ok(asked
                    .answer
                    .satisfied
                    .into_iter()
                    .filter(|s| open.contains(&s.id))
                    .map(|s| (s.id, crate::spec::strip_for_prompt(&s.evidence)))
                    .collect())
            }
            Err(e) => {
                printer.warn(&format!(
                    "the verify role failed ({e}): using the claims the checks support"
                ));
                Ok(fallback())
            }
        }
    }
}

/// What a failed implementation tells the replan (seed 001's categories).
pub(super) fn failure_of(winner: &Arrived, v: &VerificationReport) -> Failure {
    let mut reasons = v.failure_reasons();
    if reasons.is_empty() {
        reasons.push("the implementer produced no passing attempt".into());
    }
    let kind = if !v.protected.is_empty() {
        "protected_paths"
    } else if v.failing_checks().any(|c| c.kind == CheckKind::Test) {
        "tests"
    } else if v.failing_checks().next().is_some() {
        "quality"
    } else if v.coverage.dropped() {
        "coverage"
    } else {
        "implementation"
    };
    Failure {
        context: FailureContext {
            failed_bot: winner.bot_id.clone(),
            proposal_summary: winner.proposal.approach_summary.clone(),
            kind: kind.into(),
            checks: v
                .failing_checks()
                .map(|c| FailedCheck {
                    name: c.name.clone(),
                    output_tail: c.output_tail.clone(),
                })
                .collect(),
        },
        proposal: winner.proposal.clone(),
        reasons,
    }
}
