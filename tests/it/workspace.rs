//! The git side against hermetic fixtures: repositories built with git2 in temporary
//! directories (no user or system git configuration, a fixed identity) and a local bare
//! repository as the remote. Preflight refusals change nothing; the worktree isolates the
//! implementation from the user's checkout; resets, diffs, protected paths, the pre-commit hook,
//! commits with trailers, and the push to the bare remote.

use crate::common::git;

use git2::{Repository, Signature};
use ralph::workspace::{
    analyse, commit, create_worktree, preflight, protected_findings, push, remove_worktree,
    reset_worktree, seal, CommitInfo, GitWorkspace, Preflight, PreflightOptions, Workspace,
    WorkspaceError,
};
use std::path::{Path, PathBuf};
use std::sync::Once;
use tempfile::TempDir;

/// No user or system git configuration reaches libgit2 or the git program in this binary.
fn hermetic() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let home = std::env::temp_dir().join(format!("ralph-git-home-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        std::env::set_var("HOME", &home);
        std::env::set_var("XDG_CONFIG_HOME", &home);
        std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
        std::env::set_var("GIT_CONFIG_GLOBAL", home.join("gitconfig"));
        std::env::set_var("GIT_AUTHOR_NAME", "Fixture");
        std::env::set_var("GIT_AUTHOR_EMAIL", "fixture@example.com");
        std::env::set_var("GIT_COMMITTER_NAME", "Fixture");
        std::env::set_var("GIT_COMMITTER_EMAIL", "fixture@example.com");
    });
}

fn sig() -> Signature<'static> {
    Signature::new(
        "Fixture",
        "fixture@example.com",
        &git2::Time::new(1_800_000_000, 0),
    )
    .unwrap()
}

/// Writes files and commits them all on the current branch.
fn commit_files(repo: &Repository, files: &[(&str, &str)], message: &str) {
    let root = repo.workdir().unwrap();
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let parents: Vec<git2::Commit> = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig(), &sig(), message, &tree, &parent_refs)
        .unwrap();
}

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    remote: PathBuf,
    /// The repository's checkouts folder: outside it, as ralph's always is.
    checkouts: PathBuf,
}

impl Fixture {
    /// A repository on `main` with a small project, pushed to a bare `origin` whose HEAD is set.
    fn new() -> Fixture {
        hermetic();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        let remote = dir.path().join("origin.git");
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let repo = Repository::init_opts(&root, &opts).unwrap();
        commit_files(
            &repo,
            &[
                (".gitignore", "target/\n.ralph/worktrees/\n"),
                (
                    "src/lib.rs",
                    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
                ),
                ("src/old.rs", "// to be deleted\n"),
                (
                    "tests/add.rs",
                    "#[test]\nfn adds() {\n    assert_eq!(ralph_fixture::add(1, 2), 3);\n}\n",
                ),
                (".ralph/config.toml", "tracker = \"local\"\n"),
            ],
            "initial",
        );
        let mut bare = git2::RepositoryInitOptions::new();
        bare.bare(true).initial_head("main");
        Repository::init_opts(&remote, &bare).unwrap();
        repo.remote("origin", remote.to_str().unwrap()).unwrap();
        git(&root, &["push", "--quiet", "origin", "main"]);
        git(&root, &["remote", "set-head", "origin", "main"]);
        let checkouts = dir.path().canonicalize().unwrap().join("checkouts/work-1");
        Fixture {
            _dir: dir,
            root: root.canonicalize().unwrap(),
            remote,
            checkouts,
        }
    }

    fn repo(&self) -> Repository {
        Repository::open(&self.root).unwrap()
    }

    fn refs(&self) -> Vec<String> {
        let mut r: Vec<String> = self
            .repo()
            .references()
            .unwrap()
            .flatten()
            .filter_map(|r| r.name().map(String::from))
            .collect();
        r.sort();
        r
    }

    fn options(&self) -> PreflightOptions<'static> {
        PreflightOptions {
            issue: 12,
            title: "Add a --verbose flag",
            base: None,
            default_branch: None,
            resume: false,
        }
    }

    async fn preflight(&self) -> Preflight {
        preflight(&self.root, "origin", None, &self.options())
            .await
            .unwrap()
    }
}

fn refusal(r: Result<Preflight, WorkspaceError>) -> (String, String) {
    match r {
        Err(WorkspaceError::Refused { message, hint }) => (message, hint),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn preflight_finds_the_base_and_the_branch_name() {
    let f = Fixture::new();
    let p = f.preflight().await;
    assert_eq!(p.base, "main");
    assert_eq!(p.branch, "ralph/12-add-a-verbose-flag");
    assert!(p.has_remote);
    // Changes under .ralph/ are allowed (events land there).
    std::fs::create_dir_all(f.root.join(".ralph/events")).unwrap();
    std::fs::write(f.root.join(".ralph/events/e.json"), "{}").unwrap();
    std::fs::write(f.root.join(".ralph/config.toml"), "tracker = \"github\"\n").unwrap();
    assert!(preflight(&f.root, "origin", None, &f.options())
        .await
        .is_ok());
}

#[tokio::test]
async fn preflight_refusals_say_what_to_do_and_change_nothing() {
    let f = Fixture::new();
    let before = f.refs();

    let plain = tempfile::tempdir().unwrap();
    let (msg, hint) = refusal(preflight(plain.path(), "origin", None, &f.options()).await);
    assert!(msg.contains("not a git repository"), "{msg}");
    assert!(hint.contains("-C"));

    std::fs::write(f.root.join("src/lib.rs"), "changed").unwrap();
    std::fs::write(f.root.join("notes.txt"), "untracked").unwrap();
    let (msg, hint) = refusal(preflight(&f.root, "origin", None, &f.options()).await);
    assert!(
        msg.contains("src/lib.rs") && msg.contains("notes.txt"),
        "{msg}"
    );
    assert!(hint.contains("commit or stash"));
    git(&f.root, &["checkout", "--quiet", "--", "src/lib.rs"]);
    std::fs::remove_file(f.root.join("notes.txt")).unwrap();

    let mut opts = f.options();
    opts.base = Some("release");
    let (msg, _) = refusal(preflight(&f.root, "origin", None, &opts).await);
    assert!(msg.contains("`release` does not exist"), "{msg}");

    // The branch exists locally…
    git(&f.root, &["branch", "ralph/12-add-a-verbose-flag"]);
    let (msg, hint) = refusal(preflight(&f.root, "origin", None, &f.options()).await);
    assert!(msg.contains("already exists"), "{msg}");
    assert!(hint.contains("--resume"));
    let mut resume = f.options();
    resume.resume = true;
    assert!(
        preflight(&f.root, "origin", None, &resume).await.is_ok(),
        "--resume accepts it"
    );
    git(&f.root, &["branch", "-D", "ralph/12-add-a-verbose-flag"]);

    // …or only on the remote, pushed from another clone.
    let other = tempfile::tempdir().unwrap();
    git(
        other.path(),
        &["clone", "--quiet", f.remote.to_str().unwrap(), "c"],
    );
    let clone = other.path().join("c");
    git(
        &clone,
        &[
            "push",
            "--quiet",
            "origin",
            "main:refs/heads/ralph/12-add-a-verbose-flag",
        ],
    );
    let (msg, _) = refusal(preflight(&f.root, "origin", None, &f.options()).await);
    assert!(msg.contains("already exists on `origin`"), "{msg}");
    // Fetched here, then deleted there (a merged pull request's branch): the remote-tracking
    // branch left behind is stale, and the remote's word counts.
    git(&f.root, &["fetch", "--quiet", "origin"]);
    git(
        &clone,
        &[
            "push",
            "--quiet",
            "origin",
            "--delete",
            "ralph/12-add-a-verbose-flag",
        ],
    );
    assert!(git(&f.root, &["branch", "-r"]).contains("origin/ralph/12-add-a-verbose-flag"));
    assert!(preflight(&f.root, "origin", None, &f.options())
        .await
        .is_ok());
    // When the remote cannot be asked, the remote-tracking branch is all there is to go by.
    let url = git(&f.root, &["remote", "get-url", "origin"]);
    git(
        &f.root,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    let (msg, _) = refusal(preflight(&f.root, "origin", None, &f.options()).await);
    assert!(msg.contains("already exists on `origin`"), "{msg}");
    git(&f.root, &["remote", "set-url", "origin", url.trim()]);
    git(&f.root, &["fetch", "--quiet", "--prune", "origin"]);

    // No remote HEAD (a clone made with `git remote add` and `git push -u`): the tracker's
    // default branch wins, else the remote is asked, else the current branch if it tracks it.
    git(&f.root, &["remote", "set-head", "origin", "--delete"]);
    let mut opts = f.options();
    opts.default_branch = Some("main");
    let p = preflight(&f.root, "origin", None, &opts).await.unwrap();
    assert_eq!(
        (p.base.as_str(), p.base_from.as_str()),
        ("main", "the repository's default branch on GitHub")
    );
    let p = preflight(&f.root, "origin", None, &f.options())
        .await
        .unwrap();
    assert_eq!(
        (p.base.as_str(), p.base_from.as_str()),
        ("main", "`git ls-remote --symref origin HEAD`")
    );
    // The remote cannot be asked: the current branch, since it tracks `origin`.
    let url = git(&f.root, &["remote", "get-url", "origin"]);
    git(
        &f.root,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    git(
        &f.root,
        &["branch", "--set-upstream-to=origin/main", "main"],
    );
    let p = preflight(&f.root, "origin", None, &f.options())
        .await
        .unwrap();
    assert_eq!(
        (p.base.as_str(), p.base_from.as_str()),
        ("main", "the current branch, which tracks `origin`")
    );
    // …and when it does not track it, nothing is left to go by.
    git(&f.root, &["branch", "--unset-upstream", "main"]);
    let (msg, hint) = refusal(preflight(&f.root, "origin", None, &f.options()).await);
    assert!(msg.contains("default branch"), "{msg}");
    assert!(hint.contains("--base") && hint.contains("git remote set-head origin --auto"));
    git(&f.root, &["remote", "set-url", "origin", url.trim()]);
    git(&f.root, &["remote", "set-head", "origin", "main"]);

    assert_eq!(f.refs(), before, "preflight changed no reference");
    assert!(!f.root.join(".ralph/worktrees").exists());
}

#[tokio::test]
async fn the_worktree_isolates_the_implementation_and_resets_between_attempts() {
    let f = Fixture::new();
    let p = f.preflight().await;
    let head_before = f.repo().head().unwrap().target().unwrap();
    let wt = create_worktree(&p, &f.checkouts, "origin", None)
        .await
        .unwrap();
    assert_eq!(wt.path, f.checkouts.join("12"), "outside the repository");
    assert_eq!(
        git(&wt.path, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "ralph/12-add-a-verbose-flag"
    );
    // A git directory of its own, whose objects are the repository's.
    assert_eq!(
        git(&wt.path, &["rev-parse", "--absolute-git-dir"]).trim(),
        wt.path.join(".git").display().to_string()
    );
    assert!(git(&wt.path, &["status", "--porcelain"]).is_empty());
    assert_eq!(
        git(&wt.path, &["rev-parse", "origin/main"]),
        git(&f.root, &["rev-parse", "origin/main"])
    );

    // An attempt edits, adds and ignores files in the worktree only.
    std::fs::write(wt.path.join("src/lib.rs"), "broken").unwrap();
    std::fs::write(wt.path.join("src/new.rs"), "new").unwrap();
    std::fs::create_dir_all(wt.path.join("target")).unwrap();
    std::fs::write(wt.path.join("target/cache"), "kept").unwrap();
    assert!(
        git(&f.root, &["status", "--porcelain"]).is_empty(),
        "the main checkout is untouched"
    );
    assert_eq!(f.repo().head().unwrap().target().unwrap(), head_before);
    assert!(!f.root.join("src/new.rs").exists());

    reset_worktree(&wt).unwrap();
    assert!(std::fs::read_to_string(wt.path.join("src/lib.rs"))
        .unwrap()
        .contains("a + b"));
    assert!(!wt.path.join("src/new.rs").exists());
    assert!(
        wt.path.join("target/cache").exists(),
        "ignored build output is kept"
    );

    // Resuming finds the same worktree.
    let mut resume = f.options();
    resume.resume = true;
    let again = create_worktree(
        &preflight(&f.root, "origin", None, &resume).await.unwrap(),
        &f.checkouts,
        "origin",
        None,
    )
    .await
    .unwrap();
    assert_eq!(again, wt);

    remove_worktree(&f.root, &wt).unwrap();
    assert!(!wt.path.exists());
    assert!(!git(&f.root, &["worktree", "list"]).contains(&wt.path.display().to_string()));
    assert!(f
        .repo()
        .find_branch("ralph/12-add-a-verbose-flag", git2::BranchType::Local)
        .is_ok());
}

#[tokio::test]
async fn diff_stats_count_known_changes_and_find_protected_paths() {
    let f = Fixture::new();
    let wt = create_worktree(&f.preflight().await, &f.checkouts, "origin", None)
        .await
        .unwrap();
    // +2 −1 in lib.rs, a new 3-line file, a deleted 1-line file.
    std::fs::write(
        wt.path.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n\npub fn one() -> i32 { 1 }\n",
    )
    .unwrap();
    std::fs::write(wt.path.join("src/verbose.rs"), "a\nb\nc\n").unwrap();
    std::fs::remove_file(wt.path.join("src/old.rs")).unwrap();
    let stats = analyse(&wt).unwrap();
    let mut files: Vec<(String, &str, u64, u64)> = stats
        .files
        .iter()
        .map(|f| (f.path.clone(), f.status, f.added, f.removed))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("src/lib.rs".into(), "modified", 3, 1),
            ("src/old.rs".into(), "deleted", 0, 1),
            ("src/verbose.rs".into(), "added", 3, 0),
        ]
    );
    assert_eq!(
        (
            stats.lines_added,
            stats.lines_removed,
            stats.files_affected()
        ),
        (6, 2, 3)
    );
    assert!(protected_findings(&stats).is_empty());

    // Skipping the test and touching CI are caught.
    std::fs::write(
        wt.path.join("tests/add.rs"),
        "#[test]\n#[ignore]\nfn adds() {\n    assert_eq!(ralph_fixture::add(1, 2), 3);\n}\n",
    )
    .unwrap();
    std::fs::create_dir_all(wt.path.join(".github/workflows")).unwrap();
    std::fs::write(wt.path.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    let findings = protected_findings(&analyse(&wt).unwrap());
    let reasons: Vec<String> = findings
        .iter()
        .map(|f| format!("{}: {}", f.path, f.reason))
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("tests/add.rs: skips 1")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with(".github/workflows/ci.yml")),
        "{reasons:?}"
    );
}

fn info<'a>() -> CommitInfo<'a> {
    CommitInfo {
        message: "Add a --verbose flag (#12)",
        author_name: "ralph",
        author_email: "ralph@example.com",
        bot: "smart_bot_2",
        run_id: "20261122T101500Z-12-abcd",
    }
}

#[cfg(unix)]
fn hook(root: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = root.join(".git/hooks/pre-commit");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn commits_run_the_hook_and_carry_the_trailers_then_push_to_the_remote() {
    let f = Fixture::new();
    let wt = create_worktree(&f.preflight().await, &f.checkouts, "origin", None)
        .await
        .unwrap();
    std::fs::write(
        wt.path.join("src/verbose.rs"),
        "pub const VERBOSE: bool = true;\n",
    )
    .unwrap();

    hook(
        &f.root,
        "echo 'lint: src/verbose.rs:1 unused constant' >&2\nexit 1",
    );
    match commit(&wt, &info(), &seal::take(&f.root, &wt).unwrap()).await {
        Err(WorkspaceError::Hook { code, output }) => {
            assert_eq!(code, "1");
            assert!(output.contains("unused constant"), "{output}");
        }
        other => panic!("expected the hook to fail: {other:?}"),
    }
    // A hook that fixes a file: its fix is part of the commit.
    hook(&f.root, "echo '// formatted' >> src/verbose.rs");
    let id = commit(&wt, &info(), &seal::take(&f.root, &wt).unwrap())
        .await
        .unwrap();
    let repo = Repository::open(&wt.path).unwrap();
    let c = repo.find_commit(git2::Oid::from_str(&id).unwrap()).unwrap();
    assert_eq!(c.author().name(), Some("ralph"));
    assert_eq!(c.committer().email(), Some("ralph@example.com"));
    let msg = c.message().unwrap();
    assert!(msg.starts_with("Add a --verbose flag (#12)\n\n"), "{msg}");
    assert!(msg.contains("\nRalph-Bot: smart_bot_2\nRalph-Run: 20261122T101500Z-12-abcd\n"));
    let committed = git(&wt.path, &["show", "HEAD:src/verbose.rs"]);
    assert!(committed.contains("// formatted"));
    assert!(git(&wt.path, &["status", "--porcelain"]).is_empty());

    // A token is not used for a local remote; the push lands in the bare repository.
    let token = ralph::secret::GitToken::new(
        "x-access-token",
        ralph::secret::Secret::new("ghp_workspaceTestToken0123456789"),
    );
    push(&f.root, &wt, "origin", Some(&token)).await.unwrap();
    let bare = Repository::open_bare(&f.remote).unwrap();
    let pushed = bare
        .refname_to_id("refs/heads/ralph/12-add-a-verbose-flag")
        .unwrap();
    assert_eq!(pushed.to_string(), id);
    // The user's checkout still has no such file.
    assert!(!f.root.join("src/verbose.rs").exists());
}

#[tokio::test]
async fn a_failed_push_says_why() {
    let f = Fixture::new();
    let wt = create_worktree(&f.preflight().await, &f.checkouts, "origin", None)
        .await
        .unwrap();
    std::fs::remove_dir_all(&f.remote).unwrap();
    match push(&f.root, &wt, "origin", None).await {
        Err(WorkspaceError::Push { message }) => assert!(!message.is_empty()),
        other => panic!("expected a push error: {other:?}"),
    }
    match push(&f.root, &wt, "upstream", None).await {
        Err(WorkspaceError::Push { message }) => assert!(message.contains("no remote `upstream`")),
        other => panic!("expected a push error: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verification_runs_the_checks_measures_coverage_and_applies_the_rules() {
    use ralph::checks::baseline::Baseline;
    use ralph::checks::coverage::CoverageSpec;
    use ralph::checks::{run_checks, CheckPlan, CheckSpec, CheckStatus};
    use ralph::verify::verify;
    use std::time::Duration;

    let f = Fixture::new();
    let ws = GitWorkspace::new(&f.root, &f.checkouts, "origin");
    let pre = ws.preflight(&f.options()).await.unwrap();
    let wt = ws.create_worktree(&pre).await.unwrap();
    // Coverage is the number in COVERAGE, or 90 when the file is absent; `legacy` fails on the
    // base with one problem.
    let plan = CheckPlan {
        source: "config".into(),
        checks: vec![
            CheckSpec::new("format", "! grep -q '  $' src/lib.rs"),
            CheckSpec::new("lint", "no-such-linter-ralph src"),
            CheckSpec::new(
                "legacy",
                "echo 'src/lib.rs:1:1: E1 an old problem'; grep -c E2 src/*.rs | grep -v ':0' | sed 's/$/:1: E2/'; exit 1",
            ),
            CheckSpec::new("test", "grep -q 'a + b' src/lib.rs"),
        ],
        coverage: Some(CoverageSpec {
            test_command: None,
            command: "cat COVERAGE 2>/dev/null || echo 90".into(),
            reason: "test".into(),
        }),
        require_test: true,
        env: Vec::new(),
        setup: None,
        native: None,
        notes: Vec::new(),
    };
    let t = Duration::from_secs(20);
    let watch = ralph::checks::run::Unwatched;
    let ran = run_checks(&plan, &wt.path, t, &watch, Default::default()).await;
    let base = Baseline::from_results(&wt.base_commit, &ran.checks, ran.coverage, None);
    assert_eq!(base.coverage, Some(90.0));
    assert_eq!(base.unverifiable(true), None);
    let before = Some(&base);

    // A good change: passes, with the missing linter reported as unavailable.
    std::fs::write(
        wt.path.join("src/extra.rs"),
        "pub fn one() -> i32 {\n    1\n}\n",
    )
    .unwrap();
    let good = verify(&ws, &wt, &plan, before, t, &watch, Default::default())
        .await
        .unwrap();
    let statuses: Vec<CheckStatus> = good.checks.iter().map(|c| c.status).collect();
    assert_eq!(
        statuses,
        [
            CheckStatus::Passed,
            CheckStatus::Unavailable,
            CheckStatus::FailingOnBase,
            CheckStatus::Passed
        ]
    );
    assert_eq!(good.failing_on_base().count(), 1);
    assert!(good.passed(), "{:?}", good.failure_reasons());
    assert_eq!(good.coverage.delta(), Some(0.0));
    assert_eq!((good.diff.lines_added, good.diff.files_affected()), (3, 1));

    // A bad one: the tests pass, but coverage drops and a test file is deleted.
    std::fs::write(wt.path.join("COVERAGE"), "85.5\n").unwrap();
    std::fs::remove_file(wt.path.join("tests/add.rs")).unwrap();
    let bad = verify(&ws, &wt, &plan, before, t, &watch, Default::default())
        .await
        .unwrap();
    assert!(!bad.passed());
    let reasons = bad.failure_reasons();
    assert!(reasons
        .iter()
        .any(|r| r.contains("coverage dropped from 90.00% to 85.50%")));
    assert!(reasons
        .iter()
        .any(|r| r == "tests/add.rs: deletes a test file"));
    assert_eq!(bad.environment_failure(), None, "the change's doing");

    // Worse: the test fails too. The checks stop there: coverage is not measured, and says so.
    std::fs::write(
        wt.path.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    let broken = verify(&ws, &wt, &plan, before, t, &watch, Default::default())
        .await
        .unwrap();
    let reasons = broken.failure_reasons();
    assert!(
        reasons.contains(&"check `test` failed".to_owned()),
        "{reasons:?}"
    );
    assert_eq!(
        broken.coverage.after_missing.as_deref(),
        Some("the change failed `test`, and the checks stopped there")
    );

    // A new problem where `legacy` failed already: worse, so the change's.
    std::fs::write(wt.path.join("src/extra.rs"), "// E2\n").unwrap();
    let worse = verify(&ws, &wt, &plan, before, t, &watch, Default::default())
        .await
        .unwrap();
    let legacy = &worse.checks[2];
    assert_eq!(legacy.status, CheckStatus::Failed);
    assert!(
        legacy
            .hint
            .as_deref()
            .unwrap()
            .contains("2 problem(s), 1 on the base"),
        "{:?}",
        legacy.hint
    );

    // Reset for the next attempt: back to the branch's last commit.
    let w = wt.clone();
    tokio::task::spawn_blocking(move || reset_worktree(&w))
        .await
        .unwrap()
        .unwrap();
    let again = verify(&ws, &wt, &plan, before, t, &watch, Default::default())
        .await
        .unwrap();
    assert_eq!(again.diff.files_affected(), 0);
    // The checks pass on the unchanged base, but a change that changes nothing never passes.
    assert_eq!(
        again.failure_reasons(),
        ["the implementation changed nothing"]
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_hook_that_is_not_executable_is_not_run() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let wt = create_worktree(&f.preflight().await, &f.checkouts, "origin", None)
        .await
        .unwrap();
    hook(&f.root, "exit 1");
    let path = f.root.join(".git/hooks/pre-commit");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(wt.path.join("src/x.rs"), "// x\n").unwrap();
    assert!(
        commit(&wt, &info(), &seal::take(&f.root, &wt).unwrap())
            .await
            .is_ok(),
        "git ignores a hook without the executable bit"
    );
}

#[tokio::test]
async fn a_read_only_phase_that_changed_the_repository_is_restored() {
    let f = Fixture::new();
    let ws = GitWorkspace::new(&f.root, &f.checkouts, "origin");
    let pre = ws.preflight(&f.options()).await.unwrap();
    let wt = ws.create_worktree(&pre).await.unwrap();
    // An implementation in progress: a changed file the guard must keep.
    std::fs::write(wt.path.join("src/lib.rs"), "pub fn changed() {}\n").unwrap();
    let refs_before = f.refs();
    let snap = ws.snapshot(&wt).await.unwrap();
    assert!(ws.restore_changes(&wt, &snap).await.unwrap().is_empty());

    // In the checkout, git is the checkout's own: a branch made there is not the
    // repository's, and nothing the guard watches.
    git(&wt.path, &["branch", "made-in-the-checkout"]);
    assert!(ws.restore_changes(&wt, &snap).await.unwrap().is_empty());
    assert_eq!(f.refs(), refs_before);

    // A "read-only" agent writes a file and, having found the repository, makes a branch and
    // a worktree there.
    std::fs::write(wt.path.join("ROGUE.md"), "x").unwrap();
    std::fs::write(wt.path.join("src/lib.rs"), "pub fn clobbered() {}\n").unwrap();
    let rogue = wt.path.join(".claude/worktrees/x");
    git(
        &f.root,
        &[
            "worktree",
            "add",
            "-q",
            &rogue.to_string_lossy(),
            "-b",
            "worktree-x",
        ],
    );
    let changes = ws.restore_changes(&wt, &snap).await.unwrap();
    let text = changes.join("\n");
    for expected in [
        "the file ROGUE.md changed",
        "the file src/lib.rs changed",
        "the reference refs/heads/worktree-x was created",
        "a worktree `x` was added",
    ] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    assert_eq!(f.refs(), refs_before, "the branch is gone");
    assert!(!git(&f.root, &["worktree", "list"]).contains(".claude/worktrees/x"));
    assert!(!rogue.exists());
    assert!(!wt.path.join("ROGUE.md").exists());
    assert_eq!(
        std::fs::read_to_string(wt.path.join("src/lib.rs")).unwrap(),
        "pub fn changed() {}\n",
        "the implementation's own change is back"
    );
    assert!(ws.restore_changes(&wt, &snap).await.unwrap().is_empty());

    // Another competition in the same repository makes its branch and worktree meanwhile, and
    // a fetch moves a remote-tracking branch: none of that is the agent's doing.
    let other = ws
        .preflight(&PreflightOptions {
            issue: 99,
            title: "Other",
            ..f.options()
        })
        .await
        .unwrap();
    ws.create_worktree(&other).await.unwrap();
    git(&f.root, &["update-ref", "refs/remotes/origin/main", "main"]);
    assert!(
        ws.restore_changes(&wt, &snap).await.unwrap().is_empty(),
        "another run's work is not a change"
    );
    assert!(git(&f.root, &["branch", "--list"]).contains("ralph/99-other"));
    assert!(
        git(&f.root, &["worktree", "list"]).contains(&f.checkouts.join("99").display().to_string())
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_git_directory_is_sealed_checked_and_restored_and_only_sealed_hooks_run() {
    let f = Fixture::new();
    hook(
        &f.root,
        "echo sealed > \"$(git rev-parse --show-toplevel)/sealed-ran\"",
    );
    let ws = GitWorkspace::new(&f.root, &f.checkouts, "origin");
    let wt = ws.create_worktree(&f.preflight().await).await.unwrap();
    assert!(
        ws.seal_changes(&wt).await.unwrap().is_empty(),
        "nothing changed yet"
    );

    // What an agent that followed a prompt injection plants: hooks, an fsmonitor, ralph's
    // registration of the checkout pointing elsewhere, a moved reference.
    let git_dir = f.root.join(".git");
    hook(&f.root, "echo edited > \"$HOME/edited-ran\"");
    let planted = git_dir.join("hooks/pre-push");
    std::fs::write(&planted, "#!/bin/sh\ntouch \"$HOME/pre-push-ran\"\n").unwrap();
    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    std::fs::write(
        git_dir.join("config"),
        format!("{config}[core]\n\tfsmonitor = /tmp/evil\n"),
    )
    .unwrap();
    let registration = wt.git_dir.join("gitdir");
    let link = std::fs::read_to_string(&registration).unwrap();
    std::fs::write(&registration, "/tmp/elsewhere/.git\n").unwrap();
    git(&f.root, &["branch", "planted"]);
    // And in the checkout's own git dir, which checks may write: a hook, an fsmonitor and a
    // hooks path of its own. Not the repository's: not sealed, never run by ralph.
    let own = wt.path.join(".git");
    std::fs::create_dir_all(own.join("hooks")).unwrap();
    for name in ["pre-commit", "post-commit", "reference-transaction"] {
        std::fs::write(
            own.join("hooks").join(name),
            "#!/bin/sh\ntouch \"$HOME/own-hook-ran\"\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                own.join("hooks").join(name),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap();
        }
    }
    git(&wt.path, &["config", "core.fsmonitor", "/tmp/evil"]);

    let changes = ws.seal_changes(&wt).await.unwrap();
    let text = changes.join("\n");
    for expected in [
        ".git/config was changed",
        ".git/hooks/pre-commit was changed",
        ".git/hooks/pre-push was added",
    ] {
        assert!(
            changes.iter().any(|c| c == expected),
            "{expected} in:\n{text}"
        );
    }
    assert!(
        changes
            .iter()
            .any(|c| c == ".git/worktrees/ralph-12/gitdir was changed"),
        "{text}"
    );
    assert!(
        !text.contains(&own.display().to_string()),
        "the checkout's own git dir is the checks': {text}"
    );
    // Everything is back as sealed.
    assert!(!planted.exists());
    assert_eq!(
        std::fs::read_to_string(git_dir.join("config")).unwrap(),
        config
    );
    assert_eq!(std::fs::read_to_string(&registration).unwrap(), link);
    // References are the sandbox's and the read-only guard's: the user's own branches stay.
    assert!(Repository::open(&f.root)
        .unwrap()
        .find_branch("planted", git2::BranchType::Local)
        .is_ok());
    assert!(ws.seal_changes(&wt).await.unwrap().is_empty());

    // The hook is edited once more after the check: the commit still runs the sealed bytes.
    hook(&f.root, "echo edited > \"$HOME/edited-ran\"");
    std::fs::write(wt.path.join("src/x.rs"), "// x\n").unwrap();
    ws.commit(&wt, &info()).await.unwrap();
    assert!(wt.path.join("sealed-ran").exists(), "the sealed hook ran");
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    assert!(!home.join("edited-ran").exists(), "the edited hook did not");
    assert!(
        !home.join("own-hook-ran").exists(),
        "nor one the checks planted in the checkout's own git dir"
    );
    // The commit is the repository's, and the checkout's own git dir was made anew at it: the
    // planted hooks and configuration are gone with the rest of what checks wrote there.
    let head = git(&f.root, &["rev-parse", "ralph/12-add-a-verbose-flag"]);
    assert_eq!(git(&wt.path, &["rev-parse", "HEAD"]), head);
    assert!(!own.join("hooks/pre-commit").exists());
    assert!(!git(&wt.path, &["config", "--list", "--local"]).contains("fsmonitor"));
}

#[tokio::test]
async fn tidying_after_the_checks_puts_back_only_what_the_checks_wrote() {
    let f = Fixture::new();
    let ws = GitWorkspace::new(&f.root, &f.checkouts, "origin");
    let p = f.preflight().await;
    let wt = create_worktree(&p, &f.checkouts, "origin", None)
        .await
        .unwrap();
    // The implementer deletes a file and edits another.
    std::fs::remove_file(wt.path.join("src/old.rs")).unwrap();
    std::fs::write(wt.path.join("src/lib.rs"), "pub fn add() {}\n").unwrap();
    let left = ws.snapshot(&wt).await.unwrap();
    // Checks that touch nothing: nothing to put back, and the deleted file is not "added".
    assert_eq!(ws.tidy(&wt, &left).await.unwrap(), Vec::<String>::new());
    assert!(!wt.path.join("src/old.rs").exists());
    // A check that makes the deleted file again and writes a report: both undone, each named.
    std::fs::write(wt.path.join("src/old.rs"), "regenerated").unwrap();
    std::fs::write(wt.path.join("report.txt"), "written by a check").unwrap();
    let said = ws.tidy(&wt, &left).await.unwrap();
    assert_eq!(
        said,
        [
            "the file report.txt was added",
            "the file src/old.rs was added"
        ]
    );
    assert!(!wt.path.join("src/old.rs").exists() && !wt.path.join("report.txt").exists());
    assert_eq!(
        std::fs::read_to_string(wt.path.join("src/lib.rs")).unwrap(),
        "pub fn add() {}\n"
    );
}

#[tokio::test]
async fn the_tree_an_attempt_is_judged_on_is_what_its_commit_holds() {
    let f = Fixture::new();
    let ws = GitWorkspace::new(&f.root, &f.checkouts, "origin");
    let wt = ws.create_worktree(&f.preflight().await).await.unwrap();
    let base = git(&wt.path, &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(ws.tree(&wt).await.unwrap(), base.trim(), "no change yet");
    // A change and a by-product: the tree holds the change only, and nothing is staged.
    std::fs::write(wt.path.join("src/extra.rs"), "pub fn one() {}\n").unwrap();
    std::fs::write(wt.path.join("coverage.xml"), "<coverage/>").unwrap();
    let changed = ws.tree(&wt).await.unwrap();
    assert_ne!(changed, base.trim());
    let (git_dir, work_tree) = (
        wt.git_dir.display().to_string(),
        wt.path.display().to_string(),
    );
    let ralphs = ["--git-dir", &git_dir, "--work-tree", &work_tree];
    let staged = git(
        &wt.path,
        &[&ralphs[..], &["diff", "--cached", "--name-only"]].concat(),
    );
    assert!(staged.is_empty(), "ralph's index is not written: {staged}");
    assert!(git(
        &wt.path,
        &[&ralphs[..], &["status", "--porcelain"]].concat()
    )
    .contains("?? src/extra.rs"));
    // The same files after a reset: the same tree.
    let w = wt.clone();
    tokio::task::spawn_blocking(move || reset_worktree(&w))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ws.tree(&wt).await.unwrap(), base.trim());
    std::fs::write(wt.path.join("src/extra.rs"), "pub fn one() {}\n").unwrap();
    assert_eq!(ws.tree(&wt).await.unwrap(), changed);
    // The commit holds that tree.
    let id = ws.commit(&wt, &info()).await.unwrap();
    let committed = git(&wt.path, &["rev-parse", &format!("{id}^{{tree}}")]);
    assert_eq!(committed.trim(), changed);
}
