//! The Python interpreter as a wrapper: `python -m X …` (`python3.11`, `.venv/bin/python` as
//! well) starts the module `X` — `python -m pytest` is pytest. A missing module is said in the
//! interpreter's words (`No module named pytest`). Here too what every Python tool's detection
//! asks of a project: whether it is one, its import package, the interpreter on `PATH`.

use super::{Call, Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Python;

/// Whether a program's file name is a Python interpreter's (`python`, `python3`, `python3.11`).
pub fn interpreter(name: &str) -> bool {
    name == "py"
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether `p` is a Python project.
pub fn is_python(p: &Project) -> bool {
    [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "tox.ini",
    ]
    .iter()
    .any(|f| p.is_file(f))
}

/// The project's import package: `src/<name>/` or `<name>/` holding an `__init__.py`, where
/// `<name>` is the project's name (dashes as underscores), else the only such folder.
pub fn package(p: &Project) -> Option<String> {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    let name = pyproject
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "name").then(|| v.trim().trim_matches(['"', '\'']).replace('-', "_"))
        })
        .filter(|n| !n.is_empty());
    for base in ["src", ""] {
        let under = |n: &str| {
            if base.is_empty() {
                n.to_owned()
            } else {
                format!("{base}/{n}")
            }
        };
        if let Some(n) = &name {
            if p.is_file(&format!("{}/__init__.py", under(n))) {
                return Some(under(n));
            }
        }
        let found: Vec<String> = p
            .list(base)
            .into_iter()
            .filter(|(n, kind)| {
                *kind == crate::untrusted_dir::Kind::Dir
                    && p.is_file(&format!("{}/__init__.py", under(n)))
            })
            .map(|(n, _)| n)
            .filter(|n| !n.starts_with('.') && n != "tests" && n != "test" && n != "docs")
            .collect();
        if let [only] = found.as_slice() {
            return Some(under(only));
        }
    }
    None
}

/// The Python interpreter on `PATH`: `python`, else `python3`.
pub fn on_path() -> &'static str {
    if crate::process::on_path("python") {
        "python"
    } else {
        "python3"
    }
}

impl Tool for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        interpreter(call.name()) && call.has("-m")
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        let at = call.args.iter().position(|a| a == "-m");
        match at.map(|at| call.args[at + 1..].to_vec()) {
            Some(words) if !words.is_empty() => Inner::Words(words),
            _ => Inner::Nothing,
        }
    }

    fn missing(&self, line: &str) -> Option<String> {
        // `/usr/bin/python3: No module named pytest`
        let (interp, module) = line.split_once(": No module named ")?;
        interpreter(interp.rsplit('/').next()?).then(|| super::call::unquote(module))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn a_module_run_is_its_module() {
        assert_eq!(
            recognise("python3.11 -m pytest -q", None).tools,
            ["python", "pytest"]
        );
        assert_eq!(
            recognise(".venv/bin/python -m mypy src", None).tools,
            ["python", "mypy"]
        );
        assert!(!Python.is(&Call::of(&["python", "runtests.py"]), None));
        assert_eq!(
            Python
                .missing("/usr/bin/python3: No module named pytest")
                .as_deref(),
            Some("pytest")
        );
        assert_eq!(Python.missing("KeyError: No module named x"), None);
    }
}
