//! The git side of a competition (docs/specification.md §6 preflight and steps 6–8, §9): preflight
//! refusals, the branch and its checkout outside the repository (`checkout`: so the user's
//! checkout never changes, and no tool in the checkout finds the user's files above it) with a
//! git directory of its own for the checks (`own_git`), resets between attempts, diff analysis
//! with the protected-path rule, commits with ralph's author and trailers after the
//! repository's pre-commit hook, and the push.
//!
//! The competition reaches all of it through one narrow async trait, [`Workspace`];
//! [`GitWorkspace`] is the real one. Local work uses git2 (libgit2, without network
//! transports), on blocking threads. Talking to a remote — asking whether the branch exists
//! there, fetching the base, pushing — and the pre-commit hook run as programs through the
//! process wrapper, so the user's own credential setup applies; in Actions the token is handed
//! to git through its environment (`http.extraheader`), never on a command line.

pub mod byproducts;
mod checkout;
mod diff;
mod git;
mod guard;
mod ledger_push;
mod leftovers;
#[cfg(test)]
pub(crate) mod memory;
mod own_git;
mod preflight;
mod repo;
mod revision;
pub mod seal;

pub use checkout::{
    checkouts_dir, common_dir, default_root, remove_checkouts, retire_legacy, Retired, LEGACY_DIR,
};
pub use diff::{
    analyse, patch_text, protected_findings, DiffStats, FileChange, Finding, SETTINGS_CHANGE,
};
pub use git::{
    add_detached, base_tip, commit, create_worktree, push, remove_detached, remove_worktree,
    reset_worktree, CommitInfo, Worktree,
};
pub use guard::Snapshot;
pub use ledger_push::{classify, push_events, LedgerPush, LedgerTarget, Rejection};
pub use leftovers::{leftovers, remove_issue, Leftover};
pub use preflight::{default_branch, inspect, preflight, Inspection, Preflight, PreflightOptions};

use crate::secret::GitToken;
use async_trait::async_trait;
use seal::GitSeal;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a competition does with git: check it may start, make the branch's worktree, reset it
/// between attempts, measure and show the change, commit it, push it, and clean up.
#[async_trait]
pub trait Workspace: Send + Sync {
    /// Checks that a competition may start, changing nothing.
    async fn preflight(&self, opts: &PreflightOptions<'_>) -> Result<Preflight, WorkspaceError>;
    /// Makes (or on resume reuses) the branch and its worktree from the base.
    async fn create_worktree(&self, pre: &Preflight) -> Result<Worktree, WorkspaceError>;
    /// Throws away what the last attempt left (ignored build caches stay).
    async fn reset_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError>;
    /// Removes the worktree; the branch stays.
    async fn remove_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError>;
    /// A throw-away checkout of `commit` (one of `wt`'s, from [`Workspace::head`]) beside
    /// `wt`, named `name`, on no branch: what an audit implements in. It diffs against `wt`'s
    /// base; nothing in it is ever committed.
    async fn create_scratch(
        &self,
        wt: &Worktree,
        name: &str,
        commit: &str,
    ) -> Result<Worktree, WorkspaceError>;
    /// Removes a checkout made by [`Workspace::create_scratch`].
    async fn remove_scratch(&self, scratch: &Worktree) -> Result<(), WorkspaceError>;
    /// Removes the worktree and its branch, for a run refused before it began.
    async fn abandon(&self, wt: &Worktree) -> Result<(), WorkspaceError>;
    /// The commit the worktree's branch is at.
    async fn head(&self, wt: &Worktree) -> Result<String, WorkspaceError>;
    /// The tree a commit of the worktree would hold now (what its checks judge), without
    /// staging anything.
    async fn tree(&self, _wt: &Worktree) -> Result<String, WorkspaceError> {
        Err(unsupported("reading the worktree's tree"))
    }
    /// The change against the base.
    async fn diff(&self, wt: &Worktree) -> Result<DiffStats, WorkspaceError>;
    /// The change as a unified diff, cut at `limit` bytes.
    async fn patch_text(&self, wt: &Worktree, limit: usize) -> Result<String, WorkspaceError>;
    /// Commits everything after the pre-commit hook; returns the commit id.
    async fn commit(&self, wt: &Worktree, info: &CommitInfo<'_>) -> Result<String, WorkspaceError>;
    /// Pushes the branch.
    async fn push(&self, wt: &Worktree, token: Option<&GitToken>) -> Result<(), WorkspaceError>;
    /// What a read-only phase must leave as it found it: the worktree, the references, the
    /// list of worktrees.
    async fn snapshot(&self, wt: &Worktree) -> Result<Snapshot, WorkspaceError>;
    /// What changed since `before`, one line per change — restored when anything did.
    async fn restore_changes(
        &self,
        wt: &Worktree,
        before: &Snapshot,
    ) -> Result<Vec<String>, WorkspaceError>;
    /// What changed in the repository's git directory since the worktree `wt` was made (its
    /// hooks, its configuration, the worktree's links, the references), one line per change —
    /// restored when anything did. Asked after every agent and every check run.
    async fn seal_changes(&self, wt: &Worktree) -> Result<Vec<String>, WorkspaceError>;
    /// The worktree's untracked by-products (bytecode, caches, reports, build folders): never
    /// committed, `.gitignore` or not.
    async fn left_out(&self, wt: &Worktree) -> Result<Vec<String>, WorkspaceError>;
    /// Puts the worktree's files back as `before` found them (references, worktrees and
    /// by-products left alone), after checks wrote into it; what it put back, one line each.
    async fn tidy(&self, wt: &Worktree, before: &Snapshot) -> Result<Vec<String>, WorkspaceError>;
    /// The text of `path` at the commit `wt` started from (`None`: not there, or not text).
    async fn base_text(&self, wt: &Worktree, path: &str) -> Result<Option<String>, WorkspaceError>;
    /// `ralph follow`: fetches a pull request's `branch` and returns the commit it is at
    /// (`None` when the branch is nowhere).
    async fn pull_head(&self, _branch: &str) -> Result<Option<String>, WorkspaceError> {
        Err(unsupported("reading a pull request's branch"))
    }
    /// The time of the newest commit ralph made that `commit` contains.
    async fn last_own_commit(
        &self,
        _commit: &str,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, WorkspaceError> {
        Err(unsupported("reading ralph's commits"))
    }
    /// The commit on `base` (fetched first) that reverts `commit`, if any.
    async fn revert_of(
        &self,
        _base: &str,
        _commit: &str,
    ) -> Result<Option<String>, WorkspaceError> {
        Err(unsupported("looking for a revert"))
    }
    /// A worktree named `name` on `branch` at `commit` (a pull request's head), diffing against
    /// `commit`: where a revision round works.
    async fn revision_worktree(
        &self,
        _name: &str,
        _branch: &str,
        _commit: &str,
    ) -> Result<Worktree, WorkspaceError> {
        Err(unsupported("a revision's worktree"))
    }
}

/// The error of a workspace that cannot do `what`.
fn unsupported(what: &str) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("{what} is not supported by this workspace"),
        source: None,
    }
}

/// The workspace of a git repository at `root`, talking to `remote`, its checkouts in
/// `checkouts` (see [`checkouts_dir`]).
#[derive(Debug, Clone)]
pub struct GitWorkspace {
    root: PathBuf,
    checkouts: PathBuf,
    remote: String,
    /// For asking the remote and fetching from it (an HTTPS remote, no persisted credentials).
    token: Option<GitToken>,
    /// The git directory as it was when each worktree was made, by the worktree's path.
    seals: Arc<Mutex<BTreeMap<PathBuf, Arc<GitSeal>>>>,
}

impl GitWorkspace {
    pub fn new(
        root: impl Into<PathBuf>,
        checkouts: impl Into<PathBuf>,
        remote: impl Into<String>,
    ) -> GitWorkspace {
        GitWorkspace {
            root: root.into(),
            checkouts: checkouts.into(),
            remote: remote.into(),
            token: None,
            seals: Arc::default(),
        }
    }

    /// Seals the git directory for `wt` (before any agent works in it).
    async fn seal(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        let taken = seal::take_async(&self.root, wt).await?;
        self.seals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(wt.path.clone(), Arc::new(taken));
        Ok(())
    }

    /// The seal of `wt`, taken now if it has none yet.
    async fn seal_of(&self, wt: &Worktree) -> Result<Arc<GitSeal>, WorkspaceError> {
        let found = self
            .seals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&wt.path)
            .cloned();
        match found {
            Some(s) => Ok(s),
            None => {
                self.seal(wt).await?;
                Box::pin(self.seal_of(wt)).await
            }
        }
    }

    /// The same workspace, handing `token` to git for the remote's HTTPS URL when it asks the
    /// remote or fetches from it (pushes take the token they are given).
    pub fn with_token(mut self, token: Option<GitToken>) -> GitWorkspace {
        self.token = token;
        self
    }
}

#[async_trait]
impl Workspace for GitWorkspace {
    async fn preflight(&self, opts: &PreflightOptions<'_>) -> Result<Preflight, WorkspaceError> {
        preflight(&self.root, &self.remote, self.token.as_ref(), opts).await
    }

    async fn create_worktree(&self, pre: &Preflight) -> Result<Worktree, WorkspaceError> {
        let wt = create_worktree(pre, &self.checkouts, &self.remote, self.token.as_ref()).await?;
        self.seal(&wt).await?;
        Ok(wt)
    }

    async fn reset_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("resetting the worktree", move || reset_worktree(&wt)).await
    }

    async fn remove_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        let (root, wt) = (self.root.clone(), wt.clone());
        repo::blocking("removing the worktree", move || remove_worktree(&root, &wt)).await
    }

    async fn create_scratch(
        &self,
        wt: &Worktree,
        name: &str,
        commit: &str,
    ) -> Result<Worktree, WorkspaceError> {
        let path = wt.path.with_file_name(name);
        let scratch = Worktree {
            branch: wt.branch.clone(),
            base_commit: wt.base_commit.clone(),
            ..add_detached(&self.root, &path, commit).await?
        };
        self.seal(&scratch).await?;
        Ok(scratch)
    }

    async fn remove_scratch(&self, scratch: &Worktree) -> Result<(), WorkspaceError> {
        remove_detached(&self.root, &scratch.path).await
    }

    async fn pull_head(&self, branch: &str) -> Result<Option<String>, WorkspaceError> {
        revision::fetch_branch(&self.root, &self.remote, self.token.as_ref(), branch).await;
        revision::branch_head(&self.root, &self.remote, branch)
    }

    async fn last_own_commit(
        &self,
        commit: &str,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, WorkspaceError> {
        let (root, commit) = (self.root.clone(), commit.to_owned());
        repo::blocking("reading ralph's commits", move || {
            revision::last_own_commit(&root, &commit)
        })
        .await
    }

    async fn revert_of(&self, base: &str, commit: &str) -> Result<Option<String>, WorkspaceError> {
        revision::fetch_branch(&self.root, &self.remote, self.token.as_ref(), base).await;
        let (root, remote) = (self.root.clone(), self.remote.clone());
        let (base, commit) = (base.to_owned(), commit.to_owned());
        repo::blocking("looking for a revert", move || {
            revision::revert_of(&root, &remote, &base, &commit)
        })
        .await
    }

    async fn revision_worktree(
        &self,
        name: &str,
        branch: &str,
        commit: &str,
    ) -> Result<Worktree, WorkspaceError> {
        let wt =
            revision::revision_worktree(&self.root, &self.checkouts, name, branch, commit).await?;
        self.seal(&wt).await?;
        Ok(wt)
    }

    async fn abandon(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        let (root, wt) = (self.root.clone(), wt.clone());
        repo::blocking("removing the worktree and its branch", move || {
            git::abandon(&root, &wt)
        })
        .await
    }

    async fn head(&self, wt: &Worktree) -> Result<String, WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("reading the worktree's commit", move || git::head(&wt)).await
    }

    async fn tree(&self, wt: &Worktree) -> Result<String, WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("reading the worktree's tree", move || git::tree(&wt)).await
    }

    async fn diff(&self, wt: &Worktree) -> Result<DiffStats, WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("the diff analysis", move || analyse(&wt)).await
    }

    async fn patch_text(&self, wt: &Worktree, limit: usize) -> Result<String, WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("the diff", move || patch_text(&wt, limit)).await
    }

    async fn commit(&self, wt: &Worktree, info: &CommitInfo<'_>) -> Result<String, WorkspaceError> {
        let seal = self.seal_of(wt).await?;
        commit(wt, info, &seal).await
    }

    async fn push(&self, wt: &Worktree, token: Option<&GitToken>) -> Result<(), WorkspaceError> {
        push(&self.root, wt, &self.remote, token).await
    }

    async fn snapshot(&self, wt: &Worktree) -> Result<Snapshot, WorkspaceError> {
        guard::snapshot_async(&self.root, wt).await
    }

    async fn restore_changes(
        &self,
        wt: &Worktree,
        before: &Snapshot,
    ) -> Result<Vec<String>, WorkspaceError> {
        guard::check_and_restore(&self.root, wt, before).await
    }

    async fn seal_changes(&self, wt: &Worktree) -> Result<Vec<String>, WorkspaceError> {
        let seal = self.seal_of(wt).await?;
        seal::check_async(&seal, &wt.path).await
    }

    async fn base_text(&self, wt: &Worktree, path: &str) -> Result<Option<String>, WorkspaceError> {
        let (wt, path) = (wt.clone(), path.to_owned());
        repo::blocking("reading a file of the base", move || {
            let repo = repo::open_checkout(&wt)?;
            let text = git2::Oid::from_str(&wt.base_commit)
                .and_then(|oid| repo.find_commit(oid))
                .and_then(|c| c.tree())
                .and_then(|t| t.get_path(std::path::Path::new(&path)))
                .and_then(|e| e.to_object(&repo))
                .ok()
                .and_then(|o| o.as_blob().map(|b| b.content().to_vec()))
                .and_then(|bytes| String::from_utf8(bytes).ok());
            Ok(text)
        })
        .await
    }

    async fn tidy(&self, wt: &Worktree, before: &Snapshot) -> Result<Vec<String>, WorkspaceError> {
        let (wt, before) = (wt.clone(), before.clone());
        repo::blocking("tidying the worktree", move || {
            guard::restore_files(&wt, &before)
        })
        .await
    }

    async fn left_out(&self, wt: &Worktree) -> Result<Vec<String>, WorkspaceError> {
        let wt = wt.clone();
        repo::blocking("listing by-products", move || {
            let repo = repo::open_checkout(&wt)?;
            Ok(git::untracked_byproducts(&repo)?.into_iter().collect())
        })
        .await
    }
}

/// The branch slug of docs/specification.md §6: the title lower-cased, runs of anything but
/// `a-z0-9` turned into one `-`, trimmed of `-`, at most 30 characters.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(30);
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "issue".to_owned()
    } else {
        out
    }
}

/// `ralph/N-<slug>`.
pub fn branch_name(issue: u64, title: &str) -> String {
    format!("ralph/{issue}-{}", slug(title))
}

/// Why ralph will not start, or could not do its git work.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A preflight refusal: nothing was changed.
    #[error("{message}")]
    Refused { message: String, hint: String },
    #[error("git: {message}")]
    Git {
        message: String,
        #[source]
        source: Option<git2::Error>,
    },
    /// The repository's pre-commit hook rejected the commit.
    #[error("the pre-commit hook failed (exit {code}):\n{output}")]
    Hook { code: String, output: String },
    #[error("git push failed: {message}")]
    Push { message: String },
}

impl WorkspaceError {
    pub(crate) fn git(context: &str, e: git2::Error) -> WorkspaceError {
        WorkspaceError::Git {
            message: format!("{context}: {}", e.message()),
            source: Some(e),
        }
    }

    /// What the user can do about it, for refusals.
    pub fn hint(&self) -> Option<&str> {
        match self {
            WorkspaceError::Refused { hint, .. } => Some(hint),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_spec_rule() {
        assert_eq!(slug("Add a --verbose flag"), "add-a-verbose-flag");
        assert_eq!(
            slug("  Fix: crash on ÜTF-8 input!! "),
            "fix-crash-on-tf-8-input"
        );
        assert_eq!(
            slug("A very long title that goes on and on and on"),
            "a-very-long-title-that-goes-on"
        );
        assert_eq!(
            slug("exactly thirty characters here-x"),
            "exactly-thirty-characters-here"
        );
        assert_eq!(slug("日本語"), "issue");
        assert_eq!(branch_name(12, "Add option"), "ralph/12-add-option");
        for t in ["a/b", "x..y", "-lead", "trail-", "a\u{202e}b"] {
            let s = slug(t);
            assert!(s
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            assert!(
                !s.starts_with('-') && !s.ends_with('-') && s.len() <= 30,
                "{s}"
            );
        }
    }
}
