//! Finding the change's tests, and each in the runners' reports by its full path.

use super::*;
use crate::checks::outcomes::Measure;

#[test]
fn new_and_edited_tests_are_found_in_each_language() {
    let base = "import pytest\n\ndef test_old():\n    assert 1\n\nclass TestParse:\n    def test_keep(self):\n        assert True\n";
    let now = "import pytest\n\ndef test_old():\n    assert 2\n\nclass TestParse:\n    def test_keep(self):\n        assert True\n\n    @pytest.mark.slow\n    def test_new(self):\n        pass\n\ndef helper():\n    pass\n";
    let c = changed("tests/test_parse.py", Some(base), now);
    let names: Vec<&str> = c.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["test_old", "TestParse::test_new"]);
    assert_eq!(c[1].decorators, ["@pytest.mark.slow"]);

    let rs = "#![cfg(feature = \"exact\")]\n\n#[test]\nfn rounds_up() {\n    assert_eq!(halve(3), 2);\n}\n\n#[tokio::test]\nasync fn later() {\n    x().await;\n}\n\nfn not_a_test() {}\n";
    let c = changed("tests/exact.rs", None, rs);
    assert_eq!(
        c.iter()
            .map(|t| (t.name.as_str(), t.feature.as_deref()))
            .collect::<Vec<_>>(),
        [("rounds_up", Some("exact")), ("later", Some("exact"))]
    );
    // Two tests of one name in two inline modules are two tests, named by their module.
    let mods = "mod array_vec {\n    use super::*;\n    #[test]\n    fn test_empty() {\n        let s = \"{\";\n    }\n}\n\npub(crate) mod array_string {\n    #[test]\n    fn test_empty() {}\n    mod deeper {\n        #[test]\n        fn test_full() {}\n    }\n    #[test]\n    fn test_after() {}\n}\n#[test]\nfn top() {}\n";
    assert_eq!(
        changed("tests/borsh.rs", None, mods)
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        [
            "array_vec::test_empty",
            "array_string::test_empty",
            "array_string::deeper::test_full",
            "array_string::test_after",
            "top"
        ]
    );
    let go = "package x\n\nfunc TestParse(t *testing.T) {\n\tif x {\n\t}\n}\n";
    assert_eq!(changed("x_test.go", None, go)[0].name, "TestParse");
    let js = "describe('x', () => {\n  it('adds two numbers', () => {\n    expect(1).toBe(1);\n  });\n});\n";
    assert_eq!(
        changed("src/add.test.ts", None, js)[0].name,
        "adds two numbers"
    );
    // A test on one line ends with its call: a test added below leaves it unchanged.
    let base = "describe('c', () => {\n  test('adds', () => expect(add(1, 2)).toBe(3));\n});\n";
    let now = "describe('c', () => {\n  test('adds', () => expect(add(1, 2)).toBe(3));\n  test('muls', () => {\n    expect(mul(2, 3)).toBe(6);\n  });\n});\n";
    let added: Vec<String> = changed("c.test.js", Some(base), now)
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(added, ["muls"]);
    assert!(
        changed("src/lib.py", None, "def test_x():\n  pass\n").is_empty(),
        "not a test file"
    );
    assert!(changed("README.md", None, "x").is_empty());
}

/// A package with two integration tests and a Python test folder.
fn layout() -> crate::checks::rust_modules::Files {
    crate::checks::rust_modules::Files(
        [
            ("Cargo.toml", "[package]\n"),
            ("src/lib.rs", ""),
            ("tests/exact.rs", ""),
            ("tests/basic.rs", ""),
        ]
        .into_iter()
        .collect(),
    )
}

fn check(name: &str, command: &str, passed: &[&str], failed: &[&str]) -> CheckResult {
    CheckResult {
        name: name.into(),
        kind: CheckKind::Test,
        command: command.into(),
        status: if failed.is_empty() {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        exit_code: Some(0),
        duration_ms: 0,
        output_tail: String::new(),
        hint: None,
        measure: Measure::tests_by_name(passed, failed),
        configured: false,
        advisory: None,
        uses: crate::checks::tools::recognise(command, None),
        trace: Default::default(),
    }
}

#[test]
fn each_new_test_is_found_in_the_runners_reports_or_named_as_never_run() {
    let gated = TestFn {
        name: "rounds_up".into(),
        body: String::new(),
        feature: Some("exact".into()),
        decorators: vec![],
    };
    let plain = TestFn {
        name: "halves".into(),
        ..gated.clone()
    };
    let py = TestFn {
        name: "TestParse::test_new".into(),
        feature: None,
        ..gated.clone()
    };
    let tests = vec![
        ("tests/exact.rs".to_owned(), gated.clone()),
        ("tests/basic.rs".to_owned(), plain),
        ("tests/test_parse.py".to_owned(), py),
    ];
    let checks = vec![
        check("test", "cargo test", &["tests/basic.rs::halves"], &[]),
        check(
            "pytest",
            "python -m pytest",
            &[],
            &["tests.test_parse.TestParse::test_new[1]"],
        ),
    ];
    let tree = layout();
    let found = locate(&tests, &checks, &tree);
    assert_eq!(found[0].outcome, Outcome::NotRun);
    assert!(found[0]
        .hint
        .as_deref()
        .unwrap()
        .contains("cargo test --features exact"));
    assert_eq!(found[1].outcome, Outcome::Passed);
    assert_eq!(found[1].check.as_deref(), Some("test"));
    assert_eq!(found[2].outcome, Outcome::Failed);
    // Under the CI's feature check it ran and passed.
    let with_ci = [
        checks[0].clone(),
        check(
            "ci-test-exact",
            "cargo test --features exact --tests",
            &["tests/exact.rs::rounds_up"],
            &[],
        ),
    ];
    assert_eq!(
        locate(&tests[..1], &with_ci, &tree)[0].outcome,
        Outcome::Passed
    );
    // No check reports Rust tests by name: it cannot be told.
    let counted = CheckResult {
        measure: Measure::default(),
        ..checks[0].clone()
    };
    assert_eq!(
        locate(&tests[..1], &[counted], &tree)[0].outcome,
        Outcome::Unknown
    );
}

mod full_paths {

    use super::*;
    use crate::checks::outcomes::Measure;
    use crate::checks::rust_modules::Files;

    fn test(name: &str, feature: Option<&str>) -> TestFn {
        TestFn {
            name: name.into(),
            body: String::new(),
            feature: feature.map(str::to_owned),
            decorators: vec![],
        }
    }

    /// The check `test` running `command`, passed whatever its tests did.
    fn ran(command: &str, passed: &[&str], failed: &[&str]) -> CheckResult {
        CheckResult {
            status: CheckStatus::Passed,
            ..check("test", command, passed, failed)
        }
    }

    #[test]
    fn a_new_test_is_never_another_files_test_of_the_same_name() {
        // serde_json #1004: the new file's `test` is compiled out of the plain `cargo test`;
        // another regression file's `test` passes there.
        let tree = Files(
            [
                ("Cargo.toml", "[package]\n"),
                ("src/lib.rs", ""),
                (
                    "tests/regression.rs",
                    "mod regression {\n    automod::dir!(\"tests/regression\");\n}\n",
                ),
                ("tests/regression/issue845.rs", ""),
                ("tests/regression/issue1004.rs", ""),
                ("tests/stray/lost.rs", ""),
            ]
            .into_iter()
            .collect(),
        );
        let plain = ran(
            "cargo test",
            &["tests/regression.rs::regression::issue845::test"],
            &[],
        );
        let new = vec![(
            "tests/regression/issue1004.rs".to_owned(),
            test("test", Some("arbitrary_precision")),
        )];
        let found = locate(&new, std::slice::from_ref(&plain), &tree);
        assert_eq!(found[0].outcome, Outcome::NotRun, "{found:?}");
        assert_eq!(found[0].name, "regression::issue1004::test");
        assert!(found[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("--features arbitrary_precision"));
        // Under the feature it ran, by its full path.
        let featured = ran(
            "cargo test --features arbitrary_precision",
            &[
                "tests/regression.rs::regression::issue845::test",
                "tests/regression.rs::regression::issue1004::test",
            ],
            &[],
        );
        assert_eq!(
            locate(&new, &[plain.clone(), featured], &tree)[0].outcome,
            Outcome::Passed
        );
        // A check with the feature whose report lacks it: the hint does not ask for that check.
        for command in [
            "cargo test --features=serde,arbitrary_precision",
            "cargo test -F 'arbitrary_precision'",
            "cargo test --all-features",
        ] {
            let stale = ran(
                command,
                &["tests/regression.rs::regression::issue845::test"],
                &[],
            );
            let found = locate(&new, &[plain.clone(), stale], &tree);
            assert_eq!(found[0].outcome, Outcome::NotRun);
            let hint = found[0].hint.as_deref().unwrap();
            assert!(hint.contains("which `test` enables"), "{command}: {hint}");
        }
        // The CI's check with the feature fails on the base as a whole: the hint names it.
        let broken = CheckResult {
            status: CheckStatus::FailingOnBase,
            measure: Measure::default(),
            ..ran("env RUSTFLAGS='-Dwarnings' bash -ec 'cargo test --features arbitrary_precision --tests'", &[], &[])
        };
        let found = locate(&new, &[plain.clone(), broken], &tree);
        let hint = found[0].hint.as_deref().unwrap();
        assert!(
            hint.contains("which enables it, fails on the base without naming a test"),
            "{hint}"
        );
        // A file no crate root reaches: which reported `test` it is cannot be told.
        let lost = vec![("tests/stray/lost.rs".to_owned(), test("test", None))];
        let any = ran(
            "cargo test",
            &["tests/regression.rs::regression::issue845::test"],
            &[],
        );
        let found = locate(&lost, &[any], &tree);
        assert_eq!(found[0].outcome, Outcome::Unidentified);
        assert!(found[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("no crate root reaches"));
    }

    #[test]
    fn a_python_test_is_found_by_its_files_dotted_path() {
        let tree = Files(Default::default());
        let checks = [ran(
            "python -m pytest",
            &[
                "tests.unit.test_parse::test_x",
                "pkg.tests.test_io.TestRead::test_y[1]",
            ],
            &["tests.other.test_parse::test_x"],
        )];
        let at = |file: &str, name: &str| {
            locate(&[(file.to_owned(), test(name, None))], &checks, &tree)[0].outcome
        };
        assert_eq!(at("tests/unit/test_parse.py", "test_x"), Outcome::Passed);
        assert_eq!(at("tests/other/test_parse.py", "test_x"), Outcome::Failed);
        assert_eq!(at("tests/third/test_parse.py", "test_x"), Outcome::NotRun);
        // pytest run from a package folder names the module from there.
        assert_eq!(
            at("packages/pkg/tests/test_io.py", "TestRead::test_y"),
            Outcome::Passed
        );
        assert_eq!(
            at("packages/pkg/tests/test_io.py", "Other::test_y"),
            Outcome::NotRun
        );
    }

    #[test]
    fn a_js_test_is_found_by_its_file_in_jests_report() {
        let tree = Files(Default::default());
        let mut jest = ran("npm test", &["packages/core/__tests__/a.test.ts"], &[]);
        let t = jest.measure.tests.as_mut().unwrap();
        // jest's reader names a passing file for its tests.
        t.by_file = true;
        t.failed
            .insert("packages/io/__tests__/b.test.ts::io › reads a file".into());
        t.failed
            .insert("packages/io/__tests__/c.test.ts::Test suite failed to run".into());
        t.failed
            .insert("packages/io/__tests__/d.test.ts::io › other".into());
        let at = |file: &str, name: &str| {
            locate(
                &[(file.to_owned(), test(name, None))],
                std::slice::from_ref(&jest),
                &tree,
            )[0]
            .outcome
        };
        assert_eq!(
            at("packages/core/__tests__/a.test.ts", "adds"),
            Outcome::Passed
        );
        assert_eq!(
            at("packages/io/__tests__/b.test.ts", "reads a file"),
            Outcome::Failed
        );
        assert_eq!(
            at("packages/io/__tests__/c.test.ts", "anything"),
            Outcome::NotRun
        );
        assert_eq!(
            at("packages/io/__tests__/d.test.ts", "mine"),
            Outcome::Unidentified
        );
        assert_eq!(
            at("packages/io/__tests__/e.test.ts", "mine"),
            Outcome::NotRun
        );
    }

    #[test]
    fn a_file_one_check_could_not_load_is_judged_by_the_check_that_ran_it() {
        // actions/toolkit: ralph's own `npm test` cannot load a test file that needs the
        // project's build; the CI's job builds first, and its jest report names the new test.
        let tree = Files(Default::default());
        let file = "packages/artifact/__tests__/download.test.ts";
        let mut own = ran("npm test", &[], &[]);
        own.name = "test".into();
        let t = own.measure.tests.as_mut().unwrap();
        t.failed.insert(format!("{file}::Test suite failed to run"));
        let ci = |passed: &[&str], failed: &[&str]| {
            let mut c = ran("npm test -- --runInBand", passed, failed);
            c.name = "CI build: npm test".into();
            c
        };
        let new = format!("{file}::download › handles CJK names");
        let at = |checks: &[CheckResult]| {
            let found = locate(
                &[(file.to_owned(), test("handles CJK names", None))],
                checks,
                &tree,
            );
            (found[0].outcome, found[0].check.clone())
        };
        assert_eq!(
            at(&[own.clone(), ci(&[&new], &[])]),
            (Outcome::Passed, Some("CI build: npm test".into()))
        );
        assert_eq!(at(&[own.clone(), ci(&[], &[&new])]).0, Outcome::Failed);
        // Loaded nowhere: never ran, and the check that could not load it is named.
        let found = locate(
            &[(file.to_owned(), test("handles CJK names", None))],
            std::slice::from_ref(&own),
            &tree,
        );
        assert_eq!(found[0].outcome, Outcome::NotRun);
        assert!(found[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("could not be loaded under `test`"));
    }
}

#[test]
fn a_test_a_check_may_have_run_without_naming_its_tests_never_never_ran() {
    let new = vec![(
        "tests/test_views.py".to_owned(),
        TestFn {
            name: "test_redirect".into(),
            body: String::new(),
            feature: None,
            decorators: vec![],
        },
    )];
    // pytest names its tests, none of them this one; `make test` (Django's runtests.py) passed
    // without naming any.
    let pytest = check(
        "lint-tests",
        "python -m pytest tests/unit",
        &["tests.unit.test_a::test_a"],
        &[],
    );
    let mut make = check("test", "make test", &[], &[]);
    make.measure = Measure::default();
    let tree = layout();
    let found = locate(&new, &[pytest.clone(), make.clone()], &tree);
    assert_eq!(found[0].outcome, Outcome::Unknown);
    assert!(
        found[0]
            .hint
            .as_deref()
            .unwrap()
            .starts_with("`test` ran without naming its tests"),
        "{:?}",
        found[0].hint
    );
    // It did not run this time (the base's verdict taken): it proves nothing either way.
    make.exit_code = None;
    make.status = CheckStatus::FailingOnBase;
    assert_eq!(
        locate(&new, &[pytest, make], &tree)[0].outcome,
        Outcome::NotRun
    );
}

#[test]
fn a_test_folders_scripts_are_tests_but_for_helpers_and_fixtures() {
    assert_eq!(
        lang("test/calc.js"),
        Some(Lang::Js),
        "mocha's and AVA's default"
    );
    assert_eq!(lang("packages/a/tests/b.mjs"), Some(Lang::Js));
    assert_eq!(lang("src/calc.test.ts"), Some(Lang::Js));
    assert_eq!(lang("test/helpers/server.js"), None);
    assert_eq!(lang("test/fixtures/broken.js"), None);
    assert_eq!(lang("test/_setup.js"), None);
    assert_eq!(lang("src/calc.js"), None);
}

#[test]
fn a_parametrized_test_fails_by_its_cases_whatever_their_parameters_hold() {
    let k = TestFn {
        name: "TestK::test_k".into(),
        body: String::new(),
        feature: None,
        decorators: vec![],
    };
    let new = vec![("tests/test_p.py".to_owned(), k)];
    // pytest's JUnit ids, as recorded: a case whose parameter holds `::` failed.
    let pytest = check(
        "test",
        "python -m pytest",
        &["tests.test_p.TestK::test_k[c.d]"],
        &["tests.test_p.TestK::test_k[a::b]"],
    );
    let found = locate(&new, &[pytest], &layout());
    assert_eq!(
        found[0].outcome,
        Outcome::Failed,
        "one failing case fails it"
    );
    assert_eq!(
        found[0].hint.as_deref(),
        Some("failing case(s): `test_k[a::b]` (1 other case(s) pass)")
    );
}

#[test]
fn a_test_not_named_by_a_run_that_failed_first_may_not_have_had_its_turn() {
    let later = TestFn {
        name: "should throw for invalid domain".into(),
        body: String::new(),
        feature: None,
        decorators: vec![],
    };
    // mocha --bail: the first failing test of the file ends the run.
    let mut failed = check(
        "test",
        "npx mocha --bail test/",
        &["cookie.serialize > should serialize name"],
        &["cookie.serialize > should serialize valid domain"],
    );
    failed.status = CheckStatus::Failed;
    let found = locate(
        &[("test/serialize.js".to_owned(), later)],
        &[failed],
        &layout(),
    );
    assert_eq!(found[0].outcome, Outcome::NotRun);
    let hint = found[0].hint.as_deref().unwrap();
    assert!(
        hint.starts_with("no check's test run reported test/serialize.js")
            && hint.contains("(or `test`, which failed first, stopped before it"),
        "{hint}"
    );
}
