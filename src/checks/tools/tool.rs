//! The [`Tool`] trait: all ralph knows about one tool, each question with a default that knows
//! nothing, so a tool's file answers only what is its own.

use super::ecosystem::Registry;
use super::native::NativeSpec;
use super::{
    Alone, Call, CoverageSpec, Env, Found, Inner, Lang, Missed, Prepared, Printed, Role, StepKind,
    Tasks, Uses,
};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

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
