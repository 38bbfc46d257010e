//! The command line: clap types for the global options and every subcommand, logging set-up,
//! Ctrl-C, and the one place a command's result becomes an exit code. Each subcommand lives
//! in its own file as `XxxArgs` plus `fn run(ctx, args)`, a thin wrapper over the library.

mod compete;
mod completions;
mod config;
mod demo;
mod doctor;
mod events;
mod exit;
mod follow;
mod init;
mod leaderboard;
mod prompt;
mod queue;
mod ready;
mod refine;
mod replay;
mod reset;
mod reset_issue;
mod setup;
mod signal;
mod spec;
mod tune;

use crate::config::TrackerKind;
use crate::error::Exit;
use crate::output::{ColorChoice, Printer};
use crate::secret::RedactingWriter;
use crate::settings::{find_root, ralph_dir, RepoSlug, Settings};
use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use exit::{classify, render};
use std::path::PathBuf;

/// Run a marketplace competition of AI bots for a GitHub issue, and keep score
#[derive(Debug, Parser)]
#[command(
    name = "ralph",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit codes: 0 success, 1 failure, 2 usage or configuration error, 130 interrupted (Ctrl-C),\n143 terminated (SIGTERM), 129 hung up (SIGHUP).\nLogging: -v debug, -vv trace; RALPH_LOG overrides (tracing EnvFilter syntax)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options valid before or after any subcommand.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Repository to work in (default: the current directory)
    #[arg(short = 'C', long = "dir", value_name = "PATH", global = true)]
    pub dir: Option<PathBuf>,
    /// GitHub repository (default: parsed from the origin remote)
    #[arg(long, value_name = "OWNER/NAME", global = true, value_parser = parse_repo)]
    pub repo: Option<RepoSlug>,
    /// Where issues live (default: from the configuration, else github)
    #[arg(long, value_enum, global = true)]
    pub tracker: Option<TrackerKind>,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,
    /// More logging on stderr (-v debug, -vv trace)
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Less output on stderr: only warnings that matter and errors
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub quiet: u8,
    /// When to use colour (NO_COLOR is honoured with auto)
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    /// Live progress of agents and checks: auto (live lines on a terminal, heartbeat lines
    /// elsewhere), always (live lines), never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = crate::progress::ProgressChoice::Auto, global = true)]
    pub progress: crate::progress::ProgressChoice,
}

fn parse_repo(s: &str) -> Result<RepoSlug, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create .ralph/ with a documented config.toml, the events directory and a .gitignore
    Init(init::InitArgs),
    /// Show the bots ranked by weight, with budgets and recent events
    #[command(visible_alias = "status")]
    Leaderboard(leaderboard::LeaderboardArgs),
    /// List ledger events, or verify every event file
    Events(events::EventsArgs),
    /// Delete the events and caches, keeping the configuration; or, with --issue N, an issue's
    /// branch, checkouts and run state, to run it again from scratch
    Reset(reset::ResetArgs),
    /// Create the workflow labels on the tracker (idempotent)
    Setup(setup::SetupArgs),
    /// Mark issue N ready: add the ready label, remove in-refinement
    Ready(ready::ReadyArgs),
    /// Print the requirements extracted from issue N
    Spec(spec::SpecArgs),
    /// Draft the checkbox spec of a prose issue N (or review its checkboxes) for a maintainer
    Refine(refine::RefineArgs),
    /// List the issues ready for a competition, oldest first
    Queue(queue::QueueArgs),
    /// Run the competition on issue N: proposals, ranking, implementation, checks, PR or escalation
    Compete(compete::CompeteArgs),
    /// After the pull request: answer reviews and failing CI with revision rounds; settle
    /// merged, closed and reverted pull requests in the ledger
    Follow(follow::FollowArgs),
    /// Run a whole competition offline on a sample repository, then show the leaderboard
    Demo(demo::DemoArgs),
    /// Check everything a competition needs, changing nothing; exit 1 when something would stop it
    Doctor(doctor::DoctorArgs),
    /// Show the resolved configuration and the agent CLIs it runs
    Config(config::ConfigArgs),
    /// Fit the scoring weights to the ledger's outcomes; --write puts them into the configuration
    Tune(tune::TuneArgs),
    /// Re-score and re-rank recorded rounds under the current or another configuration
    Replay(replay::ReplayArgs),
    /// Print shell completions
    Completions(completions::CompletionsArgs),
}

/// What every command gets: where to work, how to print, and the flags that shape settings.
pub struct Context {
    pub root: PathBuf,
    /// `<root>/.ralph`.
    pub ralph_dir: PathBuf,
    pub printer: Printer,
    pub global: GlobalArgs,
}

/// Without a sandbox, an agent or a check reads the repository's git configuration as it is:
/// a credential there (the job token `actions/checkout` persists, or the one a GitLab runner
/// puts in the clone URL) is refused, with the fix.
fn refuse_config_credentials(root: &std::path::Path) -> Result<()> {
    let git = root.join(".git");
    if !git.is_dir() {
        return Ok(());
    }
    let found = crate::process::gitconfig::found_in(&[git.join("config")]);
    if let Some((file, what)) = found.first() {
        return Err(crate::error::UserError::usage(format!(
            "{} holds a credential ({}) that every agent and check would read: there is no sandbox here to show them a copy without it",
            file.display(),
            what.join(", ")
        ))
        .with_hint(
            "check out with `persist-credentials: false` (actions/checkout), or remove it (`git config --unset-all http.<url>.extraheader`; in GitLab CI `git remote set-url origin \"$CI_SERVER_URL/$CI_PROJECT_PATH.git\"`, as ralph's template does); ralph pushes with its own token. With bubblewrap installed, agents and checks see a scrubbed copy instead",
        )
        .into());
    }
    Ok(())
}

impl Context {
    /// The live view of long work, as `--progress`, `-q`, the terminal, `[output]
    /// heartbeat_secs` and Action mode (log groups) say.
    pub fn tracker(&self, settings: &Settings) -> crate::progress::Progress {
        use std::io::IsTerminal;
        let mode = crate::progress::Mode::choose(
            self.global.progress,
            self.global.quiet > 0,
            std::io::stderr().is_terminal(),
        );
        let groups = crate::env::get(crate::env::GITHUB_ACTIONS).as_deref() == Some("true")
            && self.global.quiet == 0;
        crate::progress::Progress::new(
            mode,
            std::time::Duration::from_secs(settings.config.heartbeat_secs.into()),
            groups,
        )
    }

    /// Finds the sandbox `[sandbox]` asks for and installs it for every agent, check and setup
    /// command of this process. `required` without a working mechanism is refused (exit 2)
    /// before anything changes; `auto` without one warns loudly.
    pub async fn sandbox(&self, settings: &Settings) -> Result<crate::process::sandbox::Status> {
        self.install_sandbox(settings, true).await
    }

    /// [`Context::sandbox`]; `warn`: say it when `auto` finds no mechanism (not for the demo,
    /// whose sample repository and scripts are ralph's own).
    pub async fn install_sandbox(
        &self,
        settings: &Settings,
        warn: bool,
    ) -> Result<crate::process::sandbox::Status> {
        use crate::process::sandbox::{self, Mode, Sandbox};
        let s = &settings.config.sandbox;
        let mode = Mode::effective(s.mode).map_err(|why| {
            crate::error::UserError::usage(why)
                .with_hint("unset RALPH_SANDBOX to use `[sandbox] mode` of .ralph/config.toml")
        })?;
        let mut found = Sandbox::detect(mode, s.check_network, &s.hide, &s.writable)
            .await
            .with_network(&s.network);
        if let Some(common) = crate::workspace::common_dir(&settings.root) {
            found = found.with_repository(&settings.root, common);
        }
        let status = found.status().clone();
        if !status.active {
            let why = status.reason.clone().unwrap_or_default();
            match status.mode {
                Mode::Required => {
                    return Err(crate::error::UserError::usage(format!(
                        "`[sandbox] mode = \"required\"` and there is no sandbox here: {why}"
                    ))
                    .with_hint(
                        "install bubblewrap (the `bubblewrap` package) and make sure it can create namespaces (`bwrap --ro-bind / / true`); see docs/security.md",
                    )
                    .into())
                }
                Mode::Auto if warn => self.printer.warn(&format!(
                    "agents and checks will run WITHOUT a sandbox: {why}. An agent that follows a prompt injection can then read your credentials and write outside its worktree; set `[sandbox] mode = \"required\"` to refuse instead"
                )),
                Mode::Auto | Mode::Off => {}
            }
        }
        if !status.active {
            refuse_config_credentials(&settings.root)?;
        }
        sandbox::install(found);
        crate::process::environment::install(s.env_policy());
        Ok(status)
    }

    /// Removes the checkouts earlier versions made inside the repository (`.ralph/worktrees/`,
    /// with their registrations; their branches stay), once: the folder goes with them. Says
    /// what it removed, and what it left and why (a run still in one, uncommitted work).
    pub async fn retire_old_checkouts(&self, settings: &Settings) {
        let busy = |label: &str| checkout_in_use(&settings.ralph_dir, label);
        match crate::workspace::retire_legacy(&settings.root, &busy).await {
            Ok(done) => {
                if !done.removed.is_empty() {
                    let now = settings
                        .checkouts()
                        .map(|d| format!("; ralph's checkouts are now in {}", d.display()))
                        .unwrap_or_default();
                    self.printer.status(&format!(
                        "Removed {} checkout(s) an earlier version made inside the repository (their branches stay): {}{now}",
                        done.removed.len(),
                        done.removed.join(", ")
                    ));
                }
                for kept in &done.kept {
                    self.printer
                        .warn(&format!("an earlier version's checkout was left: {kept}"));
                }
            }
            Err(e) => self.printer.warn(&format!(
                "could not remove the checkouts under {}: {e}",
                crate::workspace::LEGACY_DIR
            )),
        }
    }

    /// Loads the configuration and resolves the settings.
    pub fn settings(&self) -> Result<Settings> {
        Ok(Settings::load(
            self.root.clone(),
            self.global.repo.clone(),
            self.global.tracker,
        )?)
    }
}

/// Whether the checkout labelled `label` (`3`, `3-read`, `3-audit`) belongs to a competition
/// that is running now: one holding the lock of its issue.
fn checkout_in_use(ralph_dir: &std::path::Path, label: &str) -> bool {
    label
        .split('-')
        .next()
        .and_then(|n| n.parse().ok())
        .is_some_and(|n| crate::compete::RunLock::is_held(ralph_dir, n))
}

/// Reads issue `number`, refusing a pull request (exit 2): every issue command needs an issue.
async fn fetch_issue(
    tracker: &dyn crate::tracker::IssueTracker,
    number: u64,
) -> Result<crate::tracker::Issue> {
    let issue = tracker.issue(number).await?;
    if issue.is_pull_request {
        return Err(crate::error::UserError::usage(format!(
            "#{} in {} is a pull request, not an issue",
            issue.number,
            tracker.describe()
        ))
        .with_hint("pass the number of the issue the pull request is for")
        .into());
    }
    Ok(issue)
}

/// Sets up logging on stderr: `RALPH_LOG` when set, else from `-v`/`-q`.
fn init_logging(global: &GlobalArgs, color: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match (global.quiet, global.verbose) {
        (q, _) if q > 0 => "error",
        (_, 0) => "warn",
        (_, 1) => "ralph=debug,warn",
        _ => "ralph=trace,info",
    };
    let filter = crate::env::get(crate::env::RALPH_LOG)
        .and_then(|v| EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Log lines pass the redactor: a token must not appear even at -vv.
        // Above the live view of running agents when one is drawn.
        .with_writer(|| RedactingWriter(crate::progress::StderrAbove))
        .with_ansi(color)
        .without_time()
        .with_target(global.verbose > 0)
        .try_init();
}

/// Runs a parsed command line and returns the exit code, having rendered any error.
pub async fn main(cli: Cli) -> Exit {
    // Before anything reads the token: no process of the user's can read it from ralph's memory.
    crate::process::sandbox::protect_self();
    let global = cli.global.clone();
    // A real competition handles the signals itself: it escalates the issue before exiting.
    let own_interrupt = matches!(&cli.command, Command::Compete(a) if !a.dry_run);
    let printer = Printer::new(global.json, global.quiet > 0, global.color);
    init_logging(&global, printer.paint_err().enabled());
    let result = tokio::select! {
        r = run(cli, printer) => r,
        how = signal::interrupted(), if !own_interrupt => {
            // Start on a fresh line: the interrupt usually lands mid-line (a prompt, a bar).
            eprintln!("\n{} interrupted ({})", printer.paint_err().warn("warning:"), how.name());
            // The process exits without running destructors: kill the agents and checks now.
            crate::process::kill_all();
            return how.exit();
        }
    };
    match result {
        Ok(exit) => exit,
        Err(err) => {
            let class = classify(&err);
            if class.broken_pipe {
                return Exit::Success;
            }
            eprint!(
                "{}",
                render(&err, class.hint.as_deref(), printer.paint_err())
            );
            class.exit
        }
    }
}

/// Runs one command, printing through `printer`.
#[tracing::instrument(skip_all)]
pub async fn run(cli: Cli, printer: Printer) -> Result<Exit> {
    let global = cli.global;
    let root = find_root(global.dir.as_deref())?;
    tracing::debug!(root = %root.display(), "working directory");
    let ctx = Context {
        ralph_dir: ralph_dir(&root),
        root,
        printer,
        global,
    };
    match cli.command {
        Command::Init(args) => init::run(&ctx, args),
        Command::Leaderboard(args) => leaderboard::run(&ctx, args),
        Command::Events(args) => events::run(&ctx, args).await,
        Command::Reset(args) => reset::run(&ctx, args).await,
        Command::Setup(args) => setup::run(&ctx, args).await,
        Command::Ready(args) => ready::run(&ctx, args).await,
        Command::Spec(args) => spec::run(&ctx, args).await,
        Command::Queue(args) => queue::run(&ctx, args).await,
        Command::Config(args) => config::run(&ctx, args).await,
        Command::Refine(args) => refine::run(&ctx, args).await,
        Command::Tune(args) => tune::run(&ctx, args),
        Command::Replay(args) => replay::run(&ctx, args),
        Command::Compete(args) => compete::run(&ctx, args).await,
        Command::Follow(args) => follow::run(&ctx, args).await,
        Command::Demo(args) => demo::run(&ctx, args).await,
        Command::Doctor(args) => doctor::run(&ctx, args).await,
        Command::Completions(args) => completions::run(&ctx, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_options_work_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "ralph",
            "leaderboard",
            "--json",
            "-C",
            "/tmp",
            "--color",
            "never",
        ])
        .unwrap();
        assert!(cli.global.json);
        assert_eq!(
            cli.global.dir.as_deref(),
            Some(std::path::Path::new("/tmp"))
        );
        assert_eq!(cli.global.color, ColorChoice::Never);
        let cli = Cli::try_parse_from(["ralph", "status"]).unwrap();
        assert!(matches!(cli.command, Command::Leaderboard(_)));
        assert!(Cli::try_parse_from(["ralph", "--repo", "nope", "status"]).is_err());
        assert!(Cli::try_parse_from(["ralph", "-v", "-q", "status"]).is_err());
    }
}
