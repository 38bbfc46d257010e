//! Read-only phases under watch. Bots and the arbiter read the state the round builds on — the
//! run's worktree, on the run's branch — never the user's checkout. Their tools are limited
//! already; after each read-only phase (extraction, proposals, judging, the verify role) ralph
//! still checks that the worktree, the repository's references and its worktree list are as
//! they were, restores them if not, names the change in a warning, and discards the answer of
//! an agent it can tell made it. The git directory's seal is checked with them (hooks,
//! configuration, the worktree's links), and after the implementer and the checks too
//! ([`sealed`]): an agent or a check that changed it fails its attempt.

use crate::output::Printer;
use crate::workspace::{Snapshot, Workspace, Worktree};
use anyhow::Result;

/// The tools that can change files or the repository: Claude Code's writing tools and its
/// worktree tools, and Codex's file changes.
const WRITING_TOOLS: [&str; 8] = [
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Bash",
    "EnterWorktree",
    "ExitWorktree",
    "file_change",
];

/// Whether an agent that used `tools` could have changed the repository.
pub(super) fn wrote(tools: &[String]) -> bool {
    tools.iter().any(|t| WRITING_TOOLS.contains(&t.as_str()))
}

/// The snapshot to check a read-only phase against.
pub(super) async fn watch(workspace: &dyn Workspace, wt: &Worktree) -> Result<Snapshot> {
    Ok(workspace.snapshot(wt).await?)
}

/// After a read-only phase: `None` when nothing changed; otherwise the changes (restored by
/// now) in one line, after a warning naming them and `phase`.
pub(super) async fn changed(
    workspace: &dyn Workspace,
    printer: &Printer,
    wt: &Worktree,
    before: &Snapshot,
    phase: &str,
) -> Result<Option<String>> {
    let mut changes = workspace.restore_changes(wt, before).await?;
    changes.extend(workspace.seal_changes(wt).await?);
    if changes.is_empty() {
        return Ok(None);
    }
    let summary = changes.join("; ");
    printer.warn(&format!(
        "{phase} changed the repository, which a read-only phase must not: {summary} (restored)"
    ));
    Ok(Some(summary))
}

/// After an agent or a check that may write the worktree: `None` when the git directory is as
/// sealed; otherwise the changes (restored by now) in one line, after a warning naming `who`.
pub(super) async fn sealed(
    workspace: &dyn Workspace,
    printer: &Printer,
    wt: &Worktree,
    who: &str,
) -> Result<Option<String>> {
    let changes = workspace.seal_changes(wt).await?;
    if changes.is_empty() {
        return Ok(None);
    }
    let summary = changes.join("; ");
    printer.warn(&format!(
        "{who} changed the repository's git directory, which nothing but ralph may: {summary} (restored)"
    ));
    Ok(Some(summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_tools_are_told_from_reading_ones() {
        let t = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(!wrote(&t(&["Read", "Grep", "Glob", "command_execution"])));
        assert!(wrote(&t(&["Read", "EnterWorktree"])));
        assert!(wrote(&t(&["file_change"])));
    }
}
