//! git2 operations for a competition, and the few that need the `git` program (remote queries,
//! fetch and push).

use super::{branch_name, WorkspaceError};
use crate::process::{self, Cmd};
use crate::secret::Secret;
use git2::{BranchType, IndexAddOption, Repository, ResetType, StatusOptions, WorktreeAddOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a remote query, fetch or push may take.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the pre-commit hook may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// What preflight needs to know.
#[derive(Debug, Clone)]
pub struct PreflightOptions<'a> {
    pub issue: u64,
    pub title: &'a str,
    /// `--base` or `[git] base`; `None`: the remote's default branch.
    pub base: Option<&'a str>,
    /// The repository's default branch as the tracker knows it (GitHub), for a clone whose
    /// remote HEAD is not set.
    pub default_branch: Option<&'a str>,
    /// `--resume`: the branch may exist.
    pub resume: bool,
}

/// What preflight found: where the competition's branch starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preflight {
    pub root: PathBuf,
    pub issue: u64,
    /// The base branch's name (`main`).
    pub base: String,
    /// How the base was found, for messages (`--base or [git] base`, `origin/HEAD`, …).
    pub base_from: String,
    /// `ralph/N-<slug>`.
    pub branch: String,
    /// Whether the remote exists (a repository without one works locally).
    pub has_remote: bool,
}

/// The competition's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from (the base), to diff against.
    pub base_commit: String,
}

fn refuse(message: impl Into<String>, hint: impl Into<String>) -> WorkspaceError {
    WorkspaceError::Refused {
        message: message.into(),
        hint: hint.into(),
    }
}

fn open(root: &Path) -> Result<Repository, WorkspaceError> {
    Repository::open(root).map_err(|_| {
        refuse(
            format!("{} is not a git repository", root.display()),
            "run ralph inside a git repository, or pass -C PATH",
        )
    })
}

/// A `git` command in `dir` that never prompts and never reads the user's terminal.
pub(super) fn git_cmd(dir: &Path) -> Cmd {
    let mut cmd = Cmd::new("git")
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .timeout(REMOTE_TIMEOUT);
    // Inherited from a hook or a wrapper, these would point git at another repository.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_PREFIX",
        "GIT_COMMON_DIR",
    ] {
        cmd = cmd.env_remove(var);
    }
    cmd
}

/// Runs a `git` (or hook) command through the process wrapper.
pub(super) async fn run_git(cmd: Cmd) -> Result<process::Output, WorkspaceError> {
    process::run(&cmd).await.map_err(|e| WorkspaceError::Git {
        message: crate::error::chain_text(&e),
        source: None,
    })
}

/// Runs git2 work on a blocking thread, off the async runtime; `what` names it if the thread
/// stops.
pub(super) async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, WorkspaceError> + Send + 'static,
) -> Result<T, WorkspaceError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| WorkspaceError::Git {
            message: format!("{what} stopped: {e}"),
            source: None,
        })?
}

/// The paths that make the working tree unclean: every change outside `.ralph/`.
fn dirty_paths(repo: &Repository) -> Result<Vec<String>, WorkspaceError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| WorkspaceError::git("reading the working tree status", e))?;
    Ok(statuses
        .iter()
        .filter_map(|s| s.path().map(str::to_owned))
        .filter(|p| p != ".ralph" && !p.starts_with(".ralph/"))
        .collect())
}

/// The remote's default branch from `refs/remotes/<remote>/HEAD`.
fn remote_head(repo: &Repository, remote: &str) -> Option<String> {
    let r = repo
        .find_reference(&format!("refs/remotes/{remote}/HEAD"))
        .ok()?;
    let target = r.symbolic_target()?.to_owned();
    target
        .strip_prefix(&format!("refs/remotes/{remote}/"))
        .map(str::to_owned)
}

/// The branch new work belongs on when none is named: the remote's default branch, else the
/// branch HEAD is on. `None` when neither is known (or `root` is not a repository).
pub fn default_branch(root: &Path, remote: &str) -> Option<String> {
    let repo = Repository::open(root).ok()?;
    remote_head(&repo, remote).or_else(|| {
        repo.head()
            .ok()
            .filter(|h| h.is_branch())
            .and_then(|h| h.shorthand().map(str::to_owned))
    })
}

/// The commit a base branch points at: the remote-tracking branch when there is one (it is
/// fetched before a worktree is made), else the local branch.
fn base_commit(repo: &Repository, remote: &str, base: &str) -> Option<git2::Oid> {
    [
        format!("refs/remotes/{remote}/{base}"),
        format!("refs/heads/{base}"),
    ]
    .iter()
    .find_map(|name| repo.refname_to_id(name).ok())
}

/// Whether `branch` exists on the remote, asked with `git ls-remote`; `None` when the remote
/// could not be asked.
async fn exists_on_remote(root: &Path, remote: &str, branch: &str) -> Option<bool> {
    let out = run_git(git_cmd(root).args([
        "ls-remote",
        "--exit-code",
        "--heads",
        remote,
        &format!("refs/heads/{branch}"),
    ]))
    .await
    .ok()?;
    match out.code {
        Some(0) => Some(true),
        Some(2) => Some(false),
        _ => None,
    }
}

/// Checks that a competition may start, changing nothing. Every refusal says what is wrong and
/// how to fix it. The local checks run on a blocking thread; whether the branch exists on the
/// remote is asked with `git ls-remote`.
pub async fn preflight(
    root: &Path,
    remote: &str,
    opts: &PreflightOptions<'_>,
) -> Result<Preflight, WorkspaceError> {
    let facts = {
        let (root, remote) = (root.to_owned(), remote.to_owned());
        blocking("the git preflight", move || local_facts(&root, &remote)).await?
    };
    let (base, base_from) = match opts.base {
        Some(b) => (b.to_owned(), "--base or [git] base".to_owned()),
        None => resolve_base(root, remote, &facts, opts.default_branch).await?,
    };
    let local = {
        let (root, remote) = (root.to_owned(), remote.to_owned());
        let (issue, title, resume) = (opts.issue, opts.title.to_owned(), opts.resume);
        let has_remote = facts.has_remote;
        blocking("the git preflight", move || {
            branch_preflight(
                &root,
                &remote,
                issue,
                &title,
                (base, base_from),
                resume,
                has_remote,
            )
        })
        .await?
    };
    if !opts.resume && local.has_remote {
        let branch = &local.branch;
        match exists_on_remote(root, remote, branch).await {
            Some(true) => {
                return Err(refuse(
                    format!("the branch `{branch}` already exists on `{remote}`"),
                    exists_hint(opts.issue),
                ))
            }
            Some(false) => {}
            None => tracing::warn!("could not ask `{remote}` whether `{branch}` exists; going on"),
        }
    }
    Ok(local)
}

/// What the local repository says about where a competition would start.
#[derive(Debug, Clone)]
struct LocalFacts {
    has_remote: bool,
    /// `refs/remotes/<remote>/HEAD`.
    remote_head: Option<String>,
    /// The branch HEAD is on, and whether it tracks `<remote>`.
    current: Option<(String, bool)>,
}

/// The base branch when none is named: the remote's HEAD, else the tracker's default branch,
/// else (with no remote) the current branch, else what the remote says its HEAD is (`git
/// ls-remote --symref`), else the current branch when it tracks the remote. Returns the branch
/// and how it was found.
async fn resolve_base(
    root: &Path,
    remote: &str,
    facts: &LocalFacts,
    tracker_default: Option<&str>,
) -> Result<(String, String), WorkspaceError> {
    if let Some(b) = &facts.remote_head {
        return Ok((b.clone(), format!("{remote}/HEAD")));
    }
    if let Some(b) = tracker_default {
        return Ok((
            b.to_owned(),
            "the repository's default branch on GitHub".into(),
        ));
    }
    if !facts.has_remote {
        return facts
            .current
            .as_ref()
            .map(|(b, _)| (b.clone(), "the current branch; there is no remote".into()))
            .ok_or_else(|| {
                refuse(
                    "cannot tell the base branch: there is no remote and HEAD is not on a branch",
                    "check out the branch to start from, or set `[git] base` in .ralph/config.toml",
                )
            });
    }
    if let Some(b) = remote_default(root, remote).await {
        return Ok((b, format!("`git ls-remote --symref {remote} HEAD`")));
    }
    if let Some((b, true)) = &facts.current {
        return Ok((
            b.clone(),
            format!("the current branch, which tracks `{remote}`"),
        ));
    }
    Err(refuse(
        format!(
            "cannot tell the default branch of `{remote}`: refs/remotes/{remote}/HEAD is not set and `{remote}` could not be asked"
        ),
        format!(
            "pass --base BRANCH or set `[git] base` in .ralph/config.toml (or run `git remote set-head {remote} --auto`)"
        ),
    ))
}

/// The branch the remote's HEAD names, from `git ls-remote --symref <remote> HEAD`.
async fn remote_default(root: &Path, remote: &str) -> Option<String> {
    let out = run_git(git_cmd(root).args(["ls-remote", "--symref", remote, "HEAD"]))
        .await
        .ok()?;
    if !out.success() {
        return None;
    }
    out.stdout.lines().find_map(|line| {
        let target = line.strip_prefix("ref:")?.split_whitespace().next()?;
        target.strip_prefix("refs/heads/").map(str::to_owned)
    })
}

fn exists_hint(issue: u64) -> String {
    format!("continue that run with `ralph compete {issue} --resume`, or delete the branch")
}

/// What `ralph doctor` learns about the repository, each part on its own.
#[derive(Debug)]
pub struct Inspection {
    /// A git repository with a working tree; the other parts are only known when it is.
    pub repository: Result<(), WorkspaceError>,
    /// No changes outside `.ralph/`.
    pub clean: Result<(), WorkspaceError>,
    /// The base branch and how it was found.
    pub base: Result<(String, String), WorkspaceError>,
    pub has_remote: bool,
    /// The branch HEAD is on.
    pub current: Option<String>,
}

/// Inspects the repository at `root` the way preflight does, changing nothing, and reports
/// every part instead of stopping at the first refusal.
pub async fn inspect(
    root: &Path,
    remote: &str,
    base: Option<&str>,
    default_branch: Option<&str>,
) -> Inspection {
    let looked = {
        let (root, remote) = (root.to_owned(), remote.to_owned());
        blocking("inspecting the repository", move || {
            let repo = open_working(&root)?;
            Ok((clean(&repo), facts(&repo, &remote)))
        })
        .await
    };
    let (clean, facts) = match looked {
        Ok(found) => found,
        Err(e) => {
            return Inspection {
                repository: Err(e),
                clean: Ok(()),
                base: Err(refuse("not a repository", "")),
                has_remote: false,
                current: None,
            }
        }
    };
    let base = match base {
        Some(b) => Ok((b.to_owned(), "--base or [git] base".to_owned())),
        None => resolve_base(root, remote, &facts, default_branch).await,
    };
    Inspection {
        repository: Ok(()),
        clean,
        base,
        has_remote: facts.has_remote,
        current: facts.current.map(|(b, _)| b),
    }
}

/// The repository at `root`, refused when it is not one or has no working tree.
fn open_working(root: &Path) -> Result<Repository, WorkspaceError> {
    let repo = open(root)?;
    if repo.is_bare() {
        return Err(refuse(
            format!("{} is a bare repository", root.display()),
            "run ralph in a clone with a working tree",
        ));
    }
    Ok(repo)
}

/// The local checks that come first: a repository with a working tree and no changes outside
/// `.ralph/`; then what it says about the base.
fn local_facts(root: &Path, remote: &str) -> Result<LocalFacts, WorkspaceError> {
    let repo = open_working(root)?;
    clean(&repo)?;
    Ok(facts(&repo, remote))
}

/// Refuses a working tree with changes outside `.ralph/`.
fn clean(repo: &Repository) -> Result<(), WorkspaceError> {
    let dirty = dirty_paths(repo)?;
    if !dirty.is_empty() {
        let shown: Vec<&str> = dirty.iter().take(5).map(String::as_str).collect();
        let more = if dirty.len() > 5 {
            format!(" and {} more", dirty.len() - 5)
        } else {
            String::new()
        };
        return Err(refuse(
            format!(
                "the working tree has uncommitted changes: {}{more}",
                shown.join(", ")
            ),
            "commit or stash them first (changes under .ralph/ are allowed)",
        ));
    }
    Ok(())
}

/// What the repository says about the remote and the current branch.
fn facts(repo: &Repository, remote: &str) -> LocalFacts {
    let current = repo
        .head()
        .ok()
        .filter(|h| h.is_branch())
        .and_then(|h| h.shorthand().map(str::to_owned))
        .map(|b| {
            let tracks = repo
                .config()
                .and_then(|c| c.get_string(&format!("branch.{b}.remote")))
                .is_ok_and(|r| r == remote);
            (b, tracks)
        });
    let has_remote = repo.find_remote(remote).is_ok();
    LocalFacts {
        has_remote,
        remote_head: remote_head(repo, remote),
        current,
    }
}

/// The preflight checks of the base and the branch that need only the local repository.
fn branch_preflight(
    root: &Path,
    remote: &str,
    issue: u64,
    title: &str,
    (base, base_from): (String, String),
    resume: bool,
    has_remote: bool,
) -> Result<Preflight, WorkspaceError> {
    let repo = open(root)?;
    if base_commit(&repo, remote, &base).is_none() {
        return Err(refuse(
            format!("the base branch `{base}` does not exist"),
            "fetch it, or name another with --base or `[git] base`",
        ));
    }
    let branch = branch_name(issue, title);
    if !resume {
        if repo.find_branch(&branch, BranchType::Local).is_ok() {
            return Err(refuse(
                format!("the branch `{branch}` already exists"),
                exists_hint(issue),
            ));
        }
        if repo
            .find_branch(&format!("{remote}/{branch}"), BranchType::Remote)
            .is_ok()
        {
            return Err(refuse(
                format!("the branch `{branch}` already exists on `{remote}`"),
                exists_hint(issue),
            ));
        }
    }
    Ok(Preflight {
        root: root.to_owned(),
        issue,
        base,
        base_from,
        branch,
        has_remote,
    })
}

/// Makes (or, on resume, reuses) the branch and its worktree under `.ralph/worktrees/N`,
/// starting from the base as freshly fetched as the remote allows.
pub async fn create_worktree(pre: &Preflight, remote: &str) -> Result<Worktree, WorkspaceError> {
    if pre.has_remote {
        match run_git(git_cmd(&pre.root).args(["fetch", "--quiet", remote, &pre.base])).await {
            Ok(out) if out.success() => {}
            Ok(out) => tracing::warn!(
                "could not fetch `{}` from `{remote}`; starting from the local copy: {}",
                pre.base,
                out.tail(3)
            ),
            Err(e) => tracing::warn!("could not fetch `{}`: {e}", pre.base),
        }
    }
    let (pre, remote) = (pre.clone(), remote.to_owned());
    blocking("making the worktree", move || add_worktree(&pre, &remote)).await
}

/// The git2 half of [`create_worktree`]: the branch from the base, and its worktree.
fn add_worktree(pre: &Preflight, remote: &str) -> Result<Worktree, WorkspaceError> {
    let repo = open(&pre.root)?;
    let base = base_commit(&repo, remote, &pre.base).ok_or_else(|| WorkspaceError::Git {
        message: format!("the base branch `{}` has no commit", pre.base),
        source: None,
    })?;
    let branch_ref = match repo.find_branch(&pre.branch, BranchType::Local) {
        Ok(b) => b,
        Err(_) => {
            let commit = repo
                .find_commit(base)
                .map_err(|e| WorkspaceError::git("reading the base commit", e))?;
            repo.branch(&pre.branch, &commit, false)
                .map_err(|e| WorkspaceError::git("creating the branch", e))?
        }
    };
    let path = pre
        .root
        .join(".ralph")
        .join("worktrees")
        .join(pre.issue.to_string());
    let name = format!("ralph-{}", pre.issue);
    if let Ok(existing) = repo.find_worktree(&name) {
        if existing.validate().is_ok() && path.is_dir() {
            return Ok(Worktree {
                path,
                branch: pre.branch.clone(),
                base_commit: base.to_string(),
            });
        }
        // A stale registration (its directory is gone): forget it.
        let mut prune = git2::WorktreePruneOptions::new();
        prune.valid(true).working_tree(true);
        let _ = existing.prune(Some(&mut prune));
    }
    if path.exists() {
        std::fs::remove_dir_all(&path).map_err(|e| WorkspaceError::Git {
            message: format!("cannot clear {}: {e}", path.display()),
            source: None,
        })?;
    }
    std::fs::create_dir_all(path.parent().unwrap_or(&pre.root)).map_err(|e| {
        WorkspaceError::Git {
            message: format!("cannot create {}: {e}", path.display()),
            source: None,
        }
    })?;
    // libgit2 fails when another process creates `.git/worktrees` at the same moment (two
    // competitions on different issues): make sure it exists first.
    let _ = std::fs::create_dir_all(repo.commondir().join("worktrees"));
    let reference = branch_ref.into_reference();
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(&reference));
    repo.worktree(&name, &path, Some(&opts))
        .map_err(|e| WorkspaceError::git("creating the worktree", e))?;
    Ok(Worktree {
        path,
        branch: pre.branch.clone(),
        base_commit: base.to_string(),
    })
}

/// Throws away everything the last attempt left in the worktree: tracked files back to the
/// branch's last commit, untracked files removed (ignored ones, such as build caches, kept).
pub fn reset_worktree(wt: &Worktree) -> Result<(), WorkspaceError> {
    let repo = open(&wt.path)?;
    let head = repo
        .head()
        .and_then(|h| h.peel(git2::ObjectType::Commit))
        .map_err(|e| WorkspaceError::git("reading the worktree's HEAD", e))?;
    repo.reset(&head, ResetType::Hard, None)
        .map_err(|e| WorkspaceError::git("resetting the worktree", e))?;
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| WorkspaceError::git("reading the worktree status", e))?;
    for s in statuses.iter() {
        if let Some(p) = s.path() {
            let full = wt.path.join(p);
            let removed = if full.is_dir() {
                std::fs::remove_dir_all(&full)
            } else {
                std::fs::remove_file(&full)
            };
            if let Err(e) = removed {
                return Err(WorkspaceError::Git {
                    message: format!("cannot remove {}: {e}", full.display()),
                    source: None,
                });
            }
        }
    }
    Ok(())
}

/// Removes the worktree (the branch stays).
pub fn remove_worktree(root: &Path, wt: &Worktree) -> Result<(), WorkspaceError> {
    let repo = open(root)?;
    if wt.path.exists() {
        std::fs::remove_dir_all(&wt.path).map_err(|e| WorkspaceError::Git {
            message: format!("cannot remove {}: {e}", wt.path.display()),
            source: None,
        })?;
    }
    for name in repo
        .worktrees()
        .map_err(|e| WorkspaceError::git("listing worktrees", e))?
        .iter()
        .flatten()
    {
        if let Ok(w) = repo.find_worktree(name) {
            if w.path() == wt.path {
                let mut prune = git2::WorktreePruneOptions::new();
                prune.valid(true).working_tree(true);
                w.prune(Some(&mut prune))
                    .map_err(|e| WorkspaceError::git("pruning the worktree", e))?;
            }
        }
    }
    Ok(())
}

/// The hook `name` of the repository that `wt` belongs to, when it exists and is executable.
fn hook(repo: &Repository, wt_path: &Path, name: &str) -> Option<PathBuf> {
    let dir = match repo.config().ok()?.get_path("core.hooksPath") {
        Ok(p) if p.is_absolute() => p,
        Ok(p) => wt_path.join(p),
        Err(_) => repo.commondir().join("hooks"),
    };
    let path = dir.join(name);
    crate::process::on_path(&path.to_string_lossy()).then_some(path)
}

fn stage_all(repo: &Repository) -> Result<git2::Oid, WorkspaceError> {
    let mut index = repo
        .index()
        .map_err(|e| WorkspaceError::git("opening the index", e))?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .and_then(|()| index.update_all(["*"], None))
        .and_then(|()| index.write())
        .map_err(|e| WorkspaceError::git("staging the implementation", e))?;
    index
        .write_tree()
        .map_err(|e| WorkspaceError::git("writing the tree", e))
}

/// What a commit needs besides the worktree.
#[derive(Debug, Clone)]
pub struct CommitInfo<'a> {
    pub message: &'a str,
    pub author_name: &'a str,
    pub author_email: &'a str,
    pub bot: &'a str,
    pub run_id: &'a str,
}

/// Stages everything in the worktree, runs the repository's pre-commit hook (a failure fails the
/// attempt with its output; files it fixed are staged again), and commits with ralph's author
/// and the `Ralph-Bot:` / `Ralph-Run:` trailers. Returns the commit id.
pub async fn commit(wt: &Worktree, info: &CommitInfo<'_>) -> Result<String, WorkspaceError> {
    let w = wt.clone();
    let hook = blocking("staging the implementation", move || {
        let repo = open(&w.path)?;
        stage_all(&repo)?;
        Ok(hook(&repo, &w.path, "pre-commit"))
    })
    .await?;
    if let Some(hook) = hook {
        let mut cmd = Cmd::new(&hook).current_dir(&wt.path).timeout(HOOK_TIMEOUT);
        for var in crate::env::SCRUBBED {
            cmd = cmd.env_remove(var);
        }
        let out = run_git(cmd).await?;
        if !out.success() {
            return Err(WorkspaceError::Hook {
                code: out
                    .code
                    .map_or_else(|| "by a signal or timeout".to_owned(), |c| c.to_string()),
                output: out.tail(40),
            });
        }
    }
    let w = wt.clone();
    let message = format!(
        "{}\n\nRalph-Bot: {}\nRalph-Run: {}\n",
        info.message.trim_end(),
        info.bot,
        info.run_id
    );
    let (name, email) = (info.author_name.to_owned(), info.author_email.to_owned());
    blocking("committing", move || {
        commit_staged(&w, &message, &name, &email)
    })
    .await
}

/// Stages again (the hook may have fixed files) and commits with ralph's author.
fn commit_staged(
    wt: &Worktree,
    message: &str,
    author_name: &str,
    author_email: &str,
) -> Result<String, WorkspaceError> {
    let repo = open(&wt.path)?;
    let tree_id = stage_all(&repo)?;
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| WorkspaceError::git("reading the tree", e))?;
    let parent = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| WorkspaceError::git("reading HEAD", e))?;
    let sig = git2::Signature::now(author_name, author_email)
        .map_err(|e| WorkspaceError::git("making the signature", e))?;
    let oid = repo
        .commit(Some("HEAD"), &sig, &sig, message, &tree, &[&parent])
        .map_err(|e| WorkspaceError::git("committing", e))?;
    Ok(oid.to_string())
}

/// Standard base64 of `bytes` (for git's basic-auth header).
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Hands `token` to git for an HTTPS `url` as an `http.https://<host>/.extraheader`, through
/// `GIT_CONFIG_*` environment variables (never in the arguments, so other users' `ps` cannot
/// see it); the header is registered with the redactor. Other URLs are left to the user's git
/// credential setup.
pub(super) fn token_env(cmd: Cmd, url: &str, token: Option<&Secret>) -> Cmd {
    let (Some(token), Some(rest)) = (token, url.strip_prefix("https://")) else {
        return cmd;
    };
    let host = rest.split('/').next().unwrap_or(rest);
    let host = host.rsplit('@').next().unwrap_or(host);
    let header = Secret::new(format!(
        "AUTHORIZATION: basic {}",
        base64(format!("x-access-token:{}", token.expose()).as_bytes())
    ));
    cmd.env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("http.https://{host}/.extraheader"),
        )
        .env("GIT_CONFIG_VALUE_0", header.expose())
}

/// Pushes the branch. With a token and an HTTPS remote, the token goes to git as an
/// `http.<origin>.extraheader` through `GIT_CONFIG_*` environment variables (never in the
/// arguments, so other users' `ps` cannot see it); otherwise the user's git credential setup
/// is used.
pub async fn push(
    wt: &Worktree,
    remote: &str,
    token: Option<&Secret>,
) -> Result<(), WorkspaceError> {
    let (path, name) = (wt.path.clone(), remote.to_owned());
    let url = blocking("reading the remote", move || {
        let repo = open(&path)?;
        repo.find_remote(&name)
            .ok()
            .and_then(|r| r.url().map(str::to_owned))
            .ok_or_else(|| WorkspaceError::Push {
                message: format!("there is no remote `{name}`"),
            })
    })
    .await?;
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", wt.branch);
    let cmd = token_env(
        git_cmd(&wt.path).args(["push", "--quiet", remote, &refspec]),
        &url,
        token,
    );
    let out = run_git(cmd).await?;
    if out.success() {
        Ok(())
    } else {
        Err(WorkspaceError::Push {
            message: out.tail(10),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
    }
}
