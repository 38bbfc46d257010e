//! maturin, which builds a Rust extension into a Python package: it installs its build
//! dependencies from PyPI. How ralph builds such a package in place is the project's native
//! build (`checks/environment.rs`).

use super::ecosystem::Registry;
use super::native::{wheel_into_site, NativeSpec, NATIVE_SITE_VAR};
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
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

    fn native(&self, env: &super::tool::Env) -> Option<NativeSpec> {
        let pyproject = env.project.text("pyproject.toml")?;
        if !pyproject.contains("[tool.maturin]") {
            return None;
        }
        let interpreter = if env.manager.is_some() {
            "python"
        } else {
            super::python::on_path()
        };
        Some(NativeSpec {
            command: env.run("maturin develop"),
            reason: "[tool.maturin] in pyproject.toml".into(),
            rebuild: Some(wheel_into_site(
                &env.run(&format!(
                    "maturin build --interpreter {interpreter} --out \"${NATIVE_SITE_VAR}/wheel\""
                )),
                &env.python(""),
            )),
            rust: true,
        })
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
