//! One call of the implementer on an attempt's worktree: its prompt (with the previous
//! attempts' failures), its answer, what it changed in git's own files (undone), its result
//! as the commit will take it, and the by-products it generated (named, left out).

use super::crew::{Bench, Contest, Crew};
use super::crew::{Purpose, Target};
use super::extract::{prompt_json, PromptIssue};
use super::findings::name_some;
use super::propose::FailedCheck;
use crate::agent::protocol::{ask, AnswerContext, ImplementAnswer};
use crate::agent::Role;
use crate::workspace::Worktree;
use anyhow::Result;
use std::collections::BTreeSet;

/// One call of the implementer: its answer (none when it failed), what it changed in git's
/// files (restored), and its result.
pub(super) struct Implemented {
    pub answer: Option<ImplementAnswer>,
    pub by_agent: Option<String>,
    pub result: crate::workspace::Snapshot,
    /// What the run report should say about it (by-products left out).
    pub note: Option<String>,
}

/// One call of the implementer on the worktree: the prompt (with the previous attempts'
/// failures), the answer, what it changed in git's files (restored), and its result as the
/// commit will take it; by-products it generated are named and left out.
pub(super) async fn implement_once(
    crew: &mut Crew<'_>,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    attempt: u32,
    previous: &[FailedCheck],
    tag: &str,
) -> Result<Implemented> {
    let Target {
        wt,
        proposal,
        budget,
        purpose,
        ..
    } = *target;
    let label = purpose.label().to_lowercase();
    let printer = crew.input.printer;
    let implementer = &crew.input.agents.implementer;
    let backend = match &implementer.backend {
        Ok(b) => b.clone(),
        Err(why) => return Err(anyhow::anyhow!("the implementer cannot start: {why}")),
    };
    let prompt = implement_prompt(bench, contest, target, attempt, previous)?;
    let mut call = contest
        .site
        .call(Role::Implement, prompt, implementer.timeout);
    call.workdir = wt.path.clone();
    call.attempt = (attempt - 1) * 2;
    call.variant = purpose.variant();
    let view = crew.input.progress.start(format!(
        "{} · {} · attempt {attempt}/{budget}",
        purpose.word(),
        proposal.bot_id
    ));
    call.activity = Some(view.sink());
    let ctx = requirement_context(contest);
    // The by-products already there (the environment, earlier checks): not the
    // implementer's.
    let present: BTreeSet<String> = crew
        .input
        .workspace
        .left_out(wt)
        .await?
        .into_iter()
        .collect();
    let started = std::time::Instant::now();
    let answer = match ask::<ImplementAnswer>(backend.as_ref(), &call, &ctx).await {
        Ok(asked) => {
            crew.accounts
                .record("implementer", Role::Implement, asked.usage, asked.duration);
            Some(asked.answer)
        }
        Err(e) => {
            printer.warn(&format!("{label} {attempt}: the implementer failed: {e}"));
            None
        }
    };
    drop(view);
    crew.timeline.since(format!("attempt {tag}"), started);
    // Whatever the implementer wrote outside its worktree in git's own files is undone
    // before anything else runs, and fails the attempt.
    let by_agent =
        super::guard::sealed(crew.input.workspace, printer, wt, "The implementer").await?;
    // The implementer's result, as the commit will take it: whatever the checks change in
    // it afterwards is put back.
    let result = crew.input.workspace.snapshot(wt).await?;
    let note = by_products(crew, wt, &present, &format!("{label} {attempt}")).await?;
    Ok(Implemented {
        answer,
        by_agent,
        result,
        note,
    })
}

/// What the implementer's answer is read against: the ids of the issue's explicit
/// requirements.
fn requirement_context(contest: &Contest) -> AnswerContext {
    AnswerContext {
        requirement_ids: contest
            .reqs
            .explicit_requirements
            .iter()
            .map(|r| r.id.clone())
            .collect(),
        ..AnswerContext::default()
    }
}

/// The implementer's prompt for attempt `attempt`: the issue, the branch, the checks, the
/// requirements, the proposal and the previous attempts' failures.
fn implement_prompt(
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    attempt: u32,
    previous: &[FailedCheck],
) -> Result<String> {
    let purpose = target.purpose;
    Ok(bench.prompts.render(
        Role::Implement,
        &serde_json::json!({
            "issue": PromptIssue::new(&contest.issue),
            "branch": target.wt.branch,
            "scratch": !purpose.keep(),
            "revision": purpose == Purpose::Revision,
            "checks": target.plan.checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            "requirements_json": prompt_json(&contest.reqs),
            "proposal_json": prompt_json(&target.proposal.proposal),
            "previous_failures": previous,
            "attempt": attempt,
            "budget": target.budget,
        }),
    )?)
}

/// The by-products the implementer generated in `wt` (left out of the commit, and not among
/// the `present` ones from before its call), named on the console and as a note for the run
/// report; `None` when there are none. `name` names the attempt.
async fn by_products(
    crew: &Crew<'_>,
    wt: &Worktree,
    present: &BTreeSet<String>,
    name: &str,
) -> Result<Option<String>> {
    let generated: Vec<String> = crew
        .input
        .workspace
        .left_out(wt)
        .await?
        .into_iter()
        .filter(|p| !present.contains(p))
        .collect();
    Ok((!generated.is_empty()).then(|| {
        let note = format!(
            "{name}: left out of the commit as by-products: {}",
            name_some(&generated)
        );
        crew.input.printer.status(&format!("- {note}"));
        note
    }))
}
