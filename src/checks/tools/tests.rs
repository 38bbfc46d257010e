//! The registry and the stages' questions to it.

use super::*;
use crate::checks::outcomes::TestOutcomes;
use std::path::Path;

#[test]
fn every_tool_has_a_name_of_its_own_and_claims_no_empty_call() {
    let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name()).collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "two tools share a name");
    for t in TOOLS {
        assert!(
            !t.is(&Call::default(), None),
            "{} claims an empty call",
            t.name()
        );
        assert!(named(t.name()).is_some());
    }
}

#[test]
fn a_check_ralph_cannot_see_into_gets_every_tools_harmless_preparation() {
    let scratch = tempfile::tempdir().unwrap();
    let opaque = recognise("./scripts/test.sh", None);
    assert!(opaque.opaque);
    let run = prepare(&opaque, "./scripts/test.sh", &[], scratch.path());
    assert_eq!(run.command, "./scripts/test.sh");
    let keys: Vec<&str> = run.env.iter().map(|(k, _)| k.as_str()).collect();
    for k in [
        "PYTEST_ADDOPTS",
        "GOFLAGS",
        "PYTHONPATH",
        "RALPH_UNITTEST_REPORT",
    ] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    // A check seen whole gets its own tools' only.
    let seen = recognise("cargo test", None);
    let run = prepare(&seen, "cargo test", &[], scratch.path());
    assert_eq!(run.command, "cargo test --no-fail-fast");
    assert!(
        !run.env.iter().any(|(k, _)| k == "PYTEST_ADDOPTS"),
        "{:?}",
        run.env
    );
}

#[test]
fn every_reader_is_tried_on_a_check_ralph_cannot_see_into() {
    let out = "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nok  \texample.com/calc\t0.01s\n";
    let printed = Printed {
        stdout: out,
        stderr: "",
        scratch: None,
        root: None,
    };
    let t = read_tests(&recognise("./ci.sh", None), &printed).unwrap();
    assert_eq!(t.runner, "go test");
    // A check seen whole is read by its own tools only.
    assert!(read_tests(&recognise("pytest", None), &printed).is_none());
}

#[test]
fn a_missing_program_is_read_from_the_shell_or_its_wrapper() {
    let uses = recognise("uv run ruff check", None);
    assert_eq!(
        missing_program(
            &uses,
            "",
            "error: Failed to spawn: `ruff`\n  Caused by: No such file or directory (os error 2)"
        )
        .as_deref(),
        Some("ruff")
    );
    assert_eq!(
        missing_program(&uses, "", "sh: 1: mypy: not found").as_deref(),
        Some("mypy")
    );
    assert_eq!(
        missing_program(&uses, "FAILED test_x - KeyError: not found", ""),
        None
    );
}

#[test]
fn problems_are_counted_as_their_tool_counts_them() {
    let uses = recognise("gofmt -l .", None);
    assert_eq!(count_problems(&uses, "a.go\nb/c.go\n", ""), Some(2));
    let uses = recognise("flake8", None);
    assert_eq!(
        count_problems(&uses, "a.py:1:1: F401 unused\n", ""),
        Some(1)
    );
}

#[test]
fn the_runner_of_a_language_says_what_would_have_run_a_missed_test() {
    let checks = [Checked {
        name: "test",
        command: "pytest",
        failing_on_base: false,
    }];
    let missed = Missed {
        file: "tests/test_a.py",
        name: "test_x",
        feature: None,
        decorators: &["@pytest.mark.slow".to_owned()],
        reporting: &checks,
        checks: &checks,
    };
    assert!(missed_hint(Lang::Python, &missed)
        .unwrap()
        .contains("python -m pytest -m slow tests/test_a.py"));
    assert!(missed_hint(Lang::Go, &missed)
        .unwrap()
        .contains("-run '^test_x$'"));
    // pytest's own marks select nothing: a parametrized test is collected as any.
    let own = [
        "@pytest.mark.parametrize(\"n\", [1, 2])".to_owned(),
        "@pytest.mark.xfail".to_owned(),
    ];
    let plain = Missed {
        decorators: &own,
        ..missed
    };
    assert_eq!(
        missed_hint(Lang::Python, &plain).unwrap(),
        "no check's test run collected it: a check must run `python -m pytest tests/test_a.py`"
    );
    let network = ["@other.thing".to_owned(), "@pytest.mark.network".to_owned()];
    let marked = Missed {
        decorators: &network,
        ..missed
    };
    assert!(missed_hint(Lang::Python, &marked)
        .unwrap()
        .contains("marked `network`"));
}

#[test]
fn the_environment_manager_of_a_project_is_found_by_its_files() {
    let p = crate::checks::project::Project::in_memory(
        std::path::Path::new("/p"),
        &[
            ("uv.lock", ""),
            ("pyproject.toml", "[tool.poetry]\n"),
            ("pnpm-lock.yaml", ""),
        ],
    );
    assert_eq!(manager(&p, Lang::Python).map(|t| t.name()), Some("uv"));
    assert_eq!(manager(&p, Lang::Js).map(|t| t.name()), Some("pnpm"));
    assert_eq!(manager(&p, Lang::Go).map(|t| t.name()), None);
}

#[test]
fn words_appended_to_a_command_are_followed_to_the_tool_they_reach() {
    let p = super::super::project::Project::in_memory(
        Path::new("/w"),
        &[(
            "package.json",
            r#"{"scripts": {"test": "tsc && jest", "all": "jest; eslint ."}}"#,
        )],
    );
    let tail = |command: &str| recognise(command, Some(&p)).tail;
    let reaches = |tool: &str, separator| {
        Some(Tail {
            tool: ToolRef(named(tool).unwrap()),
            separator,
            operands: false,
        })
    };
    assert_eq!(tail("uv run pytest -q"), reaches("pytest", false));
    assert_eq!(tail("cd web && npx jest"), reaches("jest", false));
    assert_eq!(tail("npm test"), reaches("jest", true));
    assert_eq!(tail("npm test -- --ci"), reaches("jest", false));
    assert_eq!(tail("yarn test"), reaches("jest", false));
    assert_eq!(tail("pnpm test"), reaches("jest", true));
    // `eslint .` names what it lints: words added there add to it.
    assert_eq!(
        tail("npm run all"),
        reaches("eslint", true).map(|t| Tail {
            operands: true,
            ..t
        })
    );
    // The last command is another, or a shell or a recipe takes them.
    for command in ["jest || true", "sh -c 'jest'", "make test"] {
        assert_eq!(tail(command), None, "{command}");
    }
}

#[test]
fn every_runner_runs_one_test_alone_or_says_why_not() {
    // Each runner that runs tests either shows how, or says why it cannot.
    for t in TOOLS
        .iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
    {
        assert!(
            t.example_id().is_some() != t.never_alone().is_some(),
            "{} must say how it runs one test alone, or why it cannot",
            t.name()
        );
    }
    let plan = |c: &str| alone_in_plan(&recognise(c, None), c, &[]);
    assert_eq!(
        plan("python -m pytest"),
        [(
            "pytest",
            Ok("PYTEST_ADDOPTS=\"-k 'test_calc and test_add'\" python -m pytest".to_owned())
        )]
    );
    assert_eq!(
        plan("npx jest --ci"),
        [(
            "jest",
            Ok("npx jest --ci 'test/calc\\.test\\.js' -t '^calc adds$'".to_owned())
        )]
    );
    let node = plan("node --test");
    assert_eq!(node.len(), 1);
    assert!(node[0]
        .1
        .as_ref()
        .unwrap_err()
        .contains("its options go before its files"));
    let piped = plan("bash -c 'jest --ci'");
    assert_eq!(
        piped[0].1.as_ref().unwrap_err(),
        "words added to `bash -c 'jest --ci'` reach no jest that ralph can tell"
    );
    assert!(
        plan("./scripts/test.sh").is_empty(),
        "nothing is said of a script ralph cannot see into"
    );
}

#[test]
fn a_cache_of_the_old_runner_names_finds_todays_runners() {
    let t: TestOutcomes = serde_json::from_str(
        r#"{"passed":[],"failed":[],"passed_count":0,"failed_count":0,"by_name":true,"runner":"junit"}"#,
    )
    .unwrap();
    assert_eq!(runner(&t.runner).map(|t| t.name()), Some("pytest"));
    assert_eq!(runner("cargo").map(|t| t.name()), Some("cargo test"));
    assert_eq!(runner("go").map(|t| t.name()), Some("go test"));
    assert_eq!(runner("vitest").map(|t| t.name()), Some("vitest"));
}
