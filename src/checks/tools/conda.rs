//! conda and its faster twins (mamba, micromamba), known by what they do in a CI step: `conda
//! install`, `conda env create` set up from the Python world's channels; `conda run X` starts `X`.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Conda;

impl Tool for Conda {
    fn name(&self) -> &'static str {
        "conda"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "conda" | "mamba" | "micromamba")
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        let valued = ["-n", "--name", "-p", "--prefix", "--cwd"];
        match call.after_valued("run", &valued) {
            Some(words) if call.sub() == "run" => Inner::Words(words),
            _ => Inner::Nothing,
        }
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        (call.sub() != "run").then(|| super::step::installs_by(call, super::step::INSTALLS))?
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }
}
