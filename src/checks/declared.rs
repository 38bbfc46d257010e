//! The checks a repository declares itself, preferred over anything ralph would guess: the
//! targets of a `Makefile` or the recipes of a `justfile` named like checks (`test`, `lint`,
//! `typecheck`, `format-check`…), and a pre-commit configuration, which runs the project's own
//! linters and formatters as it pins them.

use super::{CheckKind, CheckSpec};
use std::path::Path;

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
    let test = TESTS.iter().find(|t| has(t))?;
    let mut out: Vec<CheckSpec> = QUALITY
        .iter()
        .filter(|t| has(t))
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
pub fn targets(root: &Path) -> Option<(&'static str, Vec<CheckSpec>)> {
    let read = |f: &str| std::fs::read_to_string(root.join(f)).ok();
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

/// The pre-commit check, when the repository has a pre-commit configuration: it stands for the
/// project's linters and formatters.
pub fn pre_commit(root: &Path) -> Option<CheckSpec> {
    root.join(".pre-commit-config.yaml").is_file().then(|| {
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
    fn justfile_recipes() {
        let just = "set shell := [\"bash\", \"-c\"]\nversion := \"1\"\n# run the tests\ntest *args:\n    cargo test {{args}}\n@lint:\n    cargo clippy\n[private]\nhelper:\n    true\n";
        assert_eq!(just_recipes(just), ["test", "lint", "helper"]);
    }
}
