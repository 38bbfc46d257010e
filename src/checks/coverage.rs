//! The total coverage percentage from a coverage tool's output or report file:
//! `cargo llvm-cov --summary-only --json`, `coverage report --format=total`, an lcov
//! tracefile (`LF:`/`LH:` lines), a Cobertura XML report (`line-rate`), or a last resort of
//! the last percentage on the final line.

use std::path::Path;

/// Report files looked for in the worktree when the command's output holds no total.
pub const REPORT_FILES: [&str; 5] = [
    "lcov.info",
    "coverage/lcov.info",
    "coverage.xml",
    "cobertura.xml",
    "coverage/cobertura-coverage.xml",
];

/// The total line coverage, in percent, found in `text`.
pub fn parse_total(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    llvm_cov_json(trimmed)
        .or_else(|| cobertura(trimmed))
        .or_else(|| lcov(trimmed))
        .or_else(|| last_number(trimmed))
        .filter(|p| (0.0..=100.0).contains(p))
}

/// The total from the first report file found under `dir`.
pub fn from_report_files(dir: &Path) -> Option<(f64, &'static str)> {
    REPORT_FILES.iter().find_map(|name| {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        parse_total(&text).map(|p| (p, *name))
    })
}

fn llvm_cov_json(text: &str) -> Option<f64> {
    let start = text.find('{')?;
    let v: serde_json::Value = serde_json::from_str(&text[start..]).ok()?;
    v.pointer("/data/0/totals/lines/percent")
        .or_else(|| v.pointer("/totals/percent_covered"))
        .and_then(|p| p.as_f64())
}

fn cobertura(text: &str) -> Option<f64> {
    let at = text.find("<coverage")?;
    let tag = &text[at..text[at..].find('>').map_or(text.len(), |e| at + e)];
    let rate = tag.split("line-rate=\"").nth(1)?.split('"').next()?;
    rate.parse::<f64>().ok().map(|r| r * 100.0)
}

fn lcov(text: &str) -> Option<f64> {
    let (mut found, mut hit, mut any) = (0u64, 0u64, false);
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("LF:") {
            found += n.trim().parse::<u64>().ok()?;
            any = true;
        } else if let Some(n) = line.strip_prefix("LH:") {
            hit += n.trim().parse::<u64>().ok()?;
        }
    }
    match (any, found) {
        (false, _) => None,
        (true, 0) => Some(100.0),
        (true, f) => Some(hit as f64 * 100.0 / f as f64),
    }
}

fn last_number(text: &str) -> Option<f64> {
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    last.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .rfind(|w| !w.is_empty() && w.chars().any(|c| c.is_ascii_digit()))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format() {
        let llvm = r#"{"data":[{"totals":{"lines":{"count":200,"covered":150,"percent":75.0}}}],"type":"llvm.coverage.json.export"}"#;
        assert_eq!(parse_total(llvm), Some(75.0));
        assert_eq!(parse_total("87\n"), Some(87.0));
        assert_eq!(parse_total("87.25"), Some(87.25));
        assert_eq!(parse_total("TOTAL    120   30    75%"), Some(75.0));
        let lcov =
            "SF:src/a.rs\nLF:10\nLH:5\nend_of_record\nSF:src/b.rs\nLF:30\nLH:30\nend_of_record\n";
        assert_eq!(parse_total(lcov), Some(87.5));
        let xml = r#"<?xml version="1.0" ?><coverage version="7.4" line-rate="0.8125" branch-rate="0"><sources/></coverage>"#;
        assert_eq!(parse_total(xml), Some(81.25));
        assert_eq!(parse_total(""), None);
        assert_eq!(parse_total("no numbers here"), None);
        assert_eq!(parse_total("250"), None, "not a percentage");
    }

    #[test]
    fn report_files_are_found_in_the_worktree() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(from_report_files(dir.path()), None);
        std::fs::create_dir(dir.path().join("coverage")).unwrap();
        std::fs::write(dir.path().join("coverage/lcov.info"), "LF:4\nLH:1\n").unwrap();
        assert_eq!(
            from_report_files(dir.path()),
            Some((25.0, "coverage/lcov.info"))
        );
    }
}
