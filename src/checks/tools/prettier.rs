//! Prettier (`prettier --check`): a formatter; its findings are the files it would change, counted.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Prettier;

impl Tool for Prettier {
    fn name(&self) -> &'static str {
        "prettier"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "prettier"
    }

    /// `[warn] Code style issues found in 4 files.` (`…in the above file.`: one), else the files
    /// `--list-different` names.
    fn count(&self, text: &str) -> Option<u64> {
        for line in text.lines() {
            if let Some(rest) = line.split("Code style issues found in ").nth(1) {
                let n = rest.split_whitespace().next().unwrap_or("");
                return Some(n.parse().unwrap_or(1));
            }
        }
        let listed = text
            .lines()
            .filter(|l| !l.is_empty() && !l.contains(' ') && l.contains('.'))
            .count() as u64;
        (listed > 0).then_some(listed)
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, recognise};

    #[test]
    fn the_files_it_would_change_are_counted() {
        // `prettier --check .` and `--list-different .`, as recorded.
        let uses = recognise("prettier --check .", None);
        let err = "[warn] eslint.config.js\n[warn] index.js\n[warn] other.js\n[warn] tsconfig.json\n[warn] Code style issues found in 4 files. Run Prettier with --write to fix.\n";
        assert_eq!(
            count_problems(&uses, "Checking formatting...\n", err),
            Some(4)
        );
        let listed = "eslint.config.js\nindex.js\nother.js\ntsconfig.json\n";
        assert_eq!(count_problems(&uses, listed, ""), Some(4));
        assert_eq!(
            count_problems(
                &uses,
                "Checking formatting...\nAll matched files use Prettier code style!\n",
                ""
            ),
            None
        );
    }
}
