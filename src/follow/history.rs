//! What the ledger already says about a pull request and its issue (pure): which bot won the
//! issue (the pull request's outcomes go to it), which after-the-pull-request outcomes are
//! settled already, and how many revision rounds ran and failed. The ledger is the memory of
//! `follow`: nothing else is kept between runs, so two machines (or two Action runs) that share
//! the ledger agree.

use crate::ledger::Event;
use crate::market::Outcome;

/// The bot whose proposal the pull request of `issue` implements: the newest passing winner's
/// event of the issue (`success` or `replan_success`).
pub fn winner(events: &[Event], issue: u64) -> Option<String> {
    events
        .iter()
        .filter(|e| e.issue_number == issue && e.outcome.is_success())
        .max_by_key(|e| e.timestamp)
        .map(|e| e.bot_id.clone())
}

/// A pull request's history in the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullHistory {
    /// The after-the-pull-request outcomes written for it (each at most once, except revisions).
    pub settled: Vec<Outcome>,
    pub revisions: u32,
    pub revision_failures: u32,
}

/// The history of pull request `number`.
pub fn history(events: &[Event], number: u64) -> PullHistory {
    let mut h = PullHistory::default();
    for e in events
        .iter()
        .filter(|e| e.pull_request.as_ref().is_some_and(|p| p.number == number))
    {
        match e.outcome {
            Outcome::RevisionSuccess => h.revisions += 1,
            Outcome::RevisionFailure => {
                h.revisions += 1;
                h.revision_failures += 1;
            }
            o if !h.settled.contains(&o) => h.settled.push(o),
            _ => {}
        }
    }
    h
}

/// The issue a pull request's branch is for: `<prefix><N>-<slug>` (`ralph/12-add-a-flag`).
pub fn issue_of(branch: &str, prefix: &str) -> Option<u64> {
    let rest = branch.strip_prefix(prefix)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = &rest[digits.len()..];
    if digits.is_empty() || !(after.is_empty() || after.starts_with('-')) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::PullRequestOutcome;
    use chrono::{Duration, Utc};

    fn ev(issue: u64, bot: &str, outcome: Outcome, pr: Option<u64>, secs: i64) -> Event {
        let mut e = Event::new(issue, bot, outcome, 0.0);
        e.timestamp = Utc::now() + Duration::seconds(secs);
        e.pull_request = pr.map(|number| PullRequestOutcome {
            number,
            seconds_to_merge: None,
            revisions: 0,
        });
        e
    }

    #[test]
    fn the_winner_is_the_newest_passing_winner_of_the_issue() {
        let events = [
            ev(3, "a", Outcome::Failure, None, 0),
            ev(3, "b", Outcome::ReplanSuccess, None, 1),
            ev(3, "a", Outcome::NotSelected, None, 2),
            ev(4, "c", Outcome::Success, None, 3),
        ];
        assert_eq!(winner(&events, 3).as_deref(), Some("b"));
        assert_eq!(winner(&events, 4).as_deref(), Some("c"));
        assert_eq!(winner(&events, 5), None);
    }

    #[test]
    fn a_pull_requests_history_counts_its_own_events_only() {
        let events = [
            ev(3, "b", Outcome::RevisionFailure, Some(7), 0),
            ev(3, "b", Outcome::RevisionSuccess, Some(7), 1),
            ev(3, "b", Outcome::Merged, Some(7), 2),
            ev(3, "b", Outcome::Merged, Some(8), 2),
            ev(3, "b", Outcome::Success, None, 2),
        ];
        let h = history(&events, 7);
        assert_eq!(h.settled, [Outcome::Merged]);
        assert_eq!((h.revisions, h.revision_failures), (2, 1));
        assert_eq!(history(&events, 9), PullHistory::default());
    }

    #[test]
    fn branches_name_their_issue() {
        assert_eq!(issue_of("ralph/12-add-a-flag", "ralph/"), Some(12));
        assert_eq!(issue_of("ralph/12", "ralph/"), Some(12));
        assert_eq!(issue_of("ralph/12x-y", "ralph/"), None);
        assert_eq!(issue_of("feature/12-y", "ralph/"), None);
        assert_eq!(issue_of("ralph/-y", "ralph/"), None);
    }
}
