//! mypy: a type checker; its findings are counted from its `Found N errors` line (type errors are judged by number, not by rule).

use super::{Call, Role, Tool};
use crate::checks::project::Project;

pub struct Mypy;

impl Tool for Mypy {
    fn name(&self) -> &'static str {
        "mypy"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "mypy" | "dmypy")
    }
}
