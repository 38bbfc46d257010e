//! Admission: what is refused before a competition changes anything — a pull request, a closed
//! issue, nothing to resume, not ready, already in progress, no open checkbox; agents that cannot
//! start; no check to verify with — and the claim that follows (labels, assignment).

use super::crew::RunInput;
use super::state::RunState;
use crate::checks::detect;
use crate::error::UserError;
use crate::spec::Requirements;
use crate::tracker::workflow::{LABEL_ATTENTION, LABEL_IN_PROGRESS, LABEL_RALPH};
use crate::tracker::{Issue, IssueState};
use anyhow::Result;

/// The refusals about the issue, before anything changes: a pull request, a closed issue,
/// nothing to resume, not ready, already in progress, no open checkbox. Returns the issue and,
/// on `--resume`, the saved state.
pub(super) async fn admit(input: &RunInput<'_>) -> Result<(Issue, Option<RunState>)> {
    let n = input.issue;
    let issue = input.tracker.issue(n).await?;
    let ready = &input.settings.config.github.ready_label;
    if issue.is_pull_request {
        return Err(UserError::usage(format!("#{n} is a pull request, not an issue")).into());
    }
    if issue.state == IssueState::Closed {
        return Err(UserError::usage(format!("issue #{n} is closed"))
            .with_hint("reopen it if it should be worked on")
            .into());
    }
    if input.options.resume {
        let prior = RunState::load(input.settings, n)?.ok_or_else(|| {
            UserError::usage(format!("there is no run of issue #{n} to resume"))
                .with_hint(format!("start one with `ralph compete {n}`"))
        })?;
        return Ok((issue, Some(prior)));
    }
    if !issue.has_label(ready) {
        return Err(
            UserError::usage(format!("issue #{n} is not labelled `{ready}`"))
                .with_hint(format!(
                    "mark it ready with `ralph ready {n}` once its spec is complete"
                ))
                .into(),
        );
    }
    if issue.has_label(LABEL_IN_PROGRESS) {
        return Err(UserError::usage(format!(
            "issue #{n} is already `{LABEL_IN_PROGRESS}`"
        ))
        .with_hint(format!(
            "another run may be working on it; to continue a stopped run use `ralph compete {n} --resume`, or re-arm it with `ralph ready {n}`"
        ))
        .into());
    }
    if Requirements::from_body(&issue.body).open().next().is_none() {
        return Err(UserError::usage(format!(
            "issue #{n} has no open checkbox: there is nothing to compete on"
        ))
        .with_hint(crate::spec::requirements_hint(n))
        .into());
    }
    Ok((issue, None))
}

/// At least one check must be configured or detected: ralph never takes an agent's word.
pub(super) fn admit_checks(input: &RunInput<'_>) -> Result<()> {
    let plan = detect(&input.settings.root, &input.settings.config.checks);
    if plan.checks.is_empty() {
        return Err(UserError::usage(
            "no check is configured or detected: ralph cannot verify an implementation",
        )
        .with_hint(format!(
            "name the checks under [checks] in .ralph/config.toml, e.g.\n{}",
            crate::checks::example(&input.settings.root)
        ))
        .into());
    }
    Ok(())
}

/// The agents must be able to start before anything changes: the implementer, the arbiter and
/// at least one bot; a bot that cannot is skipped for the run with a warning.
pub(super) fn admit_agents(input: &mut RunInput<'_>) -> Result<()> {
    if let Some(cap) = input.settings.config.limits.max_cost_usd {
        let unknown = input.agents.without_cost();
        if !unknown.is_empty() {
            input.printer.warn(&format!(
                "`limits.max_cost_usd` = {cap} cannot see what {} spend: their backend reports no cost; set `price` on them",
                unknown.join(", ")
            ));
        }
    }
    if let Some(warning) = super::seats::unseen_cost(&input.settings.config, &input.agents) {
        input.printer.warn(&warning);
    }
    match input.agents.usable() {
        Err(fatal) => Err(UserError::usage(format!(
            "the competition cannot start its agents:\n  {}",
            fatal.join("\n  ")
        ))
        .with_hint("install the missing programs or set the keys, or change the agents in .ralph/config.toml; `ralph doctor` checks everything")
        .into()),
        Ok(skipped) => {
            for s in &skipped {
                input.printer.warn(&format!("skipping a bot for this run: {s}"));
            }
            input.agents.bots.retain(|b| b.backend.is_ok());
            Ok(())
        }
    }
}

/// Labels `ready` → `in-progress` + `ralph`, and the issue assigned to the token's user.
pub(super) async fn claim(input: &RunInput<'_>) -> Result<()> {
    let (tracker, n, printer) = (input.tracker, input.issue, input.printer);
    tracker
        .add_labels(n, &[LABEL_IN_PROGRESS.to_owned(), LABEL_RALPH.to_owned()])
        .await?;
    tracker
        .remove_label(n, &input.settings.config.github.ready_label)
        .await?;
    tracker.remove_label(n, LABEL_ATTENTION).await?;
    match tracker.current_user().await {
        Ok(Some(me)) => {
            if let Err(e) = tracker.assign(n, &[me]).await {
                printer.warn(&format!("could not assign #{n}: {e:#}"));
            }
        }
        Ok(None) => {}
        Err(e) => printer.warn(&format!("could not tell the token's user: {e:#}")),
    }
    Ok(())
}
