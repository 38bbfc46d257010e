//! `ralph completions SHELL`: shell completion scripts on stdout.

use super::{Cli, Context};
use crate::error::Exit;
use anyhow::Result;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(ctx: &Context, args: CompletionsArgs) -> Result<Exit> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "ralph", &mut buf);
    ctx.printer.data(&String::from_utf8_lossy(&buf))?;
    Ok(Exit::Success)
}
