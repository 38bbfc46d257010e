//! The `verify` role, once an attempt passed ralph's checks: which open checkboxes the change
//! satisfies, on the arbiter's word limited to the open ones — or, when the arbiter cannot
//! answer (there is none, it failed, or it changed the worktree), on the claims both the
//! proposal and the implementer make, which every passing check supports.

use super::crew::Target;
use super::crew::{Bench, Contest, Crew};
use super::extract::{prompt_json, PromptIssue};
use super::findings::Verdict;
use super::round::Arrived;
use crate::agent::protocol::{ask, AnswerContext, ImplementAnswer, VerifyAnswer};
use crate::agent::Role;
use crate::verify::VerificationReport;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

/// The most diff text the `verify` role is shown.
const MAX_VERIFY_DIFF: usize = 200_000;

/// Which open checkboxes the change satisfies: the `verify` role's answer, limited to the
/// open ones; only when the arbiter cannot answer, the checkboxes both the proposal and the
/// implementer claim (every check passed, so the claim has their support).
pub(super) async fn verify_requirements(
    crew: &mut Crew<'_>,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    answer: &ImplementAnswer,
    verification: &VerificationReport,
) -> Result<Verdict> {
    let printer = crew.input.printer;
    let open = &contest.open;
    let wt = target.wt;
    let diff = crew.input.workspace.patch_text(wt, MAX_VERIFY_DIFF).await?;
    let prompt = verify_prompt(bench, contest, verification, &diff)?;
    let fallback = || claimed(target.proposal, open, answer);
    let arbiter = &crew.input.agents.arbiter;
    let Ok(backend) = &arbiter.backend else {
        printer.warn("no arbiter to verify the requirements: using the claims the checks support");
        return Ok(fallback());
    };
    let mut call = contest.site.call(Role::Verify, prompt, arbiter.timeout);
    call.variant = target.purpose.variant();
    let view = contest.site.watch(&mut call, "verify · arbiter");
    let ctx = AnswerContext {
        requirement_ids: open.clone(),
        ..AnswerContext::default()
    };
    // The verify role reads the change in the worktree; it must leave it as it is.
    let snap = super::guard::watch(crew.input.workspace, wt).await?;
    let asked = ask::<VerifyAnswer>(backend.as_ref(), &call, &ctx).await;
    drop(view);
    if super::guard::changed(crew.input.workspace, printer, wt, &snap, "The verify role")
        .await?
        .is_some()
    {
        if let Ok(a) = &asked {
            crew.accounts
                .record("arbiter", Role::Verify, a.usage, a.duration);
        }
        printer.warn("the verify role's answer is discarded: using the claims the checks support");
        return Ok(fallback());
    }
    match asked {
        Ok(asked) => {
            crew.accounts
                .record("arbiter", Role::Verify, asked.usage, asked.duration);
            Ok(answered(asked.answer, open))
        }
        Err(e) => {
            printer.warn(&format!(
                "the verify role failed ({e}): using the claims the checks support"
            ));
            Ok(fallback())
        }
    }
}

/// The `verify` role's prompt: the issue, its requirements, which checks passed and the
/// change's diff.
fn verify_prompt(
    bench: &Bench,
    contest: &Contest,
    verification: &VerificationReport,
    diff: &str,
) -> Result<String> {
    let checks: Vec<serde_json::Value> = verification
        .checks
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "passed": c.passed()}))
        .collect();
    Ok(bench.prompts.render(
        Role::Verify,
        &serde_json::json!({
            "issue": PromptIssue::new(&contest.issue),
            "requirements_json": prompt_json(&contest.reqs),
            "checks": checks,
            "diff": crate::spec::strip_for_prompt(diff),
        }),
    )?)
}

/// The verdict when the arbiter cannot answer: the open checkboxes both the proposal and the
/// implementer claim.
fn claimed(proposal: &Arrived, open: &BTreeSet<String>, answer: &ImplementAnswer) -> Verdict {
    Verdict {
        satisfied: proposal
            .proposal
            .spec_alignment
            .checkboxes_addressed
            .iter()
            .filter(|id| open.contains(*id) && answer.checkboxes_completed.contains(id))
            .map(|id| {
                (
                    id.clone(),
                    "claimed by the proposal and the implementer (the verify role could not answer); every check passed"
                        .to_owned(),
                )
            })
            .collect(),
        unsatisfied: BTreeMap::new(),
        by_verify_role: false,
    }
}

/// The verify role's verdict, limited to the open checkboxes, its evidence and reasons
/// stripped for prompts.
fn answered(answer: VerifyAnswer, open: &BTreeSet<String>) -> Verdict {
    let strip = crate::spec::strip_for_prompt;
    Verdict {
        satisfied: answer
            .satisfied
            .into_iter()
            .filter(|s| open.contains(&s.id))
            .map(|s| (s.id, strip(&s.evidence)))
            .collect(),
        unsatisfied: answer
            .unsatisfied
            .into_iter()
            .filter(|u| open.contains(&u.id))
            .map(|u| (u.id, strip(&u.reason)))
            .collect(),
        by_verify_role: true,
    }
}
