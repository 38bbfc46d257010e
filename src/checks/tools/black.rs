//! black (`black --check`): a formatter; its findings are the files it would reformat (`N files would be reformatted`), counted.

use super::{Call, Role, Tool};
use crate::checks::project::Project;

pub struct Black;

impl Tool for Black {
    fn name(&self) -> &'static str {
        "black"
    }

    fn role(&self) -> Role {
        Role::Quality
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "black"
    }
}
