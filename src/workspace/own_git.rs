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
/// detached commit), the branch it is on, the tags and the remote-tracking branches.
fn refs_text(repo: &Repository) -> Result<RefsText, WorkspaceError> {
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
    Ok(RefsText {
        head: head_text,
        packed: packed.concat(),
        symbolic,
    })
}

/// The text of a checkout's references: `HEAD`'s, `packed-refs`', and the symbolic references
/// (name, target).
struct RefsText {
    head: String,
    packed: String,
    symbolic: Vec<(String, String)>,
}

/// The checkout's private global configuration: it includes the user's global ones under
/// `home` (what `git config --global` would read), and takes what steps write.
fn global_text(home: Option<&Path>) -> String {
    let mut out = String::from("[include]\n");
    for file in crate::process::gitconfig::files(None, home) {
        out.push_str(&format!("\tpath = {}\n", quoted(&file.to_string_lossy())));
    }
    out
}

/// Gives the checkout `workdir` of ralph's `repo` (its registration, with `workdir` as its
/// working tree) a git directory of its own, as `repo` stands now; whatever `.git` held before
/// — what checks wrote, a link — is removed first.
pub(super) fn give(repo: &Repository, workdir: &Path) -> Result<(), WorkspaceError> {
    let RefsText {
        head,
        packed,
        symbolic,
    } = refs_text(repo)?;
    let objects = repo.commondir().join("objects");
    let index = crate::fsutil::read_regular(&repo.path().join("index"), MAX_INDEX).ok();
    let home = crate::env::non_empty(crate::env::HOME).map(PathBuf::from);
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
            global_text(home.as_deref()).into_bytes(),
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fixtures::git;

    /// A repository with a tag, a remote whose URL holds a token, a remote-tracking branch and
    /// its HEAD, and ralph's registration of a checkout on `ralph/1-x` outside it.
    fn repository() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(&root, &["add", "a.txt"]);
        git(&root, &["commit", "-q", "-m", "one"]);
        git(&root, &["tag", "-a", "v1.0", "-m", "release"]);
        git(
            &root,
            &[
                "remote",
                "add",
                "origin",
                "https://x-access-token:ghs_secret123@example.com/o/r.git",
            ],
        );
        git(&root, &["update-ref", "refs/remotes/origin/main", "main"]);
        git(
            &root,
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/main",
            ],
        );
        let checkout = dir.path().join("checkouts/repo-1/1");
        std::fs::create_dir_all(checkout.parent().unwrap()).unwrap();
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "ralph/1-x",
                &checkout.to_string_lossy(),
            ],
        );
        (dir, root, checkout)
    }

    fn ralphs(root: &Path, checkout: &Path) -> Repository {
        let repo = Repository::open(root.join(".git/worktrees/1")).unwrap();
        repo.set_workdir(checkout, false).unwrap();
        repo
    }

    #[test]
    fn the_checkout_gets_a_git_dir_of_its_own_that_borrows_the_repositorys_objects() {
        let (_dir, root, checkout) = repository();
        give(&ralphs(&root, &checkout), &checkout).unwrap();
        assert_eq!(
            git(&checkout, &["rev-parse", "--absolute-git-dir"]),
            checkout.join(".git").display().to_string()
        );
        assert_eq!(
            git(&checkout, &["symbolic-ref", "HEAD"]),
            "refs/heads/ralph/1-x"
        );
        assert_eq!(
            git(&checkout, &["rev-parse", "HEAD"]),
            git(&root, &["rev-parse", "main"])
        );
        assert_eq!(git(&checkout, &["describe"]), "v1.0", "tags, peeled");
        assert_eq!(
            git(&checkout, &["rev-parse", "--abbrev-ref", "origin/HEAD"]),
            "origin/main"
        );
        assert_eq!(
            git(&checkout, &["status", "--porcelain"]),
            "",
            "its index matches"
        );
        let config = std::fs::read_to_string(checkout.join(".git/config")).unwrap();
        assert!(
            config.contains("url = \"https://example.com/o/r.git\"") && !config.contains("ghs_"),
            "{config}"
        );
        // What a check commits there stays there.
        git(
            &checkout,
            &["commit", "-q", "--allow-empty", "-m", "a check's"],
        );
        assert_eq!(git(&root, &["log", "--all", "--format=%s"]), "one");
        assert!(root.join(".git/worktrees/1/HEAD").read_link().is_err());
    }

    #[test]
    fn whatever_the_checks_left_in_it_is_made_anew_and_a_link_is_not_followed() {
        let (dir, root, checkout) = repository();
        let repo = ralphs(&root, &checkout);
        give(&repo, &checkout).unwrap();
        std::fs::write(checkout.join(".git/hooks-planted"), "x").unwrap();
        git(&checkout, &["config", "core.hooksPath", "/tmp/evil"]);
        give(&repo, &checkout).unwrap();
        assert!(!checkout.join(".git/hooks-planted").exists());
        assert!(!std::fs::read_to_string(checkout.join(".git/config"))
            .unwrap()
            .contains("hooksPath"));
        // `.git` swapped for a link to a folder of the user's: the link goes, the folder stays.
        let mine = dir.path().join("mine");
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::write(mine.join("HEAD"), "mine").unwrap();
        std::fs::remove_dir_all(checkout.join(".git")).unwrap();
        std::os::unix::fs::symlink(&mine, checkout.join(".git")).unwrap();
        give(&repo, &checkout).unwrap();
        assert_eq!(std::fs::read_to_string(mine.join("HEAD")).unwrap(), "mine");
        assert!(checkout.join(".git/objects/info/alternates").is_file());
        assert!(!std::fs::symlink_metadata(checkout.join(".git"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn its_global_configuration_includes_the_users_and_takes_what_a_step_writes() {
        let (dir, root, checkout) = repository();
        give(&ralphs(&root, &checkout), &checkout).unwrap();
        assert_eq!(
            crate::process::bwrap::git_link(&checkout),
            crate::process::bwrap::GitLink::Own
        );
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".gitconfig"), "[user]\n\tname = Someone\n").unwrap();
        let global = crate::process::bwrap::own_global_config(&checkout);
        std::fs::write(&global, global_text(Some(&home))).unwrap();
        let step = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .current_dir(&checkout)
                .args(args)
                .env("HOME", &home)
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("GIT_CONFIG_GLOBAL", &global)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        step(&["config", "--global", "ci.step", "yes"]);
        assert_eq!(step(&["config", "--global", "ci.step"]), "yes");
        assert_eq!(
            step(&["config", "user.name"]),
            "Someone",
            "the user's, included"
        );
        assert_eq!(
            std::fs::read_to_string(home.join(".gitconfig")).unwrap(),
            "[user]\n\tname = Someone\n"
        );
    }
}
