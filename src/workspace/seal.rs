//! The seal on the repository's git directory, taken when a run's worktree is made, before any
//! agent runs: the files that decide what git runs and where it goes — the common git dir's
//! `config`, `hooks/`, `info/` and object alternates, ralph's registration of the checkout
//! (`commondir`, `gitdir`, `HEAD`, `config.worktree` in its folder under `.git/worktrees/`),
//! the user's global git configuration, and a hooks folder `core.hooksPath` names outside the
//! worktree. The checkout's own `.git` is not sealed: it is the checks' to write, and ralph
//! never reads it (see `own_git`). References are not sealed: the sandbox keeps them read-only, the read-only phases'
//! guard watches them, and restoring one would undo the user's own commits in their checkout.
//!
//! After each agent and each check ralph compares the git directory with the seal, restores what
//! changed and names every change, so that it counts against whoever made it. The repository's
//! hooks as sealed are the only ones ralph ever runs (the pre-commit hook of its commit, from a
//! fresh copy of the sealed bytes); every `git` program ralph starts runs no hook at all.

use super::repo::{blocking, open};
use super::{WorkspaceError, Worktree};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most files one watched folder (a hooks folder) may hold before the rest is not sealed.
const MAX_FILES: usize = 2_000;

/// The most bytes one sealed file may hold (hooks and configs are small).
const MAX_BYTES: u64 = 4 << 20;

/// A file as sealed: its bytes and permission bits, or where a symlink pointed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File { bytes: Vec<u8>, mode: u32 },
    Link(PathBuf),
    Folder,
}

/// What the git directory looked like before any agent ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitSeal {
    /// Watched paths and what they were (`None`: absent).
    files: BTreeMap<PathBuf, Option<Entry>>,
    /// Folders watched whole: a file added under one is a change.
    folders: Vec<PathBuf>,
    /// The hooks folder git would run hooks from, as sealed: path inside it → entry.
    pub(crate) hooks: BTreeMap<PathBuf, Entry>,
    /// The common git dir.
    pub(crate) common: PathBuf,
}

fn read_entry(path: &Path) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return Some(Entry::Link(std::fs::read_link(path).unwrap_or_default()));
    }
    if meta.is_dir() {
        return Some(Entry::Folder);
    }
    let bytes = if meta.len() > MAX_BYTES {
        // Too big to keep: its size and time stand for it.
        format!("{} bytes, modified {:?}", meta.len(), meta.modified().ok()).into_bytes()
    } else {
        // Never blocking on a FIFO planted in its place, never through a link swapped in.
        match crate::fsutil::read_regular(path, MAX_BYTES) {
            Ok(bytes) => bytes,
            Err(crate::fsutil::Unreadable::Missing) => return None,
            Err(e) => format!("({e})").into_bytes(),
        }
    };
    Some(Entry::File {
        bytes,
        mode: mode_of(&meta),
    })
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> u32 {
    0o644
}

/// Every path under `dir` (not following symlinks), bounded.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if out.len() >= MAX_FILES {
            return;
        }
        let path = e.path();
        out.push(path.clone());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, out);
        }
    }
}

/// The global git configuration files of the user.
fn global_configs() -> Vec<PathBuf> {
    let home = crate::env::non_empty("HOME").map(PathBuf::from);
    let xdg = crate::env::non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    home.map(|h| h.join(".gitconfig"))
        .into_iter()
        .chain(xdg.map(|x| x.join("git/config")))
        .collect()
}

/// Seals the git directory of the repository at `root` for the worktree `wt`.
pub fn take(root: &Path, wt: &Worktree) -> Result<GitSeal, WorkspaceError> {
    let repo = open(root)?;
    let common = repo.commondir().to_owned();
    let mut watched: Vec<PathBuf> = vec![
        common.join("config"),
        common.join("objects/info/alternates"),
    ];
    let mut folders = vec![common.join("hooks"), common.join("info")];
    for name in ["commondir", "gitdir", "HEAD", "config.worktree"] {
        watched.push(wt.git_dir.join(name));
    }
    watched.extend(global_configs());
    // Hooks run from `core.hooksPath` when it is set: relative to the worktree they run in.
    let hooks_dir = match repo
        .config()
        .ok()
        .and_then(|c| c.get_path("core.hooksPath").ok())
    {
        Some(p) if p.is_absolute() => p,
        Some(p) => wt.path.join(p),
        None => common.join("hooks"),
    };
    // A hooks folder inside the worktree is the change's own files; one elsewhere is sealed.
    if !hooks_dir.starts_with(&wt.path) && !folders.contains(&hooks_dir) {
        folders.push(hooks_dir.clone());
    }
    for f in &folders {
        watched.push(f.clone());
        walk(f, &mut watched);
    }
    let files = watched
        .into_iter()
        .map(|p| {
            let e = read_entry(&p);
            (p, e)
        })
        .collect();
    let mut hook_paths = Vec::new();
    walk(&hooks_dir, &mut hook_paths);
    let hooks = hook_paths
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&hooks_dir).ok()?.to_owned();
            Some((rel, read_entry(&p)?))
        })
        .collect();
    Ok(GitSeal {
        files,
        folders,
        hooks,
        common,
    })
}

impl GitSeal {
    /// `path` as a message names it: relative to the common git dir's parent when inside it.
    fn name(&self, path: &Path) -> String {
        let base = self.common.parent().unwrap_or(&self.common);
        path.strip_prefix(base)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| path.display().to_string())
    }

    /// What differs from the seal now among the paths `watched` keeps, one line per change,
    /// each with the path it concerns.
    fn differences(&self, watched: &dyn Fn(&Path) -> bool) -> Vec<(String, Fix)> {
        let mut out = Vec::new();
        for (path, sealed) in self.files.iter().filter(|(p, _)| watched(p)) {
            let now = read_entry(path);
            if &now != sealed {
                let what = match (sealed, &now) {
                    (None, _) => "was added",
                    (Some(_), None) => "was removed",
                    (Some(Entry::File { bytes: a, .. }), Some(Entry::File { bytes: b, .. }))
                        if a == b =>
                    {
                        "had its permissions changed"
                    }
                    _ => "was changed",
                };
                out.push((
                    format!("{} {what}", self.name(path)),
                    Fix::Put(path.clone(), sealed.clone()),
                ));
            }
        }
        let mut now = Vec::new();
        for f in self.folders.iter().filter(|f| watched(f)) {
            walk(f, &mut now);
        }
        for path in now {
            if !self.files.contains_key(&path) {
                out.push((
                    format!("{} was added", self.name(&path)),
                    Fix::Put(path, None),
                ));
            }
        }
        out
    }
}

/// How one change is undone: the path as sealed (`None`: remove it).
enum Fix {
    Put(PathBuf, Option<Entry>),
}

fn io_err(path: &Path, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("restoring {}: {e}", path.display()),
        source: None,
    }
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes `entry` at `path`, replacing whatever is there.
pub(crate) fn put(path: &Path, entry: &Entry) -> std::io::Result<()> {
    match entry {
        Entry::Folder => {
            if !path.is_dir() || std::fs::symlink_metadata(path)?.file_type().is_symlink() {
                remove(path)?;
            }
            std::fs::create_dir_all(path)
        }
        Entry::Link(target) => {
            remove(path)?;
            #[cfg(unix)]
            return std::os::unix::fs::symlink(target, path);
            #[cfg(not(unix))]
            return std::fs::write(path, target.display().to_string());
        }
        Entry::File { bytes, mode } => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
                remove(path)?;
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, bytes)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))?;
            }
            #[cfg(not(unix))]
            let _ = mode;
            Ok(())
        }
    }
}

/// Compares the git directory with `seal`, restores every change and names each one — of the
/// paths `watched` keeps: those a confined process could have written (see
/// [`could_write`](crate::process::sandbox::Sandbox::could_write)); a change to any other was
/// the user's or another program's, and is theirs to keep.
pub fn check_and_restore(
    seal: &GitSeal,
    watched: &dyn Fn(&Path) -> bool,
) -> Result<Vec<String>, WorkspaceError> {
    let changes = seal.differences(watched);
    for (_, Fix::Put(path, entry)) in &changes {
        match entry {
            Some(entry) => put(path, entry),
            None => remove(path),
        }
        .map_err(|e| io_err(path, e))?;
    }
    Ok(changes.into_iter().map(|(what, _)| what).collect())
}

/// [`take`] off the async runtime.
pub async fn take_async(root: &Path, wt: &Worktree) -> Result<GitSeal, WorkspaceError> {
    let (root, wt) = (root.to_owned(), wt.clone());
    blocking("sealing the git directory", move || take(&root, &wt)).await
}

/// [`check_and_restore`] off the async runtime, watching what a process confined by the
/// installed sandbox could have written, working in `workdir`.
pub async fn check_async(seal: &GitSeal, workdir: &Path) -> Result<Vec<String>, WorkspaceError> {
    let (seal, workdir) = (seal.clone(), workdir.to_owned());
    let sandbox = crate::process::sandbox::current();
    blocking("checking the git directory", move || {
        check_and_restore(&seal, &|p: &Path| {
            sandbox
                .as_ref()
                .is_none_or(|sb| sb.could_write(p, &workdir))
        })
    })
    .await
}

/// A fresh private copy of the sealed hooks, to run one from: the bytes as sealed, whatever the
/// hooks folder holds now.
pub fn hooks_copy(seal: &GitSeal) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("ralph-hooks-").tempdir()?;
    // Folders first, so that files land in them.
    let mut entries: Vec<(&PathBuf, &Entry)> = seal.hooks.iter().collect();
    entries.sort_by_key(|(p, e)| (!matches!(e, Entry::Folder), p.components().count()));
    for (rel, entry) in entries {
        put(&dir.path().join(rel), entry)?;
    }
    Ok(dir)
}
