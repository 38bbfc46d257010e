//! How a plan measures coverage, as the tool that measures it says ([`super::Tool::coverage`]);
//! `checks/coverage.rs` runs it and reads the total.

use serde::Serialize;

/// The placeholder in a coverage command for the report file ralph reads.
pub const REPORT: &str = "{report}";

/// How a plan measures coverage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoverageSpec {
    /// The first test check's command under coverage, run instead of it: the suite runs once.
    pub test_command: Option<String>,
    /// Run after the checks: writes the report to `{report}` (a file outside the worktree) or
    /// prints the total. Empty: the tests write a report of their own (each tool's [`super::Tool::coverage_reports`]).
    pub command: String,
    /// Why coverage is measured so, for `ralph doctor`.
    pub reason: String,
}
