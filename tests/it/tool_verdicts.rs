//! Verdicts on the runners and wrappers ralph knows by their tools (docs/checks.md "What ralph
//! knows about each tool"), through the binary, with the real programs where `.ci/run` installs
//! them (pnpm, vitest and jest, uv, PDM, Django; cargo, node): a pnpm workspace failing on the
//! base in one package is judged package by package; a uv and a PDM project run their tests
//! through the manager with the sandbox required; a Django app's `runtests.py` names its tests;
//! a settings migration is not judged by a check that could not run; a workspace's `cargo test
//! --verbose` names its tests by their files; `node --test` names its tests; jest and vitest
//! behind `npm test` (jest behind `pnpm test` too) name each test and run a failing one alone;
//! a test moved between files is not a deleted one. Each test says why it is skipped where a
//! program is missing.

use crate::common::{commit_all, git, script};
use crate::compete::{run, Repo, Setup, GOOD};
use std::path::{Path, PathBuf};

/// The folder holding `program`: on `PATH`, else where `.ci/run` installs it
/// (`target/ci-tools/bin`).
fn tool_dir(program: &str) -> Option<PathBuf> {
    if let Some(p) = ralph::process::find_on_path(program) {
        return p.parent().map(Path::to_owned);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/bin");
    dir.join(program).is_file().then_some(dir)
}

/// The folders of `programs`, or why the test is skipped.
fn tools(programs: &[&str]) -> Result<Vec<PathBuf>, String> {
    programs
        .iter()
        .map(|p| {
            tool_dir(p).ok_or_else(|| {
                format!("{p} is not installed (`.ci/run` installs it into target/ci-tools)")
            })
        })
        .collect()
}

/// `PATH` with `dirs` first.
pub(crate) fn path_with(dirs: &[PathBuf]) -> String {
    let mut all: Vec<PathBuf> = dirs.to_vec();
    all.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(all)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The sandbox a test requires (its tools folder writable, as every test's fake agents log
/// there); `None` with why, where bubblewrap does not work.
pub(crate) fn required_sandbox() -> Result<&'static str, String> {
    crate::security::bubblewrap()?;
    Ok("[sandbox]\nmode = \"required\"\nwritable = [\"{tools}\"]\n")
}

/// A repository of `files` (added to the default library and its test), with `checks` and the
/// implementer `implementer`; `sandbox` as `Setup` takes it.
pub(crate) fn repo(
    files: &[(&str, &str)],
    checks: &str,
    implementer: &str,
    sandbox: Option<&str>,
    then: impl FnOnce(&Path),
) -> Repo {
    repo_under(None, files, checks, implementer, sandbox, then)
}

/// [`repo`], its folder made under `under` (default: the system's temporary folder).
pub(crate) fn repo_under(
    under: Option<&Path>,
    files: &[(&str, &str)],
    checks: &str,
    implementer: &str,
    sandbox: Option<&str>,
    then: impl FnOnce(&Path),
) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks,
        sandbox,
        under,
        ..Setup::default()
    });
    let config = repo.root.join(".ralph/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("{tools}", &repo.tools.display().to_string()),
    )
    .unwrap();
    for (name, text) in files {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    then(&repo.root);
    commit_all(&repo.root, "the project");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    repo
}

/// `ralph compete 3` in `repo`, with `dirs` first on `PATH`.
pub(crate) fn compete(repo: &Repo, dirs: &[PathBuf]) -> crate::common::Out {
    run(repo
        .ralph()
        .env("PATH", path_with(dirs))
        .args(["compete", "3"]))
}

/// An implementer that runs `shell`, then says it is done.
pub(crate) fn implementer(shell: &str) -> String {
    format!(
        "cat > /dev/null\n{shell}\necho '{{\"summary\":\"done\",\"checkboxes_completed\":[\"req_1\"]}}'"
    )
}

/// The stand-in `pytest` of the verdict tests, as a program on `PATH`.
fn stand_in_pytest(dir: &Path) {
    script(
        dir,
        "pytest",
        &format!(
            "exec python3 - \"$@\" <<'PY'\n{}\nPY",
            crate::verdicts::RUNNER
        ),
    );
}

#[test]
fn a_pnpm_workspace_failing_on_the_base_in_one_package_is_judged_package_by_package() {
    let (sandbox, dirs) =
        match required_sandbox().and_then(|s| Ok((s, tools(&["pnpm", "vitest"])?))) {
            Ok(found) => found,
            Err(why) => return eprintln!("skipped: {why}"),
        };
    let package = |name: &str| {
        format!(
            r#"{{"name": "@w/{name}", "version": "1.0.0", "private": true, "scripts": {{"test": "vitest run --globals"}}}}"#
        )
    };
    let (a, b) = (package("a"), package("b"));
    let files = [
        (
            "package.json",
            r#"{"name": "root", "private": true, "scripts": {"test": "pnpm -r test"}}"#,
        ),
        ("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n"),
        ("packages/a/package.json", a.as_str()),
        (
            "packages/a/a.test.js",
            "test('a adds', () => { expect(1 + 1).toBe(2); });\n",
        ),
        ("packages/b/package.json", b.as_str()),
        (
            "packages/b/b.test.js",
            "test('b needs a service', () => { expect(process.env.SERVICE).toBe('up'); });\ntest('b works', () => { expect(1).toBe(1); });\n",
        ),
    ];
    // pnpm's own recursive run, so that ralph adds `--no-bail`: behind the root's `pnpm test`
    // script a failing package stops pnpm, and whether the other package's tests were read
    // then depends on which finished first.
    let checks = "[checks]\ntest = \"pnpm -r test\"\n";
    let adds = implementer(&format!(
        "{}\nprintf \"test('a multiplies', () => {{ expect(2 * 3).toBe(6); }});\\n\" > packages/a/mul.test.js",
        GOOD.lines().nth(1).unwrap()
    ));
    let repo = self::repo(&files, checks, &adds, Some(sandbox), |_| {});
    let out = compete(&repo, &dirs);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (packages/a/mul.test.js a multiplies)"),
        "{}",
        out.stderr
    );
    // Breaking the package that passed on the base: rejected, by the package's file.
    let breaks = implementer(&format!(
        "{}\nsed -i 's/toBe(2)/toBe(3)/' packages/a/a.test.js",
        GOOD.lines().nth(1).unwrap()
    ));
    let repo = self::repo(&files, checks, &breaks, Some(sandbox), |_| {});
    let out = compete(&repo, &dirs);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("test(s) that pass on the base fail, e.g. packages/a/a.test.js::a adds"),
        "{}",
        out.stderr
    );
}

/// A Python project of `manager`'s with no dependencies, its tests in `tests/`, detected.
const CALC: &str = "def add(a, b):\n    return a + b\n";
const CALC_TESTS: &str = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n";

/// An implementer that adds `mul` and its test.
fn adds_mul() -> String {
    implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nprintf 'from calc import mul\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n' > tests/test_mul.py",
    )
}

/// Runs a competition on a project whose environment `manager` makes (`lock` writes its
/// lockfile), with the sandbox required; its tests are run by the manager, never failing on the
/// manager's own state. The user's caches and state are outside `/tmp` (which the sandbox
/// replaces) and outside every writable folder, as a developer's are.
fn managed_project(manager: &str, pyproject: &str, lock: &[&str]) {
    let (sandbox, dirs) = match required_sandbox().and_then(|s| Ok((s, tools(&[manager])?))) {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (cache, state) = (outside.path().join("cache"), outside.path().join("state"));
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let files = [
        ("pyproject.toml", pyproject),
        ("calc.py", CALC),
        ("tests/test_calc.py", CALC_TESTS),
        (
            ".gitignore",
            ".ralph/worktrees/\n.ralph/runs/\n.venv/\n.pdm-python\n",
        ),
    ];
    let manager_dir = dirs[0].clone();
    let repo = repo_under(
        Some(outside.path()),
        &files,
        "",
        &adds_mul(),
        Some(sandbox),
        |root| {
            let out = std::process::Command::new(manager_dir.join(lock[0]))
                .args(&lock[1..])
                .current_dir(root)
                .env("UV_OFFLINE", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        },
    );
    stand_in_pytest(&repo.tools);
    let out = run(repo
        .ralph()
        .env("PATH", path_with(&[manager_dir, repo.tools.clone()]))
        .env("XDG_CACHE_HOME", &cache)
        .env("XDG_STATE_HOME", &state)
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("{manager} run pytest")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("Read-only file system"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_uv_project_runs_its_tests_through_uv_with_the_sandbox_required() {
    managed_project(
        "uv",
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\nrequires-python = \">=3.8\"\ndependencies = []\n\n[tool.uv]\npackage = false\n",
        &["uv", "lock", "--offline"],
    );
}

#[test]
fn a_pdm_project_runs_its_tests_through_pdm_with_the_sandbox_required() {
    managed_project(
        "pdm",
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\nrequires-python = \">=3.8\"\ndependencies = []\n\n[tool.pdm]\ndistribution = false\n",
        &["pdm", "lock"],
    );
}

/// A Django app's classic `runtests.py`: settings configured in code, Django's runner.
const RUNTESTS: &str = r#"import sys
import django
from django.conf import settings
from django.test.utils import get_runner

settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    INSTALLED_APPS=["calc"],
)
django.setup()
failures = get_runner(settings)().run_tests(["calc"])
sys.exit(bool(failures))
"#;

#[test]
fn a_django_apps_runtests_names_each_test() {
    // Django's interpreter: the one whose folder has django-admin, or `.ci/run`'s venv.
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/django/bin");
    let dirs = match ralph::process::find_on_path("django-admin")
        .and_then(|p| p.parent().map(Path::to_owned))
        .or_else(|| venv.join("django-admin").is_file().then_some(venv))
    {
        Some(d) => vec![d],
        None => {
            return eprintln!(
            "skipped: django is not installed (`.ci/run` installs it into target/ci-tools/django)"
        )
        }
    };
    let files = [
        ("runtests.py", RUNTESTS),
        ("calc/__init__.py", "def add(a, b):\n    return a + b\n"),
        (
            "calc/tests.py",
            "import os\nfrom django.test import SimpleTestCase\nfrom calc import add\n\n\nclass AddTests(SimpleTestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_needs_a_service(self):\n        self.assertEqual(os.environ.get(\"SERVICE\"), \"up\")\n",
        ),
    ];
    let adds = implementer(
        "printf '\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py\nprintf '\\n    def test_mul(self):\\n        from calc import mul\\n        self.assertEqual(mul(2, 3), 6)\\n' >> calc/tests.py",
    );
    let repo = repo(
        &files,
        "[checks]\ntest = \"python3 runtests.py\"\n",
        &adds,
        None,
        |_| {},
    );
    let out = compete(&repo, &dirs);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (calc/tests.py AddTests::test_mul)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_settings_migration_is_not_judged_by_a_check_that_could_not_run() {
    // `typecheck`'s program is missing here, on the base and after the change — but with the
    // base's lint settings and the change's code it would fail: it judges nothing either way.
    let files = [
        (
            "Makefile",
            "lint:\n\tsh lint.sh\ntypecheck:\n\tsh typecheck.sh\ntest:\n\tsh test.sh\n",
        ),
        ("lint.sh", "grep -q 'line-length' ruff.toml\n"),
        (
            "typecheck.sh",
            "grep -q 'new-format' ruff.toml || ! grep -q STYLE lib.sh || exit 1\nno-such-typechecker-ralph .\n",
        ),
        ("ruff.toml", "line-length = 100\n"),
    ];
    let migrates = implementer(&format!(
        "{}\necho '# STYLE' >> lib.sh\nprintf '# new-format\\nline-length = 100\\n' > ruff.toml",
        GOOD.lines().nth(1).unwrap()
    ));
    let repo = repo(&files, "", &migrates, None, |_| {});
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("typecheck") && out.stderr.contains("unavailable"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("ruff.toml: changes the lint, type-check, test or coverage settings; the checks pass under the base's settings too"),
        "{}",
        out.stderr
    );
    // A check that runs on the base and that the change makes unable to run fails it.
    let hides = implementer(&format!(
        "{}\necho 'no-such-linter-ralph' > lint.sh",
        GOOD.lines().nth(1).unwrap()
    ));
    let repo = self::repo(&files, "", &hides, None, |_| {});
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot run after the change"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_workspaces_verbose_cargo_test_names_its_tests_by_their_files() {
    if let Err(why) = tools(&["cargo"]) {
        return eprintln!("skipped: {why}");
    }
    let files = [
        ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n"),
        ("a/Cargo.toml", "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "a/src/lib.rs",
            "pub fn add(x: i32, y: i32) -> i32 {\n    x + y\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n\n    #[test]\n    fn needs_a_service() {\n        assert!(std::env::var(\"SERVICE\").is_ok(), \"no service here\");\n    }\n}\n",
        ),
        ("b/Cargo.toml", "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("b/src/lib.rs", "#[test]\nfn b_works() {}\n"),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\ntarget/\n"),
    ];
    let adds = implementer(
        "printf '\\npub fn mul(x: i32, y: i32) -> i32 {\\n    x * y\\n}\\n' >> a/src/lib.rs\nmkdir -p a/tests\nprintf '#[test]\\nfn multiplies() {\\n    assert_eq!(a::mul(2, 3), 6);\\n}\\n' > a/tests/mul.rs",
    );
    let repo = repo(
        &files,
        "[checks]\ntest = \"cargo test --verbose --workspace\"\n",
        &adds,
        None,
        |_| {},
    );
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (a/tests/mul.rs multiplies)"),
        "{}",
        out.stderr
    );
}

#[test]
fn node_test_names_each_test() {
    if let Err(why) = tools(&["node"]) {
        return eprintln!("skipped: {why}");
    }
    let files = [
        ("package.json", r#"{"name": "calc", "private": true, "scripts": {"test": "node --test"}}"#),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc.js');\ntest('adds', () => assert.strictEqual(add(1, 2), 3));\ntest('needs a service', () => assert.strictEqual(process.env.SERVICE, 'up'));\n",
        ),
    ];
    let adds = implementer(
        "echo 'exports.mul = (a, b) => a * b;' >> calc.js\nprintf \"const test = require('node:test');\\nconst assert = require('node:assert');\\nconst { mul } = require('../calc.js');\\ntest('multiplies', () => assert.strictEqual(mul(2, 3), 6));\\n\" > test/mul.test.js",
    );
    let repo = repo(
        &files,
        "[checks]\ntest = \"node --test\"\n",
        &adds,
        None,
        |_| {},
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (test/mul.test.js multiplies)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_test_moved_to_another_file_is_not_a_deleted_one() {
    if !ralph::process::on_path("python3") {
        return eprintln!("skipped: python3 is not installed");
    }
    let files = [
        ("runtests.py", crate::verdicts::RUNNER),
        ("calc.py", CALC),
        ("tests/test_calc.py", CALC_TESTS),
    ];
    let moves = implementer(
        "printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nrm tests/test_calc.py\nprintf 'from calc import add, mul\\n\\ndef test_add():\\n    assert add(1, 2) == 3\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n' > tests/test_math.py",
    );
    let repo = repo(
        &files,
        "[checks]\ntest = \"python3 runtests.py\"\n",
        &moves,
        None,
        |_| {},
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "moved: tests/test_calc.py: deletes a test file, but its tests run elsewhere and pass: `test_add`"
        ),
        "{}",
        out.stderr
    );
    // Deleted, not moved: the test that passed on the base runs nowhere.
    let deletes = implementer("printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py\nrm tests/test_calc.py\nprintf 'from calc import mul\\n\\ndef test_mul():\\n    assert mul(2, 3) == 6\\n' > tests/test_math.py");
    let repo = self::repo(
        &files,
        "[checks]\ntest = \"python3 runtests.py\"\n",
        &deletes,
        None,
        |_| {},
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("tests/test_calc.py: deletes a test file"),
        "{}",
        out.stderr
    );
}

/// A Node project whose `npm test` runs `script`: its tests as `(file, text)`.
fn js_project(script: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "package.json",
            format!(r#"{{"name": "calc", "private": true, "scripts": {{"test": "{script}"}}}}"#),
        ),
        ("calc.js", "exports.add = (a, b) => a + b;\n".to_owned()),
        (
            "test/calc.test.js",
            "const calc = require('../calc.js');\ndescribe('calc', () => {\n  test('adds', () => expect(calc.add(1, 2)).toBe(3));\n  test('needs a service', () => expect(process.env.SERVICE).toBe('up'));\n});\n".to_owned(),
        ),
        (
            "test/order.test.js",
            "test('starts fresh', () => expect(global.touched).toBeUndefined());\n".to_owned(),
        ),
    ]
}

/// `check` (a package manager's) running `script` (of `programs`): a new test in a file where
/// another test fails on the base is named and judged; a test the change makes fail beside
/// another and pass alone is flaky; a test that passed on the base and fails is named (`joiner`
/// between its suite and its title, as the runner names them).
fn a_js_runner_names_each_test(programs: &[&str], check: &str, script: &str, joiner: &str) {
    let (sandbox, dirs) = match required_sandbox().and_then(|s| Ok((s, tools(programs)?))) {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let owned = js_project(script);
    let files: Vec<(&str, &str)> = owned.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let adds = implementer(&format!(
        "{}\necho 'exports.mul = (a, b) => a * b;' >> calc.js\nsed -i \"s/^}});$/  test('multiplies', () => expect(calc.mul(2, 3)).toBe(6));\\n}});/\" test/calc.test.js\nprintf \"test('touches', () => {{ global.touched = true; }});\\n%s\" \"$(cat test/order.test.js)\" > test/order.test.js",
        GOOD.lines().nth(1).unwrap()
    ));
    let checks = format!("[checks]\ntest = \"{check}\"\n");
    let checks = checks.as_str();
    let repo = self::repo(&files, checks, &adds, Some(sandbox), |_| {});
    let out = compete(&repo, &dirs);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "new tests: 2 passed (test/calc.test.js multiplies, test/order.test.js touches)"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "test/order.test.js::starts fresh` failed in the full run and passed when run again alone"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("blocked"), "{}", out.stderr);
    let breaks = implementer(&format!(
        "{}\nsed -i 's/toBe(3)/toBe(4)/' test/calc.test.js",
        GOOD.lines().nth(1).unwrap()
    ));
    let repo = self::repo(&files, checks, &breaks, Some(sandbox), |_| {});
    let out = compete(&repo, &dirs);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "test(s) that pass on the base fail, e.g. test/calc.test.js::calc{joiner}adds"
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn jest_names_each_test_and_runs_a_failing_one_alone() {
    a_js_runner_names_each_test(&["jest"], "npm test", "jest --ci", " › ");
}

#[test]
fn jest_behind_pnpm_names_each_test_and_runs_a_failing_one_alone() {
    a_js_runner_names_each_test(&["jest", "pnpm"], "pnpm test", "jest --ci", " › ");
}

#[test]
fn vitest_names_each_test_and_runs_a_failing_one_alone() {
    a_js_runner_names_each_test(&["vitest"], "npm test", "vitest run --globals", " > ");
}
