//! The checks as they run (docs/commands.md, Live progress): a live line per running check with its
//! elapsed time (a heartbeat line off a terminal), and, as each one finishes, its result line — ✓,
//! ✗, unavailable, or failing on base once the baseline exists — with a failing check's last
//! lines at once, not after the whole suite.

use super::baseline::Baseline;
use super::result::{CheckResult, CheckStatus};
use super::run::Observer;
use crate::output::Paint;
use crate::progress::Progress;
use std::fmt::Write as _;

/// Who watches the checks run, and what their failures are compared with.
#[derive(Clone, Copy)]
pub struct Watch<'a> {
    pub progress: &'a Progress,
    /// The checks on the base: a failure it shares is shown as failing on base.
    pub baseline: Option<&'a Baseline>,
    pub paint: Paint,
    /// What the live line calls a check (`check`, `baseline check`).
    pub label: &'static str,
    /// Print each finished check's result lines.
    pub notes: bool,
}

impl<'a> Watch<'a> {
    /// Nobody watching (the baseline run of tests, helpers).
    pub fn unwatched(progress: &'a Progress) -> Watch<'a> {
        Watch {
            progress,
            baseline: None,
            paint: Paint::plain(),
            label: "check",
            notes: false,
        }
    }

    /// The checks of an attempt: live lines and a result line as each finishes.
    pub fn attempt(progress: &'a Progress, baseline: &'a Baseline, paint: Paint) -> Watch<'a> {
        Watch {
            progress,
            baseline: Some(baseline),
            paint,
            label: "check",
            notes: true,
        }
    }
}

impl Observer for Watch<'_> {
    /// Shows the check `name` (`command`) running while the returned task lives.
    fn started(&self, name: &str, command: &str) -> Box<dyn Send> {
        let task = self.progress.start(format!("{} {name}", self.label));
        task.activity(command);
        Box::new(task)
    }

    /// Prints a finished check's lines, judged against the baseline.
    fn finished(&self, result: &CheckResult) {
        if !self.notes {
            return;
        }
        let mut judged = result.clone();
        if let Some(b) = self.baseline {
            b.judge(&mut judged);
        }
        self.progress
            .note(status_lines(&judged, self.paint).trim_end());
    }
}

/// A check's line (mark, name, status, time, command), its hint, and for a failure the start
/// and end of its output.
pub fn status_lines(c: &CheckResult, paint: Paint) -> String {
    let mut out = String::new();
    let mark = match c.status {
        CheckStatus::Passed => paint.good("✓"),
        CheckStatus::Unavailable | CheckStatus::Skipped => paint.dim("-"),
        CheckStatus::FailingOnBase => paint.warn("!"),
        _ if c.advisory.is_some() => paint.warn("!"),
        _ => paint.bad("✗"),
    };
    let _ = writeln!(
        out,
        "  {mark} {:<16} {:<11} {:>6.1}s  {}",
        c.name,
        c.status.word(),
        c.duration_ms as f64 / 1000.0,
        paint.dim(&c.command)
    );
    let failed = matches!(c.status, CheckStatus::Failed | CheckStatus::TimedOut);
    // Said as it fails, before verification names it among the reasons (or not).
    if let Some(why) = c.advisory.as_ref().filter(|_| failed) {
        if !c.hint.as_deref().is_some_and(|h| h.starts_with("advisory")) {
            let _ = writeln!(
                out,
                "      {} advisory, never a reason to reject: {why}",
                paint.hint("hint:")
            );
        }
    }
    if let Some(h) = &c.hint {
        let _ = writeln!(out, "      {} {h}", paint.hint("hint:"));
    }
    if failed {
        // The start (failing tests named first) and the end (the summary line).
        let lines: Vec<&str> = c.output_tail.lines().collect();
        let shown: Vec<&str> = if lines.len() <= 14 {
            lines
        } else {
            let mut v = lines[..6].to_vec();
            v.push("…");
            v.extend_from_slice(&lines[lines.len() - 6..]);
            v
        };
        for line in shown {
            let _ = writeln!(out, "      {}", paint.dim(line));
        }
    }
    out
}
