//! Rendering for people, in one home: a run (terminal rounds, the pull request body, the
//! escalation comment, the job summary, the run summary), the verification report (terminal
//! and markdown), the ledger (terminal leaderboard and event list, the HTML page), the rounds
//! `ralph replay` re-ranks, and the shared pieces (aligned terminal tables, markdown cells and
//! ranking tables). Renderers are pure functions from data to text; commands print the text.

pub mod follow;
pub mod html;
pub mod markdown;
pub mod plain;
pub mod replay;
pub mod run;
mod table;
pub mod terminal;
pub mod verification;

pub use table::{Align, Table};

/// A signed delta with three decimals, e.g. `+0.150` / `-0.020`.
pub fn signed(delta: f64) -> String {
    format!("{delta:+.3}")
}

/// An optional amount of US dollars with cents, `$0.25`, or `–` when absent.
pub fn dollars(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |c| format!("${c:.2}"))
}

/// An optional number with `digits` decimals, or `–` when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}
