//! What ralph knows about each tool a check runs — test runners, linters, formatters, type
//! checkers, and the wrappers that start them (env managers, package scripts, `make`, workspace
//! runners) — one file per tool, each a [`Tool`]: how to recognise it in a command, what makes it
//! name every test, how to read its results test by test and its findings by rule, how to run one
//! test alone, what build lock it takes, what state it must be able to write, what would have run
//! a test it missed. A check's tools are decided once, when the check is made ([`recognise`]),
//! and travel with it ([`Uses`]); the stages (running, baseline, comparison, re-run, new tests)
//! ask the tools (the questions of `ask.rs`) and never read the command again. Adding a tool is
//! one file and one line of [`TOOLS`].

mod ask;
mod call;
pub mod ecosystem;
mod every;
mod excerpt;
mod found;
mod junit;
mod plain;
mod registry;
mod shell;
mod step;
mod tasks;
mod tool;

mod ava;
mod black;
mod bun;
mod c8;
mod cargo;
mod cargo_test;
mod clippy;
mod cmake;
mod conda;
mod coverage_py;
mod coverage_spec;
mod ctest;
mod cython;
mod deno;
mod eslint;
mod flake8;
mod foreign;
mod gem;
mod go;
mod go_test;
mod go_vet;
mod gofmt;
mod gradle;
mod hatch;
mod isort;
mod jest;
mod just;
mod make;
mod maturin;
mod meson;
mod mocha;
mod mypy;
mod native;
mod nextest;
mod ninja;
mod node_gyp;
mod node_tap;
mod node_test;
mod nox;
mod npm;
mod nx;
mod pdm;
pub mod pip;
mod pipenv;
mod pnpm;
mod poetry;
mod prettier;
mod pylint;
mod pyright;
mod pytest;
mod python;
mod ruff;
mod rustfmt;
mod rye;
mod staticcheck;
mod system;
mod task;
mod tox;
mod tsc;
mod turbo;
mod unittest;
mod uv;
mod vitest;
mod yarn;

pub use ask::{
    alone_in_plan, count_problems, explain, files_command, missed_hint, missing_program, prepare,
    ran_no_test, read_rules, read_tests, with_state,
};
pub use call::recognise;
pub use clippy::rustc_rule;
pub use coverage_spec::{CoverageSpec, REPORT};
pub use cython::sources as cython_sources;
pub use ecosystem::{is_python, package as python_package, python_setup};
pub use every::*;
pub use found::{CheckKind, Found};
pub use jest::UNLOADED;
pub use maturin::builds_python_from_rust;
pub use native::{touches_native, NativeSpec, NATIVE_SITE_VAR};
pub use pip::install_args as pip_install_args;
pub use python::{ask, local_python, on_path as python_on_path};
pub use registry::TOOLS;
pub use shell::{plain_commands, simple_commands, Call};
pub use step::{by_name, strongest, StepKind};
pub use tasks::Tasks;
pub use tool::{
    Alone, Checked, Env, Inner, Lang, Missed, Prepared, Printed, Role, Tail, Tool, ToolRef, Uses,
};
pub use tox::checks_quality as env_checks_quality;

#[cfg(test)]
mod tests;
