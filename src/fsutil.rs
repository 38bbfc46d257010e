//! Small file-system helpers shared by the ledger, the cache and `ralph init`: atomic writes
//! (temporary file in the same directory, then rename or hard link) so that a reader never
//! sees half a file and a crash never leaves one behind.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary file beside `target`, named so that listings skip it (leading dot).
fn temp_path(target: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{}-{n}-{nanos}.tmp", std::process::id()))
}

fn write_temp(target: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let tmp = temp_path(target);
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes `bytes` to `target` atomically, replacing any existing file.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = write_temp(target, bytes)?;
    fs::rename(&tmp, target).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })?;
    sync_parent(target);
    Ok(())
}

/// Writes `bytes` to `target` atomically, failing with [`io::ErrorKind::AlreadyExists`]
/// instead of replacing an existing file. The content appears all at once (hard link of a
/// complete temporary file), so concurrent readers never see a partial file.
pub fn create_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = write_temp(target, bytes)?;
    let linked = fs::hard_link(&tmp, target);
    let _ = fs::remove_file(&tmp);
    linked?;
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
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.json"]);
    }
}
