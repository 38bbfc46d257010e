//! What ralph knows about each tool a check runs — test runners, linters, formatters, type
//! checkers, and the wrappers that start them (env managers, package scripts, `make`, workspace
//! runners) — one file per tool, each a [`Tool`]: how to recognise it in a command, what makes it
//! name every test, how to read its results test by test and its findings by rule, how to run one
//! test alone, what build lock it takes, what state it must be able to write, what would have run
//! a test it missed. A check's tools are decided once, when the check is made ([`recognise`]),
//! and travel with it ([`Uses`]); the stages (running, baseline, comparison, re-run, new tests)
//! ask the tools and never read the command again. Adding a tool is one file and one line of
//! [`TOOLS`].

mod call;
mod excerpt;
mod junit;
mod plain;

mod ava;
mod black;
mod bun;
mod cargo_test;
mod clippy;
mod ctest;
mod deno;
mod eslint;
mod flake8;
mod go_test;
mod go_vet;
mod gofmt;
mod gradle;
mod hatch;
mod isort;
mod jest;
mod just;
mod make;
mod meson;
mod mocha;
mod mypy;
mod nextest;
mod node_test;
mod nox;
mod npm;
mod nx;
mod pdm;
mod pipenv;
mod pnpm;
mod poetry;
mod prettier;
mod pylint;
mod pyright;
mod pytest;
mod python;
mod ruff;
mod rustfmt;
mod staticcheck;
mod tox;
mod tsc;
mod turbo;
mod unittest;
mod uv;
mod vitest;
mod yarn;

pub use call::{plain_commands, recognise, simple_commands, Call};
pub use clippy::rustc_rule;
pub use excerpt::explain;
pub use jest::UNLOADED;
pub use python::{ask, local_python};
pub use tox::{checks_quality as env_checks_quality, env_list as tox_env_list};

use super::outcomes::TestOutcomes;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every tool ralph knows, in the order it asks them: a command is the first tool's that
/// recognises it.
pub static TOOLS: &[&dyn Tool] = &[
    // Wrappers: what they start is looked at in turn.
    &python::Python,
    &uv::Uv,
    &poetry::Poetry,
    &pdm::Pdm,
    &hatch::Hatch,
    &pipenv::Pipenv,
    &tox::Tox,
    &nox::Nox,
    &make::Make,
    &just::Just,
    &npm::Npm,
    &pnpm::Pnpm,
    &yarn::Yarn,
    &bun::Bun,
    &deno::Deno,
    &turbo::Turbo,
    &nx::Nx,
    // Test runners.
    &pytest::Pytest,
    &unittest::Unittest,
    &cargo_test::CargoTest,
    &nextest::Nextest,
    &go_test::GoTest,
    &jest::Jest,
    &vitest::Vitest,
    &mocha::Mocha,
    &ava::Ava,
    &node_test::NodeTest,
    &bun::BunTest,
    &deno::DenoTest,
    &ctest::Ctest,
    &meson::MesonTest,
    &gradle::Gradle,
    &gradle::Maven,
    // Linters, formatters and type checkers.
    &ruff::Ruff,
    &black::Black,
    &isort::Isort,
    &flake8::Flake8,
    &pylint::Pylint,
    &mypy::Mypy,
    &pyright::Pyright,
    &eslint::Eslint,
    &tsc::Tsc,
    &prettier::Prettier,
    &rustfmt::Rustfmt,
    &clippy::Clippy,
    &gofmt::Gofmt,
    &go_vet::GoVet,
    &staticcheck::Staticcheck,
];

/// The names of the test runners whose results ralph reads test by test.
pub fn runners() -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .map(|t| t.name())
        .collect()
}

/// `command` split into what builds an env-building runner's environments and what runs them
/// offline, when it runs one (tox, nox).
pub fn offline(command: &str) -> Option<(String, String)> {
    let uses = recognise(command, None);
    uses.tools.iter().find_map(|t| t.offline(command))
}

/// The tool named `name`.
pub fn named(name: &str) -> Option<&'static dyn Tool> {
    TOOLS.iter().copied().find(|t| t.name() == name)
}

/// The language of a test file, by its name: which runners' reports can name its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Python,
    Rust,
    Go,
    Js,
}

/// What a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// It runs tests written in a language, and names them in ids of that language's shape:
    /// Python `dotted.module[.Class]::function`, Rust `<test binary>::<module path>`, Go
    /// `<import path>/<TestName>`, JavaScript a passing `file` or a failing `file::title`.
    Tests(Lang),
    /// A test runner of its own kind of tests (ctest, meson): no source file names them.
    Suite,
    /// Format, lint, types.
    Quality,
    /// It starts other programs: an env manager, a package script, a task runner.
    Wrapper,
}

/// What a wrapper starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    Nothing,
    /// A command's words (`uv run pytest -q` starts `pytest -q`).
    Words(Vec<String>),
    /// A shell script: a make target's recipe, a package script.
    Script(String),
    /// The same script in each package of a workspace: (its folder, its script).
    Each(Vec<(String, String)>),
    /// Something ralph cannot read (a noxfile's session, a script it cannot find): the check
    /// is not seen whole.
    Unknown,
}

/// How a check runs, prepared by its tools: its command, the variables it runs with and the
/// places besides its worktree it may write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    pub command: String,
    pub env: Vec<(String, String)>,
    pub writable: Vec<PathBuf>,
    /// Where words appended to the command go.
    pub tail: Option<Tail>,
}

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

impl Prepared {
    /// Sets `key` for the check, after what the plan gives.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.into()));
    }

    /// The value the check will see for `key`: the plan's, else ralph's own environment's.
    pub fn get(&self, key: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| crate::env::get(key))
    }

    /// A folder of this run's own under `scratch`, made now (the sandbox shows only what
    /// exists) and writable to the check.
    pub fn own_dir(&mut self, scratch: &Path, name: &str) -> PathBuf {
        let dir = scratch.join(name);
        let _ = std::fs::create_dir_all(&dir);
        if !self.writable.contains(&dir) {
            self.writable.push(dir.clone());
        }
        dir
    }
}

/// What one run of a check printed, and the folder where its tools wrote their reports.
#[derive(Debug, Clone, Copy)]
pub struct Printed<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    /// The run's own folder ([`Prepared::own_dir`]'s parent), where reports were asked for.
    pub scratch: Option<&'a Path>,
    /// The worktree it ran in: absolute paths in what it printed are made relative to it, and
    /// a workspace's packages are read there.
    pub root: Option<&'a Path>,
}

/// How to run one test alone: the check's command changed, and variables to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alone {
    pub command: String,
    pub env: Vec<(String, String)>,
}

/// A test the change adds that no check ran, as the tools are asked what would run it.
#[derive(Debug, Clone, Copy)]
pub struct Missed<'a> {
    pub file: &'a str,
    pub name: &'a str,
    /// The cargo feature it is compiled under, when its source says.
    pub feature: Option<&'a str>,
    /// The pytest marks on it.
    pub marks: &'a [String],
    /// The checks whose runners report its language's tests by name.
    pub reporting: &'a [Checked<'a>],
    /// Every test check of the run.
    pub checks: &'a [Checked<'a>],
}

/// A check as a tool's hint names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked<'a> {
    pub name: &'a str,
    pub command: &'a str,
    /// It failed on the base as a whole, without naming a test: it cannot judge.
    pub failing_on_base: bool,
}

/// All ralph knows about one tool. Every method but [`Tool::name`], [`Tool::role`] and
/// [`Tool::is`] has a default that knows nothing.
pub trait Tool: Sync {
    /// Its name, as reports and the live view say it (`pytest`, `cargo test`).
    fn name(&self) -> &'static str;

    fn role(&self) -> Role;

    /// Whether `call` starts this tool (`project`, when known, answers what the call's words
    /// cannot: a script's contents, a Makefile's recipe).
    fn is(&self, call: &Call, project: Option<&super::project::Project>) -> bool;

    /// What the call starts in turn, for a wrapper.
    fn inner(&self, _call: &Call, _project: Option<&super::project::Project>) -> Inner {
        Inner::Nothing
    }

    /// The ecosystem whose environment it makes for `project`, when the project is its (its
    /// lockfile, its configuration): its checks run through it, its setup makes it.
    fn manages(&self, _project: &super::project::Project) -> Option<Lang> {
        None
    }

    /// `tool` (a command line) run in the environment it manages for `project`.
    fn run_in(&self, _project: &super::project::Project, tool: &str) -> String {
        tool.to_owned()
    }

    /// How it runs the package script `name` (`npm run --silent lint`, `yarn test`), for a
    /// package manager.
    fn run_script(&self, _name: &str) -> Option<String> {
        None
    }

    /// The command that makes the environment it manages for `project`, and why.
    fn setup(&self, _project: &super::project::Project) -> Option<(String, String)> {
        None
    }

    /// The build lock a call takes: checks that take the same one run one after another.
    fn lock(&self, _call: &Call) -> Option<&'static str> {
        None
    }

    /// Whether a call writes into the project's files (a linter told to fix, a formatter told
    /// to write): such a check never runs beside another writer in one tree.
    fn writes(&self, call: &Call) -> bool {
        call.args.iter().any(|a| {
            matches!(
                a.as_str(),
                "--fix" | "--fix-only" | "--write" | "-w" | "--in-place" | "--apply"
            ) || a.starts_with("--fix=")
        })
    }

    /// Makes the run name every test, write a report, or find the state it must write: the
    /// command changed, variables set, places made writable under `scratch` (a folder of this
    /// run's own). Only what is harmless to any other program may be set through the
    /// environment: a check ralph cannot see into gets every tool's.
    fn prepare(&self, _run: &mut Prepared, _scratch: &Path) {}

    /// The language whose projects it belongs to: its detection runs for them.
    fn ecosystem(&self) -> Option<Lang> {
        match self.role() {
            Role::Tests(lang) => Some(lang),
            _ => None,
        }
    }

    /// For an env-building runner (tox, nox): `command` split into what builds its environments
    /// (run with the setup's network) and what then runs them offline.
    fn offline(&self, _command: &str) -> Option<(String, String)> {
        None
    }

    /// The checks it makes of a project that configures it (a linter's section, a runner's
    /// folder of tests), each with why, its commands run in the project's environment (`env`).
    fn detect(&self, _env: &Env) -> Vec<super::CheckSpec> {
        Vec::new()
    }

    /// Variables pointing what it writes of its own — locks, logs, state — into `dir`, a
    /// writable folder of this run's (a check's or a setup's), never the user's: under the
    /// sandbox the user's home and caches are read-only to a check.
    fn state(&self, _dir: &Path) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The line with which it says it ran no test at all and still succeeded (meson's `No tests
    /// defined.`, ctest's `No tests were found!!!`): such a run tested nothing, and cannot judge.
    fn ran_no_test<'a>(&self, _printed: &Printed<'a>) -> Option<&'a str> {
        None
    }

    /// Its tests, read from what it printed and the reports it was asked for.
    fn tests(&self, _printed: &Printed) -> Option<TestOutcomes> {
        None
    }

    /// For a workspace runner: its output cut into each package's part, `(folder, text)`,
    /// the prefixes it puts before each line taken off (`project` maps a package's name to its
    /// folder).
    fn sections(
        &self,
        _text: &str,
        _project: Option<&super::project::Project>,
    ) -> Option<Vec<(String, String)>> {
        None
    }

    /// The rule of the finding `line` reports (`next` is the line after it), for a linter.
    fn rule(&self, _line: &str, _next: &str) -> Option<String> {
        None
    }

    /// How many problems its output reports, where only it knows how to count them (a list of
    /// files); else the findings are counted as every linter's are.
    fn count(&self, _text: &str) -> Option<u64> {
        None
    }

    /// How to run the test `id` of its report alone, when `command` allows it; `env` is what
    /// the check runs with, `uses` what its command was read as.
    fn alone(
        &self,
        _command: &str,
        _id: &str,
        _env: &[(String, String)],
        _uses: &Uses,
    ) -> Option<Alone> {
        None
    }

    /// A test id of its report's shape, with which the plan shows how one failing test of a
    /// check runs again alone, for a runner that can run one.
    fn example_id(&self) -> Option<&'static str> {
        None
    }

    /// Why it never runs one test alone, for a runner that cannot: said in the plan.
    fn never_alone(&self) -> Option<&'static str> {
        None
    }

    /// `command` (whose appended words reach this runner) narrowed to the project's test
    /// `files` alone, when it takes files and they are its language's.
    fn files(&self, _command: &str, _files: &[&str], _uses: &Uses) -> Option<String> {
        None
    }

    /// The part of its output that shows why its failing tests failed (their own output, not
    /// the head and the tail of the run).
    fn excerpt(&self, _text: &str) -> Option<String> {
        None
    }

    /// The program it could not start, read from a line of its own words (a wrapper's
    /// `Failed to spawn: ruff`).
    fn missing(&self, _line: &str) -> Option<String> {
        None
    }

    /// What would have run a test of its language that no check ran.
    fn missed(&self, _test: &Missed) -> Option<String> {
        None
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

/// The line with which a tool of `uses` says the run tested nothing, when one does.
pub fn ran_no_test<'a>(uses: &Uses, printed: &Printed<'a>) -> Option<&'a str> {
    uses.asked().iter().find_map(|t| t.ran_no_test(printed))
}

/// The tests a run names, read by the check's tools (each workspace package's part by the
/// runners, its tests under the package's folder); `None` when no tool names any.
pub fn read_tests(uses: &Uses, printed: &Printed) -> Option<TestOutcomes> {
    let asked = uses.asked();
    let runners: Vec<&dyn Tool> = asked
        .iter()
        .copied()
        .filter(|t| t.role() != Role::Wrapper && t.role() != Role::Quality)
        .collect();
    let read = |p: &Printed| runners.iter().find_map(|t| t.tests(p));
    let plain = |format| plain::tests(printed.stdout, printed.stderr, format);
    // A run ralph cannot see into is read by its `PASS:`/`FAIL:` lines first, where it prints
    // them: no other tool's reader is asked to guess at it.
    if uses.opaque {
        if let Some(t) = plain(plain::Format::Marked) {
            return Some(t);
        }
    }
    let merged = format!("{}\n{}", printed.stdout, printed.stderr);
    let project = printed.root.map(super::project::Project::read);
    for wrapper in asked.iter().filter(|t| t.role() == Role::Wrapper) {
        let Some(sections) = wrapper.sections(&merged, project.as_ref()) else {
            continue;
        };
        let mut all: Option<TestOutcomes> = None;
        for (folder, text) in sections {
            let part = Printed {
                stdout: &text,
                stderr: "",
                ..*printed
            };
            if let Some(t) = read(&part) {
                all.get_or_insert_with(TestOutcomes::default)
                    .absorb(t, Some(&folder));
            }
        }
        if all.is_some() {
            return all;
        }
    }
    read(printed).or_else(|| plain(plain::Format::Any))
}

/// A lint's findings by rule, read by the check's tools; `None` when no line names a rule.
pub fn read_rules(uses: &Uses, stdout: &str, stderr: &str) -> Option<BTreeMap<String, u64>> {
    let linters: Vec<&dyn Tool> = uses
        .asked()
        .into_iter()
        .filter(|t| t.role() == Role::Quality)
        .collect();
    let mut kinds = BTreeMap::new();
    for text in [stdout, stderr] {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if let Some(k) = linters.iter().find_map(|t| t.rule(line, next)) {
                *kinds.entry(k).or_insert(0) += 1;
            }
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// How many problems a quality check's output reports: as its tools count them, else as every
/// linter's findings are counted ([`crate::checks::outcomes::problems`]).
pub fn count_problems(uses: &Uses, stdout: &str, stderr: &str) -> Option<u64> {
    let text = format!("{stdout}\n{stderr}");
    uses.asked()
        .iter()
        .filter(|t| t.role() == Role::Quality)
        .find_map(|t| t.count(&text))
        .or_else(|| super::outcomes::problems(stdout, stderr))
}

/// The program a failed check could not start, as its wrappers or the shell said.
pub fn missing_program(uses: &Uses, stdout: &str, stderr: &str) -> Option<String> {
    let wrappers = uses.asked();
    for line in stderr.lines().chain(stdout.lines()) {
        let line = line.trim();
        if let Some(p) = call::shell_missing(line) {
            return Some(p);
        }
        if let Some(p) = wrappers.iter().find_map(|t| t.missing(line)) {
            return Some(p);
        }
    }
    None
}

/// How a test check running `command` (with `env`) runs one failing test again alone, per
/// runner it starts: the command (and variables) for one that can, why not for one that cannot.
/// Nothing for a check ralph cannot see into.
pub fn alone_in_plan(
    uses: &Uses,
    command: &str,
    env: &[(String, String)],
) -> Vec<(&'static str, Result<String, String>)> {
    if uses.opaque {
        return Vec::new();
    }
    uses.asked()
        .into_iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .filter_map(|t| {
            if let Some(why) = t.never_alone() {
                return Some((t.name(), Err(why.to_owned())));
            }
            let id = t.example_id()?;
            Some((
                t.name(),
                match t.alone(command, id, env, uses) {
                    Some(a) => Ok(a
                        .env
                        .iter()
                        .map(|(k, v)| format!("{k}={} ", shown(v)))
                        .chain(std::iter::once(a.command))
                        .collect()),
                    None => Err(format!(
                        "words added to `{command}` reach no {} that ralph can tell",
                        t.name()
                    )),
                },
            ))
        })
        .collect()
}

/// `value` as a shell reads it back, in double quotes where that is enough (`"-k 'a and b'"`).
fn shown(value: &str) -> String {
    if value.contains(['"', '$', '`', '\\', '!']) {
        shell_words::quote(value).into_owned()
    } else {
        format!("\"{value}\"")
    }
}

/// `command` narrowed to the project's test `files` alone, by the runner its appended words
/// reach, when that runner takes files; `None` for a command ralph cannot change so safely.
pub fn files_command(uses: &Uses, command: &str, files: &[&str]) -> Option<String> {
    let tail = uses.tail?;
    if !plain(command) {
        return None;
    }
    tail.tool.files(command, files, uses)
}

/// Appends `files` where `uses`' words reach the runner `tool`, when each file ends in one of
/// `extensions`.
pub(crate) fn append_files(
    tool: &str,
    command: &str,
    files: &[&str],
    uses: &Uses,
    extensions: &[&str],
) -> Option<String> {
    let tail = uses.tail.filter(|t| t.tool == tool)?;
    let ours = !files.is_empty()
        && files
            .iter()
            .all(|f| extensions.iter().any(|e| f.ends_with(e)) && !f.starts_with('-'));
    ours.then(|| tail.append(command, files))
}

/// What would have run a test of `lang` that no check ran, as its runners say.
pub fn missed_hint(lang: Lang, test: &Missed) -> Option<String> {
    TOOLS
        .iter()
        .filter(|t| t.role() == Role::Tests(lang))
        .find_map(|t| t.missed(test))
}

/// A project as detection reads it, with the manager of its Python environment: the tools a
/// check runs are run through it.
pub struct Env<'a> {
    pub project: &'a super::project::Project,
    pub manager: Option<&'static dyn Tool>,
}

impl<'a> Env<'a> {
    /// The project `project`, with its Python environment's manager.
    pub fn of(project: &'a super::project::Project) -> Env<'a> {
        Env {
            project,
            manager: manager(project, Lang::Python),
        }
    }

    /// `tool` (a command line) run in the project's environment.
    pub fn run(&self, tool: &str) -> String {
        match self.manager {
            Some(m) => m.run_in(self.project, tool),
            None => tool.to_owned(),
        }
    }

    /// The Python module `module` run with `args`: through the manager, else as `python -m`
    /// with the interpreter on `PATH`.
    pub fn module(&self, module: &str, args: &str) -> String {
        let line = match self.manager {
            Some(m) => m.run_in(self.project, &format!("{module} {args}")),
            None => format!("{} -m {module} {args}", python::on_path()),
        };
        line.trim_end().to_owned()
    }

    /// `python args` in the project's environment.
    pub fn python(&self, args: &str) -> String {
        let line = match self.manager {
            Some(m) => m.run_in(self.project, &format!("python {args}")),
            None => format!("{} {args}", python::on_path()),
        };
        line.trim_end().to_owned()
    }
}

pub use python::{is_python, on_path as python_on_path, package as python_package};

/// The checks the tools of `lang` make of a project (each tool's [`Tool::detect`]): the quality
/// checks in the order of [`TOOLS`], then the tests. A wrapper's own checks (tox's environments)
/// stand for the quality checks of the tools it would run.
pub fn detect(env: &Env, lang: Lang) -> Vec<super::CheckSpec> {
    let (mut quality, mut tests, mut standing) = (Vec::new(), Vec::new(), Vec::new());
    for tool in TOOLS.iter().filter(|t| t.ecosystem() == Some(lang)) {
        for check in tool.detect(env) {
            match (tool.role(), check.kind) {
                (Role::Wrapper, _) => standing.push(check),
                (_, super::CheckKind::Test) => tests.push(check),
                (_, super::CheckKind::Quality) => quality.push(check),
            }
        }
    }
    if !standing.is_empty() {
        quality = standing;
    }
    quality.extend(tests);
    quality
}

/// Whether `text` (a CI step's command, a script, a note naming commands in backquotes) runs
/// the tool named `tool`.
pub fn mentions(text: &str, tool: &str, project: Option<&super::project::Project>) -> bool {
    let quoted = text.split('`').skip(1).step_by(2);
    std::iter::once(text)
        .chain(quoted)
        .any(|t| recognise(t, project).tools.iter().any(|u| *u == tool))
}

/// The tool that manages `project`'s environment for `lang` (`uv`, `poetry`, `npm`, …).
pub fn manager(project: &super::project::Project, lang: Lang) -> Option<&'static dyn Tool> {
    TOOLS
        .iter()
        .copied()
        .find(|t| t.manages(project) == Some(lang))
}

/// How the package scripts of `project` are run: by the package manager its lockfile names,
/// else npm.
pub fn script_runner(project: &super::project::Project) -> &'static dyn Tool {
    manager(project, Lang::Js).unwrap_or(&npm::Npm)
}

/// Whether `word` is an identifier of letters, digits and `_`.
pub(crate) fn word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `command` is one program's run with nothing a shell would read specially: safe to
/// add words to its end.
pub(crate) fn plain(command: &str) -> bool {
    !command.contains(['&', ';', '|', '`', '$', '\n', '>', '<', '\'', '"', '(', ')'])
}

#[cfg(test)]
mod tests;
