//! The folded-state cache, `.ralph/marketplace.json` (docs/specification.md §8.3). It is reused
//! only when the fingerprint of the event directory and of the fold parameters is unchanged, so an
//! unchanged ledger is never re-parsed.
//!
//! The directory's fingerprint is its sorted event file names, nothing else: event files are
//! immutable — ralph writes each one atomically under a name it never reuses and never
//! overwrites it (`fsutil::create_atomic`) — so the set of names is the set of events, and an
//! unchanged ledger costs one directory listing, not a `stat` per file. A file edited in place
//! keeps its name and goes unnoticed here by design; `ralph leaderboard --rebuild` folds from
//! scratch, and `ralph events verify` reads every file and compares the cache.

use super::store::EventFile;
use super::{FoldParams, LedgerState};
use crate::fsutil::write_atomic_cache;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Bumped whenever the cached structure or the fingerprint changes, so old caches are
/// recomputed. 3: the fingerprint is the names alone (1 had each file's size and mtime), and
/// the state has the decision figures.
const CACHE_VERSION: u32 = 5;

#[derive(Serialize, Deserialize)]
struct CacheFile {
    cache_version: u32,
    fingerprint: String,
    state: LedgerState,
}

/// A 64-bit hash taking eight bytes a step (a multiply and a shift each, after FNV's offset
/// basis): stable across builds and platforms, which `std`'s hasher is not, and quick over the
/// 5 MB of names of a 100,000-event ledger, where byte-wise FNV-1a took several milliseconds.
struct Hash64(u64);

impl Hash64 {
    fn new() -> Hash64 {
        Hash64(0xcbf2_9ce4_8422_2325)
    }

    fn word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }

    fn bytes(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.word(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.word(u64::from_le_bytes(last));
        // The length ends every string, so ("ab", "c") and ("a", "bc") differ, and so do "a"
        // and "a\0".
        self.word(bytes.len() as u64);
    }
}

/// The fingerprint of a listing (sorted by name, as `EventStore::list` returns it) under given
/// fold parameters: the parameters and the file names, in order.
pub fn fingerprint(params: &FoldParams, files: &[EventFile]) -> String {
    let mut h = Hash64::new();
    h.bytes(&CACHE_VERSION.to_le_bytes());
    h.bytes(env!("CARGO_PKG_VERSION").as_bytes());
    h.bytes(serde_json::to_string(params).unwrap_or_default().as_bytes());
    h.bytes(&(files.len() as u64).to_le_bytes());
    for f in files {
        h.bytes(f.name.as_bytes());
    }
    format!("{:016x}", h.0)
}

/// The cached state if the cache exists, parses and matches `fingerprint`.
pub fn read(path: &Path, fingerprint: &str) -> Option<LedgerState> {
    // The cache is ralph's own file, but it lives in the repository: read it with the same
    // care (no links, no devices) and a generous bound.
    let bytes = crate::fsutil::read_regular(path, 256 << 20).ok()?;
    let cache: CacheFile = serde_json::from_slice(&bytes).ok()?;
    (cache.cache_version == CACHE_VERSION && cache.fingerprint == fingerprint)
        .then_some(cache.state)
}

/// Writes the cache atomically, without waiting for the disk: a cache lost in a crash is
/// rebuilt.
pub fn write(path: &Path, fingerprint: &str, state: &LedgerState) -> io::Result<()> {
    let cache = CacheFile {
        cache_version: CACHE_VERSION,
        fingerprint: fingerprint.to_owned(),
        state: state.clone(),
    };
    let bytes = serde_json::to_vec(&cache).map_err(io::Error::other)?;
    write_atomic_cache(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> FoldParams {
        FoldParams {
            bots: vec!["a".into()],
            weight_min: 0.05,
            weight_max: 0.6,
            pool: 10,
            seats: None,
        }
    }

    /// A listing of `names`, sorted as `EventStore::list` sorts it.
    fn listing(names: &[&str]) -> Vec<EventFile> {
        let mut files: Vec<EventFile> = names
            .iter()
            .map(|name| EventFile {
                name: (*name).to_owned(),
                utf8: true,
                regular: true,
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        files
    }

    #[test]
    fn the_names_fingerprint_is_the_same_for_the_same_names_and_parameters() {
        let names = ["2026-01-01-a-success.json", "2026-01-02-b-failure.json"];
        let base = fingerprint(&params(), &listing(&names));
        assert_eq!(base.len(), 16);
        assert_eq!(base, fingerprint(&params(), &listing(&names)));
        // Listed in another order, sorted the same: the same directory.
        assert_eq!(
            base,
            fingerprint(&params(), &listing(&[names[1], names[0]]))
        );
        // What the listing says about a file besides its name is not part of it.
        let mut other = listing(&names);
        other[0].regular = false;
        assert_eq!(base, fingerprint(&params(), &other));
    }

    #[test]
    fn the_names_fingerprint_changes_on_add_remove_rename_and_parameters() {
        let names = ["2026-01-01-a-success.json", "2026-01-02-b-failure.json"];
        let base = fingerprint(&params(), &listing(&names));
        let added = listing(&[names[0], names[1], "2026-01-03-a-success.json"]);
        assert_ne!(base, fingerprint(&params(), &added));
        assert_ne!(base, fingerprint(&params(), &listing(&names[..1])));
        assert_ne!(base, fingerprint(&params(), &listing(&[])));
        let renamed = listing(&[names[0], "2026-01-02-b-success.json"]);
        assert_ne!(base, fingerprint(&params(), &renamed));
        // Names run together differently are different names, whatever their length.
        let long = "2026-01-29T10-15-00-123456Z-smart_bot_1-success.json";
        for (a, b) in [
            ("ab", "c"),
            (&long[..9], &long[9..]),
            (&long[..16], &long[16..]),
        ] {
            assert_ne!(
                fingerprint(&params(), &listing(&[long])),
                fingerprint(&params(), &listing(&[a, b])),
                "{a} {b}"
            );
        }
        assert_ne!(
            fingerprint(&params(), &listing(&["ab", "c"])),
            fingerprint(&params(), &listing(&["a", "bc"]))
        );
        assert_ne!(
            fingerprint(&params(), &listing(&["a"])),
            fingerprint(&params(), &listing(&["a\0"]))
        );
        // One byte changed anywhere in a long name.
        for i in 0..long.len() {
            let mut changed = long.as_bytes().to_vec();
            changed[i] ^= 1;
            let changed = String::from_utf8(changed).unwrap();
            assert_ne!(
                fingerprint(&params(), &listing(&[long])),
                fingerprint(&params(), &listing(&[&changed])),
                "{changed}"
            );
        }
        let changes: [fn(&mut FoldParams); 4] = [
            |p| p.weight_max = 0.7,
            |p| p.weight_min = 0.01,
            |p| p.pool = 11,
            |p| p.bots.push("b".into()),
        ];
        for change in changes {
            let mut other = params();
            change(&mut other);
            assert_ne!(base, fingerprint(&other, &listing(&names)), "{other:?}");
        }
    }
}
