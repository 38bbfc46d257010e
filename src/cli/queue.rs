//! `ralph queue`: the issues ralph may compete on next — open, labelled ready, not
//! `in-progress` or `attention-needed`, not assigned to someone else, not pull requests —
//! oldest first. `--json` prints a GitHub Actions matrix (`{"include":[{"issue":12},…]}`).

use super::Context;
use crate::error::Exit;
use crate::output::sanitize;
use crate::tracker::{self, workflow, IssueQuery, IssueState};
use anyhow::Result;
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct QueueArgs {
    /// At most this many issues
    #[arg(long, value_name = "K")]
    pub limit: Option<usize>,
}

#[derive(Serialize)]
struct Matrix {
    include: Vec<Entry>,
}

#[derive(Serialize)]
struct Entry {
    issue: u64,
}

pub async fn run(ctx: &Context, args: QueueArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let tracker = tracker::open(&settings).await?;
    let ready = settings.config.github.ready_label.clone();
    let issues = tracker
        .issues(&IssueQuery {
            labels: vec![ready.clone()],
            state: Some(IssueState::Open),
        })
        .await?;
    // Issues assigned to the token's own user stay in the queue.
    let me = if issues.iter().any(|i| !i.assignees.is_empty()) {
        tracker.current_user().await?
    } else {
        None
    };
    let queue = workflow::queue(issues, &ready, me.as_deref(), args.limit);
    if ctx.printer.json_mode() {
        ctx.printer.json(&Matrix {
            include: queue.iter().map(|i| Entry { issue: i.number }).collect(),
        })?;
        return Ok(Exit::Success);
    }
    if queue.is_empty() {
        ctx.printer.status(&format!(
            "no issue is ready on {} (open, labelled {ready}, not in-progress or attention-needed, not assigned to someone else)",
            sanitize(&tracker.describe())
        ));
        return Ok(Exit::Success);
    }
    let mut out = String::new();
    for i in &queue {
        let created = i
            .created_at
            .map(|c| c.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "#{:<6} {created:<10}  {}\n",
            i.number,
            sanitize(&i.title)
        ));
    }
    ctx.printer.data(&out)?;
    Ok(Exit::Success)
}
