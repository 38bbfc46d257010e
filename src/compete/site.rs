//! Where a round's agent calls happen ([`CallSite`]), the run's identifiers (the run id, the
//! blinding seed) and the phase headings: the leaf the rest of `compete/` builds on.

use crate::agent::{AgentCall, Phase, Role};
use std::path::PathBuf;
use std::time::Duration;

/// Prints a phase heading (`## Phase 2: …`); in Action mode it also opens the phase's
/// collapsible log group, closing the previous one.
pub(super) fn phase(
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
    /// What kind of round the calls are for, when not a competition's (`revision`): recordings
    /// and fakes tell the calls apart by it.
    pub variant: Option<&'static str>,
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
            variant: self.variant,
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
