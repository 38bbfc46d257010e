//! The competition pipeline (SPEC §6). This part is the read-only front half, which is also
//! `ralph compete N --dry-run`: requirements (the `extract` role, falling back to the
//! checkboxes), the proposals of every bot in parallel, blinding, judging, scoring and the
//! ranking — written nowhere, reported on the terminal and as the run report.

pub mod agents;
mod dry_run;
pub mod extract;
pub mod judge;
pub mod propose;
pub mod round;
pub mod run;

pub use dry_run::{dry_run, DryRunInput};

use crate::agent::{AgentCall, Phase, Role};
use std::path::PathBuf;
use std::time::Duration;

/// Where the calls of one round happen: the same for every agent of the round.
#[derive(Debug, Clone)]
pub struct CallSite {
    pub issue: u64,
    /// 1-based.
    pub round: u32,
    pub phase: Phase,
    /// The repository root (the worktree for `implement`).
    pub workdir: PathBuf,
}

impl CallSite {
    /// A first-attempt call of `role` with `prompt`.
    pub fn call(&self, role: Role, prompt: String, timeout: Duration) -> AgentCall {
        AgentCall {
            role,
            prompt,
            workdir: self.workdir.clone(),
            bot_id: None,
            issue: self.issue,
            round: self.round,
            phase: self.phase,
            timeout,
            attempt: 0,
            speaker: None,
        }
    }
}

/// A fresh run id: `<UTC time>-<issue>-<4 hex digits>`, unique enough to tell runs apart in
/// events and reports.
pub fn new_run_id(issue: u64, now: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "{}-{issue}-{:04x}",
        now.format("%Y%m%dT%H%M%SZ"),
        crate::retry::random_u64() & 0xffff
    )
}

/// A seed for the blind order: different for every round and run, recorded in the report so a
/// ranking can be reproduced.
pub fn random_seed() -> u64 {
    crate::retry::random_u64()
}
