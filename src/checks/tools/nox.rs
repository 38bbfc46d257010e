//! nox: its sessions are Python code (a noxfile), which ralph does not run to read: a check
//! through nox is not seen whole, and every tool's reading applies to its output. In a CI job it
//! installs with the network first, then runs offline.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Nox;

impl Tool for Nox {
    fn name(&self) -> &'static str {
        "nox"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "nox" || call.name() == "nox.exe"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::tox::sessions_step(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn inner(&self, _: &Call, _: Option<&Project>) -> Inner {
        Inner::Unknown
    }

    /// `nox …` installs its sessions' dependencies with `--install-only` (the network a setup
    /// has), then runs them reusing those environments without installing (`--no-install`, `-R`
    /// for both).
    fn offline(&self, command: &str) -> Option<(String, String)> {
        super::tox::with_flag(command, "nox", "--install-only")
            .zip(super::tox::with_flag(command, "nox", "-R"))
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::recognise;

    #[test]
    fn a_session_is_not_seen_into() {
        let u = recognise("nox -s tests-3.11", None);
        assert_eq!((&u.names()[..], u.opaque), (&["nox"][..], true));
        assert_eq!(
            crate::checks::tools::offline("nox -s tests").unwrap(),
            (
                "nox --install-only -s tests".to_owned(),
                "nox -R -s tests".to_owned()
            )
        );
    }
}
