//! Blinding and ranking (docs/specification.md §6 steps 4–5): the round's proposals are shuffled
//! with a per-round seed and labelled `proposal_1…K`, so the judge never sees which bot wrote
//! which; the ranking orders them by total score, ties to the earlier submission, and says when
//! every proposal is below the human-review threshold.

use crate::mix::SplitMix64;
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The blind order of `count` proposals: element `i` is the index (into the submitted list)
/// of the proposal labelled `proposal_{i+1}`. A Fisher–Yates shuffle seeded by `seed`.
pub fn blind_order(count: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    // The shuffle is reproducible from its seed, which the run records.
    let mut rng = SplitMix64::new(seed);
    for i in (1..count).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// The blind label of position `i` (0-based).
pub fn blind_label(i: usize) -> String {
    format!("proposal_{}", i + 1)
}

/// What the ranking needs of a proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub proposal_id: String,
    pub total: f64,
    pub submitted_at: DateTime<Utc>,
}

/// The round's ranking.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranking {
    /// Proposal ids, best first.
    pub order: Vec<String>,
    /// Every proposal scored below the threshold (or there were none): a human must decide.
    pub human_review: bool,
}

impl Ranking {
    /// The winner, unless the round goes to human review.
    pub fn winner(&self) -> Option<&str> {
        if self.human_review {
            None
        } else {
            self.order.first().map(String::as_str)
        }
    }
}

/// Totals closer than this are equal (floating-point sums of the same scores in another order).
const TIE: f64 = 1e-9;

/// Ranks by total (higher first); equal totals go to the earlier submission, then to the lower
/// proposal id, so the order is total.
pub fn rank(entries: &[Entry], human_review_below: f64) -> Ranking {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        if (a.total - b.total).abs() > TIE {
            b.total.total_cmp(&a.total)
        } else {
            a.submitted_at
                .cmp(&b.submitted_at)
                .then_with(|| a.proposal_id.cmp(&b.proposal_id))
        }
    });
    Ranking {
        human_review: entries.iter().all(|e| e.total < human_review_below),
        order: sorted.iter().map(|e| e.proposal_id.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn entry(id: &str, total: f64, secs: i64) -> Entry {
        Entry {
            proposal_id: id.into(),
            total,
            submitted_at: at(secs),
        }
    }

    #[test]
    fn higher_total_wins_and_ties_go_to_the_earlier_submission() {
        let r = rank(
            &[
                entry("proposal_1", 0.70, 5),
                entry("proposal_2", 0.80, 9),
                entry("proposal_3", 0.70, 1),
            ],
            0.5,
        );
        assert_eq!(r.order, ["proposal_2", "proposal_3", "proposal_1"]);
        assert_eq!(r.winner(), Some("proposal_2"));
        // A tie within floating-point noise is still a tie.
        let r = rank(
            &[
                entry("proposal_1", 0.1 + 0.2 + 0.4, 3),
                entry("proposal_2", 0.7, 2),
            ],
            0.5,
        );
        assert_eq!(r.order, ["proposal_2", "proposal_1"]);
        // Same total, same time: the lower id, so the order never depends on input order.
        let a = rank(
            &[entry("proposal_2", 0.6, 1), entry("proposal_1", 0.6, 1)],
            0.5,
        );
        assert_eq!(a.order, ["proposal_1", "proposal_2"]);
    }

    #[test]
    fn all_below_the_threshold_is_human_review() {
        let r = rank(
            &[entry("proposal_1", 0.49, 0), entry("proposal_2", 0.3, 0)],
            0.5,
        );
        assert!(r.human_review);
        assert_eq!(r.winner(), None);
        let r = rank(
            &[entry("proposal_1", 0.5, 0), entry("proposal_2", 0.3, 0)],
            0.5,
        );
        assert!(!r.human_review, "exactly 0.5 is not below 0.5");
        assert!(rank(&[], 0.5).human_review);
    }

    #[test]
    fn blind_order_is_a_seeded_permutation() {
        for n in 0..8 {
            let mut o = blind_order(n, 42);
            assert_eq!(o, blind_order(n, 42), "same seed, same order");
            o.sort_unstable();
            assert_eq!(o, (0..n).collect::<Vec<_>>());
        }
        let orders: std::collections::BTreeSet<Vec<usize>> =
            (0..200).map(|seed| blind_order(4, seed)).collect();
        assert_eq!(orders.len(), 24, "every order of 4 occurs over 200 seeds");
        assert_eq!(blind_label(0), "proposal_1");
    }
}
