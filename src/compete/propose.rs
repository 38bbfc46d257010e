//! Phase 2a, proposals (docs/specification.md §6 step 3): every bot gets the propose prompt — the
//! requirements as JSON with their ids, the repository's guidance files, its own standing and, in a
//! replan round, the failure context — and answers at the same time as the others. A bot whose
//! backend could not be built is skipped with that reason without being called.

use super::agents::Agent;
use super::extract::{prompt_guidance, prompt_json, PromptIssue};
use super::site::CallSite;
use crate::agent::fanout::{gather, BotOutcome, BotResult, BotTask};
use crate::agent::prompts::{PromptError, Prompts};
use crate::agent::Role;
use crate::progress::Progress;
use crate::spec::{Guidance, Requirements};
use crate::tracker::Issue;
use serde::Serialize;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A bot's standing in the marketplace, shown in its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Standing {
    pub weight: f64,
    pub efficiency: f64,
    pub budget: u32,
}

/// A failing check as the replan prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FailedCheck {
    pub name: String,
    pub output_tail: String,
}

/// What the replan round tells the bots about the failure (docs/specification.md §6 step 9).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FailureContext {
    /// The bot whose proposal failed.
    pub failed_bot: String,
    pub proposal_summary: String,
    /// The failure category (`tests`, `lint`, `format`, `types`, `coverage`, `protected_paths`…).
    pub kind: String,
    pub checks: Vec<FailedCheck>,
}

/// Everything the propose prompts of a round share.
pub struct ProposeRound<'a> {
    pub issue: &'a Issue,
    pub requirements: &'a Requirements,
    pub guidance: &'a [Guidance],
    pub standings: &'a BTreeMap<String, Standing>,
    pub failure: Option<&'a FailureContext>,
    pub site: &'a CallSite,
    pub concurrency: usize,
}

/// The ids a proposal may name.
pub fn requirement_ids(reqs: &Requirements) -> BTreeSet<String> {
    reqs.explicit_requirements
        .iter()
        .map(|r| r.id.clone())
        .chain(reqs.implicit_requirements.iter().map(|r| r.id.clone()))
        .collect()
}

/// Renders one bot's propose prompt.
pub fn prompt(
    prompts: &Prompts,
    round: &ProposeRound<'_>,
    bot_id: &str,
) -> Result<String, PromptError> {
    let standing = round.standings.get(bot_id).copied().unwrap_or(Standing {
        weight: 0.0,
        efficiency: 1.0,
        budget: 1,
    });
    let failure = round.failure.map(|f| {
        json!({
            "proposal_summary": crate::spec::strip_for_prompt(&f.proposal_summary),
            "kind": f.kind,
            "checks": f.checks,
            "is_own": f.failed_bot == bot_id,
        })
    });
    prompts.render(
        Role::Propose,
        &json!({
            "bot_id": bot_id,
            "standing": {
                "weight": format!("{:.3}", standing.weight),
                "efficiency": format!("{:.2}", standing.efficiency),
                "budget": standing.budget,
            },
            "issue": PromptIssue::new(round.issue),
            "round": round.site.round,
            "phase": round.site.phase.as_str(),
            "requirements_json": prompt_json(round.requirements),
            "guidance": prompt_guidance(round.guidance),
            "failure": failure,
        }),
    )
}

/// Asks every bot of `bots` (the seated ones) for a proposal; one result per bot, in their
/// order.
pub async fn proposals(
    bots: &[&Agent],
    prompts: &Prompts,
    round: &ProposeRound<'_>,
    progress: &Progress,
) -> Result<Vec<BotResult>, PromptError> {
    let mut tasks = Vec::new();
    let mut unbuilt = Vec::new();
    for &bot in bots {
        match &bot.backend {
            Ok(backend) => {
                let text = prompt(prompts, round, &bot.name)?;
                let mut call = round.site.call(Role::Propose, text, bot.timeout);
                call.bot_id = Some(bot.name.clone());
                tasks.push(BotTask {
                    bot_id: bot.name.clone(),
                    backend: backend.clone(),
                    call,
                });
            }
            Err(why) => unbuilt.push(BotResult {
                bot_id: bot.name.clone(),
                backend: "(not built)".into(),
                outcome: BotOutcome::Skipped {
                    reason: "failed to start",
                    detail: why.clone(),
                },
                duration: Duration::ZERO,
            }),
        }
    }
    let ids = requirement_ids(round.requirements);
    let mut all = gather(tasks, &ids, round.concurrency, progress).await;
    all.extend(unbuilt);
    let position = |id: &str| bots.iter().position(|b| b.name == id);
    all.sort_by_key(|r| position(&r.bot_id));
    Ok(all)
}
