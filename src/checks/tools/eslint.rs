//! ESLint: a linter; its findings by rule from its default `stylish` output (`  12:5  error
//! 'x' is defined but never used  no-unused-vars`).

use super::{Call, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Eslint;

impl Tool for Eslint {
    fn name(&self) -> &'static str {
        "eslint"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "eslint" || (call.name() == "next" && call.sub() == "lint")
    }

    fn rule(&self, line: &str, _: &str) -> Option<String> {
        stylish_rule(line)
    }
}

/// ESLint's stylish line `  12:5  error  'x' is defined but never used  no-unused-vars`: the
/// rule id at its end.
fn stylish_rule(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (at, level, rule) = (words.first()?, words.get(1)?, words.last()?);
    let located = at.split_once(':').is_some_and(|(r, c)| {
        [r, c]
            .iter()
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    });
    let rule_like = rule
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/@".contains(c))
        && rule.contains('-');
    (located && matches!(*level, "error" | "warning") && words.len() >= 4 && rule_like)
        .then(|| (*rule).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stylish_lines_name_their_rule() {
        assert_eq!(
            stylish_rule("  12:5  error  'x' is defined but never used  no-unused-vars").as_deref(),
            Some("no-unused-vars")
        );
        assert_eq!(
            stylish_rule("  14:1  warning  Unexpected console statement  no-console").as_deref(),
            Some("no-console")
        );
        assert_eq!(stylish_rule("✖ 2 problems (1 error, 1 warning)"), None);
    }
}
