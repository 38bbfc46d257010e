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

use std::ffi::OsStr;

mod copy;
pub use copy::copy_tree;
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
mod at;
#[cfg(unix)]
use at as imp;
#[cfg(not(unix))]
mod portable;

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

    /// Sets the modification time of the regular file `rel` to now, without following a link
    /// (a link, a folder or a missing file is left as it is).
    pub fn touch(&self, rel: &Path) -> Result<(), Refused> {
        let (dir, name) = self.parent(rel, false)?;
        match imp::stat(&dir, name) {
            Ok(st) if imp::kind_of(&st) == Kind::File => imp::touch(&dir, name, rel),
            _ => Ok(()),
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
        .map_err(|e| match e.kind() {
            // No folder, no report: the run was not asked for one.
            std::io::ErrorKind::NotFound => Refused::Missing(dir.display().to_string()),
            _ => Refused::Io {
                path: dir.display().to_string(),
                source: e,
            },
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
mod tests;
