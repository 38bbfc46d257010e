//! isort (`isort --check-only`): an import sorter; its findings are the files it would change (`ERROR: … Imports are incorrectly sorted`), counted.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Isort;

impl Tool for Isort {
    fn name(&self) -> &'static str {
        "isort"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "isort"
    }

    /// isort sorts the files unless told to check or show a diff.
    fn writes(&self, call: &Call) -> bool {
        !call
            .args
            .iter()
            .any(|a| matches!(a.as_str(), "--check" | "--check-only" | "-c" | "--diff"))
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        let p = env.project;
        let Some(why) = super::ecosystem::declares(p, "tool.isort")
            .or_else(|| p.is_file(".isort.cfg").then_some(".isort.cfg"))
        else {
            return Vec::new();
        };
        vec![
            Found::new("isort", &env.run("isort --check-only --skip .ralph ."))
                .because(&format!("isort is configured in {why}")),
        ]
    }

    /// `ERROR: <file> Imports are incorrectly sorted and/or formatted.`: one file each.
    fn count(&self, text: &str) -> Option<u64> {
        let n = text
            .lines()
            .filter(|l| l.starts_with("ERROR: ") && l.contains("Imports are incorrectly sorted"))
            .count() as u64;
        (n > 0).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::{count_problems, recognise};

    #[test]
    fn the_files_it_would_change_are_counted() {
        // `isort --check-only .`, as recorded: its verdict on stderr, a skip on stdout.
        let uses = recognise("isort --check-only --skip .ralph .", None);
        let err = "ERROR: /p/third.py Imports are incorrectly sorted and/or formatted.\n";
        assert_eq!(count_problems(&uses, "Skipped 1 files\n", err), Some(1));
        assert_eq!(count_problems(&uses, "Skipped 1 files\n", ""), None);
        assert!(Isort.is(&Call::of(&["isort", "--check-only", "."]), None));
    }
}
