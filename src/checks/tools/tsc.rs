//! The TypeScript compiler (`tsc --noEmit`): a type checker; its findings are counted from its `Found N errors` line (type errors are judged by number, not by rule: a change's new type error in a file full of old ones is still a new one).

use super::shell::Call;
use super::tool::{Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Tsc;

impl Tool for Tsc {
    fn name(&self) -> &'static str {
        "tsc"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "tsc" | "vue-tsc")
    }

    /// Its `file(line,col): error TSxxxx:` lines (out of a terminal it prints no summary).
    fn count(&self, text: &str) -> Option<u64> {
        let n = text.lines().filter(|l| l.contains("): error TS")).count() as u64;
        (n > 0).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{count_problems, recognise};

    #[test]
    fn its_errors_are_counted() {
        // `tsc --noEmit`, as recorded out of a terminal.
        let out = "src/main.ts(2,3): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/main.ts(5,7): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/main.ts(6,7): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.\n";
        let uses = recognise("npx tsc --noEmit", None);
        assert_eq!(count_problems(&uses, out, ""), Some(3));
        assert_eq!(count_problems(&uses, "", ""), None);
    }
}
