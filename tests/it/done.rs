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
