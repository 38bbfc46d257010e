//! What a CI step's script does, by its structure: each command's program and subcommand —
//! `pytest`, `tox -e …`, `npm test`, `cargo test`, `go test`, `ctest`, `make check` — never a
//! word among its arguments. `pip install coverage tox` installs two packages: it is setup,
//! though it names a test runner. The test runners and linters ralph knows are its tools'
//! (`checks/tools/`, which also look through `python -m X`, `uv run X`, `npx X`, …); the
//! programs here are those it knows only by what they do.

use super::StepKind;
use crate::checks::tools::{self, Role};
use crate::checks::CheckKind;

/// Programs that run tests, known only by that: tox and nox (whose sessions ralph does not read
/// from a step) and other languages' runners.
const TESTERS: [&str; 8] = [
    "tox", "nox", "rspec", "phpunit", "behave", "trial", "ward", "karma",
];

/// Programs that check quality (format, lint, types), known only by that.
const CHECKERS: [&str; 7] = [
    "biome",
    "shellcheck",
    "clang-format",
    "clang-tidy",
    "stylelint",
    "pre-commit",
    "codespell",
];

/// Programs that install things whatever their arguments.
const INSTALLERS: [&str; 8] = [
    "apt-get", "apt", "brew", "choco", "curl", "wget", "rustup", "winget",
];

/// Runners that start the program named after them (after their own flags).
const RUNNERS: [(&str, &str); 11] = [
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("pipenv", "run"),
    ("pipx", "run"),
    ("pnpm", "exec"),
    ("yarn", "exec"),
    ("npm", "exec"),
    ("conda", "run"),
    ("rye", "run"),
];

/// The step's kind: a test run if any command runs tests, else a quality check if any checks,
/// else setup if any installs (or configures: `cmake -B build` may download), else a build if
/// any builds, else something else.
pub fn classify(script: &str) -> StepKind {
    let kinds: Vec<StepKind> = commands(script).iter().map(|c| command(c)).collect();
    [
        StepKind::Check(CheckKind::Test),
        StepKind::Check(CheckKind::Quality),
        StepKind::Setup,
        StepKind::Build,
    ]
    .into_iter()
    .find(|k| kinds.contains(k))
    .unwrap_or(StepKind::Other)
}

/// The checks a script runs, each spelled as [`canonical`] spells it, and whether it does
/// anything else than check and install (a build, a `cd`, an `echo` count as something else).
pub fn checks_in(script: &str) -> (Vec<String>, bool) {
    let mut checks = Vec::new();
    let mut other = false;
    for c in commands(script) {
        match command(&c) {
            StepKind::Check(_) => checks.push(canonical(&shell_words::join(&c))),
            StepKind::Setup => {}
            StepKind::Build | StepKind::Other => other = true,
        }
    }
    (checks, other)
}

/// The commands of a script, each as its words, as the shell would run them
/// ([`tools::plain_commands`]: `sh -c '…'` looked into, assignments and wrappers taken off).
fn commands(script: &str) -> Vec<Vec<String>> {
    tools::plain_commands(script)
}

/// The program a command runs and its arguments: environment assignments and wrappers
/// (`sudo`, `env`, `time`, `xvfb-run`) skipped, runners looked through.
fn program(words: &[String]) -> Option<(String, Vec<String>)> {
    let mut w: Vec<String> = words
        .iter()
        .skip_while(|w| {
            w.contains('=') && !w.starts_with('-')
                || matches!(
                    w.as_str(),
                    "sudo" | "env" | "time" | "exec" | "xvfb-run" | "nohup"
                )
        })
        .cloned()
        .collect();
    loop {
        let first = w.first()?;
        let name = first.rsplit('/').next().unwrap_or(first).to_owned();
        // `python -m X`, `python3.11 -m X`.
        if name.starts_with("python") || name == "py" {
            if let Some(at) = w.iter().position(|a| a == "-m") {
                w = w[at + 1..].to_vec();
                continue;
            }
            return Some((name, w[1..].to_vec()));
        }
        // `npx X`, `bunx X`: the first word that is not a flag.
        if matches!(name.as_str(), "npx" | "bunx" | "pnpx") {
            w = w[1..]
                .iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect();
            continue;
        }
        if let Some((_, sub)) = RUNNERS.iter().find(|(r, _)| *r == name) {
            if let Some(at) = w.iter().position(|a| a == sub) {
                let rest: Vec<String> = w[at + 1..]
                    .iter()
                    .skip_while(|a| a.starts_with('-'))
                    .cloned()
                    .collect();
                if !rest.is_empty() {
                    w = rest;
                    continue;
                }
            }
        }
        return Some((name, w[1..].to_vec()));
    }
}

/// The first argument that is not a flag: a subcommand.
fn subcommand(args: &[String]) -> &str {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .map_or("", String::as_str)
}

/// What a package script or a make target does, by its name.
fn by_name(name: &str) -> StepKind {
    let base = name.split([':', '-', '.']).next().unwrap_or(name);
    match base {
        "test" | "tests" | "check" | "e2e" | "coverage" | "cov" => StepKind::Check(CheckKind::Test),
        "lint" | "format" | "fmt" | "typecheck" | "types" | "tsc" | "style" => {
            StepKind::Check(CheckKind::Quality)
        }
        "build" | "compile" | "dist" | "bundle" => StepKind::Build,
        "install" | "setup" | "deps" | "bootstrap" => StepKind::Setup,
        _ if name.starts_with("type") => StepKind::Check(CheckKind::Quality),
        _ => StepKind::Other,
    }
}

/// The command a script runs, spelled one way, to tell two spellings of it apart from two
/// commands: runners looked through (`python -m pytest` = `uv run pytest` = `pytest`) and a
/// package script named by its script (`npm test` = `npm run test` = `yarn test` =
/// `pnpm run test`).
pub fn canonical(script: &str) -> String {
    crate::checks::tools::plain_commands(script)
        .iter()
        .filter_map(|c| program(c))
        .map(|(name, args)| {
            let node = matches!(name.as_str(), "npm" | "pnpm" | "yarn" | "bun");
            // The runner's own output flags change nothing it runs (`npm run --silent lint`).
            let args: Vec<String> = if node {
                args.into_iter().filter(|a| !node_output_flag(a)).collect()
            } else {
                args
            };
            let sub = subcommand(&args).to_owned();
            let rest: Vec<&String> = args.iter().filter(|a| **a != sub).collect();
            let script = match sub.as_str() {
                "run" | "run-script" => rest.first().map(|s| s.as_str()).unwrap_or("").to_owned(),
                "t" => "test".to_owned(),
                other => other.to_owned(),
            };
            if node
                && !matches!(
                    script.as_str(),
                    "" | "install" | "i" | "ci" | "add" | "exec"
                )
            {
                let tail: Vec<&str> = rest
                    .iter()
                    .skip(usize::from(matches!(sub.as_str(), "run" | "run-script")))
                    .map(|s| s.as_str())
                    .collect();
                format!("run {script} {}", tail.join(" ")).trim().to_owned()
            } else {
                format!("{name} {}", args.join(" ")).trim().to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

/// A package manager's flag that changes only what it prints.
fn node_output_flag(arg: &str) -> bool {
    matches!(
        arg,
        "--silent" | "-s" | "--quiet" | "-q" | "--if-present" | "--color" | "--no-color"
    ) || arg.starts_with("--loglevel")
        || arg.starts_with("--reporter=")
}

/// What one command does.
fn command(words: &[String]) -> StepKind {
    tool_kind(words).unwrap_or_else(|| by_program(words))
}

/// What a command is by the tools ralph knows in it: a test run where one runs tests, a quality
/// check where one checks; `None` where none says.
fn tool_kind(words: &[String]) -> Option<StepKind> {
    let uses = tools::recognise(&shell_words::join(words), None);
    let roles: Vec<Role> = uses.tools.iter().map(|t| t.role()).collect();
    if roles
        .iter()
        .any(|r| matches!(r, Role::Tests(_) | Role::Suite))
    {
        Some(StepKind::Check(CheckKind::Test))
    } else if roles.contains(&Role::Quality) {
        Some(StepKind::Check(CheckKind::Quality))
    } else {
        None
    }
}

/// What a command is by its program and subcommand: installs, the runners ralph knows only by
/// what they do, package scripts and task targets by their names.
fn by_program(words: &[String]) -> StepKind {
    let Some((name, args)) = program(words) else {
        return StepKind::Other;
    };
    let sub = subcommand(&args);
    let test = StepKind::Check(CheckKind::Test);
    let quality = StepKind::Check(CheckKind::Quality);
    match name.as_str() {
        // `python setup.py test`, `python runtests.py`.
        n if (n.starts_with("python") || n == "py") && sub.ends_with(".py") => {
            python_script(sub, &args)
        }
        "tox" | "nox" if sessions_check_quality(&args) => quality,
        n if TESTERS.contains(&n) => test,
        n if CHECKERS.contains(&n) => quality,
        n if INSTALLERS.contains(&n) => StepKind::Setup,
        "pip" | "pip3" | "pipx" | "conda" | "mamba" | "micromamba" | "gem" | "bundle" => {
            match sub {
                "install" | "download" | "sync" | "update" | "upgrade" | "create" | "env" => {
                    StepKind::Setup
                }
                _ => StepKind::Other,
            }
        }
        "uv" | "poetry" | "pdm" | "hatch" => match sub {
            "sync" | "pip" | "add" | "tool" | "python" | "venv" | "lock" | "install" | "update"
            | "env" => StepKind::Setup,
            _ => StepKind::Other,
        },
        "npm" | "pnpm" | "yarn" | "bun" => node(&name, sub, &args),
        "cargo" => match sub {
            "install" | "fetch" | "binstall" => StepKind::Setup,
            "llvm-cov" | "tarpaulin" => test,
            "deny" | "audit" => quality,
            _ => StepKind::Other,
        },
        "go" => match sub {
            "install" | "get" | "mod" | "download" => StepKind::Setup,
            _ => StepKind::Other,
        },
        "make" | "just" | "task" | "meson" | "ninja" => {
            match args
                .iter()
                .find(|a| !a.starts_with('-') && !a.contains('='))
            {
                // `meson test`, `make check`, `just lint`.
                Some(target) => by_name(target),
                None if name == "make" || name == "ninja" => StepKind::Build,
                None => StepKind::Other,
            }
        }
        // `cmake --build build` builds; `cmake -B build`, `cmake ..` configure (and may fetch).
        "cmake" if args.iter().any(|a| a == "--build" || a == "--install") => StepKind::Build,
        "cmake" => StepKind::Setup,
        _ => StepKind::Other,
    }
}

/// Whether a tox or nox command names only environments that check quality (`tox -e
/// isort,lint`, `nox -s lint docs`): a quality check, not a test run.
fn sessions_check_quality(args: &[String]) -> bool {
    let mut named = Vec::new();
    let mut take = false;
    for a in args {
        if take {
            named.extend(a.split(',').map(str::trim).filter(|e| !e.is_empty()));
            take = a == "-e" || a == "-s";
            continue;
        }
        match a.as_str() {
            "-e" | "--env" | "-s" | "--session" | "--sessions" => take = true,
            _ => {
                if let Some(v) = a.strip_prefix("-e").filter(|v| !v.is_empty()) {
                    named.extend(v.split(','));
                }
            }
        }
    }
    !named.is_empty() && named.iter().all(|e| tools::env_checks_quality(e))
}

/// What `python <script> …` does: `setup.py test` tests, `setup.py install` sets up, a script
/// named for tests (`runtests.py`) tests.
fn python_script(script: &str, args: &[String]) -> StepKind {
    let name = script
        .rsplit('/')
        .next()
        .unwrap_or(script)
        .trim_end_matches(".py");
    let then = args
        .iter()
        .skip_while(|a| a.as_str() != script)
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map_or("", String::as_str);
    match (name, then) {
        ("setup", "test") => StepKind::Check(CheckKind::Test),
        ("setup", "install" | "develop") => StepKind::Setup,
        (s, _) if s.contains("test") => StepKind::Check(CheckKind::Test),
        _ => StepKind::Other,
    }
}

/// What a JavaScript package manager's command does.
fn node(name: &str, sub: &str, args: &[String]) -> StepKind {
    match sub {
        "" if name == "yarn" => StepKind::Setup,
        // What changes the installed dependencies reaches the registry: removing one makes npm
        // resolve the rest again.
        "ci" | "install" | "i" | "add" | "rm" | "remove" | "uninstall" | "un" | "r" | "update"
        | "up" | "upgrade" | "dedupe" | "prune" => StepKind::Setup,
        "test" | "t" => StepKind::Check(CheckKind::Test),
        "run" | "run-script" => {
            let script = args
                .iter()
                .skip_while(|a| a.as_str() != sub)
                .skip(1)
                .find(|a| !a.starts_with('-'));
            script.map_or(StepKind::Other, |s| by_name(s))
        }
        // `yarn lint`, `pnpm typecheck`: a script by its name.
        other if name != "npm" => by_name(other),
        _ => StepKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert_eq!(classify(script), kind, "{script}");
        }
    }
}
