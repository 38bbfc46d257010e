//! `ralph config`: the configuration as ralph resolved it — where it came from and the agent
//! CLIs it runs (with `--json`, the whole resolved configuration too). The Action reads the
//! CLIs from here to install them, rather than reading the TOML itself.

use super::Context;
use crate::agent::{needed_clis, NeededCli};
use crate::config::{Config, ConfigSource};
use crate::error::Exit;
use anyhow::Result;
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct ConfigArgs {}

#[derive(Serialize)]
struct Shown<'a> {
    /// The file the configuration came from, or `defaults`.
    source: String,
    /// The agent CLIs the configuration runs.
    clis: Vec<NeededCli>,
    config: &'a Config,
}

fn source(s: &ConfigSource) -> String {
    match s {
        ConfigSource::Toml(p) | ConfigSource::PrototypeJson(p) => p.display().to_string(),
        ConfigSource::Defaults => "defaults".into(),
    }
}

pub fn run(ctx: &Context, _args: ConfigArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let shown = Shown {
        source: source(&settings.config_source),
        clis: needed_clis(&settings.config),
        config: &settings.config,
    };
    if ctx.printer.json_mode() {
        ctx.printer.json(&shown)?;
        return Ok(Exit::Success);
    }
    let mut out = format!("configuration: {}\n", shown.source);
    if shown.clis.is_empty() {
        out.push_str("agent CLIs: none (no agent uses the claude or codex backend)\n");
    }
    for c in &shown.clis {
        out.push_str(&format!(
            "agent CLI: {} ({}, npm {}) for {}\n",
            c.program,
            c.backend,
            c.package,
            c.agents.join(", ")
        ));
    }
    ctx.printer.data(&out)?;
    Ok(Exit::Success)
}
