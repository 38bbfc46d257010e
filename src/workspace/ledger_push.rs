//! Persisting the ledger from CI: the new `.ralph/events/` files are committed to a branch (the
//! default branch, or a ledger branch) and pushed. The commit is made in a temporary worktree on
//! the freshly fetched branch, so the runner's checkout and index are never touched. A matrix
//! of jobs pushes within the same minute: when another job pushed first (or holds the remote's
//! ref lock), the commit is rebased onto the new tip and pushed again after a jittered,
//! growing wait, until it lands or the deadline passes — event files never conflict because
//! every name is unique. Past the deadline the error names every event not pushed and where
//! it is kept.

use super::repo::token_env;
use super::repo::{git_cmd, run_git};
use super::WorkspaceError;
use crate::secret::GitToken;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The first wait between two tries; each further wait doubles, up to [`MAX_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(200);

/// The longest wait between two tries.
const MAX_WAIT: Duration = Duration::from_secs(8);

/// Why a push (or the fetch before it) did not go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Another push landed first, the remote's ref was locked, or the network failed:
    /// fetch, rebase and try again.
    Retry,
    /// Trying again cannot help (credentials, permissions, a protected branch, no such
    /// repository).
    Stop,
}

/// What git's output says about a failed push or fetch.
pub fn classify(output: &str) -> Rejection {
    const STOP: [&str; 12] = [
        "permission denied",
        "permission to ",
        "authentication failed",
        "could not read username",
        "invalid username or password",
        "returned error: 401",
        "returned error: 403",
        "protected branch",
        "gh006",
        "gh013",
        "repository not found",
        "does not appear to be a git repository",
    ];
    let text = output.to_lowercase();
    if STOP.iter().any(|s| text.contains(s)) {
        Rejection::Stop
    } else {
        Rejection::Retry
    }
}

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
    pub token: Option<&'a GitToken>,
    /// How long to keep trying (`[ledger] push_deadline_secs`).
    pub deadline: Duration,
    /// The repository's checkouts folder (see `checkouts_dir`): the temporary worktree is made
    /// there, as `ledger`.
    pub checkouts: &'a Path,
}

fn fail(message: impl Into<String>) -> WorkspaceError {
    WorkspaceError::Push {
        message: message.into(),
    }
}

async fn git(
    dir: &Path,
    args: &[&str],
    token: Option<&GitToken>,
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
    let tmp = target.checkouts.join("ledger");
    let _ = std::fs::create_dir_all(target.checkouts);
    remove_worktree(root, &tmp).await;
    let deadline = Instant::now() + target.deadline;
    fetch_branch(root, target, &url, deadline).await?;
    let at = root.to_owned();
    let registrations =
        super::repo::blocking("waiting for the worktree registrations", move || {
            super::checkout::lock_registrations(&at)
        })
        .await?;
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
    drop(registrations);
    if !added.success() {
        return Err(fail(format!(
            "cannot make a worktree for the ledger: {}",
            added.tail(5)
        )));
    }
    let result = commit_and_push(&events, &tmp, target, &url, deadline).await;
    remove_worktree(root, &tmp).await;
    result
}

/// Removes the ledger's worktree `tmp` of the repository at `root` and its folder, whatever is
/// left of them (best effort).
async fn remove_worktree(root: &Path, tmp: &Path) {
    let _ = git(
        root,
        &["worktree", "remove", "--force", &tmp.to_string_lossy()],
        None,
        "",
    )
    .await;
    let _ = std::fs::remove_dir_all(tmp);
}

/// Fetches `target.branch` into `FETCH_HEAD`, trying again after a wait while the failure may
/// pass and the deadline has not.
async fn fetch_branch(
    root: &Path,
    target: &LedgerTarget<'_>,
    url: &str,
    deadline: Instant,
) -> Result<(), WorkspaceError> {
    let branch_ref = format!("refs/heads/{}", target.branch);
    let mut tries = 0;
    loop {
        tries += 1;
        let fetched = git(
            root,
            &["fetch", "--quiet", target.remote, &branch_ref],
            target.token,
            url,
        )
        .await?;
        if fetched.success() {
            return Ok(());
        }
        let why = fetched.tail(5);
        if classify(&why) == Rejection::Stop || Instant::now() >= deadline {
            return Err(fail(format!(
                "cannot fetch `{}` from `{}`: {why}",
                target.branch, target.remote
            )));
        }
        wait(tries, deadline).await;
    }
}

/// Waits before try `tries + 1`: jittered and doubling, never past the deadline.
async fn wait(tries: u32, deadline: Instant) {
    let left = deadline.saturating_duration_since(Instant::now());
    let pause = crate::retry::backoff(FIRST_WAIT, MAX_WAIT, tries).min(left);
    crate::retry::Pause::from_env().wait(pause).await;
}

/// The error of events that did not land: which, where they are kept, what to do.
fn not_pushed(
    files: &[String],
    events: &Path,
    target: &LedgerTarget<'_>,
    why: &str,
) -> WorkspaceError {
    fail(format!(
        "{} event file(s) were not pushed to `{}` on `{}`: {}\nThey are kept in {}: {}\nRun `ralph events push` again (it pushes only what the branch lacks).",
        files.len(),
        target.branch,
        target.remote,
        why.trim(),
        events.display(),
        files.join(", ")
    ))
}

/// Copies the new event files under `events` into the ledger worktree `tmp`, commits them and
/// pushes the commit to `target.branch` (see [`push_rebasing`]); nothing to commit is no push.
async fn commit_and_push(
    events: &Path,
    tmp: &Path,
    target: &LedgerTarget<'_>,
    url: &str,
    deadline: Instant,
) -> Result<LedgerPush, WorkspaceError> {
    let files = copy_new_events(events, tmp)?;
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
    push_rebasing(&ident, files, events, deadline).await
}

/// Copies every event file under `events` that the ledger worktree `tmp` does not have, or has
/// with other content, into it; the names copied, in order.
fn copy_new_events(events: &Path, tmp: &Path) -> Result<Vec<String>, WorkspaceError> {
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
    Ok(files)
}

/// Pushes the ledger commit holding `files`; when it is rejected (and trying again may help),
/// waits, fetches the branch, rebases the commit onto its new tip and pushes again, until it
/// lands or the deadline passes. The error names the files not pushed and where they are kept.
async fn push_rebasing(
    ident: &Ident<'_>,
    files: Vec<String>,
    events: &Path,
    deadline: Instant,
) -> Result<LedgerPush, WorkspaceError> {
    let target = ident.target;
    let refspec = format!("HEAD:refs/heads/{}", target.branch);
    let branch_ref = format!("refs/heads/{}", target.branch);
    let mut attempt = 0;
    loop {
        attempt += 1;
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
        let last = pushed.tail(5);
        if classify(&last) == Rejection::Stop {
            return Err(not_pushed(&files, events, target, &last));
        }
        if Instant::now() >= deadline {
            let why = format!(
                "still rejected after {attempt} attempt(s) in {}s; the last said: {last}",
                target.deadline.as_secs()
            );
            return Err(not_pushed(&files, events, target, &why));
        }
        tracing::info!(
            attempt,
            "the ledger push was rejected; rebasing on the new tip: {last}"
        );
        wait(attempt, deadline).await;
        // A fetch that fails here is tried again with the next push.
        let fetched = ident
            .git(&["fetch", "--quiet", target.remote, &branch_ref])
            .await?;
        if !fetched.success() {
            continue;
        }
        let rebased = ident.git(&["rebase", "--quiet", "FETCH_HEAD"]).await?;
        if !rebased.success() {
            let _ = ident.git(&["rebase", "--abort"]).await;
            let why = format!(
                "the ledger commit does not rebase on `{}`: {}",
                target.branch,
                rebased.tail(3)
            );
            return Err(not_pushed(&files, events, target, &why));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_race_is_tried_again_and_a_refusal_is_not() {
        for retry in [
            " ! [rejected]        HEAD -> main (fetch first)\nerror: failed to push some refs",
            "error: cannot lock ref 'refs/heads/main': is at 1a2b but expected 3c4d",
            "remote: error: cannot lock ref 'refs/heads/main': Unable to create '/r/refs/heads/main.lock': File exists.",
            "hint: Updates were rejected because the tip of your current branch is behind",
            "fatal: unable to access 'https://github.com/o/r/': The requested URL returned error: 502",
            "fatal: the remote end hung up unexpectedly",
            "error: RPC failed; HTTP 500 curl 22",
        ] {
            assert_eq!(classify(retry), Rejection::Retry, "{retry}");
        }
        for stop in [
            "remote: Permission to o/r.git denied to bot.\nfatal: unable to access: The requested URL returned error: 403",
            "remote: error: GH006: Protected branch update failed for refs/heads/main.",
            "fatal: Authentication failed for 'https://github.com/o/r/'",
            "remote: Repository not found.",
            "fatal: '/nowhere' does not appear to be a git repository",
        ] {
            assert_eq!(classify(stop), Rejection::Stop, "{stop}");
        }
    }

    #[test]
    fn what_was_not_pushed_is_named_with_where_it_is_kept() {
        let target = LedgerTarget {
            remote: "origin",
            branch: "main",
            author_name: "ralph",
            author_email: "r@x",
            message: "m",
            token: None,
            deadline: Duration::from_secs(300),
            checkouts: Path::new("/state/checkouts/repo-1"),
        };
        let e = not_pushed(
            &["a-success.json".into(), "b-failure.json".into()],
            Path::new("/repo/.ralph/events"),
            &target,
            "still rejected after 9 attempt(s) in 300s",
        );
        assert_eq!(
            e.to_string(),
            "git push failed: 2 event file(s) were not pushed to `main` on `origin`: still rejected after 9 attempt(s) in 300s\nThey are kept in /repo/.ralph/events: a-success.json, b-failure.json\nRun `ralph events push` again (it pushes only what the branch lacks)."
        );
    }
}
