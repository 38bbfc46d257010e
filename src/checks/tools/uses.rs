//! What a check runs, as its tools: the tools themselves ([`ToolRef`]), where words added to
//! its command go ([`Tail`]), all it uses ([`Uses`]) and how they prepare a run.

use super::{simple_commands, Lang, Prepared, Role, Tool, TOOLS};
use serde::Serialize;
use std::path::Path;

/// A tool as the stages carry it: the tool itself, compared, shown and written by its name.
#[derive(Clone, Copy)]
pub struct ToolRef(pub &'static dyn Tool);

impl ToolRef {
    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl std::ops::Deref for ToolRef {
    type Target = dyn Tool;

    fn deref(&self) -> &(dyn Tool + 'static) {
        self.0
    }
}

impl PartialEq for ToolRef {
    fn eq(&self, other: &ToolRef) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ToolRef {}

impl PartialEq<&str> for ToolRef {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl std::fmt::Debug for ToolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.name())
    }
}

impl Serialize for ToolRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Where words appended to a check's command go: the test runner they reach (through `npx`,
/// a package script, `uv run`), and whether a `--` must come before them (npm's scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    pub tool: ToolRef,
    pub separator: bool,
}

impl Tail {
    /// `command` with `words` appended (shell-quoted) where they reach the tool, after a `--`
    /// when one must come first and the command's last simple command has none yet.
    pub fn append(&self, command: &str, words: &[&str]) -> String {
        let has_separator = simple_commands(command)
            .last()
            .is_some_and(|w| w.iter().any(|a| a == "--"));
        let mut out = command.trim_end().to_owned();
        if self.separator && !has_separator {
            out.push_str(" --");
        }
        for w in words {
            out.push(' ');
            let safe = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./=:@,+%".contains(c));
            if safe {
                out.push_str(w);
            } else {
                out.push_str(&shell_words::quote(w));
            }
        }
        out
    }
}

/// The tools a check runs, decided when the check is made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Uses {
    /// The tools recognised in its command, outer first (`uv`, `pytest`).
    pub tools: Vec<ToolRef>,
    /// Something it runs is no tool ralph knows (a script of the project's): every tool's
    /// harmless preparation applies, and every reader is tried on its output.
    pub opaque: bool,
    /// The build lock it takes.
    #[serde(skip)]
    pub lock: Option<&'static str>,
    /// It may write into the tree outside ralph's own folders (a fixer, a file command, a
    /// script ralph cannot see into): it never runs beside another such check in one tree.
    #[serde(skip)]
    pub writes: bool,
    /// Where words appended to its command go.
    #[serde(skip)]
    pub tail: Option<Tail>,
}

impl Uses {
    /// The tools to ask: the check's own, or every tool when ralph cannot see all it runs.
    pub fn asked(&self) -> Vec<&'static dyn Tool> {
        if self.opaque || self.tools.is_empty() {
            return TOOLS.to_vec();
        }
        self.tools.iter().map(|t| t.0).collect()
    }

    /// The names of its tools, outer first.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// Whether it runs tests of `lang` (a check ralph cannot see into may).
    pub fn runs(&self, lang: Lang) -> bool {
        self.opaque || self.tools.iter().any(|t| t.role() == Role::Tests(lang))
    }
}

/// `command` as the check's tools prepare it, with `env` (the plan's) and what they add.
pub fn prepare(uses: &Uses, command: &str, env: &[(String, String)], scratch: &Path) -> Prepared {
    let mut run = Prepared {
        command: command.to_owned(),
        env: env.to_vec(),
        writable: Vec::new(),
        tail: uses.tail,
    };
    for tool in uses.asked() {
        tool.prepare(&mut run, scratch);
    }
    with_state(uses, &mut run, scratch);
    run
}

/// Adds the state the tools of `uses` must write (their variables, the folder made writable)
/// to `run`, under `scratch`.
pub fn with_state(uses: &Uses, run: &mut Prepared, scratch: &Path) {
    for tool in uses.asked() {
        let dir = scratch.join("state").join(tool.name().replace(' ', "-"));
        let state = tool.state(&dir);
        if state.is_empty() {
            continue;
        }
        run.own_dir(scratch, "state");
        for (k, v) in state {
            // The sandbox shows only what exists: the tool's folders are made now.
            if Path::new(&v).starts_with(&dir) {
                let _ = std::fs::create_dir_all(&v);
            }
            run.set(&k, v);
        }
    }
}
