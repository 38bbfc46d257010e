//! pyright: a type checker; its findings are counted (`N errors`, `path:line:col - error` lines), never by rule.

use super::{Call, Lang, Role, Tool};
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
}
