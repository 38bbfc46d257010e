//! What `ralph tune` fits the scoring weights to (pure): each implemented proposal's six
//! proposal scores against an outcome. Two outcomes can be asked for:
//! - **merges**, the maintainers' verdict: a winner's pull request merged (and not reverted)
//!   or not (closed unmerged, or reverted), from the events `ralph follow` writes, each joined
//!   with the winner's round event of the issue that holds its proposal scores;
//! - **checks**, ralph's own verdict: every implemented proposal that passed or failed its
//!   checks — the winners, and the runner-ups of audited rounds.
//!
//! Merges are the real outcome; they are used once at least [`MIN_OUTCOMES`] pull requests have
//! settled with [`MIN_PER_CLASS`] of each kind, else the checks are.

use super::event::Event;
use crate::market::tune::{Sample, MIN_OUTCOMES, MIN_PER_CLASS};
use crate::market::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which outcome the samples are about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Merged or not, by the maintainers.
    Merges,
    /// Passed or failed ralph's checks.
    Checks,
}

/// The samples `tune` fits, and why that basis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chosen {
    pub basis: Basis,
    #[serde(skip)]
    pub samples: Vec<Sample>,
    /// Pull requests settled with a winner's scores to join (merged or not).
    pub settled_pull_requests: usize,
    pub why: String,
}

/// Every implemented proposal against passing ralph's checks.
fn check_samples(events: &[Event]) -> Vec<Sample> {
    events
        .iter()
        .filter(|e| e.outcome.is_implementation())
        .flat_map(|e| {
            let winner = e.scores.as_ref().map(|s| Sample {
                scores: s.proposal,
                passed: e.outcome.is_success(),
            });
            let runner_up = e.audit.as_ref().and_then(|a| {
                a.proposal_scores.map(|scores| Sample {
                    scores,
                    passed: a.passed,
                })
            });
            winner.into_iter().chain(runner_up)
        })
        .collect()
}

/// Every settled pull request against being merged and kept: its winner's proposal scores (the
/// newest passing winner's event of the issue by that bot) and whether it was merged and not
/// reverted.
fn merge_samples(events: &[Event]) -> Vec<Sample> {
    // Pull request → (issue, bot, merged, reverted, closed).
    let mut prs: BTreeMap<u64, (u64, &str, bool, bool, bool)> = BTreeMap::new();
    for e in events {
        let Some(pr) = &e.pull_request else { continue };
        let entry =
            prs.entry(pr.number)
                .or_insert((e.issue_number, &e.bot_id, false, false, false));
        match e.outcome {
            Outcome::Merged => entry.2 = true,
            Outcome::Reverted => entry.3 = true,
            Outcome::ClosedUnmerged => entry.4 = true,
            _ => {}
        }
    }
    prs.values()
        .filter(|(_, _, merged, _, closed)| *merged || *closed)
        .filter_map(|&(issue, bot, merged, reverted, _)| {
            let scores = events
                .iter()
                .filter(|e| e.issue_number == issue && e.bot_id == bot && e.outcome.is_success())
                .max_by_key(|e| e.timestamp)?
                .scores
                .as_ref()?
                .proposal;
            Some(Sample {
                scores,
                passed: merged && !reverted,
            })
        })
        .collect()
}

/// Merges where enough pull requests have settled, else ralph's checks.
pub fn choose(events: &[Event]) -> Chosen {
    let merges = merge_samples(events);
    let merged = merges.iter().filter(|s| s.passed).count();
    let not = merges.len() - merged;
    let settled = merges.len();
    if settled >= MIN_OUTCOMES && merged >= MIN_PER_CLASS && not >= MIN_PER_CLASS {
        return Chosen {
            basis: Basis::Merges,
            samples: merges,
            settled_pull_requests: settled,
            why: format!(
                "fitted to merges: {settled} settled pull requests ({merged} merged and kept, {not} not)"
            ),
        };
    }
    Chosen {
        basis: Basis::Checks,
        samples: check_samples(events),
        settled_pull_requests: settled,
        why: format!(
            "fitted to ralph's checks: only {settled} pull requests have settled ({merged} merged and kept, {not} not); merges are used from {MIN_OUTCOMES} with {MIN_PER_CLASS} of each"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{EventScores, PullRequestOutcome};
    use crate::market::Scores;
    use chrono::{Duration, Utc};

    fn scores(x: f64) -> Scores {
        Scores {
            spec_alignment: x,
            technical_quality: x,
            innovation: x,
            risk: x,
            efficiency: x,
            specialist_validation: x,
        }
    }

    fn won(issue: u64, bot: &str, x: f64, t: i64) -> Event {
        let mut e = Event::new(issue, bot, Outcome::Success, 0.1);
        e.timestamp = Utc::now() + Duration::seconds(t);
        e.scores = Some(EventScores {
            proposal: scores(x),
            implementation: None,
        });
        e
    }

    fn after(issue: u64, bot: &str, outcome: Outcome, pr: u64) -> Event {
        let mut e = Event::new(issue, bot, outcome, 0.0);
        e.pull_request = Some(PullRequestOutcome {
            number: pr,
            seconds_to_merge: None,
            revisions: 0,
        });
        e
    }

    #[test]
    fn a_merge_joins_its_winners_scores_and_a_revert_makes_it_a_miss() {
        let events = vec![
            won(1, "a", 0.2, 0),
            won(1, "a", 0.9, 5),
            won(2, "b", 0.4, 0),
            won(3, "c", 0.6, 0),
            after(1, "a", Outcome::Merged, 11),
            after(2, "b", Outcome::Merged, 12),
            after(2, "b", Outcome::Reverted, 12),
            after(3, "c", Outcome::ClosedUnmerged, 13),
            // Open, only revised: not settled.
            after(3, "c", Outcome::RevisionSuccess, 14),
        ];
        let s = merge_samples(&events);
        assert_eq!(
            s.iter()
                .map(|s| (s.scores.innovation, s.passed))
                .collect::<Vec<_>>(),
            [(0.9, true), (0.4, false), (0.6, false)]
        );
    }

    #[test]
    fn merges_are_chosen_only_with_enough_of_each() {
        let mut events = Vec::new();
        for i in 0..MIN_OUTCOMES as u64 {
            events.push(won(i, "a", 0.5, 0));
            let o = if i < MIN_PER_CLASS as u64 - 1 {
                Outcome::ClosedUnmerged
            } else {
                Outcome::Merged
            };
            events.push(after(i, "a", o, 100 + i));
        }
        let c = choose(&events);
        assert_eq!(c.basis, Basis::Checks, "{}", c.why);
        assert!(c.why.contains("only 30 pull requests"), "{}", c.why);
        assert_eq!(
            c.samples.len(),
            MIN_OUTCOMES,
            "every winner passed its checks"
        );
        events.push(won(99, "a", 0.5, 0));
        events.push(after(99, "a", Outcome::ClosedUnmerged, 999));
        let c = choose(&events);
        assert_eq!(c.basis, Basis::Merges, "{}", c.why);
        assert_eq!(c.samples.len(), MIN_OUTCOMES + 1);
        assert_eq!(
            c.samples.iter().filter(|s| !s.passed).count(),
            MIN_PER_CLASS
        );
    }
}
