//! Hatch: a Python environment manager with environments of their own. `hatch run [env:]X`
//! starts the script `X` of that environment (`[tool.hatch.envs.<env>.scripts]`, or hatch.toml's
//! `[envs.<env>.scripts]`) or the program `X` in it; `hatch test` is pytest, `hatch fmt` ruff.
//! A tool is run in the environment that has it (`hatch run lint:ruff` where only the `lint`
//! environment depends on ruff); its setup creates the default environment and those of the
//! tools it runs.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Hatch;

impl Tool for Hatch {
    fn name(&self) -> &'static str {
        "hatch"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "hatch"
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        call.sub() == "env" && call.after("env").is_some_and(|w| w[0] == "create")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::uv::sets_up(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    fn environments(&self) -> &'static [&'static str] {
        &[".local/share/hatch"]
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        match call.sub() {
            "test" => Inner::Words(vec!["pytest".into()]),
            "fmt" => Inner::Words(vec!["ruff".into(), "check".into()]),
            "run" => {
                let Some(words) = call.after("run") else {
                    return Inner::Nothing;
                };
                let (env, name) = match words[0].split_once(':') {
                    Some((env, name)) => (env.to_owned(), name.to_owned()),
                    None => ("default".to_owned(), words[0].clone()),
                };
                let args = words[1..].join(" ");
                match project.and_then(|p| script(p, &env, &name)) {
                    Some(lines) => Inner::Script(
                        lines
                            .iter()
                            .map(|l| fill_args(l, &args))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                    None => Inner::Words(
                        std::iter::once(name)
                            .chain(words[1..].iter().cloned())
                            .collect(),
                    ),
                }
            }
            _ => Inner::Nothing,
        }
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        (project.is_file("hatch.toml")
            || super::ecosystem::declares(project, "tool.hatch.envs").is_some())
        .then_some(Lang::Python)
    }

    fn run_in(&self, project: &Project, tool: &str) -> String {
        let program = tool.split_whitespace().next().unwrap_or(tool);
        match env_with(project, program) {
            Some(env) if env != "default" => format!("hatch run {env}:{tool}"),
            _ => format!("hatch run {tool}"),
        }
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project)?;
        let here = super::python::local_python();
        let mut command = "hatch env create".to_owned();
        for (env, table) in envs(project).into_iter().filter(|(e, _)| e != "default") {
            match matrix_pythons(&table) {
                // A matrix of Pythons: only the variant of the Python here — `hatch env create
                // all` would download every other one from the internet.
                Some(pythons) => {
                    let Some((major, minor)) = here else { continue };
                    let version = format!("{major}.{minor}");
                    if pythons.contains(&version) {
                        command.push_str(&format!(" && hatch env create {env}.py{version}"));
                    }
                }
                None => command.push_str(&format!(" && hatch env create {env}")),
            }
        }
        Some((command, "a Hatch environment".to_owned()))
    }
}

/// The Pythons an environment's matrix names (`[[tool.hatch.envs.all.matrix]] python = [...]`),
/// when it has a matrix.
fn matrix_pythons(table: &toml::Table) -> Option<Vec<String>> {
    let matrix = table.get("matrix")?.as_array()?;
    Some(
        matrix
            .iter()
            .filter_map(|m| m.get("python")?.as_array())
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

/// Each environment Hatch configures (`default` included when declared), with its table.
fn envs(project: &Project) -> Vec<(String, toml::Table)> {
    let from = |table: Option<&toml::Value>| -> Vec<(String, toml::Table)> {
        table
            .and_then(|t| t.as_table())
            .map(|t| {
                t.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_table()?.clone())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = from(
        project
            .toml("pyproject.toml")
            .as_ref()
            .and_then(|t| t.get("tool")?.get("hatch")?.get("envs").cloned())
            .as_ref(),
    );
    out.extend(from(
        project
            .toml("hatch.toml")
            .as_ref()
            .and_then(|t| t.get("envs").cloned())
            .as_ref(),
    ));
    out
}

/// The lines of the script `name` of the environment `env`.
fn script(project: &Project, env: &str, name: &str) -> Option<Vec<String>> {
    let (_, table) = envs(project).into_iter().find(|(e, _)| e == env)?;
    match table.get("scripts")?.get(name)? {
        toml::Value::String(s) => Some(vec![s.clone()]),
        toml::Value::Array(a) => Some(
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// `{args}` and `{args:default}` in a Hatch script line, filled with `args` (or the default).
fn fill_args(line: &str, args: &str) -> String {
    let Some(start) = line.find("{args") else {
        return line.to_owned();
    };
    let Some(len) = line[start..].find('}') else {
        return line.to_owned();
    };
    let inside = &line[start + 1..start + len];
    let default = inside.strip_prefix("args:").unwrap_or("");
    let value = if args.is_empty() { default } else { args };
    format!(
        "{}{value}{}",
        &line[..start],
        fill_args(&line[start + len + 1..], args)
    )
}

/// The environment whose dependencies name `program` (`default` first).
fn env_with(project: &Project, program: &str) -> Option<String> {
    let mut all = envs(project);
    all.sort_by_key(|(e, _)| e != "default");
    all.into_iter().find_map(|(env, table)| {
        let deps = ["dependencies", "extra-dependencies"]
            .iter()
            .filter_map(|k| table.get(*k)?.as_array())
            .flatten()
            .filter_map(|d| d.as_str());
        let names = deps
            .map(|d| {
                d.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
                    .next()
                    .unwrap_or("")
                    .to_lowercase()
            })
            .collect::<Vec<_>>();
        names.iter().any(|n| n == program).then_some(env)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    const PYPROJECT: &str = r#"
[tool.hatch.envs.default]
dependencies = ["pytest", "coverage[toml]>=6.5"]
[tool.hatch.envs.default.scripts]
test = "pytest {args:tests}"
[tool.hatch.envs.lint]
detached = true
dependencies = ["black>=23.1.0", "mypy>=1.0.0", "ruff>=0.0.243"]
[tool.hatch.envs.lint.scripts]
typing = "mypy --install-types --non-interactive {args:src/pkg tests}"
style = ["ruff {args:.}", "black --check --diff {args:.}"]
"#;

    #[test]
    fn scripts_and_environments_are_followed() {
        let p = Project::in_memory(std::path::Path::new("/p"), &[("pyproject.toml", PYPROJECT)]);
        assert_eq!(
            recognise("hatch run test", Some(&p)).tools,
            ["hatch", "pytest"]
        );
        assert_eq!(
            recognise("hatch run lint:style", Some(&p)).tools,
            ["hatch", "ruff", "black"]
        );
        assert_eq!(recognise("hatch test", Some(&p)).tools, ["hatch", "pytest"]);
        // A tool only the `lint` environment has is run there.
        assert_eq!(
            Hatch.run_in(&p, "black --check ."),
            "hatch run lint:black --check ."
        );
        assert_eq!(Hatch.run_in(&p, "pytest"), "hatch run pytest");
        assert_eq!(
            Hatch.setup(&p).unwrap().0,
            "hatch env create && hatch env create lint"
        );
        // A matrix of Pythons: only the one here is built (none, when it is not among them).
        let matrix = Project::in_memory(
            std::path::Path::new("/p"),
            &[(
                "pyproject.toml",
                "[tool.hatch.envs.default]\n[[tool.hatch.envs.all.matrix]]\npython = [\"2.7\", \"3.0\"]\n",
            )],
        );
        assert_eq!(Hatch.setup(&matrix).unwrap().0, "hatch env create");
        if let Some((major, minor)) = super::super::local_python() {
            let here = Project::in_memory(
                std::path::Path::new("/p"),
                &[(
                    "pyproject.toml",
                    &format!("[tool.hatch.envs.default]\n[[tool.hatch.envs.all.matrix]]\npython = [\"2.7\", \"{major}.{minor}\"]\n"),
                )],
            );
            assert_eq!(
                Hatch.setup(&here).unwrap().0,
                format!("hatch env create && hatch env create all.py{major}.{minor}")
            );
        }
        assert_eq!(fill_args("pytest {args:tests}", ""), "pytest tests");
        assert_eq!(fill_args("pytest {args:tests}", "-x"), "pytest -x");
    }
}
