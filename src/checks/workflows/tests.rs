//! The tests of `workflows`.

use super::*;
use crate::checks::tools::CheckKind;

fn read_one(text: &str) -> Ci {
    read_here(text, &|_| Ok(Vec::new()))
}

/// `text` read on a machine that provides what `provided` says.
fn read_here(text: &str, provided: &Provided) -> Ci {
    let mut ci = Ci::default();
    let here = Here {
        dir_exists: &|d| d != "elsewhere",
        provided,
    };
    read_workflow(".github/workflows/ci.yml", text, &here, &mut ci);
    ci
}

const FEATURES: &str = r#"
name: CI
on:
  push:
  pull_request:
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        features: ["", "serde"]
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
      - name: Test
        run: cargo test --features "${{ matrix.features }}" --tests
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: cargo clippy --all-targets -- -D warnings
      - name: Live API
        run: cargo test --test live -- --key ${{ secrets.API_KEY }}
      - name: Publish
        run: cargo publish --token ${{ secrets.CRATES_TOKEN }}
"#;

#[test]
fn a_feature_matrix_becomes_one_test_check_per_combination_on_linux() {
    let ci = read_one(FEATURES);
    let commands: Vec<(&str, &str, CheckKind)> = ci
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.command.as_str(), c.kind))
        .collect();
    assert_eq!(
        commands,
        [
            (
                "CI test: Test",
                "cargo test --features \"\" --tests",
                CheckKind::Test
            ),
            (
                "CI test (features serde): Test",
                "cargo test --features \"serde\" --tests",
                CheckKind::Test
            ),
            (
                "CI lint: cargo clippy --all-targets -- -D warnings",
                "cargo clippy --all-targets -- -D warnings",
                CheckKind::Quality
            ),
        ]
    );
    assert!(ci.checks[1]
        .reason
        .contains("(matrix features=serde, os=ubuntu-latest)"));
    let notes = ci.notes.join("\n");
    assert!(
        notes.contains("`Live API`: left out, it needs a secret"),
        "{notes}"
    );
    assert!(
        !notes.contains("Publish"),
        "a publish is not ralph's: {notes}"
    );
    assert!(
        notes.contains(
            "`dtolnay/rust-toolchain@stable` is not run (it would provide a Rust toolchain"
        ),
        "{notes}"
    );
}

#[test]
fn workflows_that_do_not_run_on_pushes_services_and_setup_steps_are_told_apart() {
    let ci = read_one(
        "on: release\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n",
    );
    assert!(ci.checks.is_empty());
    let ci = read_one("on: [push]\njobs:\n  db:\n    runs-on: ubuntu-latest\n    services:\n      postgres:\n        image: postgres\n    steps:\n      - run: pytest\n  unit:\n    runs-on: ubuntu-latest\n    env:\n      PYTHONWARNINGS: error\n    defaults:\n      run:\n        working-directory: python\n    steps:\n      - run: pip install -e .[test]\n      - run: |\n          python -m pytest -m 'not slow'\n");
    assert_eq!(ci.checks.len(), 1);
    assert_eq!(ci.checks[0].kind, CheckKind::Test);
    // The install runs first, in the job, as a setup does.
    let job = ci.checks[0].job.as_ref().unwrap();
    assert_eq!(job.before.len(), 1);
    assert_eq!(
        job.before[0].command,
        "cd 'python' && env PYTHONWARNINGS='error' bash -ec 'pip install -e .[test]'"
    );
    assert!(job.before[0].installs);
    assert_eq!(
        ci.checks[0].command,
        "cd 'python' && bash -ec 'python -m pytest -m '\\''not slow'\\'''"
    );
    // Warnings made errors are allowed for the tests, and judged by rule.
    assert_eq!(
        ci.checks[0].relaxed.as_deref(),
        Some("PYTHONWARNINGS=error")
    );
    assert!(ci.notes[0].contains("job `db`: left out, it needs the service(s) postgres"));
}

#[test]
fn a_check_runs_after_the_steps_before_it_that_build_what_it_needs() {
    let ci = read_one("on: [push]\njobs:\n  sdist:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m pip install --upgrade pip\n      - run: python setup.py sdist\n      - name: Upload\n        run: twine upload dist/* --password ${{ secrets.PYPI }}\n      - name: Test sdist\n        run: |\n          cd tmp\n          python setup.py test\n");
    assert_eq!(ci.checks.len(), 1);
    assert_eq!(
        ci.checks[0].command,
        "bash -ec 'cd tmp\npython setup.py test'"
    );
    // The install and the sdist run first, in order, in the job's tree; the upload is left out.
    let before: Vec<(&str, bool)> = ci.checks[0]
        .job
        .as_ref()
        .unwrap()
        .before
        .iter()
        .map(|s| (s.command.as_str(), s.installs))
        .collect();
    assert_eq!(
        before,
        [
            ("python -m pip install --upgrade pip", true),
            ("python setup.py sdist", false)
        ]
    );
    assert!(ci.notes.is_empty(), "{:?}", ci.notes);
}

#[test]
fn label_triggered_jobs_other_repositories_and_missing_directories_are_left_out() {
    let labeled = "on:\n  pull_request:\n    types: [labeled]\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n";
    assert!(
        read_one(labeled).checks.is_empty(),
        "not run on a PR's commits"
    );
    let synced = labeled.replace("[labeled]", "[opened, synchronize]");
    assert_eq!(read_one(&synced).checks.len(), 1);
    let ci = read_one("on: [push]\njobs:\n  downstream:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v5\n        with:\n          repository: org/consumer\n          path: consumer\n      - run: pytest\n  here:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v5\n        with:\n          repository: ${{ github.repository }}\n      - run: pytest\n        working-directory: elsewhere\n      - run: mypy\n");
    assert_eq!(
        ci.checks
            .iter()
            .map(|c| c.command.as_str())
            .collect::<Vec<_>>(),
        ["mypy"]
    );
    assert_eq!(
        ci.scripts.get("CI here: mypy").map(String::as_str),
        Some("mypy")
    );
    let notes = ci.notes.join("\n");
    assert!(
        notes.contains(
            "job `downstream`: left out, it checks out and tests another repository (org/consumer)"
        ),
        "{notes}"
    );
    assert!(
        notes.contains(
            "`pytest`: left out, its working directory `elsewhere` is not in the repository"
        ),
        "{notes}"
    );
}

#[test]
fn steps_are_classified_by_what_they_run() {
    assert_eq!(
        classify("npm run test:unit"),
        StepKind::Check(CheckKind::Test)
    );
    assert_eq!(classify("tox -e py311"), StepKind::Check(CheckKind::Test));
    assert_eq!(classify("mypy src"), StepKind::Check(CheckKind::Quality));
    assert_eq!(
        classify("cargo build --release"),
        StepKind::Check(CheckKind::Quality)
    );
    assert_eq!(classify("poetry install --with dev"), StepKind::Setup);
    assert_eq!(classify("npm ci"), StepKind::Setup);
    assert_eq!(classify("echo done"), StepKind::Other);
}

#[test]
fn matrix_includes_and_excludes_and_conditions_apply() {
    let strategy = YamlLoader::load_from_str(
            "matrix:\n  py: ['3.10', '3.12']\n  extra: [a, b]\n  exclude:\n    - py: '3.10'\n      extra: b\n  include:\n    - py: '3.13'\n      extra: c\n",
        )
        .unwrap()
        .remove(0);
    let combos = combinations(&strategy);
    assert_eq!(combos.len(), 4, "{combos:?}");
    let empty =
        YamlLoader::load_from_str("matrix:\n  include:\n    - rust: stable\n      features:\n")
            .unwrap()
            .remove(0);
    assert_eq!(combinations(&empty).len(), 1, "the include entry alone");
    assert_eq!(
        combinations(&empty)[0].get("features").map(String::as_str),
        Some(""),
        "a key with no value is the empty string, as in a workflow run"
    );
    let m: BTreeMap<String, String> = [("os".to_owned(), "windows-latest".to_owned())].into();
    let env = BTreeMap::new();
    let cx = expr::Context {
        matrix: &m,
        env: &env,
        event: "pull_request",
    };
    assert_eq!(
        expr::condition("matrix.os == 'ubuntu-latest'", &cx),
        Ok(false)
    );
    assert_eq!(
        expr::condition("${{ runner.os == 'Linux' }}", &cx),
        Ok(true)
    );
    assert_eq!(
        expr::condition("matrix.bench != ''", &cx),
        Ok(false),
        "a key the combination lacks is empty"
    );
    assert_eq!(
        expr::condition("github.event_name == 'push'", &cx),
        Ok(false),
        "the run stands for a pull request"
    );
}

#[test]
fn the_combination_cap_counts_only_what_runs_here_and_names_what_it_drops() {
    // 3 systems × 6 Pythons = 18 combinations, 6 on Linux, and one `include` on Linux: the
    // include is kept (the cap once fell on the cartesian product before the OS filter).
    let wide = r#"
on: [push]
jobs:
  t:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest, macos-latest]
        python: ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
        include:
          - os: ubuntu-latest
            python: "3.14"
    steps:
      - run: python${{ matrix.python }} -m pytest
"#;
    let ci = read_one(wide);
    assert_eq!(ci.checks.len(), 7, "{:?}", ci.checks);
    assert!(ci.checks.iter().any(|c| c.name.contains("python 3.14")));
    assert!(!ci.notes.iter().any(|n| n.contains("only the first")));
    // 20 Linux combinations: 16 used, the other 4 named.
    let many = r#"
on: [push]
jobs:
  t:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        a: [1, 2, 3, 4, 5]
        b: [w, x, y, z]
    steps:
      - run: make test A=${{ matrix.a }} B=${{ matrix.b }}
"#;
    let ci = read_one(many);
    let note = ci
        .notes
        .iter()
        .find(|n| n.contains("only the first 16 of its 20 combinations"))
        .expect("the cap is named");
    assert!(
        note.contains("left out: CI t (a 5, b w); CI t (a 5, b x)"),
        "{note}"
    );
}

#[test]
fn a_check_is_named_by_the_matrix_keys_its_step_uses_and_no_key_that_prefixes_one() {
    let ci = read_one(
        r#"
on: [push]
jobs:
  t:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["a", "b"]
        python: ["3.11", "3.12"]
    steps:
      - run: python${{ matrix.python }} -m pytest
"#,
    );
    let names: Vec<&str> = ci.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "CI t (python 3.11): python3.11 -m pytest",
            "CI t (python 3.12): python3.12 -m pytest"
        ]
    );
}

#[test]
fn only_workflows_that_would_run_on_a_pull_request_are_read_and_the_others_named() {
    let job = "jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n";
    for (on, runs) in [
        ("on:\n  push:\n    branches: [ $default-branch ]\n", false),
        ("on:\n  push:\n    branches: [main]\n", true),
        ("on:\n  push:\n    branches: ['release/*']\n", false),
        ("on:\n  push:\n    branches: ['**']\n", true),
        ("on:\n  push:\n    tags: ['v*']\n", false),
        (
            "on:\n  push:\n    branches-ignore: [main, master, trunk, develop, default]\n",
            false,
        ),
        ("on:\n  pull_request:\n    branches: [main]\n", true),
        ("on: [workflow_dispatch]\n", false),
        ("on:\n  schedule:\n    - cron: '0 0 * * *'\n", false),
        ("on:\n  release:\n    types: [published]\n", false),
        ("on: push\n", true),
    ] {
        let ci = read_one(&format!("{on}{job}"));
        assert_eq!(!ci.checks.is_empty(), runs, "{on}");
        if !runs {
            assert!(
                ci.notes.iter().any(
                    |n| n.contains("left out") && n.contains("would not run on a pull request")
                ),
                "{on}: {:?}",
                ci.notes
            );
        }
    }
    let ci = read_one(&format!("on: [workflow_dispatch]\n{job}"));
    assert!(
        ci.notes[0].contains("it runs only on workflow_dispatch"),
        "{:?}",
        ci.notes
    );
}

#[test]
fn expressions_a_run_fills_are_filled_and_those_only_a_run_has_leave_the_step_out() {
    let ci = read_one("on:\n  push:\n  workflow_dispatch:\n    inputs:\n      level:\n        default: fast\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - working-directory: ${{ github.workspace }}/python\n        run: pytest --out ${{ runner.temp }}/r --level ${{ inputs.level }} --os ${{ runner.os }}\n      - run: pytest --sha ${{ github.sha }}\n");
    assert_eq!(ci.checks.len(), 1, "{:?}", ci.notes);
    assert_eq!(
        ci.checks[0].command,
        "cd 'python' && bash -ec 'pytest --out $RUNNER_TEMP/r --level fast --os Linux'"
    );
    assert!(
        ci.notes
            .iter()
            .any(|n| n.contains("it needs `github.sha`, which only a workflow run has")),
        "{:?}",
        ci.notes
    );
}

#[test]
fn a_test_step_runs_with_warnings_allowed_and_a_lint_step_as_written() {
    let ci = read_one(
        r#"
on: [push, pull_request]
env:
  RUSTFLAGS: -Dwarnings
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: cargo test --features float_roundtrip
      - run: cargo clippy --all-targets -- -D warnings
      - run: cmake -B build -DCMAKE_COMPILE_WARNING_AS_ERROR=ON && cmake --build build && ctest --test-dir build
"#,
    );
    let by_name = |n: &str| ci.checks.iter().find(|c| c.command.contains(n)).unwrap();
    let test = by_name("cargo test");
    assert!(!test.command.contains("warnings"), "{}", test.command);
    assert_eq!(test.relaxed.as_deref(), Some("RUSTFLAGS=-Dwarnings"));
    let lint = by_name("clippy");
    assert!(
        lint.command.contains("RUSTFLAGS='-Dwarnings'"),
        "{}",
        lint.command
    );
    assert!(lint.command.contains("-- -D warnings"));
    assert_eq!(lint.relaxed, None);
    let cmake = by_name("ctest");
    // The configure prepares the test, with warnings allowed as the test is run.
    let configure = &cmake.job.as_ref().unwrap().before[0];
    assert!(
        configure
            .command
            .contains("CMAKE_COMPILE_WARNING_AS_ERROR=OFF"),
        "{}",
        configure.command
    );
    assert!(cmake
        .relaxed
        .as_deref()
        .unwrap()
        .contains("CMAKE_COMPILE_WARNING_AS_ERROR=ON"));
}

#[test]
fn a_build_prepares_the_checks_after_it_and_is_the_check_where_none_follows() {
    assert_eq!(classify("cmake -B build -S ."), StepKind::Setup);
    assert_eq!(classify("cd build && cmake .."), StepKind::Setup);
    assert_eq!(classify("cmake --build build -j2"), StepKind::Build);
    assert_eq!(classify("cd build && make"), StepKind::Build);
    assert_eq!(classify("bun run build"), StepKind::Build);
    assert_eq!(
        classify("env CI=1 bash -ec 'cd build && ctest'"),
        StepKind::Check(CheckKind::Test)
    );
    let ci = read_one(
        r#"
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: mkdir build
      - name: Configure
        run: cd build && cmake ..
      - name: Build
        run: cd build && make
      - name: Test
        run: cd build && ctest
  web:
    runs-on: ubuntu-latest
    steps:
      - run: npm ci
      - name: Build
        run: npm run build
      - run: echo built
"#,
    );
    let seen: Vec<(&str, CheckKind, Vec<&str>)> = ci
        .checks
        .iter()
        .map(|c| {
            let before = c.job.as_ref().unwrap().before.iter();
            (
                c.name.as_str(),
                c.kind,
                before.map(|s| s.label.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "CI build: Test",
                CheckKind::Test,
                vec!["mkdir build", "Configure", "Build"]
            ),
            ("CI web: Build", CheckKind::Quality, vec!["npm ci"]),
        ]
    );
    let configure = &ci.checks[0].job.as_ref().unwrap().before[1];
    assert!(
        configure.installs,
        "a configure may download: the setup's network"
    );
}

#[test]
fn a_folder_earlier_steps_make_is_a_later_steps_and_each_compiler_its_own_check() {
    let ci = read_one(
        r#"
on: [push, pull_request]
env:
  BUILD_TYPE: Release
jobs:
  build-ubuntu:
    strategy:
      matrix:
        os: [ubuntu-22.04, ubuntu-24.04]
        compiler: [g++, clang++]
    runs-on: ${{ matrix.os }}
    steps:
      - name: Configure CMake
        run: cmake -S "${{github.workspace}}" -B "${{github.workspace}}/build" -DCMAKE_CXX_COMPILER=${{matrix.compiler}}
      - name: Build
        run: cmake --build "${{github.workspace}}/build" --config $BUILD_TYPE
      - name: Test
        working-directory: ${{github.workspace}}/elsewhere/test
        run: ctest -C $BUILD_TYPE --output-on-failure
"#,
    );
    assert!(
        ci.notes
            .iter()
            .all(|n| !n.contains("not in the repository")),
        "{:?}",
        ci.notes
    );
    let names: Vec<&str> = ci.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "CI build-ubuntu (compiler g++): Test",
            "CI build-ubuntu (compiler clang++): Test"
        ]
    );
    assert!(ci.checks[1].job.as_ref().unwrap().before[0]
        .command
        .contains("clang++"));
    // Another runner with the same steps is the same check; its build is no check of its own.
}

#[test]
fn a_step_named_by_an_expression_is_named_by_its_value() {
    let ci = read_one(
        "on: [push]\njobs:\n  build:\n    strategy:\n      matrix:\n        env: [lint, format]\n    runs-on: ubuntu-latest\n    steps:\n      - name: Run ${{ matrix.env }}\n        run: tox -e ${{ matrix.env }}\n",
    );
    let names: Vec<&str> = ci.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "CI build (env lint): Run lint",
            "CI build (env format): Run format"
        ]
    );
}

#[test]
fn tox_and_nox_environments_that_lint_are_quality_checks() {
    let quality = StepKind::Check(CheckKind::Quality);
    let test = StepKind::Check(CheckKind::Test);
    assert_eq!(classify("tox -e isort,lint"), quality);
    assert_eq!(classify("python -m tox -e docs"), quality);
    assert_eq!(classify("nox -s lint"), quality);
    assert_eq!(classify("tox -e lint,py312"), test);
    assert_eq!(classify("tox"), test);
    assert_eq!(classify("nox -s tests-3.12"), test);
}

#[test]
fn a_tox_step_wrapped_in_its_variables_builds_with_the_network_and_runs_offline() {
    let ci = read_one(
        "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python -m pip install tox\n      - name: Tox tests\n        run: tox\n        env:\n          DJANGO: '4.2'\n",
    );
    let check = &ci.checks[0];
    assert_eq!(
        check.command,
        "env DJANGO='4.2' bash -ec 'tox --skip-pkg-install'"
    );
    let before: Vec<(&str, &str, bool)> = check
        .job
        .as_ref()
        .unwrap()
        .before
        .iter()
        .map(|s| (s.label.as_str(), s.command.as_str(), s.installs))
        .collect();
    assert_eq!(
        before,
        [
            (
                "python -m pip install tox",
                "python -m pip install tox",
                true
            ),
            (
                "Tox tests (its environments)",
                "env DJANGO='4.2' bash -ec 'tox --notest'",
                true
            ),
        ]
    );
}

#[test]
fn a_check_step_that_installs_first_installs_as_a_step_before_it() {
    let ci = read_one(
        "on: [push]\njobs:\n  upload:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Compile artifact package\n        run: |\n          npm ci\n          npm run tsc\n      - run: pip install -e . && pytest -q\n      - run: echo \"go\" && pytest tests\n",
    );
    type Seen<'a> = Vec<(&'a str, Vec<(&'a str, &'a str, bool)>)>;
    let seen: Seen = ci
        .checks
        .iter()
        .map(|c| {
            let before = c.job.as_ref().unwrap().before.iter();
            (
                c.command.as_str(),
                before
                    .map(|s| (s.label.as_str(), s.command.as_str(), s.installs))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "npm run tsc",
                vec![("Compile artifact package (its installs)", "npm ci", true)]
            ),
            (
                "pytest -q",
                vec![(
                    "pip install -e . && pytest -q (its installs)",
                    "pip install -e .",
                    true
                )]
            ),
            // Quoted words: the script is kept whole.
            ("echo \"go\" && pytest tests", vec![]),
        ]
    );
}

#[test]
fn step_conditions_are_evaluated_and_undecidable_ones_named() {
    let ci = read_one(
        r#"
on: [push, pull_request]
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        py: ['3.12', '3.13t']
    steps:
      - name: Tests
        run: pytest
      - name: Threads
        if: contains(matrix.py, 't')
        run: pytest --parallel-threads=auto
      - name: Cached
        if: steps.cache.outputs.cache-hit != 'true'
        run: pytest -m slow
      - name: On pushes
        if: github.event_name == 'push'
        run: pytest -m push
  other:
    runs-on: ${{ fromJSON(needs.plan.outputs.runner) }}
    steps:
      - run: pytest -m other
"#,
    );
    let commands: Vec<&str> = ci.checks.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(
        commands
            .iter()
            .filter(|c| c.contains("--parallel-threads"))
            .count(),
        1,
        "only on the free-threaded Python: {commands:?}"
    );
    assert!(
        !commands
            .iter()
            .any(|c| c.contains("-m slow") || c.contains("-m push") || c.contains("-m other")),
        "{commands:?}"
    );
    let notes = ci.notes.join("\n");
    assert!(
        notes.contains("`Cached`: left out, its condition `steps.cache.outputs.cache-hit != 'true'` cannot be decided here"),
        "{notes}"
    );
    assert!(notes.contains("job `test`: not provided here: test (os windows-latest, py 3.12) (it runs on another OS)"), "{notes}");
    assert!(
        notes.contains("job `other`: not provided here: its runner cannot be told"),
        "{notes}"
    );
}

#[test]
fn a_matrix_runs_the_interpreters_here_and_names_the_others() {
    let text = r#"
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.8", "3.9", "3.10", "3.11", "3.12"]
    steps:
      - run: pip install tox
      - run: tox -e py
"#;
    // Two of the five Pythons are here.
    let here = |c: &BTreeMap<String, String>| match c.get("python").map(String::as_str) {
        Some(v @ ("3.11" | "3.12")) => Ok(vec![format!("/py/{v}/bin")]),
        Some(v) => Err(format!("Python {v} is not here")),
        None => Ok(Vec::new()),
    };
    let ci = read_here(text, &here);
    let paths: Vec<Vec<String>> = ci
        .checks
        .iter()
        .map(|c| c.job.as_ref().unwrap().path.clone())
        .collect();
    assert_eq!(paths, [vec!["/py/3.11/bin"], vec!["/py/3.12/bin"]]);
    let notes = ci.notes.join("\n");
    assert!(
        notes.contains("job `test`: not provided here: test (python 3.8) (Python 3.8 is not here); test (python 3.9) (Python 3.9 is not here); test (python 3.10) (Python 3.10 is not here)"),
        "{notes}"
    );
    // None here: one instance runs with what is here, and says so.
    let ci = read_here(text, &|c| match c.get("python") {
        Some(v) => Err(format!("Python {v} is not here")),
        None => Ok(Vec::new()),
    });
    assert_eq!(ci.checks.len(), 1, "{:?}", ci.checks);
    assert!(
        ci.notes.iter().any(|n| n.contains(
            "none of its combinations is provided here; test (python 3.8) runs with what is here"
        )),
        "{:?}",
        ci.notes
    );
}

#[test]
fn a_browser_install_with_its_system_libraries_is_left_out_and_named() {
    let ci = read_one(
        r#"
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Install browsers
        run: npx playwright install --with-deps chromium
      - name: Install more
        run: yarn playwright install-deps
      - run: npm test
"#,
    );
    let before: Vec<&str> = ci.checks[0]
        .job
        .as_ref()
        .unwrap()
        .before
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert!(before.is_empty(), "{before:?}");
    let notes = ci.notes.join("\n");
    assert!(
        notes.contains("`Install browsers`: left out, it installs into the system"),
        "{notes}"
    );
}
