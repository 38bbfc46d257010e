//! `ralph config`: the configuration as ralph resolved it — where it came from and the agent
//! CLIs it runs, each with where it was found here, its version and the hosts it may reach
//! (with `--json`, the whole resolved configuration too). The Action reads the
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
    /// The agent CLIs the configuration runs, each with what was found of it here.
    clis: Vec<ShownCli>,
    config: &'a Config,
}

#[derive(Serialize)]
struct ShownCli {
    #[serde(flatten)]
    cli: NeededCli,
    /// Where its program is (`null`: not installed).
    path: Option<String>,
    /// What `--version` said.
    version: Option<String>,
    /// Why there is no version.
    version_error: Option<String>,
    /// The hosts its agents may reach under the egress policy.
    reach: Vec<String>,
}

fn source(s: &ConfigSource) -> String {
    match s {
        ConfigSource::Toml(p) | ConfigSource::PrototypeJson(p) => p.display().to_string(),
        ConfigSource::Defaults => "defaults".into(),
    }
}

pub async fn run(ctx: &Context, _args: ConfigArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let mut clis = Vec::new();
    for cli in needed_clis(&settings.config) {
        let found = crate::agent::clis::find(&cli, &settings.config, &settings.root).await;
        clis.push(ShownCli {
            cli,
            path: found.path,
            version: found.version.clone().ok(),
            version_error: found.version.err(),
            reach: found.reach,
        });
    }
    let shown = Shown {
        source: source(&settings.config_source),
        clis,
        config: &settings.config,
    };
    if ctx.printer.json_mode() {
        ctx.printer.json(&shown)?;
        return Ok(Exit::Success);
    }
    let mut out = format!("configuration: {}\n", shown.source);
    if shown.clis.is_empty() {
        out.push_str("agent CLIs: none (no agent runs an agent CLI)\n");
    }
    for c in &shown.clis {
        let n = &c.cli;
        let registry = match n.registry {
            crate::agent::clis::Registry::Npm => "npm",
            crate::agent::clis::Registry::Pypi => "PyPI",
        };
        out.push_str(&format!(
            "agent CLI: {} ({}, {registry} {}) for {}\n",
            n.program,
            n.backend,
            n.package,
            n.agents.join(", ")
        ));
        let found = match (&c.path, &c.version, &c.version_error) {
            (None, ..) => "  not installed here".to_owned(),
            (Some(p), Some(v), _) => format!("  found: {p} ({v})"),
            (Some(p), None, why) => {
                format!("  found: {p} ({})", why.as_deref().unwrap_or("no version"))
            }
        };
        let reach = if c.reach.is_empty() {
            "no host (name its model's in [sandbox.network] agents_allow)".to_owned()
        } else {
            c.reach.join(", ")
        };
        out.push_str(&format!("{found}; in the sandbox it may reach: {reach}\n"));
    }
    ctx.printer.data(&out)?;
    Ok(Exit::Success)
}
