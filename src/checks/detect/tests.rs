//! The tests of `detect`.

use super::*;
use crate::checks::project;

fn names(plan: &CheckPlan) -> Vec<(String, String, CheckKind)> {
    plan.checks
        .iter()
        .map(|c| (c.name.clone(), c.command.clone(), c.kind))
        .collect()
}

const MASKFILE: &str = "# Tasks\n\n## development\n\n### python\n\n#### test\n\n```sh\npytest\n```\n\n#### format\n\n```sh\nruff format --check\n```\n\n### rust\n\n#### lint (crate)\n\n```sh\ncargo clippy\n```\n\n#### test\n\n```sh\ncargo test\n```\n\n#### deploy\n\n## release\n\n### rust\n\n#### test\n";

#[test]
fn a_maskfile_gives_development_checks_quality_first() {
    let dir = project(&[("maskfile.md", MASKFILE), ("Cargo.toml", "[package]")]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "maskfile.md");
    let got: Vec<(String, CheckKind)> = plan
        .checks
        .iter()
        .map(|c| (c.name.clone(), c.kind))
        .collect();
    assert_eq!(
        got,
        [
            ("python-format".to_owned(), CheckKind::Quality),
            ("rust-lint".to_owned(), CheckKind::Quality),
            ("python-test".to_owned(), CheckKind::Test),
            ("rust-test".to_owned(), CheckKind::Test),
        ]
    );
    assert_eq!(plan.checks[1].command, "mask development rust lint");
    assert_eq!(plan.checks[1].program.as_deref(), Some("mask"));
}

#[test]
fn a_makefile_project_keeps_its_coverage_when_its_test_target_is_pytest() {
    // pydantic-extra-types: `make test` runs `uv run pytest`; coverage is configured.
    let pyproject = "[project]\nname = \"x\"\n[tool.coverage.run]\nsource = ['x']\n[tool.coverage.report]\nfail_under = 100\n";
    let dir = project(&[
        ("pyproject.toml", pyproject),
        ("uv.lock", ""),
        ("tests/test_x.py", ""),
        (
            "Makefile",
            ".PHONY: test\ntest:\n\tuv run pytest\n\nlint:\n\tuv run ruff check\n",
        ),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "Makefile");
    let c = plan.coverage.unwrap();
    assert_eq!(
        c.test_command.as_deref(),
        Some("uv run coverage run -m pytest")
    );
    assert!(
        c.reason.ends_with("the `test` target only runs pytest"),
        "{}",
        c.reason
    );
    assert!(plan.notes.is_empty());
    // A test target that does more: coverage is left out, and doctor says why.
    std::fs::write(
        dir.path().join("Makefile"),
        "test:\n\tuv run pytest\n\t./docs-check.sh\n",
    )
    .unwrap();
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert!(plan.coverage.is_none());
    assert!(
        plan.notes[0].contains("set [checks.coverage]"),
        "{:?}",
        plan.notes
    );
}

#[test]
fn cargo_python_and_node_layouts() {
    let cargo = project(&[("Cargo.toml", "[package]\nname = \"x\"")]);
    let plan = detect(cargo.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "cargo");
    assert_eq!(plan.checks.len(), 3, "clippy covers cargo check");
    assert_eq!(plan.checks[2].kind, CheckKind::Test);

    let uv = project(&[
            (
                "pyproject.toml",
                "[project]\nname='x'\n[tool.mypy]\nstrict=true\n[tool.coverage.run]\n[tool.pytest.ini_options]\n",
            ),
            ("uv.lock", ""),
        ]);
    let plan = detect(uv.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "python");
    let n = names(&plan);
    assert_eq!(
        n[0].0, "type-check",
        "no ruff: the project does not configure it"
    );
    assert_eq!(
        n[1],
        ("test".into(), "uv run pytest".into(), CheckKind::Test)
    );
    let coverage = plan.coverage.unwrap();
    assert_eq!(
        coverage.test_command.as_deref(),
        Some("uv run coverage run -m pytest"),
        "the suite runs once, under coverage"
    );
    assert_eq!(coverage.command, "uv run coverage json -q -o {report}");
    assert_eq!(
        coverage.reason,
        "coverage.py is configured in pyproject.toml"
    );

    let plain = project(&[("requirements.txt", "requests\n")]);
    let plan = detect(plain.path(), &ChecksConfig::default());
    assert!(
        plan.checks.is_empty(),
        "nothing configured, nothing guessed"
    );
    assert!(plan.coverage.is_none());

    let node = project(&[(
        "package.json",
        r#"{"scripts": {"test": "jest", "lint": "eslint .", "typecheck": "tsc --noEmit"}}"#,
    )]);
    let plan = detect(node.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "node");
    assert_eq!(
        names(&plan)
            .iter()
            .map(|n| n.1.as_str())
            .collect::<Vec<_>>(),
        [
            "npm run --silent lint",
            "npm run --silent typecheck",
            "npm test"
        ]
    );
    assert!(plan.coverage.is_none(), "jest without --coverage");
    let none = project(&[("README.md", "hi")]);
    assert_eq!(detect(none.path(), &ChecksConfig::default()).source, "none");
}

#[test]
fn a_c_project_is_tested_by_its_build_system_before_a_makefile_of_its_own() {
    let cmake = ("CMakeLists.txt", "project(cJSON C)\nenable_testing()\n");
    let demo = (
        "Makefile",
        "all:\n\tcc -o demo test.c\ntest: all\n\t./demo\n",
    );
    let dir = project(&[cmake, demo]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "cmake");
    assert!(
        plan.checks[0].command.contains("ctest"),
        "{:?}",
        plan.checks
    );
    // A Makefile that drives CMake is the project's own way in.
    let driver = (
        "Makefile",
        "test:\n\tcmake -B build && cmake --build build\n\tctest --test-dir build\n",
    );
    let dir = project(&[cmake, driver]);
    assert_eq!(
        detect(dir.path(), &ChecksConfig::default()).source,
        "Makefile"
    );
    // A language's manifest wins over CMake (a Python extension's build).
    let dir = project(&[
        cmake,
        (
            "pyproject.toml",
            "[project]\nname='x'\n[tool.pytest.ini_options]\n",
        ),
    ]);
    assert_eq!(
        detect(dir.path(), &ChecksConfig::default()).source,
        "python"
    );
    // A CI that runs the suite its own way judges the change its way; ralph's own suite
    // stands in for it where it cannot judge.
    let ci = (
            ".github/workflows/ci.yml",
            "on: [push]\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: mkdir build && cd build && cmake .. && make && ctest\n",
        );
    let dir = project(&[cmake, ci]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "cmake and CI");
    assert_eq!(plan.checks.len(), 2, "{:?}", plan.checks);
    assert!(plan.checks[0].fallback.is_some(), "{:?}", plan.checks[0]);
    assert!(plan.checks[1].name.starts_with("CI b"));
    assert!(plan.checks[1].fallback.is_none());
    assert!(plan
        .notes
        .iter()
        .any(|n| n.contains("the cmake tests run as the CI runs them")));
}

#[test]
fn a_ci_step_of_installs_and_known_checks_adds_no_second_run() {
    let dir = project(&[
            (
                "package.json",
                r#"{"scripts": {"test": "mocha", "lint": "eslint ."}}"#,
            ),
            ("yarn.lock", ""),
            (
                ".github/workflows/ci.yml",
                "on: [push]\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n      - run: yarn && yarn test && yarn lint\n      - run: yarn build && yarn test\n",
            ),
        ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let commands: Vec<String> = names(&plan).into_iter().map(|n| n.1).collect();
    // The second step builds first: the test after a build is not the plain test.
    assert_eq!(
        commands,
        ["yarn run lint", "yarn test", "yarn build && yarn test"]
    );
    assert!(
        plan.notes.iter().any(|n| n
            .contains("its checks are run already (`yarn && yarn test && yarn lint`), not again")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn a_node_project_runs_its_scripts_with_its_own_package_manager() {
    let package = r#"{"scripts": {"test": "jest --coverage", "lint": "eslint ."}}"#;
    for (lockfile, lint, test) in [
        ("yarn.lock", "yarn run lint", "yarn test"),
        ("pnpm-lock.yaml", "pnpm run lint", "pnpm test"),
        ("bun.lock", "bun run lint", "bun run test"),
        ("package-lock.json", "npm run --silent lint", "npm test"),
    ] {
        let dir = project(&[("package.json", package), (lockfile, "")]);
        let plan = detect(dir.path(), &ChecksConfig::default());
        let commands: Vec<String> = names(&plan).into_iter().map(|n| n.1).collect();
        assert_eq!(commands, [lint, test], "{lockfile}");
        // The test script collects coverage itself: its report is read after it.
        let coverage = plan.coverage.expect("jest --coverage");
        assert_eq!(coverage.test_command, None, "the suite runs as it is");
        assert!(
            coverage.reason.contains("jest --coverage"),
            "{}",
            coverage.reason
        );
    }
}

#[test]
fn a_ci_step_running_a_detected_command_is_not_run_twice() {
    let dir = project(&[
            ("Cargo.toml", "[package]\nname = \"x\""),
            (
                ".github/workflows/ci.yml",
                "on: [push]\nenv:\n  RUSTFLAGS: -Dwarnings\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n      - run: cargo test --features serde\n",
            ),
        ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let commands: Vec<&str> = plan.checks.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        commands.iter().filter(|c| c.contains("cargo test")).count(),
        2,
        "the plain run is the detected test; the feature run is added: {commands:?}"
    );
    assert!(commands.iter().any(|c| c.contains("--features serde")));
    assert_eq!(plan.source, "cargo and CI");
}

#[test]
fn configured_checks_win_over_detection() {
    let dir = project(&[("Cargo.toml", "[package]")]);
    let mut config = ChecksConfig::default();
    config
        .commands
        .insert("unit-test".into(), "make test".into());
    config.commands.insert("style".into(), "make lint".into());
    let plan = detect(dir.path(), &config);
    assert_eq!(plan.source, "config");
    assert_eq!(
        names(&plan),
        [
            ("style".into(), "make lint".into(), CheckKind::Quality),
            ("unit-test".into(), "make test".into(), CheckKind::Test),
        ]
    );
}

#[test]
fn the_checks_example_follows_the_language() {
    let rust = project(&[("Cargo.toml", "[package]")]);
    assert!(example(rust.path()).contains("test = \"cargo test\""));
    let py = project(&[("pyproject.toml", "")]);
    assert!(example(py.path()).starts_with("[checks]\n"));
    assert!(example(py.path()).contains("pytest"));
    let bare = project(&[("README.md", "hi")]);
    assert_eq!(example(bare.path()), "[checks]\ntest = \"make test\"");
}

#[test]
fn declared_checks_win_over_the_language() {
    let dir = project(&[
        ("Cargo.toml", "[package]"),
        (
            "Makefile",
            "test:\n\tcargo test --all\nlint:\n\tcargo clippy\n",
        ),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    assert_eq!(plan.source, "Makefile");
    assert_eq!(
        names(&plan)
            .iter()
            .map(|n| n.1.as_str())
            .collect::<Vec<_>>(),
        ["make lint", "make test", "cargo test"]
    );
    // The runner's own configuration stands in where `make test` cannot judge on the base.
    let own = &plan.checks[2];
    assert_eq!(own.name, "cargo-test");
    assert_eq!(own.fallback.as_ref().unwrap().for_checks, ["test"]);
    let pc = project(&[
        ("pyproject.toml", "[tool.ruff]\n[tool.pytest.ini_options]\n"),
        (".pre-commit-config.yaml", "repos: []\n"),
    ]);
    let plan = detect(pc.path(), &ChecksConfig::default());
    let n = names(&plan);
    assert_eq!(n[0].0, "pre-commit", "it stands for the linters");
    assert_eq!(n.len(), 2);
    assert!(plan.checks.iter().all(|c| !c.reason.is_empty()));
}

#[test]
fn detection_is_a_function_of_the_project_read_once() {
    // Pure: the same rules on files held in memory, no filesystem.
    let files: &[(&str, &str)] = &[
        (
            "pyproject.toml",
            "[project]\nname = \"pkg\"\n[tool.ruff]\n[tool.coverage.run]\n",
        ),
        ("uv.lock", ""),
        ("src/pkg/__init__.py", ""),
        ("tests/test_pkg.py", ""),
        (
            ".github/workflows/ci.yml",
            "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install tox coverage\n      - run: uv run pytest -m slow\n",
        ),
    ];
    let memory = Project::in_memory(Path::new("/p"), files);
    let plan = detect_in(&memory, &ChecksConfig::default());
    let commands: Vec<String> = names(&plan).into_iter().map(|n| n.1).collect();
    assert_eq!(
        commands,
        [
            "uv run ruff check --extend-exclude .ralph",
            "uv run pytest",
            "uv run pytest -m slow"
        ]
    );
    assert_eq!(
        plan.setup.as_ref().map(|s| s.command.as_str()),
        Some("uv sync --frozen --all-groups --all-extras")
    );
    // The same project on disk gives the same plan, and no file was read twice.
    let dir = project(files);
    let disk = Project::read(dir.path());
    let from_disk = detect_in(&disk, &ChecksConfig::default());
    assert_eq!(from_disk.checks, plan.checks);
    assert_eq!(from_disk.setup, plan.setup);
    assert!(disk.read_twice().is_empty(), "{:?}", disk.read_twice());
}

#[test]
fn ralphs_own_rust_lints_only_advise_where_the_project_does_not_run_them() {
    let advisory = |files: &[(&str, &str)]| -> Vec<(String, bool)> {
        let p = Project::in_memory(Path::new("/p"), files);
        detect_in(&p, &ChecksConfig::default())
            .checks
            .into_iter()
            .map(|c| (c.name, c.advisory.is_some()))
            .collect()
    };
    let cargo = ("Cargo.toml", "[package]\nname = \"x\"\n");
    // nh3: the CI runs pytest, never rustfmt or clippy.
    let ci_pytest = (
        ".github/workflows/ci.yml",
        "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n",
    );
    assert_eq!(
        advisory(&[cargo, ci_pytest]),
        [
            ("format".to_owned(), true),
            ("lint".to_owned(), true),
            ("test".to_owned(), false)
        ]
    );
    // A rustfmt configuration, clippy in the CI (spelled its own way): both count.
    let ci_clippy = (
        ".github/workflows/ci.yml",
        "on: [push]\nenv:\n  RUSTFLAGS: -Dwarnings\njobs:\n  c:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo clippy --tests -- -Dclippy::pedantic\n",
    );
    let counted = advisory(&[cargo, ("rustfmt.toml", "max_width = 100\n"), ci_clippy]);
    assert!(counted.iter().all(|(_, a)| !a), "{counted:?}");
    // `[lints.clippy]` in the manifest is the project's clippy.
    let lints = (
        "Cargo.toml",
        "[package]\nname = \"x\"\n[lints.clippy]\npedantic = \"warn\"\n",
    );
    assert_eq!(advisory(&[lints])[1], ("lint".to_owned(), false));
}

#[test]
fn every_language_of_the_project_is_checked() {
    let plan_of = |files: &[(&str, &str)]| {
        detect_in(
            &Project::in_memory(Path::new("/p"), files),
            &ChecksConfig::default(),
        )
    };
    let summary = |plan: &CheckPlan| -> Vec<(String, String, bool)> {
        plan.checks
            .iter()
            .map(|c| (c.name.clone(), c.command.clone(), c.advisory.is_some()))
            .collect()
    };
    // nh3: a maturin package whose CI runs pytest only.
    let nh3 = plan_of(&[
        ("Cargo.toml", "[package]\nname = \"nh3\"\n"),
        (
            "pyproject.toml",
            "[build-system]\nrequires = [\"maturin>=1\"]\nbuild-backend = \"maturin\"\n",
        ),
        ("tests/test_nh3.py", "def test_clean(): pass\n"),
    ]);
    assert_eq!(nh3.source, "python and cargo");
    let python = if crate::process::on_path("python") {
        "python"
    } else {
        "python3"
    };
    assert_eq!(
        summary(&nh3),
        [
            ("test".into(), format!("{python} -m pytest"), false),
            (
                "cargo-format".into(),
                "cargo fmt --all -- --check".into(),
                true
            ),
            (
                "cargo-lint".into(),
                "cargo clippy --all-targets -- -D warnings".into(),
                true
            ),
            ("cargo-test".into(), "cargo test".into(), false),
        ]
    );
    assert_eq!(nh3.checks[3].kind, CheckKind::Test);
    // A Rust crate whose `tests/` are Rust, with a requirements.txt for its docs: no pytest.
    let crate_ = plan_of(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("requirements.txt", "mkdocs\n"),
        ("tests/it.rs", "#[test]\nfn t() {}\n"),
    ]);
    assert_eq!(crate_.source, "cargo");
    // A Python project with a package.json of scripts: its npm checks too, named as such.
    let both = plan_of(&[
        (
            "pyproject.toml",
            "[project]\nname='x'\n[tool.pytest.ini_options]\n",
        ),
        (
            "package.json",
            r#"{"scripts": {"lint": "eslint web", "test": "jest"}}"#,
        ),
    ]);
    assert_eq!(both.source, "python and node");
    let names: Vec<&str> = both.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["test", "node-lint", "node-test"]);
    assert_eq!(both.checks[2].kind, CheckKind::Test);
}

#[test]
fn each_compiler_a_ci_job_configures_is_a_check_of_its_own() {
    let dir = project(&[
        ("CMakeLists.txt", "project(x CXX)\nenable_testing()\n"),
        (
            ".github/workflows/ci.yml",
            "on: [push]\njobs:\n  b:\n    strategy:\n      matrix:\n        cxx: [sh, true, definitely-absent-c++]\n    runs-on: ubuntu-latest\n    steps:\n      - run: cmake -B build -DCMAKE_CXX_COMPILER=${{ matrix.cxx }}\n      - run: cmake --build build\n      - name: Test\n        run: ctest --test-dir build\n",
        ),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let names: Vec<&str> = plan.checks.iter().map(|c| c.name.as_str()).collect();
    // (`sh` and `true` stand for two compilers here; the third is not here.)
    assert_eq!(
        names,
        ["test", "CI b (cxx sh): Test", "CI b (cxx true): Test"]
    );
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "not provided here: b (cxx definitely-absent-c++) (the compiler `definitely-absent-c++` is not here)"
        )),
        "{:?}",
        plan.notes
    );
}

#[test]
fn a_check_the_ci_runs_after_its_build_takes_the_detected_ones_place() {
    // actions/toolkit: the CI installs, bootstraps and builds the packages, then runs the
    // suite with words for jest and the lint; ralph's own runs of them would find no build.
    let package = r#"{"scripts": {"test": "jest", "lint": "eslint .", "build": "tsc", "format-check": "prettier --check ."}}"#;
    let workflow = |build: &str| {
        format!("on: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm ci\n{build}      - name: npm test\n        run: npm test -- --runInBand --forceExit\n      - name: Lint\n        run: npm run lint\n")
    };
    let built = workflow("      - name: Compile\n        run: npm run build\n");
    let dir = project(&[
        ("package.json", package),
        ("package-lock.json", "{}"),
        (".github/workflows/ci.yml", &built),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let commands: Vec<(String, String)> = names(&plan).into_iter().map(|n| (n.0, n.1)).collect();
    assert_eq!(
        commands,
        [
            (
                "format".to_owned(),
                "npm run --silent format-check".to_owned()
            ),
            ("CI build: Lint".to_owned(), "npm run lint".to_owned()),
            (
                "CI build: npm test".to_owned(),
                "npm test -- --runInBand --forceExit".to_owned()
            ),
            ("test".to_owned(), "npm test".to_owned()),
            ("lint".to_owned(), "npm run --silent lint".to_owned()),
        ],
        "{:?}",
        plan.checks
    );
    // ralph's own runs stand in, each for the CI run that took its place.
    let stand_ins: Vec<(&str, Vec<String>)> = plan
        .checks
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.fallback.as_ref()?.for_checks.clone())))
        .collect();
    assert_eq!(
        stand_ins,
        [
            ("test", vec!["CI build: npm test".to_owned()]),
            ("lint", vec!["CI build: Lint".to_owned()])
        ]
    );
    assert!(
        plan.notes.iter().any(|n| n
            == "`npm test` runs as the CI runs it, after its job's steps (Compile): `CI build: npm test`; ralph's own run stands in where that cannot run on the base"),
        "{:?}",
        plan.notes
    );
    // A job that only installs prepares nothing ralph's setup does not: ralph's own checks
    // stay, the CI's same lint is not run twice, and its suite with more words is its own.
    let installs = workflow("");
    let dir = project(&[
        ("package.json", package),
        ("package-lock.json", "{}"),
        (".github/workflows/ci.yml", &installs),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let kept: Vec<String> = names(&plan).into_iter().map(|n| n.0).collect();
    assert_eq!(kept, ["format", "lint", "test", "CI build: npm test"]);
    // After a build, a run of fewer tests (a path, an expression) is the CI's own check beside
    // ralph's whole suite.
    let narrower = built.replace("--runInBand --forceExit", "--runInBand packages/io");
    let dir = project(&[
        ("package.json", package),
        ("package-lock.json", "{}"),
        (".github/workflows/ci.yml", &narrower),
    ]);
    let plan = detect(dir.path(), &ChecksConfig::default());
    let beside: Vec<String> = names(&plan).into_iter().map(|n| n.0).collect();
    assert_eq!(
        beside,
        [
            "format",
            "CI build: Lint",
            "test",
            "CI build: npm test",
            "lint"
        ]
    );
}

#[test]
fn a_detected_quality_checks_tox_environment_is_built_in_the_setup() {
    let mut plan = CheckPlan::of(vec![
        CheckSpec::new("flake8", "tox -e flake8"),
        CheckSpec::new("test", "tox -e py"),
    ]);
    plan.checks[1].kind = CheckKind::Test;
    build_environments_in_setup(&mut plan);
    assert_eq!(plan.checks[0].command, "tox --skip-pkg-install -e flake8");
    assert_eq!(
        plan.checks[1].command, "tox -e py",
        "a test env tests the change's package"
    );
    let setup = plan.setup.unwrap();
    assert_eq!(setup.command, "tox --notest -e flake8");
    assert!(!setup.configured, "its failure refuses nothing");
}
