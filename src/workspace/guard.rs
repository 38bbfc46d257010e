//! The guard around a read-only phase: a snapshot of what an agent must not change — the
//! worktree it reads (its HEAD and every file that differs from it, content included), the
//! repository's references and its list of worktrees — then, after the phase, what changed,
//! and the restore. An agent's tools are limited already (Claude Code's `--tools`, Codex's
//! read-only sandbox); this catches whatever slips through, e.g. a tool that makes a worktree
//! and a branch in the user's repository.

use super::repo::{blocking, open};
use super::{WorkspaceError, Worktree};
use git2::{Repository, WorktreePruneOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a read-only phase must leave as it found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The worktree's HEAD commit.
    pub(crate) head: String,
    /// Files that differ from HEAD, by path: their bytes, or `None` when deleted.
    pub(crate) files: BTreeMap<String, Option<Vec<u8>>>,
    /// Every reference of the repository and what it points at.
    pub(crate) refs: BTreeMap<String, String>,
    /// The registered worktrees, by name.
    pub(crate) worktrees: BTreeSet<String>,
}

/// What a directory that status lists as one entry is recorded as.
const DIRECTORY: &[u8] = b"(a directory)";

fn git_err(what: &'static str) -> impl Fn(git2::Error) -> WorkspaceError {
    move |e| WorkspaceError::git(what, e)
}

fn io_err(path: &Path, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("{}: {e}", path.display()),
        source: None,
    }
}

/// Whether a reference is outside the guard: remote-tracking branches (any fetch moves them)
/// and the branches of other ralph runs, which may be working in the same repository.
fn unwatched_ref(name: &str, wt: &Worktree) -> bool {
    name.starts_with("refs/remotes/")
        || (name.starts_with("refs/heads/ralph/") && name != format!("refs/heads/{}", wt.branch))
}

/// Whether a worktree is outside the guard: another run's (`ralph-N`), the ledger push's, or
/// any other of ralph's own checkouts under `.ralph/worktrees/` (another run's reading or audit
/// checkout, which may be being made right now).
fn unwatched_worktree(repo: &Repository, name: &str, wt: &Worktree) -> bool {
    let Ok(w) = repo.find_worktree(name) else {
        // Half made (`git worktree add` still at work): not a change anyone made here.
        return true;
    };
    if w.path() == wt.path {
        return false;
    }
    // A sibling of the watched worktree, not something made inside it.
    let ralphs = wt
        .path
        .parent()
        .is_some_and(|dir| w.path().parent() == Some(dir));
    ralphs || name.starts_with("ralph-") || name == "ledger"
}

/// Takes the snapshot of `wt` and of the repository at `root`.
pub fn snapshot(root: &Path, wt: &Worktree) -> Result<Snapshot, WorkspaceError> {
    let repo = open(root)?;
    let mut refs = BTreeMap::new();
    for r in repo
        .references()
        .map_err(git_err("listing references"))?
        .flatten()
    {
        if let Some(name) = r.name().filter(|n| !unwatched_ref(n, wt)) {
            let target = r
                .target()
                .map(|o| o.to_string())
                .or_else(|| r.symbolic_target().map(|t| format!("-> {t}")))
                .unwrap_or_default();
            refs.insert(name.to_owned(), target);
        }
    }
    let worktrees = repo
        .worktrees()
        .map_err(git_err("listing worktrees"))?
        .iter()
        .flatten()
        .filter(|n| !unwatched_worktree(&repo, n, wt))
        .map(str::to_owned)
        .collect();
    let wrepo = open(&wt.path)?;
    let head = wrepo
        .head()
        .ok()
        .and_then(|h| h.target())
        .map(|o| o.to_string())
        .unwrap_or_default();
    let mut files = BTreeMap::new();
    for path in changed_paths(&wrepo)? {
        let full = wt.path.join(&path);
        if full.is_dir() {
            // A nested repository (another worktree made inside this one): known by its name.
            files.insert(path, Some(DIRECTORY.to_vec()));
            continue;
        }
        let bytes = match std::fs::read(&full) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(&full, e)),
        };
        files.insert(path, bytes);
    }
    Ok(Snapshot {
        head,
        files,
        refs,
        worktrees,
    })
}

/// Every path of the worktree that differs from HEAD (tracked or not; ignored files and
/// untracked by-products aside: the baseline's checks may be writing them right now).
fn changed_paths(repo: &Repository) -> Result<Vec<String>, WorkspaceError> {
    Ok(super::repo::statuses(repo, true)?
        .iter()
        .filter(|s| {
            !(s.status() == git2::Status::WT_NEW
                && s.path().is_some_and(super::byproducts::is_byproduct))
        })
        .filter_map(|s| s.path().map(str::to_owned))
        .collect())
}

/// What differs between two snapshots, one line per change.
pub fn differences(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    if before.head != after.head {
        out.push("the worktree's HEAD moved".to_owned());
    }
    let paths: BTreeSet<&String> = before.files.keys().chain(after.files.keys()).collect();
    for p in paths {
        if before.files.get(p) != after.files.get(p) {
            out.push(format!("the file {p} changed"));
        }
    }
    let names: BTreeSet<&String> = before.refs.keys().chain(after.refs.keys()).collect();
    for n in names {
        match (before.refs.get(n), after.refs.get(n)) {
            (None, Some(_)) => out.push(format!("the reference {n} was created")),
            (Some(_), None) => out.push(format!("the reference {n} was deleted")),
            (Some(a), Some(b)) if a != b => out.push(format!("the reference {n} moved")),
            _ => {}
        }
    }
    for w in after.worktrees.difference(&before.worktrees) {
        out.push(format!("a worktree `{w}` was added"));
    }
    for w in before.worktrees.difference(&after.worktrees) {
        out.push(format!("the worktree `{w}` was removed"));
    }
    out
}

/// Puts the repository and the worktree back as `snap` found them: new worktrees removed,
/// references restored, the worktree reset to its HEAD with its changed files rewritten.
pub fn restore(root: &Path, wt: &Worktree, snap: &Snapshot) -> Result<(), WorkspaceError> {
    let repo = open(root)?;
    let now = snapshot(root, wt)?;
    for name in now.worktrees.difference(&snap.worktrees) {
        if let Ok(w) = repo.find_worktree(name) {
            let path: PathBuf = w.path().to_owned();
            let _ = std::fs::remove_dir_all(&path);
            let mut prune = WorktreePruneOptions::new();
            prune.valid(true).working_tree(true);
            w.prune(Some(&mut prune))
                .map_err(git_err("removing an added worktree"))?;
        }
    }
    for (name, target) in &now.refs {
        match snap.refs.get(name) {
            None => {
                if let Ok(mut r) = repo.find_reference(name) {
                    r.delete().map_err(git_err("deleting an added reference"))?;
                }
            }
            Some(old) if old != target => set_ref(&repo, name, old)?,
            _ => {}
        }
    }
    for (name, old) in &snap.refs {
        if !now.refs.contains_key(name) {
            set_ref(&repo, name, old)?;
        }
    }
    let wrepo = open(&wt.path)?;
    if let Ok(oid) = git2::Oid::from_str(&snap.head) {
        // Back on the branch (restored with the references above), at the commit it was at.
        let commit = wrepo
            .find_commit(oid)
            .map_err(git_err("reading the worktree's HEAD"))?;
        wrepo
            .set_head(&format!("refs/heads/{}", wt.branch))
            .map_err(git_err("restoring the worktree's HEAD"))?;
        wrepo
            .reset(commit.as_object(), git2::ResetType::Hard, None)
            .map_err(git_err("resetting the worktree"))?;
    }
    for path in changed_paths(&wrepo)? {
        if !snap.files.contains_key(&path) {
            let full = wt.path.join(&path);
            let removed = if full.is_dir() {
                std::fs::remove_dir_all(&full)
            } else {
                std::fs::remove_file(&full)
            };
            removed.map_err(|e| io_err(&full, e))?;
        }
    }
    for (path, bytes) in &snap.files {
        let full = wt.path.join(path);
        match bytes {
            Some(b) if b == DIRECTORY => {
                std::fs::create_dir_all(&full).map_err(|e| io_err(&full, e))?;
            }
            Some(b) => {
                if let Some(dir) = full.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
                }
                std::fs::write(&full, b).map_err(|e| io_err(&full, e))?;
            }
            None => {
                let _ = std::fs::remove_file(&full);
            }
        }
    }
    Ok(())
}

fn set_ref(repo: &Repository, name: &str, target: &str) -> Result<(), WorkspaceError> {
    let restored = match target.strip_prefix("-> ") {
        Some(symbolic) => repo.reference_symbolic(name, symbolic, true, "ralph: restore"),
        None => git2::Oid::from_str(target)
            .and_then(|oid| repo.reference(name, oid, true, "ralph: restore")),
    };
    restored
        .map(|_| ())
        .map_err(git_err("restoring a reference"))
}

/// Puts the worktree's files back as `snap` found them — files changed since are rewritten,
/// files added since are removed, tracked files changed only since are checked out again —,
/// leaving the references, the worktree list and untracked by-products alone. Returns what it
/// put back, one line each. For what checks leave in a worktree (an unpacked sdist, a rewritten
/// file), while other work on the repository goes on.
pub fn restore_files(wt: &Worktree, snap: &Snapshot) -> Result<Vec<String>, WorkspaceError> {
    let repo = open(&wt.path)?;
    let now: BTreeSet<String> = changed_paths(&repo)?.into_iter().collect();
    let head_tree = repo.head().and_then(|h| h.peel_to_tree()).ok();
    let mut out = Vec::new();
    let added = remove_added_folders(&repo, &wt.path, snap)?;
    out.extend(
        added
            .iter()
            .map(|dir| format!("the folder {dir} was added")),
    );
    let gone: Vec<String> = added.iter().map(|dir| format!("{dir}/")).collect();
    for path in &now {
        if gone.iter().any(|g| path.starts_with(g.as_str())) {
            continue;
        }
        out.extend(put_back(&repo, head_tree.as_ref(), &wt.path, snap, path)?);
    }
    out.extend(rewrite_reverted(&wt.path, snap, &now)?);
    Ok(out)
}

/// Removes the folders under `workdir` that were added since `snap` (none of its files inside),
/// whole, with what `.gitignore` hides in them — not a by-product's. Returns them, in git's
/// order, without a trailing `/`.
fn remove_added_folders(
    repo: &Repository,
    workdir: &Path,
    snap: &Snapshot,
) -> Result<Vec<String>, WorkspaceError> {
    let mut added = Vec::new();
    // A folder the checks made whole goes whole, with what `.gitignore` hides in it (an
    // unpacked sdist's build output): git lists its other files one by one above.
    let statuses = super::repo::statuses(repo, false)?;
    for entry in statuses.iter() {
        let Some(path) = entry.path() else { continue };
        let full = workdir.join(path);
        let dir = path.trim_end_matches('/');
        let new = !snap
            .files
            .keys()
            .any(|f| f.starts_with(&format!("{dir}/")) || f == dir);
        if entry.status().contains(git2::Status::WT_NEW)
            && full.is_dir()
            && new
            && !super::byproducts::is_byproduct(path)
        {
            remove_path(&full)?;
            added.push(dir.to_owned());
        }
    }
    Ok(added)
}

/// Puts `path`, which differs from HEAD now, back as `snap` found it: its bytes then, removed
/// when it was not there, checked out again when it was tracked and unchanged; what was done,
/// in a line, when anything was.
fn put_back(
    repo: &Repository,
    head_tree: Option<&git2::Tree>,
    workdir: &Path,
    snap: &Snapshot,
    path: &str,
) -> Result<Option<String>, WorkspaceError> {
    let full = workdir.join(path);
    Ok(match snap.files.get(path) {
        Some(Some(b)) if b == DIRECTORY => None,
        Some(Some(b)) => {
            if std::fs::read(&full).ok().as_deref() != Some(&b[..]) {
                std::fs::write(&full, b).map_err(|e| io_err(&full, e))?;
                Some(format!("the file {path} changed"))
            } else {
                None
            }
        }
        Some(None) => {
            remove_path(&full)?;
            Some(format!("the file {path} was added"))
        }
        None => {
            let tracked = head_tree.is_some_and(|t| t.get_path(Path::new(path)).is_ok());
            if tracked {
                let mut co = git2::build::CheckoutBuilder::new();
                co.force().path(path);
                repo.checkout_head(Some(&mut co))
                    .map_err(git_err("checking a file out again"))?;
                Some(format!("the file {path} changed"))
            } else {
                remove_path(&full)?;
                Some(format!("the file {path} was added"))
            }
        }
    })
}

/// Writes back the files that differed from HEAD in `snap` but no longer do (`now` is what
/// differs now); a file deleted then is deleted again, silently. Returns a line for each file
/// written.
fn rewrite_reverted(
    workdir: &Path,
    snap: &Snapshot,
    now: &BTreeSet<String>,
) -> Result<Vec<String>, WorkspaceError> {
    let mut out = Vec::new();
    for (path, bytes) in &snap.files {
        if now.contains(path) {
            continue;
        }
        let full = workdir.join(path);
        match bytes {
            Some(b) if b == DIRECTORY => {}
            Some(b) => {
                if let Some(dir) = full.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
                }
                std::fs::write(&full, b).map_err(|e| io_err(&full, e))?;
                out.push(format!("the file {path} changed"));
            }
            None => {
                let _ = std::fs::remove_file(&full);
            }
        }
    }
    Ok(out)
}

/// Removes `full`, then the folders above it that it leaves empty (up to the worktree: git
/// lists an added folder's files one by one, and a check that makes `tmp/` again must not find
/// it there).
fn remove_path(full: &Path) -> Result<(), WorkspaceError> {
    let removed = if full.is_dir() {
        std::fs::remove_dir_all(full)
    } else {
        std::fs::remove_file(full)
    };
    if let Err(e) = removed {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(io_err(full, e));
        }
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        // Fails, and stops, at the first folder that is not empty (the worktree at the latest).
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// [`snapshot`] off the async runtime.
pub async fn snapshot_async(root: &Path, wt: &Worktree) -> Result<Snapshot, WorkspaceError> {
    let (root, wt) = (root.to_owned(), wt.clone());
    blocking("the read-only guard", move || snapshot(&root, &wt)).await
}

/// Compares the repository with `before`; when anything changed, restores it and returns what
/// had changed.
pub async fn check_and_restore(
    root: &Path,
    wt: &Worktree,
    before: &Snapshot,
) -> Result<Vec<String>, WorkspaceError> {
    let (root, wt, before) = (root.to_owned(), wt.clone(), before.clone());
    blocking("the read-only guard", move || {
        let after = snapshot(&root, &wt)?;
        let changes = differences(&before, &after);
        if !changes.is_empty() {
            restore(&root, &wt, &before)?;
        }
        Ok(changes)
    })
    .await
}
