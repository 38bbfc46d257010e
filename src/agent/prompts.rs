//! The prompt templates of the roles: `prompts/<role>.md`, embedded at build time, each
//! replaceable by `.ralph/prompts/<role>.md`. Rendered with minijinja in strict mode, so a
//! template that names a variable the role does not provide fails with the file's name instead
//! of printing nothing. Values are data: nothing inserted is evaluated as a template.

use super::Role;
use crate::fsutil::{read_regular_text, Unreadable};
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The built-in templates.
/// The largest template override read from `.ralph/prompts/`.
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

const BUILTIN: [(Role, &str); 7] = [
    (Role::Extract, include_str!("../../prompts/extract.md")),
    (Role::Propose, include_str!("../../prompts/propose.md")),
    (Role::Judge, include_str!("../../prompts/judge.md")),
    (Role::Implement, include_str!("../../prompts/implement.md")),
    (Role::Verify, include_str!("../../prompts/verify.md")),
    (Role::Refine, include_str!("../../prompts/refine.md")),
    (Role::Review, include_str!("../../prompts/review.md")),
];

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read the prompt override {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("prompt template {origin}: {message}")]
    Template { origin: String, message: String },
}

/// The templates in use, built-in or overridden.
pub struct Prompts {
    env: Environment<'static>,
    origins: Vec<(Role, String)>,
}

fn describe(e: &minijinja::Error) -> String {
    let mut text = e.to_string();
    if let Some(detail) = e.detail() {
        if !text.contains(detail) {
            text.push_str(": ");
            text.push_str(detail);
        }
    }
    text
}

impl Prompts {
    /// The built-in templates, with the overrides found in `<ralph_dir>/prompts/`.
    pub fn load(ralph_dir: &Path) -> Result<Prompts, PromptError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Prompts are plain text: no HTML escaping, and keep the final newline.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        let mut origins = Vec::new();
        for (role, builtin) in BUILTIN {
            let path = ralph_dir.join("prompts").join(format!("{role}.md"));
            let (source, origin) = match read_regular_text(&path, MAX_TEMPLATE_BYTES) {
                Ok(text) => (text, path.display().to_string()),
                Err(Unreadable::Missing) => {
                    (builtin.to_owned(), format!("prompts/{role}.md (built in)"))
                }
                Err(Unreadable::Io(source)) => return Err(PromptError::Read { path, source }),
                Err(e) => {
                    return Err(PromptError::Read {
                        path,
                        source: std::io::Error::other(e.to_string()),
                    })
                }
            };
            env.add_template_owned(role.as_str().to_owned(), source)
                .map_err(|e| PromptError::Template {
                    origin: origin.clone(),
                    message: describe(&e),
                })?;
            origins.push((role, origin));
        }
        Ok(Prompts { env, origins })
    }

    /// Where a role's template came from.
    pub fn origin(&self, role: Role) -> &str {
        self.origins
            .iter()
            .find(|(r, _)| *r == role)
            .map_or("", |(_, o)| o.as_str())
    }

    /// Renders a role's prompt from a serialisable context.
    pub fn render(&self, role: Role, ctx: &impl Serialize) -> Result<String, PromptError> {
        let err = |e: minijinja::Error| PromptError::Template {
            origin: self.origin(role).to_owned(),
            message: describe(&e),
        };
        let template = self.env.get_template(role.as_str()).map_err(err)?;
        template
            .render(Value::from(minijinja::value::Serde(ctx)))
            .map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> serde_json::Value {
        json!({
            "issue": {"number": 12, "title": "Add a {{ widget }}",
                      "body": "Users asked for widgets in #9.\n\n- [ ] Add a widget", "truncated": false,
                      "body_bytes": 48, "fence": "```"},
            "requirements_json": "{\"explicit_requirements\": []}",
            "explicit_json": "[]",
            "guidance": [{"path": "CLAUDE.md", "text": "Run cargo test."}],
            "bot_id": "smart_bot_1",
            "standing": {"weight": "0.333", "efficiency": "1.000", "budget": 10},
            "round": 2,
            "phase": "replan",
            "failure": {"proposal_summary": "s", "kind": "test_failure", "is_own": true,
                        "checks": [{"name": "test", "output_tail": "assertion failed"}]},
            "rubric": "technical quality; innovation",
            "proposals": [{"id": "proposal_1", "json": "{}"}],
            "branch": "ralph/12-add-a-widget",
            "checks": [{"name": "test", "passed": false}],
            "proposal_json": "{}",
            "previous_failures": [],
            "attempt": 1,
            "budget": 3,
            "diff": "+x",
            "review": false,
            "passed": true,
            "scratch": false,
            "revision": false,
        })
    }

    #[test]
    fn a_revision_tells_the_implementer_the_branch_holds_the_work() {
        let p = Prompts::load(Path::new("/nonexistent")).unwrap();
        let mut ctx = base();
        ctx["checks"] = json!(["test"]);
        let plain = p.render(Role::Implement, &ctx).unwrap();
        ctx["revision"] = json!(true);
        let revision = p.render(Role::Implement, &ctx).unwrap();
        assert!(!plain.contains("This is a revision"));
        assert!(revision.contains("This is a revision of the pull request"));
    }

    #[test]
    fn every_built_in_template_renders() {
        let p = Prompts::load(Path::new("/nonexistent")).unwrap();
        let mut ctx = base();
        for (role, _) in BUILTIN {
            if role == Role::Implement {
                ctx["checks"] = json!(["format", "test"]);
            } else {
                ctx["checks"] = json!([{"name": "test", "passed": false}]);
            }
            let text = p
                .render(role, &ctx)
                .unwrap_or_else(|e| panic!("{role}: {e}"));
            assert!(text.contains("#12"), "{role}");
            assert!(text.contains("```json"), "{role}");
            // Every role sees the issue's prose, fenced as data.
            assert!(
                text.contains(
                    "```markdown\nUsers asked for widgets in #9.\n\n- [ ] Add a widget\n```"
                ),
                "{role}: {text}"
            );
            assert!(p.origin(role).contains("built in"));
        }
    }

    #[test]
    fn the_propose_prompt_carries_standing_guidance_and_failure() {
        let p = Prompts::load(Path::new("/nonexistent")).unwrap();
        let text = p.render(Role::Propose, &base()).unwrap();
        assert!(text.contains("You are smart_bot_1"));
        assert!(text.contains("weight 0.333"));
        assert!(text.contains("### CLAUDE.md\n\nRun cargo test."));
        assert!(text.contains("### Check `test` failed"));
        assert!(text.contains("That was your proposal"));
        // Inserted text is data: the title's braces are printed, not evaluated.
        assert!(text.contains("Add a {{ widget }}"));
        let mut initial = base();
        initial["failure"] = json!(null);
        initial["guidance"] = json!([]);
        let text = p.render(Role::Propose, &initial).unwrap();
        assert!(!text.contains("previous attempt failed"));
        assert!(!text.contains("guidance\n"));
    }

    #[test]
    fn the_refine_prompt_drafts_prose_and_reviews_checkboxes() {
        let p = Prompts::load(Path::new("/nonexistent")).unwrap();
        let draft = p.render(Role::Refine, &base()).unwrap();
        assert!(draft.contains("The issue is written as prose: draft its requirements."));
        assert!(draft.contains("`questions`: what only the author can decide"));
        assert!(!draft.contains("\"review\""));
        let mut ctx = base();
        ctx["review"] = json!(true);
        ctx["explicit_json"] = json!("[{\"id\": \"req_1\", \"text\": \"Add a widget\"}]");
        let review = p.render(Role::Refine, &ctx).unwrap();
        assert!(review.contains("review them"));
        assert!(review.contains("[{\"id\": \"req_1\", \"text\": \"Add a widget\"}]"));
        assert!(review.contains("\"review\": [{\"id\": \"req_1\", \"kind\": \"ambiguity\""));
        assert!(review.contains("### CLAUDE.md\n\nRun cargo test."));
    }

    #[test]
    fn overrides_replace_built_ins_and_fail_clearly() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("prompts")).unwrap();
        std::fs::write(
            dir.path().join("prompts/judge.md"),
            "Judge #{{ issue.number }} {{ proposals|length }}",
        )
        .unwrap();
        let p = Prompts::load(dir.path()).unwrap();
        assert_eq!(p.render(Role::Judge, &base()).unwrap(), "Judge #12 1");
        assert!(p.origin(Role::Judge).ends_with("prompts/judge.md"));
        // A variable the role does not provide.
        std::fs::write(dir.path().join("prompts/verify.md"), "{{ no_such_thing }}").unwrap();
        let p = Prompts::load(dir.path()).unwrap();
        let err = p.render(Role::Verify, &base()).unwrap_err().to_string();
        assert!(
            err.contains("verify.md") && err.contains("undefined"),
            "{err}"
        );
        // A syntax error is found at load time.
        std::fs::write(dir.path().join("prompts/extract.md"), "{% if %}").unwrap();
        let err = Prompts::load(dir.path()).err().unwrap().to_string();
        assert!(err.contains("extract.md"), "{err}");
    }
}
