//! A minimal aligned text table. Widths are measured on the plain text in terminal cells (a CJK
//! character or an emoji takes two), and styling is applied after padding, so colour never
//! breaks alignment.

use crate::output::{sanitize, Paint};
use unicode_width::UnicodeWidthStr;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Rows of plain cells under a header.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; cells are sanitised (they may hold outside text).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.iter().map(|c| sanitize(c)).collect());
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders with two spaces between columns and `indent` before each line. `style` may
    /// restyle a padded cell given its row and column.
    pub fn render(
        &self,
        indent: &str,
        paint: Paint,
        style: impl Fn(usize, usize, &str) -> String,
    ) -> String {
        let cols = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.width()).collect();
        for row in &self.rows {
            for (c, cell) in row.iter().enumerate().take(cols) {
                widths[c] = widths[c].max(cell.width());
            }
        }
        let pad = |text: &str, c: usize| {
            let fill = " ".repeat(widths[c].saturating_sub(text.width()));
            match self.headers[c].1 {
                Align::Left => format!("{text}{fill}"),
                Align::Right => format!("{fill}{text}"),
            }
        };
        let mut out = String::new();
        let header: Vec<String> = (0..cols)
            .map(|c| paint.bold(&pad(&self.headers[c].0, c)))
            .collect();
        out.push_str(indent);
        out.push_str(header.join("  ").trim_end());
        out.push('\n');
        for (r, row) in self.rows.iter().enumerate() {
            let cells: Vec<String> = (0..cols)
                .map(|c| {
                    let cell = row.get(c).map_or("", String::as_str);
                    style(r, c, &pad(cell, c))
                })
                .collect();
            out.push_str(indent);
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters() {
        let mut t = Table::new(&[("bot", Align::Left), ("weight", Align::Right)]);
        t.row(vec!["ä_bot".into(), "0.5".into()]);
        t.row(vec!["b".into(), "0.25".into()]);
        let text = t.render("", Paint::plain(), |_, _, s| s.to_owned());
        assert_eq!(text, "bot    weight\nä_bot     0.5\nb        0.25\n");
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let mut t = Table::new(&[("bot", Align::Left), ("weight", Align::Right)]);
        t.row(vec!["机器人".into(), "0.5".into()]);
        t.row(vec!["🤖".into(), "0.25".into()]);
        let text = t.render("", Paint::plain(), |_, _, s| s.to_owned());
        assert_eq!(
            text, "bot     weight\n机器人     0.5\n🤖        0.25\n",
            "columns line up on a terminal"
        );
    }
}
