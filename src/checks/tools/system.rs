//! The machine's own installers: apt (Debian's archive), and the programs that install whatever
//! their arguments (Homebrew, Chocolatey, winget, rustup, a download by curl or wget). A CI step
//! of theirs sets up.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Apt;

impl Tool for Apt {
    fn name(&self) -> &'static str {
        "apt"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "apt-get" | "apt")
    }

    fn step(&self, _: &Call) -> Option<StepKind> {
        Some(StepKind::Setup)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::Debian)
    }
}

pub struct Installer;

impl Tool for Installer {
    fn name(&self) -> &'static str {
        "installer"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(
            call.name(),
            "brew" | "choco" | "curl" | "wget" | "rustup" | "winget"
        )
    }

    fn step(&self, _: &Call) -> Option<StepKind> {
        Some(StepKind::Setup)
    }
}
