//! pyright: a type checker; its findings are counted (`N errors`, `path:line:col - error` lines), never by rule.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Pyright;

impl Tool for Pyright {
    fn name(&self) -> &'static str {
        "pyright"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "pyright" | "basedpyright")
    }

    /// Its summary, `3 errors, 0 warnings, 0 informations`.
    fn count(&self, text: &str) -> Option<u64> {
        text.lines()
            .find(|l| l.contains(" errors, ") || l.contains(" error, "))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .filter(|n| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, recognise};

    #[test]
    fn its_summary_is_the_count() {
        // `pyright`, as recorded.
        let out = "/p/bad.py\n  /p/bad.py:7:16 - error: \"undefined_name\" is not defined (reportUndefinedVariable)\n  /p/bad.py:12:12 - error: Operator \"+\" not supported (reportOperatorIssue)\n  /p/bad.py:16:12 - error: Type \"int\" is not assignable to return type \"str\"\n3 errors, 0 warnings, 0 informations\n";
        let uses = recognise("pyright", None);
        assert_eq!(count_problems(&uses, out, ""), Some(3));
        assert_eq!(
            count_problems(&uses, "0 errors, 0 warnings, 0 informations\n", ""),
            None
        );
    }
}
