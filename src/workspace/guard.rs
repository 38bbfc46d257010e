//! The guard around a read-only phase: a snapshot of what an agent must not change — the
//! worktree it reads (its HEAD and every file that differs from it, content included), the
//! repository's references and its list of worktrees — then, after the phase, what changed,
//! and the restore. An agent's tools are limited already (Claude Code's `--tools`, Codex's
//! read-only sandbox); this catches whatever slips through, e.g. a tool that makes a worktree
//! and a branch in the user's repository.

use super::repo::{blocking, open, open_checkout};
use super::{WorkspaceError, Worktree};
use crate::untrusted_dir::{Kind, Node, Refused, UntrustedDir};
use git2::{Repository, WorktreePruneOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a read-only phase must leave as it found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The worktree's HEAD commit.
    pub(crate) head: String,
    /// HEAD was on no branch (a reading or audit checkout), rather than on the run's.
    pub(crate) detached: bool,
    /// Entries that differ from HEAD, by path: a file's bytes, a link's target or a folder
    /// (a nested repository), or `None` when deleted. A FIFO, a device or a socket is not
    /// kept: it is not the change's (git cannot hold one), and it goes when restored.
    pub(crate) files: BTreeMap<String, Option<Node>>,
    /// Every reference of the repository and what it points at.
    pub(crate) refs: BTreeMap<String, String>,
    /// The registered worktrees, by name.
    pub(crate) worktrees: BTreeSet<String>,
}

/// The largest file a snapshot keeps (a worktree's files are the project's: this is far above
/// any source file, and a bound all the same).
const MAX_FILE: u64 = 256 << 20;

fn git_err(what: &'static str) -> impl Fn(git2::Error) -> WorkspaceError {
    move |e| WorkspaceError::git(what, e)
}

fn io_err(path: &Path, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("{}: {e}", path.display()),
        source: None,
    }
}

fn refused(e: Refused) -> WorkspaceError {
    WorkspaceError::Git {
        message: e.to_string(),
        source: None,
    }
}

/// The worktree's folder, held open: every file ralph reads or puts back goes through it.
fn untrusted(wt: &Worktree) -> Result<UntrustedDir, WorkspaceError> {
    UntrustedDir::open(&wt.path).map_err(|e| io_err(&wt.path, e))
}

/// What `path` is now, as a snapshot keeps it: `None` when it is not there, or is a special
/// file (a FIFO, a device, a socket), which no snapshot keeps.
fn entry(dir: &UntrustedDir, path: &str) -> Result<Option<Node>, WorkspaceError> {
    match dir.read(Path::new(path), MAX_FILE) {
        Ok(node) => Ok(node),
        Err(Refused::NotRegular { .. }) | Err(Refused::Outside { .. }) => Ok(None),
        Err(e) => Err(refused(e)),
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
    let wrepo = open_checkout(wt)?;
    let head = wrepo
        .head()
        .ok()
        .and_then(|h| h.target())
        .map(|o| o.to_string())
        .unwrap_or_default();
    let detached = wrepo.head_detached().unwrap_or(false);
    let dir = untrusted(wt)?;
    let mut files = BTreeMap::new();
    for path in changed_paths(&wrepo)? {
        // A folder (a nested repository, another worktree made inside this one) is known by
        // its name; a link by its target, never by what it points at.
        let node = entry(&dir, path.trim_end_matches('/'))?;
        files.insert(path, node);
    }
    Ok(Snapshot {
        head,
        detached,
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
            // Its folder goes only when it is inside the watched worktree: a registration an
            // agent edited could name any folder of the user's.
            if let Ok(rel) = path.strip_prefix(&wt.path) {
                untrusted(wt)?.remove(rel).map_err(refused)?;
            }
            let mut prune = WorktreePruneOptions::new();
            prune.valid(true).working_tree(false);
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
    let wrepo = open_checkout(wt)?;
    if let Ok(oid) = git2::Oid::from_str(&snap.head) {
        // Back on the branch (restored with the references above), or on no branch, at the
        // commit it was at.
        let commit = wrepo
            .find_commit(oid)
            .map_err(git_err("reading the worktree's HEAD"))?;
        if snap.detached {
            wrepo.set_head_detached(oid)
        } else {
            wrepo.set_head(&format!("refs/heads/{}", wt.branch))
        }
        .map_err(git_err("restoring the worktree's HEAD"))?;
        wrepo
            .reset(commit.as_object(), git2::ResetType::Hard, None)
            .map_err(git_err("resetting the worktree"))?;
    }
    let dir = untrusted(wt)?;
    for path in changed_paths(&wrepo)? {
        if !snap.files.contains_key(&path) {
            dir.remove(Path::new(path.trim_end_matches('/')))
                .map_err(refused)?;
        }
    }
    for (path, node) in &snap.files {
        let rel = Path::new(path.trim_end_matches('/'));
        match node {
            Some(node) => dir.put(rel, node).map_err(refused)?,
            None => dir.remove(rel).map_err(refused)?,
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
    let repo = open_checkout(wt)?;
    let dir = untrusted(wt)?;
    let now: BTreeSet<String> = changed_paths(&repo)?.into_iter().collect();
    let head_tree = repo.head().and_then(|h| h.peel_to_tree()).ok();
    let mut out = Vec::new();
    let added = remove_added_folders(&repo, &dir, snap)?;
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
        out.extend(put_back(&repo, head_tree.as_ref(), &dir, snap, path)?);
    }
    out.extend(rewrite_reverted(&dir, snap, &now)?);
    Ok(out)
}

/// Removes the folders under the worktree that were added since `snap` (none of its files
/// inside), whole, with what `.gitignore` hides in them — not a by-product's. Returns them, in
/// git's order, without a trailing `/`.
fn remove_added_folders(
    repo: &Repository,
    dir: &UntrustedDir,
    snap: &Snapshot,
) -> Result<Vec<String>, WorkspaceError> {
    let mut added = Vec::new();
    // A folder the checks made whole goes whole, with what `.gitignore` hides in it (an
    // unpacked sdist's build output): git lists its other files one by one above.
    let statuses = super::repo::statuses(repo, false)?;
    for entry in statuses.iter() {
        let Some(path) = entry.path() else { continue };
        let name = path.trim_end_matches('/');
        let new = !snap
            .files
            .keys()
            .any(|f| f.starts_with(&format!("{name}/")) || f == name);
        if entry.status().contains(git2::Status::WT_NEW)
            && dir.kind(Path::new(name)) == Some(Kind::Dir)
            && new
            && !super::byproducts::is_byproduct(path)
        {
            remove_path(dir, name)?;
            added.push(name.to_owned());
        }
    }
    Ok(added)
}

/// Puts `path`, which differs from HEAD now, back as `snap` found it: as it was then (a
/// file's bytes, a link), removed when it was not there, checked out again when it was tracked
/// and unchanged; what was done, in a line, when anything was.
fn put_back(
    repo: &Repository,
    head_tree: Option<&git2::Tree>,
    dir: &UntrustedDir,
    snap: &Snapshot,
    path: &str,
) -> Result<Option<String>, WorkspaceError> {
    Ok(match snap.files.get(path) {
        Some(Some(Node::Dir)) => None,
        Some(Some(node)) => {
            if entry(dir, path)?.as_ref() != Some(node) {
                dir.put(Path::new(path), node).map_err(refused)?;
                Some(format!("the file {path} changed"))
            } else {
                None
            }
        }
        // Deleted by the implementer: a check that made it again made it; one still gone is as
        // the implementer left it.
        Some(None) => match entry(dir, path)? {
            Some(_) => {
                remove_path(dir, path)?;
                Some(format!("the file {path} was added"))
            }
            None => None,
        },
        None => {
            let tracked = head_tree.is_some_and(|t| t.get_path(Path::new(path)).is_ok());
            if tracked {
                // git checks a tracked path out as the commit has it: a link as a link, and
                // never through a folder on the way that a check made a link.
                dir.remove(Path::new(path)).map_err(refused)?;
                if let Some(parent) = Path::new(path)
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                {
                    dir.create_dir_all(parent).map_err(refused)?;
                }
                let mut co = git2::build::CheckoutBuilder::new();
                co.force().path(path);
                repo.checkout_head(Some(&mut co))
                    .map_err(git_err("checking a file out again"))?;
                Some(format!("the file {path} changed"))
            } else {
                remove_path(dir, path)?;
                Some(format!("the file {path} was added"))
            }
        }
    })
}

/// Writes back the entries that differed from HEAD in `snap` but no longer do (`now` is what
/// differs now); one deleted then is deleted again, silently. Returns a line for each one
/// written.
fn rewrite_reverted(
    dir: &UntrustedDir,
    snap: &Snapshot,
    now: &BTreeSet<String>,
) -> Result<Vec<String>, WorkspaceError> {
    let mut out = Vec::new();
    for (path, node) in &snap.files {
        if now.contains(path) {
            continue;
        }
        match node {
            Some(Node::Dir) => {}
            Some(node) => {
                dir.put(Path::new(path), node).map_err(refused)?;
                out.push(format!("the file {path} changed"));
            }
            None => dir.remove(Path::new(path)).map_err(refused)?,
        }
    }
    Ok(out)
}

/// Removes `path`, then the folders above it that it leaves empty (up to the worktree: git
/// lists an added folder's files one by one, and a check that makes `tmp/` again must not find
/// it there).
fn remove_path(dir: &UntrustedDir, path: &str) -> Result<(), WorkspaceError> {
    let rel = Path::new(path.trim_end_matches('/'));
    dir.remove(rel).map_err(refused)?;
    dir.remove_empty_parents(rel);
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
