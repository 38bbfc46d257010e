//! git2 operations for a competition — the worktree, its resets and removal, the commit with the
//! sealed pre-commit hook — and the few that need the `git` program (fetch and push).

use super::preflight::Preflight;
use super::repo::{
    base_commit, blocking, git_cmd, open, open_checkout, registration_of, remote_cmd, run_git,
    token_env,
};
use super::seal::{self, Entry, GitSeal};
use super::WorkspaceError;
use crate::process::{Cmd, Confinement, Kind};
use crate::secret::GitToken;
use git2::{BranchType, IndexAddOption, Repository, ResetType, WorktreeAddOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the pre-commit hook may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// The competition's worktree: a checkout outside the repository with a git directory of its
/// own, and ralph's registration of it in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// The commit the branch started from (the base), to diff against.
    pub base_commit: String,
    /// ralph's own git directory of the checkout: its registration in the repository
    /// (`.git/worktrees/<name>`), where ralph's index and HEAD are. The checkout's `.git` is
    /// the checks' (see `own_git`).
    pub git_dir: PathBuf,
}

/// Makes (or, on resume, reuses) the branch and its checkout `<checkouts>/N`, starting from
/// the base as freshly fetched as the remote allows.
pub async fn create_worktree(
    pre: &Preflight,
    checkouts: &Path,
    remote: &str,
    token: Option<&GitToken>,
) -> Result<Worktree, WorkspaceError> {
    if pre.has_remote {
        let fetch =
            remote_cmd(&pre.root, remote, token).args(["fetch", "--quiet", remote, &pre.base]);
        match run_git(fetch).await {
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
    let path = checkouts.join(pre.issue.to_string());
    blocking("making the worktree", move || {
        let _registrations = super::checkout::lock_registrations(&pre.root)?;
        let wt = add_worktree(&pre, &path, &remote)?;
        give_own_git(&wt)?;
        Ok(wt)
    })
    .await
}

/// Gives the checkout `wt` its own git directory, as ralph's registration of it stands now.
pub(super) fn give_own_git(wt: &Worktree) -> Result<(), WorkspaceError> {
    super::own_git::give(&open_checkout(wt)?, &wt.path)
}

/// The git2 half of [`create_worktree`]: the branch from the base, and its worktree at `path`.
fn add_worktree(pre: &Preflight, path: &Path, remote: &str) -> Result<Worktree, WorkspaceError> {
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
    let path = path.to_owned();
    let name = format!("ralph-{}", pre.issue);
    let git_dir = repo.commondir().join("worktrees").join(&name);
    if let Ok(existing) = repo.find_worktree(&name) {
        if existing.validate().is_ok() && existing.path() == path && path.is_dir() {
            return Ok(Worktree {
                path,
                branch: pre.branch.clone(),
                base_commit: base.to_string(),
                git_dir,
            });
        }
        // A stale registration (its directory is gone, or it is an earlier version's checkout
        // inside the repository, whose branch this one takes over): forget it.
        let old = existing.path().to_owned();
        let mut prune = git2::WorktreePruneOptions::new();
        prune.valid(true).working_tree(false);
        let _ = existing.prune(Some(&mut prune));
        if old.starts_with(pre.root.join(super::checkout::LEGACY_DIR)) {
            let _ = super::checkout::remove_path(&old);
        }
    }
    super::checkout::make_room(&path)?;
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
        git_dir,
    })
}

/// Throws away everything the last attempt left in the worktree: tracked files back to the
/// branch's last commit, untracked files removed (ignored ones, such as build caches, kept),
/// and the checkout's own git directory made anew.
pub fn reset_worktree(wt: &Worktree) -> Result<(), WorkspaceError> {
    let repo = open_checkout(wt)?;
    let head = repo
        .head()
        .and_then(|h| h.peel(git2::ObjectType::Commit))
        .map_err(|e| WorkspaceError::git("reading the worktree's HEAD", e))?;
    repo.reset(&head, ResetType::Hard, None)
        .map_err(|e| WorkspaceError::git("resetting the worktree", e))?;
    let statuses = super::repo::statuses(&repo, false)?;
    let dir =
        crate::untrusted_dir::UntrustedDir::open(&wt.path).map_err(|e| WorkspaceError::Git {
            message: format!("cannot open {}: {e}", wt.path.display()),
            source: None,
        })?;
    for s in statuses.iter() {
        if let Some(p) = s.path() {
            // A link goes as a link: never what it points at.
            dir.remove(Path::new(p.trim_end_matches('/')))
                .map_err(|e| WorkspaceError::Git {
                    message: format!("cannot remove {e}"),
                    source: None,
                })?;
        }
    }
    super::own_git::give(&repo, &wt.path)
}

/// Removes the worktree (the branch stays).
pub fn remove_worktree(root: &Path, wt: &Worktree) -> Result<(), WorkspaceError> {
    let _registrations = super::checkout::lock_registrations(root)?;
    let repo = open(root)?;
    super::checkout::remove_path(&wt.path).map_err(|e| WorkspaceError::Git {
        message: format!("cannot remove {}: {e}", wt.path.display()),
        source: None,
    })?;
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

/// A detached checkout of `rev` at `path` with a git directory of its own, for an agent to read
/// the repository as it is there (`ralph refine`, a round's reading checkout, an audit); its
/// branch and base are left empty for the caller to fill in. Its folder is a sibling of the
/// competitions' checkouts (or named `ralph-…`), so a competition's read-only guard leaves it
/// alone.
pub async fn add_detached(root: &Path, path: &Path, rev: &str) -> Result<Worktree, WorkspaceError> {
    let _ = remove_detached(root, path).await;
    let (made, at) = (path.to_owned(), root.to_owned());
    let _registrations = blocking("making a checkout's folder", move || {
        let lock = super::checkout::lock_registrations(&at)?;
        super::checkout::make_room(&made)?;
        Ok(lock)
    })
    .await?;
    let out = run_git(git_cmd(root).args([
        "worktree",
        "add",
        "--detach",
        "--quiet",
        &path.to_string_lossy(),
        rev,
    ]))
    .await?;
    if !out.success() {
        return Err(WorkspaceError::Git {
            message: format!(
                "cannot check out {rev} at {}: {}",
                path.display(),
                out.tail(3)
            ),
            source: None,
        });
    }
    let (root, path) = (root.to_owned(), path.to_owned());
    blocking("giving a checkout its own git directory", move || {
        let repo = open(&root)?;
        let git_dir = registration_of(&repo, &path).ok_or_else(|| WorkspaceError::Git {
            message: format!("{} is not registered in the repository", path.display()),
            source: None,
        })?;
        let wt = Worktree {
            path,
            branch: String::new(),
            base_commit: String::new(),
            git_dir,
        };
        give_own_git(&wt)?;
        Ok(wt)
    })
    .await
}

/// Removes a worktree made by [`add_detached`].
pub async fn remove_detached(root: &Path, path: &Path) -> Result<(), WorkspaceError> {
    let at = root.to_owned();
    let _registrations = blocking("waiting for the worktree registrations", move || {
        super::checkout::lock_registrations(&at)
    })
    .await?;
    // git refuses a checkout whose `.git` is a folder of its own: the folder goes whole, and
    // its registration below.
    run_git(git_cmd(root).args(["worktree", "remove", "--force", &path.to_string_lossy()])).await?;
    let _ = super::checkout::remove_path(path);
    // Only this worktree's registration: a global `git worktree prune` would also take one
    // another run is making right now (its folder registered, its `gitdir` not yet written).
    let (root, path) = (root.to_owned(), path.to_owned());
    blocking("forgetting a checkout", move || {
        let repo = open(&root)?;
        let names = repo
            .worktrees()
            .map_err(|e| WorkspaceError::git("listing worktrees", e))?;
        for name in names.iter().flatten() {
            if let Ok(w) = repo.find_worktree(name) {
                if w.path() == path && w.validate().is_err() {
                    let mut prune = git2::WorktreePruneOptions::new();
                    prune.valid(true).working_tree(false);
                    let _ = w.prune(Some(&mut prune));
                }
            }
        }
        Ok(())
    })
    .await
}

/// Removes the worktree and deletes its branch (a run refused before it began).
pub fn abandon(root: &Path, wt: &Worktree) -> Result<(), WorkspaceError> {
    remove_worktree(root, wt)?;
    let repo = open(root)?;
    if let Ok(mut branch) = repo.find_branch(&wt.branch, BranchType::Local) {
        branch
            .delete()
            .map_err(|e| WorkspaceError::git("deleting the branch", e))?;
    }
    Ok(())
}

/// The commit the worktree is at.
pub fn head(wt: &Worktree) -> Result<String, WorkspaceError> {
    let repo = open_checkout(wt)?;
    let commit = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| WorkspaceError::git("reading the worktree's HEAD", e))?;
    Ok(commit.id().to_string())
}

/// The commit a competition would start from on `base` without fetching: the remote's copy
/// of the branch as last fetched, else the local branch; with where it was found
/// (`origin/main`, `main`). `None` when neither exists.
pub async fn base_tip(
    root: &Path,
    remote: &str,
    base: &str,
) -> Result<Option<(String, String)>, WorkspaceError> {
    let (root, remote, base) = (root.to_owned(), remote.to_owned(), base.to_owned());
    blocking("reading the base branch", move || {
        let repo = open(&root)?;
        let Some(commit) = base_commit(&repo, &remote, &base) else {
            return Ok(None);
        };
        let remote_copy = format!("refs/remotes/{remote}/{base}");
        let name = if repo.refname_to_id(&remote_copy).ok() == Some(commit) {
            format!("{remote}/{base}")
        } else {
            base.clone()
        };
        Ok(Some((commit.to_string(), name)))
    })
    .await
}

/// Stages every change in the worktree but untracked by-products (bytecode, caches, reports:
/// see `byproducts`), which never enter a commit, `.gitignore` or not.
fn stage_all(repo: &Repository) -> Result<git2::Oid, WorkspaceError> {
    let mut index = staged(repo)?;
    index
        .write()
        .map_err(|e| WorkspaceError::git("staging the implementation", e))?;
    index
        .write_tree()
        .map_err(|e| WorkspaceError::git("writing the tree", e))
}

/// ralph's index with every change of the worktree staged but the untracked by-products, in
/// memory only (written by the caller, or not).
fn staged(repo: &Repository) -> Result<git2::Index, WorkspaceError> {
    let left_out = untracked_byproducts(repo)?;
    let mut index = repo
        .index()
        .map_err(|e| WorkspaceError::git("opening the index", e))?;
    let mut skip = |path: &Path, _: &[u8]| -> i32 {
        i32::from(left_out.contains(path.to_string_lossy().as_ref()))
    };
    index
        .add_all(
            ["*"],
            IndexAddOption::DEFAULT,
            Some(&mut skip as &mut git2::IndexMatchedPath),
        )
        .and_then(|()| index.update_all(["*"], None))
        .map_err(|e| WorkspaceError::git("staging the implementation", e))?;
    Ok(index)
}

/// The tree a commit of the worktree would hold now — everything [`commit`] stages, before any
/// hook —, without writing ralph's index: what an attempt's checks judge. Its objects go to the
/// object store, as staging puts them there.
pub fn tree(wt: &Worktree) -> Result<String, WorkspaceError> {
    let repo = open_checkout(wt)?;
    let mut index = staged(&repo)?;
    let id = index
        .write_tree()
        .map_err(|e| WorkspaceError::git("writing the tree", e))?;
    Ok(id.to_string())
}

/// The untracked by-products of the worktree of `repo`, by path.
pub(super) fn untracked_byproducts(
    repo: &Repository,
) -> Result<std::collections::BTreeSet<String>, WorkspaceError> {
    Ok(super::repo::statuses(repo, true)?
        .iter()
        .filter(|s| s.status().contains(git2::Status::WT_NEW))
        .filter_map(|s| s.path().map(str::to_owned))
        .filter(|p| super::byproducts::is_byproduct(p))
        .collect())
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

/// Stages everything in the worktree, runs the repository's pre-commit hook as `seal` holds it
/// (a failure fails the attempt with its output; files it fixed are staged again), and commits
/// with ralph's author and the `Ralph-Bot:` / `Ralph-Run:` trailers. Returns the commit id.
///
/// The hook is the repository owner's, but it runs on the change's files (a formatter, a
/// linter, whatever it calls): it runs confined like a check, from a fresh copy of the sealed
/// bytes, so neither a hook an agent planted nor one it edited is ever run.
pub async fn commit(
    wt: &Worktree,
    info: &CommitInfo<'_>,
    seal: &GitSeal,
) -> Result<String, WorkspaceError> {
    let w = wt.clone();
    blocking("staging the implementation", move || {
        let repo = open_checkout(&w)?;
        stage_all(&repo).map(|_| ())
    })
    .await?;
    let mut quarantine = None;
    if let Some(Entry::File { mode, .. }) = seal.hooks.get(Path::new("pre-commit")) {
        if mode & 0o111 != 0 {
            quarantine = Some(run_pre_commit(wt, seal).await?);
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
        let quarantine = quarantine.as_ref().map(|q| q.path());
        let id = commit_staged(&w, &message, &name, &email, quarantine)?;
        give_own_git(&w)?;
        Ok(id)
    })
    .await
}

/// Runs the sealed pre-commit hook in the worktree, confined like a check; returns the
/// quarantine its objects went to.
async fn run_pre_commit(
    wt: &Worktree,
    seal: &GitSeal,
) -> Result<tempfile::TempDir, WorkspaceError> {
    let fail = |what: &str, e: std::io::Error| WorkspaceError::Git {
        message: format!("cannot {what}: {e}"),
        source: None,
    };
    let copy = seal::hooks_copy(seal).map_err(|e| fail("copy the sealed hooks", e))?;
    let hook = copy.path().join("pre-commit");
    // Hooks that fix files stage them again (`git add`, lint-staged's `git stash`): the
    // objects they write go to a quarantine, as git's receive-pack does it, and only those of
    // ralph's commit are kept; the object store, the configuration, the hooks and the
    // references stay read-only.
    let quarantine = tempfile::Builder::new()
        .prefix("ralph-objects-")
        .tempdir()
        .map_err(|e| fail("make the hook's object quarantine", e))?;
    // pre-commit keeps the environments of the hooks the worktree's configuration names:
    // ralph's own cache of this repository, never the user's.
    let pre_commit_home = seal
        .common
        .parent()
        .unwrap_or(&seal.common)
        .join(".ralph/cache/pre-commit");
    let _ = std::fs::create_dir_all(&pre_commit_home);
    // The hook sees ralph's registration of the checkout, as git hands a hook its repository:
    // what ralph staged, in a copy of ralph's index that the hook may stage into (ralph stages
    // again from the files afterwards), never the checkout's own git dir.
    let index = quarantine.path().join("index");
    std::fs::copy(wt.git_dir.join("index"), &index).map_err(|e| fail("copy the index", e))?;
    let confinement = Confinement::new(Kind::Check, &wt.path)
        .readable(copy.path())
        .writable(quarantine.path())
        .writable(&pre_commit_home);
    let mut cmd = Cmd::new(&hook)
        .current_dir(&wt.path)
        .timeout(HOOK_TIMEOUT)
        .env("GIT_DIR", &wt.git_dir)
        .env("GIT_WORK_TREE", &wt.path)
        .env("GIT_INDEX_FILE", &index)
        .env("GIT_OBJECT_DIRECTORY", quarantine.path())
        .env(
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            seal.common.join("objects"),
        )
        .env("PRE_COMMIT_HOME", &pre_commit_home)
        .confine(confinement);
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
    Ok(quarantine)
}

/// Stages again (the hook may have fixed files) and commits with ralph's author. Objects the
/// hook staged are read from its `quarantine`; those the commit's tree holds are copied into
/// the object store, the rest are dropped with the quarantine.
fn commit_staged(
    wt: &Worktree,
    message: &str,
    author_name: &str,
    author_email: &str,
    quarantine: Option<&Path>,
) -> Result<String, WorkspaceError> {
    let repo = open_checkout(wt)?;
    if let Some(q) = quarantine {
        repo.odb()
            .and_then(|odb| odb.add_disk_alternate(&q.to_string_lossy()))
            .map_err(|e| WorkspaceError::git("reading the hook's objects", e))?;
    }
    let tree_id = stage_all(&repo)?;
    if quarantine.is_some() {
        keep_objects(&repo, &open_checkout(wt)?, tree_id)?;
    }
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

/// Copies the objects of the tree `tree_id` that `store` (the repository without the
/// quarantine) lacks from `with_quarantine` into it: the hook's objects the commit uses.
fn keep_objects(
    with_quarantine: &Repository,
    store: &Repository,
    tree_id: git2::Oid,
) -> Result<(), WorkspaceError> {
    let err = |what: &'static str| move |e| WorkspaceError::git(what, e);
    let from = with_quarantine.odb().map_err(err("reading the objects"))?;
    let to = store.odb().map_err(err("opening the object store"))?;
    // Every tree is walked: ralph's own `write_tree` put the trees in the store already, but
    // the blobs they name may be the hook's.
    let mut pending = vec![tree_id];
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = pending.pop() {
        if !seen.insert(id) {
            continue;
        }
        let (_, kind) = from
            .read_header(id)
            .map_err(err("reading a hook's object"))?;
        if kind != git2::ObjectType::Tree && to.exists(id) {
            continue;
        }
        let object = from.read(id).map_err(err("reading a hook's object"))?;
        if object.kind() == git2::ObjectType::Tree {
            let tree = with_quarantine
                .find_tree(id)
                .map_err(err("reading a hook's tree"))?;
            pending.extend(
                tree.iter()
                    .filter(|e| e.kind() != Some(git2::ObjectType::Commit))
                    .map(|e| e.id()),
            );
        }
        if !to.exists(id) {
            to.write(object.kind(), object.data())
                .map_err(err("keeping a hook's object"))?;
        }
    }
    Ok(())
}

/// Pushes the branch from the repository at `root` (never through the worktree, whose `.git`
/// link an agent could have pointed elsewhere). With a token and an HTTPS remote, the token goes
/// to git as an `http.<origin>.extraheader` through `GIT_CONFIG_*` environment variables (never
/// in the arguments, so other users' `ps` cannot see it); otherwise the user's git credential
/// setup is used. No hook runs ([`git_cmd`]): a `pre-push` or `reference-transaction` hook
/// would inherit the token with git's environment.
pub async fn push(
    root: &Path,
    wt: &Worktree,
    remote: &str,
    token: Option<&GitToken>,
) -> Result<(), WorkspaceError> {
    let (path, name) = (root.to_owned(), remote.to_owned());
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
        git_cmd(root).args(["push", "--quiet", "--no-verify", remote, &refspec]),
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
