//! A project as the detection of its checks reads it: one value that every detector asks for a
//! file's text, whether a path is a file or a folder, and what a folder holds — read from the
//! repository at most once each (bounded, never through a link, by `untrusted_dir`), or held in
//! memory, so that each rule is a pure function of the project, tested without a filesystem.

use crate::untrusted_dir::Kind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What was read, by relative path.
#[derive(Default)]
struct Seen {
    texts: BTreeMap<String, Option<String>>,
    kinds: BTreeMap<String, Option<Kind>>,
    listings: BTreeMap<String, Vec<(String, Kind)>>,
    /// How many times the disk was asked for each path (a test's measure: once).
    reads: BTreeMap<String, u32>,
}

/// A project's files, read once.
pub struct Project {
    root: PathBuf,
    /// Read from `root` on first use; `false`: only what is in memory exists.
    on_disk: bool,
    seen: Mutex<Seen>,
}

impl std::fmt::Debug for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Project")
            .field("root", &self.root)
            .field("on_disk", &self.on_disk)
            .finish()
    }
}

/// `rel` as the key it is kept under: `/`-separated, without `./` or a trailing `/`.
fn key(rel: &str) -> String {
    rel.trim_start_matches("./")
        .trim_end_matches('/')
        .to_owned()
}

impl Project {
    /// The project at `root`, read from the disk as it is asked for.
    pub fn read(root: &Path) -> Project {
        Project {
            root: root.to_owned(),
            on_disk: true,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// A project of these files (path → text) and nothing else, rooted at `root` (a path for
    /// the commands only: nothing is read there).
    pub fn in_memory(root: &Path, files: &[(&str, &str)]) -> Project {
        let mut seen = Seen::default();
        for (path, text) in files {
            let path = key(path);
            seen.texts.insert(path.clone(), Some((*text).to_owned()));
            seen.kinds.insert(path.clone(), Some(Kind::File));
            let mut parts: Vec<&str> = path.split('/').collect();
            let mut name = parts.pop().unwrap_or_default().to_owned();
            let mut kind = Kind::File;
            loop {
                let dir = parts.join("/");
                let listing = seen.listings.entry(dir.clone()).or_default();
                if !listing.iter().any(|(n, _)| *n == name) {
                    listing.push((name.clone(), kind));
                    listing.sort_by(|a, b| a.0.cmp(&b.0));
                }
                if dir.is_empty() {
                    break;
                }
                seen.kinds.insert(dir.clone(), Some(Kind::Dir));
                name = parts.pop().unwrap_or_default().to_owned();
                kind = Kind::Dir;
            }
        }
        Project {
            root: root.to_owned(),
            on_disk: false,
            seen: Mutex::new(seen),
        }
    }

    /// Where the project is (for commands and paths shown; detectors read through `self`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The text of the regular file `rel`, when there is one.
    pub fn text(&self, rel: &str) -> Option<String> {
        let rel = key(rel);
        if let Some(text) = self.seen().texts.get(&rel) {
            return text.clone();
        }
        // What it is first (once): only a regular file is read.
        let text = (self.kind(&rel) == Some(Kind::File) && self.on_disk)
            .then(|| crate::untrusted_dir::project_text(&self.root, &rel))
            .flatten();
        self.seen().texts.insert(rel, text.clone());
        text
    }

    /// What `rel` is, never following a link; `None` when nothing is there.
    pub fn kind(&self, rel: &str) -> Option<Kind> {
        let rel = key(rel);
        let mut seen = self.seen();
        if let Some(kind) = seen.kinds.get(&rel) {
            return *kind;
        }
        if let Some(Some(_)) = seen.texts.get(&rel) {
            return Some(Kind::File);
        }
        let kind = if self.on_disk {
            crate::untrusted_dir::UntrustedDir::open(&self.root)
                .ok()
                .and_then(|d| d.kind(Path::new(&rel)))
        } else {
            None
        };
        *seen.reads.entry(rel.clone()).or_default() += 1;
        seen.kinds.insert(rel, kind);
        kind
    }

    /// Whether `rel` is a regular file.
    pub fn is_file(&self, rel: &str) -> bool {
        self.kind(rel) == Some(Kind::File)
    }

    /// Whether `rel` is a folder.
    pub fn is_dir(&self, rel: &str) -> bool {
        self.kind(rel) == Some(Kind::Dir)
    }

    /// Whether anything is at `rel`.
    pub fn exists(&self, rel: &str) -> bool {
        self.kind(rel).is_some()
    }

    /// The names in the folder `rel` (`""`: the root), each with its kind, sorted.
    pub fn list(&self, rel: &str) -> Vec<(String, Kind)> {
        let rel = key(rel);
        let mut seen = self.seen();
        if let Some(listing) = seen.listings.get(&rel) {
            return listing.clone();
        }
        let listing = if self.on_disk {
            crate::untrusted_dir::list_in(&self.root, &rel)
        } else {
            Vec::new()
        };
        *seen.reads.entry(format!("{rel}/")).or_default() += 1;
        seen.listings.insert(rel, listing.clone());
        listing
    }

    /// The TOML file `rel`, parsed; `None` when it is missing or not TOML.
    pub fn toml(&self, rel: &str) -> Option<toml::Table> {
        self.text(rel)?.parse().ok()
    }

    /// The JSON file `rel`, parsed; `None` when it is missing or not JSON.
    pub fn json(&self, rel: &str) -> Option<serde_json::Value> {
        serde_json::from_str(&self.text(rel)?).ok()
    }

    /// The paths the disk was asked for more than once (none: the project is read once).
    pub fn read_twice(&self) -> Vec<String> {
        self.seen()
            .reads
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(p, _)| p.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_in_memory_project_has_its_files_and_their_folders_and_nothing_else() {
        let p = Project::in_memory(
            Path::new("/nowhere"),
            &[
                ("src/pkg/__init__.py", ""),
                ("pyproject.toml", "[project]\n"),
            ],
        );
        assert_eq!(p.text("pyproject.toml").as_deref(), Some("[project]\n"));
        assert!(p.is_file("./src/pkg/__init__.py"));
        assert!(p.is_dir("src/pkg") && p.is_dir("src"));
        assert!(!p.exists("setup.py"));
        let names: Vec<String> = p.list("").into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["pyproject.toml", "src"]);
        assert_eq!(p.list("src"), [("pkg".to_owned(), Kind::Dir)]);
        assert!(p.list("tests").is_empty());
    }

    #[test]
    fn a_project_on_disk_is_read_once_and_never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "token").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("setup.cfg"))
            .unwrap();
        let p = Project::read(dir.path());
        assert_eq!(p.text("Cargo.toml").as_deref(), Some("[package]\n"));
        std::fs::write(dir.path().join("Cargo.toml"), "changed").unwrap();
        assert_eq!(p.text("Cargo.toml").as_deref(), Some("[package]\n"), "kept");
        assert!(p.is_file("Cargo.toml"));
        assert_eq!(p.text("setup.cfg"), None, "a link is not read");
        assert!(!p.is_file("setup.cfg"));
        assert!(p.read_twice().is_empty(), "{:?}", p.read_twice());
    }
}
