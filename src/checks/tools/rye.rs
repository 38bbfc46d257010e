//! Rye, a Python project manager known by what it does in a CI step: `rye sync` sets up from
//! PyPI, `rye run X` starts `X`.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Rye;

impl Tool for Rye {
    fn name(&self) -> &'static str {
        "rye"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "rye"
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        Inner::after(call, "run")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        (call.sub() != "run")
            .then(|| super::step::installs_by(call, &["sync", "add", "install"]))?
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }
}
