//! Requirements of an issue (docs/specification.md §5.1): the explicit ones are the task-list
//! checkboxes of the issue body, the implicit ones are ralph's defaults plus what the `extract`
//! role finds in the repository's guidance files. Also the one function that checks boxes off in a
//! body without changing any other byte, and the cleaning of untrusted text before it reaches a
//! prompt.
//!
//! Pure but for `guidance`, which reads the guidance files. The tracker supplies the body,
//! the agent layer the `extract` answer.

mod guidance;
mod markdown;

pub use guidance::{read_guidance, Guidance, MAX_GUIDANCE_BYTES};
pub use markdown::{check_off, find_checkboxes, strip_for_prompt, Checkbox};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A checkbox of the issue body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplicitRequirement {
    /// `req_1 … req_n` in document order, counting checked boxes too.
    pub id: String,
    /// The item's text as written (inline code and links kept), whitespace collapsed.
    pub text: String,
    pub checked: bool,
    /// The nearest heading above the checkbox.
    pub section: Option<String>,
    /// What the requirement breaks down into; the checkbox itself when nothing finer is known.
    pub components: Vec<String>,
}

/// A requirement nobody wrote down but every change must meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitRequirement {
    /// `req_implicit_1 …`.
    pub id: String,
    pub text: String,
    pub reasoning: String,
}

/// The requirements document (`ralph spec N --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirements {
    pub explicit_requirements: Vec<ExplicitRequirement>,
    pub implicit_requirements: Vec<ImplicitRequirement>,
}

/// The defaults of docs/specification.md §5.1, which hold for every repository.
const DEFAULT_IMPLICIT: [(&str, &str); 4] = [
    (
        "Security-critical code requires tests",
        "ralph default: changes to authentication, authorisation, cryptography or input handling must come with tests",
    ),
    (
        "Must not break existing functionality",
        "ralph default: the existing tests and checks must still pass",
    ),
    (
        "Must follow existing patterns",
        "ralph default: new code follows the conventions and structure already in the repository",
    ),
    (
        "Must not lower test coverage",
        "ralph default: coverage after the change is at least coverage before it",
    ),
];

/// The implicit requirements every repository gets.
pub fn default_implicit() -> Vec<ImplicitRequirement> {
    DEFAULT_IMPLICIT
        .iter()
        .enumerate()
        .map(|(i, (text, reasoning))| ImplicitRequirement {
            id: format!("req_implicit_{}", i + 1),
            text: (*text).to_owned(),
            reasoning: (*reasoning).to_owned(),
        })
        .collect()
}

impl Requirements {
    /// The requirements of a body without any model: every checkbox is its own single
    /// component (checkbox-only scoring), and the implicit requirements are the defaults.
    pub fn from_body(body: &str) -> Requirements {
        let explicit_requirements = find_checkboxes(body)
            .into_iter()
            .map(|c| ExplicitRequirement {
                components: vec![c.text.clone()],
                id: c.id,
                text: c.text,
                checked: c.checked,
                section: c.section,
            })
            .collect();
        Requirements {
            explicit_requirements,
            implicit_requirements: default_implicit(),
        }
    }

    /// The checkboxes not yet checked.
    pub fn open(&self) -> impl Iterator<Item = &ExplicitRequirement> {
        self.explicit_requirements.iter().filter(|r| !r.checked)
    }

    /// Merges the `extract` role's answer: components replace the single default component of
    /// the checkbox with the same id (unknown ids and empty lists are ignored and returned as
    /// warnings), and implicit requirements are added after the defaults with fresh ids,
    /// skipping any that repeat a text already present.
    pub fn merge_extraction(&mut self, answer: ExtractAnswer) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, r) in self.explicit_requirements.iter().enumerate() {
            by_id.insert(r.id.as_str(), i);
        }
        let mut updates = Vec::new();
        for e in answer.explicit_requirements {
            let components: Vec<String> = e
                .components
                .iter()
                .map(|c| collapse_whitespace(&strip_for_prompt(c)))
                .filter(|c| !c.is_empty())
                .collect();
            match by_id.get(e.id.as_str()) {
                Some(&i) if !components.is_empty() => updates.push((i, components)),
                Some(_) => warnings.push(format!("extract gave no components for {}", e.id)),
                None => warnings.push(format!("extract named an unknown requirement {:?}", e.id)),
            }
        }
        for (i, components) in updates {
            self.explicit_requirements[i].components = components;
        }
        for imp in answer.implicit_requirements {
            let text = collapse_whitespace(&strip_for_prompt(&imp.text));
            if text.is_empty()
                || self
                    .implicit_requirements
                    .iter()
                    .any(|r| r.text.eq_ignore_ascii_case(&text))
            {
                continue;
            }
            let id = format!("req_implicit_{}", self.implicit_requirements.len() + 1);
            self.implicit_requirements.push(ImplicitRequirement {
                id,
                text,
                reasoning: collapse_whitespace(&strip_for_prompt(&imp.reasoning)),
            });
        }
        warnings
    }
}

/// The JSON answer of the `extract` role (docs/specification.md §4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ExtractAnswer {
    #[serde(default)]
    pub explicit_requirements: Vec<ExtractedExplicit>,
    #[serde(default)]
    pub implicit_requirements: Vec<ExtractedImplicit>,
}

/// Components of one checkbox, by id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExtractedExplicit {
    pub id: String,
    #[serde(default)]
    pub components: Vec<String>,
}

/// An implicit requirement found by the `extract` role.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ExtractedImplicit {
    #[serde(default)]
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub reasoning: String,
}

/// Collapses every run of whitespace (newlines included) into one space and trims.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What to do about an issue that has no open checkbox to compete on.
pub fn requirements_hint(issue: u64) -> String {
    format!(
        "write the issue's requirements as a task list in its body (`- [ ] …`, one checkable item each), or let ralph draft them with `ralph refine {issue}`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkbox_only_requirements_with_default_implicit_ones() {
        let r = Requirements::from_body("## Do\n- [ ] add `--json`\n- [x] write docs\n");
        assert_eq!(r.explicit_requirements.len(), 2);
        assert_eq!(r.explicit_requirements[0].components, ["add `--json`"]);
        assert_eq!(r.open().count(), 1);
        let ids: Vec<_> = r
            .implicit_requirements
            .iter()
            .map(|i| i.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "req_implicit_1",
                "req_implicit_2",
                "req_implicit_3",
                "req_implicit_4"
            ]
        );
        let json = serde_json::to_value(&r).unwrap();
        let first = &json["explicit_requirements"][0];
        for key in ["id", "text", "checked", "section", "components"] {
            assert!(first.get(key).is_some(), "{key}");
        }
        assert_eq!(first["section"], "Do");
        for key in ["id", "text", "reasoning"] {
            assert!(json["implicit_requirements"][0].get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn the_extract_answer_refines_components_and_adds_implicit_requirements() {
        let mut r = Requirements::from_body("- [ ] add login\n- [ ] add logout\n");
        let answer: ExtractAnswer = serde_json::from_str(
            r#"{"explicit_requirements":[
                   {"id":"req_1","components":["POST /login","session cookie\u200b"]},
                   {"id":"req_2","components":[]},
                   {"id":"req_9","components":["x"]}],
                "implicit_requirements":[
                   {"id":"req_implicit_1","text":"Must not lower test coverage","reasoning":"dup"},
                   {"id":"req_implicit_2","text":"Passwords are never logged <!-- sneaky -->","reasoning":"CLAUDE.md says so"}]}"#,
        )
        .unwrap();
        let warnings = r.merge_extraction(answer);
        assert_eq!(
            r.explicit_requirements[0].components,
            ["POST /login", "session cookie"]
        );
        assert_eq!(r.explicit_requirements[1].components, ["add logout"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("req_9")));
        assert_eq!(r.implicit_requirements.len(), 5);
        let added = &r.implicit_requirements[4];
        assert_eq!(added.id, "req_implicit_5");
        assert_eq!(added.text, "Passwords are never logged");
    }
}
