//! PDM: a Python environment manager. `pdm run X` starts `X` in the project's environment, or
//! the script `X` of `[tool.pdm.scripts]` (`pdm.lock` or `[tool.pdm]` make the project PDM's);
//! its setup installs every group. Its logs go to a folder of the run's own (`PDM_LOG_DIR`): the
//! user's state folder is read-only under the sandbox.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Role, Tool};
use crate::checks::project::Project;
use std::path::Path;

pub struct Pdm;

impl Tool for Pdm {
    fn name(&self) -> &'static str {
        "pdm"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "pdm"
    }

    fn installed_by(&self) -> &'static [&'static str] {
        &["pdm-project/setup-pdm"]
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        matches!(call.sub(), "install" | "sync")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::uv::sets_up(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("PDM_CACHE_DIR", "pdm"))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["pdm.lock"]
    }

    fn environments(&self) -> &'static [&'static str] {
        &[".local/share/pdm/venvs"]
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let words = match call.sub() {
            "run" => call.after("run"),
            // `pdm test`: a script of its own name.
            other if project.is_some_and(|p| script(p, other).is_some()) => Some(
                call.args
                    .iter()
                    .skip_while(|a| a.starts_with('-'))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let Some(words) = words else {
            return Inner::Nothing;
        };
        match project.and_then(|p| script(p, &words[0])) {
            Some(s) => Inner::Script(format!("{s} {}", words[1..].join(" ")).trim().to_owned()),
            None => Inner::Words(words),
        }
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        (project.is_file("pdm.lock") || super::ecosystem::declares(project, "tool.pdm").is_some())
            .then_some(Lang::Python)
    }

    fn run_in(&self, _: &Project, tool: &str) -> String {
        format!("pdm run {tool}")
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project)?;
        Some((
            "pdm install --no-self --group :all".to_owned(),
            "a PDM project".to_owned(),
        ))
    }

    fn state(&self, dir: &Path) -> Vec<(String, String)> {
        vec![
            // PDM logs every install and resolution under the user's state folder otherwise.
            ("PDM_LOG_DIR".into(), dir.join("log").display().to_string()),
            ("PDM_CHECK_UPDATE".into(), "false".into()),
        ]
    }

    fn missing(&self, line: &str) -> Option<String> {
        // `[PdmUsageError]: Command 'ruff' is not found in your PATH.`
        let rest = line.split("Command '").nth(1)?;
        rest.strip_suffix("' is not found in your PATH.")
            .map(super::shell::unquote)
    }
}

/// The command of the PDM script `name` (`test = "pytest"`, `test = {cmd = "…"}`, `{shell =
/// "…"}`, `{composite = [...]}` as its parts joined).
fn script(project: &Project, name: &str) -> Option<String> {
    let pyproject = project.toml("pyproject.toml")?;
    let entry = pyproject
        .get("tool")?
        .get("pdm")?
        .get("scripts")?
        .get(name)?;
    let text = |v: &toml::Value| -> Option<String> {
        match v {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Array(a) => Some(
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }
    };
    match entry {
        toml::Value::Table(t) => {
            if let Some(parts) = t.get("composite").and_then(|c| c.as_array()) {
                let parts: Vec<String> = parts
                    .iter()
                    .filter_map(|p| p.as_str())
                    .map(|p| format!("pdm run {p}"))
                    .collect();
                return Some(parts.join("\n"));
            }
            t.get("cmd").or_else(|| t.get("shell")).and_then(text)
        }
        other => text(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn its_scripts_are_followed() {
        let p = Project::in_memory(
            std::path::Path::new("/p"),
            &[(
                "pyproject.toml",
                "[tool.pdm.scripts]\ntest = \"pytest -q\"\nlint = {cmd = \"ruff check .\"}\nall = {composite = [\"lint\", \"test\"]}\n",
            )],
        );
        assert_eq!(recognise("pdm run test", Some(&p)).tools, ["pdm", "pytest"]);
        assert_eq!(recognise("pdm lint", Some(&p)).tools, ["pdm", "ruff"]);
        assert_eq!(
            recognise("pdm run all", Some(&p)).tools,
            ["pdm", "ruff", "pytest"]
        );
        assert_eq!(
            recognise("pdm run mypy src", Some(&p)).tools,
            ["pdm", "mypy"]
        );
        assert_eq!(Pdm.manages(&p), Some(Lang::Python));
        assert_eq!(
            Pdm.missing("[PdmUsageError]: Command 'ruff' is not found in your PATH.")
                .as_deref(),
            Some("ruff")
        );
    }
}
