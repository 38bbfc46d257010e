//! [`UntrustedDir`] where there is no `openat`: each path checked component by component
//! before it is used — the same refusals, without the guarantee against a swap between the
//! check and the use.

use super::{names, Kind, Node, Refused, UntrustedDir};
use std::io;
use std::path::{Path, PathBuf};

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

    pub fn touch(&self, rel: &Path) -> Result<(), Refused> {
        let Ok(full) = self.full(rel, false) else {
            return Ok(());
        };
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_file() => std::fs::OpenOptions::new()
                .write(true)
                .open(&full)
                .and_then(|f| f.set_modified(std::time::SystemTime::now())),
            _ => Ok(()),
        }
        .map_err(|e| Refused::Io {
            path: rel.display().to_string(),
            source: e,
        })
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
