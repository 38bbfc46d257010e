//! The verification report for people: on the terminal (a line per check with its mark, status,
//! time and command, the failing output's last lines, coverage, the diff, protected paths, the
//! verdict) and as markdown for issue comments and pull requests (check output fenced, with
//! fences inside it broken up so they cannot close the block).

use super::markdown::{cell, code, inert, strip_ansi};
use crate::checks::live::status_lines;
use crate::checks::{CheckResult, CheckStatus};
use crate::output::Paint;
use crate::verify::VerificationReport;
use std::fmt::Write as _;

fn cov(v: Option<f64>, why: Option<&String>) -> String {
    match (v, why) {
        (Some(p), _) => format!("{p:.2}%"),
        (None, Some(why)) => format!("not measured ({why})"),
        (None, None) => "not measured".to_owned(),
    }
}

/// `before → after (delta)`, saying once why neither was measured when the reason is the same.
fn coverage_line(c: &crate::verify::Coverage) -> String {
    let same = c.before.is_none()
        && c.after.is_none()
        && c.before_missing.is_some()
        && c.before_missing == c.after_missing;
    if same {
        return cov(None, c.after_missing.as_ref());
    }
    format!(
        "{} → {}{}",
        cov(c.before, c.before_missing.as_ref()),
        cov(c.after, c.after_missing.as_ref()),
        c.delta().map(|d| format!(" ({d:+.2})")).unwrap_or_default()
    )
}

/// The report for the terminal; `with_checks: false` leaves out the check lines (the live
/// view printed each as it finished).
pub fn render_terminal(r: &VerificationReport, paint: Paint, with_checks: bool) -> String {
    let mut out = String::new();
    if with_checks {
        for c in &r.checks {
            out.push_str(&status_lines(c, paint));
        }
    }
    if let Some(taken) = &r.taken {
        let _ = writeln!(out, "  checks: {}", taken.note);
    }
    let _ = writeln!(out, "  coverage: {}", coverage_line(&r.coverage));
    let _ = writeln!(
        out,
        "  diff: +{} −{} in {} file(s)",
        r.diff.lines_added,
        r.diff.lines_removed,
        r.diff.files_affected()
    );
    if !r.new_tests.is_empty() {
        let _ = writeln!(out, "  new tests: {}", new_tests_line(&r.new_tests));
    }
    for f in &r.protected {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            paint.bad("protected:"),
            f.path,
            f.reason
        );
    }
    for f in &r.settings_changes {
        let _ = writeln!(out, "  settings: {}: {}", f.path, f.reason);
    }
    for f in &r.moved_tests {
        let _ = writeln!(out, "  moved: {}: {}", f.path, f.reason);
    }
    let _ = writeln!(
        out,
        "  {}",
        if r.passed() {
            paint.good("verification passed")
        } else {
            paint.bad("verification failed")
        }
    );
    out
}

/// `2 passed, 1 never ran (tests/exact.rs rounds_up)`: what became of the change's tests.
pub fn new_tests_line(tests: &[crate::checks::new_tests::NewTest]) -> String {
    use crate::checks::new_tests::Outcome;
    [
        (Outcome::Passed, "passed"),
        (Outcome::Failed, "failed"),
        (Outcome::NotRun, "never ran"),
        (Outcome::Unknown, "not reported by name"),
        (Outcome::Unidentified, "not told apart"),
        (Outcome::Skipped, "not run this attempt"),
    ]
    .iter()
    .filter_map(|(o, word)| {
        let these: Vec<String> = tests
            .iter()
            .filter(|t| t.outcome == *o)
            .map(|t| format!("{} {}", t.file, t.name))
            .collect();
        (!these.is_empty()).then(|| format!("{} {word} ({})", these.len(), these.join(", ")))
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// The report as markdown, for issue comments and pull requests. Check output is fenced.
pub fn render_markdown(r: &VerificationReport) -> String {
    let mut out = checks_table(&r.checks);
    let _ = writeln!(
        out,
        "\nCoverage: {}. Diff: +{} −{} in {} file(s).",
        inert(&coverage_line(&r.coverage)),
        r.diff.lines_added,
        r.diff.lines_removed,
        r.diff.files_affected()
    );
    out.push_str(&markdown_notes(r));
    for c in r.failing_checks() {
        out.push_str(&output_block(c));
    }
    out
}

/// The checks as a markdown table: name, result (an advisory check's failure says it is not
/// held against the change), time.
fn checks_table(checks: &[CheckResult]) -> String {
    let mut out = String::from("| check | result | time |\n|---|---|---|\n");
    for c in checks {
        let advisory = match (&c.advisory, c.status) {
            (Some(_), CheckStatus::Failed | CheckStatus::TimedOut) => {
                " (advisory: not held against the change)"
            }
            _ => "",
        };
        let _ = writeln!(
            out,
            "| `{}` | {}{advisory} | {:.1}s |",
            cell(&c.name),
            status_mark(c.status),
            c.duration_ms as f64 / 1000.0
        );
    }
    out
}

/// A check's status as the markdown table shows it.
fn status_mark(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Passed => "✅ passed",
        CheckStatus::Failed => "❌ failed",
        CheckStatus::TimedOut => "⏱️ timed out",
        CheckStatus::Unavailable => "➖ unavailable",
        CheckStatus::FailingOnBase => "⚠️ failing on base",
        CheckStatus::Skipped => "⏭️ not run",
    }
}

/// What the markdown says besides the checks, a paragraph each: the verdicts taken from an
/// earlier attempt on the same tree, the checks failing on the base too, the environment's
/// failures, and the protected paths, changed settings and moved tests found in the change.
fn markdown_notes(r: &VerificationReport) -> String {
    let mut out = String::new();
    if let Some(taken) = &r.taken {
        let _ = writeln!(out, "\n**Verdict taken**: {}", inert(&taken.note));
    }
    for c in r.failing_on_base() {
        let _ = writeln!(
            out,
            "\n**Failing on base** `{}`: {}",
            cell(&c.name),
            inert(c.hint.as_deref().unwrap_or("it fails on the base too"))
        );
    }
    for why in &r.setup {
        let _ = writeln!(
            out,
            "\n**Environment**: {}",
            inert(why.lines().next().unwrap_or(""))
        );
    }
    let found = [
        ("Protected path", &r.protected),
        ("Settings changed", &r.settings_changes),
        ("Tests moved", &r.moved_tests),
    ];
    for (label, findings) in found {
        for f in findings {
            let _ = writeln!(out, "\n**{label}** {}: {}", code(&f.path), inert(&f.reason));
        }
    }
    out
}

/// A failing check's last lines of output, in a collapsed block. Fenced: nothing in a check's
/// output (the agent's tests print it) acts on the page.
fn output_block(c: &CheckResult) -> String {
    let tail = strip_ansi(&c.output_tail).replace("```", "`\u{200b}``");
    format!(
        "\n<details><summary><code>{}</code> output (last lines)</summary>\n\n```\n{}\n```\n</details>\n",
        inert(&c.name),
        tail
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{CheckKind, CheckResult};
    use crate::verify::Coverage;
    use crate::workspace::DiffStats;

    fn check(name: &str, kind: CheckKind, status: CheckStatus) -> CheckResult {
        CheckResult {
            name: name.into(),
            kind,
            command: format!("run {name}"),
            status,
            exit_code: Some(if status == CheckStatus::Passed { 0 } else { 1 }),
            duration_ms: 1500,
            output_tail: "error[E0308]: mismatched types\n```\nend".into(),
            hint: None,
            measure: Default::default(),
            configured: false,
            advisory: None,
            uses: Default::default(),
            trace: Default::default(),
        }
    }

    #[test]
    fn renderings_show_every_check_and_keep_fences_closed() {
        let r = VerificationReport {
            checks: vec![
                check("lint", CheckKind::Quality, CheckStatus::Failed),
                check("test", CheckKind::Test, CheckStatus::Passed),
            ],
            coverage: Coverage {
                before: Some(75.0),
                after: Some(76.5),
                ..Coverage::default()
            },
            diff: DiffStats {
                files: vec![],
                lines_added: 10,
                lines_removed: 2,
            },
            protected: vec![],
            require_test: true,
            setup: Vec::new(),
            new_tests: Vec::new(),
            settings_changes: vec![crate::workspace::Finding {
                path: "pyproject.toml".into(),
                reason: "changes the lint settings; the checks pass under the base's settings too"
                    .into(),
                settings: true,
            }],
            moved_tests: vec![crate::workspace::Finding {
                path: "tests/test_a.py".into(),
                reason: "deletes a test file, but its tests run elsewhere and pass: `test_x`"
                    .into(),
                settings: false,
            }],
            taken: None,
        };
        let md = render_markdown(&r);
        assert!(
            md.contains("**Tests moved** `tests/test_a.py`: deletes a test file"),
            "{md}"
        );
        assert!(md.contains("| `lint` | ❌ failed | 1.5s |"), "{md}");
        assert!(
            md.contains(
                "**Settings changed** `pyproject.toml`: changes the lint settings; the checks pass"
            ),
            "{md}"
        );
        assert!(md.contains("75.00% → 76.50% (+1.50)"));
        assert!(md.contains("<summary><code>lint</code> output"));
        assert_eq!(
            md.matches("\n```").count(),
            2,
            "the output's own fence is broken up: {md}"
        );
        let term = render_terminal(&r, Paint::plain(), true);
        assert!(term.contains("✗ lint") && term.contains("✓ test"), "{term}");
        assert!(term.contains("mismatched types"));
        assert!(term.contains("verification failed"));
        // With the live view on, the checks were printed as they finished.
        let summary = render_terminal(&r, Paint::plain(), false);
        assert!(!summary.contains("✓ test") && summary.contains("verification failed"));
    }

    #[test]
    fn a_verdict_taken_from_the_same_tree_is_said_in_both_renderings() {
        let said = "the tree of attempt 2 is attempt 1's (tree 1a2b3c4): its verdict is taken, not run again";
        let r = VerificationReport {
            checks: vec![check("test", CheckKind::Test, CheckStatus::Passed)],
            taken: Some(crate::verify::Taken {
                note: said.into(),
                nothing_ran: true,
            }),
            ..VerificationReport::none()
        };
        let term = render_terminal(&r, Paint::plain(), false);
        assert!(term.contains(&format!("  checks: {said}\n")), "{term}");
        let md = render_markdown(&r);
        assert!(md.contains(&format!("**Verdict taken**: {said}")), "{md}");
        let plain = VerificationReport { taken: None, ..r };
        assert!(!render_terminal(&plain, Paint::plain(), false).contains("checks:"));
        assert!(!render_markdown(&plain).contains("Verdict taken"));
    }
}
