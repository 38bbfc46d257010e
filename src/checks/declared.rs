//! The checks a repository declares itself, preferred over anything ralph would guess: the
//! targets of a task runner's file (a `Makefile`, a `justfile`, each read by its runner's tool)
//! named like checks (`test`, `lint`, `typecheck`, `format-check`…, or after a linter ralph
//! knows), and a pre-commit
//! configuration, which runs the project's own linters and formatters as it pins them.

use super::project::Project;
use super::spec::CheckSpec;
use super::tools::CheckKind;
use super::tools::{self, Tasks};

/// Target names that are quality checks, in the order they run; then targets named after a
/// formatter, linter or type checker ralph knows ([`tools::quality_tools`]).
const QUALITY: [&str; 8] = [
    "format-check",
    "fmt-check",
    "check-format",
    "lint",
    "typecheck",
    "type-check",
    "check",
    "vet",
];
/// Target names that run the tests.
const TESTS: [&str; 2] = ["test", "tests"];

/// Checks from the targets of a task runner's file, run by `runner`; `None` without a test
/// target, since a plan without tests verifies nothing.
fn from_targets(tasks: &Tasks, runner: &str) -> Option<Vec<CheckSpec>> {
    let has = |t: &str| tasks.has(t);
    let file = tasks.file;
    // A `check` without a `test` may be the test suite (GNU's convention: `make check`).
    let check_tests = tasks.check_tests && !TESTS.iter().any(|t| has(t)) && has("check");
    let test = if check_tests {
        &"check"
    } else {
        TESTS.iter().find(|t| has(t))?
    };
    let named: Vec<&str> = QUALITY
        .iter()
        .copied()
        .chain(
            tools::quality_tools()
                .into_iter()
                .filter(|n| !QUALITY.contains(n)),
        )
        .collect();
    let mut out: Vec<CheckSpec> = named
        .iter()
        .filter(|t| has(t) && *t != test)
        .map(|t| {
            CheckSpec::new(t, &format!("{runner} {t}"))
                .because(&format!("the `{t}` target of {file}"))
        })
        .collect();
    let mut spec = CheckSpec::new("test", &format!("{runner} {test}"))
        .because(&format!("the `{test}` target of {file}"));
    spec.kind = CheckKind::Test;
    out.push(spec);
    Some(out)
}

/// The checks of the first task runner's file with a test target, and where they came from.
pub fn targets(p: &Project) -> Option<(&'static str, Vec<CheckSpec>)> {
    tools::task_files(p)
        .into_iter()
        .find_map(|(tool, tasks)| Some((tasks.source, from_targets(&tasks, tool.name())?)))
}

/// Target names that make the project's environment.
const INSTALL: [&str; 4] = ["install", "setup", "bootstrap", "dev"];

/// A declared install target that only makes a local environment (`uv sync`, `npm ci`, …),
/// as a setup command with its reason. One that installs anywhere else (`pip install` into
/// whatever environment is active, `sudo`, a global install) is never run unasked, nor one with
/// prerequisites (they are not followed).
pub fn install_target(p: &Project) -> Option<(String, String)> {
    tools::task_files(p).into_iter().find_map(|(tool, tasks)| {
        INSTALL.iter().find_map(|target| {
            let body = tasks.recipe(target)?;
            body.iter().all(|l| tools::makes_local_env(l)).then(|| {
                (
                    format!("{} {target}", tool.name()),
                    format!("the `{target}` target of {}", tasks.file),
                )
            })
        })
    })
}

/// Whether the declared `test` target runs only what `command` runs, through the project's
/// environment (`pytest`, `python -m pytest`, `uv run pytest` for `coverage run -m pytest`): the
/// same tests, so that `command` may run in its place.
pub fn test_runs_only(p: &Project, command: &str) -> bool {
    let Some(want) = runner_of(command) else {
        return false;
    };
    tools::task_files(p).into_iter().next().is_some_and(
        |(_, tasks)| matches!(tasks.recipe("test"), Some([line]) if runner_of(line) == Some(want)),
    )
}

/// The tool a one-command `line` comes to through its wrappers (`uv run pytest` → pytest).
pub fn runner_of(line: &str) -> Option<&'static str> {
    let commands = tools::plain_commands(line);
    let [words] = commands.as_slice() else {
        return None;
    };
    let (_, tool) = tools::innermost(words)?;
    tool.map(|t| t.name())
}

/// The pre-commit check, when the repository has a pre-commit configuration: it stands for the
/// project's linters and formatters.
pub fn pre_commit(p: &Project) -> Option<CheckSpec> {
    p.is_file(".pre-commit-config.yaml").then(|| {
        CheckSpec::new(
            "pre-commit",
            "pre-commit run --all-files --show-diff-on-failure",
        )
        .because(".pre-commit-config.yaml")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(file: &str, text: &str) -> (String, Tasks) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        let (tool, tasks) = tools::task_files(&Project::read(dir.path()))
            .into_iter()
            .next()
            .unwrap();
        (tool.name().to_owned(), tasks)
    }

    fn named(names: &[&str], check_tests: bool) -> Tasks {
        Tasks {
            file: "the Makefile",
            targets: names
                .iter()
                .map(|n| ((*n).to_owned(), Default::default()))
                .collect(),
            check_tests,
            ..Default::default()
        }
    }

    #[test]
    fn makefile_targets_named_like_checks() {
        let make = ".PHONY: test lint\nVERSION := 1\ninstall:\n\tpip install -e .\nlint: install\n\tflake8\ntest:\n\tpytest\n%.o: %.c\n\tcc $<\n";
        let (runner, t) = tasks("Makefile", make);
        assert_eq!(runner, "make");
        assert!(t.has("install") && t.has("lint") && t.has("test"));
        assert!(!t.has("VERSION") && !t.targets.keys().any(|k| k.contains('%')));
        let checks = from_targets(&t, &runner).unwrap();
        let got: Vec<(&str, &str, CheckKind)> = checks
            .iter()
            .map(|c| (c.name.as_str(), c.command.as_str(), c.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("lint", "make lint", CheckKind::Quality),
                ("test", "make test", CheckKind::Test)
            ]
        );
        assert_eq!(checks[1].reason, "the `test` target of the Makefile");
        assert!(
            from_targets(&named(&["lint"], true), "make").is_none(),
            "no test, no plan"
        );
        // Targets named after a linter or type checker ralph knows are checks too.
        let checks =
            from_targets(&named(&["mypy", "ruff", "docs", "test"], false), "just").unwrap();
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ruff", "mypy", "test"]);
        assert_eq!(checks[1].command, "just mypy");
    }

    #[test]
    fn install_targets_that_stay_local() {
        let dir = tempfile::tempdir().unwrap();
        let write = |t: &str| std::fs::write(dir.path().join("justfile"), t).unwrap();
        write("# set up\ninstall:\n    uv sync --all-groups\n    npm ci\n\ntest:\n    uv run pytest\n");
        assert_eq!(
            install_target(&Project::read(dir.path())),
            Some((
                "just install".into(),
                "the `install` target of the justfile".into()
            ))
        );
        write("install:\n    pip install -e .\n");
        assert_eq!(install_target(&Project::read(dir.path())), None);
        write("install:\n    npm install -g something\n");
        assert_eq!(install_target(&Project::read(dir.path())), None);
        write("install:\n    uv sync && ./post-install.sh\n");
        assert_eq!(install_target(&Project::read(dir.path())), None);
        write("install: venv\n    uv sync\n");
        assert_eq!(
            install_target(&Project::read(dir.path())),
            None,
            "prerequisites are not followed"
        );
    }

    #[test]
    fn a_test_target_that_only_runs_the_tests_coverage_runs() {
        let dir = tempfile::tempdir().unwrap();
        let write = |t: &str| std::fs::write(dir.path().join("Makefile"), t).unwrap();
        let under = "python3 -m coverage run -m pytest";
        write(".PHONY: test\ntest:\n\tuv run pytest\n");
        assert!(test_runs_only(&Project::read(dir.path()), under));
        write("test:\n\tpython -m pytest -q tests\n");
        assert!(test_runs_only(&Project::read(dir.path()), under));
        write("test:\n\tpytest\n\t./check-docs.sh\n");
        assert!(!test_runs_only(&Project::read(dir.path()), under));
        write("test:\n\ttox\n");
        assert!(!test_runs_only(&Project::read(dir.path()), under));
    }

    #[test]
    fn justfile_recipes() {
        let just = "set shell := [\"bash\", \"-c\"]\nversion := \"1\"\n# run the tests\ntest *args:\n    cargo test {{args}}\n@lint:\n    cargo clippy\n[private]\nhelper:\n    true\n";
        let (runner, t) = tasks("justfile", just);
        assert_eq!(runner, "just");
        let mut names: Vec<&String> = t.targets.keys().collect();
        names.sort();
        assert_eq!(names, ["helper", "lint", "test"]);
    }

    #[test]
    fn a_makefile_check_target_without_a_test_target_is_the_test_suite() {
        let checks = from_targets(&named(&["all", "check", "lint"], true), "make")
            .expect("make check is the suite");
        let got: Vec<(&str, &str, CheckKind)> = checks
            .iter()
            .map(|c| (c.name.as_str(), c.command.as_str(), c.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("lint", "make lint", CheckKind::Quality),
                ("test", "make check", CheckKind::Test)
            ]
        );
        // With a test target, `check` stays a quality check; a justfile's `check` is a lint.
        let both = from_targets(&named(&["check", "test"], true), "make").unwrap();
        assert_eq!(both[0].command, "make check");
        assert_eq!(both[0].kind, CheckKind::Quality);
        assert!(from_targets(&named(&["check"], false), "just").is_none());
    }
}
