//! The outcomes a bot can be credited with after a round (docs/specification.md §8.1). The
//! outcome's word is the last part of an event's file name and selects the weight delta in
//! `scoring/deltas.toml`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What happened to one bot in one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Winner whose implementation passed verification.
    Success,
    /// Another bot with a valid proposal, in a round that succeeded.
    NotSelected,
    /// Winner of an initial round whose implementation failed.
    Failure,
    /// Winner of a replan round whose implementation passed.
    ReplanSuccess,
    /// Winner of a replan round whose implementation failed.
    ReplanFailure,
    /// Every bot, when the replan round failed as well.
    CollectiveFailure,
    /// A failed bot that resubmitted the same proposal in the replan round.
    ResubmittedSame,
    /// After the pull request: the winning bot's pull request was merged.
    Merged,
    /// After the pull request: it was closed without being merged.
    ClosedUnmerged,
    /// After the pull request: a later commit on the default branch reverted its merge.
    Reverted,
    /// A revision round on the pull request (review feedback, failing CI) passed and was pushed.
    RevisionSuccess,
    /// A revision round on the pull request failed.
    RevisionFailure,
}

impl Outcome {
    /// Every outcome, in the order of docs/specification.md §8.1.
    pub const ALL: [Outcome; 12] = [
        Outcome::Success,
        Outcome::NotSelected,
        Outcome::Failure,
        Outcome::ReplanSuccess,
        Outcome::ReplanFailure,
        Outcome::CollectiveFailure,
        Outcome::ResubmittedSame,
        Outcome::Merged,
        Outcome::ClosedUnmerged,
        Outcome::Reverted,
        Outcome::RevisionSuccess,
        Outcome::RevisionFailure,
    ];

    /// The word used in event files and in `scoring/deltas.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::NotSelected => "not_selected",
            Outcome::Failure => "failure",
            Outcome::ReplanSuccess => "replan_success",
            Outcome::ReplanFailure => "replan_failure",
            Outcome::CollectiveFailure => "collective_failure",
            Outcome::ResubmittedSame => "resubmitted_same",
            Outcome::Merged => "merged",
            Outcome::ClosedUnmerged => "closed_unmerged",
            Outcome::Reverted => "reverted",
            Outcome::RevisionSuccess => "revision_success",
            Outcome::RevisionFailure => "revision_failure",
        }
    }

    /// A selected bot whose implementation passed: counts as a success for efficiency.
    pub fn is_success(self) -> bool {
        matches!(self, Outcome::Success | Outcome::ReplanSuccess)
    }

    /// A selected bot whose implementation failed: counts as a failure for efficiency.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failure | Outcome::ReplanFailure)
    }

    /// The bot was selected and its proposal was implemented (passed or failed).
    pub fn is_implementation(self) -> bool {
        self.is_success() || self.is_failure()
    }

    /// What happened after the pull request (`ralph follow`): the maintainers' verdict
    /// (merged, closed, reverted) or a revision round. Not a round's placing, and not counted in
    /// the efficiency of ralph's own checks.
    pub fn is_after_pull_request(self) -> bool {
        matches!(
            self,
            Outcome::Merged
                | Outcome::ClosedUnmerged
                | Outcome::Reverted
                | Outcome::RevisionSuccess
                | Outcome::RevisionFailure
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Outcome {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<_> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "unknown outcome `{s}` (expected one of: {})",
                    known.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_serde_and_from_str() {
        for outcome in Outcome::ALL {
            let json = serde_json::to_string(&outcome).unwrap();
            assert_eq!(json, format!("\"{}\"", outcome.as_str()));
            assert_eq!(outcome.as_str().parse::<Outcome>().unwrap(), outcome);
        }
        assert!("won"
            .parse::<Outcome>()
            .unwrap_err()
            .contains("replan_success"));
    }

    #[test]
    fn success_and_failure_classes_are_disjoint() {
        let successes: Vec<_> = Outcome::ALL
            .into_iter()
            .filter(|o| o.is_success())
            .collect();
        let failures: Vec<_> = Outcome::ALL
            .into_iter()
            .filter(|o| o.is_failure())
            .collect();
        assert_eq!(successes, [Outcome::Success, Outcome::ReplanSuccess]);
        assert_eq!(failures, [Outcome::Failure, Outcome::ReplanFailure]);
        assert!(!Outcome::NotSelected.is_implementation());
        assert!(!Outcome::CollectiveFailure.is_implementation());
        let after: Vec<_> = Outcome::ALL
            .into_iter()
            .filter(|o| o.is_after_pull_request())
            .collect();
        assert_eq!(after.len(), 5);
        assert!(after.iter().all(|o| !o.is_implementation()));
    }
}
