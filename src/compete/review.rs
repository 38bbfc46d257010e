//! Phase 3b, the review of the change (scoring/README.md, Scoring an implementation): after the
//! attempts, the arbiter's `review` role reads the implemented diff and scores it for innovation
//! and for how well the consultations' concerns were addressed, with reasoning. Those two scores
//! replace the neutral 0.5 of the implementation score (and so of the accuracy); when the role
//! cannot answer, the neutral score stays and the reason is recorded. The role is read-only: a
//! change it makes to the worktree is restored and its answer discarded.

use super::crew::{Bench, Contest, Crew};
use super::extract::{prompt_json, PromptIssue};
use super::findings::Attempts;
use super::round::Arrived;
use crate::agent::protocol::{ask, AnswerContext, ReviewAnswer};
use crate::agent::Role;
use crate::market::Review;
use anyhow::Result;

/// The longest diff the review prompt carries.
const MAX_REVIEW_DIFF: usize = 200_000;

/// Reviews the change the attempts left in the worktree (the passing commit, or the last
/// failed attempt's change).
pub(super) async fn review_change(
    crew: &mut Crew<'_>,
    bench: &Bench,
    contest: &Contest,
    winner: &Arrived,
    attempts: &Attempts,
) -> Result<Review> {
    let unavailable = |reason: &str| Review::Unavailable {
        reason: reason.to_owned(),
    };
    if attempts.used == 0 || attempts.environment.is_some() {
        return Ok(unavailable("no change to review"));
    }
    if let Some(cap) = crew
        .accounts
        .cap_reached(&crew.input.settings.config.limits)
    {
        return Ok(unavailable(&cap.to_string()));
    }
    let arbiter = &crew.input.agents.arbiter;
    let backend = match &arbiter.backend {
        Ok(b) => b.clone(),
        Err(why) => return Ok(unavailable(&format!("the arbiter cannot start: {why}"))),
    };
    let diff = crew
        .input
        .workspace
        .patch_text(&bench.wt, MAX_REVIEW_DIFF)
        .await?;
    if diff.trim().is_empty() {
        return Ok(unavailable("the change is empty"));
    }
    let prompt = review_prompt(bench, contest, winner, attempts, &diff)?;
    let printer = crew.input.printer;
    printer.status("- Reviewing the change (innovation, the consultations' concerns)");
    let mut call = contest.site.call(Role::Review, prompt, arbiter.timeout);
    let view = contest.site.watch(&mut call, "review · arbiter");
    let snap = super::guard::watch(crew.input.workspace, &bench.wt).await?;
    let asked = ask::<ReviewAnswer>(backend.as_ref(), &call, &AnswerContext::default()).await;
    drop(view);
    if let Ok(a) = &asked {
        crew.accounts
            .record("arbiter", Role::Review, a.usage, a.duration);
    }
    let tampered = super::guard::changed(
        crew.input.workspace,
        printer,
        &bench.wt,
        &snap,
        "The review role",
    )
    .await?;
    if tampered.is_some() {
        printer.warn("the review role's answer is discarded: the neutral scores stay");
        return Ok(unavailable("the review role changed the worktree"));
    }
    match asked {
        Ok(a) => {
            let r = a.answer;
            printer.status(&format!(
                "- Review: innovation {:.2}, concerns addressed {:.2}",
                r.innovation, r.concerns_addressed
            ));
            Ok(scored(r))
        }
        Err(e) => {
            printer.warn(&format!(
                "the review role gave no usable answer ({e}): the neutral scores stay"
            ));
            Ok(unavailable(&e.to_string()))
        }
    }
}

/// The review role's prompt: the issue, its requirements, the winning proposal, the checks of
/// the last verification, whether an attempt passed, and the change's diff.
fn review_prompt(
    bench: &Bench,
    contest: &Contest,
    winner: &Arrived,
    attempts: &Attempts,
    diff: &str,
) -> Result<String> {
    let checks: Vec<serde_json::Value> = attempts
        .verification
        .iter()
        .flat_map(|v| &v.checks)
        .map(|c| serde_json::json!({"name": c.name, "passed": c.passed()}))
        .collect();
    // What the implementer tried to reach and the sandbox refused: a finding of its own.
    let refused: Vec<String> = crate::process::egress::refusals()
        .all()
        .iter()
        .filter(|r| r.by.starts_with("implement ") || r.kind == "check")
        .map(crate::process::egress::refusal_line)
        .collect();
    Ok(bench.prompts.render(
        Role::Review,
        &serde_json::json!({
            "issue": PromptIssue::new(&contest.issue),
            "requirements_json": prompt_json(&contest.reqs),
            "proposal_json": prompt_json(&winner.proposal),
            "checks": checks,
            "passed": attempts.passed.is_some(),
            "network_refused": refused,
            "diff": crate::spec::strip_for_prompt(diff),
        }),
    )?)
}

/// The review role's scores, its reasoning trimmed and stripped for prompts.
fn scored(r: ReviewAnswer) -> Review {
    let strip = crate::spec::strip_for_prompt;
    Review::Scored {
        innovation: r.innovation,
        innovation_reasoning: strip(r.innovation_reasoning.trim()),
        concerns_addressed: r.concerns_addressed,
        concerns_reasoning: strip(r.concerns_reasoning.trim()),
    }
}
