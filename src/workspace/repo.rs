//! What every git module of the workspace shares: opening a repository, a refusal with its
//! hint, the commit a base branch points at, running the `git` program (never prompting, never
//! redirected by an inherited `GIT_DIR`), and running git2 work off the async runtime.

use super::WorkspaceError;
use crate::process::{self, Cmd};
use git2::Repository;
use std::path::Path;
use std::time::Duration;

/// How long a remote query, fetch or push may take.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(120);

/// A preflight refusal: what is wrong, and how to fix it.
pub(super) fn refuse(message: impl Into<String>, hint: impl Into<String>) -> WorkspaceError {
    WorkspaceError::Refused {
        message: message.into(),
        hint: hint.into(),
    }
}

/// The repository at `root`, or a refusal saying it is not one.
pub(super) fn open(root: &Path) -> Result<Repository, WorkspaceError> {
    Repository::open(root).map_err(|_| {
        refuse(
            format!("{} is not a git repository", root.display()),
            "run ralph inside a git repository, or pass -C PATH",
        )
    })
}

/// A `git` command in `dir` that never prompts and never reads the user's terminal.
pub(super) fn git_cmd(dir: &Path) -> Cmd {
    let mut cmd = Cmd::new("git")
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "true")
        .timeout(REMOTE_TIMEOUT);
    // Inherited from a hook or a wrapper, these would point git at another repository.
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_PREFIX",
        "GIT_COMMON_DIR",
    ] {
        cmd = cmd.env_remove(var);
    }
    cmd
}

/// Runs a `git` (or hook) command through the process wrapper.
pub(super) async fn run_git(cmd: Cmd) -> Result<process::Output, WorkspaceError> {
    process::run(&cmd).await.map_err(|e| WorkspaceError::Git {
        message: crate::error::chain_text(&e),
        source: None,
    })
}

/// Runs git2 work on a blocking thread, off the async runtime; `what` names it if the thread
/// stops.
pub(super) async fn blocking<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> Result<T, WorkspaceError> + Send + 'static,
) -> Result<T, WorkspaceError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| WorkspaceError::Git {
            message: format!("{what} stopped: {e}"),
            source: None,
        })?
}

/// Standard base64 of `bytes` (for git's basic-auth header).
/// The commit a base branch points at: the remote-tracking branch when there is one (it is
/// fetched before a worktree is made), else the local branch.
pub(super) fn base_commit(repo: &Repository, remote: &str, base: &str) -> Option<git2::Oid> {
    [
        format!("refs/remotes/{remote}/{base}"),
        format!("refs/heads/{base}"),
    ]
    .iter()
    .find_map(|name| repo.refname_to_id(name).ok())
}
