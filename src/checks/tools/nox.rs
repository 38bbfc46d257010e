//! nox: its sessions are Python code (a noxfile), which ralph does not run to read: a check
//! through nox is not seen whole, and every tool's reading applies to its output.

use super::{Call, Inner, Role, Tool};
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

    fn inner(&self, _: &Call, _: Option<&Project>) -> Inner {
        Inner::Unknown
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::recognise;

    #[test]
    fn a_session_is_not_seen_into() {
        let u = recognise("nox -s tests-3.11", None);
        assert_eq!((u.tools.as_slice(), u.opaque), (&["nox"][..], true));
    }
}
