//! The proposal model (docs/specification.md §5.2) and its validation: a proposal whose paths are
//! absolute or leave the repository is rejected with the reason; requirement ids are normalised
//! (`1` and `"1"` mean `req_1`) and unknown ones are dropped with a warning rather than rejecting
//! the proposal.

use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeSet;

/// A file a proposal will touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub change_type: String,
    #[serde(default)]
    pub description: String,
}

/// The bot's estimate of the change's size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Complexity {
    pub lines_of_code: u64,
    pub files: u64,
    #[serde(default)]
    pub modules: u64,
    pub difficulty: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RiskAssessment {
    pub breaking_changes: bool,
    pub security_critical: bool,
    #[serde(default)]
    pub deployment_impact: String,
    pub overall_risk: String,
    #[serde(default)]
    pub mitigation: String,
}

/// What the proposal claims to cover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecAlignment {
    #[serde(default, deserialize_with = "ids")]
    pub checkboxes_addressed: Vec<String>,
    #[serde(default)]
    pub components_addressed: Vec<String>,
    #[serde(default, deserialize_with = "ids")]
    pub implicit_requirements_addressed: Vec<String>,
    #[serde(default)]
    pub reasoning: String,
}

/// A specialist the bot consulted and what it did with the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Consultation {
    pub specialist: String,
    #[serde(default)]
    pub question: String,
    #[serde(default)]
    pub answer: String,
    #[serde(default)]
    pub applied: String,
}

/// A bot's proposal (docs/specification.md §5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    pub approach_summary: String,
    #[serde(default)]
    pub pseudo_code: String,
    pub files_affected: Vec<FileChange>,
    pub estimated_complexity: Complexity,
    pub risk_assessment: RiskAssessment,
    pub spec_alignment: SpecAlignment,
    #[serde(default)]
    pub specialist_consultations: Vec<Consultation>,
    #[serde(default)]
    pub innovation: String,
    pub success_probability: f64,
}

/// Requirement ids as strings, whether the model wrote `"req_1"`, `"1"` or `1`.
fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(u64),
    }
    let list = Vec::<Id>::deserialize(d)?;
    Ok(list
        .into_iter()
        .map(|id| match id {
            Id::Text(s) => s.trim().to_owned(),
            Id::Number(n) => n.to_string(),
        })
        .collect())
}

/// The canonical form of a requirement id: a bare number `n` is `<prefix>n`.
fn normalise_id(id: &str, prefix: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        format!("{prefix}{}", id.trim_start_matches('0').max("0"))
    } else {
        id.to_owned()
    }
}

const LEVELS: [&str; 4] = ["low", "medium", "high", "critical"];
const CHANGE_TYPES: [&str; 5] = ["create", "modify", "delete", "rename", "test"];

/// A path a proposal may name: relative, inside the repository.
pub fn safe_relative_path(path: &str) -> bool {
    let p = std::path::Path::new(path);
    !path.is_empty()
        && !p.is_absolute()
        && !path.starts_with(['/', '\\', '~'])
        && !path.contains(':')
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

impl Proposal {
    /// Validates the proposal against the round's requirement ids (all ids are accepted when
    /// `known` is empty). `Err` is why the proposal is rejected; `Ok` carries warnings about
    /// what was dropped.
    pub fn check(&mut self, known: &BTreeSet<String>) -> Result<Vec<String>, String> {
        non_empty("approach_summary", &self.approach_summary)?;
        unit("success_probability", self.success_probability)?;
        if self.files_affected.is_empty() {
            return Err("`files_affected` must name at least one file".into());
        }
        for f in &self.files_affected {
            if !safe_relative_path(&f.path) {
                return Err(format!(
                    "`files_affected` path `{}` must be relative and stay inside the repository",
                    f.path
                ));
            }
            one_of("change_type", &f.change_type, &CHANGE_TYPES)?;
        }
        one_of(
            "estimated_complexity.difficulty",
            &self.estimated_complexity.difficulty,
            &LEVELS,
        )?;
        one_of(
            "risk_assessment.overall_risk",
            &self.risk_assessment.overall_risk,
            &LEVELS,
        )?;
        let mut warnings = Vec::new();
        let alignment = &mut self.spec_alignment;
        for (what, list, prefix) in [
            (
                "checkboxes_addressed",
                &mut alignment.checkboxes_addressed,
                "req_",
            ),
            (
                "implicit_requirements_addressed",
                &mut alignment.implicit_requirements_addressed,
                "req_implicit_",
            ),
        ] {
            let mut seen = BTreeSet::new();
            let mut unknown = Vec::new();
            let ids: Vec<String> = std::mem::take(list)
                .into_iter()
                .map(|id| normalise_id(&id, prefix))
                .filter(|id| {
                    if !known.is_empty() && !known.contains(id) {
                        unknown.push(id.clone());
                        return false;
                    }
                    seen.insert(id.clone())
                })
                .collect();
            *list = ids;
            if !unknown.is_empty() {
                warnings.push(format!(
                    "{what}: unknown requirement ids ignored: {}",
                    unknown.join(", ")
                ));
            }
        }
        Ok(warnings)
    }

    /// The distinct paths of `files_affected`.
    pub fn paths(&self) -> BTreeSet<&str> {
        self.files_affected
            .iter()
            .map(|f| f.path.as_str())
            .collect()
    }
}

/// `Err` naming the field unless `v` is in [0, 1].
pub(crate) fn unit(name: &str, v: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("`{name}` must be between 0 and 1, not {v}"))
    }
}

/// `Err` naming the field when `v` is blank.
pub(crate) fn non_empty(name: &str, v: &str) -> Result<(), String> {
    if v.trim().is_empty() {
        Err(format!("`{name}` must not be empty"))
    } else {
        Ok(())
    }
}

fn one_of(name: &str, v: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is `{v}`; use one of {}",
            allowed.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::sample;
    use serde_json::json;

    fn known() -> BTreeSet<String> {
        ["req_1", "req_2", "req_implicit_1"]
            .map(String::from)
            .into()
    }

    #[test]
    fn numbers_are_requirement_ids_and_unknown_ids_are_dropped_with_a_warning() {
        let mut p: Proposal = serde_json::from_value({
            let mut v = serde_json::to_value(sample()).unwrap();
            v["spec_alignment"]["checkboxes_addressed"] = json!([1, "2", "req_2", "req_9"]);
            v["spec_alignment"]["implicit_requirements_addressed"] = json!([1]);
            v
        })
        .unwrap();
        let warnings = p.check(&known()).unwrap();
        assert_eq!(p.spec_alignment.checkboxes_addressed, ["req_1", "req_2"]);
        assert_eq!(
            p.spec_alignment.implicit_requirements_addressed,
            ["req_implicit_1"]
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("req_9"), "{warnings:?}");
    }

    #[test]
    fn normalise_id_only_touches_bare_numbers() {
        assert_eq!(normalise_id("3", "req_"), "req_3");
        assert_eq!(normalise_id("03", "req_"), "req_3");
        assert_eq!(normalise_id("req_3", "req_"), "req_3");
        assert_eq!(normalise_id("x3", "req_"), "x3");
    }

    #[test]
    fn unsafe_paths_reject_the_proposal_with_the_path() {
        for bad in [
            "/etc/passwd",
            "../outside.rs",
            "src/../../x",
            "C:\\x",
            "~/x",
            "",
        ] {
            let mut p = sample();
            p.files_affected[0].path = bad.into();
            let err = p.check(&known()).unwrap_err();
            assert!(err.contains("files_affected"), "{bad}: {err}");
        }
        let mut p = sample();
        p.files_affected[0].path = "./src/lib.rs".into();
        assert!(p.check(&known()).is_ok());
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut p = sample();
        p.success_probability = 1.5;
        assert!(p
            .check(&known())
            .unwrap_err()
            .contains("success_probability"));
        let mut p = sample();
        p.estimated_complexity.difficulty = "easy".into();
        assert!(p.check(&known()).unwrap_err().contains("difficulty"));
        let mut p = sample();
        p.files_affected.clear();
        assert!(p.check(&known()).unwrap_err().contains("at least one"));
    }
}
