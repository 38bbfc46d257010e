//! pylint: a linter; its findings by rule from `path:line:col: C0114: message (symbol)` lines.

use super::{Call, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Pylint;

impl Tool for Pylint {
    fn name(&self) -> &'static str {
        "pylint"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "pylint"
    }

    fn rule(&self, line: &str, _: &str) -> Option<String> {
        super::flake8::located_code(line)
    }
}
