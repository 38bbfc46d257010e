//! isort (`isort --check-only`): an import sorter; its findings are the files it would change (`ERROR: … Imports are incorrectly sorted`), counted.

use super::{Call, Env, Lang, Role, Tool};
use crate::checks::project::Project;
use crate::checks::CheckSpec;

pub struct Isort;

impl Tool for Isort {
    fn name(&self) -> &'static str {
        "isort"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "isort"
    }

    fn detect(&self, env: &Env) -> Vec<CheckSpec> {
        let p = env.project;
        let Some(why) = p
            .declares("tool.isort")
            .or_else(|| p.is_file(".isort.cfg").then_some(".isort.cfg"))
        else {
            return Vec::new();
        };
        vec![
            CheckSpec::new("isort", &env.run("isort --check-only --skip .ralph ."))
                .because(&format!("isort is configured in {why}")),
        ]
    }
}
