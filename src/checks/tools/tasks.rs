//! A task runner's file (a Makefile, a justfile) as ralph reads it, one reader per format in the
//! runner's own file: its targets, each with its prerequisites and recipe lines. Detection asks
//! it which targets a project declares (`test`, `lint`, `install`) and what one runs.

use std::collections::BTreeMap;

/// The targets of a task runner's file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tasks {
    /// The file, as the plan's source names it (`Makefile`).
    pub source: &'static str,
    /// The file, as a reason names it (`the Makefile`).
    pub file: &'static str,
    /// Each target: its prerequisites and its recipe lines.
    pub targets: BTreeMap<String, (Vec<String>, Vec<String>)>,
    /// A `check` target without a `test` one is the test suite (GNU's `make check`).
    pub check_tests: bool,
}

impl Tasks {
    /// Whether it declares the target `name`.
    pub fn has(&self, name: &str) -> bool {
        self.targets.contains_key(name)
    }

    /// The recipe lines of `name`, when it has some and no prerequisites: what running it runs,
    /// and nothing else.
    pub fn recipe(&self, name: &str) -> Option<&[String]> {
        let (prereq, lines) = self.targets.get(name)?;
        (prereq.is_empty() && !lines.is_empty()).then_some(lines.as_slice())
    }
}
