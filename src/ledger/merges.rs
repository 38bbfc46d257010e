//! What the maintainers made of a bot's pull requests, from the events `ralph follow` writes:
//! merged, closed without merge, reverted, revision rounds, and how long merging took. Pure:
//! one tally per bot, filled while the ledger is folded.

use super::event::Event;
use crate::market::Outcome;
use serde::{Deserialize, Serialize};

/// A bot's pull requests as they settled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeStats {
    pub merged: u32,
    pub closed_unmerged: u32,
    /// Merged, then reverted on the default branch (also counted in `merged`).
    pub reverted: u32,
    /// Revision rounds run on its pull requests (passed or failed).
    pub revision_rounds: u32,
    /// `merged / (merged + closed_unmerged)`; `None` before any pull request settled.
    pub merge_rate: Option<f64>,
    /// Mean revision rounds a merged pull request had.
    pub revisions_per_merge: Option<f64>,
    /// Median hours from opening to merging.
    pub median_hours_to_merge: Option<f64>,
}

impl MergeStats {
    /// Pull requests that settled (merged or closed without merge).
    pub fn settled(&self) -> u32 {
        self.merged + self.closed_unmerged
    }
}

/// Gathers one bot's after-the-pull-request events.
#[derive(Debug, Default)]
pub(super) struct MergeTally {
    merged: u32,
    closed: u32,
    reverted: u32,
    revision_rounds: u32,
    revisions_of_merged: u32,
    seconds_to_merge: Vec<u64>,
}

impl MergeTally {
    pub fn add(&mut self, event: &Event) {
        let pr = event.pull_request.as_ref();
        match event.outcome {
            Outcome::Merged => {
                self.merged += 1;
                self.revisions_of_merged += pr.map_or(0, |p| p.revisions);
                if let Some(s) = pr.and_then(|p| p.seconds_to_merge) {
                    self.seconds_to_merge.push(s);
                }
            }
            Outcome::ClosedUnmerged => self.closed += 1,
            Outcome::Reverted => self.reverted += 1,
            Outcome::RevisionSuccess | Outcome::RevisionFailure => self.revision_rounds += 1,
            _ => {}
        }
    }

    pub fn stats(&self) -> MergeStats {
        let settled = self.merged + self.closed;
        MergeStats {
            merged: self.merged,
            closed_unmerged: self.closed,
            reverted: self.reverted,
            revision_rounds: self.revision_rounds,
            merge_rate: (settled > 0).then(|| f64::from(self.merged) / f64::from(settled)),
            revisions_per_merge: (self.merged > 0)
                .then(|| f64::from(self.revisions_of_merged) / f64::from(self.merged)),
            median_hours_to_merge: median(&self.seconds_to_merge).map(|s| s / 3600.0),
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(values: &[u64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid] as f64
    } else {
        (v[mid - 1] as f64 + v[mid] as f64) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::PullRequestOutcome;

    fn event(outcome: Outcome, number: u64, secs: Option<u64>, revisions: u32) -> Event {
        let mut e = Event::new(1, "a", outcome, 0.0);
        e.pull_request = Some(PullRequestOutcome {
            number,
            seconds_to_merge: secs,
            revisions,
        });
        e
    }

    #[test]
    fn nothing_settled_has_no_rates() {
        let t = MergeTally::default();
        assert_eq!(t.stats(), MergeStats::default());
        assert_eq!(t.stats().settled(), 0);
    }

    #[test]
    fn rates_revisions_and_the_median_time() {
        let mut t = MergeTally::default();
        for e in [
            event(Outcome::Merged, 1, Some(3600), 0),
            event(Outcome::Merged, 2, Some(3 * 3600), 2),
            event(Outcome::Merged, 3, Some(10 * 3600), 1),
            event(Outcome::ClosedUnmerged, 4, None, 0),
            event(Outcome::Reverted, 2, None, 0),
            event(Outcome::RevisionSuccess, 2, None, 1),
            event(Outcome::RevisionFailure, 2, None, 2),
            event(Outcome::RevisionSuccess, 3, None, 1),
            // Not after the pull request: ignored.
            Event::new(1, "a", Outcome::Success, 0.1),
        ] {
            t.add(&e);
        }
        let s = t.stats();
        assert_eq!((s.merged, s.closed_unmerged, s.reverted), (3, 1, 1));
        assert_eq!(s.revision_rounds, 3);
        assert_eq!(s.merge_rate, Some(0.75));
        assert_eq!(s.revisions_per_merge, Some(1.0));
        assert_eq!(s.median_hours_to_merge, Some(3.0));
        assert_eq!(s.settled(), 4);
    }

    #[test]
    fn an_even_count_takes_the_middle_two() {
        assert_eq!(median(&[4, 1, 3, 2]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
