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
//! `/etc/shadow` or `/dev/zero` is refused by name instead of read. [`DirReader`] reads many
//! files of one directory that way, each by name relative to the open directory.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
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

/// Why `path` could not be opened: what it is, when it is not a regular file (a link, a
/// FIFO…), else the error of the open itself.
#[cfg(unix)]
fn unopenable(path: &Path, error: io::Error) -> Unreadable {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Unreadable::Missing,
        Ok(meta) if !meta.file_type().is_file() => Unreadable::NotRegular(kind(&meta)),
        _ => Unreadable::Io(error),
    }
}

/// A directory whose files are read by name, relative to the open directory (`openat`), so
/// that reading many files in it does not walk the whole path again for each one. Built for
/// the ledger's cold fold, which reads every event file of `.ralph/events/`.
#[derive(Debug)]
pub struct DirReader {
    path: PathBuf,
    /// The open directory; `None` when it could not be opened, and then every read goes by
    /// path (and fails there with the reason).
    #[cfg(unix)]
    dir: Option<std::os::fd::OwnedFd>,
}

impl DirReader {
    pub fn open(path: &Path) -> DirReader {
        #[cfg(unix)]
        let dir = {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            rustix::fs::open(path, flags, Mode::empty()).ok()
        };
        DirReader {
            path: path.to_owned(),
            #[cfg(unix)]
            dir,
        }
    }

    /// [`read_regular`] of the file `name`, when a directory listing has just shown it to be a
    /// regular file, into `buf` (cleared first, so one buffer serves many files). The listing
    /// stands in for the `stat` before opening: the file is opened straight away — never
    /// through a link, never blocking — then checked with `fstat` on the open file (refused as
    /// `read_regular` refuses it when it is not a regular file or holds more than `max` bytes)
    /// and read with one `read` of the size `fstat` gave, the most it reads. Only a file that
    /// cannot be opened is examined by path, to say why.
    pub fn read_listed_regular(
        &self,
        name: &str,
        max: u64,
        buf: &mut Vec<u8>,
    ) -> Result<(), Unreadable> {
        buf.clear();
        #[cfg(unix)]
        {
            use rustix::fs::{FileType, Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let opened = match &self.dir {
                Some(dir) => rustix::fs::openat(dir, name, flags, Mode::empty()),
                None => rustix::fs::open(self.path.join(name), flags, Mode::empty()),
            };
            let fd = opened.map_err(|e| unopenable(&self.path.join(name), e.into()))?;
            let stat = rustix::fs::fstat(&fd).map_err(|e| Unreadable::Io(e.into()))?;
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
                // Rare: std's metadata, to say what it is.
                let meta = File::from(fd).metadata().map_err(Unreadable::Io)?;
                return Err(Unreadable::NotRegular(kind(&meta)));
            }
            let size = u64::try_from(stat.st_size).unwrap_or(0);
            if size > max {
                return Err(Unreadable::TooLarge { size, max });
            }
            // Exactly `size` bytes: once they are in, the end is known without another `read`.
            buf.resize(size as usize, 0);
            let mut filled = 0;
            while filled < buf.len() {
                match rustix::io::read(&fd, &mut buf[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(Unreadable::Io(e.into())),
                }
            }
            buf.truncate(filled);
            Ok(())
        }
        #[cfg(not(unix))]
        {
            // No O_NOFOLLOW: check before opening, as read_regular does.
            *buf = read_regular(&self.path.join(name), max)?;
            Ok(())
        }
    }
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

/// A complete temporary file beside `target`, synced to disk when `sync`.
fn write_temp(target: &Path, bytes: &[u8], sync: bool) -> io::Result<NamedTempFile> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_all()?;
    }
    Ok(tmp)
}

/// Writes `bytes` to `target` atomically, replacing any existing file.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    write_temp(target, bytes, true)?
        .persist(target)
        .map_err(|e| e.error)?;
    sync_parent(target);
    Ok(())
}

/// [`write_atomic`] without waiting for the disk, for a cache: readers still never see half a
/// file, but after a crash the file may be missing or empty — never someone else's bytes —
/// and a cache that does not parse is simply rebuilt. On a busy disk the two syncs can take
/// longer than everything else the ledger's cold fold does.
pub fn write_atomic_cache(target: &Path, bytes: &[u8]) -> io::Result<()> {
    write_temp(target, bytes, false)?
        .persist(target)
        .map_err(|e| e.error)?;
    Ok(())
}

/// Writes `bytes` to `target` atomically, failing with [`io::ErrorKind::AlreadyExists`]
/// instead of replacing an existing file. The content appears all at once (a complete
/// temporary file moved into place without clobbering), so concurrent readers never see a
/// partial file and concurrent writers never overwrite each other.
pub fn create_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    write_temp(target, bytes, true)?
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
        write_atomic_cache(&target, b"four").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"four");
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

    #[cfg(unix)]
    #[test]
    fn listed_files_are_read_with_the_same_refusals() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.json"), "0123456789").unwrap();
        fs::write(dir.path().join("empty.json"), "").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("shadow.json")).unwrap();
        let fifo = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        fs::create_dir(dir.path().join("sub.json")).unwrap();
        // By the open directory, and by path when the directory could not be opened first.
        let missing = DirReader::open(&dir.path().join("gone"));
        let by_path = DirReader {
            path: dir.path().to_owned(),
            dir: None,
        };
        for reader in [DirReader::open(dir.path()), by_path] {
            let mut buf = b"left over from the last file".to_vec();
            reader.read_listed_regular("a.json", 10, &mut buf).unwrap();
            assert_eq!(buf, b"0123456789");
            reader
                .read_listed_regular("empty.json", 10, &mut buf)
                .unwrap();
            assert!(buf.is_empty());
            assert!(matches!(
                reader.read_listed_regular("a.json", 9, &mut buf),
                Err(Unreadable::TooLarge { size: 10, max: 9 })
            ));
            assert!(matches!(
                reader.read_listed_regular("none.json", 10, &mut buf),
                Err(Unreadable::Missing)
            ));
            // A listing can be stale: a link or a FIFO in its place is still refused.
            assert!(matches!(
                reader.read_listed_regular("shadow.json", 1 << 20, &mut buf),
                Err(Unreadable::NotRegular("a symbolic link"))
            ));
            assert!(matches!(
                reader.read_listed_regular("fifo.json", 10, &mut buf),
                Err(Unreadable::NotRegular("a FIFO"))
            ));
            assert!(matches!(
                reader.read_listed_regular("sub.json", 10, &mut buf),
                Err(Unreadable::NotRegular("a directory"))
            ));
        }
        assert!(matches!(
            missing.read_listed_regular("a.json", 10, &mut Vec::new()),
            Err(Unreadable::Missing)
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
