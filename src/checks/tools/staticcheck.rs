//! staticcheck: a Go linter; its findings by rule from `path:line:col: message (SA4006)` lines.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Staticcheck;

impl Tool for Staticcheck {
    fn name(&self) -> &'static str {
        "staticcheck"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Go)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(
            call.name(),
            "staticcheck" | "go-staticcheck" | "golangci-lint"
        )
    }

    fn rule(&self, line: &str, _: &str) -> Option<String> {
        let rest = crate::checks::outcomes::located(line)?;
        let code = rest.trim_end().strip_suffix(')')?.rsplit_once('(')?.1;
        super::flake8::is_rule_code(code).then(|| code.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_name_their_check() {
        assert_eq!(
            Staticcheck
                .rule("main.go:7:2: this value of x is never used (SA4006)", "")
                .as_deref(),
            Some("SA4006")
        );
        assert_eq!(Staticcheck.rule("main.go:7:2: no code here", ""), None);
    }
}
