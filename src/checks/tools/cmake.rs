//! CMake, known by what it does in a CI step: `cmake -B build`, `cmake ..` configure — and may
//! download what the project fetches —, `cmake --build`/`--install` build. Its tests are ctest's
//! ([`super::ctest`]).

use super::{Call, Role, StepKind, Tool};
use crate::checks::project::Project;

pub struct Cmake;

impl Tool for Cmake {
    fn name(&self) -> &'static str {
        "cmake"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "cmake"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(if call.has("--build") || call.has("--install") {
            StepKind::Build
        } else {
            StepKind::Setup
        })
    }
}
