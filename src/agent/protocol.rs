//! The role protocol (docs/specification.md §4, §5.2): find the JSON answer in a response (a bare
//! object or a fenced block; the last one that is valid for the role wins), check it into a typed
//! struct, and, when there is none, ask once more with the validation error before giving up.

use super::{AgentCall, AgentError, AgentReply, Backend, Usage};
use crate::market::proposal::{non_empty, unit};
pub use crate::market::{
    safe_relative_path, Complexity, Consultation, FileChange, Proposal, RiskAssessment,
    SpecAlignment,
};
use crate::spec::ExtractAnswer;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// How many `{` positions are tried at most: a response full of stray braces must not make
/// the search quadratic.
const MAX_OBJECT_STARTS: usize = 20_000;

/// Every JSON object in `text`, in order: fenced blocks' contents and bare objects. Objects
/// nested in a found object are not listed separately.
pub fn json_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut tries = 0;
    while i < bytes.len() && tries < MAX_OBJECT_STARTS {
        let Some(off) = text[i..].find('{') else {
            break;
        };
        let start = i + off;
        tries += 1;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v @ Value::Object(_))) => {
                found.push(v);
                i = start + stream.byte_offset();
            }
            _ => i = start + 1,
        }
    }
    found
}

/// A role's answer: how to check it beyond its JSON shape.
pub trait Answer: DeserializeOwned + Sized {
    /// Checks the answer; `Err` says what is wrong, for the repair prompt.
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String>;
}

/// What validation needs to know about the round.
#[derive(Debug, Default)]
pub struct AnswerContext {
    /// Requirement ids that exist (explicit and implicit).
    pub requirement_ids: BTreeSet<String>,
    /// Proposal ids the judge may score.
    pub proposal_ids: BTreeSet<String>,
    /// Warnings collected while validating (unknown ids dropped, …).
    pub warnings: std::sync::Mutex<Vec<String>>,
}

impl AnswerContext {
    /// The warnings so far, leaving none.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn warn(&self, w: String) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(w);
    }

    /// Keeps the known ids of `ids`, warning about the rest.
    fn known_ids(&self, what: &str, ids: &mut Vec<String>) {
        if self.requirement_ids.is_empty() {
            return;
        }
        let (known, unknown): (Vec<String>, Vec<String>) = std::mem::take(ids)
            .into_iter()
            .partition(|id| self.requirement_ids.contains(id));
        if !unknown.is_empty() {
            self.warn(format!(
                "{what}: unknown requirement ids ignored: {}",
                unknown.join(", ")
            ));
        }
        *ids = known;
    }
}

/// The first answer that parses and validates, searching from the end of the text.
pub fn parse_answer<T: Answer>(text: &str, ctx: &AnswerContext) -> Result<T, String> {
    let objects = json_objects(text);
    if objects.is_empty() {
        return Err("the response contains no JSON object".into());
    }
    let mut last_error = String::new();
    for value in objects.into_iter().rev() {
        match serde_json::from_value::<T>(value) {
            Ok(mut answer) => match answer.validate(ctx) {
                Ok(()) => return Ok(answer),
                Err(e) => {
                    if last_error.is_empty() {
                        last_error = e;
                    }
                }
            },
            Err(e) => {
                if last_error.is_empty() {
                    last_error = e.to_string();
                }
            }
        }
    }
    Err(last_error)
}

/// A typed answer and what getting it cost.
#[derive(Debug, Clone)]
pub struct Asked<T> {
    pub answer: T,
    /// Both calls when a repair was needed.
    pub usage: Usage,
    pub duration: Duration,
    pub repaired: bool,
    pub session_id: Option<String>,
    /// What the answer checks found, and what the backend reported without failing.
    pub warnings: Vec<String>,
    /// The tools the agent used over both calls (see [`super::AgentReply::tools_used`]).
    pub tools_used: Vec<String>,
}

/// The prompt of the repair retry: the original, then what was wrong.
fn repair_prompt(original: &str, error: &str) -> String {
    format!(
        "{original}\n\n---\nYour previous answer could not be used: {error}\n\
         Answer again. End your response with the complete JSON object for this role, \
         in a ```json fenced block, and nothing after it."
    )
}

/// Calls the backend and returns the role's answer, with one repair retry.
pub async fn ask<T: Answer>(
    backend: &dyn Backend,
    call: &AgentCall,
    ctx: &AnswerContext,
) -> Result<Asked<T>, AgentError> {
    let first: AgentReply = backend.call(call).await?;
    let mut usage = first.usage;
    let mut duration = first.duration;
    let mut tools_used = first.tools_used;
    let mut reported = first.warnings;
    let error = match parse_answer::<T>(&first.text, ctx) {
        Ok(answer) => {
            reported.extend(ctx.take_warnings());
            return Ok(Asked {
                answer,
                usage,
                duration,
                repaired: false,
                session_id: first.session_id,
                warnings: reported,
                tools_used,
            });
        }
        Err(e) => e,
    };
    tracing::debug!(role = %call.role, bot = ?call.bot_id, %error, "answer invalid; asking for a repair");
    let mut retry = call.clone();
    retry.prompt = repair_prompt(&call.prompt, &error);
    retry.attempt = call.attempt + 1;
    let second = backend.call(&retry).await?;
    usage.add(second.usage);
    duration += second.duration;
    tools_used.extend(second.tools_used);
    reported.extend(second.warnings);
    match parse_answer::<T>(&second.text, ctx) {
        Ok(answer) => Ok(Asked {
            answer,
            usage,
            duration,
            repaired: true,
            session_id: second.session_id,
            warnings: {
                reported.extend(ctx.take_warnings());
                reported
            },
            tools_used,
        }),
        Err(e) => Err(AgentError::Output {
            backend: backend.describe(),
            message: format!("no valid {} answer after a repair retry: {e}", call.role),
        }),
    }
}

impl Answer for Proposal {
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String> {
        let warnings = self.check(&ctx.requirement_ids)?;
        for w in warnings {
            ctx.warn(w);
        }
        Ok(())
    }
}

/// One proposal's subjective scores from the judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeScore {
    pub proposal_id: String,
    pub technical_quality: f64,
    #[serde(default)]
    pub technical_quality_reasoning: String,
    pub innovation: f64,
    #[serde(default)]
    pub innovation_reasoning: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeAnswer {
    pub scores: Vec<JudgeScore>,
}

impl Answer for JudgeAnswer {
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for s in &self.scores {
            unit("technical_quality", s.technical_quality)?;
            unit("innovation", s.innovation)?;
            if !ctx.proposal_ids.is_empty() && !ctx.proposal_ids.contains(&s.proposal_id) {
                return Err(format!("`{}` is not one of the proposals", s.proposal_id));
            }
            if !seen.insert(s.proposal_id.clone()) {
                return Err(format!("`{}` is scored twice", s.proposal_id));
            }
        }
        if let Some(missing) = ctx.proposal_ids.iter().find(|p| !seen.contains(*p)) {
            return Err(format!("`{missing}` has no score"));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImplementAnswer {
    pub summary: String,
    #[serde(default)]
    pub checkboxes_completed: Vec<String>,
}

impl Answer for ImplementAnswer {
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String> {
        non_empty("summary", &self.summary)?;
        ctx.known_ids("checkboxes_completed", &mut self.checkboxes_completed);
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Satisfied {
    pub id: String,
    #[serde(default)]
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unsatisfied {
    pub id: String,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyAnswer {
    #[serde(default)]
    pub satisfied: Vec<Satisfied>,
    #[serde(default)]
    pub unsatisfied: Vec<Unsatisfied>,
}

impl Answer for VerifyAnswer {
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String> {
        if self.satisfied.is_empty() && self.unsatisfied.is_empty() {
            return Err("`satisfied` and `unsatisfied` are both empty".into());
        }
        if let Some(both) = self
            .satisfied
            .iter()
            .find(|s| self.unsatisfied.iter().any(|u| u.id == s.id))
        {
            return Err(format!("`{}` is both satisfied and unsatisfied", both.id));
        }
        let before = self.satisfied.len();
        if !ctx.requirement_ids.is_empty() {
            self.satisfied
                .retain(|s| ctx.requirement_ids.contains(&s.id));
            if self.satisfied.len() != before {
                ctx.warn("verify: unknown requirement ids ignored".into());
            }
        }
        Ok(())
    }
}

/// The `review` role's scores of the implemented change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewAnswer {
    pub innovation: f64,
    pub innovation_reasoning: String,
    pub concerns_addressed: f64,
    pub concerns_reasoning: String,
}

impl Answer for ReviewAnswer {
    fn validate(&mut self, _ctx: &AnswerContext) -> Result<(), String> {
        unit("innovation", self.innovation)?;
        unit("concerns_addressed", self.concerns_addressed)?;
        non_empty("innovation_reasoning", &self.innovation_reasoning)?;
        non_empty("concerns_reasoning", &self.concerns_reasoning)?;
        Ok(())
    }
}

impl Answer for ExtractAnswer {
    fn validate(&mut self, _ctx: &AnswerContext) -> Result<(), String> {
        // Unknown ids and empty lists are dropped with warnings by `merge_extraction`; an
        // answer with neither list is some other object, not an extraction.
        if self.explicit_requirements.is_empty() && self.implicit_requirements.is_empty() {
            return Err(
                "`explicit_requirements` and `implicit_requirements` are both missing or empty"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
