//! The project's CI on a pull request, judged (pure): a check that fails on the head and passed
//! on the base — or did not run there — is the change's failure and feeds a revision round; a
//! check failing on both is not the change's fault; pending checks are waited for up to a
//! limit. And the excerpt of a failing job's log the implementer is shown: bounded, the lines
//! that name a failure kept.

use crate::tracker::pulls::{CiCheck, CiState};

/// The most characters of one job's log excerpt.
pub const MAX_EXCERPT_CHARS: usize = 6_000;
/// Lines kept from the end of a log (where runners print the summary).
const TAIL_LINES: usize = 40;
/// Lines kept that name a failure, from anywhere in the log.
const MAX_FAILURE_LINES: usize = 40;

/// What the head's checks come to against the base's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Failing on the head, passing on the base or absent there: the change's.
    pub broken: Vec<CiCheck>,
    /// Failing on both: not the change's fault.
    pub failing_on_base: Vec<String>,
    /// Still running on the head.
    pub pending: Vec<String>,
}

/// Compares the head's checks with the base's. A name that appears more than once (a check
/// re-run) counts by its worst state on the head and its best on the base.
pub fn judge(head: &[CiCheck], base: &[CiCheck]) -> Judged {
    let mut out = Judged::default();
    let mut names: Vec<&str> = head.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let on_head: Vec<&CiCheck> = head.iter().filter(|c| c.name == name).collect();
        let passed_on_base = base
            .iter()
            .any(|c| c.name == name && c.state == CiState::Passed);
        let failed_on_base = base
            .iter()
            .any(|c| c.name == name && c.state == CiState::Failed);
        if let Some(failed) = on_head.iter().find(|c| c.state == CiState::Failed) {
            if failed_on_base && !passed_on_base {
                out.failing_on_base.push(name.to_owned());
            } else {
                out.broken.push((*failed).clone());
            }
        } else if on_head.iter().any(|c| c.state == CiState::Pending) {
            out.pending.push(name.to_owned());
        }
    }
    out
}

/// The part of a job log the implementer needs: the lines that name a failure (a failing test,
/// an error, an assertion) and the log's end, without the runner's timestamps, bounded.
pub fn excerpt(log: &str) -> String {
    let lines: Vec<&str> = log.lines().map(strip_timestamp).collect();
    let tail_from = lines.len().saturating_sub(TAIL_LINES);
    let mut keep = vec![false; lines.len()];
    let mut failures = 0;
    for (i, l) in lines.iter().enumerate() {
        if failures < MAX_FAILURE_LINES && names_a_failure(l) {
            keep[i] = true;
            failures += 1;
        }
    }
    keep.iter_mut().skip(tail_from).for_each(|k| *k = true);
    let mut out = String::new();
    let mut skipped = false;
    for (l, k) in lines.iter().zip(&keep) {
        if *k {
            if skipped {
                out.push_str("…\n");
                skipped = false;
            }
            out.push_str(l);
            out.push('\n');
        } else {
            skipped = true;
        }
    }
    let out = crate::spec::strip_for_prompt(&out);
    // The end says most: a bounded excerpt keeps it.
    let n = out.chars().count();
    if n <= MAX_EXCERPT_CHARS {
        out
    } else {
        std::iter::once('…')
            .chain(out.chars().skip(n - MAX_EXCERPT_CHARS))
            .collect()
    }
}

/// GitHub Actions prefixes each line with an ISO timestamp (`2026-11-20T10:00:00.1234567Z`)
/// and a space.
fn strip_timestamp(line: &str) -> &str {
    let Some((stamp, rest)) = line.split_once(' ') else {
        return line;
    };
    let b = stamp.as_bytes();
    let stamped = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && stamp.ends_with('Z')
        && b[..4].iter().all(u8::is_ascii_digit);
    if stamped {
        rest
    } else {
        line
    }
}

fn names_a_failure(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    [
        "failed",
        "failure",
        "error",
        "assert",
        "panicked",
        "traceback",
        "##[error]",
    ]
    .iter()
    .any(|w| l.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, state: CiState) -> CiCheck {
        CiCheck {
            name: name.into(),
            state,
            job: Some(1),
            url: None,
            log: None,
        }
    }

    #[test]
    fn failing_only_on_the_head_is_the_changes_and_failing_on_both_is_not() {
        let head = [
            check("test (3.12)", CiState::Failed),
            check("lint", CiState::Failed),
            check("docs", CiState::Pending),
            check("build", CiState::Passed),
            check("new-job", CiState::Failed),
        ];
        let base = [
            check("test (3.12)", CiState::Passed),
            check("lint", CiState::Failed),
            check("docs", CiState::Passed),
        ];
        let j = judge(&head, &base);
        let broken: Vec<&str> = j.broken.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(broken, ["new-job", "test (3.12)"]);
        assert_eq!(j.failing_on_base, ["lint"]);
        assert_eq!(j.pending, ["docs"]);
    }

    #[test]
    fn a_rerun_counts_by_its_worst_head_and_best_base() {
        let head = [check("t", CiState::Passed), check("t", CiState::Failed)];
        let base = [check("t", CiState::Failed), check("t", CiState::Passed)];
        assert_eq!(judge(&head, &base).broken.len(), 1);
        assert_eq!(
            judge(&[check("t", CiState::Passed)], &[]),
            Judged::default()
        );
    }

    #[test]
    fn the_excerpt_keeps_failures_and_the_end_without_timestamps() {
        let mut log = String::new();
        for i in 0..200 {
            log.push_str(&format!("2026-11-20T10:00:00.0000000Z line {i}\n"));
            if i == 50 {
                log.push_str(
                    "2026-11-20T10:00:00.0000000Z FAILED tests/test_greet.py::test_empty - AssertionError\n",
                );
            }
        }
        let e = excerpt(&log);
        assert!(
            e.starts_with("…\nFAILED tests/test_greet.py::test_empty - AssertionError\n…\n"),
            "{e}"
        );
        assert!(e.ends_with("line 199\n"));
        assert!(!e.contains("2026-11-20T"));
        assert!(!e.contains("line 100\n"));
    }

    #[test]
    fn a_huge_log_is_bounded() {
        let log = format!("{}\n", "error ".repeat(50_000));
        assert!(excerpt(&log).chars().count() <= MAX_EXCERPT_CHARS + 1);
    }
}
