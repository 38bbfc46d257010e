//! The folded-state cache, `.ralph/marketplace.json` (SPEC §8.3). It is reused only when the
//! fingerprint of the event directory (every event file's name, size and modification time)
//! and of the fold parameters is unchanged, so an unchanged ledger is never re-parsed.

use super::store::EventFile;
use super::{FoldParams, LedgerState};
use crate::fsutil::write_atomic;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// Bumped whenever the cached structure changes, so old caches are recomputed.
const CACHE_VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
struct CacheFile {
    cache_version: u32,
    fingerprint: String,
    state: LedgerState,
}

/// 64-bit FNV-1a: stable across builds and platforms, which `std`'s hasher is not.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// The fingerprint of a listing under given fold parameters.
pub fn fingerprint(params: &FoldParams, files: &[EventFile]) -> String {
    let mut h = Fnv::new();
    h.bytes(&CACHE_VERSION.to_le_bytes());
    h.bytes(env!("CARGO_PKG_VERSION").as_bytes());
    h.bytes(serde_json::to_string(params).unwrap_or_default().as_bytes());
    h.bytes(&(files.len() as u64).to_le_bytes());
    for f in files {
        h.bytes(f.name.as_bytes());
        h.bytes(&f.size.to_le_bytes());
        h.bytes(&f.mtime_ns.to_le_bytes());
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

/// Writes the cache atomically.
pub fn write(path: &Path, fingerprint: &str, state: &LedgerState) -> io::Result<()> {
    let cache = CacheFile {
        cache_version: CACHE_VERSION,
        fingerprint: fingerprint.to_owned(),
        state: state.clone(),
    };
    let bytes = serde_json::to_vec(&cache).map_err(io::Error::other)?;
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64, mtime_ns: i128) -> EventFile {
        EventFile {
            name: name.into(),
            size,
            mtime_ns,
        }
    }

    #[test]
    fn fingerprint_changes_with_any_file_attribute_or_parameter() {
        let params = FoldParams {
            bots: vec!["a".into()],
            weight_min: 0.05,
            weight_max: 0.6,
            pool: 10,
        };
        let base = fingerprint(&params, &[file("x.json", 10, 5)]);
        assert_eq!(base, fingerprint(&params, &[file("x.json", 10, 5)]));
        assert_ne!(base, fingerprint(&params, &[file("y.json", 10, 5)]));
        assert_ne!(base, fingerprint(&params, &[file("x.json", 11, 5)]));
        assert_ne!(base, fingerprint(&params, &[file("x.json", 10, 6)]));
        assert_ne!(base, fingerprint(&params, &[]));
        let mut other = params.clone();
        other.weight_max = 0.7;
        assert_ne!(base, fingerprint(&other, &[file("x.json", 10, 5)]));
        assert_ne!(
            fingerprint(&params, &[file("ab", 1, 1), file("c", 1, 1)]),
            fingerprint(&params, &[file("a", 1, 1), file("bc", 1, 1)])
        );
    }
}
