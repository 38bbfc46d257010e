//! The Python interpreter as a wrapper: `python -m X …` (`python3.11`, `.venv/bin/python` as
//! well) starts the module `X` — `python -m pytest` is pytest. A missing module is said in the
//! interpreter's words (`No module named pytest`). Here too what every Python tool's detection
//! asks of a project: whether it is one, its import package, the interpreter on `PATH` and its
//! version (and how a program's version is asked, once).

use super::found::CheckKind;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Python;

/// Whether a program's file name is a Python interpreter's (`python`, `python3`, `python3.11`).
pub fn interpreter(name: &str) -> bool {
    name == "py"
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The Python `X.Y` this machine runs as `python3`: from where its link leads
/// (`…/bin/python3.11`), else asked once (a pyenv shim names no version).
pub fn local_python() -> Option<(u32, u32)> {
    static ASKED: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| {
        let path = crate::process::find_on_path("python3")?;
        let real = path.canonicalize().ok()?;
        let named = real
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("python"))
            .and_then(parse);
        named.or_else(|| parse(ask_version(&path)?.trim()))
    })
}

/// What `python -c …` prints of its version.
fn ask_version(python: &std::path::Path) -> Option<String> {
    ask(
        &python.display().to_string(),
        &["-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
    )
}

/// What `program args…` prints when it succeeds, through the one process wrapper. Detection is
/// synchronous and may run inside the runtime: the wrapper runs on a thread and a runtime of its
/// own.
pub fn ask(program: &str, args: &[&str]) -> Option<String> {
    let cmd = crate::process::Cmd::new(program)
        .args(args)
        .label(format!("{program}'s version"))
        .timeout(std::time::Duration::from_secs(30));
    std::thread::scope(|s| {
        s.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            let out = runtime.block_on(crate::process::run(&cmd)).ok()?;
            out.success().then_some(out.stdout)
        })
        .join()
        .ok()
        .flatten()
    })
}

/// `3.11` (or `3.11.7`, `3.11m`) as (3, 11).
fn parse(version: &str) -> Option<(u32, u32)> {
    let (major, minor) = version.split_once('.')?;
    let minor: String = minor.chars().take_while(char::is_ascii_digit).collect();
    Some((major.parse().ok()?, minor.parse().ok()?))
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
        interpreter(interp.rsplit('/').next()?).then(|| super::shell::unquote(module))
    }
}

/// A Python script run by the interpreter (`python setup.py test`, `python runtests.py`), known
/// by what a CI step of it does: `setup.py test` tests, `setup.py install`/`develop` sets up, a
/// script named for tests tests.
pub struct Script;

impl Tool for Script {
    fn name(&self) -> &'static str {
        "python script"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        interpreter(call.name()) && call.sub().ends_with(".py")
    }

    fn native(&self, env: &super::tool::Env) -> Option<super::native::NativeSpec> {
        let setup_py = env.project.text("setup.py")?;
        // Cython sources beside a setup.py are built by it, however it names them.
        let builds = setup_py.contains("ext_modules")
            || setup_py.contains("Extension(")
            || setup_py.contains("cythonize")
            || !super::cython::sources(env.project).is_empty();
        builds.then(|| super::native::NativeSpec {
            command: env.python("setup.py build_ext --inplace"),
            reason: "setup.py builds extension modules".into(),
            rebuild: None,
            rust: false,
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        let script = call.sub();
        let name = script
            .rsplit('/')
            .next()
            .unwrap_or(script)
            .trim_end_matches(".py");
        let then = call.after(script).map(|w| w[0].clone()).unwrap_or_default();
        Some(match (name, then.as_str()) {
            ("setup", "test") => StepKind::Check(CheckKind::Test),
            ("setup", "install" | "develop") => StepKind::Setup,
            (s, _) if s.contains("test") => StepKind::Check(CheckKind::Test),
            _ => StepKind::Other,
        })
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
