//! `ralph doctor [N]`: every preflight check of a competition, made without changing anything,
//! each with ✓/✗ and a hint (`--json`: the findings). Exits 1 when something would stop a
//! competition, 0 otherwise.

use super::Context;
use crate::doctor::examine;
use crate::error::Exit;
use crate::render::doctor::render_doctor;
use crate::tracker;
use anyhow::Result;
use clap::Args;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also check issue N: open, ready, open checkboxes, its branch free
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: Option<u64>,
}

pub async fn run(ctx: &Context, args: DoctorArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let opened = tracker::open(&settings).await;
    let report = examine(&settings, opened.as_ref().map(|t| t.as_ref()), args.issue).await;
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
