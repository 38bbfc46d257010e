//! Persisting the ledger from CI (issue 8): the new `.ralph/events/` files are committed to a
//! branch (the default branch, or a ledger branch) and pushed. The commit is made in a temporary
//! worktree on the freshly fetched branch, so the runner's checkout and index are never touched;
//! when another job pushed first, the commit is rebased onto the new tip and pushed again —
//! event files never conflict because every name is unique.

use super::repo::token_env;
use super::repo::{git_cmd, run_git};
use super::WorkspaceError;
use crate::secret::Secret;
use std::path::{Path, PathBuf};

/// How many times the push is tried before giving up.
pub const PUSH_ATTEMPTS: u32 = 5;

/// What [`push_events`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LedgerPush {
    /// The event files committed (names), empty when there was nothing new.
    pub files: Vec<String>,
    pub branch: String,
    /// Push attempts made (1 when nobody pushed in between).
    pub attempts: u32,
}

/// Where and as whom to push.
#[derive(Debug, Clone)]
pub struct LedgerTarget<'a> {
    pub remote: &'a str,
    pub branch: &'a str,
    pub author_name: &'a str,
    pub author_email: &'a str,
    pub message: &'a str,
    pub token: Option<&'a Secret>,
}

fn fail(message: impl Into<String>) -> WorkspaceError {
    WorkspaceError::Push {
        message: message.into(),
    }
}

async fn git(
    dir: &Path,
    args: &[&str],
    token: Option<&Secret>,
    url: &str,
) -> Result<crate::process::Output, WorkspaceError> {
    run_git(token_env(git_cmd(dir).args(args), url, token)).await
}

/// Commits the event files that `git` does not know yet (or that differ) under
/// `<root>/.ralph/events` to `target.branch` on `target.remote`, and pushes.
pub async fn push_events(
    root: &Path,
    target: &LedgerTarget<'_>,
) -> Result<LedgerPush, WorkspaceError> {
    let url = {
        let out = git(root, &["remote", "get-url", target.remote], None, "").await?;
        if !out.success() {
            return Err(fail(format!("there is no remote `{}`", target.remote)));
        }
        out.stdout.trim().to_owned()
    };
    let events = root.join(".ralph/events");
    // A run that wrote nothing (refused before it began) has nothing to record.
    if !events.is_dir() {
        return Ok(LedgerPush {
            files: Vec::new(),
            branch: target.branch.to_owned(),
            attempts: 0,
        });
    }
    let tmp = root.join(".ralph/worktrees/ledger");
    let _ = git(
        root,
        &["worktree", "remove", "--force", &tmp.to_string_lossy()],
        None,
        "",
    )
    .await;
    let _ = std::fs::remove_dir_all(&tmp);
    let branch_ref = format!("refs/heads/{}", target.branch);
    let fetched = git(
        root,
        &["fetch", "--quiet", target.remote, &branch_ref],
        target.token,
        &url,
    )
    .await?;
    if !fetched.success() {
        return Err(fail(format!(
            "cannot fetch `{}` from `{}`: {}",
            target.branch,
            target.remote,
            fetched.tail(5)
        )));
    }
    let added = git(
        root,
        &[
            "worktree",
            "add",
            "--quiet",
            "--detach",
            &tmp.to_string_lossy(),
            "FETCH_HEAD",
        ],
        None,
        "",
    )
    .await?;
    if !added.success() {
        return Err(fail(format!(
            "cannot make a worktree for the ledger: {}",
            added.tail(5)
        )));
    }
    let result = commit_and_push(&events, &tmp, target, &url).await;
    let _ = git(
        root,
        &["worktree", "remove", "--force", &tmp.to_string_lossy()],
        None,
        "",
    )
    .await;
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

async fn commit_and_push(
    events: &Path,
    tmp: &Path,
    target: &LedgerTarget<'_>,
    url: &str,
) -> Result<LedgerPush, WorkspaceError> {
    // Copy every event file the branch does not have, or has with other content.
    let mut files = Vec::new();
    let dest_dir = tmp.join(".ralph/events");
    std::fs::create_dir_all(&dest_dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", dest_dir.display())))?;
    let mut names: Vec<PathBuf> = std::fs::read_dir(events)
        .map_err(|e| fail(format!("cannot read {}: {e}", events.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    names.sort();
    for src in names {
        let Some(name) = src.file_name() else {
            continue;
        };
        let dest = dest_dir.join(name);
        let text =
            std::fs::read(&src).map_err(|e| fail(format!("cannot read {}: {e}", src.display())))?;
        if std::fs::read(&dest).ok().as_deref() != Some(&text[..]) {
            std::fs::write(&dest, &text)
                .map_err(|e| fail(format!("cannot write {}: {e}", dest.display())))?;
            files.push(name.to_string_lossy().into_owned());
        }
    }
    if files.is_empty() {
        return Ok(LedgerPush {
            files,
            branch: target.branch.to_owned(),
            attempts: 0,
        });
    }
    let ident = Ident { tmp, target, url };
    let out = ident.git(&["add", "--", ".ralph/events"]).await?;
    if !out.success() {
        return Err(fail(format!("git add failed: {}", out.tail(5))));
    }
    let message = format!("{}\n\n{} event file(s)", target.message, files.len());
    let out = ident
        .git(&["commit", "--quiet", "--no-verify", "-m", &message])
        .await?;
    if !out.success() {
        return Err(fail(format!("git commit failed: {}", out.tail(5))));
    }
    let refspec = format!("HEAD:refs/heads/{}", target.branch);
    let branch_ref = format!("refs/heads/{}", target.branch);
    let mut last = String::new();
    for attempt in 1..=PUSH_ATTEMPTS {
        let pushed = ident
            .git(&["push", "--quiet", target.remote, &refspec])
            .await?;
        if pushed.success() {
            return Ok(LedgerPush {
                files,
                branch: target.branch.to_owned(),
                attempts: attempt,
            });
        }
        last = pushed.tail(5);
        tracing::info!(
            attempt,
            "the ledger push was rejected; rebasing on the new tip: {last}"
        );
        let fetched = ident
            .git(&["fetch", "--quiet", target.remote, &branch_ref])
            .await?;
        let rebased = ident.git(&["rebase", "--quiet", "FETCH_HEAD"]).await?;
        if !fetched.success() || !rebased.success() {
            let _ = ident.git(&["rebase", "--abort"]).await;
            return Err(fail(format!(
                "cannot rebase the ledger commit on `{}`: {}{}",
                target.branch,
                fetched.tail(3),
                rebased.tail(3)
            )));
        }
    }
    Err(fail(format!(
        "the ledger push was rejected {PUSH_ATTEMPTS} times: {last}"
    )))
}

/// git in the ledger worktree, as the ledger's author, with the push credentials.
struct Ident<'a> {
    tmp: &'a Path,
    target: &'a LedgerTarget<'a>,
    url: &'a str,
}

impl Ident<'_> {
    async fn git(&self, args: &[&str]) -> Result<crate::process::Output, WorkspaceError> {
        let name = format!("user.name={}", self.target.author_name);
        let email = format!("user.email={}", self.target.author_email);
        let mut all: Vec<&str> = vec!["-c", &name, "-c", &email];
        all.extend_from_slice(args);
        git(self.tmp, &all, self.target.token, self.url).await
    }
}
