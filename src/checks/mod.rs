//! The checks ralph runs itself on an implementation (docs/specification.md §6 step 7): which ones
//! ([`detect()`]: `[checks]` from the configuration, else a `maskfile.md`, Cargo, Python or Node
//! project), running them ([`run`]: quality checks concurrently, tests after them, each with a
//! timeout, exit code, duration and a bounded output tail; a missing tool is "unavailable", not
//! a crash), and reading a coverage total from a tool's output ([`coverage`]). What ralph knows
//! of each tool a check runs — how to read it, run one of its tests alone, what it locks — is in
//! [`tools`], one file per tool; a check's tools are decided when it is made ([`CheckSpec::uses`]).

pub mod baseline;
pub mod build_system;
pub mod compare;
pub mod confined;
pub mod coverage;
mod declared;
pub mod detect;
pub mod environment;
mod first;
pub mod job;
pub mod live;
pub mod new_tests;
pub mod outcomes;
pub mod plan;
pub mod project;
pub mod python;
pub mod rerun;
pub mod result;
pub mod run;
pub mod rust_modules;
pub mod shared_target;
pub mod spec;
pub mod suite;
pub mod tools;
pub mod unnamed;
pub mod warnings;
pub mod workflows;

pub use crate::process::on_path;
pub use detect::{detect, example};
pub use plan::CheckPlan;
pub use result::{CheckResult, CheckStatus};
pub use suite::run_checks;

pub use confined::{program, shell};
pub use spec::{words, CheckSpec, Fallback, JobPlace, JobStep};
pub use tools::CheckKind;

/// A temporary project holding `files` (path → text), for the detection tests.
#[cfg(test)]
pub(crate) fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
