//! The git directory a checkout has of its own, as a CI checkout does: `<checkout>/.git`, a
//! repository whose objects are the user's (borrowed read-only through
//! `objects/info/alternates`), with the checkout's branch, the repository's tags and
//! remote-tracking branches, its remotes (without credentials), and an index that matches the
//! checkout. Checks, setups and agents may write it as CI steps write theirs (`git init` in a
//! test, `git config user.email`, a commit); it also holds the checkout's private global git
//! configuration ([`own_global_config`](crate::process::bwrap::own_global_config)), which
//! includes the user's, so that `git config --global` in a step writes neither the user's home
//! nor another checkout.
//!
//! ralph never reads it: its own git work on the checkout (status, diff, staging, the commit,
//! resets) goes through its registration in the repository (`.git/worktrees/<name>`, outside
//! every sandbox's writable places), so nothing a process writes here — hooks, configuration,
//! objects, references, the index — is ever run or counted with ralph's rights. It is made
//! again from ralph's state whenever ralph's commit, reset or checkout changes what the
//! checkout is at; everything in it is written through [`UntrustedDir`], never following a
//! link left in its place.

use super::WorkspaceError;
use crate::process::bwrap::OWN_MARK;
use crate::untrusted_dir::UntrustedDir;
use git2::Repository;
use std::path::{Path, PathBuf};

/// The largest index ralph copies into a checkout's own git dir; past it the checkout's index is
/// made by git on first use.
const MAX_INDEX: u64 = 512 << 20;

fn failed(what: &str, e: impl std::fmt::Display) -> WorkspaceError {
    WorkspaceError::Git {
        message: format!("cannot make the checkout's own git directory ({what}): {e}"),
        source: None,
    }
}

/// A value as git's configuration format quotes it.
fn quoted(value: &str) -> String {
    let escaped = value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}

/// The checkout's `config`: a plain non-bare repository, and every remote of `repo` by its URL
/// without credentials.
fn config_text(repo: &Repository) -> String {
    let mut out = String::from(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true\n",
    );
    if cfg!(unix) {
        out.push_str("\tfilemode = true\n");
    }
    let names = repo.remotes().ok();
    for name in names.iter().flat_map(|n| n.iter().flatten()) {
        let Some(url) = repo
            .find_remote(name)
            .ok()
            .and_then(|r| r.url().map(str::to_owned))
        else {
            continue;
        };
        let url = crate::process::gitconfig::url_without_credentials(&url);
        out.push_str(&format!(
            "[remote {}]\n\turl = {}\n\tfetch = {}\n",
            quoted(name),
            quoted(&url),
            quoted(&format!("+refs/heads/*:refs/remotes/{name}/*"))
        ));
    }
    out
}

/// The checkout's `HEAD` and references, from ralph's `repo`: its HEAD (the branch, or a
/// detached commit), the branch it is on, the tags and the remote-tracking branches. Returns
/// `HEAD`'s text, `packed-refs`' text, and the symbolic references (name, target).
fn refs_text(repo: &Repository) -> Result<(String, String, Vec<(String, String)>), WorkspaceError> {
    let head = repo
        .head()
        .map_err(|e| WorkspaceError::git("reading the checkout's HEAD", e))?;
    let target = head
        .peel_to_commit()
        .map_err(|e| WorkspaceError::git("reading the checkout's commit", e))?
        .id();
    let (head_text, branch) = match head.name().filter(|n| n.starts_with("refs/heads/")) {
        Some(name) if !repo.head_detached().unwrap_or(true) => {
            (format!("ref: {name}\n"), Some(name.to_owned()))
        }
        _ => (format!("{target}\n"), None),
    };
    let mut packed = Vec::new();
    let mut symbolic = Vec::new();
    if let Some(name) = &branch {
        packed.push(format!("{target} {name}\n"));
    }
    let refs = repo
        .references()
        .map_err(|e| WorkspaceError::git("listing references", e))?;
    for r in refs.flatten() {
        let Some(name) = r.name() else { continue };
        if !(name.starts_with("refs/tags/") || name.starts_with("refs/remotes/")) {
            continue;
        }
        match (r.target(), r.symbolic_target()) {
            (Some(id), _) => packed.push(format!("{id} {name}\n")),
            (None, Some(to)) => symbolic.push((name.to_owned(), format!("ref: {to}\n"))),
            (None, None) => {}
        }
    }
    packed.sort_by(|a, b| a.split(' ').nth(1).cmp(&b.split(' ').nth(1)));
    Ok((head_text, packed.concat(), symbolic))
}

/// The checkout's private global configuration: it includes the user's global ones (what
/// `git config --global` would read), and takes what steps write.
fn global_text() -> String {
    let home = crate::env::non_empty(crate::env::HOME).map(PathBuf::from);
    let mut out = String::from("[include]\n");
    for file in crate::process::gitconfig::files(None, home.as_deref()) {
        out.push_str(&format!("\tpath = {}\n", quoted(&file.to_string_lossy())));
    }
    out
}

/// Gives the checkout `workdir` of ralph's `repo` (its registration, with `workdir` as its
/// working tree) a git directory of its own, as `repo` stands now; whatever `.git` held before
/// — what checks wrote, a link — is removed first.
pub(super) fn give(repo: &Repository, workdir: &Path) -> Result<(), WorkspaceError> {
    let (head, packed, symbolic) = refs_text(repo)?;
    let objects = repo.commondir().join("objects");
    let index = crate::fsutil::read_regular(&repo.path().join("index"), MAX_INDEX).ok();
    let dir = UntrustedDir::open(workdir).map_err(|e| failed("opening the checkout", e))?;
    let git = Path::new(".git");
    dir.remove(git).map_err(|e| failed("clearing it", e))?;
    for sub in [
        "objects/info",
        "objects/pack",
        "refs/heads",
        "refs/tags",
        OWN_MARK,
    ] {
        dir.create_dir_all(&git.join(sub))
            .map_err(|e| failed("making its folders", e))?;
    }
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (git.join("HEAD"), head.into_bytes()),
        (git.join("config"), config_text(repo).into_bytes()),
        (git.join("packed-refs"), packed.into_bytes()),
        (
            git.join("objects/info/alternates"),
            format!("{}\n", objects.display()).into_bytes(),
        ),
        (
            git.join(OWN_MARK).join("gitconfig"),
            global_text().into_bytes(),
        ),
    ];
    files.extend(
        symbolic
            .into_iter()
            .map(|(name, text)| (git.join(name), text.into_bytes())),
    );
    if let Some(bytes) = index {
        files.push((git.join("index"), bytes));
    }
    for (rel, bytes) in files {
        dir.write(&rel, &bytes)
            .map_err(|e| failed("writing it", e))?;
    }
    Ok(())
}
