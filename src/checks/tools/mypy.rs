//! mypy: a type checker; its findings are counted from its `Found N errors` line (type errors are judged by number, not by rule).

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Mypy;

impl Tool for Mypy {
    fn name(&self) -> &'static str {
        "mypy"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "mypy" | "dmypy")
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let Some(why) = super::ecosystem::declares(p, "tool.mypy")
            .or_else(|| super::ecosystem::declares(p, "mypy"))
            .or_else(|| p.is_file("mypy.ini").then_some("mypy.ini"))
            .or_else(|| p.is_file(".mypy.ini").then_some(".mypy.ini"))
        else {
            return Vec::new();
        };
        // Its configured `files`, else the package (or `.`).
        let has_files = ["pyproject.toml", "setup.cfg", "mypy.ini"].iter().any(|f| {
            p.text(f)
                .is_some_and(|t| t.lines().any(|l| l.trim_start().starts_with("files")))
        });
        let target = if has_files {
            String::new()
        } else {
            format!(
                " {}",
                super::ecosystem::package(p).unwrap_or_else(|| ".".into())
            )
        };
        vec![Found::new(
            "type-check",
            &env.run(&format!("mypy --exclude '^\\.ralph/'{target}")),
        )
        .because(&format!("mypy is configured in {why}"))]
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, read_rules, recognise};

    #[test]
    fn its_errors_are_counted_not_judged_by_rule() {
        // `mypy .`, as recorded.
        let out = "bad.py:7: error: Name \"undefined_name\" is not defined  [name-defined]\nbad.py:16: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]\nFound 2 errors in 1 file (checked 3 source files)\n";
        let uses = recognise("mypy --exclude '^\\.ralph/' src/pkg", None);
        assert_eq!(count_problems(&uses, out, ""), Some(2));
        assert_eq!(read_rules(&uses, out, ""), None);
        assert_eq!(
            count_problems(&uses, "Success: no issues found in 1 source file\n", ""),
            None
        );
    }
}
