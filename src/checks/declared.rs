//! The checks a repository declares itself, preferred over anything ralph would guess: the
//! targets of a `Makefile` or the recipes of a `justfile` named like checks (`test`, `lint`,
//! `typecheck`, `format-check`…), and a pre-commit configuration, which runs the project's own
//! linters and formatters as it pins them.

use super::project::Project;
use super::{CheckKind, CheckSpec};

/// Target names that are quality checks, in the order they run.
const QUALITY: [&str; 9] = [
    "format-check",
    "fmt-check",
    "check-format",
    "lint",
    "typecheck",
    "type-check",
    "mypy",
    "check",
    "vet",
];
/// Target names that run the tests.
const TESTS: [&str; 2] = ["test", "tests"];

/// The targets a Makefile defines (not pattern or special ones).
fn make_targets(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(['\t', ' ', '#', '.']))
        .filter_map(|l| {
            let (head, rest) = l.split_once(':')?;
            (!rest.starts_with('=')).then_some(head)
        })
        .flat_map(|head| head.split_whitespace())
        .filter(|t| !t.contains(['%', '$']))
        .map(str::to_owned)
        .collect()
}

/// The recipes a justfile defines.
fn just_recipes(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '[']) && !l.contains(":="))
        .filter(|l| !l.starts_with("set ") && !l.starts_with("alias ") && !l.starts_with("import "))
        .filter_map(|l| l.split_once(':').map(|(head, _)| head))
        .filter_map(|head| head.trim_start_matches('@').split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Checks from a list of target names run by `runner` (`make`, `just`); `None` without a test
/// target, since a plan without tests verifies nothing.
fn from_targets(targets: &[String], runner: &str, file: &str) -> Option<Vec<CheckSpec>> {
    let has = |t: &str| targets.iter().any(|x| x == t);
    // A Makefile's `check` without a `test` is the test suite (GNU's convention: `make check`).
    let make_check = runner == "make" && !TESTS.iter().any(|t| has(t)) && has("check");
    let test = if make_check {
        &"check"
    } else {
        TESTS.iter().find(|t| has(t))?
    };
    let mut out: Vec<CheckSpec> = QUALITY
        .iter()
        .filter(|t| has(t) && t != &test)
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

/// The checks of a `Makefile` or `justfile` with a test target, and where they came from.
pub fn targets(p: &Project) -> Option<(&'static str, Vec<CheckSpec>)> {
    let read = |f: &str| p.text(f);
    if let Some(text) = read("Makefile").or_else(|| read("makefile")) {
        if let Some(checks) = from_targets(&make_targets(&text), "make", "the Makefile") {
            return Some(("Makefile", checks));
        }
    }
    for name in ["justfile", "Justfile", ".justfile"] {
        if let Some(text) = read(name) {
            if let Some(checks) = from_targets(&just_recipes(&text), "just", "the justfile") {
                return Some(("justfile", checks));
            }
        }
    }
    None
}

/// Target names that make the project's environment.
const INSTALL: [&str; 4] = ["install", "setup", "bootstrap", "dev"];
/// Commands a setup recipe may run to be run without asking: each makes an environment local
/// to the directory it runs in.
const LOCAL_ENV: [&str; 9] = [
    "uv sync",
    "uv venv",
    "npm ci",
    "pnpm install",
    "yarn install",
    "poetry install",
    "pdm install",
    "pdm sync",
    "hatch env create",
];

/// The body of `target` in a Makefile (tab-indented lines) or a justfile (indented lines), when
/// it has no prerequisites.
fn recipe<'a>(text: &'a str, target: &str) -> Option<Vec<&'a str>> {
    let mut lines = text.lines();
    lines.by_ref().find(|l| {
        l.trim_start_matches('@')
            .split_once(':')
            .is_some_and(|(head, rest)| head.trim() == target && rest.trim().is_empty())
    })?;
    let body: Vec<&str> = lines
        .take_while(|l| l.starts_with(['\t', ' ']) || l.trim().is_empty())
        .map(|l| l.trim().trim_start_matches(['@', '-']))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    (!body.is_empty()).then_some(body)
}

/// A declared install target that only makes a local environment (`uv sync`, `npm ci`, …),
/// as a setup command with its reason. One that installs anywhere else (`pip install` into
/// whatever environment is active, `sudo`, a global install) is never run unasked.
pub fn install_target(p: &Project) -> Option<(String, String)> {
    let read = |f: &str| p.text(f);
    let files = [
        ("Makefile", "make", "the Makefile"),
        ("makefile", "make", "the Makefile"),
        ("justfile", "just", "the justfile"),
        ("Justfile", "just", "the justfile"),
    ];
    for (file, runner, what) in files {
        let Some(text) = read(file) else { continue };
        for target in INSTALL {
            let Some(body) = recipe(&text, target) else {
                continue;
            };
            let local = body.iter().all(|l| {
                LOCAL_ENV.iter().any(|c| l.starts_with(c))
                    && !l.contains(" -g")
                    && !l.contains("--global")
            });
            if local {
                return Some((
                    format!("{runner} {target}"),
                    format!("the `{target}` target of {what}"),
                ));
            }
        }
    }
    None
}

/// Whether the declared `test` target only runs pytest (`pytest …`, `python -m pytest …`, `uv
/// run pytest …`), so that running pytest under coverage instead runs the same tests.
pub fn test_runs_only_pytest(p: &Project) -> bool {
    let read = |f: &str| p.text(f);
    let text = ["Makefile", "makefile", "justfile", "Justfile"]
        .iter()
        .find_map(|f| read(f));
    let Some(body) = text.as_deref().and_then(|t| recipe(t, "test")) else {
        return false;
    };
    let [line] = body.as_slice() else {
        return false;
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["pytest", ..] | ["python" | "python3", "-m", "pytest", ..] | ["uv", "run", "pytest", ..]
    )
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

    #[test]
    fn makefile_targets_named_like_checks() {
        let make = ".PHONY: test lint\nVERSION := 1\ninstall:\n\tpip install -e .\nlint: install\n\tflake8\ntest:\n\tpytest\n%.o: %.c\n\tcc $<\n";
        let t = make_targets(make);
        assert_eq!(t, ["install", "lint", "test"]);
        let checks = from_targets(&t, "make", "the Makefile").unwrap();
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
            from_targets(&["lint".into()], "make", "m").is_none(),
            "no test, no plan"
        );
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
        write("install: venv\n    uv sync\n");
        assert_eq!(
            install_target(&Project::read(dir.path())),
            None,
            "prerequisites are not followed"
        );
    }

    #[test]
    fn a_test_target_that_only_runs_pytest() {
        let dir = tempfile::tempdir().unwrap();
        let write = |t: &str| std::fs::write(dir.path().join("Makefile"), t).unwrap();
        write(".PHONY: test\ntest:\n\tuv run pytest\n");
        assert!(test_runs_only_pytest(&Project::read(dir.path())));
        write("test:\n\tpython -m pytest -q tests\n");
        assert!(test_runs_only_pytest(&Project::read(dir.path())));
        write("test:\n\tpytest\n\t./check-docs.sh\n");
        assert!(!test_runs_only_pytest(&Project::read(dir.path())));
        write("test:\n\ttox\n");
        assert!(!test_runs_only_pytest(&Project::read(dir.path())));
    }

    #[test]
    fn justfile_recipes() {
        let just = "set shell := [\"bash\", \"-c\"]\nversion := \"1\"\n# run the tests\ntest *args:\n    cargo test {{args}}\n@lint:\n    cargo clippy\n[private]\nhelper:\n    true\n";
        assert_eq!(just_recipes(just), ["test", "lint", "helper"]);
    }

    #[test]
    fn a_makefile_check_target_without_a_test_target_is_the_test_suite() {
        let targets = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let checks = from_targets(&targets(&["all", "check", "lint"]), "make", "the Makefile")
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
        let both = from_targets(&targets(&["check", "test"]), "make", "the Makefile").unwrap();
        assert_eq!(both[0].command, "make check");
        assert_eq!(both[0].kind, CheckKind::Quality);
        assert!(from_targets(&targets(&["check"]), "just", "the justfile").is_none());
    }
}
