//! The competition pipeline (docs/specification.md §6). A map:
//! - `run`: `ralph compete N` as a short loop — admission, the claim, then rounds (requirements,
//!   selection, implementation, settlement) until [`decide`] says complete or stop;
//! - `decide`: the state machine, one pure function from how a round ended to what happens next;
//! - `state`: what is kept for `--resume`, and the per-issue lock;
//! - `attempt`: the implementer's attempts, ralph's verification, the `verify` role;
//! - `settle`: the round's outcome — scores, awards, commit and check-off, events, state;
//! - `events`: a round's ledger events, built by a pure function, then appended;
//! - `finish`: completion (push, pull request) and the one escalation path;
//! - `guard`: read-only phases under watch — what they change is restored and named;
//! - `round`, `extract`, `propose`, `judge`: the read-only front half the dry run shares —
//!   requirements, every bot's proposal in parallel, blinding, judging, scoring, ranking;
//! - `agents`: the backends of a run, built once from the configuration.
//!
//! The competition reaches git through [`crate::workspace::Workspace`] and issues through
//! [`crate::tracker::IssueTracker`], so its tests drive whole competitions in memory.

pub mod agents;
mod attempt;
mod audit;
pub mod decide;
mod dry_run;
mod events;
pub mod extract;
mod finish;
mod guard;
pub mod judge;
mod prepare;
pub mod propose;
mod review;
pub mod round;
mod run;
mod settle;
mod state;
#[cfg(test)]
mod tests;

pub use dry_run::{dry_run, DryRunInput};
pub use finish::escalate_interrupted;
pub use run::{compete, RunInput, RunOptions};
pub use state::RunLock;

use crate::agent::{AgentCall, Phase, Role};
use std::path::PathBuf;
use std::time::Duration;

/// Prints a phase heading (`## Phase 2: …`); in Action mode it also opens the phase's
/// collapsible log group, closing the previous one.
pub(crate) fn phase(
    printer: &crate::output::Printer,
    progress: &crate::progress::Progress,
    title: &str,
) {
    progress.phase(title.trim_start_matches("## "));
    printer.status(&printer.paint_err().bold(title));
}

/// Where the calls of one round happen: the same for every agent of the round.
#[derive(Debug, Clone)]
pub struct CallSite {
    pub issue: u64,
    /// 1-based.
    pub round: u32,
    pub phase: Phase,
    /// The repository root (the worktree for `implement`).
    pub workdir: PathBuf,
    /// The live view the round's agents report to.
    pub progress: crate::progress::Progress,
}

impl CallSite {
    /// Shows `call` in the live view as `label` while the returned task lives.
    pub fn watch(&self, call: &mut AgentCall, label: &str) -> crate::progress::Task {
        let task = self.progress.start(label);
        call.activity = Some(task.sink());
        task
    }

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
            variant: None,
            activity: None,
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
