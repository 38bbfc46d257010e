//! Order-bias control (`[arbiter] order_swaps`): a judge may favour a proposal for where it
//! stands in the list. With one swap every judge reads the blinded proposals twice — in the
//! round's shuffled order and in the reverse order — and each proposal gets the mean of the
//! two readings before the median across judges is taken. The readings also say how much a
//! judge's scores moved with the order (the proposal's *disagreement*), and the round compares
//! the winner of the forward readings with the winner of the reversed ones (*top flipped*).

use super::scoring::{median_view, Subjective};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One judge's scores of one proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub technical_quality: f64,
    pub technical_quality_reasoning: String,
    pub innovation: f64,
    pub innovation_reasoning: String,
}

/// What one judge said about the round when the proposals were listed in `order`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub judge: String,
    /// Whether this reading listed the proposals in the reverse of the round's order.
    pub reversed: bool,
    /// The proposal ids in the order the judge saw them.
    pub order: Vec<String>,
    /// By proposal id.
    pub marks: BTreeMap<String, Mark>,
}

/// The judges' readings combined.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Combined {
    /// By proposal id: the median across judges of each judge's mean over its readings.
    pub views: BTreeMap<String, Subjective>,
    /// By proposal id: the median of the forward readings alone.
    pub forward: BTreeMap<String, Subjective>,
    /// By proposal id: the median of the reversed readings alone (empty without swaps).
    pub reversed: BTreeMap<String, Subjective>,
    /// By proposal id: the mean, over the judges that read it in both orders, of how far the
    /// two readings lie apart (`(|Δ technical quality| + |Δ innovation|) / 2`, in 0..=1).
    pub disagreement: BTreeMap<String, f64>,
}

type View = (f64, String, f64, String);

/// Judge → proposal → that judge's readings of it (`reversed`, scores).
type ByJudge<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Vec<(bool, &'a Mark)>>>;

fn view_of(m: &Mark) -> View {
    (
        m.technical_quality,
        m.technical_quality_reasoning.clone(),
        m.innovation,
        m.innovation_reasoning.clone(),
    )
}

/// The median across judges of the readings `keep` selects, per proposal.
fn medians(readings: &[Reading], keep: impl Fn(&Reading) -> bool) -> BTreeMap<String, Subjective> {
    let mut by_proposal: BTreeMap<&str, Vec<View>> = BTreeMap::new();
    for r in readings.iter().filter(|r| keep(r)) {
        for (id, m) in &r.marks {
            by_proposal.entry(id).or_default().push(view_of(m));
        }
    }
    by_proposal
        .into_iter()
        .filter_map(|(id, views)| median_view(&views).map(|v| (id.to_owned(), v)))
        .collect()
}

/// Combines the readings of every judge. A judge's two readings of a proposal are averaged
/// (the reasoning is the forward reading's); a proposal a judge scored in one reading only
/// keeps that reading's scores. Proposals no judge scored are absent from every map.
pub fn combine(readings: &[Reading]) -> Combined {
    // judge → proposal → its readings (forward first).
    let mut per_judge: ByJudge<'_> = BTreeMap::new();
    for r in readings {
        for (id, m) in &r.marks {
            per_judge
                .entry(&r.judge)
                .or_default()
                .entry(id)
                .or_default()
                .push((r.reversed, m));
        }
    }
    let mut by_proposal: BTreeMap<&str, Vec<View>> = BTreeMap::new();
    let mut gaps: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for proposals in per_judge.values() {
        for (id, marks) in proposals {
            let mut marks = marks.clone();
            marks.sort_by_key(|(reversed, _)| *reversed);
            let n = marks.len() as f64;
            let tq = marks.iter().map(|(_, m)| m.technical_quality).sum::<f64>() / n;
            let inn = marks.iter().map(|(_, m)| m.innovation).sum::<f64>() / n;
            let first = marks[0].1;
            by_proposal.entry(id).or_default().push((
                tq,
                first.technical_quality_reasoning.clone(),
                inn,
                first.innovation_reasoning.clone(),
            ));
            let forward = marks.iter().find(|(r, _)| !r).map(|(_, m)| *m);
            let reversed = marks.iter().find(|(r, _)| *r).map(|(_, m)| *m);
            if let (Some(f), Some(r)) = (forward, reversed) {
                let gap = ((f.technical_quality - r.technical_quality).abs()
                    + (f.innovation - r.innovation).abs())
                    / 2.0;
                gaps.entry(id).or_default().push(gap);
            }
        }
    }
    Combined {
        views: by_proposal
            .into_iter()
            .filter_map(|(id, views)| median_view(&views).map(|v| (id.to_owned(), v)))
            .collect(),
        forward: medians(readings, |r| !r.reversed),
        reversed: medians(readings, |r| r.reversed),
        disagreement: gaps
            .into_iter()
            .map(|(id, g)| (id.to_owned(), g.iter().sum::<f64>() / g.len() as f64))
            .collect(),
    }
}

/// How the order of the readings changed the round's outcome.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrderCheck {
    /// How many extra orders each judge read (0: judged once).
    pub swaps: u32,
    /// The winner had the judges read only the round's order.
    pub forward_top: Option<String>,
    /// The winner had the judges read only the reverse order.
    pub reversed_top: Option<String>,
    /// Whether the two winners differ; `None` when there were not both readings.
    pub top_flipped: Option<bool>,
}

impl OrderCheck {
    /// The check from the winners of the two orders.
    pub fn new(swaps: u32, forward_top: Option<String>, reversed_top: Option<String>) -> Self {
        let top_flipped = match (&forward_top, &reversed_top) {
            (Some(f), Some(r)) => Some(f != r),
            _ => None,
        };
        OrderCheck {
            swaps,
            forward_top,
            reversed_top,
            top_flipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(tq: f64, inn: f64) -> Mark {
        Mark {
            technical_quality: tq,
            technical_quality_reasoning: format!("tq {tq}"),
            innovation: inn,
            innovation_reasoning: format!("inn {inn}"),
        }
    }

    fn reading(judge: &str, reversed: bool, marks: &[(&str, f64, f64)]) -> Reading {
        let mut order: Vec<String> = marks.iter().map(|(id, ..)| id.to_string()).collect();
        if reversed {
            order.reverse();
        }
        Reading {
            judge: judge.into(),
            reversed,
            order,
            marks: marks
                .iter()
                .map(|(id, tq, inn)| (id.to_string(), mark(*tq, *inn)))
                .collect(),
        }
    }

    #[test]
    fn two_readings_of_one_judge_are_averaged_and_their_gap_recorded() {
        let c = combine(&[
            reading("arbiter", false, &[("p1", 0.9, 0.5), ("p2", 0.5, 0.5)]),
            reading("arbiter", true, &[("p1", 0.5, 0.3), ("p2", 0.7, 0.5)]),
        ]);
        let p1 = &c.views["p1"];
        assert!((p1.technical_quality - 0.7).abs() < 1e-12);
        assert!((p1.innovation - 0.4).abs() < 1e-12);
        assert_eq!(
            p1.technical_quality_reasoning, "tq 0.9",
            "forward reasoning"
        );
        assert_eq!(p1.judges, 1);
        assert!((c.disagreement["p1"] - 0.3).abs() < 1e-12);
        assert!((c.disagreement["p2"] - 0.1).abs() < 1e-12);
        assert_eq!(c.forward["p1"].technical_quality, 0.9);
        assert_eq!(c.reversed["p1"].technical_quality, 0.5);
    }

    #[test]
    fn judges_are_averaged_first_then_the_median_is_taken() {
        let c = combine(&[
            reading("a", false, &[("p1", 0.2, 0.2)]),
            reading("a", true, &[("p1", 0.4, 0.4)]),
            reading("b", false, &[("p1", 0.8, 0.8)]),
            reading("b", true, &[("p1", 0.8, 0.8)]),
            reading("c", false, &[("p1", 0.6, 0.6)]),
        ]);
        let p1 = &c.views["p1"];
        assert_eq!(p1.judges, 3);
        assert!(
            (p1.technical_quality - 0.6).abs() < 1e-12,
            "median of 0.3, 0.8, 0.6"
        );
        // Only a and b read both orders: gaps 0.2 and 0.
        assert!((c.disagreement["p1"] - 0.1).abs() < 1e-12);
    }

    #[test]
    fn without_swaps_there_is_no_disagreement_and_no_reversed_view() {
        let c = combine(&[reading("arbiter", false, &[("p1", 0.8, 0.6)])]);
        assert_eq!(c.views["p1"], c.forward["p1"]);
        assert!(c.reversed.is_empty() && c.disagreement.is_empty());
        assert!(combine(&[]).views.is_empty());
    }

    #[test]
    fn a_proposal_missing_from_one_reading_keeps_the_other() {
        let c = combine(&[
            reading("arbiter", false, &[("p1", 0.8, 0.6), ("p2", 0.4, 0.4)]),
            reading("arbiter", true, &[("p1", 0.6, 0.6)]),
        ]);
        assert_eq!(c.views["p2"].technical_quality, 0.4);
        assert!(!c.disagreement.contains_key("p2"));
    }

    #[test]
    fn the_top_flips_only_when_both_orders_have_a_different_winner() {
        let s = |v: &str| Some(v.to_owned());
        assert_eq!(OrderCheck::new(1, s("p1"), s("p2")).top_flipped, Some(true));
        assert_eq!(
            OrderCheck::new(1, s("p1"), s("p1")).top_flipped,
            Some(false)
        );
        assert_eq!(OrderCheck::new(0, s("p1"), None).top_flipped, None);
    }
}
