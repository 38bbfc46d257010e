//! Reading a check's command to find its tools: each simple command of the script ([`super::shell`])
//! asked of the tools in turn, and each wrapper tool's inner command followed (`uv run X`, `make
//! test`'s recipe, a package script) — a bounded number of levels deep.

use super::registry::TOOLS;
use super::shell::{peel, simple_commands, Peeled, MAX_DEPTH};
use super::tool::{Inner, Role};
use super::tool::{Tail, ToolRef, Uses};
use crate::checks::project::Project;

/// Programs and shell words that run no tool and hide none: a check made of them and known tools
/// is seen whole.
const TRANSPARENT: [&str; 35] = [
    "cd", "echo", "printf", "true", "false", "set", "export", "unset", "test", "[", "[[", ":",
    "mkdir", "rm", "cp", "mv", "cat", "ls", "exit", "source", ".", "pushd", "popd", "if", "then",
    "else", "elif", "fi", "for", "do", "done", "while", "touch", "sleep", "date",
];

/// Whether a command's output goes into a file by a relative path (`> out.txt`, `2>>log`): a
/// write into the tree. `/dev/null`, absolute paths and `>&2` are not.
fn redirects_into_tree(words: &[String]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        let Some(at) = w.find('>') else {
            return false;
        };
        if !w[..at].chars().all(|c| c.is_ascii_digit() || c == '&') {
            return false;
        }
        let target = w[at..].trim_start_matches('>');
        let target = if target.is_empty() {
            words.get(i + 1).map_or("", String::as_str)
        } else {
            target
        };
        !(target.is_empty() || target.starts_with(['/', '&', '$']))
    })
}

/// Shell programs that change files.
const FILE_WRITERS: [&str; 5] = ["mkdir", "rm", "cp", "mv", "touch"];

/// The tools `command` runs, read through its wrappers; `project` (when known) answers what
/// its words cannot (a Makefile's recipe, a package script).
pub fn recognise(command: &str, project: Option<&Project>) -> Uses {
    let mut uses = Uses::default();
    walk(command, project, 0, &mut uses);
    uses.tail = tail(command, project);
    uses
}

/// A word no command has: appended to a command to see which tool it reaches.
const PROBE: &str = "ralph-appended-probe";

/// The test runner or linter that words appended to `command` reach, read as the shell and
/// the wrappers pass them on (a package script's arguments after `--`); `None` when they reach
/// no tool ralph knows (`jest | tee log`, `bash -c 'jest'`, a workspace run).
fn tail(command: &str, project: Option<&Project>) -> Option<Tail> {
    [false, true].into_iter().find_map(|separator| {
        let probe = format!("{command}{} {PROBE}", if separator { " --" } else { "" });
        reached(&probe, project, 0).map(|(tool, operands)| Tail {
            tool,
            separator,
            operands,
        })
    })
}

/// The tool of `script` whose call ends in the probe, and whether that call names operands of
/// its own before it (`mocha test/`).
fn reached(script: &str, project: Option<&Project>, depth: usize) -> Option<(ToolRef, bool)> {
    if depth > MAX_DEPTH {
        return None;
    }
    simple_commands(script)
        .iter()
        .find_map(|words| reached_by(words, project, depth))
}

fn reached_by(
    words: &[String],
    project: Option<&Project>,
    depth: usize,
) -> Option<(ToolRef, bool)> {
    let call = match peel(words) {
        Peeled::Call(call) => call,
        Peeled::Script(s) => return reached(&s, project, depth + 1),
        Peeled::Nothing => return None,
    };
    let tool = TOOLS
        .iter()
        .find(|t| t.is(&call, project))
        .filter(|t| t.role() != Role::Other)?;
    match tool.inner(&call, project) {
        Inner::Words(w) => reached_by(&w, project, depth + 1),
        Inner::Script(s) => reached(&s, project, depth + 1),
        Inner::Nothing => {
            let (last, before) = call.args.split_last()?;
            let operands = before.iter().any(|a| !a.starts_with('-'));
            (tool.role() != Role::Wrapper && last == PROBE).then_some((ToolRef(*tool), operands))
        }
        Inner::Each(_) | Inner::Unknown => None,
    }
}

fn walk(script: &str, project: Option<&Project>, depth: usize, uses: &mut Uses) {
    if depth > MAX_DEPTH {
        uses.opaque = true;
        uses.writes = true;
        return;
    }
    for words in simple_commands(script) {
        visit(&words, project, depth, uses);
    }
}

fn visit(words: &[String], project: Option<&Project>, depth: usize, uses: &mut Uses) {
    uses.writes |= redirects_into_tree(words);
    let call = match peel(words) {
        Peeled::Nothing => return,
        Peeled::Script(s) => return walk(&s, project, depth + 1, uses),
        Peeled::Call(call) => call,
    };
    let tool = TOOLS
        .iter()
        .find(|t| t.is(&call, project))
        .filter(|t| t.role() != Role::Other);
    let Some(tool) = tool else {
        if !TRANSPARENT.contains(&call.name()) && !call.program.starts_with('$') {
            uses.opaque = true;
            uses.writes = true;
        }
        uses.writes |= FILE_WRITERS.contains(&call.name());
        return;
    };
    uses.writes |= tool.writes(&call);
    if !uses.tools.iter().any(|t| *t == tool.name()) {
        uses.tools.push(ToolRef(*tool));
    }
    uses.lock = uses.lock.or_else(|| tool.lock(&call));
    match tool.inner(&call, project) {
        Inner::Nothing => {}
        Inner::Unknown => {
            uses.opaque = true;
            uses.writes = true;
        }
        Inner::Words(w) => visit(&w, project, depth + 1, uses),
        Inner::Script(s) => walk(&s, project, depth + 1, uses),
        Inner::Each(scripts) => {
            for (_, s) in scripts {
                walk(&s, project, depth + 1, uses);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::shell::*;
    use super::*;

    fn words(script: &str) -> Vec<String> {
        simple_commands(script)
            .into_iter()
            .map(|w| w.join(" "))
            .collect()
    }

    #[test]
    fn a_script_is_split_where_the_shell_splits_it() {
        assert_eq!(
            words("cd sub && make test; echo 'a && b' | tee x\n(cargo test)"),
            ["cd sub", "make test", "echo a && b", "tee x", "cargo test"]
        );
        assert_eq!(words("pytest \\\n  -q"), ["pytest -q"]);
        assert_eq!(
            words("make lint 2>&1 | tee log && go vet &>/dev/null & wait"),
            ["make lint 2>&1", "tee log", "go vet &>/dev/null", "wait"]
        );
    }

    #[test]
    fn tools_are_found_behind_assignments_wrappers_and_shells() {
        let u = recognise("RUSTFLAGS=-Dwarnings cargo test --workspace", None);
        assert_eq!(u.tools, ["cargo test"]);
        assert_eq!(u.lock, Some("cargo"));
        assert!(!u.opaque);
        let u = recognise(
            "env RUNNER_NODE_VERSION=22 bash -ec 'npx jest --ci && npx eslint .'",
            None,
        );
        assert_eq!(u.tools, ["npm", "jest", "eslint"]);
        let u = recognise("uv run --frozen python -m pytest -q", None);
        assert_eq!(u.tools, ["uv", "python", "pytest"]);
        let u = recognise("timeout 600 xvfb-run -a ./run-tests.sh", None);
        assert!(u.opaque && u.tools.is_empty());
        let u = recognise("cd build && ctest --output-on-failure", None);
        assert_eq!((&u.names()[..], u.opaque), (&["ctest"][..], false));
    }

    #[test]
    fn wrappers_are_followed_into_the_project() {
        let p = Project::in_memory(
            std::path::Path::new("/p"),
            &[
                ("Makefile", "test:\n\tgo test ./...\nlint:\n\tgofmt -l .\n"),
                (
                    "package.json",
                    r#"{"scripts": {"test": "vitest run", "lint": "eslint ."}}"#,
                ),
            ],
        );
        assert_eq!(recognise("make test", Some(&p)).tools, ["make", "go test"]);
        assert_eq!(recognise("npm test", Some(&p)).tools, ["npm", "vitest"]);
        assert_eq!(
            recognise("npm run --silent lint", Some(&p)).tools,
            ["npm", "eslint"]
        );
        // Without the project, a script is not known.
        assert!(recognise("make test", None).opaque);
    }

    #[test]
    fn shells_say_which_program_they_miss() {
        assert_eq!(
            shell_missing("sh: 1: mypy: not found").as_deref(),
            Some("mypy")
        );
        assert_eq!(
            shell_missing("bash: line 1: eslint: command not found").as_deref(),
            Some("eslint")
        );
        assert_eq!(
            shell_missing("typecheck.sh: 1: no-such-tool: not found").as_deref(),
            Some("no-such-tool")
        );
        assert_eq!(shell_missing("error: value not found"), None);
    }
}
