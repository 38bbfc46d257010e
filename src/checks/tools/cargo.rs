//! Cargo as a package manager and build tool, for what is not a check of its own (`cargo test`
//! is [`super::cargo_test`], `cargo clippy`/`build`/`check` [`super::clippy`], `cargo fmt`
//! [`super::rustfmt`]): `cargo install`/`fetch` set up from crates.io, `cargo llvm-cov` and
//! `tarpaulin` test, `cargo deny`/`audit` check. `cargo fetch` runs no code of the project and
//! downloads into Cargo's own registry; a tool installed by name lands in the job's own folder.

use super::ecosystem::Registry;
use super::found::CheckKind;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Cargo;

impl Tool for Cargo {
    fn name(&self) -> &'static str {
        "cargo"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "cargo"
    }

    fn coverage_reports(&self) -> &'static [&'static str] {
        // tarpaulin's and llvm-cov's own names, at the root.
        &["lcov.info", "cobertura.xml"]
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(match super::cargo_test::subcommand(call) {
            "install" | "fetch" | "binstall" => StepKind::Setup,
            "llvm-cov" | "tarpaulin" => StepKind::Check(CheckKind::Test),
            "deny" | "audit" => StepKind::Check(CheckKind::Quality),
            _ => StepKind::Other,
        })
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::Crates)
    }

    fn downloads(&self, call: &Call) -> &'static [&'static str] {
        if super::cargo_test::subcommand(call) == "fetch" {
            &[".cargo/registry", ".cargo/git"]
        } else {
            &[]
        }
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.sub() == "install"
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[("CARGO_INSTALL_ROOT", "cargo", Some("bin"))]
    }
}
