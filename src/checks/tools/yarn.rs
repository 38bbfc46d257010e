//! Yarn: a package script is what `yarn test`, `yarn run X` and `yarn X` run (a program of the
//! package's when no script has the name), the words after its name passed on to it; `yarn workspaces run X` (v1) and `yarn workspaces
//! foreach … run X` (v2+) run it in each package. `yarn` alone installs. Its environment is the
//! lockfile's (`--immutable` under Yarn 2+, `--frozen-lockfile` under Yarn 1).

use super::ecosystem::Registry;
use super::npm::{each, script_with_hooks};
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Yarn;

/// Yarn's own commands, which are not package scripts.
const OWN: [&str; 8] = [
    "install",
    "add",
    "remove",
    "upgrade",
    "up",
    "dlx",
    "exec",
    "workspace",
];

impl Tool for Yarn {
    fn name(&self) -> &'static str {
        "yarn"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "yarn"
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        call.sub() == "install" && !super::npm::global(call)
    }

    super::npm::node_manager!();

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("YARN_CACHE_FOLDER", "yarn"))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["yarn.lock"]
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        super::npm::global(call)
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let words: Vec<String> = call
            .args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .cloned()
            .collect();
        let Some(first) = words.first() else {
            return Inner::Nothing;
        };
        let Some(project) = project else {
            return Inner::Unknown;
        };
        match first.as_str() {
            "workspaces" => {
                let name = words.iter().skip_while(|w| *w != "run").nth(1);
                name.map_or(Inner::Unknown, |n| each(project, n, ""))
            }
            "dlx" | "exec" => Inner::Words(words[1..].to_vec()),
            s if OWN.contains(&s) => Inner::Nothing,
            "run" => match words.get(1) {
                Some(n) => script_with_hooks(project, "", n, &passed_on(call, n))
                    .map_or(Inner::Unknown, Inner::Script),
                None => Inner::Nothing,
            },
            s => match script_with_hooks(project, "", s, &passed_on(call, s)) {
                Some(script) => Inner::Script(script),
                None => Inner::Words(words.to_vec()),
            },
        }
    }

    fn run_script(&self, name: &str) -> Option<String> {
        Some(match name {
            "test" => "yarn test".to_owned(),
            other => format!("yarn run {other}"),
        })
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        project.is_file("yarn.lock").then_some(Lang::Js)
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project)?;
        let command = if project.is_file(".yarnrc.yml") {
            "yarn install --immutable"
        } else {
            "yarn install --frozen-lockfile"
        };
        Some((command.to_owned(), "a yarn.lock".to_owned()))
    }

    fn missing(&self, line: &str) -> Option<String> {
        command_not_found(line)
    }
}

/// The words after the script `name` in a `yarn` call: yarn passes them on to the script (a
/// `--` first is yarn 1's and dropped).
fn passed_on(call: &Call, name: &str) -> String {
    let after = call
        .args
        .iter()
        .position(|a| a == name)
        .map_or(&[][..], |at| &call.args[at + 1..]);
    let after = match after.first() {
        Some(first) if first == "--" => &after[1..],
        _ => after,
    };
    after.join(" ")
}

/// Yarn's and pnpm's `Command "ruff" not found`.
pub(super) fn command_not_found(line: &str) -> Option<String> {
    line.split("Command \"").nth(1).and_then(|r| {
        r.strip_suffix("\" not found.")
            .or_else(|| r.strip_suffix("\" not found"))
            .map(super::shell::unquote)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn scripts_programs_and_workspaces_are_followed() {
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[
                (
                    "package.json",
                    r#"{"workspaces": ["pkg/*"], "scripts": {"lint": "eslint ."}}"#,
                ),
                ("pkg/x/package.json", r#"{"scripts": {"test": "jest"}}"#),
            ],
        );
        assert_eq!(recognise("yarn lint", Some(&p)).tools, ["yarn", "eslint"]);
        assert_eq!(
            recognise("yarn tsc --noEmit", Some(&p)).tools,
            ["yarn", "tsc"]
        );
        assert_eq!(
            recognise("yarn workspaces run test", Some(&p)).tools,
            ["yarn", "jest"]
        );
        assert_eq!(
            command_not_found("error Command \"tsc\" not found.").as_deref(),
            Some("tsc")
        );
    }
}
