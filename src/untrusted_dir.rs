//! The one way ralph's own process touches a folder a less trusted process can write: a
//! worktree an agent or a check worked in, a report folder a check wrote. ralph runs with the
//! user's rights (and outside the sandbox), so whatever it reads, writes or removes there must
//! stay there — the rule container runtimes learned from their symlink CVEs.
//!
//! An [`UntrustedDir`] holds its folder open and resolves every path beneath it one name at a
//! time from that handle (`openat` with `O_NOFOLLOW` on each component, as
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` would): a path may not be absolute, may not
//! climb (`..`), and no folder on the way may be a symbolic link — a link swapped in for a folder
//! between two calls is refused, not followed. The last component is never followed either: a
//! link is read as a link ([`Node::Link`], its target text) and written as a link, and only a
//! regular file is opened (non-blocking, bounded), so a FIFO, a device or a socket is refused by
//! its kind instead of read. Writes go to a fresh temporary name in the same folder and are
//! renamed over the entry, replacing a link rather than writing through it.
//!
//! `tests/it/layers.rs` holds the rule that nothing else in ralph calls `std::fs` on a worktree
//! path.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// What an entry beneath the folder is, with what ralph keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A regular file: its bytes, and whether any execute bit is set.
    File { bytes: Vec<u8>, executable: bool },
    /// A symbolic link: the text it points to (never followed).
    Link(PathBuf),
    /// A folder.
    Dir,
}

impl Node {
    /// A regular file holding `bytes`, not executable.
    pub fn file(bytes: impl Into<Vec<u8>>) -> Node {
        Node::File {
            bytes: bytes.into(),
            executable: false,
        }
    }
}

/// What an entry is, by its type alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Link,
    Dir,
    /// A FIFO, a device or a socket: named in messages, never opened.
    Special(&'static str),
}

/// Why a path beneath the folder was not read or written.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{0}: no such file")]
    Missing(String),
    #[error("{path}: {why}")]
    Outside { path: String, why: String },
    #[error("{path} is {kind}, not a regular file: ignored")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path} holds {size} bytes, more than the {max} allowed")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl Refused {
    /// Whether the path simply is not there (nothing to read, nothing to remove).
    pub fn is_missing(&self) -> bool {
        matches!(self, Refused::Missing(_))
    }
}

/// The names of `rel`, checked: relative, no `..`, no root, not empty.
fn names(rel: &Path) -> Result<Vec<&OsStr>, Refused> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => {
                return Err(Refused::Outside {
                    path: rel.display().to_string(),
                    why: "not a path beneath the folder (absolute, or with `..`)".to_owned(),
                })
            }
        }
    }
    if out.is_empty() {
        return Err(Refused::Outside {
            path: rel.display().to_string(),
            why: "names the folder itself".to_owned(),
        });
    }
    Ok(out)
}

/// A folder whose contents a less trusted process controls, held open.
#[derive(Debug)]
pub struct UntrustedDir {
    root: PathBuf,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

/// How many entries one recursive removal or listing visits at most (a check that makes a
/// million files gets the rest left alone, not an endless walk).
const MAX_WALK: usize = 200_000;

#[cfg(unix)]
mod imp {
    use super::*;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::os::fd::{AsFd, OwnedFd};

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

    pub(super) fn read_link(
        dir: &impl AsFd,
        name: &OsStr,
        shown: &Path,
    ) -> Result<PathBuf, Refused> {
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
}

#[cfg(unix)]
impl UntrustedDir {
    /// Opens the folder `root` (ralph's own path to it; its contents are what is not trusted).
    pub fn open(root: &Path) -> io::Result<UntrustedDir> {
        Ok(UntrustedDir {
            root: root.to_owned(),
            fd: imp::open_root(root)?,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder holding the last name of `rel`, opened beneath the root without following a
    /// link (made when `create`), and that name.
    fn parent<'a>(
        &self,
        rel: &'a Path,
        create: bool,
    ) -> Result<(std::os::fd::OwnedFd, &'a OsStr), Refused> {
        let names = names(rel)?;
        let (last, dirs) = names.split_last().expect("names() is never empty");
        let mut cur = self.fd.try_clone().map_err(|e| imp::err(rel, e))?;
        let mut shown = PathBuf::new();
        for d in dirs {
            shown.push(d);
            cur = imp::subdir(&cur, d, create, &shown)?;
        }
        Ok((cur, last))
    }

    /// What `rel` is, without following it; `None` when it is not there (or a folder on the
    /// way is not a folder).
    pub fn kind(&self, rel: &Path) -> Option<Kind> {
        let (dir, name) = self.parent(rel, false).ok()?;
        imp::stat(&dir, name).ok().map(|st| imp::kind_of(&st))
    }

    /// `rel` as it is: a file's bytes (at most `max`), a link's target, a folder; `Ok(None)`
    /// when it is not there. A FIFO, a device or a socket is refused by its kind.
    pub fn read(&self, rel: &Path, max: u64) -> Result<Option<Node>, Refused> {
        let (dir, name) = match self.parent(rel, false) {
            Ok(p) => p,
            Err(e) if e.is_missing() => return Ok(None),
            Err(e) => return Err(e),
        };
        let st = match imp::stat(&dir, name) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(imp::err(rel, e)),
        };
        match imp::kind_of(&st) {
            Kind::Dir => Ok(Some(Node::Dir)),
            Kind::Link => Ok(Some(Node::Link(imp::read_link(&dir, name, rel)?))),
            Kind::File => {
                let (bytes, executable) = imp::read_file(&dir, name, max, rel)?;
                Ok(Some(Node::File { bytes, executable }))
            }
            Kind::Special(kind) => Err(Refused::NotRegular {
                path: rel.display().to_string(),
                kind,
            }),
        }
    }

    /// The bytes of the regular file `rel` (at most `max`); a link, a folder or a special
    /// file is refused by its kind.
    pub fn read_file(&self, rel: &Path, max: u64) -> Result<Vec<u8>, Refused> {
        let (dir, name) = self.parent(rel, false)?;
        imp::read_file(&dir, name, max, rel).map(|(bytes, _)| bytes)
    }

    /// The first `max` bytes of the regular file `rel`, and whether it holds more.
    pub fn read_prefix(&self, rel: &Path, max: u64) -> Result<(Vec<u8>, bool), Refused> {
        let (dir, name) = self.parent(rel, false)?;
        imp::read_file_cut(&dir, name, max, true, rel).map(|(bytes, _, more)| (bytes, more))
    }

    /// [`read_file`](Self::read_file) as UTF-8 text (invalid sequences replaced).
    pub fn read_text(&self, rel: &Path, max: u64) -> Result<String, Refused> {
        self.read_file(rel, max)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Puts `node` at `rel`, replacing whatever is there (a link is replaced, never written
    /// through); the folders on the way are made when missing, and a link or a file standing
    /// where one of them must be is replaced by the folder.
    pub fn put(&self, rel: &Path, node: &Node) -> Result<(), Refused> {
        match node {
            Node::Dir => self.create_dir_all(rel),
            Node::File { bytes, executable } => {
                let (dir, name) = self.parent(rel, true)?;
                imp::write_file(&dir, name, bytes, *executable, rel)
            }
            Node::Link(target) => {
                let (dir, name) = self.parent(rel, true)?;
                imp::write_link(&dir, name, target, rel)
            }
        }
    }

    /// Writes the regular file `rel` (see [`put`](Self::put)).
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), Refused> {
        self.put(rel, &Node::file(bytes))
    }

    /// Makes the folder `rel` and those above it; a link or a file in the way is replaced.
    pub fn create_dir_all(&self, rel: &Path) -> Result<(), Refused> {
        let (dir, name) = self.parent(rel, true)?;
        match imp::stat(&dir, name) {
            Ok(st) if imp::kind_of(&st) == Kind::Dir => return Ok(()),
            Ok(_) => imp::remove_tree(&dir, name, rel, &mut 0)?,
            Err(_) => {}
        }
        imp::subdir(&dir, name, true, rel).map(|_| ())
    }

    /// Removes `rel` — a file or a link itself, a folder with all it holds — without following
    /// any link; nothing to do when it is not there.
    pub fn remove(&self, rel: &Path) -> Result<(), Refused> {
        let (dir, name) = match self.parent(rel, false) {
            Ok(p) => p,
            Err(e) if e.is_missing() => return Ok(()),
            Err(e) => return Err(e),
        };
        match imp::remove_tree(&dir, name, rel, &mut 0) {
            Err(e) if e.is_missing() => Ok(()),
            other => other,
        }
    }

    /// Removes the folders above `rel` that are empty, up to (not including) the root.
    pub fn remove_empty_parents(&self, rel: &Path) {
        let mut up = rel.parent();
        while let Some(p) = up.filter(|p| !p.as_os_str().is_empty()) {
            let Ok((dir, name)) = self.parent(p, false) else {
                return;
            };
            if !imp::remove_empty_dir(&dir, name) {
                return;
            }
            up = p.parent();
        }
    }
}

#[cfg(not(unix))]
impl UntrustedDir {
    // Without `openat`, each path is checked component by component before it is used: the
    // same refusals, without the guarantee against a swap between the check and the use.
    pub fn open(root: &Path) -> io::Result<UntrustedDir> {
        if !root.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "not a folder"));
        }
        Ok(UntrustedDir {
            root: root.to_owned(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, rel: &Path, create: bool) -> Result<PathBuf, Refused> {
        let names = names(rel)?;
        let mut cur = self.root.clone();
        for d in &names[..names.len() - 1] {
            cur.push(d);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(Refused::Outside {
                        path: rel.display().to_string(),
                        why: "a folder on the way is a link or a file: not followed".into(),
                    })
                }
                Err(_) if create => std::fs::create_dir(&cur).map_err(|e| Refused::Io {
                    path: rel.display().to_string(),
                    source: e,
                })?,
                Err(_) => return Err(Refused::Missing(rel.display().to_string())),
            }
        }
        Ok(cur.join(names[names.len() - 1]))
    }

    pub fn kind(&self, rel: &Path) -> Option<Kind> {
        let m = std::fs::symlink_metadata(self.full(rel, false).ok()?).ok()?;
        Some(if m.file_type().is_symlink() {
            Kind::Link
        } else if m.is_dir() {
            Kind::Dir
        } else if m.is_file() {
            Kind::File
        } else {
            Kind::Special("a special file")
        })
    }

    pub fn read(&self, rel: &Path, max: u64) -> Result<Option<Node>, Refused> {
        match self.kind(rel) {
            None => Ok(None),
            Some(Kind::Dir) => Ok(Some(Node::Dir)),
            Some(Kind::Link) => Ok(Some(Node::Link(
                std::fs::read_link(self.full(rel, false)?).unwrap_or_default(),
            ))),
            Some(Kind::File) => Ok(Some(Node::file(self.read_file(rel, max)?))),
            Some(Kind::Special(kind)) => Err(Refused::NotRegular {
                path: rel.display().to_string(),
                kind,
            }),
        }
    }

    pub fn read_file(&self, rel: &Path, max: u64) -> Result<Vec<u8>, Refused> {
        crate::fsutil::read_regular(&self.full(rel, false)?, max).map_err(|e| Refused::Io {
            path: rel.display().to_string(),
            source: io::Error::other(e.to_string()),
        })
    }

    pub fn read_text(&self, rel: &Path, max: u64) -> Result<String, Refused> {
        self.read_file(rel, max)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    pub fn read_prefix(&self, rel: &Path, max: u64) -> Result<(Vec<u8>, bool), Refused> {
        crate::fsutil::read_regular_prefix(&self.full(rel, false)?, max).map_err(|e| Refused::Io {
            path: rel.display().to_string(),
            source: io::Error::other(e.to_string()),
        })
    }

    pub fn put(&self, rel: &Path, node: &Node) -> Result<(), Refused> {
        let full = self.full(rel, true)?;
        let io = |e| Refused::Io {
            path: rel.display().to_string(),
            source: e,
        };
        if let Ok(m) = std::fs::symlink_metadata(&full) {
            if !m.is_dir() || !matches!(node, Node::Dir) {
                let _ = std::fs::remove_dir_all(&full).or_else(|_| std::fs::remove_file(&full));
            }
        }
        match node {
            Node::Dir => std::fs::create_dir_all(&full).map_err(io),
            Node::File { bytes, .. } => std::fs::write(&full, bytes).map_err(io),
            Node::Link(target) => std::fs::write(&full, target.display().to_string()).map_err(io),
        }
    }

    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), Refused> {
        self.put(rel, &Node::file(bytes))
    }

    pub fn create_dir_all(&self, rel: &Path) -> Result<(), Refused> {
        self.put(rel, &Node::Dir)
    }

    pub fn remove(&self, rel: &Path) -> Result<(), Refused> {
        let Ok(full) = self.full(rel, false) else {
            return Ok(());
        };
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full),
            Ok(_) => std::fs::remove_file(&full),
            Err(_) => Ok(()),
        }
        .map_err(|e| Refused::Io {
            path: rel.display().to_string(),
            source: e,
        })
    }

    pub fn remove_empty_parents(&self, rel: &Path) {
        let mut up = rel.parent();
        while let Some(p) = up.filter(|p| !p.as_os_str().is_empty()) {
            if std::fs::remove_dir(self.root.join(p)).is_err() {
                return;
            }
            up = p.parent();
        }
    }
}

/// The most a project file ralph reads to decide what to run (a manifest, a lockfile, a CI
/// workflow, a tool's configuration) may hold.
pub const MAX_PROJECT_FILE: u64 = 64 << 20;

/// The most a report a check writes (JUnit, coverage) may hold.
pub const MAX_REPORT: u64 = 256 << 20;

/// The text of the regular file `rel` beneath `root` (at most `max` bytes), `None` when it is
/// not there or is refused (a link, a FIFO, a device, too large: said in the log).
pub fn text_in(root: &Path, rel: impl AsRef<Path>, max: u64) -> Option<String> {
    let rel = rel.as_ref();
    let read = UntrustedDir::open(root)
        .map_err(|e| Refused::Io {
            path: root.display().to_string(),
            source: e,
        })
        .and_then(|dir| dir.read_text(rel, max));
    match read {
        Ok(text) => Some(text),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            tracing::warn!("{} not read: {e}", root.join(rel).display());
            None
        }
    }
}

/// [`text_in`] with the bound for project files ([`MAX_PROJECT_FILE`]).
pub fn project_text(root: &Path, rel: impl AsRef<Path>) -> Option<String> {
    text_in(root, rel, MAX_PROJECT_FILE)
}

/// A report a check wrote at `path` (whose folder the check could write), read as
/// [`text_in`] reads: a FIFO or a link in its place is refused by its kind, never opened.
/// `what` names it in the refusal ("the JUnit report").
pub fn report_text(path: &Path, what: &str) -> Option<String> {
    let (dir, name) = (path.parent()?, path.file_name()?);
    let read = UntrustedDir::open(dir)
        .map_err(|e| Refused::Io {
            path: dir.display().to_string(),
            source: e,
        })
        .and_then(|d| d.read_text(Path::new(name), MAX_REPORT));
    match read {
        Ok(text) => Some(text),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            tracing::warn!("{what} was not read: {e}");
            None
        }
    }
}

/// The names in the folder `rel` beneath `root` (not following a link on the way or at the
/// end), each with its kind; empty when it is not a folder there.
#[cfg(unix)]
pub fn list_in(root: &Path, rel: impl AsRef<Path>) -> Vec<(String, Kind)> {
    let rel = rel.as_ref();
    let Ok(dir) = UntrustedDir::open(root) else {
        return Vec::new();
    };
    let fd = if rel.as_os_str().is_empty() {
        dir.fd.try_clone().ok()
    } else {
        dir.parent(rel, false)
            .ok()
            .and_then(|(parent, name)| imp::subdir(&parent, name, false, rel).ok())
    };
    let Some(fd) = fd else {
        return Vec::new();
    };
    let Ok(mut listing) = rustix::fs::Dir::read_from(&fd) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(Ok(entry)) = listing.read() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." || out.len() >= MAX_WALK {
            continue;
        }
        if let Ok(st) = imp::stat(&fd, std::ffi::OsStr::new(&name)) {
            out.push((name, imp::kind_of(&st)));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// [`list_in`] without `openat`: checked by path.
#[cfg(not(unix))]
pub fn list_in(root: &Path, rel: impl AsRef<Path>) -> Vec<(String, Kind)> {
    let Ok(dir) = UntrustedDir::open(root) else {
        return Vec::new();
    };
    let rel = rel.as_ref();
    if !rel.as_os_str().is_empty() && dir.kind(rel) != Some(Kind::Dir) {
        return Vec::new();
    }
    let mut out: Vec<(String, Kind)> = std::fs::read_dir(root.join(rel))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = dir.kind(&rel.join(&name))?;
            Some((name, kind))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, UntrustedDir) {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "token=abc").unwrap();
        let inside = tempfile::tempdir().unwrap();
        let dir = UntrustedDir::open(inside.path()).unwrap();
        (outside, inside, dir)
    }

    #[test]
    fn a_link_is_read_as_a_link_and_never_followed() {
        let (outside, inside, dir) = setup();
        symlink(outside.path().join("secret"), inside.path().join("a")).unwrap();
        assert_eq!(
            dir.read(Path::new("a"), 100).unwrap(),
            Some(Node::Link(outside.path().join("secret")))
        );
        let refused = dir.read_file(Path::new("a"), 100).unwrap_err();
        assert!(refused.to_string().contains("a symbolic link"), "{refused}");
    }

    #[test]
    fn a_folder_on_the_way_that_is_a_link_is_refused_for_reads_and_writes() {
        let (outside, inside, dir) = setup();
        symlink(outside.path(), inside.path().join("d")).unwrap();
        let refused = dir.read(Path::new("d/secret"), 100).unwrap_err();
        assert!(matches!(refused, Refused::Outside { .. }), "{refused}");
        assert!(dir.remove(Path::new("d/secret")).is_err());
        assert!(
            outside.path().join("secret").exists(),
            "nothing removed outside"
        );
        dir.write(Path::new("d/planted"), b"x").unwrap();
        assert!(
            !outside.path().join("planted").exists(),
            "nothing written outside: the link is replaced by a folder"
        );
        assert_eq!(
            std::fs::read_to_string(inside.path().join("d/planted")).unwrap(),
            "x"
        );
    }

    #[test]
    fn writing_over_a_link_replaces_the_link_not_its_target() {
        let (outside, inside, dir) = setup();
        symlink(outside.path().join("secret"), inside.path().join("f")).unwrap();
        dir.write(Path::new("f"), b"mine").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "token=abc"
        );
        assert_eq!(
            std::fs::read_to_string(inside.path().join("f")).unwrap(),
            "mine"
        );
        assert!(!std::fs::symlink_metadata(inside.path().join("f"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_link_is_put_back_as_a_link() {
        let (_outside, inside, dir) = setup();
        dir.put(Path::new("x/y/l"), &Node::Link("../../target".into()))
            .unwrap();
        assert_eq!(
            std::fs::read_link(inside.path().join("x/y/l")).unwrap(),
            PathBuf::from("../../target")
        );
    }

    #[test]
    fn paths_that_climb_or_are_absolute_are_refused() {
        let (_o, _i, dir) = setup();
        for p in ["../secret", "/etc/passwd", "a/../../b", ""] {
            assert!(
                matches!(dir.read(Path::new(p), 10), Err(Refused::Outside { .. })),
                "{p}"
            );
        }
    }

    #[test]
    fn a_fifo_is_refused_by_its_kind_without_blocking() {
        let (_o, inside, dir) = setup();
        let fifo = inside.path().join("report.xml");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        let refused = dir.read_file(Path::new("report.xml"), 100).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "report.xml is a FIFO, not a regular file: ignored"
        );
        assert!(dir.read(Path::new("report.xml"), 100).is_err());
        assert_eq!(
            dir.kind(Path::new("report.xml")),
            Some(Kind::Special("a FIFO"))
        );
    }

    #[test]
    fn reads_are_bounded() {
        let (_o, inside, dir) = setup();
        std::fs::write(inside.path().join("big"), vec![b'x'; 1000]).unwrap();
        assert!(matches!(
            dir.read_file(Path::new("big"), 999),
            Err(Refused::TooLarge { size: 1000, .. })
        ));
        assert_eq!(dir.read_file(Path::new("big"), 1000).unwrap().len(), 1000);
    }

    #[test]
    fn removal_takes_the_link_and_leaves_its_target() {
        let (outside, inside, dir) = setup();
        std::fs::create_dir(inside.path().join("d")).unwrap();
        symlink(outside.path(), inside.path().join("d/out")).unwrap();
        std::fs::write(inside.path().join("d/f"), "x").unwrap();
        dir.remove(Path::new("d")).unwrap();
        assert!(!inside.path().join("d").exists());
        assert!(outside.path().join("secret").exists());
        dir.remove(Path::new("never/there")).unwrap();
    }

    #[test]
    fn empty_parents_go_up_to_the_root() {
        let (_o, inside, dir) = setup();
        dir.write(Path::new("a/b/c/f"), b"x").unwrap();
        dir.remove(Path::new("a/b/c/f")).unwrap();
        dir.remove_empty_parents(Path::new("a/b/c/f"));
        assert!(!inside.path().join("a").exists());
        assert!(inside.path().exists());
    }

    #[test]
    fn files_keep_their_execute_bit() {
        let (_o, inside, dir) = setup();
        dir.put(
            Path::new("run.sh"),
            &Node::File {
                bytes: b"#!/bin/sh\n".to_vec(),
                executable: true,
            },
        )
        .unwrap();
        assert!(matches!(
            dir.read(Path::new("run.sh"), 100).unwrap(),
            Some(Node::File {
                executable: true,
                ..
            })
        ));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(inside.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}
