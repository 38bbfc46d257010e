//! pnpm: a package script is what `pnpm test`, `pnpm run X` and `pnpm X` run (the words after
//! `--` passed on to it: `pnpm test --json` is refused as pnpm's own option); `pnpm exec X` and
//! `pnpm dlx X` start `X`; `-r`/`--recursive` and `--filter` run the script in each package —
//! every one, after a failure too (`--no-bail` where the command is pnpm's own), and read package
//! by package from the `<folder> <script>: ` prefix it puts on each line. Its environment is the
//! lockfile's (`pnpm install --frozen-lockfile`).

use super::ecosystem::Registry;
use super::npm::{after_separator, each, script, script_with_hooks};
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Prepared, Role, Tool};
use crate::checks::project::Project;
use std::path::Path;

pub struct Pnpm;

/// pnpm's own commands, which are not package scripts.
const OWN: [&str; 12] = [
    "install",
    "i",
    "add",
    "remove",
    "update",
    "up",
    "exec",
    "dlx",
    "run",
    "test",
    "t",
    "recursive",
];

impl Tool for Pnpm {
    fn name(&self) -> &'static str {
        "pnpm"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "pnpm" | "pnpx")
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        call.sub() == "install" && !super::npm::global(call)
    }

    super::npm::node_manager!();

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("npm_config_store_dir", "pnpm-store"))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["pnpm-lock.yaml"]
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        super::npm::global(call)
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        if call.name() == "pnpx" {
            return super::npm::after_flags(&call.args, &[]);
        }
        // `--filter X` takes a value; so do `-C`/`--dir`.
        let words: Vec<String> = {
            let mut out = Vec::new();
            let mut args = call.args.iter();
            while let Some(a) = args.next() {
                if matches!(a.as_str(), "--filter" | "-F" | "-C" | "--dir") {
                    args.next();
                } else if !a.starts_with('-') {
                    out.push(a.clone());
                }
            }
            out
        };
        let recursive = call.args.iter().any(|a| {
            matches!(a.as_str(), "-r" | "--recursive" | "--filter" | "-F")
                || a.starts_with("--filter=")
        }) || words.first().is_some_and(|w| w == "recursive");
        let words: Vec<String> = words.into_iter().skip_while(|w| w == "recursive").collect();
        let Some(first) = words.first() else {
            return Inner::Nothing;
        };
        let name = match first.as_str() {
            "exec" | "dlx" => return Inner::Words(words[1..].to_vec()),
            "test" | "t" => "test".to_owned(),
            "run" => match words.get(1) {
                Some(s) => s.clone(),
                None => return Inner::Nothing,
            },
            s if OWN.contains(&s) => return Inner::Nothing,
            s => s.to_owned(),
        };
        let Some(project) = project else {
            return Inner::Unknown;
        };
        if recursive {
            return each(project, &name, "");
        }
        match script_with_hooks(project, "", &name, &after_separator(call)) {
            Some(s) => Inner::Script(s),
            // `pnpm vitest`: a program of the package's when no script has its name.
            None if script(project, "", &name).is_none() && first != "run" => {
                Inner::Words(words.to_vec())
            }
            None => Inner::Unknown,
        }
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        let recursive = run
            .command
            .split_whitespace()
            .any(|w| w == "-r" || w == "--recursive");
        if recursive
            && run.command.trim_start().starts_with("pnpm")
            && !run.command.contains("--no-bail")
            && super::shell::plain(&run.command)
        {
            run.command = run.command.replacen("pnpm", "pnpm --no-bail", 1);
        }
    }

    fn sections(&self, text: &str, _: Option<&Project>) -> Option<Vec<(String, String)>> {
        // `packages/a test$ vitest run` announces a package's run; its lines follow as
        // `packages/a test: …`.
        let prefixes: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| {
                let (head, _) = l.split_once("$ ")?;
                let (folder, script) = head.rsplit_once(' ')?;
                (!folder.contains(' ') && !script.is_empty())
                    .then(|| (folder.to_owned(), format!("{folder} {script}:")))
            })
            .collect();
        if prefixes.is_empty() {
            return None;
        }
        let mut out: Vec<(String, String)> = prefixes
            .iter()
            .map(|(f, _)| (f.clone(), String::new()))
            .collect();
        for line in text.lines() {
            if let Some(i) = prefixes
                .iter()
                .position(|(_, p)| line.starts_with(p.as_str()))
            {
                let rest = &line[prefixes[i].1.len()..];
                out[i].1.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                out[i].1.push('\n');
            }
        }
        Some(out)
    }

    fn run_script(&self, name: &str) -> Option<String> {
        Some(match name {
            "test" => "pnpm test".to_owned(),
            other => format!("pnpm run {other}"),
        })
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        project.is_file("pnpm-lock.yaml").then_some(Lang::Js)
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project).map(|_| {
            (
                "pnpm install --frozen-lockfile".to_owned(),
                "a pnpm-lock.yaml".to_owned(),
            )
        })
    }

    fn missing(&self, line: &str) -> Option<String> {
        super::yarn::command_not_found(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::{read_tests, recognise, Printed};

    /// `pnpm -r test` in a workspace whose `b` fails, as recorded (colours taken off).
    const RECURSIVE: &str = "Scope: 2 of 3 workspace projects\npackages/a test$ vitest run\npackages/b test$ vitest run\npackages/a test:  RUN  v3.2.7 /w/packages/a\npackages/b test:  RUN  v3.2.7 /w/packages/b\npackages/a test:  ✓ a.test.js (2 tests) 5ms\npackages/a test:  Test Files  1 passed (1)\npackages/b test:  ❯ b.test.js (2 tests | 1 failed) 21ms\npackages/b test:    ✓ b passes 2ms\npackages/b test:    × b fails 16ms\npackages/b test:      → expected 1 to be 2 // Object.is equality\npackages/b test: ⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯\npackages/b test:  FAIL  b.test.js > b fails\npackages/b test: AssertionError: expected 1 to be 2 // Object.is equality\npackages/a test: Done\npackages/b test: Failed\n/w/packages/b:\n ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @ws/b@1.0.0 test: `vitest run`\nExit status 1\n";

    #[test]
    fn a_recursive_run_is_read_package_by_package() {
        let p = Project::in_memory(
            std::path::Path::new("/w"),
            &[
                ("package.json", r#"{"scripts": {"test": "pnpm -r test"}}"#),
                ("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n"),
                (
                    "packages/a/package.json",
                    r#"{"scripts": {"test": "vitest run"}}"#,
                ),
                (
                    "packages/b/package.json",
                    r#"{"scripts": {"test": "vitest run"}}"#,
                ),
            ],
        );
        let uses = recognise("pnpm test", Some(&p));
        assert_eq!(uses.tools, ["pnpm", "vitest"]);
        let t = read_tests(
            &uses,
            &Printed {
                stdout: RECURSIVE,
                stderr: "",
                scratch: None,
                root: None,
            },
        )
        .unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["packages/a/a.test.js"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["packages/b/b.test.js::b fails"]
        );
        assert!(t.by_file);
    }

    #[test]
    fn a_recursive_run_goes_on_after_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let mut run = Prepared {
            command: "pnpm -r test".into(),
            ..Prepared::default()
        };
        Pnpm.prepare(&mut run, dir.path());
        assert_eq!(run.command, "pnpm --no-bail -r test");
        assert_eq!(
            recognise("pnpm exec tsc --noEmit", None).tools,
            ["pnpm", "tsc"]
        );
    }
}
