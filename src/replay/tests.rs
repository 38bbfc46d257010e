//! Tests of replay: recorded rounds recomputed and report rounds re-weighted under another
//! configuration, and what changes are named.

use super::recording::{RecordedProposal, RECORDING_VERSION};
use super::*;
use crate::fixtures::sample;
use crate::market::order::{Mark, Reading};
use crate::market::{FileChange, Proposal};
use crate::spec::Requirements;
use chrono::TimeZone;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 5, 10, minute, 0).unwrap()
}

fn options(weights: Scores, order_swaps: u32) -> Options<'static> {
    Options {
        weights,
        order_swaps,
        params: &tables().scoring,
        specialists: &tables().specialists,
    }
}

fn default_weights() -> Scores {
    tables().default_weights
}

/// Weights on risk and efficiency alone: the small change wins.
fn small_is_beautiful() -> Scores {
    Scores {
        risk: 0.5,
        efficiency: 0.5,
        ..Scores::default()
    }
}

/// A proposal addressing `boxes`, touching `files` files with `lines` lines.
fn proposal(boxes: &[&str], files: usize, lines: u64) -> Proposal {
    let mut p = sample();
    p.spec_alignment.checkboxes_addressed = boxes.iter().map(|s| s.to_string()).collect();
    p.files_affected = (0..files)
        .map(|i| {
            serde_json::from_value::<FileChange>(serde_json::json!({
                "path": format!("src/part{i}.rs"), "change_type": "modify"
            }))
            .unwrap()
        })
        .collect();
    p.estimated_complexity.files = files as u64;
    p.estimated_complexity.lines_of_code = lines;
    p
}

fn mark(tq: f64) -> Mark {
    Mark {
        technical_quality: tq,
        technical_quality_reasoning: format!("tq {tq}"),
        innovation: 0.5,
        innovation_reasoning: "plain".into(),
    }
}

/// One judge's reading: `p1` and `p2` technical quality.
fn reading(reversed: bool, p1: f64, p2: f64) -> Reading {
    let mut order = vec!["proposal_1".to_owned(), "proposal_2".to_owned()];
    if reversed {
        order.reverse();
    }
    Reading {
        judge: "arbiter".into(),
        reversed,
        order,
        marks: [
            ("proposal_1".to_owned(), mark(p1)),
            ("proposal_2".to_owned(), mark(p2)),
        ]
        .into(),
    }
}

/// A round as `compete::round::evaluate` would record it: a broad proposal (both boxes, six
/// files, 300 lines) by `broad` and a narrow one (one box, one file, 20 lines) by `narrow`,
/// ranked under the default weights with every reading.
fn recorded(readings: Vec<Reading>) -> RecordedRound {
    let requirements = Requirements::from_body("## Tasks\n- [ ] Parse the flag\n- [ ] Print it\n");
    let proposals = vec![
        RecordedProposal {
            proposal_id: "proposal_1".into(),
            bot_id: "broad".into(),
            submitted_at: at(1),
            proposal: proposal(&["req_1", "req_2"], 6, 300),
        },
        RecordedProposal {
            proposal_id: "proposal_2".into(),
            bot_id: "narrow".into(),
            submitted_at: at(2),
            proposal: proposal(&["req_1"], 1, 20),
        },
    ];
    // Scored and ranked the way the round does it.
    let params = &tables().scoring;
    let targets = Targets::from_requirements(&requirements);
    let views = combine(&readings).views;
    let entries: Vec<Entry> = proposals
        .iter()
        .map(|p| {
            let view = views
                .get(&p.proposal_id)
                .cloned()
                .unwrap_or_else(|| Subjective::unavailable(params, "not asked"));
            Entry {
                proposal_id: p.proposal_id.clone(),
                total: score_proposal(
                    &p.proposal,
                    &targets,
                    &view,
                    &default_weights(),
                    params,
                    &tables().specialists,
                )
                .total,
                submitted_at: p.submitted_at,
            }
        })
        .collect();
    let ranking = rank(&entries, params.ranking.human_review_below);
    RecordedRound {
        version: RECORDING_VERSION,
        issue: 12,
        round: 1,
        phase: Phase::Initial,
        seed: 7,
        requirements,
        proposals,
        judge_unavailable: readings.is_empty().then(|| "not asked".to_owned()),
        readings,
        weights: default_weights(),
        winner: ranking.winner().map(String::from),
        ranking: ranking.order,
        seating: None,
    }
}

fn round(input: Input) -> Round {
    Round {
        file: PathBuf::from("rec/scoring.r1.json"),
        input,
    }
}

fn both_orders() -> Vec<Reading> {
    vec![reading(false, 0.9, 0.5), reading(true, 0.7, 0.9)]
}

#[test]
fn the_same_configuration_changes_nothing() {
    let r = recorded(both_orders());
    assert_eq!(
        r.winner.as_deref(),
        Some("proposal_1"),
        "the broad plan wins"
    );
    let out = replay_round(
        &round(Input::Recorded(Box::new(r.clone()))),
        &options(default_weights(), 1),
    );
    assert_eq!(out.method, Method::Recomputed);
    assert!(!out.ranking_changed && !out.winner_changed, "{out:?}");
    assert_eq!(out.new_ranking, r.ranking);
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    for p in &out.proposals {
        assert!(close(p.old_total, p.new_total), "{p:?}");
        assert_eq!(p.old_rank, Some(p.new_rank));
    }
    let summary = summarize(&[out]);
    assert_eq!(
        (
            summary.rounds,
            summary.rankings_changed,
            summary.winners_changed
        ),
        (1, 0, 0)
    );
}

#[test]
fn weights_on_risk_and_efficiency_hand_the_round_to_the_small_change() {
    let r = recorded(both_orders());
    let out = replay_round(
        &round(Input::Recorded(Box::new(r))),
        &options(small_is_beautiful(), 1),
    );
    assert!(out.ranking_changed && out.winner_changed);
    assert_eq!(out.old_winner.as_deref(), Some("proposal_1"));
    assert_eq!(out.new_winner.as_deref(), Some("proposal_2"));
    assert_eq!(out.new_ranking, ["proposal_2", "proposal_1"]);
    let narrow = &out.proposals[0];
    assert_eq!(
        (narrow.bot_id.as_str(), narrow.new_rank, narrow.old_rank),
        ("narrow", 1, Some(2))
    );
    // The new total is the new weights over the recomputed scores.
    assert!(close(
        narrow.new_total,
        0.5 * narrow.scores.risk + 0.5 * narrow.scores.efficiency
    ));
    let summary = summarize(std::slice::from_ref(&out));
    assert_eq!(summary.winners_changed, 1);
    let change = &summary.winner_changes[0];
    assert_eq!((change.issue, change.round), (12, 1));
    let from = change.from.as_ref().unwrap();
    let to = change.to.as_ref().unwrap();
    assert_eq!(
        (from.bot_id.as_str(), to.bot_id.as_str()),
        ("broad", "narrow")
    );
    assert!(close(from.total, out.proposals[1].old_total));
    assert!(close(to.total, narrow.new_total));
}

#[test]
fn order_swaps_0_uses_only_the_forward_readings() {
    let r = recorded(both_orders());
    let by_id = |out: &Replayed, id: &str| {
        out.proposals
            .iter()
            .find(|p| p.proposal_id == id)
            .unwrap()
            .clone()
    };
    // Both readings: each judge's two readings are averaged.
    let swapped = replay_round(
        &round(Input::Recorded(Box::new(r.clone()))),
        &options(default_weights(), 1),
    );
    assert!(close(
        by_id(&swapped, "proposal_1").scores.technical_quality,
        0.8
    ));
    assert!(close(
        by_id(&swapped, "proposal_2").scores.technical_quality,
        0.7
    ));
    // Forward only.
    let once = replay_round(
        &round(Input::Recorded(Box::new(r))),
        &options(default_weights(), 0),
    );
    assert!(close(
        by_id(&once, "proposal_1").scores.technical_quality,
        0.9
    ));
    assert!(close(
        by_id(&once, "proposal_2").scores.technical_quality,
        0.5
    ));
    // The old totals are the round's own: every reading.
    assert!(close(
        by_id(&once, "proposal_1").old_total,
        by_id(&swapped, "proposal_1").old_total
    ));
    assert!(
        once.notes[0].contains("only the 1 forward reading(s) are used"),
        "{:?}",
        once.notes
    );
}

#[test]
fn a_round_read_once_cannot_show_the_effect_of_swaps() {
    let r = recorded(vec![reading(false, 0.9, 0.5)]);
    let out = replay_round(
        &round(Input::Recorded(Box::new(r))),
        &options(default_weights(), 1),
    );
    assert!(!out.winner_changed);
    assert!(
        out.notes[0].contains("one reading per judge"),
        "{:?}",
        out.notes
    );
}

#[test]
fn without_readings_the_judges_scores_stay_neutral() {
    let r = recorded(Vec::new());
    let out = replay_round(
        &round(Input::Recorded(Box::new(r))),
        &options(default_weights(), 0),
    );
    let neutral = tables().scoring.judge.unavailable;
    for p in &out.proposals {
        assert!(close(p.scores.technical_quality, neutral));
        assert!(close(p.scores.innovation, neutral));
    }
    assert!(!out.ranking_changed && out.notes.is_empty(), "{out:?}");
}

#[test]
fn a_recording_this_ralph_ranks_differently_says_so() {
    let mut r = recorded(both_orders());
    r.ranking.reverse();
    r.winner = Some(r.ranking[0].clone());
    let out = replay_round(
        &round(Input::Recorded(Box::new(r))),
        &options(default_weights(), 1),
    );
    assert!(out.winner_changed);
    assert!(
        out.notes.iter().any(|n| n.contains("scoring tables")),
        "{:?}",
        out.notes
    );
}

fn report_round() -> ReportRound {
    let scores = |sa: f64, risk: f64, eff: f64| Scores {
        spec_alignment: sa,
        technical_quality: 0.6,
        innovation: 0.4,
        risk,
        efficiency: eff,
        specialist_validation: 1.0,
    };
    let proposals = vec![
        // 0.64 and 0.62 under the default weights.
        (1, "smart_bot_1", scores(1.0, 0.4, 0.3)),
        (2, "smart_bot_2", scores(0.5, 0.8, 0.8)),
    ]
    .into_iter()
    .map(|(i, bot, s)| ReportProposal {
        proposal_id: format!("proposal_{i}"),
        bot_id: bot.into(),
        total_score: s.weighted_total(&default_weights()),
        scores: s,
        submission_time: at(i),
    })
    .collect();
    ReportRound {
        issue: 12,
        round: 1,
        phase: Phase::Initial,
        proposals,
        ranking: vec!["proposal_1".into(), "proposal_2".into()],
        winner: Some("proposal_1".into()),
        seating: None,
    }
}

#[test]
fn a_round_with_seats_is_replayed_with_the_same_seats() {
    let seating = crate::fixtures::seating(&["a", "b", "c"], &["a", "b"], &[], 3);
    let mut report = report_round();
    report.seating = Some(seating.clone());
    let replayed = replay_round(
        &round(Input::Report(Box::new(report))),
        &options(default_weights(), 1),
    );
    assert_eq!(replayed.seating.as_ref(), Some(&seating));
    let json = serde_json::to_value(&replayed).unwrap();
    assert_eq!(json["seating"]["seats"], 2);
    // Without seats the replay's document has no such key.
    let plain = replay_round(
        &round(Input::Report(Box::new(report_round()))),
        &options(default_weights(), 1),
    );
    assert!(serde_json::to_value(&plain)
        .unwrap()
        .get("seating")
        .is_none());
}

#[test]
fn report_rounds_are_re_weighted_from_their_scores() {
    let r = round(Input::Report(Box::new(report_round())));
    let same = replay_round(&r, &options(default_weights(), 1));
    assert_eq!(same.method, Method::Reweighted);
    assert!(!same.ranking_changed && !same.winner_changed);
    assert_eq!(same.notes, [REWEIGHTED_NOTE]);
    for p in &same.proposals {
        assert!(close(p.old_total, p.new_total));
    }
    let changed = replay_round(&r, &options(small_is_beautiful(), 0));
    assert_eq!(changed.new_winner.as_deref(), Some("proposal_2"));
    assert!(close(changed.proposals[0].new_total, 0.8));
    assert!(close(changed.proposals[1].new_total, 0.35));
    // Below the human-review threshold no proposal wins.
    let low = Scores {
        innovation: 1.0,
        ..Scores::default()
    };
    let none = replay_round(&r, &options(low, 1));
    assert!(none.human_review && none.new_winner.is_none() && none.winner_changed);
    let summary = summarize(&[changed, none]);
    assert_eq!(summary.winners_changed, 2);
    assert!(summary.winner_changes[1].to.is_none());
}

#[test]
fn a_report_round_also_recorded_is_replayed_from_the_recording() {
    let rec = recorded(both_orders());
    let mut report = report_round();
    report.ranking = rec.ranking.clone();
    report.proposals[0].bot_id = "broad".into();
    report.proposals[1].bot_id = "narrow".into();
    let mut other = report.clone();
    other.round = 2;
    let rounds = vec![
        round(Input::Report(Box::new(report))),
        round(Input::Recorded(Box::new(rec))),
        round(Input::Report(Box::new(other))),
    ];
    let (kept, dropped) = drop_recorded_reports(rounds);
    assert_eq!(dropped, 1);
    assert_eq!(kept.len(), 2);
    assert!(matches!(kept[0].input, Input::Recorded(_)));
    assert_eq!(kept[1].input.round(), 2);
}

#[test]
fn a_tie_at_the_top_is_named_as_one() {
    let r = round(Input::Report(Box::new(report_round())));
    // Only technical quality counts: both proposals have 0.6.
    let level = Scores {
        technical_quality: 1.0,
        ..Scores::default()
    };
    let tied = replay_round(&r, &options(level, 1));
    assert_eq!(
        tied.new_winner.as_deref(),
        Some("proposal_1"),
        "the earlier one"
    );
    assert!(
        tied.notes
            .iter()
            .any(|n| n == "the top two tie at 0.600: the earlier submission wins the tie"),
        "{:?}",
        tied.notes
    );
    let clear = replay_round(&r, &options(default_weights(), 1));
    assert!(!clear.notes.iter().any(|n| n.contains("tie")));
}
