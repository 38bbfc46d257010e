//! The Cargo target directory every worktree shares (`.ralph/cache/target`), made safe. Cargo
//! decides that a crate is fresh when its sources are older than the record of its last build;
//! worktrees of one package share that record, so a build in one worktree can make another
//! worktree's older sources look built — and its checks would test the other's code. So the
//! checks of one worktree hold the directory alone (a lock beside it), and a worktree that did
//! not make the last build has its sources' modification times renewed first: its own crates
//! are built again, the dependencies stay built.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Folders never touched besides each ecosystem's and tool's builds and environments
/// ([`super::tools::local_folders`]): git's and ralph's.
const SKIP: [&str; 2] = [".git", ".ralph"];

/// The shared directory held by one worktree's checks; released when dropped.
#[derive(Debug)]
pub struct Held {
    _lock: File,
}

/// The shared target directory of a plan's variables, when there is one.
pub fn of(env: &[(String, String)]) -> Option<PathBuf> {
    env.iter()
        .find(|(k, _)| k == "CARGO_TARGET_DIR")
        .map(|(_, v)| PathBuf::from(v))
}

/// Takes the shared directory `dir` for the worktree at `worktree` (waiting for another
/// worktree's checks to finish), renewing the worktree's sources when the last build was
/// another worktree's.
pub async fn hold(dir: &Path, worktree: &Path) -> std::io::Result<Held> {
    let (dir, worktree) = (dir.to_owned(), worktree.to_owned());
    tokio::task::spawn_blocking(move || hold_blocking(&dir, &worktree))
        .await
        .map_err(std::io::Error::other)?
}

fn hold_blocking(dir: &Path, worktree: &Path) -> std::io::Result<Held> {
    std::fs::create_dir_all(dir)?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".ralph-lock"))?;
    lock.lock()?;
    let last_file = dir.join(".ralph-last-worktree");
    let me = worktree.display().to_string();
    let last = std::fs::read_to_string(&last_file).unwrap_or_default();
    if last != me {
        if !last.is_empty() {
            let mut skip = SKIP.to_vec();
            skip.extend(super::tools::local_folders());
            renew(worktree, SystemTime::now(), &skip);
        }
        std::fs::write(&last_file, &me)?;
    }
    Ok(Held { _lock: lock })
}

/// Sets the modification time of every file under `dir` (but the folders named in `skip`) to
/// `now`.
fn renew(dir: &Path, now: SystemTime, skip: &[&str]) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let name = entry.file_name();
            if !skip.iter().any(|s| name == *s) {
                renew(&path, now, skip);
            }
        } else if kind.is_file() {
            if let Ok(f) = OpenOptions::new().write(true).open(&path) {
                let _ = f.set_modified(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn mtime(p: &Path) -> SystemTime {
        std::fs::metadata(p).unwrap().modified().unwrap()
    }

    #[tokio::test]
    async fn another_worktrees_build_renews_the_sources_and_the_same_ones_does_not() {
        let root = tempfile::tempdir().unwrap();
        let (a, b, shared) = (
            root.path().join("a"),
            root.path().join("b"),
            root.path().join("t"),
        );
        for wt in [&a, &b] {
            std::fs::create_dir_all(wt.join("src")).unwrap();
            std::fs::create_dir_all(wt.join("target")).unwrap();
            std::fs::write(wt.join("src/lib.rs"), "").unwrap();
            std::fs::write(wt.join("target/out"), "").unwrap();
        }
        let old = SystemTime::now() - Duration::from_secs(3600);
        for f in ["a/src/lib.rs", "b/src/lib.rs", "b/target/out"] {
            let file = OpenOptions::new()
                .write(true)
                .open(root.path().join(f))
                .unwrap();
            file.set_modified(old).unwrap();
        }
        // The first user renews nothing: no build was made yet.
        drop(hold(&shared, &a).await.unwrap());
        assert_eq!(mtime(&a.join("src/lib.rs")), old);
        // Again from `a`: still its own build.
        drop(hold(&shared, &a).await.unwrap());
        assert_eq!(mtime(&a.join("src/lib.rs")), old);
        // From `b`: its sources are renewed, its build outputs are not.
        drop(hold(&shared, &b).await.unwrap());
        assert!(mtime(&b.join("src/lib.rs")) > old);
        assert_eq!(mtime(&b.join("target/out")), old);
        assert_eq!(
            of(&[("CARGO_TARGET_DIR".into(), shared.display().to_string())]),
            Some(shared.clone())
        );
    }

    #[tokio::test]
    async fn one_worktree_at_a_time() {
        let root = tempfile::tempdir().unwrap();
        let shared = root.path().join("t");
        let held = hold(&shared, root.path()).await.unwrap();
        let (dir, wt) = (shared.clone(), root.path().join("b"));
        let waiting = tokio::spawn(async move { hold(&dir, &wt).await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "the second waits for the first");
        drop(held);
        waiting.await.unwrap().unwrap();
    }
}
