//! Reading a check's command as the shell would run it, to find its tools: the simple commands
//! of a script (split at unquoted `;`, `&&`, `||`, `|`, `&`, line ends and groupings), each with
//! its `VAR=value` assignments and generic wrappers (`env`, `sudo`, `time`, `timeout`, …) taken
//! off, `sh -c '…'` looked into, and each wrapper tool's inner command followed (`uv run X`,
//! `make test`'s recipe, a package script) — a bounded number of levels deep.

use super::{Inner, Role, Tail, Uses, TOOLS};
use crate::checks::project::Project;

/// How deep wrappers are followed (`make test` → `npm test` → `jest`): a script that calls
/// itself ends here.
const MAX_DEPTH: usize = 8;

/// One simple command: the program as written, its arguments, and the assignments before it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Call {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Call {
    /// A call of `words` (its first word the program).
    pub fn of(words: &[&str]) -> Call {
        Call {
            program: words.first().copied().unwrap_or_default().to_owned(),
            args: words.iter().skip(1).map(|w| (*w).to_owned()).collect(),
            env: Vec::new(),
        }
    }

    /// The program's file name (`python3.11` for `/usr/bin/python3.11`).
    pub fn name(&self) -> &str {
        self.program.rsplit('/').next().unwrap_or(&self.program)
    }

    /// The first argument that is not a flag: a subcommand.
    pub fn sub(&self) -> &str {
        self.args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map_or("", String::as_str)
    }

    /// Whether an argument is `flag`.
    pub fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|a| a == flag)
    }

    /// The arguments after the first `word`, its own flags skipped — those in `valued` with the
    /// value after them (`uv run --with x pytest` starts `pytest`).
    pub fn after_valued(&self, word: &str, valued: &[&str]) -> Option<Vec<String>> {
        let at = self.args.iter().position(|a| a == word)?;
        let mut i = at + 1;
        while let Some(a) = self.args.get(i) {
            if valued.contains(&a.as_str()) {
                i += 2;
            } else if a.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let rest = self.args.get(i..)?.to_vec();
        (!rest.is_empty()).then_some(rest)
    }

    /// The arguments after the first `word`, its own flags skipped (`run` in `uv run --frozen
    /// pytest`); `None` without it or with nothing after.
    pub fn after(&self, word: &str) -> Option<Vec<String>> {
        let at = self.args.iter().position(|a| a == word)?;
        let rest: Vec<String> = self.args[at + 1..]
            .iter()
            .skip_while(|a| a.starts_with('-'))
            .cloned()
            .collect();
        (!rest.is_empty()).then_some(rest)
    }
}

/// The simple commands of `script`, each as its words (quotes kept together and taken off).
pub fn simple_commands(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let flush = |current: &mut String, out: &mut Vec<Vec<String>>| {
        let piece = current.trim();
        if !piece.is_empty() {
            let words = shell_words::split(piece)
                .unwrap_or_else(|_| piece.split_whitespace().map(str::to_owned).collect());
            if !words.is_empty() {
                out.push(words);
            }
        }
        current.clear();
    };
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            if c != '\n' {
                current.push('\\');
                current.push(c);
            }
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            // `2>&1`, `<&3`, `&>log` redirect: they end no command.
            '&' if !single
                && !double
                && (current.ends_with(['>', '<']) || chars.peek() == Some(&'>')) =>
            {
                current.push(c)
            }
            '\n' | ';' | '&' | '|' | '(' | ')' | '{' | '}' if !single && !double => {
                flush(&mut current, &mut out)
            }
            _ => current.push(c),
        }
    }
    flush(&mut current, &mut out);
    out
}

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

/// Programs that start the command after their own options, as it is.
fn generic_wrapper(words: &[String]) -> Option<usize> {
    let name = words.first()?.rsplit('/').next()?;
    let skip_flags = |from: usize, with_value: &[&str]| {
        let mut i = from;
        while let Some(w) = words.get(i) {
            if with_value.contains(&w.as_str()) {
                i += 2;
            } else if w.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        i
    };
    match name {
        "sudo" => Some(skip_flags(1, &["-u", "-g", "-C"])),
        "env" => Some(skip_flags(1, &["-u", "-C", "-S"])),
        "time" | "exec" | "nohup" | "command" | "stdbuf" | "cross-env" => Some(skip_flags(1, &[])),
        "nice" => Some(skip_flags(1, &["-n"])),
        "xvfb-run" => Some(skip_flags(1, &["-s", "-n", "-f", "-e", "-p", "-w"])),
        "timeout" => Some(skip_flags(1, &["-s", "-k"]) + 1),
        _ => None,
    }
}

/// What a command's words come to once assignments and generic wrappers are taken off: a call,
/// or the script a shell was given.
pub(super) enum Peeled {
    Call(Call),
    Script(String),
    Nothing,
}

pub(super) fn peel(words: &[String]) -> Peeled {
    let mut env = Vec::new();
    let mut i = 0;
    loop {
        while let Some((k, v)) = words
            .get(i)
            .and_then(|w| w.split_once('='))
            .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            env.push((k.to_owned(), v.to_owned()));
            i += 1;
        }
        match words.get(i..).and_then(generic_wrapper) {
            Some(n) if n > 0 => i += n,
            _ => break,
        }
    }
    let Some(program) = words.get(i) else {
        return Peeled::Nothing;
    };
    let args = &words[i + 1..];
    let name = program.rsplit('/').next().unwrap_or(program);
    if matches!(name, "sh" | "bash" | "dash" | "zsh" | "ash") {
        let at = args
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
        if let Some(script) = at.and_then(|at| args.get(at + 1)) {
            return Peeled::Script(script.clone());
        }
    }
    Peeled::Call(Call {
        program: program.clone(),
        args: args.to_vec(),
        env,
    })
}

/// The simple commands `script` runs as the shell would run them: each with its assignments and
/// generic wrappers taken off, and the scripts given to `sh -c`/`bash -ec` read in their place
/// (`env X=1 bash -ec 'npm ci && npm test'` is `npm ci`, `npm test`).
pub fn plain_commands(script: &str) -> Vec<Vec<String>> {
    fn go(script: &str, depth: usize, out: &mut Vec<Vec<String>>) {
        for words in simple_commands(script) {
            match peel(&words) {
                Peeled::Script(inner) if depth < MAX_DEPTH => go(&inner, depth + 1, out),
                Peeled::Call(call) => {
                    out.push(std::iter::once(call.program).chain(call.args).collect())
                }
                Peeled::Script(_) | Peeled::Nothing => {}
            }
        }
    }
    let mut out = Vec::new();
    go(script, 0, &mut out);
    out
}

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
        reached(&probe, project, 0).map(|tool| Tail { tool, separator })
    })
}

/// The tool of `script` whose call ends in the probe.
fn reached(script: &str, project: Option<&Project>, depth: usize) -> Option<super::ToolRef> {
    if depth > MAX_DEPTH {
        return None;
    }
    simple_commands(script)
        .iter()
        .find_map(|words| reached_by(words, project, depth))
}

fn reached_by(words: &[String], project: Option<&Project>, depth: usize) -> Option<super::ToolRef> {
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
        Inner::Nothing => (tool.role() != Role::Wrapper
            && call.args.last().is_some_and(|a| a == PROBE))
        .then_some(super::ToolRef(*tool)),
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
        uses.tools.push(super::ToolRef(*tool));
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

/// The program a shell could not find, from its line (`sh: 1: ruff: not found`, `bash: eslint:
/// command not found`).
pub fn shell_missing(line: &str) -> Option<String> {
    let rest = line
        .strip_suffix(": command not found")
        .or_else(|| line.strip_suffix(": not found"))?;
    let shell = ["sh:", "bash:", "zsh:", "/bin/sh:", "dash:"]
        .iter()
        .any(|s| line.starts_with(s));
    // A script the shell runs: `typecheck.sh: 3: mypy: not found`.
    let parts: Vec<&str> = rest.split(": ").collect();
    let script = parts.len() == 3 && parts[1].chars().all(|c| c.is_ascii_digit());
    (shell || script)
        .then(|| rest.rsplit(": ").next().map(unquote))
        .flatten()
}

/// A word without the quotes a message put around it.
pub(crate) fn unquote(s: &str) -> String {
    s.trim()
        .trim_matches(|c| c == '`' || c == '\'' || c == '"')
        .to_owned()
}

#[cfg(test)]
mod tests {
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
