//! make: its targets' recipes are what it runs (`make test` → the `test` target's lines, its
//! prerequisites' first; `make` alone → the first target; `-C dir` and `-f file` followed), with
//! the Makefile's simple variables put in. A program a recipe could not start is said as `make:
//! X: No such file or directory`.

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Role, Tool};
use crate::checks::project::Project;
use std::collections::BTreeMap;

pub struct Make;

/// How many prerequisites deep a target's recipes are followed.
const MAX_PREREQUISITES: usize = 4;

impl Tool for Make {
    fn name(&self) -> &'static str {
        "make"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "make" | "gmake")
    }

    fn tasks(&self, project: &Project) -> Option<super::tasks::Tasks> {
        let text = ["GNUmakefile", "makefile", "Makefile"]
            .iter()
            .find_map(|f| project.text(f))?;
        Some(super::tasks::Tasks {
            source: "Makefile",
            file: "the Makefile",
            targets: Makefile::read(&text).rules,
            check_tests: true,
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(super::step::by_target(call, StepKind::Build))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["Makefile"]
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let Some(project) = project else {
            return Inner::Unknown;
        };
        let (mut dir, mut file, mut targets) = (String::new(), None, Vec::new());
        let mut args = call.args.iter();
        while let Some(a) = args.next() {
            match a.as_str() {
                "-C" | "--directory" => dir = args.next().cloned().unwrap_or_default(),
                "-f" | "--file" | "--makefile" => file = args.next().cloned(),
                "-j" | "-l" | "-o" | "-W" => {
                    args.next();
                }
                a if a.starts_with('-') || a.contains('=') => {}
                a => targets.push(a.to_owned()),
            }
        }
        let path = |f: &str| {
            if dir.is_empty() {
                f.to_owned()
            } else {
                format!("{}/{f}", dir.trim_end_matches('/'))
            }
        };
        let text = match &file {
            Some(f) => project.text(&path(f)),
            None => ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .find_map(|f| project.text(&path(f))),
        };
        let Some(text) = text else {
            return Inner::Unknown;
        };
        let makefile = Makefile::read(&text);
        if targets.is_empty() {
            targets.extend(makefile.first.clone());
        }
        let mut lines = Vec::new();
        for t in &targets {
            makefile.lines_of(t, 0, &mut lines);
        }
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("cd {dir}\n")
        };
        match lines.is_empty() {
            true => Inner::Unknown,
            false => Inner::Script(format!("{prefix}{}", lines.join("\n"))),
        }
    }

    fn missing(&self, line: &str) -> Option<String> {
        // make, running a recipe's program itself: `make: tox: No such file or directory`
        let rest = line
            .strip_prefix("make: ")?
            .strip_suffix(": No such file or directory")?;
        (!rest.contains(' ') && !rest.starts_with('*')).then(|| super::shell::unquote(rest))
    }
}

/// A Makefile as far as ralph reads it: each rule's prerequisites and recipe, and its simple
/// variables.
struct Makefile {
    rules: BTreeMap<String, (Vec<String>, Vec<String>)>,
    vars: BTreeMap<String, String>,
    first: Option<String>,
}

impl Makefile {
    fn read(text: &str) -> Makefile {
        let mut m = Makefile {
            rules: BTreeMap::new(),
            vars: BTreeMap::new(),
            first: None,
        };
        let mut current: Vec<String> = Vec::new();
        for line in text.replace("\\\n", " ").lines() {
            if let Some(body) = line.strip_prefix('\t') {
                let body = body.trim().trim_start_matches(['@', '-', '+']).trim();
                if !body.is_empty() && !body.starts_with('#') {
                    for t in &current {
                        m.rules
                            .entry(t.clone())
                            .or_default()
                            .1
                            .push(body.to_owned());
                    }
                }
                continue;
            }
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let assignment = [":=", "?=", "+=", "::=", "="]
                .iter()
                .filter_map(|op| line.split_once(op).map(|(k, v)| (k, v, op.len())))
                .find(|(k, _, _)| {
                    let k = k.trim();
                    !k.is_empty() && !k.contains([' ', ':', '\t'])
                });
            if let Some((k, v, _)) = assignment {
                m.vars.insert(k.trim().to_owned(), v.trim().to_owned());
                current.clear();
                continue;
            }
            let Some((head, prereq)) = line.split_once(':') else {
                current.clear();
                continue;
            };
            current = head
                .split_whitespace()
                .filter(|t| !t.contains(['%', '$']))
                .map(str::to_owned)
                .collect();
            let prereq: Vec<String> = prereq
                .split(';')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            for t in &current {
                m.rules
                    .entry(t.clone())
                    .or_default()
                    .0
                    .extend(prereq.clone());
                if m.first.is_none() && !t.starts_with('.') {
                    m.first = Some(t.clone());
                }
            }
        }
        m
    }

    /// The recipe lines `target` runs, its prerequisites' first, variables put in.
    fn lines_of(&self, target: &str, depth: usize, out: &mut Vec<String>) {
        let Some((prereq, recipe)) = self.rules.get(target) else {
            return;
        };
        if depth < MAX_PREREQUISITES {
            for p in prereq {
                self.lines_of(p, depth + 1, out);
            }
        }
        out.extend(recipe.iter().map(|l| self.expand(l)));
    }

    /// `$(VAR)` and `${VAR}` of the Makefile's own variables put in (one level).
    fn expand(&self, line: &str) -> String {
        let mut out = line.to_owned();
        for (k, v) in &self.vars {
            out = out
                .replace(&format!("$({k})"), v)
                .replace(&format!("${{{k}}}"), v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn a_target_is_its_recipe_and_its_prerequisites() {
        let make = "PYTHON ?= python3\n.PHONY: test\nall: lint test\nlint:\n\t@$(PYTHON) -m ruff check .\ntest: build\n\t$(PYTHON) -m pytest -q\nbuild:\n\t-cargo build\n";
        let p = Project::in_memory(std::path::Path::new("/p"), &[("Makefile", make)]);
        assert_eq!(
            recognise("make test", Some(&p)).tools,
            ["make", "clippy", "python", "pytest"]
        );
        assert_eq!(
            recognise("make", Some(&p)).tools,
            ["make", "python", "ruff", "clippy", "pytest"]
        );
        assert!(recognise("make docs", Some(&p)).opaque);
        assert_eq!(
            Make.missing("make: tox: No such file or directory")
                .as_deref(),
            Some("tox")
        );
        assert_eq!(
            Make.missing("make: *** No rule to make target 'x.c'.  Stop."),
            None
        );
    }
}
