//! `ralph replay DIR [--config FILE]`: re-scores and re-ranks past rounds — the recordings of
//! `ralph compete N --record DIR` and the kept run reports — under the repository's current
//! configuration or another file, and shows which rankings and winners would change (see
//! `replay`). No agent, no tracker, no network; nothing is written.

use super::Context;
use crate::config::{Config, ConfigSource};
use crate::error::{Exit, UserError};
use crate::market::Scores;
use crate::render::replay as render;
use crate::replay::load::{load, Loaded, Skipped};
use crate::replay::{drop_recorded_reports, replay, summarize, Options, Replayed, Summary};
use anyhow::Result;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A `--record` directory, a directory of run reports (such as .ralph/runs), or one report.json
    // Not `dir`: that is the id of the global `-C/--dir`.
    #[arg(value_name = "DIR")]
    pub path: PathBuf,
    /// Replay under this configuration file instead of the repository's
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `ralph replay --json`.
#[derive(Serialize)]
struct ReplayReport<'a> {
    /// The configuration replayed under: the file, or `defaults`.
    config: String,
    weights: Scores,
    order_swaps: u32,
    rounds: &'a [Replayed],
    summary: &'a Summary,
    /// Files that could not be used, with why.
    skipped: &'a [Skipped],
    /// Report rounds left out because a recording of the same round was replayed.
    also_recorded: usize,
}

const WHAT_IS_READ: &str = "replay reads the scoring.r<N>.json files that `ralph compete N --record DIR` writes, and the run reports ralph keeps in .ralph/runs/<issue>/report.json";

pub fn run(ctx: &Context, args: ReplayArgs) -> Result<Exit> {
    let dir = &args.path;
    if !dir.exists() {
        return Err(UserError::usage(format!("{}: no such file or directory", dir.display()))
            .with_hint("pass the directory given to `ralph compete N --record DIR`, a directory of run reports such as .ralph/runs, or one report.json")
            .into());
    }
    let (config, source) = configuration(ctx, args.config.as_deref())?;
    let loaded = load(dir).map_err(|e| {
        UserError::usage(format!("cannot read {}: {e}", dir.display()))
            .with_hint("check that it is readable by you")
    })?;
    for s in &loaded.skipped {
        ctx.printer
            .warn(&format!("skipped {}: {}", s.file.display(), s.reason));
    }
    let (rounds, also_recorded) = drop_recorded_reports(loaded.rounds.clone());
    if rounds.is_empty() {
        return Err(nothing_to_replay(dir, &loaded).into());
    }
    if also_recorded > 0 {
        ctx.printer.status(&format!(
            "{also_recorded} report round(s) also recorded: replayed from the recording"
        ));
    }
    let options = Options::from_config(&config);
    let replayed = replay(&rounds, &options);
    let summary = summarize(&replayed);
    if ctx.printer.json_mode() {
        ctx.printer.json(&ReplayReport {
            config: source,
            weights: options.weights,
            order_swaps: options.order_swaps,
            rounds: &replayed,
            summary: &summary,
            skipped: &loaded.skipped,
            also_recorded,
        })?;
        return Ok(Exit::Success);
    }
    let paint = ctx.printer.paint();
    let mut text = render::header(
        &source,
        &options.weights,
        options.order_swaps,
        replayed.len(),
    );
    for r in &replayed {
        text.push_str(&render::round(r, paint));
    }
    text.push('\n');
    text.push_str(&render::summary(&summary));
    ctx.printer.data(&text)?;
    Ok(Exit::Success)
}

/// The configuration to replay under and where it came from: `--config FILE`, else the
/// repository's (`.ralph/config.toml`, the prototype's `config.json`, or the defaults).
fn configuration(ctx: &Context, file: Option<&Path>) -> Result<(Config, String)> {
    let Some(path) = file else {
        let settings = ctx.settings()?;
        let source = match &settings.config_source {
            ConfigSource::Toml(p) | ConfigSource::PrototypeJson(p) => p.display().to_string(),
            ConfigSource::Defaults => "defaults".to_owned(),
        };
        return Ok((settings.config, source));
    };
    if !path.is_file() {
        return Err(UserError::usage(format!(
            "--config {}: no such file",
            path.display()
        ))
        .with_hint("pass a ralph configuration file, such as a copy of .ralph/config.toml with the weights changed")
        .into());
    }
    Ok((Config::load_file(path)?, path.display().to_string()))
}

/// Why nothing could be replayed, and what to do.
fn nothing_to_replay(dir: &Path, loaded: &Loaded) -> UserError {
    let shown = dir.display();
    if loaded.found == 0 && loaded.skipped.is_empty() {
        return UserError::usage(format!("no scoring.r<N>.json or report.json in {shown}"))
            .with_hint(format!(
                "record rounds with `ralph compete N --record {shown}`, or pass .ralph/runs (the kept run reports)"
            ));
    }
    if loaded.skipped.is_empty() {
        return UserError::usage(format!("the run report(s) in {shown} hold no scored round"))
            .with_hint("a run that stopped before its first ranking has nothing to replay");
    }
    let message = match loaded.skipped.as_slice() {
        [one] if one.file == dir => format!("cannot replay {shown}: {}", one.reason),
        all => format!(
            "nothing to replay in {shown}: {} file(s) could not be used (named above)",
            all.len()
        ),
    };
    let hint = if loaded.skipped.iter().all(|s| s.newer) {
        "they were recorded by a newer ralph: update ralph to replay them".to_owned()
    } else {
        WHAT_IS_READ.to_owned()
    };
    UserError::usage(message).with_hint(hint)
}
