//! Checks that run here, through the binary with the sandbox required (docs/checks.md
//! "Candidates: the check that judges", "The project's CI"): a CI job whose browser download
//! fails on this machine is judged without it, on the base and after the change; a Makefile's
//! `test` that runs a tool this machine lacks gives way to the project's own pytest
//! configuration; with CMake and Meson files, the one installed judges; a C project's CI step
//! `pip install meson` reaches the index in its setup policy; a CI job's `pip install .` goes
//! into a Python environment of the job's own, on the base and after the change alike, and the
//! change's package is the one tested; a git-ignored `node_modules` is made in the checkout by
//! `npm install`; a native build ralph guesses that fails on the base (the CI generates the
//! sources first) refuses nothing, and the CI's own steps build the change.

use crate::common::script;
use crate::compete::{run, Repo};
use crate::tool_verdicts::{compete, implementer, path_with, repo, required_sandbox};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// The sandbox a test requires, or why it is skipped.
fn sandbox_or_skip() -> Option<&'static str> {
    match required_sandbox() {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

#[test]
fn a_ci_job_whose_browser_download_fails_here_is_judged_without_it_on_both_sides() {
    if !ralph::process::on_path("node") {
        return eprintln!("skipped: node is not installed");
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    let workflow = r#"on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install browsers
        run: |
          echo 'Downloading Chromium 1134 from https://playwright.azureedge.net'
          echo 'su: Authentication failure' >&2
          exit 1
      - name: Compile
        run: npm run build
      - run: npm test
"#;
    let files = [
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"build": "node -e \"require('fs').writeFileSync('built.txt', 'ok')\"", "test": "node --test"}}"#,
        ),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc.js');\ntest('adds', () => assert.strictEqual(add(1, 2), 3));\n",
        ),
        (
            "test/browser.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\ntest('renders in a browser', () => assert.ok(require('fs').existsSync('.browsers/chromium'), 'no browser here'));\n",
        ),
        (".github/workflows/ci.yml", workflow),
    ];
    let adds = implementer(
        "echo 'exports.mul = (a, b) => a * b;' >> calc.js\nprintf \"const test = require('node:test');\\nconst assert = require('node:assert');\\nconst { mul } = require('../calc.js');\\ntest('multiplies', () => assert.strictEqual(mul(2, 3), 6));\\n\" > test/mul.test.js",
    );
    let repo = repo(&files, "", &adds, Some(sandbox), |_| {});
    let doctor = run(repo.ralph().args(["doctor", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&doctor.stdout).unwrap();
    let candidates: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["area"] == "candidates")
        .map(|f| format!("{}: {}", f["check"], f["detail"]))
        .collect();
    assert!(
        candidates.iter().any(|c| c.contains("CI test: npm test")
            && c.contains("judges the tests")
            && c.contains(
                "its job's step(s) `Install browsers` fail here and are skipped on both sides"
            )),
        "{candidates:#?}"
    );
    assert!(
        candidates.iter().any(|c| c.starts_with("\"test\"")
            && c.contains("stands in for `CI test: npm test` (tests): not needed")),
        "ralph's own run stands in, not needed: {candidates:#?}"
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (test/mul.test.js multiplies)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("its job's step(s) `Install browsers` skipped, as on the base (they fail on this machine)"),
        "{}",
        out.stderr
    );
}

/// [`repo`] with no `[checks]` and the sandbox `sandbox`.
fn repo_with(files: &[(&str, &str)], implementer: &str, sandbox: &str) -> Repo {
    repo(files, "", implementer, Some(sandbox), |_| {})
}

/// The verdict tests' stand-in pytest as the module `pytest` in `dir`, for `python3 -m pytest`.
fn pytest_module(dir: &std::path::Path) -> PathBuf {
    let modules = dir.join("pymodules");
    std::fs::create_dir_all(modules.join("pytest")).unwrap();
    std::fs::write(modules.join("pytest/__init__.py"), "").unwrap();
    std::fs::write(modules.join("pytest/__main__.py"), crate::verdicts::RUNNER).unwrap();
    modules
}

/// `ralph compete 3` on a project of `files` whose implementer runs `adds`, with the verdict
/// tests' stand-in pytest as `python3 -m pytest`.
fn compete_with_pytest(files: &[(&str, &str)], adds: &str, sandbox: &str) -> crate::common::Out {
    let repo = repo_with(files, adds, sandbox);
    let modules = pytest_module(&repo.tools);
    run(repo
        .ralph()
        .env("PYTHONPATH", &modules)
        .args(["compete", "3"]))
}

/// A Python project whose Makefile's `test` runs a linter this machine lacks before pytest,
/// and an implementer that adds `mul` and its test.
fn makefile_project() -> ([(&'static str, &'static str); 4], String) {
    let files = [
        (
            "Makefile",
            "lint:\n\tdefinitely-absent-pre-commit run --all-files\n\ntest: lint\n\tpython3 -m pytest\n",
        ),
        (
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1\"\n[tool.pytest.ini_options]\n",
        ),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        ),
    ];
    let adds = implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nprintf 'from calc import mul\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n' > tests/test_mul.py",
    );
    (files, adds)
}

#[test]
fn a_makefile_test_that_runs_a_missing_tool_gives_way_to_the_projects_pytest() {
    if !crate::verdicts::python3() {
        return;
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    let (files, adds) = makefile_project();
    let out = compete_with_pytest(&files, &adds, sandbox);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("lint unavailable · test unavailable · python-test passes"),
        "the project's pytest judges on the base: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("✓ python-test") && !out.stderr.contains("✓ test "),
        "`make test` is not run after the change: {}",
        out.stderr
    );
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
}

#[test]
fn with_cmake_and_meson_the_installed_one_judges() {
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    if ralph::process::on_path("cmake") || ralph::process::on_path("meson") {
        return eprintln!("skipped: a real cmake or meson is installed, the stand-in meson would not be the only one");
    }
    let files = [
        (
            "CMakeLists.txt",
            "project(calc C)\nenable_testing()\nadd_test(NAME add COMMAND sh test.sh)\n",
        ),
        (
            "meson.build",
            "project('calc', 'c')\ntest('add', find_program('sh'), args: ['test.sh'])\n",
        ),
    ];
    let repo = repo_with(&files, crate::compete::GOOD, sandbox);
    // A meson of the contributor's, on PATH: `meson setup DIR`, `meson test -C DIR` runs the
    // project's one test the way meson prints it.
    let bin = repo.tools.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(
        &bin,
        "meson",
        "case \"$1\" in\n  setup) mkdir -p \"$2\" ;;\n  test) if sh test.sh >/dev/null; then echo '1/1 add OK 0.01s'; echo 'Ok: 1'; else echo '1/1 add FAIL 0.01s'; echo 'Fail: 1'; exit 1; fi ;;\nesac\n",
    );
    let out = compete(&repo, &[bin]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let baseline = out
        .stderr
        .lines()
        .find(|l| l.starts_with("Baseline "))
        .unwrap_or_default();
    assert!(
        baseline.ends_with(": test passes"),
        "meson judges, ralph's CMake stand-in is not needed: {}",
        out.stderr
    );
}

#[test]
fn a_c_projects_pip_install_reaches_the_index_of_its_setup_policy() {
    if let Err(why) = crate::security::bubblewrap_and_python() {
        return eprintln!("skipped: {why}");
    }
    let (index, served) = crate::egress::server("<html></html>");
    // A name no Python here has installed already (pip would not ask the index for it).
    let workflow = format!(
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - name: Install meson\n        run: pip install --index-url http://127.0.0.1:{index}/simple/ meson-built-here\n      - run: meson test -C build\n"
    );
    let files = [
        ("meson.build", "project('calc', 'c')\n".to_owned()),
        ("Makefile", "test:\n\tsh test.sh\n".to_owned()),
        (".github/workflows/ci.yml", workflow),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let repo = repo(
        &files,
        "",
        crate::compete::GOOD,
        Some("[sandbox]\nmode = \"required\"\n"),
        |_| {},
    );
    let out = run(repo
        .ralph()
        .env("PIP_INDEX_URL", format!("http://127.0.0.1:{index}/simple/"))
        .args(["doctor", "--json"]));
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let step = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "CI step")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let detail = step["detail"].as_str().unwrap();
    assert!(
        detail.contains("step `Install meson` (its network: ")
            && detail.contains("pypi.org")
            && detail.contains(&format!("127.0.0.1:{index}")),
        "{detail}"
    );
    assert!(
        !detail.contains("the sandbox refused"),
        "a C project's pip reaches its index: {detail}"
    );
    assert!(served.load(Ordering::SeqCst) >= 1, "the index was asked");
}

/// A PEP 517 backend in the project's tree: it builds a wheel of the package `calc` (a src
/// layout) with `calc/_ops.py` generated from `src/calc/ops.src` — code that exists only where the package is
/// installed, as a compiled extension does.
const BACKEND: &str = r#"import base64, hashlib, os, zipfile
NAME, VERSION = "calc", "0.1"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {}
    for root, _, names in os.walk("src/calc"):
        for n in names:
            if n.endswith(".py"):
                p = os.path.join(root, n)
                files[os.path.relpath(p, "src")] = open(p, "rb").read()
    files["calc/_ops.py"] = open("src/calc/ops.src", "rb").read()
    info = "%s-%s.dist-info" % (NAME, VERSION)
    files[info + "/METADATA"] = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (NAME, VERSION)).encode()
    files[info + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ralph-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for p, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (p, digest, len(data)))
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    name = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for p, data in files.items():
            z.writestr(p, data)
    return name
"#;

#[test]
fn a_ci_jobs_pip_install_goes_into_its_own_environment_and_tests_the_changes_package() {
    if !crate::verdicts::python3() {
        return;
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    let workflow = r#"on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
      - name: Install
        run: python3 -m pip install --no-build-isolation --no-index .
      - name: Test
        run: python3 -m unittest discover -s tests -v
"#;
    let files = [
        (
            "pyproject.toml",
            "[build-system]\nrequires = []\nbuild-backend = \"build_backend\"\nbackend-path = [\".\"]\n",
        ),
        ("build_backend.py", BACKEND),
        ("src/calc/__init__.py", ""),
        ("src/calc/ops.src", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_add.py",
            "import unittest\nfrom calc._ops import add\n\nclass Add(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
        ),
        (".github/workflows/ci.yml", workflow),
    ];
    let adds = implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> src/calc/ops.src\nprintf 'import unittest\\nfrom calc._ops import mul\\n\\nclass Mul(unittest.TestCase):\\n    def test_mul(self):\\n        self.assertEqual(mul(2, 3), 6)\\n' > tests/test_mul.py",
    );
    let repo = repo_with(&files, &adds, sandbox);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("new tests: 1 passed"),
        "the change's package was installed and tested: {}",
        out.stderr
    );
    // The user's Python never saw the package.
    let user = std::process::Command::new("python3")
        .args(["-c", "import calc._ops"])
        .current_dir(&repo.tools)
        .output()
        .unwrap();
    assert!(
        !user.status.success(),
        "the package landed in the user's Python"
    );
}

#[test]
fn a_git_ignored_node_modules_is_made_in_the_checkout() {
    if !ralph::process::on_path("npm") {
        return eprintln!("skipped: npm is not installed");
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    let files = [
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "calc-runner"}, "devDependencies": {"calc-runner": "file:vendor/calc-runner"}}"#,
        ),
        (
            "vendor/calc-runner/package.json",
            r#"{"name": "calc-runner", "version": "1.0.0", "bin": {"calc-runner": "cli.js"}}"#,
        ),
        (
            "vendor/calc-runner/cli.js",
            "#!/usr/bin/env node\nrequire('child_process').execFileSync(process.execPath, ['--test'], { stdio: 'inherit' });\n",
        ),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\nnode_modules/\n"),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc.js');\ntest('adds', () => assert.strictEqual(add(1, 2), 3));\n",
        ),
    ];
    let adds = implementer(
        "echo 'exports.mul = (a, b) => a * b;' >> calc.js\nprintf \"const test = require('node:test');\\nconst assert = require('node:assert');\\nconst { mul } = require('../calc.js');\\ntest('multiplies', () => assert.strictEqual(mul(2, 3), 6));\\n\" > test/mul.test.js",
    );
    let repo = repo(&files, "", &adds, Some(sandbox), |root| {
        use std::os::unix::fs::PermissionsExt;
        let cli = root.join("vendor/calc-runner/cli.js");
        std::fs::set_permissions(cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    });
    // The user's checkout has its node_modules; ralph's checkout must make its own.
    let made = std::process::Command::new("npm")
        .args([
            "install",
            "--no-package-lock",
            "--no-audit",
            "--no-fund",
            "--offline",
        ])
        .current_dir(&repo.root)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Environment: `npm install --no-package-lock --no-audit --no-fund`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
}

#[test]
fn a_native_build_ralph_guesses_that_fails_refuses_nothing_and_the_cis_steps_build_the_change() {
    if !crate::verdicts::python3() || !ralph::process::on_path("cc") {
        return eprintln!("skipped: python3 or a C compiler is missing");
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    // The C source is generated (`make gen`, a CI step) and git-ignored: ralph's guess
    // (`setup.py build_ext --inplace` in the checkout) dies on its absence.
    let workflow = r#"on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: make gen
      - run: python3 setup.py build_ext --inplace
      - name: Test
        run: python3 -m unittest discover -s tests -t . -v
"#;
    let native = "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n\nstatic PyObject *halve(PyObject *self, PyObject *args) {\n    long n;\n    if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\n    return PyLong_FromLong(n / 2);\n}\n\nstatic PyMethodDef methods[] = {{\"halve\", halve, METH_VARARGS, \"Half.\"}, {NULL, NULL, 0, NULL}};\nstatic struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_native\", NULL, -1, methods};\nPyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }\n";
    let files = [
        (
            "setup.py",
            "from setuptools import Extension, setup\n\nsetup(name=\"halves\", version=\"0.1\", packages=[\"halves\"], ext_modules=[Extension(\"halves._native\", [\"halves/_native.c\"])])\n",
        ),
        ("Makefile", "gen:\n\tcp halves/_native.c.in halves/_native.c\n"),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\nhalves/_native.c\n*.so\nbuild/\n"),
        ("halves/__init__.py", ""),
        ("halves/_native.c.in", native),
        ("tests/__init__.py", ""),
        (
            "tests/test_halves.py",
            "import unittest\nfrom halves._native import halve\n\nclass Halves(unittest.TestCase):\n    def test_even(self):\n        self.assertEqual(halve(4), 2)\n",
        ),
        (".github/workflows/ci.yml", workflow),
    ];
    // The change: a `twice` in the generated source's template, and its test.
    let twice = native
        .replace(
            "static PyMethodDef methods",
            "static PyObject *twice(PyObject *self, PyObject *args) {\n    long n;\n    if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\n    return PyLong_FromLong(n * 2);\n}\n\nstatic PyMethodDef methods",
        )
        .replace(
            "{\"halve\", halve, METH_VARARGS, \"Half.\"},",
            "{\"halve\", halve, METH_VARARGS, \"Half.\"}, {\"twice\", twice, METH_VARARGS, \"Twice.\"},",
        );
    let adds = implementer(&format!(
        "cat > halves/_native.c.in <<'EOF'\n{twice}EOF\nprintf 'import unittest\\nfrom halves._native import twice\\n\\nclass Twice(unittest.TestCase):\\n    def test_twice(self):\\n        self.assertEqual(twice(3), 6)\\n' > tests/test_twice.py"
    ));
    let repo = repo_with(&files, &adds, sandbox);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the base's native code could not be built by `"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("new tests: 1 passed"),
        "the CI's steps built the change's native code: {}",
        out.stderr
    );
}

#[test]
fn the_same_verdicts_from_a_checkout_outside_the_temporary_folder() {
    // The sandbox replaces /tmp: a project under the user's home must judge the same.
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    if !crate::verdicts::python3() {
        return;
    }
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (files, adds) = makefile_project();
    let repo =
        crate::tool_verdicts::repo_under(Some(&home), &files, "", &adds, Some(sandbox), |_| {});
    let modules = pytest_module(&repo.tools);
    let out = run(repo
        .ralph()
        .env("PYTHONPATH", &modules)
        .env("PATH", path_with(&[]))
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("python-test passes"), "{}", out.stderr);
}

#[test]
fn a_detected_setup_that_fails_refuses_nothing_where_the_cis_own_install_works() {
    if !ralph::process::on_path("npm") {
        return eprintln!("skipped: npm is not installed");
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    // A dependency whose install script needs what this machine has not (a download): the
    // detected `npm install` fails; the CI installs with `--ignore-scripts`.
    let workflow = "on: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm install --ignore-scripts\n      - run: npm run test:ci\n";
    let files = [
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "calc-runner", "test:ci": "calc-runner"}, "devDependencies": {"calc-runner": "file:vendor/calc-runner", "top-sites": "file:vendor/top-sites"}}"#,
        ),
        (
            "vendor/calc-runner/package.json",
            r#"{"name": "calc-runner", "version": "1.0.0", "bin": {"calc-runner": "cli.js"}}"#,
        ),
        (
            "vendor/calc-runner/cli.js",
            "#!/usr/bin/env node\nrequire('child_process').execFileSync(process.execPath, ['--test'], { stdio: 'inherit' });\n",
        ),
        (
            "vendor/top-sites/package.json",
            r#"{"name": "top-sites", "version": "1.0.0", "scripts": {"postinstall": "node -e \"console.error('getaddrinfo ENOTFOUND moz.com'); process.exit(1)\""}}"#,
        ),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\nnode_modules/\n"),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc.js');\ntest('adds', () => assert.strictEqual(add(1, 2), 3));\n",
        ),
        (".github/workflows/ci.yml", workflow),
    ];
    let adds = implementer(
        "echo 'exports.mul = (a, b) => a * b;' >> calc.js\nprintf \"const test = require('node:test');\\nconst assert = require('node:assert');\\nconst { mul } = require('../calc.js');\\ntest('multiplies', () => assert.strictEqual(mul(2, 3), 6));\\n\" > test/mul.test.js",
    );
    let repo = repo(&files, "", &adds, Some(sandbox), |root| {
        use std::os::unix::fs::PermissionsExt;
        let cli = root.join("vendor/calc-runner/cli.js");
        std::fs::set_permissions(cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the detected setup `npm install --no-package-lock --no-audit --no-fund`")
            && out
                .stderr
                .contains("failed on the base: the checks run without it"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
}

/// A Makefile's `test` runs the project's own quiet runner, which names no test: the change's
/// new test, which that check may have run, is run alone by pytest — and counts as run, and
/// passed, because it passes there.
#[test]
fn a_new_test_no_check_names_is_run_alone_by_its_languages_runner() {
    if !crate::verdicts::python3() {
        return;
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    let quiet = "import glob, importlib.util, sys\nsys.path.insert(0, '.')\nn = 0\nfor path in sorted(glob.glob('tests/test_*.py')):\n    spec = importlib.util.spec_from_file_location(path[:-3].replace('/', '.'), path)\n    m = importlib.util.module_from_spec(spec)\n    spec.loader.exec_module(m)\n    for name in [x for x in dir(m) if x.startswith('test_')]:\n        getattr(m, name)()\n        n += 1\nprint('ran', n, 'OK')\n";
    let files = [
        ("Makefile", "test:\n\tpython3 quiet.py\n"),
        ("quiet.py", quiet),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        ),
    ];
    let adds = implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nprintf 'from calc import mul\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n' > tests/test_mul.py",
    );
    let out = compete_with_pytest(&files, &adds, sandbox);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("new tests: 1 passed") && !out.stderr.contains("not reported by name"),
        "the new test is run alone by pytest, and passes there: {}",
        out.stderr
    );
}

/// The same with a test of a `unittest.TestCase` and no pytest that runs: pytest alone fails to
/// start, and `python -m unittest` runs the test alone — it counts as run, and passed, there.
#[test]
fn a_new_unittest_no_check_names_is_run_alone_by_unittest_where_pytest_cannot() {
    if !crate::verdicts::python3() {
        return;
    }
    let Some(sandbox) = sandbox_or_skip() else {
        return;
    };
    // The runner calls each test method itself: no unittest runner that ralph's hook would read.
    let quiet = "import glob, importlib, inspect, sys, unittest\nsys.path.insert(0, '.')\nn = 0\nfor path in sorted(glob.glob('tests/test_*.py')):\n    m = importlib.import_module(path[:-3].replace('/', '.'))\n    for _, c in inspect.getmembers(m, inspect.isclass):\n        if issubclass(c, unittest.TestCase) and c is not unittest.TestCase:\n            for name in [x for x in dir(c) if x.startswith('test_')]:\n                getattr(c(name), name)()\n                n += 1\nprint('ran', n, 'OK')\n";
    let files = [
        ("Makefile", "test:\n\tpython3 quiet.py\n"),
        ("quiet.py", quiet),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        ("tests/__init__.py", ""),
        (
            "tests/test_calc.py",
            "import unittest\nfrom calc import add\n\nclass Calc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n",
        ),
    ];
    let adds = implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nprintf 'import unittest\\nfrom calc import mul\\n\\nclass Mul(unittest.TestCase):\\n    def test_mul(self):\\n        self.assertEqual(mul(2, 3), 6)\\n' > tests/test_mul.py",
    );
    let repo = repo_with(&files, &adds, sandbox);
    // A pytest that cannot start, whatever this machine's Python has installed.
    let broken = repo.tools.join("broken-pytest");
    std::fs::create_dir_all(broken.join("pytest")).unwrap();
    std::fs::write(broken.join("pytest/__init__.py"), "").unwrap();
    std::fs::write(
        broken.join("pytest/__main__.py"),
        "raise SystemExit('no pytest here')\n",
    )
    .unwrap();
    let out = run(repo
        .ralph()
        .env("PYTHONPATH", &broken)
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("new tests: 1 passed"),
        "the new test is run alone by unittest, and passes there: {}",
        out.stderr
    );
    let report = std::fs::read_to_string(repo.root.join(".ralph/runs/3/report.json")).unwrap();
    assert!(
        report.contains("\"check\":\"unittest alone\"")
            || report.contains("\"check\": \"unittest alone\""),
        "{report}"
    );
    assert!(
        report.contains("run alone by pytest"),
        "pytest was tried first: {report}"
    );
}
