//! uv: a Python environment manager. `uv run X` and `uvx X` start `X` in the project's
//! environment (`uv.lock` makes the project uv's); its setup is `uv sync` with every group and
//! extra; a program it cannot start is said as `Failed to spawn: `X``. A check runs it with a
//! cache of its own, offline: `uv run` takes a lock in its cache even when the environment is in
//! sync, and the user's cache is read-only to a check (the setup, which made the environment,
//! had it).

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Prepared, Role, Tool};
use crate::checks::project::Project;
use std::path::Path;

pub struct Uv;

/// `uv run`'s and `uvx`'s flags that take a value.
const VALUED: [&str; 16] = [
    "--with",
    "--with-requirements",
    "--with-editable",
    "--python",
    "-p",
    "--group",
    "--only-group",
    "--no-group",
    "--extra",
    "--package",
    "--env-file",
    "--directory",
    "--project",
    "--index",
    "--from",
    "--default-index",
];

impl Tool for Uv {
    fn name(&self) -> &'static str {
        "uv"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "uv" | "uvx")
    }

    fn pythons(&self) -> Option<(std::path::PathBuf, &'static str)> {
        let home = crate::env::non_empty("HOME").map(std::path::PathBuf::from);
        let dir = crate::env::non_empty("UV_PYTHON_INSTALL_DIR")
            .map(std::path::PathBuf::from)
            .or_else(|| home.map(|h| h.join(".local/share/uv/python")))?;
        Some((dir, "cpython-"))
    }

    fn installed_by(&self) -> &'static [&'static str] {
        &["astral-sh/setup-uv"]
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        matches!(call.sub(), "sync" | "venv")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        sets_up(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("UV_CACHE_DIR", "uv"))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["uv.lock"]
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.sub() == "tool" && call.after("tool").is_some_and(|w| w[0] == "install")
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[
            ("UV_TOOL_DIR", "uv-tools", None),
            ("UV_TOOL_BIN_DIR", "uv-tools/bin", Some("")),
        ]
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        let words = if call.name() == "uvx" {
            let tool = Call {
                args: std::iter::once("x".to_owned())
                    .chain(call.args.iter().cloned())
                    .collect(),
                ..call.clone()
            };
            tool.after_valued("x", &VALUED)
        } else {
            match call.sub() {
                "run" => call.after_valued("run", &VALUED),
                "tool" => call.after_valued("run", &VALUED),
                _ => None,
            }
        };
        words.map_or(Inner::Nothing, Inner::Words)
    }

    fn prepare(&self, run: &mut Prepared, scratch: &Path) {
        let cache = run.own_dir(scratch, "uv-cache");
        run.set("UV_CACHE_DIR", cache.display().to_string());
        run.set("UV_OFFLINE", "1");
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        project.is_file("uv.lock").then_some(Lang::Python)
    }

    fn run_in(&self, _: &Project, tool: &str) -> String {
        format!("uv run {tool}")
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project).map(|_| {
            (
                "uv sync --frozen --all-groups --all-extras".to_owned(),
                "a uv.lock".to_owned(),
            )
        })
    }

    fn missing(&self, line: &str) -> Option<String> {
        // `error: Failed to spawn: `ruff``
        line.split("Failed to spawn: ")
            .nth(1)
            .map(super::shell::unquote)
    }
}

/// What a Python project manager's call does in a CI step (uv, Poetry, PDM, Hatch, Pipenv): one
/// that makes or changes the environment sets up; `None` for one that runs something (`uv run`).
pub(super) fn sets_up(call: &Call) -> Option<StepKind> {
    matches!(
        call.sub(),
        "sync" | "pip" | "add" | "tool" | "python" | "venv" | "lock" | "install" | "update" | "env"
    )
    .then_some(StepKind::Setup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn what_it_starts_is_found_behind_its_flags() {
        assert_eq!(
            recognise("uv run --with pytest-xdist --frozen pytest -n 2", None).tools,
            ["uv", "pytest"]
        );
        assert_eq!(
            recognise("uvx --from ruff==0.6 ruff check", None).tools,
            ["uv", "ruff"]
        );
        assert_eq!(recognise("uv sync --all-extras", None).tools, ["uv"]);
        assert_eq!(
            Uv.missing("error: Failed to spawn: `ruff`").as_deref(),
            Some("ruff")
        );
    }
}
