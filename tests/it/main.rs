//! The integration tests, in one binary so the crate and its test dependencies (reqwest,
//! git2, wiremock, insta) are linked once: one module per area. `tests/interrupt.rs` stays a
//! binary of its own because it kills every child process of the test process.
//!
//! Tests here share one process: a test that changes the process environment must only add
//! variables no other test depends on, and every test that starts `ralph` sets or removes the
//! variables it relies on.

mod action_field;
mod action_files;
mod action_steps;
mod agent_backends;
#[path = "../support/agent_clis.rs"]
mod agent_clis;
mod checkout;
mod checks_field;
mod checks_here;
mod ci_jobs;
mod cli;
mod cli_tracker;
mod common;
mod compete;
mod compete_dry_run;
mod compete_field;
mod compete_signals;
mod critical_path;
mod decisions;
mod deputy;
mod docs;
mod doctor_setup;
mod done;
mod egress;
mod failures_named;
mod fake_forgejo;
mod fake_gitlab;
mod follow;
mod follow_github;
mod forgejo_loop;
mod forgejo_tracker;
mod git_auth;
mod github_tracker;
mod gitlab_ci_local;
mod gitlab_loop;
mod gitlab_tracker;
mod judged_once;
mod layers;
mod ledger_push;
mod model_server;
mod more_clis;
mod order_audit;
mod progress;
mod real_clis;
mod refine;
mod refine_github;
mod replay;
mod sandbox_view;
mod seats;
mod security;
mod snapshots;
mod tool_verdicts;
mod untrusted;
mod verdicts;
mod workspace;
