//! clippy (`cargo clippy`) and cargo's other building subcommands (`check`, `build`, `doc`, …):
//! cargo's build lock, and their findings by rule from rustc's diagnostics — a lint's or an
//! error's code, else its message with each quoted part left out — so that a lint failing on the
//! base is held to the rules the base keeps.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Clippy;

impl Tool for Clippy {
    fn name(&self) -> &'static str {
        "clippy"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Rust)
    }

    /// `cargo clippy`, `cargo-clippy`, and cargo's subcommands that compile without running
    /// tests (`check`, `build`, `doc`, `rustc`): rustc speaks for them all.
    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        match call.name() {
            "cargo-clippy" | "clippy-driver" => true,
            "cargo" => matches!(
                super::cargo_test::subcommand(call),
                "clippy" | "check" | "c" | "build" | "b" | "doc" | "d" | "rustc" | "rustdoc"
            ),
            _ => false,
        }
    }

    /// `cargo clippy --all-targets -- -D warnings` for a Cargo project (one build: it checks
    /// every target as `cargo check --all-targets` would, and the tests reuse it); advisory where
    /// the project does not run clippy itself (no clippy.toml, no `[lints.clippy]`).
    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let Some(manifest) = p.text("Cargo.toml") else {
            return Vec::new();
        };
        let mut check =
            Found::new("lint", "cargo clippy --all-targets -- -D warnings").because("a Cargo.toml");
        let own = p.is_file("clippy.toml")
            || p.is_file(".clippy.toml")
            || manifest.contains("[lints.clippy]")
            || manifest.contains("[workspace.lints.clippy]");
        if !own {
            check.advisory = Some(
                "the project does not run clippy itself (no clippy.toml, no [lints.clippy], no `cargo clippy` in its CI)"
                    .into(),
            );
        }
        vec![check]
    }

    fn lock(&self, _: &Call) -> Option<&'static str> {
        Some("cargo")
    }

    fn rule(&self, line: &str, next: &str) -> Option<String> {
        rustc_rule(line, next)
    }
}

/// A rustc or clippy diagnostic's header (`error: this `map_or` can be simplified`, `warning:
/// unused variable: `x``, `error[E0308]: mismatched types`) when the next line points into the
/// source (`  --> src/x.rs:5:5`): its code, else its message with each quoted part as `…`.
pub fn rustc_rule(line: &str, next: &str) -> Option<String> {
    if !next.trim_start().starts_with("--> ") {
        return None;
    }
    let rest = line
        .strip_prefix("error")
        .or_else(|| line.strip_prefix("warning"))?;
    if let Some(code) = rest.strip_prefix('[') {
        let code = code.split(']').next()?;
        return Some(code.to_owned());
    }
    let message = rest.strip_prefix(": ")?;
    let mut out = String::new();
    for (i, part) in message.split('`').enumerate() {
        out.push_str(if i % 2 == 1 { "`…`" } else { part });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{read_rules, recognise};

    #[test]
    fn diagnostics_are_kinds_by_code_or_by_message() {
        let out = "error: this `map_or` can be simplified\n --> src/value/partial_eq.rs:5:5\n  |\nerror: this `map_or` can be simplified\n  --> src/value/partial_eq.rs:14:29\nerror: unexpected `cfg` condition name: `no_btreemap_retain`\n   --> src/map.rs:279:15\nerror[E0308]: mismatched types\n --> src/lib.rs:1:1\nwarning: unused variable: `x`\n --> src/lib.rs:3:9\nerror: could not compile `serde_json` (lib) due to 37 previous errors\n";
        let uses = recognise("cargo clippy --all-targets -- -D warnings", None);
        assert_eq!(uses.tools, ["clippy"]);
        let kinds: Vec<(String, u64)> = read_rules(&uses, "", out).unwrap().into_iter().collect();
        assert_eq!(
            kinds,
            [
                ("E0308".to_owned(), 1),
                ("this `…` can be simplified".to_owned(), 2),
                ("unexpected `…` condition name: `…`".to_owned(), 1),
                ("unused variable: `…`".to_owned(), 1),
            ]
        );
    }

    #[test]
    fn every_compiling_subcommand_takes_the_cargo_lock() {
        for cmd in [
            "cargo clippy",
            "cargo +stable check --all",
            "cargo doc --no-deps",
        ] {
            let uses = recognise(cmd, None);
            assert_eq!(
                (&uses.names()[..], uses.lock),
                (&["clippy"][..], Some("cargo")),
                "{cmd}"
            );
        }
    }
}
