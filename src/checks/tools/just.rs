//! just: a recipe of the justfile is what it runs (`just test` → the `test` recipe's lines, its
//! dependencies' first; `just` alone → the first recipe).

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;

pub struct Just;

impl Tool for Just {
    fn name(&self) -> &'static str {
        "just"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "just"
    }

    fn tasks(&self, project: &Project) -> Option<super::tasks::Tasks> {
        let text = ["justfile", "Justfile", ".justfile"]
            .iter()
            .find_map(|f| project.text(f))?;
        Some(super::tasks::Tasks {
            source: "justfile",
            file: "the justfile",
            targets: recipes(&text)
                .into_iter()
                .map(|(name, deps, lines)| (name, (deps, lines)))
                .collect(),
            check_tests: false,
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(super::step::by_target(call, StepKind::Other))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["justfile"]
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let text = project.and_then(|p| {
            ["justfile", "Justfile", ".justfile"]
                .iter()
                .find_map(|f| p.text(f))
        });
        let Some(text) = text else {
            return Inner::Unknown;
        };
        let recipes = recipes(&text);
        let name = match call.sub() {
            "" => recipes.first().map(|(n, _, _)| n.clone()),
            s => Some(s.to_owned()),
        };
        let mut lines = Vec::new();
        if let Some(name) = name {
            lines_of(&recipes, &name, 0, &mut lines);
        }
        match lines.is_empty() {
            true => Inner::Unknown,
            false => Inner::Script(lines.join("\n")),
        }
    }
}

/// Each recipe: its name, the recipes it depends on, its lines.
fn recipes(text: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            if open {
                let body = line.trim().trim_start_matches(['@', '-']).trim();
                if let (Some(r), false) = (out.last_mut(), body.is_empty() || body.starts_with('#'))
                {
                    r.2.push(body.to_owned());
                }
            }
            continue;
        }
        open = false;
        let l = line.trim();
        if l.is_empty() || l.starts_with(['#', '[']) || l.contains(":=") {
            continue;
        }
        if ["set ", "alias ", "import ", "export ", "mod "]
            .iter()
            .any(|k| l.starts_with(k))
        {
            continue;
        }
        let Some((head, deps)) = l.split_once(':') else {
            continue;
        };
        let Some(name) = head.trim_start_matches('@').split_whitespace().next() else {
            continue;
        };
        let deps = deps.split_whitespace().map(str::to_owned).collect();
        out.push((name.to_owned(), deps, Vec::new()));
        open = true;
    }
    out
}

fn lines_of(
    recipes: &[(String, Vec<String>, Vec<String>)],
    name: &str,
    depth: usize,
    out: &mut Vec<String>,
) {
    let Some((_, deps, lines)) = recipes.iter().find(|(n, _, _)| n == name) else {
        return;
    };
    if depth < 4 {
        for d in deps {
            lines_of(recipes, d, depth + 1, out);
        }
    }
    out.extend(lines.iter().cloned());
}

#[cfg(test)]
mod tests {
    use crate::checks::project::Project;
    use crate::checks::tools::recognise;

    #[test]
    fn a_recipe_is_its_lines_and_its_dependencies() {
        let just = "set shell := [\"bash\", \"-c\"]\ndefault: test\n\nlint:\n    cargo clippy --all-targets\n\ntest: lint\n    @cargo test\n";
        let p = Project::in_memory(std::path::Path::new("/p"), &[("justfile", just)]);
        assert_eq!(
            recognise("just test", Some(&p)).tools,
            ["just", "clippy", "cargo test"]
        );
        assert_eq!(
            recognise("just", Some(&p)).tools,
            ["just", "clippy", "cargo test"]
        );
    }
}
