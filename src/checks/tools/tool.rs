//! The [`Tool`] trait — all ralph knows about one tool, each question with a default that knows
//! nothing, so a tool's file answers only what is its own — and the words its questions are asked
//! in: a tool's role, what a wrapper starts, a run being prepared and what it printed, a test to
//! run alone or that no check ran, a project as detection reads it.

use super::coverage_spec::CoverageSpec;
use super::ecosystem::Registry;
use super::found::Found;
use super::native::NativeSpec;
use super::shell::{simple_commands, Call};
use super::step::StepKind;
use super::tasks::Tasks;
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    /// A program ralph knows by what it does as a CI step and what it installs — a package
    /// manager, a build system, another language's runner — and never reads: a check that runs
    /// it is not seen into.
    Other,
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

impl Inner {
    /// What a runner's `sub` starts (`pipx run X`, `conda run X`): the words after it, its own
    /// flags skipped; nothing for another subcommand.
    pub fn after(call: &Call, sub: &str) -> Inner {
        match call.after(sub) {
            Some(words) if call.sub() == sub => Inner::Words(words),
            _ => Inner::Nothing,
        }
    }
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
    /// The decorator lines above it in its source (`@pytest.mark.slow`).
    pub decorators: &'a [String],
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

/// A project as detection reads it, with the manager of its Python environment: the tools a
/// check runs are run through it.
pub struct Env<'a> {
    pub project: &'a Project,
    pub manager: Option<&'static dyn Tool>,
    /// The package manager that runs its package scripts.
    pub scripts: &'static dyn Tool,
    /// The Python interpreter on `PATH` (`python`, else `python3`).
    pub python: &'static str,
}

impl<'a> Env<'a> {
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
            None => format!("{} -m {module} {args}", self.python),
        };
        line.trim_end().to_owned()
    }

    /// `python args` in the project's environment.
    pub fn python(&self, args: &str) -> String {
        let line = match self.manager {
            Some(m) => m.run_in(self.project, &format!("python {args}")),
            None => format!("{} {args}", self.python),
        };
        line.trim_end().to_owned()
    }
}

/// All ralph knows about one tool. Every method but [`Tool::name`], [`Tool::role`] and
/// [`Tool::is`] has a default that knows nothing.
pub trait Tool: Sync {
    /// Its name, as reports and the live view say it (`pytest`, `cargo test`).
    fn name(&self) -> &'static str;

    fn role(&self) -> Role;

    /// Whether `call` starts this tool (`project`, when known, answers what the call's words
    /// cannot: a script's contents, a Makefile's recipe).
    fn is(&self, call: &Call, project: Option<&Project>) -> bool;

    /// What the call starts in turn, for a wrapper.
    fn inner(&self, _call: &Call, _project: Option<&Project>) -> Inner {
        Inner::Nothing
    }

    /// The ecosystem whose environment it makes for `project`, when the project is its (its
    /// lockfile, its configuration): its checks run through it, its setup makes it.
    fn manages(&self, _project: &Project) -> Option<Lang> {
        None
    }

    /// `tool` (a command line) run in the environment it manages for `project`.
    fn run_in(&self, _project: &Project, tool: &str) -> String {
        tool.to_owned()
    }

    /// How it runs the package script `name` (`npm run --silent lint`, `yarn test`), for a
    /// package manager.
    fn run_script(&self, _name: &str) -> Option<String> {
        None
    }

    /// The command that makes the environment it manages for `project`, and why.
    fn setup(&self, _project: &Project) -> Option<(String, String)> {
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
    fn detect(&self, _env: &Env) -> Vec<Found> {
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
    fn sections(&self, _text: &str, _project: Option<&Project>) -> Option<Vec<(String, String)>> {
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

    /// How it runs the test `name` of the file `file` alone over the project of `env`, without a
    /// check's command to start from: for a new test that a check ralph cannot see into may have
    /// run without naming it.
    fn alone_in(&self, _env: &Env, _file: &str, _name: &str) -> Option<Alone> {
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

    /// What a CI step's call of it does, where the call says (`uv sync` sets up, `npm test`
    /// tests, `cmake --build` builds); `None`: what it starts says, else its role.
    fn step(&self, _call: &Call) -> Option<StepKind> {
        None
    }

    /// The package registry its installs download from.
    fn registry(&self) -> Option<Registry> {
        None
    }

    /// Its download cache: the variable that points it elsewhere, and a folder name for it.
    fn cache(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Its own files a project's environment is made from (its lockfile, its configuration):
    /// their change makes the setup run again.
    fn manifests(&self) -> &'static [&'static str] {
        &[]
    }

    /// Folders under `HOME` where it keeps a project's environment (keyed by the project's path).
    fn environments(&self) -> &'static [&'static str] {
        &[]
    }

    /// Folders under `HOME` a call of it downloads into and that runs no code of the project
    /// (`cargo fetch` into Cargo's registry); empty for any other call.
    fn downloads(&self, _call: &Call) -> &'static [&'static str] {
        &[]
    }

    /// Whether the call installs tools or dependencies by name, building nothing of the project
    /// (`pip install tox`, `npm i -g pnpm`, `cargo install cargo-nextest`).
    fn installs_by_name(&self, _call: &Call) -> bool {
        false
    }

    /// The variables that send its global installs into a folder of their own: (variable,
    /// folder, its folder of programs to put on `PATH`, relative to it).
    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[]
    }

    /// Its user configuration file, as the variable that points it elsewhere and a file name
    /// for it: a CI job gets an empty one of its own, as a runner's is (a step's `npm config
    /// set` changes nothing of the user's).
    fn user_config(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// How a project whose checks are in `env` measures coverage with it, where it is configured
    /// to (pytest-cov in pytest's options, c8 around the test script).
    fn coverage(&self, _env: &Env) -> Option<CoverageSpec> {
        None
    }

    /// The names its reports had in caches written before tools had names (`junit` for pytest).
    fn former_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The data file it writes where a variable says (coverage.py's `COVERAGE_FILE`): the
    /// variable and a file name for it. A run points it into a folder of its own.
    fn data_file(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// The folders it keeps its environments in, inside the project's tree (tox's `.tox`).
    fn local_folders(&self) -> &'static [&'static str] {
        &[]
    }

    /// The Pythons it installs: the folder that holds them, and the prefix of each one's folder
    /// before its version (`cpython-`).
    fn pythons(&self) -> Option<(std::path::PathBuf, &'static str)> {
        None
    }

    /// The CI actions that install it (`astral-sh/setup-uv`).
    fn installed_by(&self) -> &'static [&'static str] {
        &[]
    }

    /// For a runner of a list of environments (tox): the list `project` declares.
    fn env_list(&self, _project: &Project) -> Vec<String> {
        Vec::new()
    }

    /// Whether the call runs its whole list of environments (a bare `tox`).
    fn runs_whole_list(&self, _call: &Call) -> bool {
        false
    }

    /// Whether the call only builds its environments, running none (`tox --notest`).
    fn builds_envs(&self, _call: &Call) -> bool {
        false
    }

    /// `list` split for the Python `major.minor`: (the envs of that interpreter, those that
    /// name none, those of other interpreters).
    fn split_envs(
        &self,
        list: &[String],
        _python: (u32, u32),
    ) -> (Vec<String>, Vec<String>, Vec<String>) {
        (Vec::new(), list.to_vec(), Vec::new())
    }

    /// `command`, one call of it, narrowed to the environments `envs`.
    fn with_envs(&self, command: &str, _envs: &[String]) -> String {
        command.to_owned()
    }

    /// `command` without the environments it was narrowed to.
    fn without_envs(&self, command: &str) -> String {
        command.to_owned()
    }

    /// How the native code of the project of `env` is built in place, when it builds it.
    fn native(&self, _env: &Env) -> Option<NativeSpec> {
        None
    }

    /// The C or C++ build system it is part of (`cmake` for CMake and ctest).
    fn build_system(&self) -> Option<&'static str> {
        None
    }

    /// For a build system: the command that configures, builds and tests `project` out of tree
    /// in the folder `build` (a shell word), and why — when its build files declare tests.
    fn suite(&self, _project: &Project, _build: &str) -> Option<(String, &'static str)> {
        None
    }

    /// Where its coverage reports land in the project by default (`coverage.json`,
    /// `coverage/lcov.info`): read when the tests wrote one of their own.
    fn coverage_reports(&self) -> &'static [&'static str] {
        &[]
    }

    /// The targets of its file in `project`, for a task runner (a Makefile's, a justfile's).
    fn tasks(&self, _project: &Project) -> Option<Tasks> {
        None
    }

    /// Whether the call only makes the project's environment in the folder it runs in (`uv
    /// sync`, `npm ci`, `poetry install`): safe to run as a setup without being asked.
    fn makes_local_env(&self, _call: &Call) -> bool {
        false
    }

    /// The package script a call runs and the arguments passed on to it (`npm test -- -x`,
    /// `yarn lint`), for a package manager: two spellings of one script are one check.
    fn script(&self, _call: &Call) -> Option<(String, Vec<String>)> {
        None
    }
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
    /// The call the words reach names words of its own that are no option (`mocha test/`, or an
    /// option's value): words added there add to them rather than take their place.
    pub operands: bool,
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
    /// The names of its tools, outer first.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// Whether it runs tests of `lang` (a check ralph cannot see into may).
    pub fn runs(&self, lang: Lang) -> bool {
        self.opaque || self.tools.iter().any(|t| t.role() == Role::Tests(lang))
    }
}

/// files (`test_file`).
pub(crate) fn append_files(
    tool: &str,
    command: &str,
    files: &[&str],
    uses: &Uses,
    test_file: fn(&str) -> bool,
) -> Option<String> {
    let tail = uses.tail.filter(|t| t.tool == tool)?;
    test_files(files, test_file).then(|| tail.append(command, files))
}

/// Whether `files` are some, and all test files a runner can be given (none an option).
pub(crate) fn test_files(files: &[&str], test_file: fn(&str) -> bool) -> bool {
    !files.is_empty() && files.iter().all(|f| test_file(f) && !f.starts_with('-'))
}
