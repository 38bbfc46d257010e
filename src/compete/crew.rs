//! What the phases of a competition work with, below the loop that drives them (`run`): the
//! options and inputs of a run; the [`Crew`] — the settings, git, the tracker, the agents and
//! the display, with what they spend (accounts, time), the baseline the next attempt is
//! compared with and the trees already judged; the [`Book`] — what the run records (its state for `--resume`, its report,
//! what went wrong, its branch and worktree); and a round's [`Bench`], [`Contest`] and
//! [`Selection`]; what an implementer's attempts work on ([`Target`], [`Purpose`]). The phases (`select`, `attempt`, `review`, `audit`, `settle`, `finish`) are
//! functions over these, so none of them reaches back into the loop.

use super::round::{Arrived, Ask, Evaluated};
use super::site::CallSite;
use super::state::{JudgedTrees, RunState, Trouble};
use crate::agent::accounts::Accounts;
use crate::agent::prompts::Prompts;
use crate::checks::baseline::Baseline;
use crate::checks::CheckPlan;
use crate::output::Printer;
use crate::run_report::{RunOutcome, RunReport};
use crate::secret::GitToken;
use crate::settings::Settings;
use crate::spec::{Guidance, Requirements};
use crate::timeline::Timeline;
use crate::tracker::{Issue, IssueTracker};
use crate::workspace::{Preflight, Workspace, Worktree};
use std::collections::BTreeSet;
use std::time::Duration;

/// The options of `ralph compete N`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub max_iterations: u32,
    pub resume: bool,
    pub no_push: bool,
    pub base: Option<String>,
    /// The GitHub token for the push, when there is one.
    pub token: Option<GitToken>,
    /// How the agents and checks are confined, for the report and the pull request.
    pub sandbox: Option<crate::process::sandbox::Status>,
    /// The run's seed for the seats' draw (`[marketplace] seats`; see `seats::run_seed`).
    pub seed: u64,
}

/// What a run needs.
pub struct RunInput<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a dyn IssueTracker,
    pub workspace: &'a dyn Workspace,
    pub issue: u64,
    pub agents: super::agents::Agents,
    pub printer: &'a Printer,
    /// The live view of the running agents and checks.
    pub progress: crate::progress::Progress,
    pub options: RunOptions,
}

/// Who works on a competition and what they spend: the run's inputs (settings, git, tracker,
/// agents, display), its accounts and timeline, and the checks on the commit the next attempt
/// starts from.
pub(super) struct Crew<'a> {
    pub input: RunInput<'a>,
    pub accounts: Accounts,
    /// Where the run's time goes.
    pub timeline: Timeline,
    /// The checks on the commit the next attempt starts from.
    pub baseline: Baseline,
    /// The checks the last failed attempt failed, by name: the next attempt runs them first,
    /// in this round or the next.
    pub last_failed: Vec<String>,
    /// The checks' results on every tree judged so far: an attempt on one of them takes them.
    pub trees: JudgedTrees,
}

/// What a competition records: the state kept for `--resume`, the report, what went wrong (for
/// the escalation comment), and where its branch is.
pub(super) struct Book {
    pub pre: Preflight,
    pub state: RunState,
    pub report: RunReport,
    pub trouble: Trouble,
    pub worktree: Option<Worktree>,
}

impl Book {
    /// The book of a run on `issue` that starts now (or resumes from `state`), working in `wt`.
    pub fn new(
        pre: Preflight,
        state: RunState,
        issue: &Issue,
        sandbox: Option<crate::process::sandbox::Status>,
        wt: Worktree,
    ) -> Book {
        let report = RunReport {
            issue: issue.number,
            title: issue.title.clone(),
            run_id: state.run_id.clone(),
            outcome: RunOutcome::Success,
            requirements: Requirements::from_body(&issue.body),
            extraction: "checkboxes",
            rounds: Vec::new(),
            events: state.events.clone(),
            accounts: Vec::new(),
            total: Default::default(),
            stopped: None,
            branch: Some(pre.branch.clone()),
            pr_url: None,
            escalation: None,
            warnings: Vec::new(),
            sandbox,
            git_tampering: Vec::new(),
            network_refused: Vec::new(),
            phases: Vec::new(),
            critical_path: Vec::new(),
            check_time: Default::default(),
            wall_ms: 0,
        };
        Book {
            pre,
            state,
            report,
            trouble: Trouble::default(),
            worktree: Some(wt),
        }
    }

    /// The worktree of the run (made before the first round).
    pub fn worktree(&self) -> anyhow::Result<Worktree> {
        self.worktree
            .clone()
            .ok_or_else(|| anyhow::anyhow!("the run has no worktree"))
    }
}

/// What every round works with, made once the run has its worktree.
pub(super) struct Bench {
    pub prompts: Prompts,
    pub guidance: Vec<Guidance>,
    pub wt: Worktree,
    pub plan: CheckPlan,
    /// Per check (and coverage command).
    pub timeout: Duration,
}

/// One round's question: the issue as it is now, its requirements, which are open, and where
/// the calls happen.
pub(super) struct Contest {
    pub site: CallSite,
    pub issue: Issue,
    pub reqs: Requirements,
    pub open: BTreeSet<String>,
}

impl Contest {
    pub fn ask(&self) -> Ask<'_> {
        Ask {
            issue: &self.issue,
            reqs: &self.reqs,
            site: &self.site,
            seating: None,
        }
    }
}

/// The round's winner and what the marketplace needs to settle it.
pub(super) struct Selection {
    pub evaluated: Evaluated,
    pub winner: Arrived,
    pub proposal_score: f64,
    /// Implementation attempts the winner gets.
    pub budget: u32,
    /// Bots with a valid proposal this round.
    pub proposers: Vec<String>,
    /// A failed bot whose resubmission was refused.
    pub resubmitted: Vec<String>,
}

/// What the attempts implement, and where.
pub(super) struct Target<'t> {
    pub wt: &'t Worktree,
    pub plan: &'t CheckPlan,
    pub proposal: &'t Arrived,
    pub budget: u32,
    pub purpose: Purpose,
}

/// Why the attempts are made: the round's winner (committed on the branch), an audit (in a
/// scratch checkout, never kept) or a revision of a pull request (committed on its branch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Winner,
    Audit,
    Revision,
}

impl Purpose {
    /// Whether a passing attempt is committed.
    pub fn keep(self) -> bool {
        self != Purpose::Audit
    }

    /// How the console names an attempt (`Attempt 2`).
    pub(super) fn label(self) -> &'static str {
        match self {
            Purpose::Winner => "Attempt",
            Purpose::Audit => "Audit attempt",
            Purpose::Revision => "Revision attempt",
        }
    }

    /// The agent call's variant (recordings and fakes tell the calls apart by it).
    pub(super) fn variant(self) -> Option<&'static str> {
        match self {
            Purpose::Winner => None,
            Purpose::Audit => Some("audit"),
            Purpose::Revision => Some("revision"),
        }
    }

    /// How the timeline and the live view name the work.
    pub(super) fn word(self) -> &'static str {
        match self {
            Purpose::Winner => "implement",
            Purpose::Audit => "audit",
            Purpose::Revision => "revise",
        }
    }
}
