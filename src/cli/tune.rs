//! `ralph tune [--write]`: fits the six scoring weights to the ledger's outcomes (each
//! proposal's per-dimension proposal scores against whether its pull request was merged and
//! kept, once enough have settled — else against passing ralph's checks; see
//! `ledger::samples` and `market::tune`), shows the current and the suggested weights with their cross-validated
//! log-loss and Brier score, and with `--write` puts the suggestion into `[scoring.weights]` —
//! only when it predicts the outcomes better than the current weights.

use super::Context;
use crate::config::{edit::set_weights, ConfigSource};
use crate::error::{Exit, UserError};
use crate::fsutil::write_atomic;
use crate::ledger::samples::{choose, Basis, Chosen};
use crate::ledger::Ledger;
use crate::market::tune::{tune, Options, Tuned, MIN_OUTCOMES, MIN_PER_CLASS};
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
    /// Which outcome the weights were fitted to, and why.
    outcomes: &'a Chosen,
    #[serde(flatten)]
    tuned: &'a Tuned,
    /// The suggestion predicts the outcomes better than the current weights.
    better: bool,
    written: bool,
}

/// The samples `tune` fits (merges where enough pull requests settled, else ralph's checks),
/// and how many event files could not be read.
fn samples(ledger: &Ledger) -> Result<(Chosen, usize)> {
    let loaded = ledger.store().load_all()?;
    let skipped = loaded.skipped.len();
    let events: Vec<crate::ledger::Event> = loaded.events.into_iter().map(|e| e.event).collect();
    Ok((choose(&events), skipped))
}

pub fn run(ctx: &Context, args: TuneArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let ledger = Ledger::new(&settings.ralph_dir);
    let (chosen, skipped) = samples(&ledger).with_context(|| {
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
    if !ctx.printer.json_mode() {
        ctx.printer.status(&format!("Outcomes: {}", chosen.why));
    }
    let tuned = match tune(&chosen.samples, &current, &Options::default()) {
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
            outcomes: &chosen,
            tuned: &tuned,
            better,
            written,
        })?;
        return Ok(Exit::Success);
    }
    ctx.printer.data(&render(&current, &tuned, chosen.basis))?;
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
fn render(current: &Scores, t: &Tuned, basis: Basis) -> String {
    let (what, passed) = match basis {
        Basis::Merges => ("settled pull requests", "merged and kept"),
        Basis::Checks => ("implemented proposals", "passed"),
    };
    let mut out = format!(
        "Scoring weights fitted to {} {what} ({} {passed}), {}-fold cross-validated\n\n{:<24}{:>9}{:>11}\n",
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
