//! What a tool finds a project configures: a check's name, command, kind and why — made a check
//! of the plan by the stage that asked (`checks::CheckSpec`, which carries the check's tools).

use serde::{Deserialize, Serialize};

/// Whether a check is a quality check (format, lint, types, dead code) or a test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    Quality,
    Test,
}

impl CheckKind {
    /// The kind a check's name says: `test`, `tests` and names ending in `-test`, `_test` or
    /// `-tests` run tests; everything else is a quality check.
    pub fn of_name(name: &str) -> CheckKind {
        let test = name == "test"
            || name == "tests"
            || name.ends_with("-test")
            || name.ends_with("_test")
            || name.ends_with("-tests");
        if test {
            CheckKind::Test
        } else {
            CheckKind::Quality
        }
    }
}

/// A check a tool finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub command: String,
    pub kind: CheckKind,
    /// Why it runs (`[flake8] in tox.ini`), for `ralph doctor`.
    pub reason: String,
    /// Why it only advises (ralph's own lints where the project runs none), when it does.
    pub advisory: Option<String>,
}

impl Found {
    /// A check whose kind follows from its name ([`CheckKind::of_name`]).
    pub fn new(name: &str, command: &str) -> Found {
        Found {
            name: name.to_owned(),
            command: command.to_owned(),
            kind: CheckKind::of_name(name),
            reason: String::new(),
            advisory: None,
        }
    }

    /// The same check, with why it was chosen.
    pub fn because(mut self, reason: &str) -> Found {
        self.reason = reason.to_owned();
        self
    }
}
