//! gofmt (`gofmt -l`, `gofmt -d`, `go fmt`): a formatter; its findings are the files it would
//! change — the `.go` files `-l` lists, or the files `-d` shows a diff of — counted.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Gofmt;

impl Tool for Gofmt {
    fn name(&self) -> &'static str {
        "gofmt"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Go)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "gofmt" | "goimports") || (call.name() == "go" && call.sub() == "fmt")
    }

    fn count(&self, text: &str) -> Option<u64> {
        let diffs = text.lines().filter(|l| l.starts_with("diff ")).count() as u64;
        let listed = text
            .lines()
            .filter(|l| l.trim_end().ends_with(".go") && !l.contains(' '))
            .count() as u64;
        let n = diffs.max(listed);
        (n > 0).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_it_would_change_are_counted() {
        assert_eq!(Gofmt.count("calc.go\nsub/parse.go\n"), Some(2));
        assert_eq!(
            Gofmt.count(
                "diff -u calc.go.orig calc.go\n--- calc.go.orig\n+++ calc.go\n@@ -1 +1 @@\n"
            ),
            Some(1)
        );
        assert_eq!(Gofmt.count(""), None);
    }
}
