//! Coverage, measured once and precisely: how a plan measures it ([`CoverageSpec`]: the test
//! check run under coverage, then a command that writes a machine-readable report to a file
//! ralph names) and the total read from that report — `coverage json`, `cargo llvm-cov --json`,
//! an lcov tracefile, a Cobertura XML report, Istanbul's `coverage-summary.json` — else from
//! the command's output, where a total line (`TOTAL … 99.45%`, a bare number) counts and a
//! `fail_under` message never does.

use crate::process::{self, Kind};
use std::path::Path;
use std::time::Duration;

pub use super::tools::{CoverageSpec, REPORT};

/// Runs the coverage command in `dir` (the report goes to `scratch`) and reads the total: from
/// the report it wrote, else from its output, else from a report file in the worktree. When no
/// total could be read, why not: the command's failure with the end of what it said. A spec
/// without a command (the tests collect coverage themselves) reads the worktree's report files.
pub async fn measure(
    spec: &CoverageSpec,
    dir: &Path,
    scratch: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<f64, String> {
    if spec.command.is_empty() {
        return from_report_files(dir).map(|(p, _)| p).ok_or_else(|| {
            format!(
                "the tests wrote none of the reports read ({})",
                super::tools::coverage_reports().join(", ")
            )
        });
    }
    let report = scratch.join("coverage-report");
    let command = spec.command.replace(
        REPORT,
        &crate::process::shell_quote(&report.display().to_string()),
    );
    // Prepared as a check is: its tools' state (uv's cache) in a folder of its own.
    let uses = super::tools::recognise(&command, None);
    let prepared = super::tools::prepare(&uses, &command, env, scratch);
    let mut writable: Vec<&Path> = prepared.writable.iter().map(|p| p.as_path()).collect();
    writable.push(scratch);
    let cmd = super::confined::shell(
        &prepared.command,
        dir,
        Kind::Check,
        &prepared.env,
        &writable,
    )
    .timeout(timeout);
    let out = process::run(&cmd)
        .await
        .map_err(|e| format!("`{}` could not start: {e}", spec.command))?;
    if out.timed_out {
        return Err(format!(
            "`{}` timed out after {}s",
            spec.command,
            timeout.as_secs()
        ));
    }
    crate::untrusted_dir::report_text(&report, "the coverage report")
        .and_then(|text| parse_total(&text))
        .or_else(|| parse_total(&out.stdout))
        .or_else(|| from_report_files(dir).map(|(p, _)| p))
        .ok_or_else(|| failure(spec, &out))
}

/// Why a coverage command gave no total: it gave none, or it failed and the end of what it said.
fn failure(spec: &CoverageSpec, out: &process::Output) -> String {
    let said = super::tools::explain(&Default::default(), &out.stdout, &out.stderr);
    let said = said.trim();
    let tail: Vec<&str> = said.lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    let code = out.code.map_or("none".into(), |c| c.to_string());
    match (out.success(), said.is_empty()) {
        (true, _) => format!("`{}` gave no total", spec.command),
        (false, true) => format!("`{}` failed (exit {code})", spec.command),
        (false, false) => format!(
            "`{}` failed (exit {code}): {}",
            spec.command,
            tail.join(" / ")
        ),
    }
}

/// The total line coverage, in percent, found in `text`.
fn parse_total(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    json_total(trimmed)
        .or_else(|| cobertura(trimmed))
        .or_else(|| lcov(trimmed))
        .or_else(|| total_line(trimmed))
        .filter(|p| (0.0..=100.0).contains(p))
}

/// The total from the first report file found under `dir`.
fn from_report_files(dir: &Path) -> Option<(f64, &'static str)> {
    super::tools::coverage_reports()
        .into_iter()
        .find_map(|name| {
            let text = crate::untrusted_dir::text_in(dir, name, crate::untrusted_dir::MAX_REPORT)?;
            parse_total(&text).map(|p| (p, name))
        })
}

/// `cargo llvm-cov --json`, coverage.py's `coverage json`, Istanbul's json-summary, else
/// Istanbul's per-file `coverage-final.json` (Jest's and Vitest's default `json` report).
fn json_total(text: &str) -> Option<f64> {
    let start = text.find('{')?;
    let v: serde_json::Value = serde_json::from_str(&text[start..]).ok()?;
    v.pointer("/data/0/totals/lines/percent")
        .or_else(|| v.pointer("/totals/percent_covered"))
        .or_else(|| v.pointer("/total/lines/pct"))
        .and_then(|p| p.as_f64())
        .or_else(|| istanbul_final(&v))
}

/// Line coverage from Istanbul's per-file data, as Istanbul counts it: a line is one where a
/// statement starts, covered when any statement starting there ran.
fn istanbul_final(v: &serde_json::Value) -> Option<f64> {
    let files = v.as_object()?;
    let (mut lines, mut hit) = (0u64, 0u64);
    for file in files.values() {
        let (map, counts) = (file.get("statementMap")?.as_object()?, file.get("s")?);
        let mut by_line: std::collections::BTreeMap<u64, bool> = Default::default();
        for (id, statement) in map {
            let line = statement.pointer("/start/line")?.as_u64()?;
            let ran = counts.get(id).and_then(|c| c.as_u64()).unwrap_or(0) > 0;
            *by_line.entry(line).or_default() |= ran;
        }
        lines += by_line.len() as u64;
        hit += by_line.values().filter(|r| **r).count() as u64;
    }
    match (files.is_empty(), lines) {
        (true, _) => None,
        (false, 0) => Some(100.0),
        (false, n) => Some(hit as f64 * 100.0 / n as f64),
    }
}

/// The `line-rate` of a Cobertura report's `<coverage>` element, as a percentage.
fn cobertura(text: &str) -> Option<f64> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"coverage" => {
                let rate = e.try_get_attribute("line-rate").ok()??;
                let rate = rate.unescape_value().ok()?;
                return rate.trim().parse::<f64>().ok().map(|r| r * 100.0);
            }
            Event::Eof => return None,
            _ => {}
        }
    }
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

/// A total in text: `coverage report`'s `TOTAL … 99.45%` line, Istanbul's text table (`All
/// files | stmts | branch | funcs | lines |`, Jest's and Vitest's), else the last line that is
/// only a number (`coverage report --format=total`). A line about `fail_under` is not a total.
fn total_line(text: &str) -> Option<f64> {
    let number = |w: &str| w.trim().trim_end_matches('%').parse::<f64>().ok();
    let table = text.lines().find_map(|l| {
        let plain = crate::output::strip_ansi(l);
        let cells: Vec<&str> = plain.split('|').map(str::trim).collect();
        match cells.as_slice() {
            ["All files", _stmts, _branch, _funcs, lines, ..] => number(lines),
            _ => None,
        }
    });
    if table.is_some() {
        return table;
    }
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("fail") && !l.contains("less than"));
    let mut found = None;
    for line in lines {
        if line.starts_with("TOTAL") {
            found = line.split_whitespace().last().and_then(number).or(found);
        } else if line.split_whitespace().count() == 1 {
            found = number(line).or(found);
        }
    }
    found
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
        assert_eq!(parse_total("TOTAL    120   30    99.45%"), Some(99.45));
        // A fail_under message is not the total.
        assert_eq!(
            parse_total("25.04\nCoverage failure: total of 25.04 is less than fail-under=100.00\n"),
            Some(25.04)
        );
        assert_eq!(
            parse_total("FAIL Required test coverage of 100% not reached. Total coverage: 25.04%"),
            None
        );
        let coverage_py = r#"{"meta": {"format": 3}, "files": {}, "totals": {"covered_lines": 1985, "num_statements": 2023, "percent_covered": 98.12160158180920, "percent_covered_display": "98"}}"#;
        assert_eq!(parse_total(coverage_py), Some(98.1216015818092));
        let istanbul =
            r#"{"total": {"lines": {"total": 8, "covered": 7, "skipped": 0, "pct": 87.5}}}"#;
        assert_eq!(parse_total(istanbul), Some(87.5));
        let lcov =
            "SF:src/a.rs\nLF:10\nLH:5\nend_of_record\nSF:src/b.rs\nLF:30\nLH:30\nend_of_record\n";
        assert_eq!(parse_total(lcov), Some(87.5));
        let xml = r#"<?xml version="1.0" ?><coverage version="7.4" line-rate="0.8125" branch-rate="0"><sources/></coverage>"#;
        assert_eq!(parse_total(xml), Some(81.25));
        let jest = "\x1b[2m----------|---------|----------|---------|---------|\x1b[0m\n\
                    All files |   85.71 |      100 |      50 |   83.33 |                   \n\
                    \x20sum.js  |   85.71 |      100 |      50 |   83.33 | 7\n";
        assert_eq!(parse_total(jest), Some(83.33));
        // Istanbul's per-file data: lines 1 and 2 ran, line 3 (two statements) did not.
        let fin = r#"{"/w/a.js": {"path": "/w/a.js",
            "statementMap": {"0": {"start": {"line": 1, "column": 0}, "end": {"line": 1, "column": 9}},
                             "1": {"start": {"line": 2, "column": 0}, "end": {"line": 2, "column": 9}},
                             "2": {"start": {"line": 3, "column": 0}, "end": {"line": 3, "column": 4}},
                             "3": {"start": {"line": 3, "column": 5}, "end": {"line": 3, "column": 9}}},
            "s": {"0": 1, "1": 4, "2": 0, "3": 0}, "fnMap": {}, "f": {}, "branchMap": {}, "b": {}},
          "/w/b.js": {"path": "/w/b.js",
            "statementMap": {"0": {"start": {"line": 1, "column": 0}, "end": {"line": 1, "column": 9}}},
            "s": {"0": 2}}}"#;
        assert_eq!(parse_total(fin), Some(75.0));
        assert_eq!(parse_total(""), None);
        assert_eq!(parse_total("no numbers here"), None);
        assert_eq!(parse_total("250"), None, "not a percentage");
    }

    #[tokio::test]
    async fn tests_that_collect_coverage_themselves_are_read_from_their_report() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let spec = CoverageSpec {
            test_command: None,
            command: String::new(),
            reason: "jest --coverage".into(),
        };
        let t = Duration::from_secs(5);
        let missing = measure(&spec, dir.path(), scratch.path(), t, &[])
            .await
            .unwrap_err();
        assert!(missing.contains("wrote none of the reports"), "{missing}");
        std::fs::create_dir(dir.path().join("coverage")).unwrap();
        std::fs::write(dir.path().join("coverage/lcov.info"), "LF:4\nLH:3\n").unwrap();
        let found = measure(&spec, dir.path(), scratch.path(), t, &[]).await;
        assert_eq!(found, Ok(75.0));
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
