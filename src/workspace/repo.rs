//! What every git module of the workspace shares: opening a repository, a refusal with its
//! hint, the commit a base branch points at, running the `git` program (never prompting, never
//! redirected by an inherited `GIT_DIR`), and running git2 work off the async runtime.

use super::WorkspaceError;
use crate::process::{self, Cmd};
use crate::secret::{GitToken, Secret};
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
/// The status of every path that differs from HEAD, untracked ones included (one entry per new
/// folder unless `recurse_untracked`), ignored files and submodules left out.
pub(super) fn statuses(
    repo: &Repository,
    recurse_untracked: bool,
) -> Result<git2::Statuses<'_>, WorkspaceError> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(recurse_untracked)
        .include_ignored(false)
        .exclude_submodules(true);
    repo.statuses(Some(&mut opts))
        .map_err(|e| WorkspaceError::git("reading the worktree status", e))
}

/// ralph's own repository of the checkout `wt`: its registration in the repository
/// (`.git/worktrees/<name>`: ralph's index and HEAD, which no confined process writes) with
/// `wt.path` as its working tree — never the checkout's own `.git`, which checks write.
pub(crate) fn open_checkout(wt: &super::Worktree) -> Result<Repository, WorkspaceError> {
    let repo = Repository::open_ext(
        &wt.git_dir,
        git2::RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
    .map_err(|e| WorkspaceError::git("opening the checkout's registration", e))?;
    repo.set_workdir(&wt.path, false)
        .map_err(|e| WorkspaceError::git("opening the checkout", e))?;
    Ok(repo)
}

/// The registration (`.git/worktrees/<name>`) of the linked worktree at `path` in `repo`.
pub(super) fn registration_of(repo: &Repository, path: &Path) -> Option<std::path::PathBuf> {
    let names = repo.worktrees().ok()?;
    names.iter().flatten().find_map(|name| {
        let w = repo.find_worktree(name).ok()?;
        (w.path() == path).then(|| repo.commondir().join("worktrees").join(name))
    })
}

pub(super) fn open(root: &Path) -> Result<Repository, WorkspaceError> {
    Repository::open(root).map_err(|_| {
        refuse(
            format!("{} is not a git repository", root.display()),
            "run ralph inside a git repository, or pass -C PATH",
        )
    })
}

/// A `git` command in `dir` that never prompts, never reads the user's terminal and runs no
/// hook and no file-system monitor: the repository's hooks are run only by ralph itself, as
/// sealed before any agent ran (see `seal`), and an agent could have planted either.
pub(super) fn git_cmd(dir: &Path) -> Cmd {
    let mut cmd = Cmd::new("git")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
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

/// Standard base64 of `bytes` (for git's basic-auth header).
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Hands `token` to git for an HTTPS `url` as an `http.https://<host>/.extraheader` (basic
/// authentication with the forge's user name: `x-access-token` on GitHub, `oauth2` on GitLab),
/// through `GIT_CONFIG_*` environment variables (never in the arguments, so other users' `ps`
/// cannot see it, and never in a URL, which git prints); the header is registered with the
/// redactor. Other URLs are left to the user's git credential setup.
pub(super) fn token_env(cmd: Cmd, url: &str, token: Option<&GitToken>) -> Cmd {
    let (Some(token), Some(rest)) = (token, url.strip_prefix("https://")) else {
        return cmd;
    };
    let host = rest.split('/').next().unwrap_or(rest);
    let host = host.rsplit('@').next().unwrap_or(host);
    let header = Secret::new(format!(
        "AUTHORIZATION: basic {}",
        base64(format!("{}:{}", token.user, token.secret.expose()).as_bytes())
    ));
    // An empty value first resets the list, so that a header a workflow persisted in
    // .git/config (actions/checkout's) is not sent as well: git sends every configured value,
    // and GitHub refuses two Authorization headers. The key is as specific as checkout's, so
    // git's URL matching weighs both alike and keeps their order.
    let key = format!("http.https://{host}/.extraheader");
    cmd.env("GIT_CONFIG_COUNT", "2")
        .env("GIT_CONFIG_KEY_0", &key)
        .env("GIT_CONFIG_VALUE_0", "")
        .env("GIT_CONFIG_KEY_1", &key)
        .env("GIT_CONFIG_VALUE_1", header.expose())
}

/// A `git` command in `dir` that talks to `remote`, with `token` for it when its URL is HTTPS.
pub(super) fn remote_cmd(dir: &Path, remote: &str, token: Option<&GitToken>) -> Cmd {
    let url = Repository::open(dir)
        .ok()
        .and_then(|r| r.find_remote(remote).ok()?.url().map(str::to_owned));
    match url {
        Some(url) => token_env(git_cmd(dir), &url, token),
        None => git_cmd(dir),
    }
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
    }
}
