//! Where ralph's checkouts live: outside the repository, so that no tool that searches parent
//! folders for its settings (ESLint, Prettier, ruff, pytest's `conftest.py`, `tsconfig`
//! `extends`, Cargo's workspace) finds the user's checkout above it, as none would above a CI
//! checkout. Each repository has a folder of its own, `<root>/<name>-<hash>`, and each checkout
//! a folder in it named as before (`12`, `12-read`, `12-audit`, `pr-34`, `ralph-refine-5`,
//! `ledger`). The root is `[workspace] root`, else the per-user state folder
//! (`$XDG_STATE_HOME/ralph/checkouts`, `~/.local/state/ralph/checkouts`), or, in an Actions
//! job, its `$RUNNER_TEMP/ralph/checkouts`, which the runner empties after the job.
//!
//! Also the one-time clean-up of the checkouts earlier versions made inside the repository,
//! under `.ralph/worktrees/`.

use super::repo::{blocking, open, refuse};
use super::WorkspaceError;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Where checkouts were made inside the repository before they moved out of it.
pub const LEGACY_DIR: &str = ".ralph/worktrees";

/// The root of every repository's checkouts when `[workspace] root` is unset: the Actions job's
/// temporary folder, else the per-user state folder; `None` without a home folder.
pub fn default_root() -> Option<PathBuf> {
    let absolute = |var: &str| {
        crate::env::non_empty(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let actions = [
        crate::env::GITHUB_ACTIONS,
        crate::env::FORGEJO_ACTIONS,
        crate::env::GITEA_ACTIONS,
    ]
    .iter()
    .any(|v| crate::env::get(v).as_deref() == Some("true"));
    let state = absolute(crate::env::XDG_STATE_HOME)
        .or_else(|| absolute(crate::env::HOME).map(|h| h.join(".local/state")));
    let base = match absolute(crate::env::RUNNER_TEMP) {
        Some(temp) if actions => temp,
        _ => state?,
    };
    Some(base.join("ralph").join("checkouts"))
}

/// The folder name of the repository at `repo_root` under the root: its folder's name (made
/// safe, shortened) and a hash of its path, so that two clones of one project never share one.
fn repository_folder(repo_root: &Path) -> String {
    let name: String = repo_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    let mut hash = crate::mix::Fnv1a::default();
    hash.eat(repo_root.as_os_str().as_encoded_bytes());
    let name = if name.is_empty() { "repository" } else { name };
    format!("{name}-{:016x}", hash.finish())
}

/// The folder of the checkouts of the repository at `repo_root`: `<root>/<name>-<hash>`, the
/// root being `configured` (`[workspace] root`) or [`default_root`]. Refused when there is no
/// root, or when the root lies inside the repository (the tools would find its files again).
pub fn checkouts_dir(
    repo_root: &Path,
    configured: Option<&Path>,
) -> Result<PathBuf, WorkspaceError> {
    let repo_root = repo_root
        .canonicalize()
        .unwrap_or_else(|_| repo_root.to_owned());
    let root = match configured {
        Some(r) => r.to_owned(),
        None => default_root().ok_or_else(|| {
            refuse(
                "there is no home folder (HOME is unset) to keep ralph's checkouts in",
                "set `[workspace] root` in .ralph/config.toml to a folder outside the repository",
            )
        })?,
    };
    let real = resolved(&root);
    if real.starts_with(&repo_root) {
        let what = match configured {
            Some(_) => "`[workspace] root`",
            None => "the folder of ralph's checkouts",
        };
        return Err(refuse(
            format!(
                "{what} ({}) is inside the repository: tools that search parent folders for their settings would find the repository's files above the checkout",
                root.display()
            ),
            "set `[workspace] root` in .ralph/config.toml to a folder outside the repository",
        ));
    }
    Ok(real.join(repository_folder(&repo_root)))
}

/// `path` with its longest existing part resolved (links, `..`): the same folder names the same
/// path whether it exists yet or not.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_owned(),
        }
    }
}

/// The common git dir of the repository at `root` (its `.git`, or the main one of a linked
/// worktree's).
pub fn common_dir(root: &Path) -> Option<PathBuf> {
    git2::Repository::open(root)
        .ok()
        .map(|r| r.commondir().to_owned())
}

/// What a clean-up of checkouts did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retired {
    /// The checkouts removed (`.ralph/worktrees/3`), with their registrations.
    pub removed: Vec<String>,
    /// The checkouts left, each with why.
    pub kept: Vec<String>,
}

/// Removes the checkouts earlier versions made under `.ralph/worktrees/` with their `git
/// worktree` registrations — their branches stay —, and the folder once it is empty. A checkout
/// whose label `busy` names (a run of an earlier version still working in it) or that holds
/// uncommitted work is left, and said. Nothing is followed: a link is removed as a link.
pub async fn retire_legacy(
    repo_root: &Path,
    busy: &dyn Fn(&str) -> bool,
) -> Result<Retired, WorkspaceError> {
    sweep(
        repo_root,
        &repo_root.join(LEGACY_DIR),
        LEGACY_DIR,
        busy,
        true,
    )
    .await
}

/// Removes every checkout in `checkouts` (the repository's folder, see [`checkouts_dir`]) with
/// its registration — their branches stay —, but those whose label `busy` names (a run still
/// working in it); `ralph reset`.
pub async fn remove_checkouts(
    repo_root: &Path,
    checkouts: &Path,
    busy: &dyn Fn(&str) -> bool,
) -> Result<Retired, WorkspaceError> {
    let shown = checkouts.display().to_string();
    sweep(repo_root, checkouts, &shown, busy, false).await
}

/// Removes the checkouts in `dir` (shown as `shown` in what it says) and their registrations,
/// leaving those `busy` names and, with `keep_work`, those holding uncommitted work; then `dir`
/// itself when it is empty.
async fn sweep(
    repo_root: &Path,
    dir: &Path,
    shown: &str,
    busy: &dyn Fn(&str) -> bool,
    keep_work: bool,
) -> Result<Retired, WorkspaceError> {
    let labels: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => return Ok(Retired::default()),
    };
    let busy: Vec<String> = labels.into_iter().filter(|l| busy(l)).collect();
    let (root, dir, shown) = (repo_root.to_owned(), dir.to_owned(), shown.to_owned());
    blocking("removing checkouts", move || {
        sweep_in(&root, &dir, &shown, &busy, keep_work)
    })
    .await
}

/// The blocking half of [`sweep`].
fn sweep_in(
    root: &Path,
    dir: &Path,
    shown: &str,
    busy: &[String],
    keep_work: bool,
) -> Result<Retired, WorkspaceError> {
    let repo = open(root)?;
    let mut done = Retired::default();
    let mut left: Vec<String> = busy.to_vec();
    for label in busy {
        done.kept
            .push(format!("{shown}/{label}: a run is still working in it"));
    }
    for (_, w) in registrations(&repo)? {
        let path = w.path().to_owned();
        let label = path_label(dir, &path);
        if !path.starts_with(dir) || left.contains(&label) {
            continue;
        }
        if keep_work && holds_work(&w) {
            done.kept.push(format!(
                "{shown}/{label}: it holds uncommitted changes (`git worktree remove --force {}` once you have kept what you need)",
                path.display()
            ));
            left.push(label);
            continue;
        }
        let _ = remove_path(&path);
        forget(&w)?;
        done.removed.push(format!("{shown}/{label}"));
    }
    // Folders no registration names (a run killed while making one) go too.
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let label = entry.file_name().to_string_lossy().into_owned();
        if left.contains(&label) {
            continue;
        }
        let _ = remove_path(&entry.path());
        let named = format!("{shown}/{label}");
        if !done.removed.contains(&named) {
            done.removed.push(named);
        }
    }
    // Gone once empty; while something was left, it stays.
    let _ = std::fs::remove_dir(dir);
    done.removed.sort();
    Ok(done)
}

/// The repository's worktree registrations, by name.
pub(super) fn registrations(
    repo: &git2::Repository,
) -> Result<Vec<(String, git2::Worktree)>, WorkspaceError> {
    let names = repo
        .worktrees()
        .map_err(|e| WorkspaceError::git("listing worktrees", e))?;
    Ok(names
        .iter()
        .flatten()
        .filter_map(|n| Some((n.to_owned(), repo.find_worktree(n).ok()?)))
        .collect())
}

/// Forgets the registration `w` (its folder is the caller's to remove).
pub(super) fn forget(w: &git2::Worktree) -> Result<(), WorkspaceError> {
    let mut prune = git2::WorktreePruneOptions::new();
    prune.valid(true).working_tree(false);
    w.prune(Some(&mut prune))
        .map_err(|e| WorkspaceError::git("forgetting a checkout", e))
}

/// The first name of `path` under `dir` (`3` for `.ralph/worktrees/3`).
pub(super) fn path_label(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .ok()
        .and_then(|p| p.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Removes `path` whole; a link is removed, never followed. Nothing to do when it is not there.
pub(super) fn remove_path(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// An exclusive lock on the worktree registrations of the repository at `root`, held while
/// ralph adds or removes one, across processes: git reads every registration when it adds a
/// worktree, and one that another ralph process is writing that moment — its `commondir` not
/// there yet — fails the add ("failed to read .git/worktrees/3-read/commondir"), as two
/// competitions at once found. A file in the common git dir, which no agent or check can write;
/// released when dropped. Blocks: call it off the async runtime.
pub(super) fn lock_registrations(root: &Path) -> Result<File, WorkspaceError> {
    let fail = |e: std::io::Error| WorkspaceError::Git {
        message: format!("cannot lock the repository's worktree registrations: {e}"),
        source: None,
    };
    let common = common_dir(root).unwrap_or_else(|| root.join(".git"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(common.join("ralph-worktrees.lock"))
        .map_err(fail)?;
    file.lock().map_err(fail)?;
    Ok(file)
}

/// Makes room for a checkout at `path`: whatever is there removed ([`remove_path`]), the
/// folders above it made.
pub(super) fn make_room(path: &Path) -> Result<(), WorkspaceError> {
    let fail = |what: &str, e: std::io::Error| WorkspaceError::Git {
        message: format!("cannot {what} {}: {e}", path.display()),
        source: None,
    };
    remove_path(path).map_err(|e| fail("clear", e))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| fail("create the folder of", e))?;
    }
    Ok(())
}

/// Whether the linked worktree `w` holds changes that are in no commit (its by-products and
/// ignored files aside).
fn holds_work(w: &git2::Worktree) -> bool {
    let Ok(repo) = git2::Repository::open_from_worktree(w) else {
        return false;
    };
    let Ok(statuses) = super::repo::statuses(&repo, true) else {
        return true;
    };
    statuses.iter().any(|s| {
        !(s.status() == git2::Status::WT_NEW
            && s.path().is_some_and(super::byproducts::is_byproduct))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repository_has_a_folder_of_its_own_under_the_root() {
        let a = repository_folder(Path::new("/home/u/src/my project"));
        let b = repository_folder(Path::new("/home/u/other/my project"));
        assert!(
            a.starts_with("my-project-") && a.len() == "my-project-".len() + 16,
            "{a}"
        );
        assert_ne!(a, b, "two clones of one project");
        assert!(repository_folder(Path::new("/")).starts_with("repository-"));
        assert!(repository_folder(Path::new("/x/.hidden")).starts_with("hidden-"));
    }

    #[test]
    fn a_root_inside_the_repository_is_refused() {
        let repo = tempfile::tempdir().unwrap();
        let inside = repo.path().join(".ralph/checkouts");
        match checkouts_dir(repo.path(), Some(&inside)) {
            Err(WorkspaceError::Refused { message, hint }) => {
                assert!(message.contains("inside the repository"), "{message}");
                assert!(hint.contains("[workspace] root"), "{hint}");
            }
            other => panic!("expected a refusal: {other:?}"),
        }
        let outside = tempfile::tempdir().unwrap();
        let dir = checkouts_dir(repo.path(), Some(outside.path())).unwrap();
        assert_eq!(
            dir.parent(),
            Some(outside.path().canonicalize().unwrap().as_path())
        );
    }
}
