//! The TypeScript compiler (`tsc --noEmit`): a type checker; its findings are counted from its `Found N errors` line (type errors are judged by number, not by rule: a change's new type error in a file full of old ones is still a new one).

use super::{Call, Lang, Role, Tool};
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
}
