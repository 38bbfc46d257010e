//! pip and pipx, known by what they install: `pip install …` sets up a CI job (whatever it
//! names: `pip install pytest` is no test run), downloads from PyPI into its cache, and — a pip
//! install into the active Python — is given a job's own environment ([`install_args`], made by
//! [`JOB_ENVIRONMENT`]); `pipx install` puts a tool into folders of its own, `pipx run X` starts
//! `X`.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Pip;

impl Tool for Pip {
    fn name(&self) -> &'static str {
        "pip"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        is_pip(call.name())
    }

    fn native(&self, env: &super::tool::Env) -> Option<super::native::NativeSpec> {
        // An extension a PEP 517 backend builds: installed editable into the environment.
        let pyproject = env.project.text("pyproject.toml")?;
        let backend = ["scikit_build_core", "mesonpy", "ext-modules"]
            .iter()
            .any(|b| pyproject.contains(b));
        backend.then(|| super::native::NativeSpec {
            command: env.python("-m pip install --no-build-isolation -e ."),
            reason:
                "an extension built by scikit-build-core, meson-python or setuptools' ext-modules"
                    .into(),
            rebuild: Some(super::native::wheel_into_site(
                &env.python(&format!(
                    "-m pip wheel --no-build-isolation --no-deps -w \"${}/wheel\" .",
                    super::native::NATIVE_SITE_VAR
                )),
                &env.python(""),
            )),
            rust: false,
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::step::installs_by(call, super::step::INSTALLS)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("PIP_CACHE_DIR", "pip"))
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.sub() == "install" && by_name(call.after("install").unwrap_or_default().iter())
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[("PYTHONUSERBASE", "python-user", Some("bin"))]
    }
}

pub struct Pipx;

impl Tool for Pipx {
    fn name(&self) -> &'static str {
        "pipx"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "pipx"
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        Inner::after(call, "run")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        (call.sub() != "run").then(|| super::step::installs_by(call, super::step::INSTALLS))?
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.sub() == "install"
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[
            ("PIPX_HOME", "pipx", None),
            ("PIPX_BIN_DIR", "pipx/bin", Some("")),
        ]
    }
}

/// Whether a program's file name is pip's (`pip`, `pip3`, `pip3.11`).
fn is_pip(name: &str) -> bool {
    name.strip_prefix("pip")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Whether install arguments name only packages: no path of the project (`.`, `./sub`,
/// `.[test]`), nothing editable.
fn by_name<'a>(mut args: impl Iterator<Item = &'a String>) -> bool {
    args.all(|a| {
        !matches!(a.as_str(), "." | "./" | "-e" | "--editable")
            && !a.starts_with(".[")
            && !a.starts_with("./")
    })
}

/// The arguments after `install` of a pip install into the active Python (`pip install …`,
/// `python -m pip install …`, `uv pip install --system …`); `None` for anything else, and for
/// one that installs elsewhere (`--user`, `--target`, `--prefix`, a venv's own `pip` by its path).
pub fn install_args(words: &[String]) -> Option<&[String]> {
    let bare = |w: &str| !w.contains('/');
    let program = words.first()?;
    let rest: &[String] = if bare(program) && is_pip(program) {
        &words[1..]
    } else if bare(program)
        && super::python::interpreter(program)
        && words.get(1).is_some_and(|w| w == "-m")
        && words.get(2).is_some_and(|w| w == "pip")
    {
        &words[3..]
    } else if bare(program)
        && program == "uv"
        && words.get(1).is_some_and(|w| w == "pip")
        && words.iter().any(|w| w == "--system")
    {
        &words[2..]
    } else {
        return None;
    };
    let at = rest.iter().position(|w| w == "install")?;
    let args = &rest[at + 1..];
    let elsewhere = ["--user", "--target", "-t", "--prefix", "--root"];
    (!args.iter().any(|a| {
        elsewhere.contains(&a.as_str()) || elsewhere.iter().any(|e| a.starts_with(&format!("{e}=")))
    }))
    .then_some(args)
}

/// The Python script that makes the job's environment at `argv[1]`: no pip of its own (the
/// user's is found through the site folders, and installs into this environment), the user's
/// Python's packages seen after its own — as a virtual environment's system site packages where
/// that Python is no virtual environment itself, else its site folders added by a `.pth` that
/// an isolated build (pip's, which sets `PYTHONNOUSERSITE`) does not read —, `pip` commands
/// that run this environment's.
pub const JOB_ENVIRONMENT: &str = r#"import os, sys, venv
d = sys.argv[1]
plain = sys.prefix == sys.base_prefix
venv.EnvBuilder(with_pip=False, symlinks=True, system_site_packages=plain).create(d)
site = os.path.join(d, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
parents = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
if not plain:
    with open(os.path.join(site, "ralph-parent.pth"), "w") as f:
        for p in parents:
            f.write("import os, site; os.environ.get('PYTHONNOUSERSITE') or site.addsitedir(%r)\n" % p)
for name in ("pip", "pip3", "pip%d.%d" % sys.version_info[:2]):
    path = os.path.join(d, "bin", name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\nexec "$(dirname "$0")/python" -m pip "$@"\n')
    os.chmod(path, 0o755)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn an_install_into_the_active_python_is_told_from_one_elsewhere() {
        let w = words("python3 -m pip install -e .[test]");
        assert_eq!(install_args(&w), Some(&w[4..]));
        assert!(install_args(&words("pip3.11 install tox")).is_some());
        assert!(install_args(&words("uv pip install --system .")).is_some());
        assert!(install_args(&words("uv pip install .")).is_none());
        assert!(install_args(&words("pip install --user tox")).is_none());
        assert!(install_args(&words(".venv/bin/pip install tox")).is_none());
        assert!(install_args(&words("pipx install tox")).is_none());
    }

    #[test]
    fn an_install_by_name_builds_nothing_of_the_project() {
        let call = |s: &str| Call::of(&s.split_whitespace().collect::<Vec<_>>());
        assert!(Pip.installs_by_name(&call("pip install tox -r requirements.txt")));
        assert!(!Pip.installs_by_name(&call("pip install -e .")));
        assert!(!Pip.installs_by_name(&call("pip install .[test]")));
        assert!(!Pip.installs_by_name(&call("pip freeze")));
        assert!(Pipx.installs_by_name(&call("pipx install nox")));
        assert!(!Pipx.installs_by_name(&call("pipx run nox")));
    }
}
