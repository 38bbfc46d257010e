//! Files, carefully. Atomic writes, shared by the ledger, the caches, the run state and `ralph
//! init`: the bytes go to a temporary file in the target's directory (named with a leading dot,
//! so listings skip it), are synced, and only then appear under the target's name — by rename,
//! or, where an existing file must never be replaced, by a no-clobber link or rename. A reader
//! never sees half a file, and a crash never leaves one behind under the real name; the
//! temporary file is removed on every failure (`tempfile` deletes it when dropped).
//!
//! And reads of files that arrive with the repository (events, local issues, prompt overrides,
//! the configuration, guidance files): only regular files are read — never through a symbolic
//! link, never a device or a FIFO — and only up to a size limit, so a committed symlink to
//! `/etc/shadow` or `/dev/zero` is refused by name instead of read.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::Path;
use tempfile::NamedTempFile;

/// Why a file that came with the repository was not read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    #[error("no such file")]
    Missing,
    #[error("{0}, not a regular file: only regular files are read")]
    NotRegular(&'static str),
    #[error("{size} bytes, more than the {max} bytes allowed")]
    TooLarge { size: u64, max: u64 },
    #[error("{0}")]
    Io(io::Error),
}

/// What a file is, for messages.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Opens `path` when it is a regular file itself (not a link to one), returning its size.
fn open_regular(path: &Path) -> Result<(File, u64), Unreadable> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Unreadable::Missing,
        _ => Unreadable::Io(e),
    })?;
    if !meta.file_type().is_file() {
        return Err(Unreadable::NotRegular(kind(&meta)));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Never through a link swapped in since the check, never blocking on a FIFO.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(Unreadable::Io)?;
    let meta = file.metadata().map_err(Unreadable::Io)?;
    if !meta.file_type().is_file() {
        return Err(Unreadable::NotRegular(kind(&meta)));
    }
    Ok((file, meta.len()))
}

/// The bytes of the regular file `path`, refused when it holds more than `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, Unreadable> {
    let (file, size) = open_regular(path)?;
    if size > max {
        return Err(Unreadable::TooLarge { size, max });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unreadable::TooLarge {
            size: bytes.len() as u64,
            max,
        });
    }
    Ok(bytes)
}

/// The text of the regular file `path` (see [`read_regular`]), invalid UTF-8 an error.
pub fn read_regular_text(path: &Path, max: u64) -> Result<String, Unreadable> {
    String::from_utf8(read_regular(path, max)?).map_err(|_| {
        Unreadable::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// The first `max` bytes of the regular file `path`, and whether there was more.
pub fn read_regular_prefix(path: &Path, max: u64) -> Result<(Vec<u8>, bool), Unreadable> {
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    let truncated = bytes.len() as u64 > max;
    bytes.truncate(max as usize);
    Ok((bytes, truncated))
}

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

    #[cfg(unix)]
    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_regular(&file, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read_regular(&file, 9),
            Err(Unreadable::TooLarge { size: 10, max: 9 })
        ));
        assert_eq!(
            read_regular_prefix(&file, 4).unwrap(),
            (b"0123".to_vec(), true)
        );
        assert!(matches!(
            read_regular(&dir.path().join("none"), 10),
            Err(Unreadable::Missing)
        ));
        let link = dir.path().join("shadow.json");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        let err = read_regular(&link, 1 << 20).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a symbolic link, not a regular file: only regular files are read"
        );
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_regular_prefix(&zero, 1 << 20),
            Err(Unreadable::NotRegular("a symbolic link"))
        ));
        let fifo = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(Unreadable::NotRegular("a FIFO"))
        ));
        assert!(matches!(
            read_regular(dir.path(), 10),
            Err(Unreadable::NotRegular("a directory"))
        ));
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/a.json");
        assert!(write_atomic(&target, b"x").is_err());
        assert!(names(dir.path()).is_empty());
    }
}
