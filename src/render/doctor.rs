//! The doctor's report on the terminal: the findings by area, each with ✓, ! or ✗, what was
//! found, and the hint under a problem; then a one-line verdict.

use crate::doctor::{Report, Status};
use crate::output::Paint;
use std::fmt::Write as _;

/// The report as text.
pub fn render_doctor(r: &Report, paint: Paint) -> String {
    let mut out = String::new();
    let width = r
        .findings
        .iter()
        .map(|f| f.check.chars().count())
        .max()
        .unwrap_or(0);
    let mut area = "";
    for f in &r.findings {
        if f.area != area {
            area = f.area;
            let _ = writeln!(out, "{}", paint.bold(area));
        }
        let mark = match f.status {
            Status::Ok => paint.good("✓"),
            Status::Warn => paint.warn("!"),
            Status::Fail => paint.bad("✗"),
        };
        let _ = writeln!(
            out,
            "  {mark} {:<width$}  {}",
            f.check,
            f.detail.replace('\n', " ")
        );
        if let Some(h) = &f.hint {
            let mut lines = h.lines();
            if let Some(first) = lines.next() {
                let _ = writeln!(out, "      {} {first}", paint.hint("hint:"));
            }
            for l in lines {
                let _ = writeln!(out, "            {l}");
            }
        }
    }
    let fails = r
        .findings
        .iter()
        .filter(|f| f.status == Status::Fail)
        .count();
    let warns = r
        .findings
        .iter()
        .filter(|f| f.status == Status::Warn)
        .count();
    let _ = writeln!(
        out,
        "{}",
        if fails == 0 {
            paint.good(&format!(
                "Ready: nothing would stop a competition{}.",
                if warns > 0 {
                    format!(" ({warns} warning(s))")
                } else {
                    String::new()
                }
            ))
        } else {
            paint.bad(&format!("{fails} problem(s) would stop a competition."))
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Finding;

    #[test]
    fn problems_carry_their_hints_and_the_verdict_counts_them() {
        let r = Report {
            ok: false,
            findings: vec![
                Finding {
                    area: "git",
                    check: "repository".into(),
                    status: Status::Ok,
                    detail: "/repo (on main)".into(),
                    hint: None,
                },
                Finding {
                    area: "checks",
                    check: "checks".into(),
                    status: Status::Fail,
                    detail: "none".into(),
                    hint: Some("name them:\n[checks]\ntest = \"make test\"".into()),
                },
            ],
        };
        assert_eq!(
            render_doctor(&r, Paint::plain()),
            "git\n  ✓ repository  /repo (on main)\nchecks\n  ✗ checks      none\n      hint: name them:\n            [checks]\n            test = \"make test\"\n1 problem(s) would stop a competition.\n"
        );
    }
}
