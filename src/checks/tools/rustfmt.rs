//! rustfmt (`cargo fmt`, `rustfmt --check`): no build lock (it compiles nothing); its findings
//! are the files it would change (`Diff in …`), counted.

use super::{Call, Role, Tool};
use crate::checks::project::Project;

pub struct Rustfmt;

impl Tool for Rustfmt {
    fn name(&self) -> &'static str {
        "rustfmt"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "rustfmt"
            || call.name() == "cargo-fmt"
            || (call.name() == "cargo" && super::cargo_test::subcommand(call) == "fmt")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn cargo_fmt_takes_no_build_lock() {
        let uses = recognise("cargo fmt --all -- --check", None);
        assert_eq!((uses.tools.as_slice(), uses.lock), (&["rustfmt"][..], None));
        assert!(Rustfmt.is(&Call::of(&["rustfmt", "--check", "src/lib.rs"]), None));
    }
}
