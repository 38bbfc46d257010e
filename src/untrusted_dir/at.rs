//! The system calls of [`UntrustedDir`](super::UntrustedDir) on Unix: each relative to an open
//! folder (`openat`, `statat`, `readlinkat`, `mkdirat`, `unlinkat`, `renameat`, `symlinkat`),
//! never following a link, never blocking on a special file.

use super::{Kind, Refused, MAX_WALK};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

pub(super) fn err(path: &Path, e: impl Into<io::Error>) -> Refused {
    let e: io::Error = e.into();
    if e.kind() == io::ErrorKind::NotFound {
        return Refused::Missing(path.display().to_string());
    }
    Refused::Io {
        path: path.display().to_string(),
        source: e,
    }
}

pub(super) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

pub(super) fn kind_of(st: &rustix::fs::Stat) -> Kind {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Kind::File,
        FileType::Symlink => Kind::Link,
        FileType::Directory => Kind::Dir,
        FileType::Fifo => Kind::Special("a FIFO"),
        FileType::Socket => Kind::Special("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Kind::Special("a device"),
        FileType::Unknown => Kind::Special("a special file"),
    }
}

/// Opens the folder `name` in `dir` without following a link; with `create`, makes it
/// when missing, in place of a link or a file that stands where it must be.
pub(super) fn subdir(
    dir: &impl AsFd,
    name: &OsStr,
    create: bool,
    shown: &Path,
) -> Result<OwnedFd, Refused> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) if create => {
            rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(|e| err(shown, e))?;
            subdir(dir, name, create, shown)
        }
        Err(rustix::io::Errno::NOENT) if create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(err(shown, e)),
            }
            rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(|e| walk_err(shown, e))
        }
        Err(e) => Err(walk_err(shown, e)),
    }
}

/// A component that is a link (`ELOOP`) or a file (`ENOTDIR`) where a folder must be.
fn walk_err(shown: &Path, e: rustix::io::Errno) -> Refused {
    match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => Refused::Outside {
            path: shown.display().to_string(),
            why: "is a symbolic link or a file where a folder must be: not followed".to_owned(),
        },
        e => err(shown, e),
    }
}

pub(super) fn stat(dir: &impl AsFd, name: &OsStr) -> rustix::io::Result<rustix::fs::Stat> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
}

/// Sets `name`'s access and modification times to now, the link itself if it is one.
pub(super) fn touch(dir: &impl AsFd, name: &OsStr, shown: &Path) -> Result<(), Refused> {
    let now = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: rustix::fs::UTIME_NOW,
    };
    let times = rustix::fs::Timestamps {
        last_access: now,
        last_modification: now,
    };
    rustix::fs::utimensat(dir, name, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| err(shown, e))
}

pub(super) fn read_link(dir: &impl AsFd, name: &OsStr, shown: &Path) -> Result<PathBuf, Refused> {
    let target = rustix::fs::readlinkat(dir, name, Vec::new()).map_err(|e| err(shown, e))?;
    use std::os::unix::ffi::OsStringExt;
    Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
}

/// The bytes of the regular file `name`: opened without following and without blocking,
/// checked on the open file, at most `max` bytes.
pub(super) fn read_file(
    dir: &impl AsFd,
    name: &OsStr,
    max: u64,
    shown: &Path,
) -> Result<(Vec<u8>, bool), Refused> {
    read_file_cut(dir, name, max, false, shown).map(|(b, x, _)| (b, x))
}

/// [`read_file`], or with `cut` its first `max` bytes and whether there were more.
pub(super) fn read_file_cut(
    dir: &impl AsFd,
    name: &OsStr,
    max: u64,
    cut: bool,
    shown: &Path,
) -> Result<(Vec<u8>, bool, bool), Refused> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            // Say what it is when it is not a file (a link: ELOOP).
            if let Ok(st) = stat(dir, name) {
                if let k @ (Kind::Link | Kind::Dir | Kind::Special(_)) = kind_of(&st) {
                    return Err(not_regular(shown, k));
                }
            }
            return Err(err(shown, e));
        }
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| err(shown, e))?;
    let kind = kind_of(&st);
    if kind != Kind::File {
        return Err(not_regular(shown, kind));
    }
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > max && !cut {
        return Err(Refused::TooLarge {
            path: shown.display().to_string(),
            size,
            max,
        });
    }
    let mut buf = vec![0u8; size.min(max) as usize];
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            // A file still growing: read on, up to the bound.
            if buf.len() as u64 > max {
                break;
            }
            let grow = (buf.len().max(4096)).min((max + 1) as usize - buf.len());
            buf.resize(buf.len() + grow, 0);
        }
        match rustix::io::read(&fd, &mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(err(shown, e)),
        }
    }
    buf.truncate(filled);
    let more = buf.len() as u64 > max || size > max;
    if more && !cut {
        return Err(Refused::TooLarge {
            path: shown.display().to_string(),
            size: buf.len() as u64,
            max,
        });
    }
    buf.truncate(max as usize);
    Ok((buf, st.st_mode & 0o111 != 0, more))
}

fn not_regular(shown: &Path, kind: Kind) -> Refused {
    Refused::NotRegular {
        path: shown.display().to_string(),
        kind: match kind {
            Kind::Link => "a symbolic link",
            Kind::Dir => "a folder",
            Kind::Special(what) => what,
            Kind::File => "a regular file",
        },
    }
}

/// A name for a temporary entry next to `name` in the same folder.
fn temp_name(name: &OsStr) -> OsString {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let mut t = OsString::from(".ralph-tmp-");
    t.push(format!(
        "{}-{}-",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    t.push(name);
    t
}

/// Puts a fresh entry made by `make` (under a temporary name) in place of `name`.
fn replace(
    dir: &OwnedFd,
    name: &OsStr,
    shown: &Path,
    make: impl FnOnce(&OwnedFd, &OsStr) -> Result<(), Refused>,
) -> Result<(), Refused> {
    if let Ok(st) = stat(dir, name) {
        // A folder cannot be renamed over: it goes first.
        if kind_of(&st) == Kind::Dir {
            remove_tree(dir, name, shown, &mut 0)?;
        }
    }
    let tmp = temp_name(name);
    make(dir, &tmp)?;
    rustix::fs::renameat(dir, &tmp, dir, name).map_err(|e| {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
        err(shown, e)
    })
}

pub(super) fn write_file(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    executable: bool,
    shown: &Path,
) -> Result<(), Refused> {
    replace(dir, name, shown, |dir, tmp| {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = if executable { 0o755 } else { 0o644 };
        let fd = rustix::fs::openat(dir, tmp, flags, Mode::from_raw_mode(mode))
            .map_err(|e| err(shown, e))?;
        let mut written = 0;
        while written < bytes.len() {
            match rustix::io::write(&fd, &bytes[written..]) {
                Ok(n) => written += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
                    return Err(err(shown, e));
                }
            }
        }
        // The umask may have taken bits away: the mode as asked.
        let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode));
        Ok(())
    })
}

pub(super) fn write_link(
    dir: &OwnedFd,
    name: &OsStr,
    target: &Path,
    shown: &Path,
) -> Result<(), Refused> {
    replace(dir, name, shown, |dir, tmp| {
        rustix::fs::symlinkat(target, dir, tmp).map_err(|e| err(shown, e))
    })
}

/// Removes `name` in `dir`: a file or a link by unlinking it, a folder with everything in
/// it, walked without following a link.
pub(super) fn remove_tree(
    dir: &impl AsFd,
    name: &OsStr,
    shown: &Path,
    visited: &mut usize,
) -> Result<(), Refused> {
    let st = stat(dir, name).map_err(|e| err(shown, e))?;
    if kind_of(&st) != Kind::Dir {
        return rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(|e| err(shown, e));
    }
    let sub = subdir(dir, name, false, shown)?;
    let mut names = Vec::new();
    {
        let mut listing = rustix::fs::Dir::read_from(&sub).map_err(|e| err(shown, e))?;
        while let Some(entry) = listing.read() {
            let entry = entry.map_err(|e| err(shown, e))?;
            let n = entry.file_name().to_bytes();
            if n != b"." && n != b".." {
                use std::os::unix::ffi::OsStrExt;
                names.push(OsStr::from_bytes(n).to_owned());
            }
        }
    }
    for n in names {
        *visited += 1;
        if *visited > MAX_WALK {
            return Err(Refused::Io {
                path: shown.display().to_string(),
                source: io::Error::other(format!("more than {MAX_WALK} entries")),
            });
        }
        remove_tree(&sub, &n, &shown.join(&n), visited)?;
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(|e| err(shown, e))
}

pub(super) fn remove_empty_dir(dir: &impl AsFd, name: &OsStr) -> bool {
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).is_ok()
}
