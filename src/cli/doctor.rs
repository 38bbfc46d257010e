//! `ralph doctor [N]`: every preflight check of a competition, made without changing anything,
//! each with ✓/✗ and a hint (`--json`: the findings); then, unless `--no-setup`, the setup a
//! competition would run, run in a scratch checkout under the same sandbox. Exits 1 when
//! something would stop a competition, 0 otherwise.

use super::Context;
use crate::doctor::{examine, rehearse, Rehearsal, Report, Status};
use crate::error::Exit;
use crate::output::Paint;
use crate::tracker;
use anyhow::Result;
use clap::Args;
use std::fmt::Write as _;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also check issue N: open, ready, open checkboxes, its branch free
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: Option<u64>,
    /// Skip running the setup a competition would run (in a scratch checkout; can take minutes)
    #[arg(long)]
    pub no_setup: bool,
}

pub async fn run(ctx: &Context, args: DoctorArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let opened = tracker::open(&settings).await;
    let mut report = examine(&settings, opened.as_ref().map(|t| t.as_ref()), args.issue).await;
    let how = if args.no_setup {
        Rehearsal::Skipped
    } else {
        // The sandbox a competition installs, for the setup's run (after the other findings,
        // which are made as they always were).
        match ctx.install_sandbox(&settings, false).await {
            Ok(status) => Rehearsal::Confined(status),
            Err(e) => Rehearsal::Unconfined(e.to_string()),
        }
    };
    let say = |line: &str| ctx.printer.status(line);
    rehearse(&settings, &mut report, how, &say).await;
    if ctx.printer.json_mode() {
        ctx.printer.json(&report)?;
    } else {
        ctx.printer
            .data(&render_doctor(&report, ctx.printer.paint()))?;
    }
    Ok(if report.ok {
        Exit::Success
    } else {
        Exit::Failure
    })
}

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
    use crate::doctor::{Finding, Report, Status};
    use crate::output::Paint;

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
            ..Default::default()
        };
        assert_eq!(
            render_doctor(&r, Paint::plain()),
            "git\n  ✓ repository  /repo (on main)\nchecks\n  ✗ checks      none\n      hint: name them:\n            [checks]\n            test = \"make test\"\n1 problem(s) would stop a competition.\n"
        );
    }
}
