//! The event directory on disk: listing, parallel loading and atomic, never-overwriting
//! appends (docs/specification.md §8.2). Corrupt or unreadable files are reported with their reason
//! and skipped; they are never fatal and never deleted.
//!
//! Listing is one `read_dir` and no `stat`; loading costs each file one `openat`, `fstat` and
//! `read`, and its parse, on every core.

use super::event::{parse_event, Event};
use crate::fsutil::{create_atomic, read_regular, DirReader};
use chrono::Duration;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The largest event file read: an event is about 1 KB, so anything near this is not one.
const MAX_EVENT_BYTES: u64 = 1 << 20;

/// A file in the event directory, as the directory listing shows it — no `stat`. Event files
/// are immutable (written atomically under a new name, never overwritten), so the name is all
/// the cache needs to know about one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFile {
    /// The name; decoded lossily when it is not UTF-8, so the file is reported rather than
    /// hidden.
    pub name: String,
    /// Whether the name is valid UTF-8: a file whose name is not is reported, never read.
    pub utf8: bool,
    /// Whether the listing shows a regular file. Only those are opened straight away; anything
    /// else (a link, a FIFO…) is examined first and refused with what it is.
    pub regular: bool,
}

/// A successfully loaded event and the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedEvent {
    pub file: String,
    pub event: Event,
}

/// A file that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// Everything in the event directory: the good events in fold order, and the bad files.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub events: Vec<LoadedEvent>,
    pub skipped: Vec<Skipped>,
}

/// The event directory, `.ralph/events/`.
#[derive(Debug, Clone)]
pub struct EventStore {
    dir: PathBuf,
}

/// Whether a directory entry is an event file: a visible `*.json` file. Temporary files
/// (leading dot) and anything else (`.gitkeep`, notes) are not events.
fn is_event_name(name: &str) -> bool {
    !name.starts_with('.') && name.ends_with(".json")
}

impl EventStore {
    pub fn new(dir: impl Into<PathBuf>) -> EventStore {
        EventStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The event files, sorted by name: one directory listing, no `stat` (the listing's file
    /// types suffice on the usual file systems). A missing directory has no events.
    pub fn list(&self) -> io::Result<Vec<EventFile>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry?;
            let (name, utf8) = match entry.file_name().into_string() {
                Ok(name) => (name, true),
                Err(raw) => (raw.to_string_lossy().into_owned(), false),
            };
            if !is_event_name(&name) {
                continue;
            }
            let file_type = entry.file_type().ok();
            if file_type.is_some_and(|t| t.is_dir()) {
                continue;
            }
            files.push(EventFile {
                name,
                utf8,
                regular: file_type.is_some_and(|t| t.is_file()),
            });
        }
        files.par_sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }

    /// Reads and validates every listed file in parallel, then orders the events by timestamp
    /// (ties by file name) — the order of the fold. Bad files are skipped with their reason,
    /// in name order.
    pub fn load(&self, files: &[EventFile]) -> Loaded {
        let dir = DirReader::open(&self.dir);
        let mut results = Vec::with_capacity(files.len());
        files
            .par_iter()
            // Enough files per task that splitting costs nothing next to the reading.
            .with_min_len(64)
            // One read buffer per task, reused for each of its files.
            .map_init(Vec::new, |buf, f| self.load_file(&dir, f, buf))
            // Each result is written in its place: no vector grows, none is moved.
            .collect_into_vec(&mut results);
        let skipped: Vec<Skipped> = results
            .iter()
            .filter_map(|r| r.as_ref().err().cloned())
            .collect();
        // Collected in place: the events keep the results' memory.
        let mut events: Vec<LoadedEvent> = results.into_iter().filter_map(Result::ok).collect();
        let order = |a: &LoadedEvent, b: &LoadedEvent| {
            a.event
                .timestamp
                .cmp(&b.event.timestamp)
                .then_with(|| a.file.cmp(&b.file))
        };
        // Ralph's file names begin with the timestamp, so the events are usually in order
        // already, and checking is cheaper than sorting.
        if !events.is_sorted_by(|a, b| order(a, b).is_le()) {
            events.par_sort_by(order);
        }
        Loaded { events, skipped }
    }

    /// Reads, parses and validates one file.
    fn load_file(
        &self,
        dir: &DirReader,
        f: &EventFile,
        buf: &mut Vec<u8>,
    ) -> Result<LoadedEvent, Skipped> {
        let skipped = |reason: String| Skipped {
            file: f.name.clone(),
            reason,
        };
        if !f.utf8 {
            return Err(skipped(
                "unreadable: the file name is not valid UTF-8".to_owned(),
            ));
        }
        let read = if f.regular {
            dir.read_listed_regular(&f.name, MAX_EVENT_BYTES, buf)
        } else {
            read_regular(&self.dir.join(&f.name), MAX_EVENT_BYTES).map(|bytes| *buf = bytes)
        };
        read.map_err(|e| skipped(format!("unreadable: {e}")))?;
        let event = parse_event(&f.name, buf).map_err(skipped)?;
        Ok(LoadedEvent {
            file: f.name.clone(),
            event,
        })
    }

    /// Lists and loads everything.
    pub fn load_all(&self) -> io::Result<Loaded> {
        Ok(self.load(&self.list()?))
    }

    /// Writes `event` as a new file and returns its name. The file appears atomically and
    /// never replaces another: if the name is taken (same microsecond, bot and outcome), the
    /// timestamp moves on by one microsecond until a free name is found.
    pub fn append(&self, event: &Event) -> io::Result<String> {
        fs::create_dir_all(&self.dir)?;
        let mut event = event.clone();
        for _ in 0..10_000 {
            let name = event.file_name();
            let text = serde_json::to_string_pretty(&event).map_err(io::Error::other)? + "\n";
            match create_atomic(&self.dir.join(&name), text.as_bytes()) {
                Ok(()) => return Ok(name),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    event.timestamp += Duration::microseconds(1);
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "no free event file name for {} after 10000 attempts",
                event.file_name()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Outcome;
    use std::sync::Arc;

    #[test]
    fn append_then_load_round_trips_and_skips_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = EventStore::new(dir.path().join("events"));
        assert!(store.load_all().unwrap().events.is_empty());
        let e = Event::new(4, "smart_bot_1", Outcome::Success, 0.1);
        let name = store.append(&e).unwrap();
        assert_eq!(name, e.file_name());
        fs::write(store.dir().join("zz-bad-success.json"), b"{oops").unwrap();
        fs::write(store.dir().join(".gitkeep"), b"").unwrap();
        fs::write(store.dir().join("notes.txt"), b"hi").unwrap();
        let loaded = store.load_all().unwrap();
        assert_eq!(loaded.events.len(), 1);
        assert_eq!(loaded.events[0].event, e);
        assert_eq!(loaded.skipped.len(), 1);
        assert_eq!(loaded.skipped[0].file, "zz-bad-success.json");
        assert!(loaded.skipped[0].reason.contains("invalid JSON"));
        assert!(store.dir().join("zz-bad-success.json").exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_devices_and_huge_files_are_skipped_unread() {
        let dir = tempfile::tempdir().unwrap();
        let store = EventStore::new(dir.path());
        let e = Event::new(4, "smart_bot_1", Outcome::Success, 0.1);
        store.append(&e).unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap()
        };
        link("/etc/shadow", "2026-01-01T00-00-00-000000Z-a-success.json");
        link("/dev/zero", "2026-01-01T00-00-00-000001Z-b-success.json");
        let big = dir
            .path()
            .join("2026-01-01T00-00-00-000002Z-c-success.json");
        let file = fs::File::create(&big).unwrap();
        file.set_len(MAX_EVENT_BYTES + 1).unwrap();
        let loaded = store.load_all().unwrap();
        assert_eq!(loaded.events.len(), 1);
        let reasons: Vec<&str> = loaded.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "unreadable: a symbolic link, not a regular file: only regular files are read",
                "unreadable: a symbolic link, not a regular file: only regular files are read",
                "unreadable: 1048577 bytes, more than the 1048576 bytes allowed",
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_listing_says_what_each_entry_is_and_odd_names_are_reported() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let store = EventStore::new(dir.path());
        let e = Event::new(4, "smart_bot_1", Outcome::Success, 0.1);
        let good = store.append(&e).unwrap();
        let raw = std::ffi::OsStr::from_bytes(b"2026-01-01T00-00-00-000000Z-\xff-success.json");
        fs::write(dir.path().join(raw), b"{}").unwrap();
        fs::create_dir(dir.path().join("a-directory.json")).unwrap();
        std::os::unix::fs::symlink(&good, dir.path().join("z-link-success.json")).unwrap();
        let files = store.list().unwrap();
        let seen: Vec<(&str, bool, bool)> = files
            .iter()
            .map(|f| (f.name.as_str(), f.utf8, f.regular))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "2026-01-01T00-00-00-000000Z-\u{fffd}-success.json",
                    false,
                    true
                ),
                (good.as_str(), true, true),
                ("z-link-success.json", true, false),
            ]
        );
        let loaded = store.load(&files);
        assert_eq!(loaded.events.len(), 1);
        let reasons: Vec<&str> = loaded.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "unreadable: the file name is not valid UTF-8",
                "unreadable: a symbolic link, not a regular file: only regular files are read",
            ]
        );
    }

    #[test]
    fn same_microsecond_appends_get_distinct_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = EventStore::new(dir.path());
        let e = Event::new(4, "smart_bot_1", Outcome::NotSelected, -0.02);
        let a = store.append(&e).unwrap();
        let b = store.append(&e).unwrap();
        assert_ne!(a, b);
        let loaded = store.load_all().unwrap();
        assert_eq!(loaded.events.len(), 2);
        assert!(loaded.events[0].event.timestamp < loaded.events[1].event.timestamp);
    }

    #[test]
    fn concurrent_appends_never_lose_or_clobber_an_event() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(EventStore::new(dir.path().join("events")));
        let threads = 8;
        let per_thread = 50;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    (0..per_thread)
                        .map(|k| {
                            // Same bot and outcome everywhere, so names collide as often as
                            // the clock allows; the issue number tells the events apart.
                            let e = Event::new(t * 1000 + k, "smart_bot_1", Outcome::Success, 0.1);
                            store.append(&e).unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut names: Vec<String> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), (threads * per_thread) as usize);
        let loaded = store.load_all().unwrap();
        assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
        let mut issues: Vec<u64> = loaded.events.iter().map(|e| e.event.issue_number).collect();
        issues.sort();
        let expected: Vec<u64> = (0..threads)
            .flat_map(|t| (0..per_thread).map(move |k| t * 1000 + k))
            .collect();
        assert_eq!(issues, expected);
    }
}
