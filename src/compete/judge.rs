//! Phase 2b, judging (docs/specification.md §7): the blinded proposals go to every judge at once
//! with the rubric of `scoring/rubric.md`; each proposal gets the median of the judges'
//! technical-quality and innovation scores. With `[arbiter] order_swaps = 1` each judge also reads
//! the proposals in the reverse order and its two readings are averaged (`market::order`). A
//! reading that fails is left out; when none comes back, every proposal gets the neutral score with
//! the reason "judge unavailable" and the run goes on.

use super::agents::Agent;
use super::extract::{prompt_json, PromptIssue};
use super::site::CallSite;
use crate::agent::prompts::{PromptError, Prompts};
use crate::agent::protocol::{ask, AnswerContext, Asked, JudgeAnswer};
use crate::agent::{AgentError, Role, Usage};
use crate::market::order::{combine, Combined, Mark, Reading};
use crate::market::{tables, Proposal, Subjective, RUBRIC};
pub use crate::run_report::JudgeFailure;
use crate::spec::Requirements;
use crate::tracker::Issue;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::task::JoinSet;

/// What the judges said about the round.
#[derive(Debug, Clone)]
pub struct Judged {
    /// By proposal id: the combined view (each judge's readings averaged, then the median
    /// across judges), or the neutral scores when no judge answered.
    pub views: BTreeMap<String, Subjective>,
    /// Every reading that came back, forward and reversed.
    pub readings: Vec<Reading>,
    /// The readings combined: also the forward-only and reversed-only views and each
    /// proposal's disagreement between the two orders.
    pub combined: Combined,
    /// Judges that answered at least one reading.
    pub answered: Vec<String>,
    /// Readings that did not come back, with the reason (`judge (reversed order)` for the
    /// second reading).
    pub failures: Vec<JudgeFailure>,
    /// What each reading that came back cost (one entry per call, so a judge read in both
    /// orders counts two calls).
    pub spend: Vec<(String, Usage, Duration)>,
}

/// Asks every judge to score the blinded proposals `(proposal id, proposal)`, listed in the
/// round's order and, with `swaps` ≥ 1, again in the reverse order; all readings at once.
pub async fn judge(
    judges: &[Agent],
    prompts: &Prompts,
    issue: &Issue,
    requirements: &Requirements,
    blinded: &[(String, Proposal)],
    swaps: u32,
    site: &CallSite,
) -> Result<Judged, PromptError> {
    let prompt_for = |reversed: bool| judge_prompt(prompts, issue, requirements, blinded, reversed);
    let mut orders = vec![(false, prompt_for(false)?)];
    if swaps > 0 && blinded.len() > 1 {
        orders.push((true, prompt_for(true)?));
    }
    let forward: Vec<String> = blinded.iter().map(|(id, _)| id.clone()).collect();
    let proposal_ids: BTreeSet<String> = forward.iter().cloned().collect();

    let mut failures = Vec::new();
    let mut set = start_readings(judges, &orders, &proposal_ids, site, &mut failures);

    let mut readings = Vec::new();
    let mut spend: Vec<(String, Usage, Duration)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        let Ok((name, reversed, result)) = joined else {
            tracing::error!("a judge task ended abnormally");
            continue;
        };
        match result {
            Ok(asked) => {
                readings.push(reading(name.clone(), reversed, &forward, asked.answer));
                spend.push((name, asked.usage, asked.duration));
            }
            Err(e) => failures.push(JudgeFailure {
                judge: if reversed {
                    format!("{name} (reversed order)")
                } else {
                    name
                },
                reason: e.to_string(),
            }),
        }
    }
    readings.sort_by(|a, b| (&a.judge, a.reversed).cmp(&(&b.judge, b.reversed)));
    failures.sort_by(|a, b| a.judge.cmp(&b.judge));
    spend.sort_by(|a, b| a.0.cmp(&b.0));
    let mut answered: Vec<String> = spend.iter().map(|(n, ..)| n.clone()).collect();
    answered.dedup();
    let combined = combine(&readings);
    let views = views_of(&proposal_ids, &combined, &failures);
    Ok(Judged {
        views,
        readings,
        combined,
        answered,
        failures,
        spend,
    })
}

/// The judges' prompt: the issue, the rubric, the requirements and the blinded proposals, in
/// the round's order or `reversed`.
fn judge_prompt(
    prompts: &Prompts,
    issue: &Issue,
    requirements: &Requirements,
    blinded: &[(String, Proposal)],
    reversed: bool,
) -> Result<String, PromptError> {
    let mut listed: Vec<_> = blinded
        .iter()
        .map(|(id, p)| json!({"id": id, "json": prompt_json(p)}))
        .collect();
    if reversed {
        listed.reverse();
    }
    prompts.render(
        Role::Judge,
        &json!({
            "issue": PromptIssue::new(issue),
            "rubric": RUBRIC,
            "requirements_json": prompt_json(requirements),
            "proposals": listed,
        }),
    )
}

/// What a reading task returns: the judge, whether it read the reversed order, its answer.
type ReadingTask = (String, bool, Result<Asked<JudgeAnswer>, AgentError>);

/// Starts one reading per judge and order `(reversed, prompt)`, each shown in the live view; a
/// judge that cannot start is added to `failures` instead.
fn start_readings(
    judges: &[Agent],
    orders: &[(bool, String)],
    proposal_ids: &BTreeSet<String>,
    site: &CallSite,
    failures: &mut Vec<JudgeFailure>,
) -> JoinSet<ReadingTask> {
    let mut set = JoinSet::new();
    for judge in judges {
        let backend = match &judge.backend {
            Ok(b) => b.clone(),
            Err(why) => {
                failures.push(JudgeFailure {
                    judge: judge.name.clone(),
                    reason: why.clone(),
                });
                continue;
            }
        };
        for (reversed, prompt) in orders {
            let mut call = site.call(Role::Judge, prompt.clone(), judge.timeout);
            if judge.name != "arbiter" {
                call.speaker = Some(judge.name.clone());
            }
            if *reversed {
                call.variant = Some("reversed");
            }
            let view = site.watch(
                &mut call,
                &format!(
                    "judge · {}{}",
                    judge.name,
                    if *reversed { " · reversed order" } else { "" }
                ),
            );
            let ctx = AnswerContext {
                proposal_ids: proposal_ids.clone(),
                ..AnswerContext::default()
            };
            let (name, reversed, backend) = (judge.name.clone(), *reversed, backend.clone());
            set.spawn(async move {
                let result = ask::<JudgeAnswer>(backend.as_ref(), &call, &ctx).await;
                drop(view);
                (name, reversed, result)
            });
        }
    }
    set
}

/// Judge `name`'s reading as its answer gave it: its marks by proposal id, and the order it
/// read (`forward`, or reversed).
fn reading(name: String, reversed: bool, forward: &[String], answer: JudgeAnswer) -> Reading {
    let marks = answer
        .scores
        .into_iter()
        .map(|s| {
            let mark = Mark {
                technical_quality: s.technical_quality,
                technical_quality_reasoning: s.technical_quality_reasoning,
                innovation: s.innovation,
                innovation_reasoning: s.innovation_reasoning,
            };
            (s.proposal_id, mark)
        })
        .collect();
    let mut order = forward.to_vec();
    if reversed {
        order.reverse();
    }
    Reading {
        judge: name,
        reversed,
        order,
        marks,
    }
}

/// Each proposal's combined view, or the neutral scores (with the readings' failures as the
/// reason) when no reading scored it.
fn views_of(
    proposal_ids: &BTreeSet<String>,
    combined: &Combined,
    failures: &[JudgeFailure],
) -> BTreeMap<String, Subjective> {
    let params = &tables().scoring;
    let why = failures
        .iter()
        .map(|f| format!("{}: {}", f.judge, f.reason))
        .collect::<Vec<_>>()
        .join("; ");
    proposal_ids
        .iter()
        .map(|id| {
            let view = combined
                .views
                .get(id)
                .cloned()
                .unwrap_or_else(|| Subjective::unavailable(params, &why));
            (id.clone(), view)
        })
        .collect()
}
