//! A plan of checks: the checks to run, how coverage is measured, the variables every check
//! runs with, how a worktree's environment is made — what detection decides and every stage
//! after it (the run, the baseline, verification) reads.

use super::coverage::CoverageSpec;
use super::environment::{NativeSpec, SetupSpec};
use super::spec::CheckSpec;
use crate::config::ChecksConfig;
use serde::Serialize;

/// The checks to run and the coverage command, with where they came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckPlan {
    /// `config`, `maskfile.md`, `Makefile`, `justfile`, `cmake`, `meson`, `cargo`, `python`,
    /// `node` or `none` (followed by ` and CI` when the CI adds checks; `CI` alone).
    pub source: String,
    pub checks: Vec<CheckSpec>,
    /// How coverage is measured, when it is.
    pub coverage: Option<CoverageSpec>,
    /// An attempt passes only if a test check ran and passed (`[checks] require_test`).
    pub require_test: bool,
    /// Variables every check runs with (set per worktree: the shared Cargo target directory,
    /// the worktree's Python import roots).
    pub env: Vec<(String, String)>,
    /// How a worktree's environment is made, when it needs making.
    pub setup: Option<SetupSpec>,
    /// How the project's native code is built in place, when it has any.
    pub native: Option<NativeSpec>,
    /// What the plan leaves out and why (coverage it cannot measure), for `ralph doctor`.
    pub notes: Vec<String>,
}

impl CheckPlan {
    /// A plan of just these checks (a test required; no coverage, variables or setup).
    pub fn of(checks: Vec<CheckSpec>) -> CheckPlan {
        CheckPlan::new("config", checks, &ChecksConfig::default())
    }

    pub(super) fn new(source: &str, checks: Vec<CheckSpec>, config: &ChecksConfig) -> CheckPlan {
        CheckPlan {
            source: source.into(),
            checks,
            coverage: None,
            require_test: config.require_test,
            env: Vec::new(),
            setup: None,
            native: None,
            notes: Vec::new(),
        }
    }
}
