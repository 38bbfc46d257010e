//! Rendering results for people: aligned terminal tables and the self-contained HTML
//! leaderboard. Renderers are pure functions from data to text; commands print the text.

pub mod html;
mod table;
pub mod terminal;

pub use table::{Align, Table};

/// A signed delta with three decimals, e.g. `+0.150` / `-0.020`.
pub fn signed(delta: f64) -> String {
    format!("{delta:+.3}")
}

/// An optional number with `digits` decimals, or `–` when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.digits$}"))
}
