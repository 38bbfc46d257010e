//! `ralph follow [N…]`: what happens after the pull request. For each of ralph's pull requests
//! (its `ralph/N-…` branches; or those of issues N), in one pass:
//! - **outcomes**: merged, closed without merge, and reverted (a later commit on the base branch
//!   reverts the merge) settle the ledger once per pull request, for the winning bot;
//! - **feedback**: reviews requesting changes, inline review comments and conversation comments
//!   addressed to ralph, newer than its last commit, by users with write access ([`feedback`]);
//! - **CI**: checks failing on the head that pass on the base ([`ci`]), with the failing job's
//!   log excerpt; pending checks are waited for up to `[follow] wait_for_ci_secs`;
//!
//! and feedback or broken checks run a revision round on the branch (`compete::revise`),
//! verified like an attempt, committed, pushed and answered on the pull request, with a
//! `revision_success`/`revision_failure` event. `[follow] max_revisions` rounds, or two failed
//! ones, and the pull request and its issue go to a human (`attention-needed`). What to do is
//! decided by a pure function ([`decide`]); what was settled already is read back from the ledger
//! ([`history`]), so running `follow` twice adds nothing.
//!
//! The pure parts: `decide`, `feedback`, `ci`, `history`, `requests`; the shell: `pull` (one
//! pull request: facts, plan, actions), `revision` (a revision round and its reply), `effects`
//! (events and escalations).

pub mod ci;
pub mod decide;
mod effects;
pub mod feedback;
pub mod history;
mod pull;
pub mod requests;
mod revision;

use crate::error::UserError;
use crate::follow_report::FollowReport;
use crate::ledger::{Event, Ledger};
use crate::output::Printer;
use crate::secret::GitToken;
use crate::settings::Settings;
use crate::tracker::IssueTracker;
use crate::workspace::Workspace;
use anyhow::Result;

/// The branches ralph's pull requests come from: `ralph/<issue>-<slug>`.
pub const BRANCH_PREFIX: &str = "ralph/";

/// What `follow` needs.
pub struct FollowInput<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a dyn IssueTracker,
    pub workspace: &'a dyn Workspace,
    pub printer: &'a Printer,
    pub progress: crate::progress::Progress,
    /// The token for pushing a revision, when there is one.
    pub token: Option<GitToken>,
    pub sandbox: Option<crate::process::sandbox::Status>,
    /// Only the pull requests of these issues; all of ralph's when empty.
    pub issues: Vec<u64>,
    /// Whether revisions are pushed (the repository has a remote, and pushing is allowed).
    pub push: bool,
}

/// Follows ralph's pull requests once. A pull request that cannot be followed (the tracker
/// failed on it) is reported in `failures` and the others go on.
pub async fn follow(input: &FollowInput<'_>) -> Result<FollowReport> {
    let Some(pulls) = input.tracker.pulls() else {
        return Err(UserError::usage(format!(
            "{} has no pull requests to follow",
            input.tracker.describe()
        ))
        .into());
    };
    let mut all = pulls.pull_requests(BRANCH_PREFIX).await?;
    all.sort_by_key(|p| p.number);
    if !input.issues.is_empty() {
        all.retain(|p| {
            history::issue_of(&p.head, BRANCH_PREFIX).is_some_and(|n| input.issues.contains(&n))
        });
        for n in &input.issues {
            if !all
                .iter()
                .any(|p| history::issue_of(&p.head, BRANCH_PREFIX) == Some(*n))
            {
                input
                    .printer
                    .warn(&format!("issue #{n} has no pull request of ralph's"));
            }
        }
    }
    // Read once: a pull request's outcomes never change another's history or winner.
    let pass = pull::Pass {
        pulls,
        events: ledger_events(input.settings)?,
        me: input.tracker.current_user().await.unwrap_or(None),
    };
    let mut report = FollowReport::default();
    for pr in &all {
        match pull::follow_one(input, &pass, pr).await {
            Ok(p) => {
                input
                    .printer
                    .status(&format!("- {}", crate::render::follow::terminal_line(&p)));
                report.pulls.push(p);
            }
            Err(e) => {
                let why = format!("could not follow pull request #{}: {e:#}", pr.number);
                input.printer.warn(&why);
                report.failures.push(why);
            }
        }
    }
    Ok(report)
}

/// The ledger's events, oldest first (corrupt files are skipped, as everywhere).
fn ledger_events(settings: &Settings) -> Result<Vec<Event>> {
    let loaded = Ledger::new(&settings.ralph_dir).load()?;
    let mut events: Vec<Event> = loaded.events.into_iter().map(|l| l.event).collect();
    events.sort_by_key(|e| e.timestamp);
    Ok(events)
}
