//! The interpreter a job's matrix names, where this machine has it: a `python-version: "3.9"`
//! combination runs with Python 3.9's folder first on `PATH` when pyenv or uv keeps one — as
//! `actions/setup-python` would put it there —, else with the Python here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Matrix keys that name a Python version.
const PYTHON_KEYS: [&str; 5] = ["python-version", "python", "python_version", "py", "pyver"];

/// The folders to put first on `PATH` for `combo`.
pub(super) fn dirs(combo: &BTreeMap<String, String>) -> Vec<String> {
    let Some(version) = PYTHON_KEYS
        .iter()
        .find_map(|k| combo.get(*k))
        .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
    else {
        return Vec::new();
    };
    let home = crate::env::non_empty("HOME").map(PathBuf::from);
    let pyenv = crate::env::non_empty("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    let uv = crate::env::non_empty("UV_PYTHON_INSTALL_DIR")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".local/share/uv/python")));
    let found = pyenv
        .and_then(|p| newest(&p.join("versions"), version, ""))
        .or_else(|| uv.and_then(|u| newest(&u, version, "cpython-")));
    found
        .map(|d| vec![d.join("bin").display().to_string()])
        .unwrap_or_default()
}

/// The newest folder in `parent` named `<prefix><version>` or `<prefix><version>.<patch>…`.
fn newest(parent: &Path, version: &str, prefix: &str) -> Option<PathBuf> {
    let want = format!("{prefix}{version}");
    let mut names: Vec<String> = std::fs::read_dir(parent)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n == &want
                || n.strip_prefix(&want)
                    .is_some_and(|rest| rest.starts_with(['.', '-', '+']))
        })
        .collect();
    names.sort_by_key(|n| version_key(n));
    names.pop().map(|n| parent.join(n))
}

/// A folder name's numbers, to order versions (`3.9.18` after `3.9.2`).
fn version_key(name: &str) -> Vec<u32> {
    name.split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_patch_of_a_named_version_is_found() {
        let dir = tempfile::tempdir().unwrap();
        for v in ["3.9.2", "3.9.18", "3.10.1", "3.9"] {
            std::fs::create_dir_all(dir.path().join(v)).unwrap();
        }
        assert_eq!(
            newest(dir.path(), "3.9", "").unwrap(),
            dir.path().join("3.9.18")
        );
        assert_eq!(newest(dir.path(), "3.1", ""), None);
        let uv = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(uv.path().join("cpython-3.12.4-linux-x86_64-gnu")).unwrap();
        assert!(newest(uv.path(), "3.12", "cpython-").is_some());
        let combo: BTreeMap<String, String> = [("os".into(), "ubuntu".into())].into();
        assert!(dirs(&combo).is_empty());
    }
}
