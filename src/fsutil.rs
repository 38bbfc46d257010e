//! Atomic writes, shared by the ledger, the caches, the run state and `ralph init`: the bytes go
//! to a temporary file in the target's directory (named with a leading dot, so listings skip
//! it), are synced, and only then appear under the target's name — by rename, or, where an
//! existing file must never be replaced, by a no-clobber link or rename. A reader never sees half
//! a file, and a crash never leaves one behind under the real name; the temporary file is
//! removed on every failure (`tempfile` deletes it when dropped).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use tempfile::NamedTempFile;

/// A complete, synced temporary file beside `target`.
fn write_temp(target: &Path, bytes: &[u8]) -> io::Result<NamedTempFile> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Writes `bytes` to `target` atomically, replacing any existing file.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    write_temp(target, bytes)?
        .persist(target)
        .map_err(|e| e.error)?;
    sync_parent(target);
    Ok(())
}

/// Writes `bytes` to `target` atomically, failing with [`io::ErrorKind::AlreadyExists`]
/// instead of replacing an existing file. The content appears all at once (a complete
/// temporary file moved into place without clobbering), so concurrent readers never see a
/// partial file and concurrent writers never overwrite each other.
pub fn create_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    write_temp(target, bytes)?
        .persist_noclobber(target)
        .map_err(|e| e.error)?;
    sync_parent(target);
    Ok(())
}

/// Makes a rename or link durable by syncing the directory (best effort; not all platforms
/// allow opening a directory).
fn sync_parent(target: &Path) {
    if let Some(parent) = target.parent() {
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(dir: &Path) -> Vec<std::ffi::OsString> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn create_atomic_never_overwrites_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.json");
        create_atomic(&target, b"one").unwrap();
        let err = create_atomic(&target, b"two").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&target).unwrap(), b"one");
        write_atomic(&target, b"three").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"three");
        assert_eq!(names(dir.path()), ["a.json"]);
    }

    #[test]
    fn concurrent_creators_never_clobber_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("e.json");
        let results: Vec<io::Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let t = target.clone();
                    s.spawn(move || create_atomic(&t, format!("writer {i}").as_bytes()))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
        let text = fs::read_to_string(&target).unwrap();
        assert!(text.starts_with("writer "), "a whole file: {text}");
        assert_eq!(names(dir.path()), ["e.json"]);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/a.json");
        assert!(write_atomic(&target, b"x").is_err());
        assert!(names(dir.path()).is_empty());
    }
}
