//! What a job's matrix combination asks of this machine, and whether it is here: a
//! `python-version: "3.9"` combination runs with Python 3.9's folder first on `PATH` when pyenv
//! or uv keeps one — as `actions/setup-python` would put it there — or with the Python here when
//! it is that version; a `node-version` the Node.js here, by its major version; a `compiler`
//! (`cc`, `cxx`) the program it names. A combination asking for what is not here is "not
//! provided here": ralph runs the instances this machine can be, not others in their name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Matrix keys that name a Python version.
const PYTHON_KEYS: [&str; 5] = ["python-version", "python", "python_version", "py", "pyver"];

/// Matrix keys that name a Node.js version.
const NODE_KEYS: [&str; 4] = ["node-version", "node", "node_version", "nodejs"];

/// Matrix keys that name a C or C++ compiler.
const COMPILER_KEYS: [&str; 5] = ["compiler", "cc", "CC", "cxx", "CXX"];

/// The folders to put first on `PATH` for `combo`, or why this machine cannot be that instance.
pub(super) fn provided(combo: &BTreeMap<String, String>) -> Result<Vec<String>, String> {
    let find = |keys: &[&str]| keys.iter().find_map(|k| combo.get(*k)).map(|v| v.trim());
    let mut dirs = Vec::new();
    if let Some(version) = find(&PYTHON_KEYS) {
        dirs.extend(python(version)?);
    }
    if let Some(version) = find(&NODE_KEYS) {
        node(version)?;
    }
    if let Some(compiler) = find(&COMPILER_KEYS).filter(|c| !c.is_empty()) {
        let program = compiler.split_whitespace().next().unwrap_or(compiler);
        if !crate::process::on_path(program) {
            return Err(format!("the compiler `{compiler}` is not here"));
        }
    }
    Ok(dirs)
}

/// The folders for the Python `version` a matrix names, or why it is not here.
fn python(version: &str) -> Result<Vec<String>, String> {
    if version.starts_with("pypy") {
        return if crate::process::on_path("pypy3") {
            Ok(Vec::new())
        } else {
            Err(format!("{version} is not here"))
        };
    }
    if !version.starts_with(|c: char| c.is_ascii_digit()) {
        // A spelling ralph cannot read: the Python here.
        return Ok(Vec::new());
    }
    let local = crate::checks::tools::local_python();
    let (major, rest) = version.split_once('.').unwrap_or((version, "x"));
    if matches!(rest, "x" | "*" | "") && local.is_some_and(|(m, _)| m.to_string() == major) {
        return Ok(Vec::new());
    }
    if let Some(dir) = dirs(version) {
        return Ok(vec![dir]);
    }
    let minor: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let plain = rest.len() == minor.len();
    if plain && local.is_some_and(|(m, n)| m.to_string() == major && n.to_string() == minor) {
        return Ok(Vec::new());
    }
    Err(format!("Python {version} is not here"))
}

/// Whether the Node.js `version` a matrix names is the one here (by its major version).
fn node(version: &str) -> Result<(), String> {
    let wanted = version.trim_start_matches('v');
    if matches!(wanted, "lts/*" | "latest" | "current" | "node" | "*" | "") {
        return Ok(());
    }
    let major = wanted.split(['.', '-']).next().unwrap_or(wanted);
    match local_node() {
        Some(here) if here.to_string() == major => Ok(()),
        _ if major.parse::<u32>().is_err() => Ok(()),
        _ => Err(format!("Node.js {version} is not here")),
    }
}

/// The major version of the `node` here, asked once.
fn local_node() -> Option<u32> {
    static ASKED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| {
        let out = crate::checks::tools::ask("node", &["--version"])?;
        out.trim()
            .trim_start_matches('v')
            .split('.')
            .next()?
            .parse()
            .ok()
    })
}

/// The folder of the Python `version` that pyenv or a tool that installs Pythons (uv) keeps
/// here.
fn dirs(version: &str) -> Option<String> {
    let home = crate::env::non_empty("HOME").map(PathBuf::from);
    let pyenv = crate::env::non_empty("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".pyenv")));
    let found = pyenv
        .and_then(|p| newest(&p.join("versions"), version, ""))
        .or_else(|| {
            crate::checks::tools::python_installs()
                .iter()
                .find_map(|(dir, prefix)| newest(dir, version, prefix))
        });
    found.map(|d| d.join("bin").display().to_string())
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
    fn what_a_combination_asks_for_is_here_or_named() {
        let combo =
            |k: &str, v: &str| -> BTreeMap<String, String> { [(k.into(), v.into())].into() };
        assert_eq!(
            provided(&combo("python-version", "2.6")),
            Err("Python 2.6 is not here".into())
        );
        assert_eq!(
            provided(&combo("compiler", "definitely-absent-cc-99")),
            Err("the compiler `definitely-absent-cc-99` is not here".into())
        );
        assert_eq!(provided(&combo("cc", "sh")), Ok(Vec::new()));
        assert_eq!(
            provided(&combo("node-version", "4.x")),
            Err("Node.js 4.x is not here".into())
        );
        assert_eq!(provided(&combo("node-version", "lts/*")), Ok(Vec::new()));
        if let Some((major, minor)) = crate::checks::tools::local_python() {
            assert!(provided(&combo("python", &format!("{major}.{minor}"))).is_ok());
            assert!(provided(&combo("python", &format!("{major}.x"))).is_ok());
        }
    }

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
        assert_eq!(provided(&combo), Ok(Vec::new()));
    }
}
