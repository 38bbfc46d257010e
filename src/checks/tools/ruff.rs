//! ruff (`ruff check`, `ruff format --check`): its findings by rule — `path:line:col: CODE
//! message` in the concise format, or the full format's `CODE message` header followed by
//! ` --> path:line:col`.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Ruff;

impl Tool for Ruff {
    fn name(&self) -> &'static str {
        "ruff"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "ruff"
    }

    /// `ruff format` writes unless told to check or show a diff; `ruff check` only with `--fix`.
    fn writes(&self, call: &Call) -> bool {
        let has = |f: &str| call.args.iter().any(|a| a == f);
        if call.args.first().is_some_and(|a| a == "format") {
            return !has("--check") && !has("--diff");
        }
        has("--fix") && !has("--no-fix")
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let Some(why) = super::ecosystem::declares(p, "tool.ruff")
            .or_else(|| p.is_file("ruff.toml").then_some("ruff.toml"))
            .or_else(|| p.is_file(".ruff.toml").then_some(".ruff.toml"))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if super::ecosystem::declares(p, "tool.ruff.format").is_some() {
            out.push(
                Found::new(
                    "format",
                    &env.run("ruff format --check --extend-exclude .ralph"),
                )
                .because(&format!("[tool.ruff.format] in {why}")),
            );
        }
        out.push(
            Found::new("lint", &env.run("ruff check --extend-exclude .ralph"))
                .because(&format!("ruff is configured in {why}")),
        );
        out
    }

    fn rule(&self, line: &str, next: &str) -> Option<String> {
        super::flake8::located_code(line).or_else(|| {
            let code = line.split_whitespace().next()?;
            (next.trim_start().starts_with("--> ") && super::flake8::is_rule_code(code))
                .then(|| code.to_owned())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_name_the_rule() {
        assert_eq!(
            Ruff.rule("src/a.py:9:1: F401 [*] `os` imported but unused", "")
                .as_deref(),
            Some("F401")
        );
        assert_eq!(
            Ruff.rule("F401 [*] `os` imported but unused", " --> src/a.py:1:8")
                .as_deref(),
            Some("F401")
        );
        assert_eq!(Ruff.rule("Found 1 error.", ""), None);
    }

    #[test]
    fn a_full_report_is_counted_and_read_by_rule() {
        // `ruff check .` with ruff 0.17's full format, as recorded (snippets shortened).
        let out = "F401 [*] `os` imported but unused\n --> bad.py:1:8\n  |\n1 | import os\n  |        ^^\nhelp: Remove unused import: `os`\n\nUP035 `typing.List` is deprecated, use `list` instead\n --> bad.py:3:1\n  |\n\nF401 [*] `sys` imported but unused\n --> bad.py:2:8\n\nFound 3 errors.\n[*] 2 fixable with `--fix`.\n";
        let uses = crate::checks::tools::recognise("ruff check --extend-exclude .ralph", None);
        assert_eq!(
            crate::checks::tools::count_problems(&uses, out, ""),
            Some(3)
        );
        let rules = crate::checks::tools::read_rules(&uses, out, "").unwrap();
        assert_eq!(rules.get("F401"), Some(&2));
        assert_eq!(rules.get("UP035"), Some(&1));
    }
}
