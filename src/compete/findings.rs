//! What the attempts came to ([`Attempts`], [`Passed`], [`Verdict`]) and what it means, decided
//! purely: why an attempt failed and what the next
//! attempt's prompt is told ([`findings`]), what a failed implementation tells the replan
//! ([`failure_of`]), and how many paths a note names.

use super::propose::{FailedCheck, FailureContext};
use super::round::Arrived;
use super::state::Failure;
use crate::checks::CheckKind;
use crate::verify::VerificationReport;
use std::collections::BTreeMap;

/// Which open checkboxes a passing change satisfies, and on whose word.
#[derive(Debug, Clone, Default)]
pub(super) struct Verdict {
    /// Id → evidence.
    pub satisfied: BTreeMap<String, String>,
    /// Id → why not, for the boxes the verify role found unsatisfied.
    pub unsatisfied: BTreeMap<String, String>,
    /// The verify role answered; otherwise the claims of the proposal and the implementer
    /// were used (and the report says so).
    pub by_verify_role: bool,
}

/// The attempt that passed.
pub(super) struct Passed {
    /// What the implementer said it did.
    pub summary: String,
    pub verdict: Verdict,
    /// The commit made on the branch.
    pub commit: String,
}

/// What the attempts came to.
#[derive(Default)]
pub(super) struct Attempts {
    pub passed: Option<Passed>,
    /// The passing attempt's verification, else the last one's.
    pub verification: Option<VerificationReport>,
    /// Attempts made.
    pub used: u32,
    /// A run cap stopped the attempts before the budget was spent.
    pub cap: Option<String>,
    /// The last failed attempt: its reasons and its diff (bounded).
    pub last_reasons: Vec<String>,
    pub last_diff: Option<String>,
    /// The verify role's reasons for the boxes it found unsatisfied, at the last attempt it
    /// was asked.
    pub unsatisfied: BTreeMap<String, String>,
    /// The last attempt failed only through the environment (a setup that failed, no check or
    /// test that could run): what is wrong with it.
    pub environment: Option<String>,
    /// The review role's judgement of the change (filled in after the attempts).
    pub review: crate::market::Review,
    /// The audit of the runner-up, when the round was audited (filled in after the review).
    pub audit: Option<crate::run_report::AuditReport>,
}

/// The first few of `paths`, and how many more.
pub(super) fn name_some(paths: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut out = paths[..paths.len().min(SHOWN)].join(", ");
    if paths.len() > SHOWN {
        out.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    out
}

/// What an attempt found, beside its verification.
pub(super) struct Found<'a> {
    pub verification: &'a VerificationReport,
    /// The implementer gave an answer.
    pub answered: bool,
    /// The native build's failure, with its output.
    pub native_failed: Option<String>,
    /// What the implementer, then the checks, changed in git's own files (restored).
    pub by_agent: Option<&'a str>,
    pub by_checks: Option<&'a str>,
}

/// Why an attempt failed (empty: it passed ralph's checks), and the named reasons beyond the
/// checks that the next attempt's prompt carries.
#[derive(Debug, PartialEq)]
pub(super) struct Findings {
    pub reasons: Vec<String>,
    pub other: Vec<(String, String)>,
}

/// An attempt's findings: the verification's reasons, a native build that failed, changes to
/// git's files, no answer, no change.
pub(super) fn findings(f: &Found<'_>) -> Findings {
    let mut reasons = f.verification.failure_reasons();
    let mut other: Vec<(String, String)> = Vec::new();
    if let Some(why) = &f.native_failed {
        // The change's own code did not build: its failure, with the build's output.
        reasons.push(
            why.lines()
                .next()
                .unwrap_or("the native build failed")
                .trim_end_matches(':')
                .to_owned(),
        );
        other.push(("native build".into(), why.clone()));
    }
    for (who, changes) in [("the implementer", f.by_agent), ("the checks", f.by_checks)] {
        if let Some(changes) = changes {
            reasons.push(format!(
                "{who} changed the repository's git directory: {changes} (restored)"
            ));
            other.push(("git directory".into(), changes.to_owned()));
        }
    }
    if !f.answered {
        reasons.insert(0, "the implementer gave no answer".into());
    }
    if f.verification.diff.files.is_empty() {
        other.push((
            "no change".into(),
            "the implementation changed nothing".into(),
        ));
    }
    Findings { reasons, other }
}

/// What a failed attempt tells the next: the failing checks and protected paths, and every
/// other reason ralph found.
pub(super) fn failures_for_prompt(
    v: Option<&VerificationReport>,
    other: &[(String, String)],
) -> Vec<FailedCheck> {
    let mut out: Vec<FailedCheck> = v
        .map(|v| {
            v.failing_checks()
                .map(|c| FailedCheck {
                    name: c.name.clone(),
                    output_tail: c.output_tail.clone(),
                })
                .chain(v.protected.iter().map(|f| FailedCheck {
                    name: format!("protected path {}", f.path),
                    output_tail: f.reason.clone(),
                }))
                .collect()
        })
        .unwrap_or_default();
    out.extend(other.iter().map(|(name, text)| FailedCheck {
        name: name.clone(),
        output_tail: text.clone(),
    }));
    out
}

/// What a failed implementation tells the replan, with its category (`tests`, `quality`…).
pub(super) fn failure_of(winner: &Arrived, attempts: &Attempts) -> Failure {
    let v = attempts
        .verification
        .clone()
        .unwrap_or_else(VerificationReport::none);
    let mut reasons = attempts.last_reasons.clone();
    if reasons.is_empty() {
        reasons = v.failure_reasons();
    }
    if reasons.is_empty() {
        reasons.push("the implementer produced no passing attempt".into());
    }
    let kind = if !v.protected.is_empty() {
        "protected_paths"
    } else if v.failing_checks().any(|c| c.kind == CheckKind::Test) {
        "tests"
    } else if v.failing_checks().next().is_some() {
        "quality"
    } else if v.coverage.dropped() {
        "coverage"
    } else if v.diff.files.is_empty() {
        "no_change"
    } else if !attempts.unsatisfied.is_empty() {
        "requirements"
    } else {
        "implementation"
    };
    Failure {
        context: FailureContext {
            failed_bot: winner.bot_id.clone(),
            proposal_summary: winner.proposal.approach_summary.clone(),
            kind: kind.into(),
            checks: v
                .failing_checks()
                .map(|c| FailedCheck {
                    name: c.name.clone(),
                    output_tail: c.output_tail.clone(),
                })
                .collect(),
        },
        proposal: winner.proposal.clone(),
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verification with one passing test and a one-file change.
    fn passing() -> VerificationReport {
        VerificationReport {
            checks: vec![crate::fixtures::passed_check(
                "test",
                CheckKind::Test,
                "sh test.sh",
            )],
            diff: crate::workspace::DiffStats {
                files: vec![crate::workspace::FileChange {
                    path: "lib.sh".into(),
                    status: "modified",
                    added: 3,
                    removed: 0,
                    added_lines: vec![],
                    removed_lines: vec![],
                }],
                lines_added: 3,
                lines_removed: 0,
            },
            ..VerificationReport::none()
        }
    }

    fn found(v: &VerificationReport) -> Found<'_> {
        Found {
            verification: v,
            answered: true,
            native_failed: None,
            by_agent: None,
            by_checks: None,
        }
    }

    #[test]
    fn a_clean_attempt_has_no_findings() {
        let v = passing();
        assert_eq!(
            findings(&found(&v)),
            Findings {
                reasons: vec![],
                other: vec![]
            }
        );
    }

    #[test]
    fn no_answer_comes_first_and_every_other_finding_is_named_for_the_next_attempt() {
        let v = passing();
        let f = findings(&Found {
            answered: false,
            native_failed: Some("error: command 'gcc' failed:\nx.c:3: error".into()),
            by_agent: Some(".git/hooks/pre-push was added"),
            by_checks: Some(".git/config was changed"),
            ..found(&v)
        });
        assert_eq!(
            f.reasons,
            [
                "the implementer gave no answer",
                "error: command 'gcc' failed",
                "the implementer changed the repository's git directory: .git/hooks/pre-push was added (restored)",
                "the checks changed the repository's git directory: .git/config was changed (restored)",
            ]
        );
        assert_eq!(
            f.other.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["native build", "git directory", "git directory"]
        );
    }

    #[test]
    fn an_empty_change_is_a_reason_and_told_to_the_next_attempt() {
        let v = VerificationReport {
            diff: Default::default(),
            ..passing()
        };
        let f = findings(&found(&v));
        assert!(f
            .reasons
            .contains(&"the implementation changed nothing".to_owned()));
        assert_eq!(
            f.other,
            [(
                "no change".to_owned(),
                "the implementation changed nothing".to_owned()
            )]
        );
    }
}
