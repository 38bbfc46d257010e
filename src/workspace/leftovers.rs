//! What a run on one issue leaves in the repository once it is over, or gone with a crash: its
//! branch (`ralph/N-…`) and its checkouts (`N`, `N-read`, `N-audit`) with their registrations;
//! and their removal (`ralph reset --issue N`). git's own commands cannot remove them: the
//! branch is checked out in ralph's registration of the checkout (`git branch -D` refuses), and
//! the checkout has a git directory of its own (`git worktree remove` refuses it).

use super::checkout::{forget, path_label, registrations, remove_path};
use super::repo::{blocking, open};
use super::WorkspaceError;
use git2::BranchType;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one issue's runs left.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Leftover {
    pub issue: u64,
    /// Local branches `ralph/N-…`.
    pub branches: Vec<String>,
    /// Checkouts (`<checkouts>/N`, `N-read`…), by path.
    pub checkouts: Vec<PathBuf>,
}

/// The issue a checkout's label names: `12`, `12-read`, `12-audit`.
fn issue_of_label(label: &str) -> Option<u64> {
    label.split('-').next()?.parse().ok()
}

/// The issue a branch of ralph's names: `ralph/12-add-greet`.
fn issue_of_branch(branch: &str) -> Option<u64> {
    issue_of_label(branch.strip_prefix("ralph/")?)
}

/// Every issue's leftovers in the repository at `root` and its checkouts folder `dir`, by issue.
pub fn leftovers(root: &Path, dir: &Path) -> Result<Vec<Leftover>, WorkspaceError> {
    let repo = open(root)?;
    let mut by_issue: BTreeMap<u64, Leftover> = BTreeMap::new();
    fn of(by_issue: &mut BTreeMap<u64, Leftover>, issue: u64) -> &mut Leftover {
        by_issue.entry(issue).or_insert_with(|| Leftover {
            issue,
            ..Leftover::default()
        })
    }
    let branches = repo
        .branches(Some(BranchType::Local))
        .map_err(|e| WorkspaceError::git("listing branches", e))?;
    for (branch, _) in branches.flatten() {
        if let Ok(Some(name)) = branch.name() {
            if let Some(n) = issue_of_branch(name) {
                of(&mut by_issue, n).branches.push(name.to_owned());
            }
        }
    }
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if let Some(n) = issue_of_label(&e.file_name().to_string_lossy()) {
            of(&mut by_issue, n).checkouts.push(e.path());
        }
    }
    let mut out: Vec<Leftover> = by_issue.into_values().collect();
    for l in &mut out {
        l.branches.sort();
        l.checkouts.sort();
    }
    Ok(out)
}

/// Removes what the runs on `issue` left: its checkouts in `dir` and their registrations, the
/// registrations of its checkouts elsewhere (an earlier version's, or a folder already gone),
/// then its local branches. What it removed; refused, removing nothing, when one of the
/// branches is the repository's own current branch or is checked out in a worktree of the
/// user's.
pub async fn remove_issue(root: &Path, dir: &Path, issue: u64) -> Result<Leftover, WorkspaceError> {
    let (root, dir) = (root.to_owned(), dir.to_owned());
    blocking("removing an issue's checkouts and branch", move || {
        remove_issue_in(&root, &dir, issue)
    })
    .await
}

fn remove_issue_in(root: &Path, dir: &Path, issue: u64) -> Result<Leftover, WorkspaceError> {
    let _registrations = super::checkout::lock_registrations(root)?;
    let repo = open(root)?;
    let found = leftovers(root, dir)?
        .into_iter()
        .find(|l| l.issue == issue)
        .unwrap_or(Leftover {
            issue,
            ..Leftover::default()
        });
    if let Ok(head) = repo.head() {
        let current = head.shorthand().unwrap_or_default().to_owned();
        if head.is_branch() && found.branches.contains(&current) {
            return Err(super::repo::refuse(
                format!("the branch `{current}` is the repository's current branch"),
                "switch to another branch (`git switch -`) and run this again",
            ));
        }
    }
    // What each registration is, before anything is removed: a worktree of the user's on one
    // of the branches stops the reset whole.
    let mut mine = Vec::new();
    for (name, w) in registrations(&repo)? {
        let path = w.path().to_owned();
        // A checkout on one of the branches (`ralph follow`'s `pr-34`) holds it too.
        let registration = repo.commondir().join("worktrees").join(&name);
        let on_branch = git2::Repository::open(&registration)
            .ok()
            .and_then(|r| r.head().ok().and_then(|h| h.shorthand().map(str::to_owned)))
            .is_some_and(|b| found.branches.contains(&b));
        let inside = path.starts_with(dir);
        // Registered elsewhere: ralph's own name for a competition's checkout.
        let named =
            name == format!("ralph-{issue}") || name.starts_with(&format!("ralph-{issue}-"));
        let labelled = inside && issue_of_label(&path_label(dir, &path)) == Some(issue);
        if on_branch && !inside && !named {
            return Err(super::repo::refuse(
                format!(
                    "a branch of #{issue} is checked out in a worktree that is not ralph's: {}",
                    path.display()
                ),
                format!(
                    "remove it first (`git worktree remove {}`), or switch it to another branch",
                    path.display()
                ),
            ));
        }
        if on_branch || labelled || named {
            mine.push((w, path, inside));
        }
    }
    let remove = |path: &Path| {
        remove_path(path).map_err(|e| WorkspaceError::Git {
            message: format!("cannot remove {}: {e}", path.display()),
            source: None,
        })
    };
    for (w, path, inside) in mine {
        if inside {
            remove(&path)?;
        }
        forget(&w)?;
    }
    // Folders no registration names (a run killed while making one).
    for path in &found.checkouts {
        remove(path)?;
    }
    let _ = std::fs::remove_dir(dir);
    for name in &found.branches {
        repo.find_branch(name, BranchType::Local)
            .and_then(|mut b| b.delete())
            .map_err(|e| WorkspaceError::git("deleting the branch", e))?;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_branches_name_their_issue() {
        assert_eq!(issue_of_label("12"), Some(12));
        assert_eq!(issue_of_label("12-read"), Some(12));
        assert_eq!(issue_of_label("12-audit"), Some(12));
        assert_eq!(issue_of_label("pr-34"), None);
        assert_eq!(issue_of_label("ledger"), None);
        assert_eq!(issue_of_label("ralph-refine-5"), None);
        assert_eq!(issue_of_branch("ralph/12-add-greet"), Some(12));
        assert_eq!(issue_of_branch("ralph/120-x"), Some(120));
        assert_eq!(issue_of_branch("feature/12-x"), None);
        assert_eq!(issue_of_branch("ralph/ledger"), None);
    }
}
