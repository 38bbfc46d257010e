//! Phase 2b, judging (SPEC §7): the blinded proposals go to every judge at once with the rubric
//! of `scoring/rubric.md`; each proposal gets the median of the judges' technical-quality and
//! innovation scores. A judge that fails is left out; when none answers, every proposal gets
//! the neutral score with the reason "judge unavailable" and the run goes on.

use super::agents::Agent;
use super::extract::{prompt_json, PromptIssue};
use super::CallSite;
use crate::agent::prompts::{PromptError, Prompts};
use crate::agent::protocol::{ask, AnswerContext, JudgeAnswer};
use crate::agent::{Role, Usage};
use crate::market::scoring::median_view;
use crate::market::{tables, Proposal, Subjective, RUBRIC};
pub use crate::run_report::JudgeFailure;
use crate::spec::Requirements;
use crate::tracker::Issue;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the judges said about the round.
#[derive(Debug, Clone)]
pub struct Judged {
    /// By proposal id: the median view, or the neutral scores when no judge answered.
    pub views: BTreeMap<String, Subjective>,
    /// Judges that answered.
    pub answered: Vec<String>,
    /// Judges that did not, with the reason.
    pub failures: Vec<JudgeFailure>,
    /// What each answering judge's calls cost.
    pub spend: Vec<(String, Usage, Duration)>,
}

/// Asks every judge to score the blinded proposals `(proposal id, proposal)`.
pub async fn judge(
    judges: &[Agent],
    prompts: &Prompts,
    issue: &Issue,
    requirements: &Requirements,
    blinded: &[(String, Proposal)],
    site: &CallSite,
) -> Result<Judged, PromptError> {
    let listed: Vec<_> = blinded
        .iter()
        .map(|(id, p)| json!({"id": id, "json": prompt_json(p)}))
        .collect();
    let prompt = prompts.render(
        Role::Judge,
        &json!({
            "issue": PromptIssue::new(issue),
            "rubric": RUBRIC,
            "requirements_json": prompt_json(requirements),
            "proposals": listed,
        }),
    )?;
    let proposal_ids: std::collections::BTreeSet<String> =
        blinded.iter().map(|(id, _)| id.clone()).collect();

    let mut failures = Vec::new();
    let mut set = tokio::task::JoinSet::new();
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
        let mut call = site.call(Role::Judge, prompt.clone(), judge.timeout);
        if judge.name != "arbiter" {
            call.speaker = Some(judge.name.clone());
        }
        let ctx = AnswerContext {
            proposal_ids: proposal_ids.clone(),
            ..AnswerContext::default()
        };
        let name = judge.name.clone();
        set.spawn(async move {
            let result = ask::<JudgeAnswer>(backend.as_ref(), &call, &ctx).await;
            (name, result)
        });
    }

    let mut by_proposal: BTreeMap<String, Vec<(f64, String, f64, String)>> = BTreeMap::new();
    let mut answered = Vec::new();
    let mut spend = Vec::new();
    while let Some(joined) = set.join_next().await {
        let Ok((name, result)) = joined else {
            tracing::error!("a judge task ended abnormally");
            continue;
        };
        match result {
            Ok(asked) => {
                for s in asked.answer.scores {
                    by_proposal.entry(s.proposal_id).or_default().push((
                        s.technical_quality,
                        s.technical_quality_reasoning,
                        s.innovation,
                        s.innovation_reasoning,
                    ));
                }
                spend.push((name.clone(), asked.usage, asked.duration));
                answered.push(name);
            }
            Err(e) => failures.push(JudgeFailure {
                judge: name,
                reason: e.to_string(),
            }),
        }
    }
    answered.sort();
    failures.sort_by(|a, b| a.judge.cmp(&b.judge));

    let params = &tables().scoring;
    let why = failures
        .iter()
        .map(|f| format!("{}: {}", f.judge, f.reason))
        .collect::<Vec<_>>()
        .join("; ");
    let views = proposal_ids
        .iter()
        .map(|id| {
            let view = by_proposal
                .get(id)
                .and_then(|v| median_view(v))
                .unwrap_or_else(|| Subjective::unavailable(params, &why));
            (id.clone(), view)
        })
        .collect();
    Ok(Judged {
        views,
        answered,
        failures,
        spend,
    })
}
