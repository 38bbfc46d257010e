//! rustfmt (`cargo fmt`, `rustfmt --check`): no build lock (it compiles nothing); its findings
//! are the files it would change (`Diff in …`), counted.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Rustfmt;

impl Tool for Rustfmt {
    fn name(&self) -> &'static str {
        "rustfmt"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Rust)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "rustfmt"
            || call.name() == "cargo-fmt"
            || (call.name() == "cargo" && super::cargo_test::subcommand(call) == "fmt")
    }

    /// rustfmt rewrites the files unless told to check.
    fn writes(&self, call: &Call) -> bool {
        !call.args.iter().any(|a| a == "--check")
    }

    /// `cargo fmt --all -- --check` for a Cargo project; advisory where the project does not
    /// run rustfmt itself (no rustfmt.toml — its CI may, which the plan then says).
    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        if !p.is_file("Cargo.toml") {
            return Vec::new();
        }
        let mut check = Found::new("format", "cargo fmt --all -- --check").because("a Cargo.toml");
        if !(p.is_file("rustfmt.toml") || p.is_file(".rustfmt.toml")) {
            check.advisory = Some(
                "the project does not run rustfmt itself (no rustfmt.toml, no `cargo fmt` in its CI)"
                    .into(),
            );
        }
        vec![check]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn cargo_fmt_takes_no_build_lock() {
        let uses = recognise("cargo fmt --all -- --check", None);
        assert_eq!((&uses.names()[..], uses.lock), (&["rustfmt"][..], None));
        assert!(Rustfmt.is(&Call::of(&["rustfmt", "--check", "src/lib.rs"]), None));
    }
}
