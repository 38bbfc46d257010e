//! Nx (`nx run-many -t X`, `nx affected -t X`, `nx run p:X`, `nx X p`): runs the target `X`
//! (a package script) of the workspace's projects, read project by project from the `> nx run
//! <project>:<target>` header it prints before each.

use super::npm::{each, package_folders};
use super::shell::Call;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Nx;

impl Tool for Nx {
    fn name(&self) -> &'static str {
        "nx"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "nx"
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let target = call.args.iter().enumerate().find_map(|(i, a)| {
            if let Some(t) = a
                .strip_prefix("--target=")
                .or_else(|| a.strip_prefix("-t="))
            {
                return Some(t.to_owned());
            }
            if a == "-t" || a == "--target" || a == "--targets" {
                return call.args.get(i + 1).cloned();
            }
            None
        });
        let target = target.or_else(|| match call.sub() {
            "run" => call
                .after("run")
                .and_then(|w| w[0].split_once(':').map(|(_, t)| t.to_owned())),
            "run-many" | "affected" | "" => None,
            other => Some(other.to_owned()),
        });
        match (target, project) {
            (Some(t), Some(p)) => each(p, t.split(',').next().unwrap_or(&t), ""),
            _ => Inner::Unknown,
        }
    }

    fn sections(&self, text: &str, project: Option<&Project>) -> Option<Vec<(String, String)>> {
        let folders = package_folders(project?);
        let mut out: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let header = line.trim_start().strip_prefix("> nx run ").and_then(|h| {
                let name = h.split(':').next()?.trim();
                Some(
                    folders
                        .iter()
                        .find(|(n, _)| n == name)
                        .map_or_else(|| name.to_owned(), |(_, f)| f.clone()),
                )
            });
            match (header, out.last_mut()) {
                (Some(folder), _) => out.push((folder, String::new())),
                (None, Some((_, t))) => {
                    t.push_str(line);
                    t.push('\n');
                }
                (None, None) => {}
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_targets_and_headers_are_read() {
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[
                ("package.json", r#"{"workspaces": ["libs/*"]}"#),
                (
                    "libs/core/package.json",
                    r#"{"name": "core", "scripts": {"test": "jest"}}"#,
                ),
            ],
        );
        for cmd in [
            "nx run-many -t test",
            "nx affected --target=test",
            "nx run core:test",
            "nx test core",
        ] {
            assert_eq!(
                crate::checks::tools::recognise(cmd, Some(&p)).tools,
                ["nx", "jest"],
                "{cmd}"
            );
        }
        let out = "\n> nx run core:test\n\nPASS src/a.test.ts\n";
        assert_eq!(
            Nx.sections(out, Some(&p)).unwrap(),
            [("libs/core".to_owned(), "\nPASS src/a.test.ts\n".to_owned())]
        );
    }
}
