//! Scoring a proposal (docs/specification.md §7, left-hand column): the four deterministic
//! dimensions computed from the proposal and the requirements with the formulas and constants of
//! `scoring/proposal.toml` and `scoring/specialists.toml`, the two subjective ones from the
//! judge, and the weighted total. Every score comes with a one-line explanation of how it was
//! computed, so the ranking can be checked by hand.

use super::tables::{ScoringParams, Specialist};
use super::{Dimension, Proposal, Scores};
use crate::spec::Requirements;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a proposal is measured against: the round's open work.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Targets {
    /// Ids of the checkboxes not yet checked.
    pub open_checkboxes: BTreeSet<String>,
    /// The components of the open checkboxes, normalised with [`normalise_text`].
    pub components: BTreeSet<String>,
    /// Ids of the implicit requirements.
    pub implicit: BTreeSet<String>,
}

impl Targets {
    pub fn from_requirements(reqs: &Requirements) -> Targets {
        Targets {
            open_checkboxes: reqs.open().map(|r| r.id.clone()).collect(),
            components: reqs
                .open()
                .flat_map(|r| r.components.iter().map(|c| normalise_text(c)))
                .filter(|c| !c.is_empty())
                .collect(),
            implicit: reqs
                .implicit_requirements
                .iter()
                .map(|r| r.id.clone())
                .collect(),
        }
    }
}

/// Lower-case words of letters and digits joined by single spaces: the form in which texts
/// are compared (components, resubmissions).
pub fn normalise_text(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One dimension's score and how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explained {
    pub value: f64,
    pub detail: String,
}

/// `n / (n + half)`: 0 for nothing, 0.5 at `half`, approaching but never reaching 1.
fn saturate(n: f64, half: f64) -> f64 {
    if n <= 0.0 {
        0.0
    } else {
        n / (n + half)
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Spec alignment: `0.5·checkboxes + 0.3·components + 0.2·implicit` (weights from the
/// table), each a share of what is open; a share with nothing to count drops out and the
/// remaining weights are re-normalised. Nothing to count at all gives 0.
pub fn spec_alignment(p: &Proposal, t: &Targets, params: &ScoringParams) -> Explained {
    let w = &params.spec_alignment;
    let a = &p.spec_alignment;
    let boxes = a
        .checkboxes_addressed
        .iter()
        .filter(|id| t.open_checkboxes.contains(*id))
        .collect::<BTreeSet<_>>()
        .len();
    let named: BTreeSet<String> = a
        .components_addressed
        .iter()
        .map(|c| normalise_text(c))
        .collect();
    let comps = t.components.iter().filter(|c| named.contains(*c)).count();
    let implicit = a
        .implicit_requirements_addressed
        .iter()
        .filter(|id| t.implicit.contains(*id))
        .collect::<BTreeSet<_>>()
        .len();
    let terms = [
        ("checkboxes", w.checkboxes, boxes, t.open_checkboxes.len()),
        ("components", w.components, comps, t.components.len()),
        ("implicit", w.implicit, implicit, t.implicit.len()),
    ];
    let mut weight_sum = 0.0;
    let mut sum = 0.0;
    let mut parts = Vec::new();
    for (name, weight, hit, of) in terms {
        if of == 0 {
            parts.push(format!("{name} n/a"));
            continue;
        }
        weight_sum += weight;
        sum += weight * hit as f64 / of as f64;
        parts.push(format!("{weight}·{name} {hit}/{of}"));
    }
    let value = if weight_sum > 0.0 {
        sum / weight_sum
    } else {
        0.0
    };
    let renorm = if weight_sum > 0.0 && (weight_sum - 1.0).abs() > 1e-9 {
        format!(" ÷ {}", round3(weight_sum))
    } else {
        String::new()
    };
    Explained {
        value,
        detail: format!("{}{renorm}", parts.join(" + ")),
    }
}

/// Risk: `1 − (files·n/(n+half) + breaking·[breaking changes] + security·[security-critical
/// without mitigation])`, n = distinct paths in `files_affected`.
pub fn risk(p: &Proposal, params: &ScoringParams) -> Explained {
    let r = &params.risk;
    let files = p.paths().len() as f64;
    let breaking = p.risk_assessment.breaking_changes;
    let unmitigated =
        p.risk_assessment.security_critical && p.risk_assessment.mitigation.trim().is_empty();
    let factors = r.files * saturate(files, r.files_half)
        + if breaking { r.breaking } else { 0.0 }
        + if unmitigated {
            r.unmitigated_security
        } else {
            0.0
        };
    Explained {
        value: (1.0 - factors).clamp(0.0, 1.0),
        detail: format!(
            "1 − ({}·{files}/({files}+{}){}{})",
            r.files,
            r.files_half,
            if breaking {
                format!(" + {} breaking", r.breaking)
            } else {
                String::new()
            },
            if unmitigated {
                format!(" + {} unmitigated security", r.unmitigated_security)
            } else {
                String::new()
            }
        ),
    }
}

/// Efficiency: `1 − (lines·L/(L+half) + files·F/(F+half) + modules·M/(M+half))` over the
/// estimate; F is at least the number of distinct paths the proposal names.
pub fn efficiency(p: &Proposal, params: &ScoringParams) -> Explained {
    let e = &params.efficiency;
    let c = &p.estimated_complexity;
    let lines = c.lines_of_code as f64;
    let files = c.files.max(p.paths().len() as u64) as f64;
    let modules = c.modules as f64;
    let cost = e.lines * saturate(lines, e.lines_half)
        + e.files * saturate(files, e.files_half)
        + e.modules * saturate(modules, e.modules_half);
    Explained {
        value: (1.0 - cost).clamp(0.0, 1.0),
        detail: format!(
            "1 − ({}·{lines}/({lines}+{}) + {}·{files}/({files}+{}) + {}·{modules}/({modules}+{}))",
            e.lines, e.lines_half, e.files, e.files_half, e.modules, e.modules_half
        ),
    }
}

/// The specialists the paths call for: their language by extension and their area by a word
/// in the path.
pub fn expected_specialists<'a>(
    paths: impl IntoIterator<Item = &'a str>,
    table: &[Specialist],
) -> BTreeSet<String> {
    let mut expected = BTreeSet::new();
    for path in paths {
        let lower = path.to_lowercase();
        let file = lower.rsplit('/').next().unwrap_or(&lower);
        let ext = file.rsplit_once('.').map(|(_, e)| e);
        let words: BTreeSet<&str> = lower
            .split(['/', '.', '_', '-', '\\'])
            .filter(|w| !w.is_empty())
            .collect();
        for s in table {
            let by_ext = ext.is_some_and(|e| s.extensions.iter().any(|x| x == e));
            let by_word = s.path_words.iter().any(|w| words.contains(w.as_str()));
            if by_ext || by_word {
                expected.insert(s.name.clone());
            }
        }
    }
    expected
}

/// Specialist validation: expected specialists that were consulted (with an answer) over
/// expected specialists; 1 when none are expected.
pub fn specialist_validation(p: &Proposal, table: &[Specialist]) -> Explained {
    let expected = expected_specialists(p.paths(), table);
    if expected.is_empty() {
        return Explained {
            value: 1.0,
            detail: "no specialist expected".into(),
        };
    }
    let consulted: BTreeSet<&str> = expected
        .iter()
        .filter(|name| {
            let Some(s) = table.iter().find(|s| &s.name == *name) else {
                return false;
            };
            p.specialist_consultations.iter().any(|c| {
                let who = c.specialist.to_lowercase();
                !c.answer.trim().is_empty()
                    && std::iter::once(&s.name)
                        .chain(&s.aliases)
                        .any(|n| who.contains(n.as_str()))
            })
        })
        .map(String::as_str)
        .collect();
    let list = |set: Vec<&str>| {
        if set.is_empty() {
            "none".to_owned()
        } else {
            set.join(", ")
        }
    };
    Explained {
        value: consulted.len() as f64 / expected.len() as f64,
        detail: format!(
            "{}/{} consulted (expected: {}; consulted: {})",
            consulted.len(),
            expected.len(),
            list(expected.iter().map(String::as_str).collect()),
            list(consulted.into_iter().collect()),
        ),
    }
}

/// The judge's view of one proposal: technical quality and innovation with reasoning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subjective {
    pub technical_quality: f64,
    pub technical_quality_reasoning: String,
    pub innovation: f64,
    pub innovation_reasoning: String,
    /// How many judges answered; 0 means "judge unavailable" and the neutral scores.
    pub judges: usize,
}

impl Subjective {
    /// The scores given when no judge answered.
    pub fn unavailable(params: &ScoringParams, why: &str) -> Subjective {
        let v = params.judge.unavailable;
        let reason = if why.is_empty() {
            "judge unavailable".to_owned()
        } else {
            format!("judge unavailable: {why}")
        };
        Subjective {
            technical_quality: v,
            technical_quality_reasoning: reason.clone(),
            innovation: v,
            innovation_reasoning: reason,
            judges: 0,
        }
    }
}

/// The median of several judges' views of one proposal; the reasoning is the one of the judge
/// whose score is the median (the lower middle for an even count).
pub fn median_view(views: &[(f64, String, f64, String)]) -> Option<Subjective> {
    if views.is_empty() {
        return None;
    }
    let pick = |key: fn(&(f64, String, f64, String)) -> f64| -> (f64, usize) {
        let mut order: Vec<usize> = (0..views.len()).collect();
        order.sort_by(|a, b| key(&views[*a]).total_cmp(&key(&views[*b])));
        let n = order.len();
        let value = if n % 2 == 1 {
            key(&views[order[n / 2]])
        } else {
            (key(&views[order[n / 2 - 1]]) + key(&views[order[n / 2]])) / 2.0
        };
        (value, order[(n - 1) / 2])
    };
    let (tq, tq_at) = pick(|v| v.0);
    let (inn, inn_at) = pick(|v| v.2);
    Some(Subjective {
        technical_quality: tq,
        technical_quality_reasoning: views[tq_at].1.clone(),
        innovation: inn,
        innovation_reasoning: views[inn_at].3.clone(),
        judges: views.len(),
    })
}

/// A proposal's six scores, their explanations and the weighted total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProposalScore {
    pub scores: Scores,
    pub total: f64,
    /// How each dimension's score came about, by dimension key.
    pub details: BTreeMap<&'static str, String>,
}

/// Scores a proposal on all six dimensions.
pub fn score_proposal(
    p: &Proposal,
    targets: &Targets,
    judged: &Subjective,
    weights: &Scores,
    params: &ScoringParams,
    specialists: &[Specialist],
) -> ProposalScore {
    let mut details = BTreeMap::new();
    let mut scores = Scores::default();
    for (dimension, e) in [
        (Dimension::SpecAlignment, spec_alignment(p, targets, params)),
        (Dimension::Risk, risk(p, params)),
        (Dimension::Efficiency, efficiency(p, params)),
        (
            Dimension::SpecialistValidation,
            specialist_validation(p, specialists),
        ),
    ] {
        scores.set(dimension, e.value);
        details.insert(dimension.key(), e.detail);
    }
    scores.technical_quality = judged.technical_quality;
    scores.innovation = judged.innovation;
    details.insert(
        Dimension::TechnicalQuality.key(),
        judged.technical_quality_reasoning.clone(),
    );
    details.insert(
        Dimension::Innovation.key(),
        judged.innovation_reasoning.clone(),
    );
    ProposalScore {
        total: scores.weighted_total(weights),
        scores,
        details,
    }
}

#[cfg(test)]
mod tests;
