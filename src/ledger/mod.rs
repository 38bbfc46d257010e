//! The marketplace ledger (docs/specification.md §8): the append-only event log in
//! `.ralph/events/`, its fold into bot weights, efficiency and budgets, and the cache of the folded
//! state.
//!
//! `event`, `weights`, `budget`, `fold`, `merges` (what `ralph follow` settled) and `seats`
//! (the evidence a round's seats are drawn from) are pure;
//! `store` and `cache` do the file I/O.

pub mod backends;
mod budget;
mod cache;
pub mod decisions;
mod event;
mod fold;
mod merges;
pub mod samples;
pub mod seats;
mod stats;
mod store;
mod weights;

pub use crate::market::Phase;
pub use budget::allocate;
pub use event::{
    parse_event, valid_bot_id, AuditOutcome, Event, EventScores, JudgeOrder, Metrics,
    PullRequestOutcome, Tokens, SCHEMA_VERSION,
};
pub use fold::{
    efficiency, fold, ArbiterHealth, BotStanding, FoldParams, Folded, HistoryPoint, WeightHistory,
    HISTORY_LIMIT,
};
pub use merges::MergeStats;
pub use stats::{
    beta_cdf, beta_quantile, spearman, success_rate, update_ratings, BetaSummary, Rating,
};
pub use store::{EventFile, EventStore, Loaded, LoadedEvent, Skipped};
pub use weights::{effective_bounds, project};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// How many of the latest events the leaderboard shows.
const RECENT_LIMIT: usize = 10;

/// One line of the "recent events" list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventSummary {
    pub file: String,
    pub timestamp: DateTime<Utc>,
    pub issue_number: u64,
    pub bot_id: String,
    pub outcome: crate::market::Outcome,
    pub weight_delta: f64,
}

/// Everything the leaderboard shows: the fold plus the bookkeeping around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerState {
    /// Active bots by weight, then retired bots.
    pub bots: Vec<BotStanding>,
    pub total_budget_pool: u32,
    /// Number of valid events folded.
    pub event_count: u64,
    /// Files that could not be used, with the reason.
    pub skipped: Vec<Skipped>,
    /// The latest events, newest last.
    pub recent: Vec<EventSummary>,
    pub history: WeightHistory,
    pub arbiter_health: ArbiterHealth,
    /// The order flip rate and what the audited rounds say about selection.
    #[serde(default)]
    pub decisions: decisions::Decisions,
    /// With `[marketplace] seats`: the seats each bot won, its posterior and costs, the
    /// latest draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<seats::SeatBoard>,
}

/// Whether a state came from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// The cache matched: no event file was read.
    Hit,
    /// The events were loaded and folded; the cache was refreshed.
    Rebuilt,
    /// The events were loaded and folded; the cache could not be written (reason logged).
    Uncached,
}

/// The ledger of one repository: `.ralph/events/` and `.ralph/marketplace.json`.
#[derive(Debug, Clone)]
pub struct Ledger {
    ralph_dir: PathBuf,
    store: EventStore,
}

impl Ledger {
    /// The ledger under a `.ralph` directory.
    pub fn new(ralph_dir: impl Into<PathBuf>) -> Ledger {
        let ralph_dir = ralph_dir.into();
        Ledger {
            store: EventStore::new(ralph_dir.join("events")),
            ralph_dir,
        }
    }

    pub fn store(&self) -> &EventStore {
        &self.store
    }

    /// Every event file, in fold order (unusable ones in `skipped`); the error names the
    /// folder.
    pub fn load(&self) -> anyhow::Result<Loaded> {
        use anyhow::Context as _;
        self.store.load_all().with_context(|| {
            format!(
                "cannot read the event log in {}",
                self.store.dir().display()
            )
        })
    }

    /// `.ralph/marketplace.json`.
    pub fn cache_path(&self) -> PathBuf {
        self.ralph_dir.join("marketplace.json")
    }

    /// Folds a loaded event set into the leaderboard state.
    pub fn build_state(params: &FoldParams, loaded: &Loaded) -> LedgerState {
        let folded = fold(params, loaded.events.iter().map(|l| &l.event));
        let recent = loaded
            .events
            .iter()
            .rev()
            .take(RECENT_LIMIT)
            .rev()
            .map(|l| EventSummary {
                file: l.file.clone(),
                timestamp: l.event.timestamp,
                issue_number: l.event.issue_number,
                bot_id: l.event.bot_id.clone(),
                outcome: l.event.outcome,
                weight_delta: l.event.weight_delta,
            })
            .collect();
        LedgerState {
            bots: folded.bots,
            total_budget_pool: params.pool,
            event_count: folded.event_count,
            skipped: loaded.skipped.clone(),
            recent,
            history: folded.history,
            arbiter_health: folded.arbiter_health,
            decisions: decisions::decisions(loaded.events.iter().map(|l| &l.event)),
            seating: params.seats.map(|k| {
                let events: Vec<&Event> = loaded.events.iter().map(|l| &l.event).collect();
                seats::board(k, &crate::market::tables().seating, &params.bots, &events)
            }),
        }
    }

    /// The current state: from the cache when the event set and parameters are unchanged,
    /// otherwise loaded, folded and cached again. The cache is written only when the `.ralph`
    /// directory exists (ralph never creates it behind the user's back).
    ///
    /// "Unchanged" is judged by the file names alone (see `cache`): an unchanged ledger costs
    /// one directory listing and the cache's own read, however many events it holds.
    pub fn state(&self, params: &FoldParams) -> io::Result<(LedgerState, CacheUse)> {
        self.fold_state(params, true)
    }

    /// The state folded from every event file as it is now, ignoring the cache, which is then
    /// rewritten: `ralph leaderboard --rebuild`. The cache's fingerprint sees names only, so
    /// this is how an event file edited in place reaches the leaderboard.
    pub fn rebuild(&self, params: &FoldParams) -> io::Result<(LedgerState, CacheUse)> {
        self.fold_state(params, false)
    }

    fn fold_state(
        &self,
        params: &FoldParams,
        use_cache: bool,
    ) -> io::Result<(LedgerState, CacheUse)> {
        let files = self.store.list()?;
        let fp = cache::fingerprint(params, &files);
        let cache_path = self.cache_path();
        if use_cache {
            if let Some(state) = cache::read(&cache_path, &fp) {
                tracing::debug!(path = %cache_path.display(), "ledger cache hit");
                return Ok((state, CacheUse::Hit));
            }
        }
        let loaded = self.store.load(&files);
        let state = Self::build_state(params, &loaded);
        if !self.ralph_dir.is_dir() {
            return Ok((state, CacheUse::Uncached));
        }
        match cache::write(&cache_path, &fp, &state) {
            Ok(()) => Ok((state, CacheUse::Rebuilt)),
            Err(e) => {
                tracing::warn!(
                    "could not write the ledger cache {}: {e}",
                    cache_path.display()
                );
                Ok((state, CacheUse::Uncached))
            }
        }
    }

    /// Whether the cache the leaderboard would use for `files` holds the fold of `loaded`,
    /// their events as read just now: `ralph events verify`'s check that no event file was
    /// changed in place behind the cache.
    pub fn check_cache(
        &self,
        params: &FoldParams,
        files: &[EventFile],
        loaded: &Loaded,
    ) -> CacheCheck {
        let fp = cache::fingerprint(params, files);
        match cache::read(&self.cache_path(), &fp) {
            None => CacheCheck::Absent,
            Some(cached) if cached == Self::build_state(params, loaded) => CacheCheck::Current,
            Some(_) => CacheCheck::Stale,
        }
    }
}

/// How the cache compares with the event files (see [`Ledger::check_cache`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheCheck {
    /// No cache for these files and parameters: the next leaderboard folds them afresh.
    Absent,
    /// The cache holds exactly the fold of the files as they are.
    Current,
    /// The cache matches the file names but not their contents: a file was changed in place.
    Stale,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Outcome;
    use std::fs;

    fn params() -> FoldParams {
        FoldParams {
            bots: vec!["a".into(), "b".into()],
            weight_min: 0.05,
            weight_max: 0.6,
            pool: 20,
            seats: None,
        }
    }

    #[test]
    fn cache_is_reused_until_the_event_set_changes() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        ledger
            .store()
            .append(&Event::new(1, "a", Outcome::Success, 0.1))
            .unwrap();
        let (first, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Rebuilt);
        let (second, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Hit);
        assert_eq!(first, second);
        ledger
            .store()
            .append(&Event::new(1, "b", Outcome::Failure, -0.15))
            .unwrap();
        let (third, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Rebuilt);
        assert_eq!(third.event_count, 2);
        // Other parameters: not the same fold.
        let mut p = params();
        p.pool = 30;
        assert_eq!(ledger.state(&p).unwrap().1, CacheUse::Rebuilt);
        // A corrupt cache is simply rebuilt.
        fs::write(ledger.cache_path(), b"garbage").unwrap();
        assert_eq!(ledger.state(&p).unwrap().1, CacheUse::Rebuilt);
    }

    /// Rewrites the event file `name` in place with `weight_delta` changed, as a hand edit
    /// would.
    fn edit_in_place(ledger: &Ledger, name: &str, weight_delta: f64) {
        let path = ledger.store().dir().join(name);
        let mut event: Event = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        event.weight_delta = weight_delta;
        fs::write(&path, serde_json::to_vec_pretty(&event).unwrap()).unwrap();
    }

    #[test]
    fn the_cache_sees_names_only_and_rebuild_reads_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        let name = ledger
            .store()
            .append(&Event::new(1, "a", Outcome::Success, 0.1))
            .unwrap();
        let (before, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Rebuilt);
        let total_delta = |s: &LedgerState| s.bots.iter().map(|b| b.total_delta).sum::<f64>();
        assert_eq!(total_delta(&before), 0.1);

        // Edited in place: same name, so the cached fold is still used…
        edit_in_place(&ledger, &name, 0.3);
        let (cached, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Hit);
        assert_eq!(cached, before);
        // …until a rebuild, which reads every file and rewrites the cache.
        let (rebuilt, how) = ledger.rebuild(&params()).unwrap();
        assert_eq!(how, CacheUse::Rebuilt);
        assert_eq!(total_delta(&rebuilt), 0.3);
        let (after, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Hit);
        assert_eq!(after, rebuilt);
    }

    #[test]
    fn check_cache_tells_a_current_cache_from_a_stale_one() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path());
        let name = ledger
            .store()
            .append(&Event::new(1, "a", Outcome::Success, 0.1))
            .unwrap();
        let check = |p: &FoldParams| {
            let files = ledger.store().list().unwrap();
            ledger.check_cache(p, &files, &ledger.store().load(&files))
        };
        assert_eq!(check(&params()), CacheCheck::Absent);
        ledger.state(&params()).unwrap();
        assert_eq!(check(&params()), CacheCheck::Current);
        edit_in_place(&ledger, &name, 0.3);
        assert_eq!(check(&params()), CacheCheck::Stale);
        // Under other parameters the leaderboard would not use this cache at all.
        let mut other = params();
        other.pool = 30;
        assert_eq!(check(&other), CacheCheck::Absent);
        ledger.rebuild(&params()).unwrap();
        assert_eq!(check(&params()), CacheCheck::Current);
    }

    #[test]
    fn a_missing_ralph_directory_is_never_created() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(dir.path().join(".ralph"));
        let (state, how) = ledger.state(&params()).unwrap();
        assert_eq!(how, CacheUse::Uncached);
        assert_eq!(state.event_count, 0);
        assert!(!dir.path().join(".ralph").exists());
    }
}
