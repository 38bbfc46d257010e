//! Cython: its sources (`.pyx`) beside a setup.py are that script's to build; without one — a
//! build backend of the project's compiles them, no script says how — they are compiled in
//! place by Cython, so that the worktree's package holds the change's own modules (never another
//! checkout's, which an editable install would otherwise lend).

use super::native::NativeSpec;
use super::shell::Call;
use super::tool::{Env, Role, Tool};
use crate::checks::project::Project;

pub struct Cython;

impl Tool for Cython {
    fn name(&self) -> &'static str {
        "cython"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "cython" | "cythonize")
    }

    fn native(&self, env: &Env) -> Option<NativeSpec> {
        let p = env.project;
        let pyx = sources(p);
        let built_else = p.is_file("setup.py")
            || p.text("pyproject.toml")
                .is_some_and(|t| t.contains("[tool.maturin]"));
        (!pyx.is_empty() && !built_else).then(|| NativeSpec {
            command: env.python(&format!(
                "-m Cython.Build.Cythonize -i -3 {}",
                pyx.join(" ")
            )),
            reason: format!("Cython sources ({}), compiled in place", pyx.join(", ")),
            rebuild: None,
            rust: false,
        })
    }
}

/// The project's Cython sources (`.pyx`), by their paths: at its root, under `src/`, and in
/// its import package.
pub fn sources(p: &Project) -> Vec<String> {
    let package = super::ecosystem::package(p).unwrap_or_default();
    let mut dirs = vec!["".to_owned(), "src".to_owned()];
    if !package.is_empty() {
        dirs.push(package);
    }
    dirs.dedup();
    let mut out: Vec<String> = dirs
        .iter()
        .flat_map(|d| {
            p.list(d)
                .into_iter()
                .filter(|(n, _)| n.ends_with(".pyx"))
                .map(
                    move |(n, _)| {
                        if d.is_empty() {
                            n
                        } else {
                            format!("{d}/{n}")
                        }
                    },
                )
        })
        .collect();
    out.sort();
    out.dedup();
    out
}
