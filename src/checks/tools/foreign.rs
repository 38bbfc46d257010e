//! Other languages' test runners and the linters ralph does not read, known only by the kind of
//! CI step they are: a job that runs one checks, and is run as a check whose output is read by
//! no runner of its own.

use super::found::CheckKind;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

/// Programs that run tests: other languages' runners.
const TESTERS: [&str; 6] = ["rspec", "phpunit", "behave", "trial", "ward", "karma"];

/// Programs that check quality (format, lint, types).
const CHECKERS: [&str; 7] = [
    "biome",
    "shellcheck",
    "clang-format",
    "clang-tidy",
    "stylelint",
    "pre-commit",
    "codespell",
];

pub struct Foreign;

impl Tool for Foreign {
    fn name(&self) -> &'static str {
        "foreign"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        TESTERS.contains(&call.name()) || CHECKERS.contains(&call.name())
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(if TESTERS.contains(&call.name()) {
            StepKind::Check(CheckKind::Test)
        } else {
            StepKind::Check(CheckKind::Quality)
        })
    }
}
