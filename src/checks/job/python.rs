//! A job's own Python environment, the same on the base and after the change. A CI job that runs
//! `pip install .` (or `pip install tox`) installs into the runner's Python, which is the job's
//! alone; here the active Python is the user's, writable to a setup on the base and read-only
//! after a change — an install that passes on one side and fails with `Read-only file system` on
//! the other, and the base's version of the package left in the user's environment. So a job
//! whose steps install with pip gets a virtual environment of its own in its folder, first on
//! `PATH`, seeing what the user's Python has installed (its site folders added, below the job's
//! own) and writable on both sides: the change's version of the package is the one its checks
//! import. Where the job installs the project itself (not editable), the worktree's import roots
//! leave `PYTHONPATH`, as a runner has none: its checks import what the job installed (compiled
//! extensions included).

use crate::checks::spec::JobStep;
use std::path::Path;

/// What a job's steps ask of its Python.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Needs {
    /// A step installs with pip into the active Python.
    pub venv: bool,
    /// A step installs the project itself (`pip install .`, `pip install '.[test]'`), not
    /// editable.
    pub project: bool,
}

/// What `steps` — a job instance's, before its checks — ask of its Python.
pub(super) fn needs<'a>(steps: impl IntoIterator<Item = &'a JobStep>) -> Needs {
    let mut out = Needs::default();
    for step in steps {
        for words in crate::checks::tools::plain_commands(&step.command) {
            let Some(args) = crate::checks::tools::pip_install_args(&words) else {
                continue;
            };
            out.venv = true;
            let mut editable = false;
            for a in args {
                if a == "-e" || a == "--editable" {
                    editable = true;
                } else if is_project(a) {
                    out.project |= !editable;
                    editable = false;
                } else if !a.starts_with('-') {
                    editable = false;
                }
            }
        }
    }
    out
}

/// Whether a pip argument names the project in the job's tree: `.`, `./`, `.[test]`.
fn is_project(arg: &str) -> bool {
    let path = arg.split('[').next().unwrap_or(arg);
    matches!(path, "." | "./") || path.starts_with("./") && !path.ends_with(".txt")
}

/// Makes the job's environment at `dir` with the `python3` first on `path` (the interpreter its
/// matrix names, else the user's), confined as a check is (it writes only the job's folder).
pub(super) async fn make(
    dir: &Path,
    path: &str,
    tree: &Path,
    writable: &Path,
) -> Result<(), String> {
    let python = crate::process::find_in("python3", std::ffi::OsStr::new(path))
        .ok_or("there is no python3 on its PATH")?;
    let dir_text = dir.display().to_string();
    let cmd = crate::checks::confined::program(
        &python.display().to_string(),
        &["-c", crate::checks::tools::pip::JOB_ENVIRONMENT, &dir_text],
        tree,
        crate::process::Kind::Check,
        &[("PATH".to_owned(), path.to_owned())],
        &[writable],
    )
    .label("the job's Python environment")
    .timeout(std::time::Duration::from_secs(120));
    let out = crate::process::run(&cmd).await.map_err(|e| e.to_string())?;
    if out.success() {
        Ok(())
    } else {
        Err(format!(
            "`{} -m venv` failed: {}",
            python.display(),
            out.stderr.trim()
        ))
    }
}

/// `PYTHONPATH` for a step of the job: the worktree's import roots (under `workdir`) pointed at
/// the job's tree — or left out, where the job installs the project itself (`drop`); the rest
/// as it was. `None` when nothing is left.
pub(super) fn import_roots(value: &str, workdir: &Path, tree: &Path, drop: bool) -> Option<String> {
    let kept: Vec<String> = std::env::split_paths(value)
        .filter_map(|p| match p.strip_prefix(workdir) {
            Ok(_) if drop => None,
            Ok(rel) => Some(tree.join(rel).display().to_string()),
            Err(_) => Some(p.display().to_string()),
        })
        .collect();
    (!kept.is_empty()).then(|| kept.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(command: &str) -> JobStep {
        JobStep {
            label: command.into(),
            command: command.into(),
            installs: true,
        }
    }

    #[test]
    fn pip_installs_into_the_active_python_are_told_apart() {
        let of = |c: &str| needs([&step(c)]);
        assert_eq!(
            of("pip install ."),
            Needs {
                venv: true,
                project: true
            }
        );
        assert_eq!(
            of("python -m pip install --upgrade pip && python -m pip install '.[test]'"),
            Needs {
                venv: true,
                project: true
            }
        );
        assert_eq!(
            of("pip install -e ."),
            Needs {
                venv: true,
                project: false
            },
            "an editable install builds in the tree"
        );
        assert_eq!(
            of("pip install tox -r requirements.txt"),
            Needs {
                venv: true,
                project: false
            }
        );
        assert_eq!(of("pip install --user meson"), Needs::default());
        assert_eq!(
            of(".venv/bin/pip install ."),
            Needs::default(),
            "the job's own venv"
        );
        assert_eq!(
            of("uv pip install --system ."),
            needs([&step("pip install .")])
        );
        assert_eq!(
            of("uv pip install ."),
            Needs::default(),
            "uv's own environment"
        );
        assert_eq!(of("npm ci"), Needs::default());
    }

    #[test]
    fn import_roots_follow_the_job_or_leave() {
        let wt = Path::new("/w/tree");
        let job = Path::new("/tmp/job-tree");
        assert_eq!(
            import_roots("/w/tree/src:/opt/extra", wt, job, false).as_deref(),
            Some("/tmp/job-tree/src:/opt/extra")
        );
        assert_eq!(
            import_roots("/w/tree/src:/opt/extra", wt, job, true).as_deref(),
            Some("/opt/extra")
        );
        assert_eq!(import_roots("/w/tree", wt, job, true), None);
    }
}
