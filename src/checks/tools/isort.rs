//! isort (`isort --check-only`): an import sorter; its findings are the files it would change (`ERROR: … Imports are incorrectly sorted`), counted.

use super::{Call, Role, Tool};
use crate::checks::project::Project;

pub struct Isort;

impl Tool for Isort {
    fn name(&self) -> &'static str {
        "isort"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "isort"
    }
}
