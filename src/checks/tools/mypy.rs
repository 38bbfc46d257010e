//! mypy: a type checker; its findings are counted from its `Found N errors` line (type errors are judged by number, not by rule).

use super::{Call, Env, Lang, Role, Tool};
use crate::checks::project::Project;
use crate::checks::CheckSpec;

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

    fn detect(&self, env: &Env) -> Vec<CheckSpec> {
        let p = env.project;
        let Some(why) = p
            .declares("tool.mypy")
            .or_else(|| p.declares("mypy"))
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
                super::python_package(p).unwrap_or_else(|| ".".into())
            )
        };
        vec![CheckSpec::new(
            "type-check",
            &env.run(&format!("mypy --exclude '^\\.ralph/'{target}")),
        )
        .because(&format!("mypy is configured in {why}"))]
    }
}
