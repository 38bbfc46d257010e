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
