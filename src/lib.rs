//! ralph runs a marketplace competition of AI bots for a GitHub issue, verifies the winner's
//! implementation itself, and keeps a ledger of how every bot performs.
//!
//! [`agent`] runs model calls (roles over backends) and parses their answers.
//!
//! The binary (`src/main.rs`) is a thin shell over [`cli::run`]; the commands in [`cli`] are
//! thin wrappers over the library modules: [`config`] and [`settings`] resolve what the user
//! asked for, [`ledger`] owns the event log and its fold, [`market`] the pure scoring rules and
//! their data, [`spec`] extracts requirements from issue bodies, [`tracker`] talks to where
//! issues live (GitHub or local files), and [`render`] renders runs, verification and the ledger for terminals,
//! markdown and browsers ([`run_report`] is the run report it renders). [`process`] is the one wrapper for running other programs; [`secret`] keeps
//! tokens out of every output.

pub mod action;
pub mod agent;
pub mod checks;
pub mod cli;
pub mod compete;
pub mod config;
pub mod demo;
pub mod env;
pub mod error;
pub mod fsutil;
pub mod ledger;
pub mod market;
pub mod output;
pub mod process;
pub mod render;
pub mod retry;
pub mod run_report;
pub mod secret;
pub mod settings;
pub mod spec;
pub mod tracker;
pub mod verify;
pub mod workspace;
