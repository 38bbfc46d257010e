//! A check's result: how it ended ([`CheckStatus`]) and what it said ([`CheckResult`]) — what
//! every stage after the run reads. A leaf of `checks/`.

use super::outcomes::Measure;
use super::tools::CheckKind;
use super::tools::Uses;
use serde::{Deserialize, Serialize};

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    TimedOut,
    /// The tool is not installed: the check could not say anything.
    Unavailable,
    /// It failed, as it does on the base, and no worse: not held against the change.
    FailingOnBase,
    /// Not run: an earlier check had already failed for the change, which is rejected.
    Skipped,
}

impl CheckStatus {
    /// How a check ended, in words.
    pub fn word(self) -> &'static str {
        match self {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::TimedOut => "timed out",
            CheckStatus::Unavailable => "unavailable",
            CheckStatus::FailingOnBase => "failing on base",
            CheckStatus::Skipped => "not run",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    pub name: String,
    pub kind: CheckKind,
    pub command: String,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The part of its output that explains it (the failing tests' summary, else the head and
    /// tail of both streams), for reports, the next attempt and the replan prompt.
    pub output_tail: String,
    /// What to do about an unavailable tool, or how the check compares with the base.
    pub hint: Option<String>,
    /// Its numbers: which tests passed and failed, how many problems it reported.
    #[serde(skip)]
    pub measure: Measure,
    /// Named in `[checks]` (a missing tool then stops the competition).
    #[serde(skip)]
    pub configured: bool,
    /// Why it only advises: a check ralph added that the project does not run itself — shown,
    /// never the reason for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
    /// The tools it runs, as its check was made.
    #[serde(skip)]
    pub uses: Uses,
    /// How its CI job got it there: the steps skipped, and why it could not run for the
    /// machine's sake.
    #[serde(flatten)]
    pub trace: Trace,
}

/// What a CI job's run of a check says beyond its own output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The job's steps before it that failed on the base for this machine (a browser download,
    /// a host outside the policy) and were skipped, the check running without them — and so
    /// skipped after the change too: the same environment on both sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_steps: Vec<String>,
    /// Why it could not run after the change for the machine's sake, not the change's (a step
    /// that passed on the base refused a connection, wrote where nothing may be written): its
    /// verdict is unknown, and held against nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }
}
