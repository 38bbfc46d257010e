//! Pipenv: a Python environment manager; `pipenv run X` starts `X` in the project's environment.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Pipenv;

impl Tool for Pipenv {
    fn name(&self) -> &'static str {
        "pipenv"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "pipenv"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::uv::sets_up(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn environments(&self) -> &'static [&'static str] {
        &[".local/share/virtualenvs"]
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        match call.sub() {
            "run" => call.after("run").map_or(Inner::Nothing, Inner::Words),
            _ => Inner::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::recognise;

    #[test]
    fn what_it_runs_is_found() {
        assert_eq!(
            recognise("pipenv run pytest", None).tools,
            ["pipenv", "pytest"]
        );
    }
}
