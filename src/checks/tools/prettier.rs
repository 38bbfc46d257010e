//! Prettier (`prettier --check`): a formatter; its findings are the files it would change, counted.

use super::{Call, Lang, Role, Tool};
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
}
