//! Preflight (docs/specification.md §6): whether a competition may start here, changing nothing — a
//! repository with a working tree and no changes outside `.ralph/`, a base branch (named, or found:
//! the remote's HEAD, the tracker's default branch, `git ls-remote --symref`, the tracked current
//! branch), and the competition's branch not taken, locally or on the remote — and the same
//! facts, each on its own, for `ralph doctor`.

use super::repo::{base_commit, blocking, open, refuse, remote_cmd, run_git};
use super::{branch_name, WorkspaceError};
use crate::secret::GitToken;
use git2::{BranchType, Repository};
use std::path::{Path, PathBuf};

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

/// The paths that make the working tree unclean: every change outside `.ralph/`.
fn dirty_paths(repo: &Repository) -> Result<Vec<String>, WorkspaceError> {
    let statuses = super::repo::statuses(repo, false)?;
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

/// Whether `branch` exists on the remote, asked with `git ls-remote`; `None` when the remote
/// could not be asked.
async fn exists_on_remote(
    root: &Path,
    remote: &str,
    token: Option<&GitToken>,
    branch: &str,
) -> Option<bool> {
    let out = run_git(remote_cmd(root, remote, token).args([
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
    token: Option<&GitToken>,
    opts: &PreflightOptions<'_>,
) -> Result<Preflight, WorkspaceError> {
    let facts = {
        let (root, remote) = (root.to_owned(), remote.to_owned());
        blocking("the git preflight", move || local_facts(&root, &remote)).await?
    };
    let (base, base_from) = match opts.base {
        Some(b) => (b.to_owned(), "--base or [git] base".to_owned()),
        None => resolve_base(root, remote, token, &facts, opts.default_branch).await?,
    };
    let (local, tracked) = {
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
        // The remote's word counts; a remote-tracking branch is only what was last fetched
        // (a branch deleted there since stays until `git fetch --prune`).
        match (exists_on_remote(root, remote, token, branch).await, tracked) {
            (Some(true), _) | (None, true) => {
                return Err(refuse(
                    format!("the branch `{branch}` already exists on `{remote}`"),
                    format!(
                        "continue that run with `ralph compete {0} --resume`, or, to start again, delete the branch there (`git push {remote} --delete {branch}`: a pull request open on it closes) and run `ralph reset --issue {0}`",
                        opts.issue
                    ),
                ))
            }
            (Some(false), true) => tracing::info!(
                "`{remote}/{branch}` is a stale remote-tracking branch: `{remote}` no longer has it"
            ),
            (Some(false), false) => {}
            (None, false) => {
                tracing::warn!("could not ask `{remote}` whether `{branch}` exists; going on")
            }
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
    token: Option<&GitToken>,
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
    if let Some(b) = remote_default(root, remote, token).await {
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
async fn remote_default(root: &Path, remote: &str, token: Option<&GitToken>) -> Option<String> {
    let out =
        run_git(remote_cmd(root, remote, token).args(["ls-remote", "--symref", remote, "HEAD"]))
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

/// What to do about a branch of the issue's that is there already.
pub(super) fn exists_hint(issue: u64) -> String {
    format!(
        "continue that run with `ralph compete {issue} --resume`, or start again with `ralph reset --issue {issue}` (it removes the branch and ralph's checkouts of the issue)"
    )
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
        None => resolve_base(root, remote, None, &facts, default_branch).await,
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
) -> Result<(Preflight, bool), WorkspaceError> {
    let repo = open(root)?;
    if base_commit(&repo, remote, &base).is_none() {
        return Err(refuse(
            format!("the base branch `{base}` does not exist"),
            "fetch it, or name another with --base or `[git] base`",
        ));
    }
    let branch = branch_name(issue, title);
    if !resume && repo.find_branch(&branch, BranchType::Local).is_ok() {
        return Err(refuse(
            format!("the branch `{branch}` already exists"),
            exists_hint(issue),
        ));
    }
    let tracked = !resume
        && repo
            .find_branch(&format!("{remote}/{branch}"), BranchType::Remote)
            .is_ok();
    let pre = Preflight {
        root: root.to_owned(),
        issue,
        base,
        base_from,
        branch,
        has_remote,
    };
    Ok((pre, tracked))
}
