//! Every failure reaches the agents by name (docs/checks.md "What a failing check tells the
//! agents"), through the binary: a Makefile driving a home-made runner that prints banners,
//! `PASS:` lines, a `FAIL:` line with its assertion and its own summary — the terminal and the
//! replan prompt the bots get name the failing test and show its assertion, without the passing
//! noise.

use crate::compete::run;
use crate::tool_verdicts::{implementer, repo};

/// A runner of its own: each `t/*.sh` is a test, its output shown under its `FAIL:` line.
const RUNNER: &str = r#"echo "================================================================================"
echo "  calc test suite"
echo "================================================================================"
total=0; passed=0
for t in t/*.sh; do
  name=$(basename "$t" .sh)
  total=$((total + 1))
  if out=$(sh "$t" 2>&1); then
    echo "PASS: $name"; passed=$((passed + 1))
  else
    echo "FAIL: $name"; echo "$out" | sed 's/^/  /'
  fi
done
echo "================================================================================"
if [ "$passed" = "$total" ]; then echo "PASS: all $total tests passed."; else echo "FAIL: $passed of $total tests passed."; exit 1; fi
"#;

#[test]
fn a_home_made_runners_failing_test_and_its_assertion_reach_the_bots() {
    let mut files: Vec<(String, String)> = vec![
        ("Makefile".into(), "test:\n\tsh runtests.sh\n".into()),
        ("runtests.sh".into(), RUNNER.into()),
    ];
    for i in 1..=40 {
        files.push((
            format!("t/add_{i:02}.sh"),
            format!(". ./lib.sh\n[ \"$(add {i} {i})\" = {} ] || exit 1\n", 2 * i),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    // The change adds only the test: `mul` does not exist.
    let adds = implementer(
        "printf '. ./lib.sh\\nr=$(mul 2 3 2>/dev/null)\\n[ \"$r\" = 6 ] || { echo \"mul 2 3: expected 6, got ${r:-nothing}\"; exit 1; }\\n' > t/mul.sh",
    );
    let repo = repo(
        &files,
        "[checks]\ntest = \"make test\"\n",
        &adds,
        None,
        |_| {},
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "the test-only change fails: {}", out.stderr);
    for said in [
        &out.stderr,
        &std::fs::read_to_string(repo.tools.join("alpha.prompt")).unwrap(),
    ] {
        assert!(
            said.contains("FAIL: mul"),
            "the failing test is named: {said}"
        );
        assert!(
            said.contains("mul 2 3: expected 6, got nothing"),
            "its assertion is shown: {said}"
        );
        assert!(
            said.contains("FAIL: 40 of 41 tests passed."),
            "and the summary: {said}"
        );
        assert!(
            !said.contains("PASS: add_"),
            "the passing noise is cut: {said}"
        );
    }
}

/// Where `.ci/run` installs AVA and c8; `None` with why where they are not.
fn ava_and_c8() -> Result<std::path::PathBuf, String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/ci-tools/ava/node_modules");
    if !ralph::process::on_path("npm") {
        return Err("npm is not installed".into());
    }
    ["ava", "c8"]
        .iter()
        .all(|p| dir.join(p).join("package.json").is_file())
        .then_some(dir)
        .ok_or_else(|| {
            "AVA and c8 are not installed (`.ci/run` installs them into target/ci-tools/ava)".into()
        })
}

/// An AVA project under c8, whose `npm test` finds them where `.ci/run` installed them (on
/// `PATH`, and `NODE_PATH` for `require('ava')`).
fn ava_project() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "c8 ava"}}"#,
        ),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\ncoverage/\n"),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.js",
            "const test = require('ava');\nconst calc = require('../calc.js');\ntest('adds', t => { t.is(calc.add(1, 2), 3); });\n",
        ),
    ]
}

/// `ralph compete 3` in `repo` with AVA and c8 from `modules`.
fn compete_with(repo: &crate::compete::Repo, modules: &std::path::Path) -> crate::common::Out {
    run(repo
        .ralph()
        .env(
            "PATH",
            crate::tool_verdicts::path_with(&[modules.join(".bin")]),
        )
        .env("NODE_PATH", modules)
        .args(["compete", "3"]))
}

#[test]
fn avas_failing_test_is_named_with_its_difference_and_c8_measures_coverage() {
    let modules = match ava_and_c8() {
        Ok(m) => m,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let files = ava_project();
    let test =
        "printf \"test('multiplies', t => { t.is(calc.mul(2, 3), 6); });\\n\" >> test/calc.js";
    // The test alone: `calc.mul` is no function.
    let repo = repo(&files, "", &implementer(test), None, |_| {});
    let out = compete_with(&repo, &modules);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let prompt = std::fs::read_to_string(repo.tools.join("alpha.prompt")).unwrap();
    for said in [&out.stderr, &prompt] {
        assert!(
            said.contains("✘ [fail]: multiplies"),
            "the failing test is named: {said}"
        );
        assert!(
            said.contains("calc.mul is not a function"),
            "its error is shown: {said}"
        );
        assert!(said.contains("1 test failed"), "and the summary: {said}");
    }
    // The change's test file ran first, alone, and its failure was the verdict.
    assert!(
        out.stderr
            .contains("the change's own tests, run first alone (`npm test -- test/calc.js`), fail: `multiplies`"),
        "{}",
        out.stderr
    );
    // With the function: AVA named the new test, and c8's report gave the coverage.
    let fix = format!("echo 'exports.mul = (a, b) => a * b;' >> calc.js\n{test}");
    let repo = self::repo(&files, "", &implementer(&fix), None, |_| {});
    let out = compete_with(&repo, &modules);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (test/calc.js multiplies)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("coverage: 100.00% → 100.00%"),
        "{}",
        out.stderr
    );
}

/// A crate with one integration test, `tests/basic.rs::adds`.
const CALC_CRATE: [(&str, &str); 4] = [
    (
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    ),
    (
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    ),
    (
        "tests/basic.rs",
        "#[test]\nfn adds() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n",
    ),
    (".gitignore", ".ralph/worktrees/\n.ralph/runs/\ntarget/\n"),
];

/// A competition on [`CALC_CRATE`] whose implementer runs `script`: its first run of the
/// change's own tests (`command`) is the verdict, failing `test`, and the bots are told `why`.
fn first_run_decides(script: &str, command: &str, test: &str, why: &str) {
    if !ralph::process::on_path("cargo") {
        return eprintln!("skipped: cargo is not installed");
    }
    let change = implementer(script);
    let repo = repo(
        &CALC_CRATE,
        "[checks]\ntest = \"cargo test\"\n",
        &change,
        None,
        |_| {},
    );
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let verdict = format!("the change's own tests, run first alone (`{command}`), fail: `{test}`");
    assert!(out.stderr.contains(&verdict), "{}", out.stderr);
    let prompt = std::fs::read_to_string(repo.tools.join("alpha.prompt")).unwrap();
    assert!(prompt.contains(why), "{prompt}");
}

#[test]
fn a_rust_changes_new_test_file_runs_first_as_its_target_and_its_failure_is_the_verdict() {
    // The change's test expects a `halve` that rounds up; the library has none that does.
    first_run_decides(
        "printf 'pub fn halve(n: i32) -> i32 {\\n    n / 2\\n}\\n' >> src/lib.rs\nprintf '#[test]\\nfn rounds_up() {\\n    assert_eq!(calc::halve(3), 2, \"halve(3) rounds up\");\\n}\\n' > tests/halves.rs",
        "cargo test --test halves",
        "tests/halves.rs::rounds_up",
        "halve(3) rounds up",
    );
}

/// A test the base had and passed, edited by the change so that it fails, fails again when run
/// alone: it is the change's doing, and the verdict of the first run.
#[test]
fn an_edited_test_that_fails_again_alone_is_the_first_runs_verdict() {
    first_run_decides(
        "printf '#[test]\\nfn adds() {\\n    assert_eq!(calc::add(2, 2), 5, \"two and two\");\\n}\\n' > tests/basic.rs",
        "cargo test --test basic",
        "tests/basic.rs::adds",
        "two and two",
    );
}

/// Where `.ci/run` installs node-tap; why not where it is not.
fn node_tap() -> Result<std::path::PathBuf, String> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/ci-tools/tap/node_modules");
    if !ralph::process::on_path("node") {
        return Err("node is not installed".into());
    }
    dir.join("tap/package.json")
        .is_file()
        .then_some(dir)
        .ok_or_else(|| {
            "node-tap is not installed (`.ci/run` installs it into target/ci-tools/tap)".into()
        })
}

/// node-tap 21, the real program: the change's failing test is named by its file and title with
/// its diff in what the bots are told, and with the fix the new test is named as passed.
#[test]
fn node_taps_failing_test_is_named_with_its_diff_and_a_passing_one_by_its_title() {
    let modules = match node_tap() {
        Ok(m) => m,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let files = [
        (
            "package.json",
            r#"{"name": "calc", "private": true, "scripts": {"test": "tap"}}"#,
        ),
        (".gitignore", ".ralph/worktrees/\n.ralph/runs/\n.tap/\n"),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
        (
            "test/calc.test.js",
            "const t = require('tap');\nconst calc = require('../calc.js');\nt.test('adds', t => { t.equal(calc.add(1, 2), 3); t.end(); });\n",
        ),
    ];
    let test = "printf \"t.test('multiplies', t => { t.equal(calc.add(2, 3), 6, 'mul 2 3'); t.end(); });\\n\" >> test/calc.test.js";
    // node-tap loads `tap` as an ES module, which NODE_PATH does not reach: the project's
    // `node_modules` is a committed link to where `.ci/run` installed it.
    let link = |root: &std::path::Path| {
        std::os::unix::fs::symlink(&modules, root.join("node_modules")).unwrap()
    };
    let repo = repo(&files, "", &implementer(test), None, link);
    let out = compete_with(&repo, &modules);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let prompt = std::fs::read_to_string(repo.tools.join("alpha.prompt")).unwrap();
    for said in [&out.stderr, &prompt] {
        assert!(
            said.contains("not ok 1 - mul 2 3"),
            "the failing assertion: {said}"
        );
        assert!(said.contains("+5"), "its diff: {said}");
    }
    assert!(
        out.stderr.contains("`multiplies`"),
        "the failing test by its title: {}",
        out.stderr
    );
    let fix = "printf \"t.test('multiplies', t => { t.equal(calc.add(2, 3), 5); t.end(); });\\n\" >> test/calc.test.js";
    let repo = self::repo(&files, "", &implementer(fix), None, link);
    let out = compete_with(&repo, &modules);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("new tests: 1 passed (test/calc.test.js multiplies)"),
        "{}",
        out.stderr
    );
}
