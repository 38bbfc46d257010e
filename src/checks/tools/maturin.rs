//! maturin, which builds a Rust extension into a Python package: it installs its build
//! dependencies from PyPI. How ralph builds such a package in place is the project's native
//! build (`checks/environment.rs`).

use super::ecosystem::Registry;
use super::{Call, Role, StepKind, Tool};
use crate::checks::project::Project;

pub struct Maturin;

impl Tool for Maturin {
    fn name(&self) -> &'static str {
        "maturin"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "maturin"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(match call.sub() {
            "develop" => StepKind::Setup,
            "build" | "sdist" => StepKind::Build,
            _ => StepKind::Other,
        })
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }
}

/// Whether the project `p` builds its Python package from its Rust crate: with maturin, or PyO3
/// through setuptools-rust.
pub fn builds_python_from_rust(p: &Project) -> bool {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    ["maturin", "setuptools-rust", "setuptools_rust"]
        .iter()
        .any(|b| pyproject.contains(b))
}
