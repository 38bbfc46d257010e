//! The git side of a competition (SPEC §6 preflight and steps 6–8, §9): preflight refusals,
//! the branch and its worktree under `.ralph/worktrees/N` (so the user's checkout never
//! changes), resets between attempts, diff analysis with the protected-path rule, commits with
//! ralph's author and trailers after the repository's pre-commit hook, and the push.
//!
//! Local work uses git2 (libgit2, without network transports). Talking to a remote — asking
//! whether the branch exists there, fetching the base, pushing — runs the `git` program, so the
//! user's own credential setup applies; in Actions the token is handed to git through its
//! environment (`http.extraheader`), never on a command line. The functions here block: async
//! callers run them with `tokio::task::spawn_blocking`.

mod diff;
mod git;
mod ledger_push;

pub use diff::{analyse, patch_text, protected_findings, DiffStats, FileChange, Finding};
pub use git::{
    commit, create_worktree, default_branch, preflight, push, remove_worktree, reset_worktree,
    CommitInfo, Preflight, PreflightOptions, Worktree,
};
pub use ledger_push::{push_events, LedgerPush, LedgerTarget, PUSH_ATTEMPTS};

/// The branch slug of SPEC §6: the title lower-cased, runs of anything but `a-z0-9` turned into
/// one `-`, trimmed of `-`, at most 30 characters.
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
