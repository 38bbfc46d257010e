//! Poetry: a Python environment manager. `poetry run X` starts `X` in the project's environment
//! (`poetry.lock` or `[tool.poetry]` make the project Poetry's); its setup installs every
//! dependency group it declares and the extras; a program it cannot start is said as `Command
//! not found: X`.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Poetry;

impl Tool for Poetry {
    fn name(&self) -> &'static str {
        "poetry"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "poetry"
    }

    fn installed_by(&self) -> &'static [&'static str] {
        &["snok/install-poetry", "abatilo/actions-poetry"]
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        call.sub() == "install"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::uv::sets_up(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["poetry.lock", "poetry.toml"]
    }

    fn environments(&self) -> &'static [&'static str] {
        &[".cache/pypoetry/virtualenvs"]
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        match call.sub() {
            "run" => call.after("run").map_or(Inner::Nothing, Inner::Words),
            _ => Inner::Nothing,
        }
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        (project.is_file("poetry.lock")
            || super::ecosystem::declares(project, "tool.poetry").is_some())
        .then_some(Lang::Python)
    }

    fn run_in(&self, _: &Project, tool: &str) -> String {
        format!("poetry run {tool}")
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project)?;
        Some((
            install(project),
            "a Poetry project (its poetry.toml decides where the environment lives)".to_owned(),
        ))
    }

    fn missing(&self, line: &str) -> Option<String> {
        line.strip_prefix("Command not found: ")
            .map(super::shell::unquote)
    }
}

/// `poetry install` with every dependency group the project declares and its extras.
fn install(p: &Project) -> String {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    let groups: Vec<String> = pyproject
        .lines()
        .filter_map(|l| {
            let name = l
                .trim()
                .strip_prefix("[tool.poetry.group.")?
                .strip_suffix(".dependencies]")?;
            Some(name.to_owned())
        })
        .collect();
    let mut command = String::from("poetry install --no-interaction --all-extras");
    if !groups.is_empty() {
        command.push_str(&format!(" --with {}", groups.join(",")));
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_setup_installs_every_group() {
        let p = Project::in_memory(
            std::path::Path::new("/p"),
            &[(
                "pyproject.toml",
                "[tool.poetry]\nname = \"x\"\n[tool.poetry.group.dev.dependencies]\n[tool.poetry.group.docs.dependencies]\n",
            )],
        );
        assert_eq!(Poetry.manages(&p), Some(Lang::Python));
        assert_eq!(
            Poetry.setup(&p).unwrap().0,
            "poetry install --no-interaction --all-extras --with dev,docs"
        );
        assert_eq!(
            Poetry.missing("Command not found: black").as_deref(),
            Some("black")
        );
    }
}
