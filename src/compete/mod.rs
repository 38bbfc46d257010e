//! The competition pipeline (docs/specification.md §6). A map:
//! - `run`: `ralph compete N` as a short loop — admission, the claim, then rounds (requirements,
//!   selection, implementation, settlement) until [`decide`] says complete or stop; the only
//!   home of `Run`, imported by no phase;
//! - `admit`: the refusals before anything changes, and the claim;
//! - `crew`: what the phases work with — the run's inputs and spending (`Crew`), what it records
//!   (`Book`), a round's bench, contest and selection, what attempts work on (`Target`,
//!   `Purpose`);
//! - `decide`: the state machine, one pure function from how a round ended to what happens next;
//! - `state`: what is kept for `--resume`, and the per-issue lock;
//! - `select`: a round's proposals and judging under watch, a replan's resubmission refused,
//!   the winner and its budget;
//! - `attempt`: the implementer's attempts and ralph's verification;
//! - `implementer`: one call of the implementer — its prompt, its answer, what it left;
//! - `verify_role`: the `verify` role — which open checkboxes a passing change satisfies;
//! - `review`: the `review` role's scores of the change; `audit`: audited rounds (the
//!   runner-up implemented in a scratch checkout, never kept);
//! - `findings`: why an attempt failed and what the next one and the replan are told (pure);
//! - `settle`: the round's outcome — scores, awards, commit and check-off, events, state;
//! - `events`: a round's ledger events, built by a pure function, then appended;
//! - `finish`: completion (push, pull request) and the one escalation path;
//! - `guard`: read-only phases under watch — what they change is restored and named;
//! - `round`, `extract`, `propose`, `judge`: the read-only front half the dry run shares —
//!   requirements, every bot's proposal in parallel, blinding, judging, scoring, ranking;
//! - `agents`: the backends of a run, built once from the configuration;
//! - `site`: where a round's calls happen, the run id and the blinding seed, phase headings;
//! - `revise`: a revision round on a pull request ralph opened (`ralph follow`), verified like
//!   an attempt.
//!
//! The competition reaches git through [`crate::workspace::Workspace`] and issues through
//! [`crate::tracker::IssueTracker`], so its tests drive whole competitions in memory.

mod admit;
pub mod agents;
mod attempt;
mod audit;
mod crew;
pub mod decide;
mod dry_run;
mod events;
pub mod extract;
mod findings;
mod finish;
mod guard;
mod implementer;
pub mod judge;
mod prepare;
pub mod propose;
mod review;
pub mod revise;
pub mod round;
mod run;
pub mod seats;
mod select;
mod settle;
mod site;
mod state;
#[cfg(test)]
mod tests;
mod verify_role;

pub use crew::{RunInput, RunOptions};
pub use dry_run::{dry_run, DryRunInput};
pub use events::append;
pub use finish::escalate_interrupted;
pub use run::compete;
pub use site::{new_run_id, random_seed, CallSite};
pub use state::RunLock;
