//! The part of a check's output that explains it: what its tools say of their failing tests
//! (each runner's own failure blocks, [`super::Tool::excerpt`]; a run ralph cannot see into is
//! read by its `PASS:`/`FAIL:` lines first), else the failures of a plain format, else the head and the
//! tail of both streams. Colours are taken off first: a runner that colours its output names its
//! failures all the same.

/// The most lines kept of a section.
pub const MAX_SECTION: usize = 60;
/// Lines kept from the start and from the end of a stream without a summary.
const HEAD: usize = 10;
const TAIL: usize = 30;

/// The lines of `text` from the first line `start` matches through the first later line `end`
/// matches (or the end), at most [`MAX_SECTION`] of them.
pub fn section(
    text: &str,
    start: impl Fn(&str) -> bool,
    end: impl Fn(&str) -> bool,
) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().position(|l| start(l))?;
    let to = lines[from + 1..]
        .iter()
        .position(|l| end(l))
        .map_or(lines.len(), |i| from + 1 + i + 1);
    let kept: Vec<&str> = lines[from..to].iter().take(MAX_SECTION).copied().collect();
    Some(kept.join("\n"))
}

/// The head and tail of a stream, with a marker where lines were dropped.
pub(super) fn head_tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim().lines().collect();
    if lines.len() <= HEAD + TAIL {
        return lines.join("\n");
    }
    format!(
        "{}\n… ({} lines)\n{}",
        lines[..HEAD].join("\n"),
        lines.len() - HEAD - TAIL,
        lines[lines.len() - TAIL..].join("\n")
    )
}

/// `text` without a coverage tool's text table (Istanbul's `File | % Stmts | … |` rows and their
/// rules, which c8, nyc, jest and vitest print after the run): no failure is in it.
pub(super) fn without_coverage_table(text: &str) -> String {
    let header = |l: &str| l.contains('|') && (l.contains("% Stmts") || l.contains("% Lines"));
    if !text.lines().any(header) {
        return text.to_owned();
    }
    let row = |l: &str| {
        let t = l.trim();
        t.matches('|').count() >= 4 && (t.starts_with('-') || t.contains(" |"))
    };
    let kept: Vec<&str> = text.lines().filter(|l| !row(l)).collect();
    kept.join("\n").trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use crate::checks::tools::{explain, Uses};

    #[test]
    fn a_runners_failures_come_without_the_coverage_table_after_them() {
        let mocha = "  1 passing\n  1 failing\n\n  1) cookie.serialize\n       should serialize valid domain:\n     TypeError: option domain is invalid\n      at Object.serialize (index.js:81:16)\n\n\n\n----------|---------|----------|---------|---------|-------------------\nFile      | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s\n----------|---------|----------|---------|---------|-------------------\nAll files |   66.37 |    59.25 |   85.71 |   65.74 |\n index.js |   66.37 |    59.25 |   85.71 |   65.74 | 221,225-231\n----------|---------|----------|---------|---------|-------------------\n";
        let uses = super::super::recognise("mocha", None);
        let e = explain(&uses, mocha, "");
        assert!(e.starts_with("  1) cookie.serialize"), "{e}");
        assert!(e.ends_with("at Object.serialize (index.js:81:16)"), "{e}");
        assert!(!e.contains("% Stmts") && !e.contains("All files"), "{e}");
    }

    #[test]
    fn without_a_summary_the_head_and_the_tail() {
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let e = explain(&Uses::default(), "", &long);
        assert!(e.starts_with("line 1\n") && e.contains("… (60 lines)") && e.ends_with("line 100"));
        assert_eq!(explain(&Uses::default(), "ok\n", "warn\n"), "ok\nwarn");
    }
}
