//! Task (go-task), a task runner whose Taskfile ralph does not read: a CI step's `task lint`
//! says what it does by its target's name.

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Task;

impl Tool for Task {
    fn name(&self) -> &'static str {
        "task"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "task"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(super::step::by_target(call, StepKind::Other))
    }
}
