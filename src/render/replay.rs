//! `ralph replay` for terminals: per round a table of each proposal's old and new total and
//! rank with the winner before and after, then one summary line naming every winner that
//! would change.

use super::{Align, Table};
use crate::market::{Dimension, Scores};
use crate::output::{sanitize, Paint};
use crate::replay::{Method, Pick, Replayed, Summary};

/// The line that says what the rounds are replayed under.
pub fn header(source: &str, weights: &Scores, order_swaps: u32, rounds: usize) -> String {
    let weights: Vec<String> = Dimension::ALL
        .iter()
        .map(|d| format!("{} {:.3}", d.key(), weights.get(*d)))
        .collect();
    format!(
        "Replaying {} under {}: {}; order_swaps {order_swaps}\n",
        count(rounds, "round", "rounds"),
        sanitize(source),
        weights.join(", ")
    )
}

/// One round: a title, the table best first under the new configuration, the winner line and
/// the notes.
pub fn round(r: &Replayed, paint: Paint) -> String {
    let how = match r.method {
        Method::Recomputed => "recomputed",
        Method::Reweighted => "re-weighted",
    };
    let mut out = format!(
        "\n{} ({}) — {}, {how}\n",
        paint.bold(&format!("issue {} round {}", r.issue, r.round)),
        r.phase.as_str(),
        sanitize(&r.file.display().to_string()),
    );
    if let Some(s) = &r.seating {
        out.push_str(&format!("  {} (as recorded)\n", sanitize(&s.line())));
    }
    let mut table = Table::new(&[
        ("proposal", Align::Left),
        ("bot", Align::Left),
        ("total", Align::Left),
        ("rank", Align::Left),
    ]);
    for p in &r.proposals {
        let old_rank = p.old_rank.map_or_else(|| "–".to_owned(), |n| n.to_string());
        table.row(vec![
            p.proposal_id.clone(),
            p.bot_id.clone(),
            format!("{:.3} → {:.3}", p.old_total, p.new_total),
            format!("{old_rank} → {}", p.new_rank),
        ]);
    }
    out.push_str(&table.render("  ", paint, |row, _, cell| {
        let p = &r.proposals[row];
        if p.old_rank != Some(p.new_rank) {
            paint.warn(cell)
        } else {
            cell.to_owned()
        }
    }));
    let name = |id: &Option<String>| winner_name(r, id.as_deref());
    let line = if r.winner_changed {
        paint.warn(&format!(
            "winner would change: {} → {}",
            name(&r.old_winner),
            name(&r.new_winner)
        ))
    } else if r.ranking_changed {
        format!(
            "ranking would change; winner unchanged: {}",
            name(&r.new_winner)
        )
    } else {
        format!("unchanged; winner: {}", name(&r.new_winner))
    };
    out.push_str(&format!("  {line}\n"));
    for note in &r.notes {
        out.push_str(&format!("  {} {}\n", paint.dim("note:"), sanitize(note)));
    }
    out
}

/// `proposal_1 (smart_bot_3)`, or that no proposal won.
fn winner_name(r: &Replayed, id: Option<&str>) -> String {
    let Some(id) = id else {
        return "none (human review)".to_owned();
    };
    let bot = r
        .proposals
        .iter()
        .find(|p| p.proposal_id == id)
        .map_or("", |p| p.bot_id.as_str());
    sanitize(&format!("{id} ({bot})"))
}

/// `3 rounds replayed: 1 ranking and 1 winner would change (issue 12 round 1: proposal_2
/// smart_bot_1 0.655 → proposal_1 smart_bot_3 0.701)`.
pub fn summary(s: &Summary) -> String {
    let rounds = count(s.rounds, "round", "rounds");
    let rankings = count(s.rankings_changed, "ranking", "rankings");
    let winners = count(s.winners_changed, "winner", "winners");
    let changes: Vec<String> = s
        .winner_changes
        .iter()
        .map(|c| {
            format!(
                "issue {} round {}: {} → {}",
                c.issue,
                c.round,
                pick(c.from.as_ref()),
                pick(c.to.as_ref())
            )
        })
        .collect();
    let what = match (s.rankings_changed, s.winners_changed) {
        (0, 0) => "no ranking or winner would change".to_owned(),
        (_, 0) => format!("{rankings} would change, no winner"),
        (0, _) => format!("{winners} would change"),
        _ => format!("{rankings} and {winners} would change"),
    };
    let listed = if changes.is_empty() {
        String::new()
    } else {
        format!(" ({})", changes.join("; "))
    };
    sanitize(&format!("{rounds} replayed: {what}{listed}")) + "\n"
}

fn pick(p: Option<&Pick>) -> String {
    p.map_or_else(
        || "no winner (human review)".to_owned(),
        |p| format!("{} {} {:.3}", p.proposal_id, p.bot_id, p.total),
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::Phase;
    use crate::replay::{ReplayedProposal, WinnerChange};
    use std::path::PathBuf;

    fn proposal(id: &str, bot: &str, old: (f64, usize), new: (f64, usize)) -> ReplayedProposal {
        ReplayedProposal {
            proposal_id: id.into(),
            bot_id: bot.into(),
            old_total: old.0,
            new_total: new.0,
            old_rank: Some(old.1),
            new_rank: new.1,
            scores: Scores::default(),
        }
    }

    fn flipped() -> Replayed {
        Replayed {
            file: PathBuf::from("rec/scoring.r1.json"),
            issue: 12,
            round: 1,
            phase: Phase::Initial,
            method: Method::Recomputed,
            proposals: vec![
                proposal("proposal_1", "smart_bot_3", (0.612, 2), (0.701, 1)),
                proposal("proposal_2", "smart_bot_1", (0.655, 1), (0.640, 2)),
            ],
            old_ranking: vec!["proposal_2".into(), "proposal_1".into()],
            new_ranking: vec!["proposal_1".into(), "proposal_2".into()],
            old_winner: Some("proposal_2".into()),
            new_winner: Some("proposal_1".into()),
            human_review: false,
            ranking_changed: true,
            winner_changed: true,
            notes: vec!["a note".into()],
            seating: None,
        }
    }

    #[test]
    fn a_round_with_seats_names_them_as_recorded() {
        let mut r = flipped();
        let bots = ["smart_bot_1", "smart_bot_2", "smart_bot_3"];
        let seating = crate::fixtures::seating(&bots, &bots[1..], &[], 3);
        r.seating = Some(seating.clone());
        let text = round(&r, Paint::plain());
        assert!(
            text.contains(&format!("  {} (as recorded)\n", seating.line())),
            "{text}"
        );
        assert!(text.contains("seated: 2 of 3 — "), "{text}");
    }

    #[test]
    fn a_round_shows_old_and_new_totals_and_ranks() {
        let text = round(&flipped(), Paint::plain());
        assert_eq!(
            text,
            "\nissue 12 round 1 (initial) — rec/scoring.r1.json, recomputed\n  \
             proposal    bot          total          rank\n  \
             proposal_1  smart_bot_3  0.612 → 0.701  2 → 1\n  \
             proposal_2  smart_bot_1  0.655 → 0.640  1 → 2\n  \
             winner would change: proposal_2 (smart_bot_1) → proposal_1 (smart_bot_3)\n  \
             note: a note\n"
        );
    }

    #[test]
    fn the_summary_names_every_changed_winner() {
        let s = Summary {
            rounds: 3,
            rankings_changed: 1,
            winners_changed: 1,
            winner_changes: vec![WinnerChange {
                issue: 12,
                round: 1,
                from: Some(Pick {
                    proposal_id: "proposal_2".into(),
                    bot_id: "smart_bot_1".into(),
                    total: 0.655,
                }),
                to: Some(Pick {
                    proposal_id: "proposal_1".into(),
                    bot_id: "smart_bot_3".into(),
                    total: 0.701,
                }),
            }],
        };
        assert_eq!(
            summary(&s),
            "3 rounds replayed: 1 ranking and 1 winner would change (issue 12 round 1: proposal_2 smart_bot_1 0.655 → proposal_1 smart_bot_3 0.701)\n"
        );
        let none = Summary {
            rounds: 1,
            rankings_changed: 0,
            winners_changed: 0,
            winner_changes: Vec::new(),
        };
        assert_eq!(
            summary(&none),
            "1 round replayed: no ranking or winner would change\n"
        );
        let reordered = Summary {
            rankings_changed: 2,
            ..none
        };
        assert!(summary(&reordered).contains("2 rankings would change, no winner"));
    }
}
