//! Verdicts a maintainer would sign, through the binary (docs/checks.md "Which tests judge a
//! change"): a base with a failing test still judges a fix by its tests; a test that passed on
//! the base and fails after the change rejects it; a flaky one is run again alone and blamed on
//! nobody; a change to a check's settings is tried under the base's settings — refused when it
//! passes only under its own, kept and named when not, and a settings file the agent made a link
//! is replaced in the copy, never written through; a new Rust test compiled out of every check is
//! not another file's test of its name. The test runner is a small pytest stand-in that writes
//! the JUnit report ralph asks pytest for and takes `-k`.

use crate::common::{commit_all, git};
use crate::compete::{run, Repo, Setup};

/// Runs `tests/test_*.py`'s `test_*` functions; writes the JUnit report named in
/// `PYTEST_ADDOPTS`, keeps to `-k 'a and b'`, and leaves out the tests `pytest.ini` names as
/// `skip = name`.
pub(crate) const RUNNER: &str = r#"import glob, importlib.util, os, shlex, sys
from xml.sax.saxutils import quoteattr
args = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
report = next((a.split("=", 1)[1] for a in args if a.startswith("--junitxml=")), None)
words = args[args.index("-k") + 1].split(" and ") if "-k" in args else []
skip = set()
if os.path.exists("pytest.ini"):
    skip = {l.split("=", 1)[1].strip() for l in open("pytest.ini") if l.startswith("skip =")}
sys.path.insert(0, ".")
cases, failed = [], 0
for path in sorted(glob.glob("tests/test_*.py")):
    mod = path[:-3].replace("/", ".")
    spec = importlib.util.spec_from_file_location(mod, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    for name in sorted(n for n in dir(m) if n.startswith("test_")):
        if name in skip or not all(w in mod + "." + name for w in words):
            continue
        try:
            getattr(m, name)()
            cases.append('<testcase classname=%s name=%s/>' % (quoteattr(mod), quoteattr(name)))
            print("PASSED", mod, name)
        except Exception as e:
            failed += 1
            cases.append('<testcase classname=%s name=%s><failure message=%s/></testcase>' % (quoteattr(mod), quoteattr(name), quoteattr(repr(e))))
            print("FAILED", mod, name, repr(e))
if report:
    open(report, "w").write("<testsuite>%s</testsuite>" % "".join(cases))
sys.exit(1 if failed else 0)
"#;

/// The base's tests: one needs a service this machine lacks and fails; one fails in a full
/// run (not alone) once a `SHAKY` file is there.
const BASE_TESTS: &str = r#"import os, shlex
from calc import add

def test_add():
    assert add(1, 2) == 3

def test_needs_service():
    raise AssertionError("no database on this machine")

def test_timing():
    alone = "-k" in shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    assert alone or not os.path.exists("SHAKY"), "timed out under load"
"#;

/// An implementer that adds `mul` and its test, then runs `more` (shell).
fn implementer(more: &str) -> String {
    format!(
        r#"cat > /dev/null
printf 'def mul(a, b):\n    return a * b\n' >> calc.py
printf 'from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n' > tests/test_mul.py
{more}
echo '{{"summary":"added mul","checkboxes_completed":["req_1"]}}'"#
    )
}

/// A repository whose test check is the stand-in runner over a base with a failing test.
fn repo(implementer: &str) -> Repo {
    repo_with(implementer, BASE_TESTS)
}

/// A repository whose test check is the stand-in runner over the base's `tests`.
fn repo_with(implementer: &str, tests: &str) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks: "[checks]\ntest = \"python3 runtests.py\"\n",
        ..Setup::default()
    });
    for (name, text) in [
        ("runtests.py", RUNNER),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        ("tests/test_calc.py", tests),
        ("pytest.ini", "[pytest]\n"),
    ] {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(&repo.root, "a calculator with a test that needs a service");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    repo
}

fn pull_request_body(repo: &Repo) -> Option<String> {
    repo.pull_request_body()
}

pub(crate) fn python3() -> bool {
    let there = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !there {
        eprintln!("skipped: python3 is not installed");
    }
    there
}

#[test]
fn a_fix_on_a_base_with_a_failing_test_is_judged_by_its_tests() {
    if !python3() {
        return;
    }
    let repo = repo(&implementer(""));
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("failing on base"), "{}", out.stderr);
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
    let body = pull_request_body(&repo).expect("a pull request");
    assert!(body.contains("`test` ⚠️ failing on base"), "{body}");

    // The same change breaking a test that passed on the base: rejected, by name.
    let broke = implementer("sed -i 's/a + b/a - b/' calc.py");
    let repo = self::repo(&broke);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("test(s) that pass on the base fail, e.g. tests.test_calc::test_add"),
        "{}",
        out.stderr
    );
    assert!(pull_request_body(&repo).is_none());
}

#[test]
fn a_flaky_test_is_run_again_alone_and_blamed_on_nobody() {
    if !python3() {
        return;
    }
    let repo = repo(&implementer("touch SHAKY"));
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "`tests.test_calc::test_timing` failed in the full run and passed when run again alone: flaky, blamed on nobody"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_settings_change_is_refused_only_when_it_weakened_a_check() {
    if !python3() {
        return;
    }
    // Breaks `add` and skips its test in the runner's settings.
    let weakened = implementer(
        "sed -i 's/a + b/a - b/' calc.py\nprintf '[pytest]\\nskip = test_add\\n' > pytest.ini",
    );
    let repo = repo(&weakened);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    // On a red base the test the settings skip is missed first: it passed there and no longer
    // runs, which is worse whatever the settings say.
    assert!(
        out.stderr.contains(
            "1 test(s) that pass on the base did not run after the change, e.g. tests.test_calc::test_add"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("pytest.ini: changes the lint, type-check, test or coverage settings"),
        "{}",
        out.stderr
    );
    // On a green base the change passes under its own settings, and is tried under the base's.
    let green = BASE_TESTS.replace(
        "def test_needs_service():\n    raise AssertionError(\"no database on this machine\")\n",
        "",
    );
    let repo = repo_with(&weakened, &green);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pytest.ini: changes the lint, type-check, test or coverage settings, and under the base's settings `test` failed: the change passes only under the settings it changed"
        ),
        "{}",
        out.stderr
    );
    // A settings change that weakens nothing (a migration): kept, and named in the PR.
    let migrated = implementer("printf '[pytest]\\n# options moved here\\n' > pytest.ini");
    let repo = self::repo(&migrated);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = pull_request_body(&repo).expect("a pull request");
    assert!(
        body.contains("**Settings changed** `pytest.ini`: changes the lint, type-check, test or coverage settings; the checks pass under the base's settings too"),
        "{body}"
    );
}

/// A crate whose regression tests are modules of one test binary, each naming its test `test`
/// (serde_json's layout); checks detected, none configured.
fn crate_repo(implementer: &str) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks: "",
        ..Setup::default()
    });
    for (name, text) in [
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\nextra = []\n",
        ),
        ("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
        ("tests/regression/main.rs", "mod issue1;\n"),
        (
            "tests/regression/issue1.rs",
            "use calc::add;\n\n#[test]\nfn test() {\n    assert_eq!(add(1, 2), 3);\n}\n",
        ),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\ntarget/\n"),
    ] {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(&repo.root, "a crate with regression tests");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    repo
}

/// Adds `mul` (written by `mul`), and a regression test file whose first line is `head`.
fn crate_implementer(mul: &str, head: &str) -> String {
    format!(
        r#"cat > /dev/null
printf '{mul}\n' >> src/lib.rs
printf '{head}use calc::mul;\n\n#[test]\nfn test() {{\n    assert_eq!(mul(2, 3), 6);\n}}\n' > tests/regression/issue2.rs
echo 'mod issue2;' >> tests/regression/main.rs
echo '{{"summary":"added mul","checkboxes_completed":["req_1"]}}'"#
    )
}

#[test]
fn a_new_test_compiled_out_is_not_another_files_test_of_its_name() {
    if !ralph::process::on_path("cargo") {
        eprintln!("skipped: cargo is not installed");
        return;
    }
    let mul = "\\npub fn mul(a: i32, b: i32) -> i32 {\\n    a * b\\n}";
    let gated = crate_implementer(mul, "#![cfg(feature = \"extra\")]\\n\\n");
    let repo = crate_repo(&gated);
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the change's test `issue2::test` (tests/regression/issue2.rs) never ran under any check: it is compiled only with the cargo feature `extra`"
        ),
        "{}",
        out.stderr
    );

    // Compiled in, and formatted as the project never asked: the lint ralph added advises.
    let sloppy = crate_implementer("pub fn mul(a:i32,b:i32)->i32{a*b}", "");
    let repo = crate_repo(&sloppy);
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("new tests: 1 passed"), "{}", out.stderr);
    assert!(
        out.stderr.contains("advisory, never a reason to reject"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_settings_file_made_a_link_is_put_back_in_the_copy_never_written_through() {
    if !python3() {
        return;
    }
    // A hostile implementer: `pytest.ini` becomes a link to a file of the user's, so that
    // ralph, putting the base's settings back for the second run, would write through it.
    let hostile = implementer("rm pytest.ini && ln -s \"$HOME/victim.ini\" pytest.ini");
    let repo = repo(&hostile);
    let victim = repo.tools.join("victim.ini");
    std::fs::write(&victim, "the user's own file\n").unwrap();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the user's own file\n",
        "{}",
        out.stderr
    );
    // The change itself is judged like any settings change: the checks pass under the base's.
    assert!(
        out.stderr
            .contains("pytest.ini: changes the lint, type-check, test or coverage settings"),
        "{}",
        out.stderr
    );
}

/// A stand-in for the `automod` crate: `automod::dir!("tests/regression")` makes a module of
/// every other `.rs` file in that folder. Like the real one, it tells cargo nothing of the files
/// it reads, so cargo rebuilds the test binary only when a file it knows changes.
const AUTOMOD: &str = r#"extern crate proc_macro;
use proc_macro::TokenStream;

#[proc_macro]
pub fn dir(input: TokenStream) -> TokenStream {
    let rel = input.to_string().trim_matches('"').to_owned();
    let dir = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join(rel);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".rs") && n != "main.rs")
        .map(|n| format!("mod {};", n.trim_end_matches(".rs")))
        .collect();
    names.sort();
    names.concat().parse().unwrap()
}
"#;

/// serde_json's layout: the regression tests are the files `automod::dir!` finds.
fn automod_repo(implementer: &str) -> Repo {
    let repo = crate_repo(implementer);
    for (name, text) in [
        (
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dev-dependencies]\nautomod = { path = \"automod\" }\n",
        ),
        (
            "automod/Cargo.toml",
            "[package]\nname = \"automod\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\nproc-macro = true\n",
        ),
        ("automod/src/lib.rs", AUTOMOD),
        (
            "tests/regression/main.rs",
            "automod::dir!(\"tests/regression\");\n",
        ),
    ] {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(&repo.root, "regression tests by automod");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    repo
}

#[test]
fn a_new_test_file_only_a_macro_finds_is_built_and_judged() {
    if !ralph::process::on_path("cargo") {
        eprintln!("skipped: cargo is not installed");
        return;
    }
    // Only a new test file: cargo, which the baseline's build left in the worktree, would see
    // no change, and the new test would never run.
    let test_only = |expected: i32| {
        format!(
            "cat > /dev/null\nprintf 'use calc::add;\\n\\n#[test]\\nfn test() {{\\n    assert_eq!(add(2, 2), {expected});\\n}}\\n' > tests/regression/issue2.rs\necho '{{\"summary\":\"a regression test\",\"checkboxes_completed\":[\"req_1\"]}}'"
        )
    };
    let repo = automod_repo(&test_only(4));
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (tests/regression/issue2.rs issue2::test)"),
        "{}",
        out.stderr
    );

    let repo = automod_repo(&test_only(5));
    let out = run(repo
        .ralph()
        .env_remove("CARGO_TARGET_DIR")
        .args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("new tests: 1 failed"), "{}", out.stderr);
}
