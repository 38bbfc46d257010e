//! flake8: a linter; its findings by rule from `path:line:col: CODE message` lines.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Flake8;

impl Tool for Flake8 {
    fn name(&self) -> &'static str {
        "flake8"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "flake8" | "pflake8" | "flakeheaven")
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let why = p
            .is_file(".flake8")
            .then(|| ".flake8".to_owned())
            .or_else(|| super::ecosystem::declares(p, "flake8").map(|f| format!("[flake8] in {f}")))
            .or_else(|| {
                super::ecosystem::declares(p, "tool.flake8")
                    .map(|f| format!("[tool.flake8] in {f} (read by flake8-pyproject)"))
            });
        why.map(|why| {
            Found::new("flake8", &env.run("flake8 --extend-exclude .ralph")).because(&why)
        })
        .into_iter()
        .collect()
    }

    fn rule(&self, line: &str, _: &str) -> Option<String> {
        located_code(line)
    }
}

/// The rule code after a location: `src/a.py:3:1: E501 Line too long` (flake8, ruff's concise
/// format) or `a.py:1:0: C0114: Missing module docstring` (pylint).
pub fn located_code(line: &str) -> Option<String> {
    let rest = crate::checks::outcomes::located(line)?;
    let code = rest.split_whitespace().next()?.trim_end_matches(':');
    is_rule_code(code).then(|| code.to_owned())
}

/// A code of letters then digits: `E501`, `PLR0913`, `C0114`, `ANN001`.
pub fn is_rule_code(s: &str) -> bool {
    let letters = s.chars().take_while(|c| c.is_ascii_uppercase()).count();
    let digits = s.len() - letters;
    (1..=4).contains(&letters)
        && (2..=5).contains(&digits)
        && s[letters..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_kinds_by_code() {
        assert_eq!(
            located_code("src/a.py:3:1: E501 Line too long (99 > 88)").as_deref(),
            Some("E501")
        );
        assert_eq!(
            located_code("b.py:1:0: C0114: Missing module docstring").as_deref(),
            Some("C0114")
        );
        assert_eq!(located_code("src/a.py:3:1: this line has no code"), None);
        assert!(is_rule_code("PLR0913") && !is_rule_code("E") && !is_rule_code("error"));
    }
}
