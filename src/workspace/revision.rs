//! The git side of `ralph follow`: a pull request's branch as the remote has it now, the newest
//! commit ralph made on it (feedback older than that was answered already), a worktree on the
//! branch at its head where a revision round works — diffing against that head, so a revision
//! is judged by its own change —, and the commit on the base branch that reverts a merge.

use super::git::Worktree;
use super::repo::{base_commit, blocking, open, remote_cmd, run_git};
use super::WorkspaceError;
use crate::secret::GitToken;
use chrono::{DateTime, TimeZone, Utc};
use git2::{BranchType, Oid, Repository, WorktreeAddOptions};
use std::path::Path;

/// How many commits are read back from a branch tip at most.
const MAX_WALK: usize = 2000;

/// The trailer every commit ralph makes carries.
const RUN_TRAILER: &str = "Ralph-Run:";

fn git_error(message: String) -> WorkspaceError {
    WorkspaceError::Git {
        message,
        source: None,
    }
}

/// Fetches `branch` from `remote` (when the repository has it) into its remote-tracking branch.
/// Failing to fetch is not fatal: the local copy is read.
pub async fn fetch_branch(root: &Path, remote: &str, token: Option<&GitToken>, branch: &str) {
    let has_remote = Repository::open(root).is_ok_and(|r| r.find_remote(remote).is_ok());
    if !has_remote {
        return;
    }
    let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
    match run_git(remote_cmd(root, remote, token).args(["fetch", "--quiet", remote, &refspec]))
        .await
    {
        Ok(out) if out.success() => {}
        Ok(out) => tracing::warn!(
            "could not fetch `{branch}` from `{remote}`: {}",
            out.tail(3)
        ),
        Err(e) => tracing::warn!("could not fetch `{branch}`: {e}"),
    }
}

/// The commit `branch` is at: the remote-tracking branch when there is one, else the local one.
pub fn branch_head(
    root: &Path,
    remote: &str,
    branch: &str,
) -> Result<Option<String>, WorkspaceError> {
    let repo = open(root)?;
    Ok(base_commit(&repo, remote, branch).map(|o| o.to_string()))
}

/// The commit time of the newest commit reachable from `commit` that ralph made (its message
/// carries the `Ralph-Run` trailer).
pub fn last_own_commit(root: &Path, commit: &str) -> Result<Option<DateTime<Utc>>, WorkspaceError> {
    let repo = open(root)?;
    let start = Oid::from_str(commit).map_err(|e| WorkspaceError::git("reading a commit id", e))?;
    let mut walk = repo
        .revwalk()
        .map_err(|e| WorkspaceError::git("walking the branch", e))?;
    walk.set_sorting(git2::Sort::TIME)
        .and_then(|()| walk.push(start))
        .map_err(|e| WorkspaceError::git("walking the branch", e))?;
    for oid in walk.take(MAX_WALK).flatten() {
        let Ok(c) = repo.find_commit(oid) else {
            continue;
        };
        if c.message()
            .is_some_and(|m| m.lines().any(|l| l.starts_with(RUN_TRAILER)))
        {
            let t = c.committer().when();
            return Ok(Utc.timestamp_opt(t.seconds(), 0).single());
        }
    }
    Ok(None)
}

/// The commit on `base` (remote-tracking, else local) whose message says it reverts `commit`
/// (`This reverts commit <sha>`, as `git revert` and GitHub's revert button write it).
pub fn revert_of(
    root: &Path,
    remote: &str,
    base: &str,
    commit: &str,
) -> Result<Option<String>, WorkspaceError> {
    let repo = open(root)?;
    let Some(tip) = base_commit(&repo, remote, base) else {
        return Ok(None);
    };
    let needle = format!("This reverts commit {commit}");
    let mut walk = repo
        .revwalk()
        .map_err(|e| WorkspaceError::git("walking the base branch", e))?;
    walk.push(tip)
        .map_err(|e| WorkspaceError::git("walking the base branch", e))?;
    for oid in walk.take(MAX_WALK).flatten() {
        let Ok(c) = repo.find_commit(oid) else {
            continue;
        };
        if c.message().is_some_and(|m| m.contains(&needle)) {
            return Ok(Some(oid.to_string()));
        }
    }
    Ok(None)
}

/// A checkout `<checkouts>/<name>` on the local `branch`, moved to `commit` (the pull request's
/// head), diffing against `commit`, with a git directory of its own. Refused when the branch is
/// checked out elsewhere (a competition's worktree still holds it).
pub async fn revision_worktree(
    root: &Path,
    checkouts: &Path,
    name: &str,
    branch: &str,
    commit: &str,
) -> Result<Worktree, WorkspaceError> {
    let path = checkouts.join(name);
    let (root, name, branch, commit) = (
        root.to_owned(),
        name.to_owned(),
        branch.to_owned(),
        commit.to_owned(),
    );
    blocking("making the revision's worktree", move || {
        let _registrations = super::checkout::lock_registrations(&root)?;
        let wt = add_revision_worktree(&root, &path, &name, &branch, &commit)?;
        super::git::give_own_git(&wt)?;
        Ok(wt)
    })
    .await
}

fn add_revision_worktree(
    root: &Path,
    path: &Path,
    name: &str,
    branch: &str,
    commit: &str,
) -> Result<Worktree, WorkspaceError> {
    let repo = open(root)?;
    let oid = Oid::from_str(commit).map_err(|e| WorkspaceError::git("reading a commit id", e))?;
    let target = repo
        .find_commit(oid)
        .map_err(|e| WorkspaceError::git("reading the pull request's head", e))?;
    let path = path.to_owned();
    let registration = format!("ralph-{name}");
    if let Ok(existing) = repo.find_worktree(&registration) {
        // Its folder is ralph's own checkout, or an earlier version's inside the repository.
        let old = existing.path().to_owned();
        let mut prune = git2::WorktreePruneOptions::new();
        prune.valid(true).working_tree(false);
        let _ = existing.prune(Some(&mut prune));
        if old.starts_with(root.join(super::checkout::LEGACY_DIR)) {
            let _ = super::checkout::remove_path(&old);
        }
    }
    let checked_out = repo
        .find_branch(branch, BranchType::Local)
        .is_ok_and(|b| b.is_head())
        || worktree_holds(&repo, branch);
    if checked_out {
        return Err(git_error(format!(
            "the branch `{branch}` is checked out in another worktree: finish or remove that run first (`git worktree list`)"
        )));
    }
    let local = repo
        .branch(branch, &target, true)
        .map_err(|e| WorkspaceError::git("moving the branch to the pull request's head", e))?;
    super::checkout::make_room(&path)?;
    let _ = std::fs::create_dir_all(repo.commondir().join("worktrees"));
    let reference = local.into_reference();
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(&reference));
    repo.worktree(&registration, &path, Some(&opts))
        .map_err(|e| WorkspaceError::git("creating the revision's worktree", e))?;
    Ok(Worktree {
        path,
        branch: branch.to_owned(),
        base_commit: commit.to_owned(),
        git_dir: repo.commondir().join("worktrees").join(&registration),
    })
}

/// Whether a linked worktree has `branch` checked out.
fn worktree_holds(repo: &Repository, branch: &str) -> bool {
    let wanted = format!("refs/heads/{branch}");
    let Ok(names) = repo.worktrees() else {
        return false;
    };
    names.iter().flatten().any(|name| {
        repo.find_worktree(name)
            .ok()
            .filter(|w| w.validate().is_ok())
            .and_then(|w| Repository::open_from_worktree(&w).ok())
            .and_then(|r| r.head().ok()?.name().map(str::to_owned))
            .is_some_and(|head| head == wanted)
    })
}
