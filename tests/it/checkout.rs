//! The checkout stands alone, as a CI checkout does: outside the repository, so a tool that
//! looks for its settings in parent folders finds none of the user's; with a git directory of
//! its own that a check may commit in; with a global git configuration of its own that a CI
//! step may write — none of it reaching the user's repository or home, with the sandbox and
//! without. And the checkouts earlier versions made inside the repository are removed once.

use crate::common::{checkout_of, commit_all, git};
use crate::compete::{run, Repo, Setup};
use std::path::Path;

/// What the checks of [`the_checks_run_in_a_checkout_that_stands_alone`] do besides the test: a
/// settings lookup through the parent folders (ESLint's, Prettier's, pytest's `conftest.py`),
/// a commit in the checkout (a versioning tool's tests), and a global git setting (a CI step).
const CI_STEPS: &str = r#"set -e
d=$(cd .. && pwd)
while :; do
  if [ -e "$d/user-settings.marker" ]; then echo "found the user's settings in $d"; exit 1; fi
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
[ "$(git rev-parse --absolute-git-dir)" = "$(pwd)/.git" ]
git config user.email check@example.com
git config user.name check
git commit --allow-empty -q -m "a check's commit"
git log -1 --format=%s | grep -q "a check's commit"
git config --global ci.step yes
[ "$(git config --global ci.step)" = yes ]
echo "the checkout stands alone"
"#;

fn standalone_repo(mode: &str) -> Repo {
    let sandbox = format!("[sandbox]\nmode = \"{mode}\"\n");
    let repo = Repo::with(Setup {
        checks: "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh && sh ci.sh\"\n",
        sandbox: Some(&sandbox),
        // Where a user's checkout and HOME are: only the layout keeps the two apart.
        under: Some(Path::new(env!("CARGO_TARGET_TMPDIR"))),
        ..Setup::default()
    });
    std::fs::write(repo.root.join("ci.sh"), CI_STEPS).unwrap();
    let ignore = std::fs::read_to_string(repo.root.join(".gitignore")).unwrap();
    std::fs::write(
        repo.root.join(".gitignore"),
        format!("{ignore}user-settings.marker\n"),
    )
    .unwrap();
    commit_all(&repo.root, "ci steps");
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    // The user's own settings in their checkout, where a tool in a nested checkout finds them.
    std::fs::write(repo.root.join("user-settings.marker"), "extends: user\n").unwrap();
    std::fs::write(repo.tools.join(".gitconfig"), "[user]\n\tname = Someone\n").unwrap();
    repo
}

fn assert_stands_alone(repo: &Repo) {
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "Branch ralph/3-add-a-greet-function in {}",
            repo.checkout("3").display()
        )),
        "{}",
        out.stderr
    );
    assert!(!repo.checkout("3").starts_with(&repo.root));
    // The check's commit stayed in the checkout's own git: not in the repository, not pushed.
    let all = git(&repo.root, &["log", "--all", "--format=%s"]);
    assert!(!all.contains("a check's commit"), "{all}");
    let pushed = git(
        &repo.remote,
        &["log", "--format=%s", "ralph/3-add-a-greet-function"],
    );
    assert!(!pushed.contains("a check's commit"), "{pushed}");
    assert_eq!(
        git(
            &repo.remote,
            &["rev-parse", "ralph/3-add-a-greet-function^"]
        ),
        git(&repo.root, &["rev-parse", "main"]),
        "ralph's commit sits on the base"
    );
    // Its identity and the global setting reached neither the repository nor the home folder.
    let config = std::fs::read_to_string(repo.root.join(".git/config")).unwrap();
    assert!(!config.contains("check@example.com"), "{config}");
    assert_eq!(
        std::fs::read_to_string(repo.tools.join(".gitconfig")).unwrap(),
        "[user]\n\tname = Someone\n"
    );
    assert!(!repo.tools.join(".config/git/config").exists());
}

#[test]
fn the_checks_run_in_a_checkout_that_stands_alone() {
    assert_stands_alone(&standalone_repo("off"));
}

#[test]
fn the_checks_run_in_a_checkout_that_stands_alone_in_the_sandbox() {
    if let Err(why) = crate::security::bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    assert_stands_alone(&standalone_repo("required"));
}

#[test]
fn a_configured_root_inside_the_repository_is_refused() {
    let repo = Repo::with(Setup {
        extra_config: "[workspace]\nroot = \".ralph/checkouts\"\n",
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("must be an absolute path or start with `~/`"),
        "{}",
        out.stderr
    );
    let inside = repo.root.join(".ralph/checkouts");
    let config = repo.root.join(".ralph/config.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(".ralph/checkouts", &inside.display().to_string());
    std::fs::write(&config, text).unwrap();
    let issue = repo.issue();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is inside the repository") && out.stderr.contains("[workspace] root"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.issue(), issue, "nothing changed");
    assert!(!inside.exists());
}

#[test]
fn a_configured_root_holds_the_checkouts() {
    let elsewhere = tempfile::tempdir().unwrap();
    let extra = format!("[workspace]\nroot = \"{}\"\n", elsewhere.path().display());
    let repo = Repo::with(Setup {
        implementer: crate::compete::BAD,
        extra_config: &extra,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "escalated: {}", out.stderr);
    let kept = ralph::workspace::checkouts_dir(&repo.root, Some(elsewhere.path()))
        .unwrap()
        .join("3");
    assert!(kept.is_dir(), "kept for inspection: {}", out.stderr);
    assert!(repo.issue().contains(&kept.display().to_string()));
    assert!(!repo.checkout("3").exists());
}

/// A checkout as an earlier version made it: a linked worktree under `.ralph/worktrees/`.
fn legacy_checkout(repo: &Repo, label: &str) -> std::path::PathBuf {
    let path = repo.root.join(".ralph/worktrees").join(label);
    git(
        &repo.root,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &path.to_string_lossy(),
            "main",
        ],
    );
    path
}

#[test]
fn the_checkouts_inside_the_repository_are_removed_once_and_uncommitted_work_is_kept() {
    let repo = Repo::new(crate::compete::GOOD, &["alpha"]);
    let clean = legacy_checkout(&repo, "7");
    let dirty = legacy_checkout(&repo, "8");
    std::fs::write(dirty.join("lib.sh"), "# work in progress\n").unwrap();
    let stray = repo.root.join(".ralph/worktrees/9-read");
    std::fs::create_dir_all(&stray).unwrap();
    // A link an agent left in an old folder is removed as a link, never followed.
    std::os::unix::fs::symlink(&repo.tools, stray.join("home")).unwrap();
    std::fs::write(repo.tools.join("keep.txt"), "mine").unwrap();

    // `ralph doctor` says where the checkouts go, and that the old ones are there.
    let doctor = run(repo.ralph().args(["doctor", "--json"]));
    let findings: serde_json::Value = serde_json::from_str(&doctor.stdout).unwrap();
    let finding = |name: &str| {
        findings["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["area"] == "git" && f["check"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no `{name}` in {findings}"))
    };
    let checkouts = finding("checkouts");
    assert_eq!(checkouts["status"], "ok");
    assert!(checkouts["detail"]
        .as_str()
        .unwrap()
        .starts_with(&repo.checkout("3").parent().unwrap().display().to_string()));
    let old = finding("old checkouts");
    assert_eq!(old["status"], "warn");
    assert!(
        old["detail"].as_str().unwrap().starts_with("3 checkout(s)"),
        "{old}"
    );

    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "Removed 2 checkout(s) an earlier version made inside the repository (their branches stay): .ralph/worktrees/7, .ralph/worktrees/9-read"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(".ralph/worktrees/8: it holds uncommitted changes"),
        "{}",
        out.stderr
    );
    assert!(!clean.exists() && !stray.exists());
    assert_eq!(
        std::fs::read_to_string(dirty.join("lib.sh")).unwrap(),
        "# work in progress\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.tools.join("keep.txt")).unwrap(),
        "mine"
    );
    let list = git(&repo.root, &["worktree", "list", "--porcelain"]);
    assert!(!list.contains(".ralph/worktrees/7"), "{list}");
    assert!(list.contains(".ralph/worktrees/8"), "{list}");

    // Once the work is gone, `ralph reset` removes the last one, and the folder.
    git(
        &repo.root,
        &["-C", &dirty.to_string_lossy(), "checkout", "--", "lib.sh"],
    );
    let out = run(repo.ralph().args(["reset", "--yes", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let done: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        done["removed_checkouts"]
            .to_string()
            .contains(".ralph/worktrees/8"),
        "{done}"
    );
    assert!(!repo.root.join(".ralph/worktrees").exists());
    assert!(!git(&repo.root, &["worktree", "list"]).contains(".ralph/worktrees"));
}

/// After a run that escalated, the issue cannot be run again until its branch and checkout are
/// gone, and git's own commands cannot remove them; `ralph reset --issue 3` can, and doctor
/// lists them. After a run that succeeded, the branch is on the remote too: named, with the
/// command that deletes it there.
#[test]
fn reset_issue_is_the_way_out_of_a_finished_run() {
    let repo = Repo::new(crate::compete::BAD, &["alpha"]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let branch = git(
        &repo.root,
        &["branch", "--list", "ralph/3-*", "--format=%(refname:short)"],
    )
    .trim()
    .to_owned();
    assert!(branch.starts_with("ralph/3-"), "{branch}");
    let checkout = checkout_of(&repo.tools, &repo.root, "3");
    assert!(checkout.is_dir());
    // A second run is refused, with a command that works.
    let out = run(repo.ralph().args(["ready", "3", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("ralph reset --issue 3"),
        "{}",
        out.stderr
    );
    // git's own commands refuse.
    let git_refuses = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&repo.root)
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "git {args:?} worked");
    };
    git_refuses(&["branch", "-D", &branch]);
    git_refuses(&["worktree", "remove", "--force", &checkout.to_string_lossy()]);
    // Doctor lists what the run left.
    let out = run(repo.ralph().args(["doctor", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let left = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "runs left")
        .unwrap_or_else(|| panic!("{report:#}"))["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        left.contains(&format!("#3 (`{branch}`, checkout(s) 3"))
            && left.contains("ralph reset --issue N"),
        "{left}"
    );
    // Off a terminal it wants --yes, and changes nothing without it.
    let out = run(repo.ralph().args(["reset", "--issue", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(checkout.is_dir());
    // A worktree of the user's own on the branch stops it whole, before anything is removed.
    let mine = repo.tools.join("mine");
    git(
        &repo.root,
        &[
            "worktree",
            "add",
            "-q",
            "-f",
            &mine.to_string_lossy(),
            &branch,
        ],
    );
    let out = run(repo.ralph().args(["reset", "--issue", "3", "--yes"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is checked out in a worktree that is not ralph's"),
        "{}",
        out.stderr
    );
    assert!(checkout.is_dir() && mine.is_dir());
    git(
        &repo.root,
        &["worktree", "remove", "--force", &mine.to_string_lossy()],
    );
    let out = run(repo
        .ralph()
        .args(["reset", "--issue", "3", "--yes", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let done: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(done["deleted_branches"], serde_json::json!([branch]));
    assert_eq!(done["run_state_cleared"], true);
    assert_eq!(done["on_remote"], serde_json::json!([]));
    assert!(!checkout.exists());
    assert!(!repo.root.join(".ralph/runs/3").exists());
    assert_eq!(
        git(&repo.root, &["branch", "--list", "ralph/3-*"]).trim(),
        ""
    );
    let list = git(&repo.root, &["worktree", "list", "--porcelain"]);
    assert_eq!(list.matches("worktree ").count(), 1, "{list}");
    // The issue runs again from scratch, and this time succeeds: its branch is pushed.
    crate::common::script(&repo.tools, "implementer.sh", crate::compete::GOOD);
    let out = run(repo.ralph().args(["ready", "3", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Reopened: its box unchecked and ready again.
    let issue = repo.root.join(".ralph/issues/3.md");
    let text = std::fs::read_to_string(&issue).unwrap();
    std::fs::write(&issue, text.replace("- [x]", "- [ ]")).unwrap();
    let out = run(repo.ralph().args(["ready", "3", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(repo
        .ralph()
        .args(["reset", "--issue", "3", "--yes", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let done: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(done["deleted_branches"], serde_json::json!([branch]));
    // The pushed branch is still on the remote: said, with the command that deletes it.
    assert_eq!(done["on_remote"], serde_json::json!([branch]));
    let delete = format!("git push origin --delete {branch}");
    assert!(out.stderr.contains(&delete), "{}", out.stderr);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("already exists on `origin`") && out.stderr.contains(&delete),
        "{}",
        out.stderr
    );
    git(
        &repo.root,
        &["push", "--quiet", "origin", "--delete", &branch],
    );
    // The branch is free again: the run starts (and ends as its fake verify role decides).
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_ne!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("## Round 1/"), "{}", out.stderr);
    // Nothing to reset for an issue never run.
    let out = run(repo.ralph().args(["reset", "--issue", "99", "--yes"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("Nothing to reset for #99"),
        "{}",
        out.stderr
    );
}
