//! `ralph reset --issue N`: the way out of a finished (or crashed) run on one issue. It removes
//! the issue's local branch `ralph/N-…`, ralph's checkouts of it with their registrations (which
//! git's own `branch -D` and `worktree remove` refuse) and its run state under `.ralph/runs/N/`,
//! so that `ralph compete N` starts again from scratch. The events, the caches and the remote's
//! branch stay: a branch still on the remote is named, with the command that deletes it there.
//! Refused while a run on the issue holds its lock; asks on a terminal, else needs `--yes`.

use super::Context;
use crate::error::{Exit, UserError};
use anyhow::{Context as _, Result};
use std::path::Path;

pub async fn run(ctx: &Context, issue: u64, yes: bool) -> Result<Exit> {
    if crate::compete::RunLock::is_held(&ctx.ralph_dir, issue) {
        return Err(UserError::usage(format!("a run on #{issue} is working"))
            .with_hint("wait for it to end, or stop it (Ctrl-C), then run this again")
            .into());
    }
    let Some(dir) = super::reset::checkouts_of(ctx) else {
        return Err(UserError::usage(
            "cannot tell where ralph's checkouts of this repository are: there is no home folder",
        )
        .with_hint("set `[workspace] root` in .ralph/config.toml")
        .into());
    };
    let found = crate::workspace::leftovers(&ctx.root, &dir)?
        .into_iter()
        .find(|l| l.issue == issue)
        .unwrap_or(crate::workspace::Leftover {
            issue,
            ..Default::default()
        });
    let state = ctx.ralph_dir.join("runs").join(issue.to_string());
    let remote = match ctx.settings() {
        Ok(s) => s.config.git.remote.clone(),
        Err(_) => "origin".to_owned(),
    };
    if found.branches.is_empty() && found.checkouts.is_empty() && !state.exists() {
        let on_remote = remote_branches(&ctx.root, &remote, issue);
        ctx.printer.status(&format!(
            "Nothing to reset for #{issue}: no branch, checkout or run state here."
        ));
        say_remote(ctx, &remote, &on_remote);
        return report(ctx, &found, false, &on_remote);
    }
    let mut parts = Vec::new();
    if !found.branches.is_empty() {
        parts.push(format!("the branch {}", found.branches.join(", ")));
    }
    if !found.checkouts.is_empty() {
        parts.push(format!(
            "{} checkout(s) in {}",
            found.checkouts.len(),
            dir.display()
        ));
    }
    if state.exists() {
        parts.push(format!("the run state {}", state.display()));
    }
    let question = format!(
        "Delete {} of #{issue}? Its events and the remote's branch stay. [y/N] ",
        parts.join(", ")
    );
    let confirmed = super::prompt::confirm(
        &question,
        yes,
        format!("refusing to delete the branch and checkouts of #{issue} without confirmation"),
        &format!("run `ralph reset --issue {issue} --yes` to confirm when not on a terminal"),
    )
    .await?;
    if !confirmed {
        ctx.printer.status("Nothing deleted.");
        return Ok(Exit::Success);
    }
    let removed = crate::workspace::remove_issue(&ctx.root, &dir, issue).await?;
    let cleared = state.exists();
    if cleared {
        std::fs::remove_dir_all(&state)
            .with_context(|| format!("cannot delete {}", state.display()))?;
    }
    let on_remote = remote_branches(&ctx.root, &remote, issue);
    if !ctx.printer.json_mode() {
        ctx.printer.data(&format!(
            "Deleted {} branch(es), {} checkout(s){} of #{issue}.\n",
            removed.branches.len(),
            removed.checkouts.len(),
            if cleared { " and its run state" } else { "" }
        ))?;
    }
    say_remote(ctx, &remote, &on_remote);
    report(ctx, &removed, cleared, &on_remote)
}

/// The issue's branches the remote had when last fetched (`refs/remotes/<remote>/ralph/N-…`).
fn remote_branches(root: &Path, remote: &str, issue: u64) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Vec::new();
    };
    let prefix = format!("{remote}/ralph/{issue}-");
    let Ok(branches) = repo.branches(Some(git2::BranchType::Remote)) else {
        return Vec::new();
    };
    branches
        .flatten()
        .filter_map(|(b, _)| b.name().ok().flatten().map(str::to_owned))
        .filter(|n| n.starts_with(&prefix))
        .filter_map(|n| n.strip_prefix(&format!("{remote}/")).map(str::to_owned))
        .collect()
}

fn say_remote(ctx: &Context, remote: &str, on_remote: &[String]) {
    for b in on_remote {
        ctx.printer.warn(&format!(
            "`{b}` is still on `{remote}` (a pull request may be open on it); a new run is refused while it is there: `git push {remote} --delete {b}` deletes it"
        ));
    }
}

fn report(
    ctx: &Context,
    removed: &crate::workspace::Leftover,
    run_state: bool,
    on_remote: &[String],
) -> Result<Exit> {
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "issue": removed.issue,
            "deleted_branches": removed.branches,
            "removed_checkouts": removed.checkouts,
            "run_state_cleared": run_state,
            "on_remote": on_remote,
        }))?;
    }
    Ok(Exit::Success)
}
