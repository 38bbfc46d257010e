//! A tree judged once, through the binary (docs/competition.md "Rounds and attempts"): an
//! attempt whose tree the competition already judged takes the checks' verdicts there and says
//! so — a fix-up that changed nothing runs no check again, a replan that came to the same
//! files neither —, and a check whose verdict was flaky runs again. Every check appends a line
//! to a file in the test's HOME (outside the worktree, writable through `[sandbox] writable`),
//! so the runs are counted, not guessed.

use crate::common::{commit_all, git};
use crate::compete::{run, Repo, Setup, BAD, GOOD};

/// The checks of the test repository, each counting its runs in `$HOME/runs`.
const COUNTED: &str = "[checks]\nsyntax = 'echo syntax >> \"$HOME/runs\"; sh -n lib.sh'\ntest = 'echo test >> \"$HOME/runs\"; sh test.sh'\n";

/// An arbiter whose `verify` role finds nothing satisfied the first time it is asked (the
/// attempt fails, the implementer tries again), and the greeting the second time.
const DOUBTING: &str = r#"cat > /dev/null
case "$RALPH_ROLE" in
  verify)
    if [ -e "$HOME/asked" ]; then
      echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}'
    else
      touch "$HOME/asked"
      echo '{"satisfied":[],"unsatisfied":[{"id":"req_1","reason":"not convinced yet"}]}'
    fi;;
  *) echo 'no' >&2; exit 1;;
esac"#;

/// How many times each check ran, by the lines it left in `$HOME/runs`.
fn runs(repo: &Repo, check: &str) -> usize {
    std::fs::read_to_string(repo.tools.join("runs"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == check)
        .count()
}

#[test]
fn an_attempt_that_changed_nothing_takes_the_verdict_without_running_the_checks() {
    let repo = Repo::with(Setup {
        implementer: GOOD,
        arbiter: DOUBTING,
        base_budget_per_bot: 2,
        checks: COUNTED,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The base once, attempt 1 once; attempt 2 wrote the same greeting: nothing ran again.
    assert_eq!(
        (runs(&repo, "syntax"), runs(&repo, "test")),
        (2, 2),
        "{}",
        out.stderr
    );
    let tree = git(
        &repo.remote,
        &["rev-parse", "ralph/3-add-a-greet-function^{tree}"],
    );
    let said = format!(
        "the tree of attempt 2 is attempt 1's (tree {}): its verdict is taken, not run again",
        &tree.trim()[..7]
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not run again: attempt 1's verdict on the same tree"),
        "each check says so: {}",
        out.stderr
    );
    assert!(out.stderr.contains("Attempt 2/2: verification passed"));
    // Attempt 2's phase ran no check: the base and attempt 1 are the runs.
    assert!(out.stderr.contains("taken r1.2"), "{}", out.stderr);
    assert!(out.stderr.contains("checks: 2 runs"), "{}", out.stderr);
    // The report says so, and the judgements are kept for `--resume`.
    let report = std::fs::read_to_string(repo.root.join(".ralph/runs/3/report.json")).unwrap();
    assert!(report.contains(&said), "{report}");
    let judged = std::fs::read_to_string(repo.root.join(".ralph/runs/3/judged.json")).unwrap();
    assert!(judged.contains(tree.trim()), "{judged}");
    repo.assert_no_token();
}

#[test]
fn a_replan_that_came_to_the_same_tree_takes_its_failure() {
    let repo = Repo::with(Setup {
        implementer: BAD,
        checks: COUNTED,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "escalated: {}", out.stderr);
    // The base and round 1's attempt; the replan wrote the same wrong greeting.
    assert_eq!(
        (runs(&repo, "syntax"), runs(&repo, "test")),
        (2, 2),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("the tree of attempt 1 of round 2 is attempt 1 of round 1's (tree ")
            && out.stderr.contains("its verdict is taken, not run again"),
        "{}",
        out.stderr
    );
    // The failure taken is the failure: the same reasons, the same output.
    let issue = repo.issue();
    assert!(
        issue.contains("the implementation failed, and so did the replan"),
        "{issue}"
    );
    assert!(issue.contains("greet gave: Hi Ann"), "{issue}");
    assert!(
        issue.contains("**Verdict taken**: the tree of attempt 1 of round 2"),
        "{issue}"
    );
}

/// Runs `tests/test_*.py`: `tests/test_calc.py`'s `test_timing` fails in a full run (not alone)
/// once the change leaves a `SHAKY` file.
const TESTS: &str = r#"import os, shlex
from calc import add

def test_add():
    assert add(1, 2) == 3

def test_timing():
    alone = "-k" in shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    assert alone or not os.path.exists("SHAKY"), "timed out under load"
"#;

/// An implementer that adds `mul` and leaves the file that makes a test flaky.
const SHAKY: &str = r#"cat > /dev/null
printf 'def mul(a, b):\n    return a * b\n' >> calc.py
touch SHAKY
echo '{"summary":"added mul","checkboxes_completed":["req_1"]}'"#;

#[test]
fn a_check_whose_verdict_was_flaky_runs_again_on_the_same_tree() {
    if !crate::verdicts::python3() {
        return;
    }
    let repo = Repo::with(Setup {
        implementer: SHAKY,
        arbiter: DOUBTING,
        base_budget_per_bot: 2,
        checks: "[checks]\nlint = 'echo lint >> \"$HOME/runs\"; grep -q def calc.py'\ntest = 'echo test >> \"$HOME/runs\"; python3 runtests.py'\n",
        ..Setup::default()
    });
    for (name, text) in [
        ("runtests.py", crate::verdicts::RUNNER),
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        ("tests/test_calc.py", TESTS),
    ] {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    commit_all(&repo.root, "a calculator");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "failed in the full run and passed when run again alone: flaky, blamed on nobody"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "1 check verdict taken, not run again; run again: `test` (its verdict was flaky)"
        ),
        "{}",
        out.stderr
    );
    // The lint: the base and attempt 1. The tests: the base; a full run and the flaky test
    // alone in attempt 1, and again in attempt 2.
    assert_eq!(
        (runs(&repo, "lint"), runs(&repo, "test")),
        (2, 5),
        "{}",
        out.stderr
    );
}
