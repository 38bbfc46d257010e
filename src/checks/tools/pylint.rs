//! pylint: a linter; its findings by rule from `path:line:col: C0114: message (symbol)` lines.

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Pylint;

impl Tool for Pylint {
    fn name(&self) -> &'static str {
        "pylint"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "pylint"
    }

    fn rule(&self, line: &str, _: &str) -> Option<String> {
        super::flake8::located_code(line)
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, read_rules, recognise};

    #[test]
    fn its_findings_are_counted_and_read_by_rule() {
        // `pylint *.py`, as recorded.
        let out = "************* Module bad\nbad.py:10:0: C0301: Line too long (110/100) (line-too-long)\nbad.py:1:0: C0114: Missing module docstring (missing-module-docstring)\nbad.py:7:15: E0602: Undefined variable 'undefined_name' (undefined-variable)\nbad.py:6:16: W0613: Unused argument 'b' (unused-argument)\nbad.py:10:66: W0613: Unused argument 'argument_one' (unused-argument)\n";
        let uses = recognise("pylint src", None);
        assert_eq!(count_problems(&uses, out, ""), Some(5));
        let rules = read_rules(&uses, out, "").unwrap();
        assert_eq!(rules.get("W0613"), Some(&2));
        assert_eq!(rules.len(), 4);
    }
}
