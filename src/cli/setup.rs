//! `ralph setup`: make sure the six workflow labels exist on the tracker
//! (docs/specification.md §2). Missing labels are created with ralph's colours and descriptions;
//! existing ones are left as they are, so running it again changes nothing.

use super::Context;
use crate::error::Exit;
use crate::output::sanitize;
use crate::tracker::{self, workflow, LabelAction};
use anyhow::Result;
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct SetupArgs {}

#[derive(Serialize)]
struct LabelJson {
    name: String,
    color: String,
    description: String,
    action: LabelAction,
}

pub async fn run(ctx: &Context, _args: SetupArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let tracker = tracker::open(&settings).await?;
    let specs = workflow::labels(&settings.config.github.ready_label);
    let done = tracker.ensure_labels(&specs).await?;
    if ctx.printer.json_mode() {
        let rows: Vec<LabelJson> = specs
            .iter()
            .zip(&done)
            .map(|(spec, (_, action))| LabelJson {
                name: spec.name.clone(),
                color: spec.color.clone(),
                description: spec.description.clone(),
                action: *action,
            })
            .collect();
        ctx.printer.json(&serde_json::json!({
            "tracker": tracker.describe(),
            "labels": rows,
        }))?;
        return Ok(Exit::Success);
    }
    if done.iter().all(|(_, a)| *a == LabelAction::NotNeeded) {
        ctx.printer.data(&format!(
            "{}: no labels to set up (local issues take any label)\n",
            sanitize(&tracker.describe())
        ))?;
        return Ok(Exit::Success);
    }
    let paint = ctx.printer.paint();
    let mut out = format!("Labels on {}:\n", sanitize(&tracker.describe()));
    for (name, action) in &done {
        let what = match action {
            LabelAction::Created => paint.good("created"),
            LabelAction::Exists => "exists".to_owned(),
            LabelAction::ExistsDifferent => {
                "exists (its colour or description differs; left as it is)".to_owned()
            }
            LabelAction::NotNeeded => "no set-up needed".to_owned(),
        };
        out.push_str(&format!("  {:<18} {what}\n", sanitize(name)));
    }
    ctx.printer.data(&out)?;
    Ok(Exit::Success)
}
