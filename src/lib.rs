//! ralph runs a marketplace competition of AI bots for a GitHub issue, verifies the winner's
//! implementation itself, and keeps a ledger of how every bot performs.
//!
//! The binary (`src/main.rs`) is a thin shell over [`cli::main`]; the commands in [`cli`] are
//! thin wrappers over the library:
//! - what the user asked for: [`config`], [`settings`], [`env`](mod@env);
//! - the competition: [`compete`] (a loop over a pure state machine), [`agent`] (model calls:
//!   roles over backends, and their answers), [`spec`] (requirements from issue bodies),
//!   [`market`] (the pure scoring rules and their data), [`ledger`] (the event log and its
//!   fold), [`checks`] and [`verify`] (ralph's own verification), [`replay`] (past rounds
//!   re-scored under another configuration), [`follow`] (after the pull request: reviews and
//!   failing CI answered with revision rounds, merges and reverts settled in the ledger);
//! - the adapters: [`tracker`] (GitHub or local files), [`workspace`] (git), [`process`] (the
//!   one wrapper for running programs);
//! - what people see: [`run_report`] and [`follow_report`] (what a run and a `follow` did, as
//!   data), [`render`] (runs, verification
//!   and the ledger for terminals, markdown and browsers), [`output`] (the printer), [`action`]
//!   (GitHub Actions mode), [`timeline`] (where a run's time went);
//! - small leaves: [`error`] (exit codes, `UserError`), [`secret`] (tokens kept out of every
//!   output), [`retry`], [`fsutil`], [`untrusted_dir`] (the one way into a folder an agent or a
//!   check can write), [`mix`] (a seeded generator, a fingerprint), [`demo`].

pub mod action;
pub mod agent;
pub mod checks;
pub mod cli;
pub mod compete;
pub mod config;
pub mod demo;
pub mod doctor;
pub mod env;
pub mod error;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod follow;
pub mod follow_report;
pub mod fsutil;
pub mod ledger;
pub mod market;
pub mod mix;
pub mod output;
pub mod process;
pub mod progress;
pub mod refine;
pub mod render;
pub mod replay;
pub mod retry;
pub mod run_report;
pub mod secret;
pub mod settings;
pub mod spec;
pub mod timeline;
pub mod tracker;
pub mod untrusted_dir;
pub mod verify;
pub mod workspace;
