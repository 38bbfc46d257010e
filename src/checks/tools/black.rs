//! black (`black --check`): a formatter; its findings are the files it would reformat (`N files would be reformatted`), counted.

use super::found::Found;
use super::shell::Call;
use super::tool::{Env, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Black;

impl Tool for Black {
    fn name(&self) -> &'static str {
        "black"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "black"
    }

    /// black reformats the files unless told to check or show a diff.
    fn writes(&self, call: &Call) -> bool {
        !call.args.iter().any(|a| a == "--check" || a == "--diff")
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        let Some(why) = super::ecosystem::declares(env.project, "tool.black") else {
            return Vec::new();
        };
        vec![Found::new(
            "black",
            &env.run("black --check --extend-exclude '/\\.ralph/' ."),
        )
        .because(&format!("[tool.black] in {why}"))]
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, recognise};

    #[test]
    fn the_files_it_would_reformat_are_counted() {
        // `black --check .`, as recorded (its verdict on stderr).
        let err = "would reformat /p/second.py\nwould reformat /p/bad.py\n\nOh no! 💥 💔 💥\n2 files would be reformatted, 1 file would be left unchanged.\n";
        let uses = recognise("black --check --extend-exclude '/\\.ralph/' .", None);
        assert_eq!(uses.tools, ["black"]);
        assert_eq!(count_problems(&uses, "", err), Some(2));
        assert_eq!(
            count_problems(
                &uses,
                "",
                "All done! ✨ 🍰 ✨\n1 file would be left unchanged.\n"
            ),
            None
        );
    }
}
