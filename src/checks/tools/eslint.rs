//! ESLint: a linter; its findings by rule from its default `stylish` output (`  12:5  error
//! 'x' is defined but never used  no-unused-vars`).

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
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

    #[test]
    fn a_stylish_report_is_counted_and_read_by_rule() {
        // `eslint .` (9, flat config), as recorded.
        let out = "\n/p/index.js\n  1:7   error  'unused' is assigned a value but never used  no-unused-vars\n  3:15  error  Empty block statement                        no-empty\n  5:14  error  'undefinedThing' is not defined              no-undef\n\n/p/other.js\n  2:1  error  'x' is assigned a value but never used  no-unused-vars\n\n✖ 4 problems (4 errors, 0 warnings)\n";
        let uses = crate::checks::tools::recognise("npx eslint .", None);
        assert_eq!(
            crate::checks::tools::count_problems(&uses, out, ""),
            Some(4)
        );
        let rules = crate::checks::tools::read_rules(&uses, out, "").unwrap();
        assert_eq!(rules.get("no-unused-vars"), Some(&2));
        assert_eq!(rules.len(), 3);
    }
}
