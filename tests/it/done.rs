//! The project's own definition of done, through the binary: only the implementer's work is
//! committed (never what the checks left behind, `.gitignore` or not).

use crate::common::git;
use crate::compete::{run, Repo, Setup};

/// An implementer that claims success, changes nothing and leaves only bytecode of its own.
const IDLE: &str = r#"cat > /dev/null
mkdir -p __pycache__ && echo bytecode > __pycache__/scratch.cpython-311.pyc
echo '{"summary":"done","checkboxes_completed":["req_1"]}'"#;

#[test]
fn check_by_products_never_make_a_change_and_are_never_committed() {
    // No .gitignore for by-products: the checks leave bytecode, a coverage file and a report.
    let checks = "[checks]\ntest = \"mkdir -p __pycache__ && echo pyc > __pycache__/lib.cpython-311.pyc && echo data > .coverage && echo '<testsuite/>' > junit.xml && sh test.sh\"\n";
    let repo = Repo::with(Setup {
        implementer: IDLE,
        checks,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the implementation changed nothing"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("diff: +0 −0 in 0 file(s)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("left out of the commit as by-products: __pycache__/scratch.cpython-311.pyc"),
        "{}",
        out.stderr
    );
    // Nothing was committed: the branch is where the base is.
    let base = git(&repo.root, &["rev-parse", "main"]);
    let branch = git(&repo.root, &["rev-parse", "ralph/3-add-a-greet-function"]);
    assert_eq!(base, branch);
}

#[test]
fn a_passing_change_commits_the_implementers_files_and_no_by_product() {
    let checks = "[checks]\ntest = \"mkdir -p __pycache__ && echo pyc > __pycache__/lib.cpython-311.pyc && echo data > .coverage && sh test.sh\"\n";
    let repo = Repo::with(Setup {
        checks,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = git(
        &repo.remote,
        &[
            "ls-tree",
            "-r",
            "--name-only",
            "ralph/3-add-a-greet-function",
        ],
    );
    assert!(files.contains("lib.sh"), "{files}");
    assert!(
        !files.contains("__pycache__") && !files.contains(".coverage"),
        "{files}"
    );
}

/// Writes `files` into the repository and pushes them as a commit on `main`.
fn commit_files(repo: &Repo, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    crate::common::commit_all(&repo.root, "fixture");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
}

/// A crate whose `halve` rounds the wrong way, with a CI workflow whose feature matrix turns on
/// `exact` — the feature the regression test is gated behind.
const CRATE: [(&str, &str); 5] = [
    (
        "Cargo.toml",
        "[package]\nname = \"halves\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\nexact = []\n",
    ),
    (
        "src/lib.rs",
        "/// Half of `n`, rounded up.\npub fn halve(n: u32) -> u32 {\n    n / 2\n}\n",
    ),
    (
        "tests/basic.rs",
        "#[test]\nfn halves_even_numbers() {\n    assert_eq!(halves::halve(4), 2);\n}\n",
    ),
    (
        ".github/workflows/ci.yml",
        "name: CI\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        features: [\"\", \"exact\"]\n    steps:\n      - uses: actions/checkout@v4\n      - uses: dtolnay/rust-toolchain@stable\n      - run: cargo test --features \"${{ matrix.features }}\" --tests\n",
    ),
    (".gitignore", "target/\n.ralph/worktrees/\n.ralph/runs/\n.ralph/cache/\n"),
];

const HALVES_ISSUE: &str = "---\ntitle: Round halves up\nlabels: [ready]\n---\n## Tasks\n- [ ] `halve` rounds odd numbers up\n";

/// The regression test, behind the feature CI turns on.
const GATED_TEST: &str = "printf '#![cfg(feature = \"exact\")]\\n\\n#[test]\\nfn rounds_odd_numbers_up() {\\n    assert_eq!(halves::halve(3), 2);\\n}\\n' > tests/exact.rs";

fn halves(implementer: &str) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks: "",
        issues: &[(3, HALVES_ISSUE)],
        ..Setup::default()
    });
    commit_files(&repo, &CRATE);
    repo
}

#[test]
fn a_test_only_the_ci_feature_matrix_runs_rejects_the_broken_fix_and_passes_the_real_one() {
    if !ralph::process::on_path("cargo") {
        eprintln!("skipped: cargo is not installed");
        return;
    }
    let arbiter = "cat > /dev/null\ncase \"$RALPH_ROLE\" in\n  verify) echo '{\"satisfied\":[{\"id\":\"req_1\",\"evidence\":\"halve\"}],\"unsatisfied\":[]}';;\n  *) exit 1;;\nesac";
    // The test alone: under plain `cargo test` it compiles to nothing and passes.
    let broken = format!(
        "cat > /dev/null\n{GATED_TEST}\necho '{{\"summary\":\"test\",\"checkboxes_completed\":[\"req_1\"]}}'"
    );
    let repo = halves(&broken);
    std::fs::write(
        repo.tools.join("arbiter.sh"),
        format!("#!/bin/sh\n{arbiter}\n"),
    )
    .unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("CI test (features exact): cargo test --features \"exact\" --tests")
            && out.stderr.contains(
                "check `CI test (features exact): cargo test --features \"exact\" --tests` failed"
            ),
        "{}",
        out.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "escalated");

    // The fix with its test: accepted.
    let fixed = format!(
        "cat > /dev/null\n{GATED_TEST}\nprintf '/// Half of `n`, rounded up.\\npub fn halve(n: u32) -> u32 {{\\n    n.div_ceil(2)\\n}}\\n' > src/lib.rs\necho '{{\"summary\":\"div_ceil\",\"checkboxes_completed\":[\"req_1\"]}}'"
    );
    let repo = halves(&fixed);
    std::fs::write(
        repo.tools.join("arbiter.sh"),
        format!("#!/bin/sh\n{arbiter}\n"),
    )
    .unwrap();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("checks from cargo and CI"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_new_test_that_no_check_runs_fails_the_attempt_with_what_would_run_it() {
    if !ralph::process::on_path("cargo") {
        eprintln!("skipped: cargo is not installed");
        return;
    }
    let broken = format!(
        "cat > /dev/null\n{GATED_TEST}\necho '{{\"summary\":\"test\",\"checkboxes_completed\":[\"req_1\"]}}'"
    );
    // The same crate without its CI workflow: plain `cargo test` compiles the test to nothing.
    let repo = Repo::with(Setup {
        implementer: &broken,
        checks: "",
        issues: &[(3, HALVES_ISSUE)],
        ..Setup::default()
    });
    let files: Vec<(&str, &str)> = CRATE
        .iter()
        .filter(|(name, _)| !name.starts_with(".github"))
        .copied()
        .collect();
    commit_files(&repo, &files);
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the change's test `rounds_odd_numbers_up` (tests/exact.rs) never ran under any check: it is compiled only with the cargo feature `exact`: a check must run `cargo test --features exact`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("new tests: 1 never ran (tests/exact.rs rounds_odd_numbers_up)"),
        "{}",
        out.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let t = &report["rounds"][0]["new_tests"][0];
    assert_eq!(t["outcome"], "not_run", "{report}");
    assert_eq!(t["file"], "tests/exact.rs");
}

/// A Python package whose `halve` is a C extension that rounds the wrong way.
const C_EXTENSION: [(&str, &str); 6] = [
    (
        "setup.py",
        "from setuptools import Extension, setup\n\nsetup(\n    name=\"halves\",\n    version=\"0.1\",\n    package_dir={\"\": \"src\"},\n    packages=[\"halves\"],\n    ext_modules=[Extension(\"halves._native\", [\"src/halves/_native.c\"])],\n)\n",
    ),
    ("src/halves/__init__.py", "from halves._native import halve\n"),
    ("tests/__init__.py", ""),
    (
        "src/halves/_native.c",
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n\nstatic PyObject *halve(PyObject *self, PyObject *args) {\n    long n;\n    if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\n    return PyLong_FromLong(n / 2);\n}\n\nstatic PyMethodDef methods[] = {{\"halve\", halve, METH_VARARGS, \"Half, rounded up.\"}, {NULL, NULL, 0, NULL}};\nstatic struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_native\", NULL, -1, methods};\nPyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }\n",
    ),
    (
        "tests/test_halves.py",
        "import unittest\n\nfrom halves import halve\n\n\nclass Halves(unittest.TestCase):\n    def test_even(self):\n        self.assertEqual(halve(4), 2)\n",
    ),
    (".gitignore", ".ralph/worktrees/\n.ralph/runs/\n.ralph/cache/\n"),
];

/// The regression test, appended to the test module.
const C_TEST: &str = "printf '\\n    def test_odd_rounds_up(self):\\n        self.assertEqual(halve(3), 2)\\n' >> tests/test_halves.py";

fn c_extension(implementer: &str) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks: "[checks]\ntest = \"PYTHONPATH=src python3 -m unittest discover -s tests -t .\"\n",
        issues: &[(3, HALVES_ISSUE)],
        ..Setup::default()
    });
    commit_files(&repo, &C_EXTENSION);
    let arbiter = "cat > /dev/null\ncase \"$RALPH_ROLE\" in\n  verify) echo '{\"satisfied\":[{\"id\":\"req_1\",\"evidence\":\"halve\"}],\"unsatisfied\":[]}';;\n  *) exit 1;;\nesac";
    std::fs::write(
        repo.tools.join("arbiter.sh"),
        format!("#!/bin/sh\n{arbiter}\n"),
    )
    .unwrap();
    repo
}

#[test]
fn a_c_only_fix_is_built_again_before_the_checks_and_the_test_only_fix_is_rejected() {
    let python_ok = std::process::Command::new("python3")
        .args(["-c", "import setuptools, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))"])
        .status()
        .is_ok_and(|s| s.success());
    if !python_ok || !ralph::process::on_path("cc") {
        eprintln!("skipped: python3 with setuptools and its headers, and a C compiler, are needed");
        return;
    }
    let fixed = format!(
        "cat > /dev/null\n{C_TEST}\nsed -i 's|n / 2|(n + 1) / 2|' src/halves/_native.c\necho '{{\"summary\":\"rounds up\",\"checkboxes_completed\":[\"req_1\"]}}'"
    );
    let repo = c_extension(&fixed);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Native code: `python3 setup.py build_ext --inplace`")
            || out
                .stderr
                .contains("Native code: `python setup.py build_ext --inplace`"),
        "the base was built for the baseline: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("- Native code built again"),
        "{}",
        out.stderr
    );
    let files = git(
        &repo.remote,
        &["ls-tree", "-r", "--name-only", "ralph/3-round-halves-up"],
    );
    assert!(
        files.contains("src/halves/_native.c")
            && !files.contains(".so")
            && !files.contains("build/"),
        "{files}"
    );

    let broken = format!(
        "cat > /dev/null\n{C_TEST}\necho '{{\"summary\":\"test\",\"checkboxes_completed\":[\"req_1\"]}}'"
    );
    let repo = c_extension(&broken);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("check `test` failed"), "{}", out.stderr);
}

/// The folder holding `poetry`: on PATH, else where `.ci/run` installs it.
fn poetry_dir() -> Option<std::path::PathBuf> {
    if let Some(p) = ralph::process::find_on_path("poetry") {
        return p.parent().map(|d| d.to_owned());
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/bin");
    dir.join("poetry").is_file().then_some(dir)
}

/// A Poetry project whose package is installed into the in-project virtualenv its poetry.toml
/// asks for: the tests import it from there.
const POETRY: [(&str, &str); 6] = [
    (
        "pyproject.toml",
        "[project]\nname = \"halves\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = []\n\n[tool.poetry]\npackages = [{ include = \"halves\", from = \"src\" }]\n\n[build-system]\nrequires = [\"poetry-core>=2.0\"]\nbuild-backend = \"poetry.core.masonry.api\"\n",
    ),
    ("poetry.toml", "[virtualenvs]\nin-project = true\n"),
    (
        "src/halves/__init__.py",
        "def halve(n):\n    \"\"\"Half of n, rounded up.\"\"\"\n    return n // 2\n",
    ),
    ("tests/__init__.py", ""),
    (
        "tests/test_halves.py",
        "import unittest\n\nfrom halves import halve\n\n\nclass Halves(unittest.TestCase):\n    def test_even(self):\n        self.assertEqual(halve(4), 2)\n",
    ),
    (".gitignore", ".venv/\n.ralph/worktrees/\n.ralph/runs/\n.ralph/cache/\n"),
];

#[test]
fn a_poetry_project_gets_its_environment_in_the_worktree_and_its_checks_run_there() {
    let Some(poetry) = poetry_dir() else {
        eprintln!("skipped: poetry is not installed (`.ci/run` installs it into target/ci-tools)");
        return;
    };
    let path = format!("{}:{}", poetry.display(), std::env::var("PATH").unwrap());
    let arbiter = "cat > /dev/null\ncase \"$RALPH_ROLE\" in\n  verify) echo '{\"satisfied\":[{\"id\":\"req_1\",\"evidence\":\"halve\"}],\"unsatisfied\":[]}';;\n  *) exit 1;;\nesac";
    let verdict = |implementer: &str| {
        let repo = Repo::with(Setup {
            implementer,
            // The project runs its tests through Poetry, from the environment it makes.
            checks: "[checks]\ntest = \"poetry run python -m unittest discover -s tests -t .\"\n",
            issues: &[(3, HALVES_ISSUE)],
            ..Setup::default()
        });
        commit_files(&repo, &POETRY);
        std::fs::write(
            repo.tools.join("arbiter.sh"),
            format!("#!/bin/sh\n{arbiter}\n"),
        )
        .unwrap();
        let out = run(repo.ralph().env("PATH", &path).args(["compete", "3"]));
        (repo, out)
    };
    let test = "printf '\\n    def test_odd_rounds_up(self):\\n        self.assertEqual(halve(3), 2)\\n' >> tests/test_halves.py";
    let (repo, out) = verdict(&format!(
        "cat > /dev/null\n{test}\nsed -i 's|n // 2|(n + 1) // 2|' src/halves/__init__.py\necho '{{\"summary\":\"rounds up\",\"checkboxes_completed\":[\"req_1\"]}}'"
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "Environment: `poetry install --no-interaction --all-extras` (a Poetry project"
        ),
        "{}",
        out.stderr
    );
    assert!(
        !repo.root.join(".venv").exists(),
        "the environment was made in the worktree, not in the main checkout"
    );
    let (_, out) = verdict(&format!(
        "cat > /dev/null\n{test}\necho '{{\"summary\":\"test\",\"checkboxes_completed\":[\"req_1\"]}}'"
    ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("check `test` failed"), "{}", out.stderr);
}
