//! `ralph init`: create `.ralph/` with a documented `config.toml`, the events directory and a
//! `.gitignore` for the caches. Idempotent; an existing file is kept unless `--force`, and the
//! events are never touched.

use super::Context;
use crate::config::DEFAULT_TOML;
use crate::error::Exit;
use crate::fsutil::write_atomic;
use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;
use std::fs;
use std::path::Path;

/// What `.ralph/.gitignore` keeps out of version control.
pub const GITIGNORE: &str = "# Written by `ralph init`: caches and per-run state stay local.\n\
marketplace.json\nruns/\ncache/\n*.lock\n";

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing config.toml and .gitignore with the defaults (events are kept)
    #[arg(long)]
    pub force: bool,
}

#[derive(Serialize)]
struct Action {
    path: String,
    action: &'static str,
}

pub fn run(ctx: &Context, args: InitArgs) -> Result<Exit> {
    let ralph = &ctx.ralph_dir;
    let mut actions = Vec::new();
    for dir in [ralph.clone(), ralph.join("events")] {
        let existed = dir.is_dir();
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        if !existed {
            actions.push(Action {
                path: rel(&ctx.root, &dir) + "/",
                action: "created",
            });
        }
    }
    // Keeps the (otherwise empty) events directory in git.
    let keep = ralph.join("events/.gitkeep");
    if !keep.exists() {
        fs::write(&keep, b"").with_context(|| format!("cannot create {}", keep.display()))?;
    }
    for (name, content) in [("config.toml", DEFAULT_TOML), (".gitignore", GITIGNORE)] {
        let path = ralph.join(name);
        let action = match (path.exists(), args.force) {
            (true, false) => "kept",
            (existed, _) => {
                write_atomic(&path, content.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                if existed {
                    "overwritten"
                } else {
                    "created"
                }
            }
        };
        actions.push(Action {
            path: rel(&ctx.root, &path),
            action,
        });
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&serde_json::json!({
            "ralph_dir": ralph.display().to_string(),
            "files": actions,
        }))?;
    } else {
        let p = ctx.printer.paint();
        let mut text = String::new();
        for a in &actions {
            text.push_str(&format!("{:>11}  {}\n", p.bold(a.action), a.path));
        }
        ctx.printer.data(&text)?;
        if actions.iter().any(|a| a.action == "kept") {
            ctx.printer.status(
                "Existing files were kept; `ralph init --force` rewrites them with the defaults.",
            );
        }
        if ralph.join("config.json").exists() {
            ctx.printer.status(
                "Note: .ralph/config.toml takes precedence over the prototype's .ralph/config.json.",
            );
        }
    }
    Ok(Exit::Success)
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
