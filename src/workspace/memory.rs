//! A [`Workspace`] without git, for the competition's unit tests: the worktree is a plain
//! directory of files (so checks and the implementer really work in it), the base and the
//! branch's commits are file maps in memory, and every commit and push is recorded for the
//! test to look at. A diff compares the directory with the base, line by line.

use super::{
    branch_name, CommitInfo, DiffStats, FileChange, Preflight, PreflightOptions, Snapshot,
    Workspace, WorkspaceError, Worktree,
};
use crate::secret::GitToken;
use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

type Files = BTreeMap<String, String>;

/// The folder under the root that stands for the git directory ([`Workspace::seal_changes`]).
pub(crate) const FAKE_GIT_DIR: &str = ".fake-git";

/// What happened to the workspace, for assertions.
#[derive(Debug, Default, Clone)]
pub(crate) struct Record {
    /// Branches that exist (made by a run, or set up by the test).
    pub branches: BTreeSet<String>,
    /// Commit messages, oldest first.
    pub commits: Vec<String>,
    /// Branches pushed.
    pub pushed: Vec<String>,
    pub resets: u32,
    /// The worktree was removed.
    pub removed: bool,
}

#[derive(Debug, Default)]
struct Inner {
    /// The base branch's files.
    base: Files,
    /// The branch's files at its last commit.
    head: Option<Files>,
    /// Every commit's files, by id.
    commits: BTreeMap<String, Files>,
    /// The files of each scratch checkout's commit, by its path.
    scratches: BTreeMap<PathBuf, Files>,
    record: Record,
}

pub(crate) struct MemoryWorkspace {
    root: PathBuf,
    inner: Mutex<Inner>,
}

impl MemoryWorkspace {
    /// A workspace whose base branch holds `files`; worktrees go under `root`.
    pub fn new(root: &Path, files: &[(&str, &str)]) -> MemoryWorkspace {
        MemoryWorkspace {
            root: root.to_owned(),
            inner: Mutex::new(Inner {
                base: files
                    .iter()
                    .map(|(p, t)| (p.to_string(), t.to_string()))
                    .collect(),
                ..Inner::default()
            }),
        }
    }

    pub fn record(&self) -> Record {
        self.inner.lock().unwrap().record.clone()
    }

    fn worktree_path(&self, issue: u64) -> PathBuf {
        self.root.join(".ralph/worktrees").join(issue.to_string())
    }
}

fn io_error(what: &str, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("{what}: {e}"),
        source: None,
    }
}

/// Every file under `dir`, by relative path.
fn read_tree(dir: &Path) -> Result<Files, WorkspaceError> {
    let mut out = Files::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| io_error("reading the worktree", e))? {
            let path = entry
                .map_err(|e| io_error("reading the worktree", e))?
                .path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap_or(&path);
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                out.insert(rel.to_string_lossy().into_owned(), text);
            }
        }
    }
    Ok(out)
}

/// `files` without the by-products the base does not have: what a commit takes.
fn committable(files: Files, base: &Files) -> Files {
    files
        .into_iter()
        .filter(|(p, _)| base.contains_key(p) || !super::byproducts::is_byproduct(p))
        .collect()
}

/// Replaces everything under `dir` with `files`.
fn write_tree(dir: &Path, files: &Files) -> Result<(), WorkspaceError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| io_error("clearing the worktree", e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| io_error("making the worktree", e))?;
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error("writing a file", e))?;
        }
        std::fs::write(&path, text).map_err(|e| io_error("writing a file", e))?;
    }
    Ok(())
}

/// The change from `base` to `now`, line by line (a line counts as removed when it is no
/// longer there, added when it is new).
fn diff(base: &Files, now: &Files) -> DiffStats {
    let mut stats = DiffStats::default();
    let paths: BTreeSet<&String> = base.keys().chain(now.keys()).collect();
    for path in paths {
        let (old, new) = (base.get(path), now.get(path));
        if old == new {
            continue;
        }
        let old_lines: Vec<&str> = old.map(|t| t.lines().collect()).unwrap_or_default();
        let new_lines: Vec<&str> = new.map(|t| t.lines().collect()).unwrap_or_default();
        let added: Vec<String> = new_lines
            .iter()
            .filter(|l| !old_lines.contains(l))
            .map(|l| l.to_string())
            .collect();
        let removed: Vec<String> = old_lines
            .iter()
            .filter(|l| !new_lines.contains(l))
            .map(|l| l.to_string())
            .collect();
        stats.lines_added += added.len() as u64;
        stats.lines_removed += removed.len() as u64;
        stats.files.push(FileChange {
            path: path.clone(),
            status: match (old, new) {
                (None, _) => "added",
                (_, None) => "deleted",
                _ => "modified",
            },
            added: added.len() as u64,
            removed: removed.len() as u64,
            added_lines: added,
            removed_lines: removed,
        });
    }
    stats
}

#[async_trait]
impl Workspace for MemoryWorkspace {
    async fn preflight(&self, opts: &PreflightOptions<'_>) -> Result<Preflight, WorkspaceError> {
        let branch = branch_name(opts.issue, opts.title);
        if !opts.resume && self.inner.lock().unwrap().record.branches.contains(&branch) {
            return Err(WorkspaceError::Refused {
                message: format!("the branch `{branch}` already exists"),
                hint: super::preflight::exists_hint(opts.issue),
            });
        }
        Ok(Preflight {
            root: self.root.clone(),
            issue: opts.issue,
            base: opts
                .base
                .or(opts.default_branch)
                .unwrap_or("main")
                .to_owned(),
            base_from: "memory".into(),
            branch,
            has_remote: true,
        })
    }

    async fn create_worktree(&self, pre: &Preflight) -> Result<Worktree, WorkspaceError> {
        let path = self.worktree_path(pre.issue);
        let mut inner = self.inner.lock().unwrap();
        inner.record.branches.insert(pre.branch.clone());
        if !path.is_dir() {
            let files = inner.head.clone().unwrap_or_else(|| inner.base.clone());
            write_tree(&path, &files)?;
        }
        Ok(Worktree {
            git_dir: path.join(".git"),
            path,
            branch: pre.branch.clone(),
            base_commit: "base".into(),
        })
    }

    async fn create_scratch(
        &self,
        wt: &Worktree,
        name: &str,
        commit: &str,
    ) -> Result<Worktree, WorkspaceError> {
        let path = wt.path.with_file_name(name);
        let mut inner = self.inner.lock().unwrap();
        let files = if commit == "base" {
            inner.base.clone()
        } else {
            inner
                .commits
                .get(commit)
                .cloned()
                .ok_or_else(|| WorkspaceError::Git {
                    message: format!("no commit {commit}"),
                    source: None,
                })?
        };
        write_tree(&path, &files)?;
        inner.scratches.insert(path.clone(), files);
        Ok(Worktree {
            git_dir: path.join(".git"),
            path,
            branch: wt.branch.clone(),
            base_commit: wt.base_commit.clone(),
        })
    }

    async fn remove_scratch(&self, scratch: &Worktree) -> Result<(), WorkspaceError> {
        self.inner.lock().unwrap().scratches.remove(&scratch.path);
        std::fs::remove_dir_all(&scratch.path).map_err(|e| io_error("removing a checkout", e))
    }

    async fn reset_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        let mut inner = self.inner.lock().unwrap();
        inner.record.resets += 1;
        let files = match inner.scratches.get(&wt.path) {
            Some(files) => files.clone(),
            None => inner.head.clone().unwrap_or_else(|| inner.base.clone()),
        };
        write_tree(&wt.path, &files)
    }

    async fn remove_worktree(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        std::fs::remove_dir_all(&wt.path).map_err(|e| io_error("removing the worktree", e))?;
        self.inner.lock().unwrap().record.removed = true;
        Ok(())
    }

    async fn abandon(&self, wt: &Worktree) -> Result<(), WorkspaceError> {
        self.remove_worktree(wt).await?;
        self.inner
            .lock()
            .unwrap()
            .record
            .branches
            .remove(&wt.branch);
        Ok(())
    }

    async fn head(&self, _wt: &Worktree) -> Result<String, WorkspaceError> {
        let n = self.inner.lock().unwrap().record.commits.len();
        Ok(if n == 0 {
            "base".to_owned()
        } else {
            format!("{n:040x}")
        })
    }

    async fn diff(&self, wt: &Worktree) -> Result<DiffStats, WorkspaceError> {
        let base = self.inner.lock().unwrap().base.clone();
        let now = committable(read_tree(&wt.path)?, &base);
        Ok(diff(&base, &now))
    }

    async fn patch_text(&self, wt: &Worktree, limit: usize) -> Result<String, WorkspaceError> {
        let stats = self.diff(wt).await?;
        let mut text = String::new();
        for f in &stats.files {
            text.push_str(&format!("--- a/{0}\n+++ b/{0}\n", f.path));
            for l in &f.removed_lines {
                text.push_str(&format!("-{l}\n"));
            }
            for l in &f.added_lines {
                text.push_str(&format!("+{l}\n"));
            }
        }
        text.truncate(limit);
        Ok(text)
    }

    async fn commit(&self, wt: &Worktree, info: &CommitInfo<'_>) -> Result<String, WorkspaceError> {
        let mut inner = self.inner.lock().unwrap();
        let now = committable(read_tree(&wt.path)?, &inner.base);
        let id = format!("{:040x}", inner.record.commits.len() + 1);
        inner.commits.insert(id.clone(), now.clone());
        inner.head = Some(now);
        inner.record.commits.push(format!(
            "{}\n\nRalph-Bot: {}\nRalph-Run: {}\n",
            info.message.trim_end(),
            info.bot,
            info.run_id
        ));
        Ok(id)
    }

    async fn snapshot(&self, wt: &Worktree) -> Result<Snapshot, WorkspaceError> {
        Ok(Snapshot {
            head: String::new(),
            detached: false,
            files: read_tree(&wt.path)?
                .into_iter()
                .map(|(p, t)| (p, Some(crate::untrusted_dir::Node::file(t))))
                .collect(),
            refs: BTreeMap::new(),
            worktrees: BTreeSet::new(),
        })
    }

    /// The fake's git directory is `<root>/.fake-git`: every file a test's agent writes there
    /// is a change, named and removed.
    async fn seal_changes(&self, _wt: &Worktree) -> Result<Vec<String>, WorkspaceError> {
        let dir = self.root.join(FAKE_GIT_DIR);
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let files = read_tree(&dir)?;
        std::fs::remove_dir_all(&dir).map_err(|e| io_error("restoring the git directory", e))?;
        Ok(files
            .keys()
            .map(|name| format!(".git/{name} was added"))
            .collect())
    }

    async fn base_text(
        &self,
        _wt: &Worktree,
        path: &str,
    ) -> Result<Option<String>, WorkspaceError> {
        Ok(self.inner.lock().unwrap().base.get(path).cloned())
    }

    /// The fake's by-products: files under the worktree that look like one.
    async fn left_out(&self, wt: &Worktree) -> Result<Vec<String>, WorkspaceError> {
        Ok(read_tree(&wt.path)?
            .into_keys()
            .filter(|p| super::byproducts::is_byproduct(p))
            .collect())
    }

    async fn tidy(&self, wt: &Worktree, before: &Snapshot) -> Result<Vec<String>, WorkspaceError> {
        self.restore_changes(wt, before).await
    }

    async fn restore_changes(
        &self,
        wt: &Worktree,
        before: &Snapshot,
    ) -> Result<Vec<String>, WorkspaceError> {
        let now = self.snapshot(wt).await?;
        let changes = super::guard::differences(before, &now);
        if !changes.is_empty() {
            let files: Files = before
                .files
                .iter()
                .filter_map(|(p, node)| match node {
                    Some(crate::untrusted_dir::Node::File { bytes, .. }) => {
                        Some((p.clone(), String::from_utf8_lossy(bytes).into_owned()))
                    }
                    _ => None,
                })
                .collect();
            write_tree(&wt.path, &files)?;
        }
        Ok(changes)
    }

    async fn push(&self, wt: &Worktree, _token: Option<&GitToken>) -> Result<(), WorkspaceError> {
        self.inner
            .lock()
            .unwrap()
            .record
            .pushed
            .push(wt.branch.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_worktree_starts_at_the_base_and_keeps_commits_over_resets() {
        let dir = tempfile::tempdir().unwrap();
        let ws = MemoryWorkspace::new(dir.path(), &[("lib.sh", "add() { :; }\n")]);
        let pre = ws
            .preflight(&PreflightOptions {
                issue: 3,
                title: "Add greet",
                base: None,
                default_branch: None,
                resume: false,
            })
            .await
            .unwrap();
        assert_eq!(pre.branch, "ralph/3-add-greet");
        let wt = ws.create_worktree(&pre).await.unwrap();
        std::fs::write(wt.path.join("lib.sh"), "add() { :; }\ngreet() { :; }\n").unwrap();
        let d = ws.diff(&wt).await.unwrap();
        assert_eq!(
            (d.lines_added, d.lines_removed, d.files_affected()),
            (1, 0, 1)
        );
        let info = CommitInfo {
            message: "greet",
            author_name: "ralph",
            author_email: "r@x",
            bot: "b",
            run_id: "r",
        };
        ws.commit(&wt, &info).await.unwrap();
        std::fs::write(wt.path.join("junk"), "x").unwrap();
        ws.reset_worktree(&wt).await.unwrap();
        assert!(!wt.path.join("junk").exists());
        assert_eq!(
            ws.diff(&wt).await.unwrap().lines_added,
            1,
            "the commit stays"
        );
        let refused = ws
            .preflight(&PreflightOptions {
                issue: 3,
                title: "Add greet",
                base: None,
                default_branch: None,
                resume: false,
            })
            .await;
        assert!(matches!(refused, Err(WorkspaceError::Refused { .. })));
    }
}
