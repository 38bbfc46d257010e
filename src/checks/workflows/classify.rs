//! What a CI step's script does, by its structure: each command's program and subcommand —
//! `pytest`, `tox -e …`, `npm test`, `cargo test`, `go test`, `ctest`, `make check` — never a
//! word among its arguments. `pip install coverage tox` installs two packages: it is setup,
//! though it names a test runner. What a command of a program does is its tool's to say
//! (`checks/tools/`, which also look through `python -m X`, `uv run X`, `npx X`, …).

use super::StepKind;
use crate::checks::tools;

/// The step's kind: a test run if any command runs tests, else a quality check if any checks,
/// else setup if any installs (or configures: `cmake -B build` may download), else a build if
/// any builds, else something else.
pub fn classify(script: &str) -> StepKind {
    let kinds: Vec<StepKind> = tools::plain_commands(script)
        .iter()
        .map(|c| tools::step_of(c))
        .collect();
    tools::strongest(&kinds)
}

/// The checks a script runs, each spelled as [`canonical`] spells it, and whether it does
/// anything else than check and install (a build, a `cd`, an `echo` count as something else).
pub fn checks_in(script: &str) -> (Vec<String>, bool) {
    let mut checks = Vec::new();
    let mut other = false;
    for c in tools::plain_commands(script) {
        match tools::step_of(&c) {
            StepKind::Check(_) => checks.push(canonical(&shell_words::join(&c))),
            StepKind::Setup => {}
            StepKind::Build | StepKind::Other => other = true,
        }
    }
    (checks, other)
}

/// The command a script runs, spelled one way, to tell two spellings of it apart from two
/// commands: runners looked through (`python -m pytest` = `uv run pytest` = `pytest`) and a
/// package script named by its script (`npm test` = `npm run test` = `yarn test` =
/// `pnpm run test`).
pub fn canonical(script: &str) -> String {
    tools::plain_commands(script)
        .iter()
        .filter_map(|c| tools::innermost(c))
        .map(|(call, tool)| match tool.and_then(|t| t.script(&call)) {
            Some((script, tail)) => format!("run {script} {}", tail.join(" ")).trim().to_owned(),
            None => format!("{} {}", call.name(), call.args.join(" "))
                .trim()
                .to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::CheckKind;

    const TEST: StepKind = StepKind::Check(CheckKind::Test);
    const QUALITY: StepKind = StepKind::Check(CheckKind::Quality);

    #[test]
    fn one_command_however_it_is_spelled() {
        for (a, b) in [
            ("npm run test", "yarn test"),
            ("npm test", "pnpm run test"),
            ("yarn lint", "npm run lint"),
            ("python -m pytest -q", "pytest -q"),
            ("uv run pytest", "pytest"),
            ("poetry run mypy src", "mypy src"),
            (
                "env RUNNER_NODE_VERSION=22 bash -ec 'npm run typecheck'",
                "npm run typecheck",
            ),
            ("npm run --silent typecheck", "yarn typecheck"),
            ("sh -c 'cd web && npm test'", "cd web && npm test"),
        ] {
            assert_eq!(canonical(a), canonical(b), "{a} = {b}");
        }
        assert_ne!(canonical("npm run lint"), canonical("npm test"));
        assert_ne!(canonical("pytest tests/a"), canonical("pytest tests/b"));
    }

    #[test]
    fn a_step_is_what_its_program_does_not_what_it_names() {
        for (script, kind) in [
            ("pip install coverage tox", StepKind::Setup),
            (
                "python -m pip install --upgrade pip pytest",
                StepKind::Setup,
            ),
            ("uv pip install -e '.[test]'", StepKind::Setup),
            ("npm install --save-dev jest", StepKind::Setup),
            ("tox", TEST),
            ("tox -e py311", TEST),
            ("python -m pytest -q", TEST),
            ("uv run pytest tests", TEST),
            ("poetry run pytest", TEST),
            ("npx jest --ci", TEST),
            ("npm test", TEST),
            ("npm run test:unit", TEST),
            ("yarn test", TEST),
            ("pnpm run lint", QUALITY),
            ("yarn lint", QUALITY),
            ("cargo test --all-features", TEST),
            ("cargo clippy -- -D warnings", QUALITY),
            ("cargo build --release", QUALITY),
            ("go test ./...", TEST),
            ("go vet ./...", QUALITY),
            ("ctest --output-on-failure", TEST),
            ("make check", TEST),
            ("make lint", QUALITY),
            ("mypy src", QUALITY),
            ("poetry install --with dev", StepKind::Setup),
            ("npm ci", StepKind::Setup),
            ("npm rm --silent --save-dev top-sites", StepKind::Setup),
            ("yarn remove left-pad", StepKind::Setup),
            ("yarn", StepKind::Setup),
            ("sudo apt-get install -y libssl-dev", StepKind::Setup),
            ("echo done", StepKind::Other),
            ("echo \"run pytest later\"", StepKind::Other),
            ("FORCE_COLOR=1 pytest -x", TEST),
            ("pip install -e . && pytest", TEST),
            ("cd build && ctest", TEST),
            ("python setup.py test", TEST),
            ("python setup.py sdist", StepKind::Other),
            ("python runtests.py -v", TEST),
            ("python scripts/release.py", StepKind::Other),
            // Each program's tool says, through the wrappers that start it.
            ("coverage run -m pytest -q", TEST),
            ("python -m coverage run --source=src -m pytest", TEST),
            ("c8 --reporter=lcov mocha", TEST),
            ("conda run -n test pytest", TEST),
            ("rye run pytest", TEST),
            ("pipx run nox -s lint", QUALITY),
            ("pipenv install --dev", StepKind::Setup),
            ("maturin develop --release", StepKind::Setup),
            ("corepack enable", StepKind::Setup),
            ("sudo apt-get install -y libxml2-dev", StepKind::Setup),
            ("ninja -C build", StepKind::Build),
            ("meson compile -C build", StepKind::Build),
            ("task lint", QUALITY),
            ("bundle install", StepKind::Setup),
            ("rspec spec/", TEST),
            ("shellcheck scripts/*.sh", QUALITY),
        ] {
            assert_eq!(classify(script), kind, "{script}");
        }
    }
}
