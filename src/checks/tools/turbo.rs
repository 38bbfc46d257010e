//! Turborepo (`turbo run X`, `turbo X`): runs the script `X` of each workspace package, read
//! package by package from the `<package>:<script>: ` prefix it puts on each line.

use super::npm::{each, package_folders};
use super::shell::Call;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Turbo;

impl Tool for Turbo {
    fn name(&self) -> &'static str {
        "turbo"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "turbo"
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let tasks: Vec<&String> = call
            .args
            .iter()
            .filter(|a| !a.starts_with('-') && a.as_str() != "run")
            .collect();
        let Some(project) = project else {
            return Inner::Unknown;
        };
        let mut scripts = Vec::new();
        for task in tasks {
            if let Inner::Each(found) = each(project, task, "") {
                scripts.extend(found);
            }
        }
        match scripts.is_empty() {
            true => Inner::Unknown,
            false => Inner::Each(scripts),
        }
    }

    fn sections(&self, text: &str, project: Option<&Project>) -> Option<Vec<(String, String)>> {
        let folders = package_folders(project?);
        let mut out: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            // `@scope/a:test: ✓ a.test.js (2 tests)`
            let found = folders.iter().find_map(|(name, folder)| {
                let rest = line.strip_prefix(name.as_str())?.strip_prefix(':')?;
                let (_, text) = rest.split_once(": ").or_else(|| rest.split_once(':'))?;
                Some((folder.clone(), text))
            });
            if let Some((folder, text)) = found {
                match out.iter_mut().find(|(f, _)| *f == folder) {
                    Some((_, t)) => {
                        t.push_str(text);
                        t.push('\n');
                    }
                    None => out.push((folder, format!("{text}\n"))),
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_prefixes_say_each_package() {
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[
                ("package.json", r#"{"workspaces": ["apps/*"]}"#),
                (
                    "apps/web/package.json",
                    r#"{"name": "web", "scripts": {"test": "vitest run"}}"#,
                ),
            ],
        );
        assert_eq!(
            crate::checks::tools::recognise("turbo run test", Some(&p)).tools,
            ["turbo", "vitest"]
        );
        let out = "web:test: cache miss, executing 1a2b\nweb:test:  ✓ src/a.test.ts (1 test) 2ms\nother line\n";
        let s = Turbo.sections(out, Some(&p)).unwrap();
        assert_eq!(
            s,
            [(
                "apps/web".to_owned(),
                "cache miss, executing 1a2b\n ✓ src/a.test.ts (1 test) 2ms\n".to_owned()
            )]
        );
    }
}
