//! The implementation score (docs/specification.md §7, right-hand column): the same six dimensions
//! measured on what was actually built and verified, and the accuracy of the proposal's score,
//! `1 − |proposal − implementation|`.

use super::scoring::Explained;
use super::tables::{ImplementationParams, ScoringParams};
use super::{Dimension, Scores};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The facts of a verified implementation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verified {
    /// Checkboxes the winning proposal said it would address.
    pub addressed: BTreeSet<String>,
    /// Checkboxes the `verify` role confirmed with the checks' support.
    pub verified: BTreeSet<String>,
    /// Quality checks (format, lint, types, dead code) that ran: passed, total.
    pub quality: (usize, usize),
    /// Test checks that ran: passed, total.
    pub tests: (usize, usize),
    /// Coverage after minus before, when measured.
    pub coverage_delta: Option<f64>,
    /// Lines added plus removed, and the proposal's estimate.
    pub lines_changed: u64,
    pub lines_estimated: u64,
    /// Implementation attempts used, and the winner's budget.
    pub attempts_used: u32,
    pub budget: u32,
    /// The reviewer's innovation score of the diff and how well the consultations' concerns
    /// were addressed, or why there is none.
    pub review: Review,
}

/// The `review` role's judgement of the implemented change, or why there is none (then both
/// dimensions keep the neutral score).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Review {
    Scored {
        innovation: f64,
        innovation_reasoning: String,
        concerns_addressed: f64,
        concerns_reasoning: String,
    },
    Unavailable {
        reason: String,
    },
}

impl Default for Review {
    fn default() -> Review {
        Review::Unavailable {
            reason: "not asked".into(),
        }
    }
}

/// The implementation's six scores with explanations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImplementationScore {
    pub scores: Scores,
    pub total: f64,
    pub details: BTreeMap<&'static str, String>,
}

fn share((passed, total): (usize, usize), unknown: f64) -> (f64, String) {
    if total == 0 {
        (unknown, "none ran".into())
    } else {
        (passed as f64 / total as f64, format!("{passed}/{total}"))
    }
}

/// Scores an implementation.
pub fn score_implementation(
    v: &Verified,
    weights: &Scores,
    params: &ScoringParams,
) -> ImplementationScore {
    let p = &params.implementation;
    let unknown = p.unknown;
    let out: Vec<(Dimension, Explained)> = vec![
        (Dimension::SpecAlignment, spec_alignment(v)),
        (Dimension::TechnicalQuality, technical_quality(v, unknown)),
        (
            Dimension::Innovation,
            reviewed(&v.review, unknown, |r| match r {
                Review::Scored {
                    innovation,
                    innovation_reasoning,
                    ..
                } => (*innovation, innovation_reasoning),
                Review::Unavailable { .. } => (0.0, ""),
            }),
        ),
        (Dimension::Risk, risk(v, p)),
        (Dimension::Efficiency, efficiency(v, p)),
        (
            Dimension::SpecialistValidation,
            reviewed(&v.review, unknown, |r| match r {
                Review::Scored {
                    concerns_addressed,
                    concerns_reasoning,
                    ..
                } => (*concerns_addressed, concerns_reasoning),
                Review::Unavailable { .. } => (0.0, ""),
            }),
        ),
    ];

    let mut scores = Scores::default();
    let mut details = BTreeMap::new();
    for (d, e) in out {
        scores.set(d, e.value);
        details.insert(d.key(), e.detail);
    }
    ImplementationScore {
        total: scores.weighted_total(weights),
        scores,
        details,
    }
}

/// Spec alignment: the share of the checkboxes the proposal addressed that were verified (0
/// when it addressed none).
fn spec_alignment(v: &Verified) -> Explained {
    let hit = v.addressed.intersection(&v.verified).count();
    if v.addressed.is_empty() {
        Explained {
            value: 0.0,
            detail: "the proposal addressed no checkbox".into(),
        }
    } else {
        Explained {
            value: hit as f64 / v.addressed.len() as f64,
            detail: format!("{hit}/{} addressed checkboxes verified", v.addressed.len()),
        }
    }
}

/// Technical quality: the share of the quality checks that passed (`unknown` when none ran).
fn technical_quality(v: &Verified, unknown: f64) -> Explained {
    let (quality, qd) = share(v.quality, unknown);
    Explained {
        value: quality,
        detail: format!("quality checks passed: {qd}"),
    }
}

/// A dimension the `review` role scores: what `pick` takes from a scored review (clamped to
/// [0, 1]), else the neutral `unknown` with the reason there is no review.
fn reviewed(review: &Review, unknown: f64, pick: fn(&Review) -> (f64, &str)) -> Explained {
    match review {
        Review::Scored { .. } => {
            let (value, why) = pick(review);
            Explained {
                value: value.clamp(0.0, 1.0),
                detail: format!("reviewed on the diff: {why}"),
            }
        }
        Review::Unavailable { reason } => Explained {
            value: unknown,
            detail: format!("review unavailable ({reason}): neutral {unknown}"),
        },
    }
}

/// Risk: the share of the test checks that passed and whether coverage was kept, weighted by
/// `p`.
fn risk(v: &Verified, p: &ImplementationParams) -> Explained {
    let unknown = p.unknown;
    let (tests, td) = share(v.tests, unknown);
    let (kept, kd) = match v.coverage_delta {
        Some(d) if d >= 0.0 => (1.0, format!("coverage {d:+.2} kept")),
        Some(d) => (0.0, format!("coverage {d:+.2} dropped")),
        None => (unknown, "coverage not measured".into()),
    };
    Explained {
        value: p.tests * tests + p.coverage * kept,
        detail: format!("{}·tests {td} + {}·{kd}", p.tests, p.coverage),
    }
}

/// Efficiency: how close the change's size came to the estimate and how few of the budget's
/// attempts it took, weighted by `p`.
fn efficiency(v: &Verified, p: &ImplementationParams) -> Explained {
    let (est, act) = (v.lines_estimated as f64, v.lines_changed as f64);
    let size = if est.max(act) == 0.0 {
        1.0
    } else {
        est.min(act) / est.max(act)
    };
    let budget = v.budget.max(1) as f64;
    let used = v.attempts_used.max(1) as f64;
    let attempts = (1.0 - (used - 1.0) / budget).clamp(0.0, 1.0);
    Explained {
        value: p.size * size + p.attempts * attempts,
        detail: format!(
            "{}·size {act}/{est} lines + {}·attempts {used}/{budget}",
            p.size, p.attempts
        ),
    }
}

/// `1 − |proposal_score − implementation_score|`, in [0, 1].
pub fn accuracy(proposal_score: f64, implementation_score: f64) -> f64 {
    (1.0 - (proposal_score - implementation_score).abs()).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::tables;

    fn params() -> &'static ScoringParams {
        &tables().scoring
    }

    fn weights() -> Scores {
        tables().default_weights
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    fn base() -> Verified {
        Verified {
            addressed: set(&["req_1", "req_2"]),
            verified: set(&["req_1", "req_2"]),
            quality: (3, 3),
            tests: (1, 1),
            coverage_delta: Some(0.4),
            lines_changed: 50,
            lines_estimated: 50,
            attempts_used: 1,
            budget: 4,
            review: Review::Scored {
                innovation: 0.6,
                innovation_reasoning: "a table instead of branches".into(),
                concerns_addressed: 1.0,
                concerns_reasoning: "the timeout is handled".into(),
            },
        }
    }

    #[test]
    fn a_perfect_implementation_scores_by_the_table() {
        let s = score_implementation(&base(), &weights(), params());
        assert_eq!(s.scores.spec_alignment, 1.0);
        assert_eq!(s.scores.technical_quality, 1.0);
        assert_eq!(s.scores.innovation, 0.6);
        assert_eq!(
            s.details["innovation"],
            "reviewed on the diff: a table instead of branches"
        );
        assert_eq!(s.scores.risk, 1.0);
        assert_eq!(s.scores.efficiency, 1.0);
        assert_eq!(s.scores.specialist_validation, 1.0);
        // 0.30 + 0.20 + 0.15·0.6 + 0.20 + 0.10 + 0.05
        assert!((s.total - 0.94).abs() < 1e-12, "{}", s.total);
    }

    #[test]
    fn each_dimension_follows_its_formula() {
        let mut v = base();
        v.verified = set(&["req_1", "req_3"]); // req_3 was not addressed: does not count
        v.quality = (2, 4);
        v.tests = (3, 4);
        v.coverage_delta = Some(-0.1);
        v.lines_changed = 100; // estimate 50
        v.attempts_used = 3; // of 4
        v.review = Review::Unavailable {
            reason: "the arbiter timed out".into(),
        };
        let scored = score_implementation(&v, &weights(), params());
        assert_eq!(
            scored.details["innovation"],
            "review unavailable (the arbiter timed out): neutral 0.5"
        );
        let s = scored.scores;
        assert_eq!(s.spec_alignment, 0.5);
        assert_eq!(s.technical_quality, 0.5);
        assert_eq!(s.innovation, 0.5, "judge unavailable");
        assert!(
            (s.risk - 0.7 * 0.75).abs() < 1e-12,
            "coverage dropped: {}",
            s.risk
        );
        assert!((s.efficiency - (0.5 * 0.5 + 0.5 * 0.5)).abs() < 1e-12);
        assert_eq!(s.specialist_validation, 0.5);
    }

    #[test]
    fn nothing_to_measure_is_neutral_and_nothing_addressed_is_zero() {
        let mut v = base();
        v.quality = (0, 0);
        v.tests = (0, 0);
        v.coverage_delta = None;
        v.addressed.clear();
        v.lines_changed = 0;
        v.lines_estimated = 0;
        let s = score_implementation(&v, &weights(), params()).scores;
        assert_eq!(s.technical_quality, 0.5);
        assert!((s.risk - 0.5).abs() < 1e-12);
        assert_eq!(s.spec_alignment, 0.0);
        assert_eq!(s.efficiency, 1.0);
    }

    #[test]
    fn accuracy_is_one_minus_the_gap() {
        assert!((accuracy(0.8, 0.65) - 0.85).abs() < 1e-12);
        assert_eq!(accuracy(0.5, 0.5), 1.0);
        assert_eq!(accuracy(1.0, 0.0), 0.0);
    }
}
