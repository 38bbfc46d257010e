//! The markdown pieces every rendering of a run shares — pull request body, escalation comment,
//! job summary, run summary, verification report: one rule for a table cell, one ranking table,
//! one line of check results.

use crate::run_report::{CheckReport, RoundReport};
use std::fmt::Write as _;

/// Text made safe for one markdown table cell: `|` escaped, line breaks turned into spaces.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace("\r\n", " ")
        .replace(['\r', '\n'], " ")
}

/// Which columns a ranking table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// rank, proposal, bot, total.
    Totals,
    /// The totals and the six dimension scores.
    Scores,
}

/// A round's ranking as a markdown table, best first, each line ending in a newline.
pub fn ranking_table(round: &RoundReport, columns: Columns) -> String {
    let mut out = match columns {
        Columns::Totals => "| rank | proposal | bot | total |\n|---|---|---|---|\n".to_owned(),
        Columns::Scores => "| rank | proposal | bot | total | spec | quality | innovation | risk | efficiency | specialist |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n".to_owned(),
    };
    for (rank, p) in round.ranked() {
        let _ = write!(
            out,
            "| {rank} | {} | {} | {:.3} |",
            cell(&p.proposal_id),
            cell(&p.bot_id),
            p.total_score
        );
        if columns == Columns::Scores {
            let s = &p.scores;
            for v in [
                s.spec_alignment,
                s.technical_quality,
                s.innovation,
                s.risk,
                s.efficiency,
                s.specialist_validation,
            ] {
                let _ = write!(out, " {v:.2} |");
            }
        }
        out.push('\n');
    }
    out
}

/// The checks of a round on one line: `` `test` ✅ passed`` joined by `separator`.
pub fn checks_line(checks: &[CheckReport], separator: &str) -> String {
    checks
        .iter()
        .map(|c| format!("`{}` {}", c.name, c.status.markdown()))
        .collect::<Vec<_>>()
        .join(separator)
}

/// The bots' standings as a markdown table, for the job summary after a run.
pub fn standings(state: &crate::ledger::LedgerState) -> String {
    let mut out = String::from(
        "| rank | bot | weight | efficiency | successes | failures | budget |\n|---|---|---|---|---|---|---|\n",
    );
    for (i, b) in state.bots.iter().enumerate() {
        let rank = if b.retired {
            "retired".to_owned()
        } else {
            (i + 1).to_string()
        };
        out.push_str(&format!(
            "| {rank} | {} | {:.3} | {:.0}% | {} | {} | {} |\n",
            cell(&b.bot_id),
            b.weight,
            b.efficiency * 100.0,
            b.successes,
            b.failures,
            b.budget
        ));
    }
    out
}

/// The checks that fail on the base as well, named with what that means; `None` when none do.
pub fn failing_on_base_note(checks: &[CheckReport]) -> Option<String> {
    let names: Vec<String> = checks
        .iter()
        .filter(|c| c.status == crate::run_report::CheckState::FailingOnBase)
        .map(|c| format!("`{}`", c.name))
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "_Failing on base: {} — failing on the base commit too, and no worse after the change; not held against it._",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{proposal, round};
    use crate::run_report::CheckState;

    #[test]
    fn cells_cannot_break_a_table() {
        assert_eq!(cell("a|b\nc\r\nd"), "a\\|b c d");
    }

    #[test]
    fn ranking_tables_follow_the_ranking() {
        let r = round(
            vec![
                proposal("proposal_1", "b1", 0.5),
                proposal("proposal_2", "b|2", 0.81234),
            ],
            &["proposal_2", "proposal_1"],
        );
        assert_eq!(
            ranking_table(&r, Columns::Totals),
            "| rank | proposal | bot | total |\n|---|---|---|---|\n| 1 | proposal_2 | b\\|2 | 0.812 |\n| 2 | proposal_1 | b1 | 0.500 |\n"
        );
        let full = ranking_table(&r, Columns::Scores);
        assert!(
            full.contains(
                "| 1 | proposal_2 | b\\|2 | 0.812 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 |\n"
            ),
            "{full}"
        );
    }

    #[test]
    fn check_lines() {
        let check = |name: &str, status| CheckReport {
            name: name.into(),
            passed: status == CheckState::Passed,
            status,
            duration_ms: 1,
        };
        let checks = [
            check("fmt", CheckState::Passed),
            check("lint", CheckState::Unavailable),
            check("types", CheckState::FailingOnBase),
            check("test", CheckState::Failed),
        ];
        assert_eq!(
            checks_line(&checks, ", "),
            "`fmt` ✅ passed, `lint` ➖ unavailable, `types` ⚠️ failing on base, `test` ❌ failed"
        );
        assert_eq!(
            failing_on_base_note(&checks).unwrap(),
            "_Failing on base: `types` — failing on the base commit too, and no worse after the change; not held against it._"
        );
        assert_eq!(failing_on_base_note(&checks[..1]), None);
    }
}
