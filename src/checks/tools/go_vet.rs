//! `go vet`: the Go toolchain's own analysis of suspicious constructs; its findings are
//! `file:line:col: message` lines, counted.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct GoVet;

impl Tool for GoVet {
    fn name(&self) -> &'static str {
        "go vet"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Go)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "go" && matches!(call.sub(), "vet" | "build")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_go_vet_and_go_build() {
        assert!(GoVet.is(&Call::of(&["go", "vet", "./..."]), None));
        assert!(!GoVet.is(&Call::of(&["go", "test", "./..."]), None));
    }
}
