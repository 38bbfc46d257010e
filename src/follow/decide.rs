//! What `ralph follow` does with one pull request (pure): which outcomes to settle in the
//! ledger, and whether to run a revision round, wait for CI, escalate or leave it. Every
//! outcome is settled once per pull request — the ledger says what was settled already, so a
//! second `follow` adds nothing.

use crate::market::Outcome;
use crate::tracker::pulls::PullState;

/// What is known about a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub state: PullState,
    /// It carries `attention-needed`: a human has it.
    pub held: bool,
    /// The outcomes the ledger already has for it.
    pub settled: Vec<Outcome>,
    /// A commit on the base branch reverts its merge.
    pub reverted: bool,
    /// Revision rounds run on it so far, and how many of them failed.
    pub revisions: u32,
    pub revision_failures: u32,
    /// Feedback that asks for a change.
    pub requests: usize,
    /// CI checks the change broke.
    pub broken: usize,
    /// CI checks still running on the head.
    pub pending: usize,
    /// `[follow] max_revisions`.
    pub max_revisions: u32,
}

/// What to do besides settling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A revision round on the feedback and the broken checks.
    Revise,
    /// Wait for the pending checks (up to `[follow] wait_for_ci_secs`), then decide again.
    Wait,
    /// Hand it to a human: `attention-needed` on the pull request and its issue.
    Escalate(String),
    /// Nothing to do, and why.
    Leave(String),
}

/// The plan for one pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Outcomes to write now, in order.
    pub settle: Vec<Outcome>,
    pub action: Action,
}

/// Two failed revision rounds on a pull request are enough: a human takes over.
pub const MAX_REVISION_FAILURES: u32 = 2;

/// Decides what to do with a pull request.
pub fn plan(f: &Facts) -> Plan {
    let new = |o: Outcome| (!f.settled.contains(&o)).then_some(o);
    match f.state {
        PullState::Merged => {
            let settle: Vec<Outcome> = [
                new(Outcome::Merged),
                f.reverted.then(|| new(Outcome::Reverted)).flatten(),
            ]
            .into_iter()
            .flatten()
            .collect();
            let why = if f.reverted {
                "merged, then reverted"
            } else {
                "merged"
            };
            Plan {
                settle,
                action: Action::Leave(why.into()),
            }
        }
        PullState::Closed => Plan {
            settle: new(Outcome::ClosedUnmerged).into_iter().collect(),
            action: Action::Leave("closed without merging".into()),
        },
        PullState::Open => Plan {
            settle: Vec::new(),
            action: open_action(f),
        },
    }
}

fn open_action(f: &Facts) -> Action {
    if f.held {
        return Action::Leave("a human has it (`attention-needed`)".into());
    }
    let asked = f.requests > 0 || f.broken > 0;
    if asked {
        if let Some(why) = exhausted(f.revisions, f.revision_failures, f.max_revisions) {
            return Action::Escalate(why);
        }
        return Action::Revise;
    }
    if f.pending > 0 {
        return Action::Wait;
    }
    Action::Leave("no new feedback and no check the change broke".into())
}

/// Why no further revision round may run on a pull request, if so: the rounds are used up, or
/// two of them failed.
pub fn exhausted(revisions: u32, failures: u32, max: u32) -> Option<String> {
    if failures >= MAX_REVISION_FAILURES {
        return Some(format!(
            "{failures} revision rounds failed on this pull request"
        ));
    }
    if revisions >= max {
        return Some(format!(
            "the revision rounds are used up ({revisions} of `[follow] max_revisions` = {max})"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> Facts {
        Facts {
            state: PullState::Open,
            held: false,
            settled: Vec::new(),
            reverted: false,
            revisions: 0,
            revision_failures: 0,
            requests: 0,
            broken: 0,
            pending: 0,
            max_revisions: 3,
        }
    }

    #[test]
    fn a_merge_settles_once_and_a_revert_after_it_once() {
        let merged = Facts {
            state: PullState::Merged,
            ..open()
        };
        assert_eq!(plan(&merged).settle, [Outcome::Merged]);
        let again = Facts {
            settled: vec![Outcome::Merged],
            ..merged.clone()
        };
        assert_eq!(plan(&again).settle, []);
        let reverted = Facts {
            reverted: true,
            ..again.clone()
        };
        assert_eq!(plan(&reverted).settle, [Outcome::Reverted]);
        let both_new = Facts {
            reverted: true,
            ..merged.clone()
        };
        assert_eq!(plan(&both_new).settle, [Outcome::Merged, Outcome::Reverted]);
        let done = Facts {
            settled: vec![Outcome::Merged, Outcome::Reverted],
            reverted: true,
            ..merged
        };
        assert_eq!(plan(&done).settle, []);
        assert!(matches!(plan(&done).action, Action::Leave(_)));
    }

    #[test]
    fn a_close_settles_once_and_is_never_revised() {
        let closed = Facts {
            state: PullState::Closed,
            requests: 3,
            broken: 1,
            ..open()
        };
        let p = plan(&closed);
        assert_eq!(p.settle, [Outcome::ClosedUnmerged]);
        assert!(matches!(p.action, Action::Leave(_)));
        let again = Facts {
            settled: vec![Outcome::ClosedUnmerged],
            ..closed
        };
        assert_eq!(plan(&again).settle, []);
    }

    #[test]
    fn feedback_or_broken_ci_revises_until_the_limits() {
        for (requests, broken) in [(1, 0), (0, 1), (2, 2)] {
            let f = Facts {
                requests,
                broken,
                ..open()
            };
            assert_eq!(plan(&f).action, Action::Revise);
        }
        let used_up = Facts {
            requests: 1,
            revisions: 3,
            ..open()
        };
        assert!(matches!(&plan(&used_up).action, Action::Escalate(w) if w.contains("3 of")));
        let failed_twice = Facts {
            broken: 1,
            revisions: 2,
            revision_failures: 2,
            ..open()
        };
        assert!(
            matches!(&plan(&failed_twice).action, Action::Escalate(w) if w.contains("2 revision rounds failed"))
        );
        // Used up but nothing new asked: nothing to escalate.
        let quiet = Facts {
            revisions: 3,
            ..open()
        };
        assert!(matches!(plan(&quiet).action, Action::Leave(_)));
    }

    #[test]
    fn pending_checks_are_waited_for_and_a_held_pull_request_is_left_alone() {
        let pending = Facts {
            pending: 2,
            ..open()
        };
        assert_eq!(plan(&pending).action, Action::Wait);
        // Feedback does not wait for CI.
        let asked = Facts {
            requests: 1,
            ..pending
        };
        assert_eq!(plan(&asked).action, Action::Revise);
        let held = Facts {
            held: true,
            requests: 1,
            broken: 1,
            ..open()
        };
        assert!(matches!(&plan(&held).action, Action::Leave(w) if w.contains("attention-needed")));
        assert!(matches!(plan(&open()).action, Action::Leave(_)));
    }

    #[test]
    fn the_limits() {
        assert_eq!(exhausted(0, 0, 3), None);
        assert_eq!(exhausted(2, 1, 3), None);
        assert!(exhausted(1, 2, 3).is_some());
        assert!(exhausted(3, 0, 3).is_some());
        assert!(exhausted(0, 0, 0).is_some());
    }
}
