//! Ninja, the build tool under CMake and Meson: a bare `ninja` builds, a target says what it
//! does by its name (`ninja test` is meson's test run, [`super::meson`]).

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Ninja;

impl Tool for Ninja {
    fn name(&self) -> &'static str {
        "ninja"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "ninja"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(super::step::by_target(call, StepKind::Build))
    }
}
