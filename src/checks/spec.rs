//! One check of a plan ([`CheckSpec`]): its name, command and kind, why it runs, its tools (decided
//! when it is made, asked by every stage after), the CI job it is a step of, the checks it stands
//! in for — and the program its command starts.

use super::project;
use super::tools::{self, CheckKind};
use serde::Serialize;

/// One check: a name and the shell command that runs it in the worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckSpec {
    pub name: String,
    pub command: String,
    pub kind: CheckKind,
    /// The program the command needs, to report it as unavailable when it is missing.
    pub program: Option<String>,
    /// Named in `[checks]`: a missing program fails the check instead of making it
    /// unavailable (the user asked for this check; an auto-detected one may not apply).
    pub configured: bool,
    /// Why this check runs (`[checks] test`, `[flake8] in tox.ini`, …), for `ralph doctor`.
    pub reason: String,
    /// The CI job it is a step of, and the job's steps before it: a job's checks run in
    /// order, after those steps, in a copy of the worktree of the job's own — as on a runner of
    /// its own in CI (a later step sees what earlier ones built, no other job's files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<JobPlace>,
    /// Why it only advises (a check ralph adds that the project does not run itself): run and
    /// shown, never the reason for a rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advisory: Option<String>,
    /// The tools it runs: decided here, asked by every stage after.
    #[serde(flatten)]
    pub uses: tools::Uses,
    /// The checks it gives way to, and why: a candidate for the same role that runs on the base
    /// only where none of them can judge there (a CI job whose setup cannot run here, a
    /// Makefile's `test` that runs a tool this machine lacks), and after a change only where it
    /// stood in on the base ([`super::baseline::Baseline::stood_in`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// What made warnings errors in the CI's step, taken off (`RUSTFLAGS=-Dwarnings`): it runs
    /// for its tests with warnings allowed, and its warnings are judged by rule
    /// ([`super::warnings`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relaxed: Option<String>,
}

impl CheckSpec {
    /// A check whose kind follows from its name: `test`, `tests` and names ending in `-test`
    /// or `_test` run tests; everything else is a quality check.
    pub fn new(name: &str, command: &str) -> CheckSpec {
        CheckSpec {
            name: name.to_owned(),
            command: command.to_owned(),
            kind: CheckKind::of_name(name),
            program: first_program(command),
            configured: false,
            reason: String::new(),
            job: None,
            advisory: None,
            uses: tools::recognise(command, None),
            fallback: None,
            relaxed: None,
        }
    }

    /// The same check with its tools read through the project `p` (a Makefile's recipe, a
    /// package script).
    pub fn seen_in(mut self, p: &project::Project) -> CheckSpec {
        self.uses = tools::recognise(&self.command, Some(p));
        self
    }

    /// The same check, as named in `[checks]`.
    pub fn configured(mut self) -> CheckSpec {
        self.configured = true;
        self.reason = format!("`{}` under [checks] in .ralph/config.toml", self.name);
        self
    }

    /// The same check, with why it was chosen.
    pub fn because(mut self, reason: &str) -> CheckSpec {
        self.reason = reason.to_owned();
        self
    }
}

impl From<tools::Found> for CheckSpec {
    fn from(found: tools::Found) -> CheckSpec {
        CheckSpec {
            kind: found.kind,
            advisory: found.advisory,
            ..CheckSpec::new(&found.name, &found.command).because(&found.reason)
        }
    }
}

/// A check that stands in for others of the plan (the candidates preferred to it for its role).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// The checks it gives way to, by name: it judges only where none of them can on the base.
    #[serde(rename = "for")]
    pub for_checks: Vec<String>,
    /// Why it stands in, for `ralph doctor`.
    pub why: String,
}

impl CheckSpec {
    /// The same check, standing in for the checks `for_checks` (its name and kind kept).
    pub fn standing_in(mut self, for_checks: Vec<String>, why: &str) -> CheckSpec {
        self.fallback = Some(Fallback {
            for_checks,
            why: why.to_owned(),
        });
        self
    }
}

/// Where a check taken from a CI job runs: the job (its matrix combination included), and the
/// steps the job runs before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobPlace {
    /// The job instance, `<workflow file>#<job>` and its matrix combination: its checks run in
    /// one tree, in order.
    pub instance: String,
    /// The job, `<workflow file>#<job>`: its instances (the matrix's combinations) run side
    /// by side.
    pub job: String,
    /// The job's steps since its previous check (or its start), in order.
    pub before: Vec<JobStep>,
    /// Folders put first on `PATH` for the job (the interpreter its matrix names, where this
    /// machine has it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
}

/// A step of a CI job that is not a check: it prepares the tree for the checks after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobStep {
    /// Its name, or its command's first line.
    pub label: String,
    /// What it runs (in the job's tree, from its root).
    pub command: String,
    /// It installs (from a package registry): it runs as a setup does, with the setup's
    /// network, what it installs kept in the job's own folders.
    pub installs: bool,
}

/// Shell words that are not programs on `PATH`.
const SHELL_WORDS: [&str; 16] = [
    "!", "(", "{", "if", "for", "while", "case", "cd", "test", "[", "true", "false", "echo",
    "printf", "exec", "set",
];

/// The words of a shell command as the shell splits them (quoted words kept whole); a command
/// whose quotes do not close is split on whitespace.
pub fn words(command: &str) -> Vec<String> {
    shell_words::split(command)
        .unwrap_or_else(|_| command.split_whitespace().map(str::to_owned).collect())
}

/// The program a shell command starts: its first word that is not a `VAR=value` assignment or
/// `!`. `None` when the command starts with a shell keyword or builtin: only the shell's exit
/// code (127) can tell then that a tool is missing.
fn first_program(command: &str) -> Option<String> {
    let words = words(command);
    let word = words
        .iter()
        .map(String::as_str)
        .find(|w| !w.contains('=') && *w != "!")?;
    if SHELL_WORDS.contains(&word) || word.starts_with(['(', '{', '$', '`']) {
        return None;
    }
    Some(word.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_names_and_programs_skip_assignments() {
        assert_eq!(CheckSpec::new("test", "cargo test").kind, CheckKind::Test);
        assert_eq!(CheckSpec::new("rust-test", "x").kind, CheckKind::Test);
        assert_eq!(CheckSpec::new("lint", "x").kind, CheckKind::Quality);
        assert_eq!(CheckSpec::new("contest", "x").kind, CheckKind::Quality);
        let c = CheckSpec::new("lint", "RUSTFLAGS=-Dwarnings cargo clippy");
        assert_eq!(c.program.as_deref(), Some("cargo"));
        assert_eq!(first_program("! grep -q x f").as_deref(), Some("grep"));
        assert_eq!(first_program("cd sub && make"), None);
        assert_eq!(
            first_program("'/opt/my tools/pytest' -q").as_deref(),
            Some("/opt/my tools/pytest"),
            "a quoted path is one word"
        );
        assert_eq!(first_program("(make test)"), None);
        assert!(crate::process::on_path("sh"));
        assert!(!crate::process::on_path("definitely-not-a-program-ralph"));
    }
}
