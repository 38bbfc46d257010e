//! `ralph tune [--write]`: fits the six scoring weights to the ledger's outcomes (every
//! implemented proposal's per-dimension proposal scores against pass or fail; see
//! `market::tune`), shows the current and the suggested weights with their cross-validated
//! log-loss and Brier score, and with `--write` puts the suggestion into `[scoring.weights]` —
//! only when it predicts the outcomes better than the current weights.

use super::Context;
use crate::config::{edit::set_weights, ConfigSource};
use crate::error::{Exit, UserError};
use crate::fsutil::write_atomic;
use crate::ledger::Ledger;
use crate::market::tune::{tune, Options, Sample, Tuned, MIN_OUTCOMES, MIN_PER_CLASS};
use crate::market::{Dimension, Scores};
use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Write the suggested weights into .ralph/config.toml when they predict better
    #[arg(long)]
    pub write: bool,
}

#[derive(Serialize)]
struct TuneReport<'a> {
    current_weights: Scores,
    #[serde(flatten)]
    tuned: &'a Tuned,
    /// The suggestion predicts the outcomes better than the current weights.
    better: bool,
    written: bool,
}

/// The samples: every implemented proposal with its per-dimension proposal scores — the
/// winners, and the runner-ups of audited rounds.
fn samples(ledger: &Ledger) -> Result<(Vec<Sample>, usize)> {
    let loaded = ledger.store().load_all()?;
    let skipped = loaded.skipped.len();
    let samples = loaded
        .events
        .iter()
        .filter(|e| e.event.outcome.is_implementation())
        .flat_map(|e| {
            let e = &e.event;
            let winner = e.scores.as_ref().map(|s| Sample {
                scores: s.proposal,
                passed: e.outcome.is_success(),
            });
            let runner_up = e.audit.as_ref().and_then(|a| {
                a.proposal_scores.map(|scores| Sample {
                    scores,
                    passed: a.passed,
                })
            });
            winner.into_iter().chain(runner_up)
        })
        .collect();
    Ok((samples, skipped))
}

pub fn run(ctx: &Context, args: TuneArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let ledger = Ledger::new(&settings.ralph_dir);
    let (samples, skipped) = samples(&ledger).with_context(|| {
        format!(
            "cannot read the event log in {}",
            ledger.store().dir().display()
        )
    })?;
    if skipped > 0 {
        ctx.printer.warn(&format!(
            "{skipped} unusable event file(s) skipped (`ralph events verify` names them)"
        ));
    }
    let current = settings.config.scoring_weights;
    let tuned = match tune(&samples, &current, &Options::default()) {
        Ok(t) => t,
        Err(refusal) => {
            return Err(UserError::failure(format!("no suggestion: {refusal}"))
                .with_hint(format!(
                    "tune fits the weights to implemented proposals that passed or failed (at least {MIN_OUTCOMES}, {MIN_PER_CLASS} of each); every competition round adds one, an audited round two"
                ))
                .into());
        }
    };
    let better = tuned.suggested.log_loss < tuned.current.log_loss;
    let mut written = false;
    if args.write && better {
        let ConfigSource::Toml(path) = &settings.config_source else {
            return Err(UserError::usage(
                "there is no .ralph/config.toml to write the weights into",
            )
            .with_hint("`ralph init` writes one (a prototype config.json is not rewritten)")
            .into());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let edited = set_weights(&text, &tuned.suggested_weights).map_err(|why| {
            UserError::usage(format!("cannot edit {}: {why}", path.display()))
                .with_hint("fix the file's TOML (`ralph config` shows what ralph reads), then run `ralph tune --write` again")
        })?;
        write_atomic(path, edited.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        written = true;
    }
    if ctx.printer.json_mode() {
        ctx.printer.json(&TuneReport {
            current_weights: current,
            tuned: &tuned,
            better,
            written,
        })?;
        return Ok(Exit::Success);
    }
    ctx.printer.data(&render(&current, &tuned))?;
    let verdict = if better {
        "The suggested weights predict the outcomes better than the current ones."
    } else {
        "The suggested weights do not predict the outcomes better than the current ones: keep the current weights."
    };
    ctx.printer.status(verdict);
    if written {
        ctx.printer
            .status("Wrote the suggested weights to [scoring.weights] in .ralph/config.toml");
    } else if args.write {
        ctx.printer.status("Nothing written.");
    } else if better {
        ctx.printer
            .status("`ralph tune --write` puts them into [scoring.weights] in .ralph/config.toml");
    }
    Ok(Exit::Success)
}

/// The table: each weight, current and suggested, then both models' cross-validated scores.
fn render(current: &Scores, t: &Tuned) -> String {
    let mut out = format!(
        "Scoring weights fitted to {} implemented proposals ({} passed), {}-fold cross-validated\n\n{:<24}{:>9}{:>11}\n",
        t.samples, t.passes, t.folds, "", "current", "suggested"
    );
    for d in Dimension::ALL {
        out.push_str(&format!(
            "{:<24}{:>9.3}{:>11.3}\n",
            d.key(),
            current.get(d),
            t.suggested_weights.get(d)
        ));
    }
    out.push_str(&format!(
        "\n{:<24}{:>9.3}{:>11.3}\n{:<24}{:>9.3}{:>11.3}\n",
        "log-loss (lower better)",
        t.current.log_loss,
        t.suggested.log_loss,
        "Brier (lower better)",
        t.current.brier,
        t.suggested.brier
    ));
    out
}
