//! Phase 1, requirement extraction (SPEC §5.1): the checkboxes of the issue body, broken into
//! components and completed with implicit requirements by the arbiter's `extract` role. When
//! the arbiter cannot answer, the checkboxes alone are the requirements (checkbox-only
//! scoring) and the run goes on.

use super::agents::Agent;
use super::CallSite;
use crate::agent::prompts::{PromptError, Prompts};
use crate::agent::protocol::{ask, AnswerContext};
use crate::agent::{Role, Usage};
use crate::spec::{strip_for_prompt, ExtractAnswer, Guidance, Requirements};
use crate::tracker::Issue;
use serde::Serialize;
use serde_json::json;
use std::time::Duration;

/// The requirements of a round and how they were found.
#[derive(Debug, Clone)]
pub struct Extracted {
    pub requirements: Requirements,
    /// `extract` when the arbiter answered, `checkboxes` otherwise.
    pub source: &'static str,
    /// Why the arbiter's answer was not used, or what it got wrong.
    pub warnings: Vec<String>,
    /// What the `extract` call cost, when it answered.
    pub spend: Option<(Usage, Duration)>,
}

/// The issue as the prompts show it: cleaned of hidden comments and invisible characters.
#[derive(Debug, Clone, Serialize)]
pub struct PromptIssue {
    pub number: u64,
    pub title: String,
}

impl PromptIssue {
    pub fn new(issue: &Issue) -> PromptIssue {
        PromptIssue {
            number: issue.number,
            title: strip_for_prompt(&issue.title),
        }
    }
}

/// Guidance files as the prompts show them.
#[derive(Debug, Clone, Serialize)]
pub struct PromptGuidance<'a> {
    pub path: &'a str,
    pub text: &'a str,
}

pub fn prompt_guidance(guidance: &[Guidance]) -> Vec<PromptGuidance<'_>> {
    guidance
        .iter()
        .map(|g| PromptGuidance {
            path: &g.path,
            text: &g.text,
        })
        .collect()
}

/// Pretty JSON of a value for a prompt, cleaned like every text that reaches a model.
pub fn prompt_json(value: &impl Serialize) -> String {
    strip_for_prompt(&serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into()))
}

/// Extracts the requirements of `issue`'s current body.
pub async fn extract(
    issue: &Issue,
    guidance: &[Guidance],
    arbiter: &Agent,
    prompts: &Prompts,
    site: &CallSite,
) -> Result<Extracted, PromptError> {
    let mut requirements = Requirements::from_body(&issue.body);
    let fallback = |requirements: Requirements, why: String| Extracted {
        requirements,
        source: "checkboxes",
        warnings: vec![format!(
            "requirement extraction failed, scoring on the checkboxes alone: {why}"
        )],
        spend: None,
    };
    let explicit: Vec<_> = requirements
        .explicit_requirements
        .iter()
        .map(|r| json!({"id": r.id, "text": r.text, "checked": r.checked, "section": r.section}))
        .collect();
    let prompt = prompts.render(
        Role::Extract,
        &json!({
            "issue": PromptIssue::new(issue),
            "explicit_json": prompt_json(&explicit),
            "guidance": prompt_guidance(guidance),
        }),
    )?;
    let backend = match &arbiter.backend {
        Ok(b) => b,
        Err(why) => return Ok(fallback(requirements, why.clone())),
    };
    let call = site.call(Role::Extract, prompt, arbiter.timeout);
    match ask::<ExtractAnswer>(backend.as_ref(), &call, &AnswerContext::default()).await {
        Ok(asked) => {
            let mut warnings = asked.warnings;
            warnings.extend(requirements.merge_extraction(asked.answer));
            Ok(Extracted {
                requirements,
                source: "extract",
                warnings,
                spend: Some((asked.usage, asked.duration)),
            })
        }
        Err(e) => {
            requirements = Requirements::from_body(&issue.body);
            Ok(fallback(requirements, e.to_string()))
        }
    }
}
