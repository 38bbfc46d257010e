//! `ralph doctor [N]`: every check a competition makes before it changes anything, made
//! without changing anything, each reported with what it found and, when it is a problem, what
//! to do. Tracker access (the token, the permission a competition needs, the token's scopes
//! where the forge lists them, the workflow labels); the git repository, its working tree and
//! the base branch; every configured agent able to start; the checks that will run and whether
//! their programs exist; and, given an issue number, the issue itself, the trust gate a CI run
//! applies to it, and its branch. A `Fail` would stop a competition; a `Warn` would not, but
//! deserves a look.

use crate::checks::python::importable;
use crate::checks::{detect, example, on_path};
use crate::compete::agents::{Agent, Agents};
use crate::settings::Settings;
use crate::spec::{requirements_hint, Requirements};
use crate::tracker::workflow::{LABEL_ATTENTION, LABEL_IN_PROGRESS, LABEL_RALPH};
use crate::tracker::{Issue, IssueState, IssueTracker, Permission, RepoFacts, TrackerError};
use crate::workspace::{self, PreflightOptions};
use serde::Serialize;

mod candidates;
mod checkouts;
mod clis;
mod forge;
mod rehearse;
mod sandbox;
pub use rehearse::{rehearse, Rehearsal};
use sandbox::sandbox_checks;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// `tracker`, `git`, `agents`, `checks`, `sandbox`, `issue`, `setup` or `candidates`.
    pub area: &'static str,
    pub check: String,
    pub status: Status,
    pub detail: String,
    pub hint: Option<String>,
}

/// Everything the doctor found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Nothing would stop a competition.
    pub ok: bool,
    pub findings: Vec<Finding>,
    /// The base branch the git findings found, for the setup's rehearsal ([`rehearse`]).
    #[serde(skip)]
    pub base: Option<String>,
}

#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn add(&mut self, area: &'static str, check: &str, status: Status, detail: String) {
        self.0.push(Finding {
            area,
            check: check.to_owned(),
            status,
            detail,
            hint: None,
        });
    }

    fn hint(&mut self, hint: impl Into<String>) {
        if let Some(last) = self.0.last_mut() {
            let hint = hint.into();
            last.hint = (!hint.is_empty()).then_some(hint);
        }
    }
}

/// Examines everything; `tracker` is what opening the tracker gave, `issue` the issue to
/// check too.
pub async fn examine(
    settings: &Settings,
    tracker: Result<&dyn IssueTracker, &TrackerError>,
    issue: Option<u64>,
) -> Report {
    let mut f = Findings(Vec::new());
    let facts = tracker_checks(&mut f, settings, tracker).await;
    let base = git_checks(&mut f, settings, &facts).await;
    agent_checks(&mut f, settings);
    clis::cli_checks(&mut f, settings).await;
    check_checks(&mut f, settings).await;
    sandbox_checks(&mut f, settings).await;
    if let (Some(n), Ok(t)) = (issue, tracker) {
        issue_checks(&mut f, settings, t, n, &facts).await;
    }
    Report {
        ok: f.0.iter().all(|x| x.status != Status::Fail),
        findings: f.0,
        base,
    }
}

async fn tracker_checks(
    f: &mut Findings,
    settings: &Settings,
    tracker: Result<&dyn IssueTracker, &TrackerError>,
) -> RepoFacts {
    let t = match tracker {
        Ok(t) => t,
        Err(e) => {
            f.add("tracker", "access", Status::Fail, e.to_string());
            f.hint(e.hint().unwrap_or_default());
            return RepoFacts::default();
        }
    };
    let facts = match t.repository().await {
        Ok(facts) => facts,
        Err(e) => {
            f.add(
                "tracker",
                "access",
                Status::Fail,
                format!("{}: {e}", t.describe()),
            );
            f.hint(e.hint().unwrap_or_default());
            return RepoFacts::default();
        }
    };
    access_finding(f, t.describe(), facts.permission);
    forge::token_findings(f, t).await;
    label_findings(f, settings, t.labels().await);
    facts
}

/// The tracker's access, `described` as the tracker names itself, with the `permission` it
/// grants: a failure without write access.
fn access_finding(f: &mut Findings, described: String, permission: Option<Permission>) {
    match permission {
        Some(p) if p.can_write() => f.add(
            "tracker",
            "access",
            Status::Ok,
            format!("{described}: {} access", permission_word(p)),
        ),
        Some(p) => {
            f.add(
                "tracker",
                "access",
                Status::Fail,
                format!(
                    "{described}: {} access; a competition labels, comments, pushes and opens pull requests",
                    permission_word(p)
                ),
            );
            f.hint(
                "use a token with write access to the repository (issues, pull requests, contents)",
            );
        }
        None => f.add("tracker", "access", Status::Ok, described),
    }
}

/// Whether the workflow labels exist, from the tracker's `labels` (`None`: it has no labels to
/// check).
fn label_findings(
    f: &mut Findings,
    settings: &Settings,
    labels: Result<Option<Vec<String>>, TrackerError>,
) {
    match labels {
        Ok(Some(have)) => {
            let ready = &settings.config.github.ready_label;
            let missing: Vec<&str> = [
                ready.as_str(),
                LABEL_IN_PROGRESS,
                LABEL_RALPH,
                LABEL_ATTENTION,
            ]
            .into_iter()
            .filter(|l| !have.iter().any(|h| h.eq_ignore_ascii_case(l)))
            .collect();
            if missing.is_empty() {
                f.add(
                    "tracker",
                    "labels",
                    Status::Ok,
                    "the workflow labels exist".into(),
                );
            } else {
                f.add(
                    "tracker",
                    "labels",
                    Status::Warn,
                    format!("missing: {}", missing.join(", ")),
                );
                f.hint("run `ralph setup` to create them with their colours and descriptions");
            }
        }
        Ok(None) => {}
        Err(e) => {
            f.add(
                "tracker",
                "labels",
                Status::Warn,
                format!("cannot list them: {e}"),
            );
        }
    }
}

fn permission_word(p: Permission) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "no".into())
}

/// The repository, its working tree, the base branch (returned, when found), the checkouts and
/// the remote.
async fn git_checks(f: &mut Findings, settings: &Settings, facts: &RepoFacts) -> Option<String> {
    let git = &settings.config.git;
    let found = workspace::inspect(
        &settings.root,
        &git.remote,
        git.base.as_deref(),
        facts.default_branch.as_deref(),
    )
    .await;
    let refusal =
        |e: &workspace::WorkspaceError| (e.to_string(), e.hint().unwrap_or("").to_owned());
    match &found.repository {
        Ok(()) => f.add(
            "git",
            "repository",
            Status::Ok,
            format!(
                "{}{}",
                settings.root.display(),
                found
                    .current
                    .as_deref()
                    .map(|b| format!(" (on {b})"))
                    .unwrap_or_default()
            ),
        ),
        Err(e) => {
            let (msg, hint) = refusal(e);
            f.add("git", "repository", Status::Fail, msg);
            f.hint(hint);
            return None;
        }
    }
    match &found.clean {
        Ok(()) => f.add(
            "git",
            "working tree",
            Status::Ok,
            "clean (changes under .ralph/ are allowed)".into(),
        ),
        Err(e) => {
            let (msg, hint) = refusal(e);
            f.add("git", "working tree", Status::Fail, msg);
            f.hint(hint);
        }
    }
    match &found.base {
        Ok((base, from)) => f.add(
            "git",
            "base branch",
            Status::Ok,
            format!("{base} (from {from})"),
        ),
        Err(e) => {
            let (msg, hint) = refusal(e);
            f.add("git", "base branch", Status::Fail, msg);
            f.hint(hint);
        }
    }
    checkouts::checkout_checks(f, settings);
    if !found.has_remote {
        f.add(
            "git",
            "remote",
            Status::Warn,
            format!(
                "no remote `{}`: branches stay local, no pull request can be opened",
                git.remote
            ),
        );
        f.hint("add the remote, or run competitions with --no-push");
    }
    found.base.ok().map(|(base, _)| base)
}

fn agent_checks(f: &mut Findings, settings: &Settings) {
    let agents = Agents::build(&settings.config, &settings.root, None);
    let mut report = |role: &str, a: &Agent, missing: Status| match &a.backend {
        Ok(b) => f.add(
            "agents",
            &a.name,
            Status::Ok,
            format!("{role}: {}", b.describe()),
        ),
        Err(why) => {
            f.add("agents", &a.name, missing, format!("{role}: {why}"));
            f.hint(
                "install the program or set the key, or change this agent in .ralph/config.toml",
            );
        }
    };
    let usable = agents.bots.iter().filter(|b| b.backend.is_ok()).count();
    let bot_missing = if usable == 0 {
        Status::Fail
    } else {
        Status::Warn
    };
    for b in &agents.bots {
        report("bot", b, bot_missing);
    }
    report(
        "arbiter (extract, judge, review, verify, refine)",
        &agents.arbiter,
        Status::Fail,
    );
    for j in agents.judges.iter().skip(1) {
        report("judge", j, Status::Warn);
    }
    report("implementer", &agents.implementer, Status::Fail);
    model_checks(f, settings);
}

/// A claude or codex agent without a model runs the CLI's own default model — often its most
/// capable, and most expensive.
fn model_checks(f: &mut Findings, settings: &Settings) {
    use crate::config::BackendKind;
    let c = &settings.config;
    let judges = c
        .judges
        .iter()
        .enumerate()
        .map(|(i, j)| (format!("judge_{}", i + 2), j));
    let all = c
        .bots
        .iter()
        .map(|b| (b.id.clone(), &b.agent))
        .chain([
            ("arbiter".to_owned(), &c.arbiter),
            ("implementer".to_owned(), &c.implementer),
        ])
        .chain(judges);
    let unnamed: Vec<String> = all
        .filter(|(_, a)| {
            matches!(a.backend, BackendKind::Claude | BackendKind::Codex) && a.model.is_none()
        })
        .map(|(name, _)| name)
        .collect();
    if !unnamed.is_empty() {
        f.add(
            "agents",
            "models",
            Status::Warn,
            format!(
                "no model named for {}: the CLI picks its own default, often its most expensive",
                unnamed.join(", ")
            ),
        );
        f.hint("set `model` in [defaults] or on each agent (claude: \"sonnet\", \"opus\", \"haiku\" or a full name)");
    }
}

/// The line of one check: what it runs and why, and what it needs that is not here — its
/// program, else (`python -m X`) its module — as a failure for a check `[checks]` names, a
/// warning for a detected one.
async fn check_line(
    f: &mut Findings,
    settings: &Settings,
    plan: &crate::checks::CheckPlan,
    c: &crate::checks::CheckSpec,
) {
    let reason = if c.reason.is_empty() {
        format!("from {}", plan.source)
    } else {
        c.reason.clone()
    };
    let mut why = match &c.advisory {
        Some(advisory) => format!("{reason}; advisory, never a reason to reject: {advisory}"),
        None => reason,
    };
    if let Some(stand_in) = &c.fallback {
        why.push_str(&format!(
            "; stands in for `{}` where {} cannot judge on the base: {}",
            stand_in.for_checks.join("`, `"),
            if stand_in.for_checks.len() == 1 {
                "it"
            } else {
                "none of them"
            },
            stand_in.why
        ));
    }
    if let Some(off) = &c.relaxed {
        why.push_str(&format!(
            "; runs with warnings allowed ({off} taken off), its warnings judged by rule"
        ));
    }
    let module = match crate::checks::python::module_run(&c.command) {
        Some((python, m)) if !importable(&python, &m, &settings.root, &plan.env).await => Some(m),
        _ => None,
    };
    let missing = match (&c.program, module) {
        (Some(p), _) if !on_path(p) && !settings.root.join(p).exists() => Some((
            format!("`{p}` is not installed"),
            if c.configured {
                format!("install `{p}`, or change `{}` under [checks]", c.name)
            } else {
                format!(
                    "install `{p}`, or name the project's own command under [checks] (an unavailable check verifies nothing)"
                )
            },
        )),
        (_, Some(m)) => Some((
            format!("the module `{m}` is not installed for it"),
            format!(
                "install `{m}` into the interpreter the check runs (or the project's environment), or name the project's own command under [checks]"
            ),
        )),
        _ => None,
    };
    match missing {
        Some((what, hint)) => {
            let status = if c.configured {
                Status::Fail
            } else {
                Status::Warn
            };
            f.add(
                "checks",
                &c.name,
                status,
                format!("`{}` ({why}): {what}", c.command),
            );
            f.hint(hint);
        }
        None => f.add(
            "checks",
            &c.name,
            Status::Ok,
            format!("`{}` ({why})", c.command),
        ),
    }
}

async fn check_checks(f: &mut Findings, settings: &Settings) {
    let plan = detect(&settings.root, &settings.config.checks);
    if plan.checks.is_empty() {
        f.add(
            "checks",
            "checks",
            Status::Fail,
            "none is configured or detected: no implementation could be verified".into(),
        );
        f.hint(format!(
            "name them under [checks] in .ralph/config.toml, e.g.\n{}",
            example(&settings.root)
        ));
        return;
    }
    for c in &plan.checks {
        check_line(f, settings, &plan, c).await;
    }
    alone_lines(f, &plan);
    if plan.require_test
        && !plan
            .checks
            .iter()
            .any(|c| c.kind == crate::checks::CheckKind::Test)
    {
        f.add(
            "checks",
            "test",
            Status::Fail,
            "no test check: `[checks] require_test` makes every attempt fail without one".into(),
        );
        f.hint("name the test command under [checks], e.g. test = \"make test\"");
    }
    environment_checks(f, settings, &plan);
}

/// How each test check runs one failing test again alone (a flaky test is told from a
/// regression so), or why its runner cannot.
fn alone_lines(f: &mut Findings, plan: &crate::checks::CheckPlan) {
    let tests = plan
        .checks
        .iter()
        .filter(|c| c.kind == crate::checks::CheckKind::Test && c.job.is_none());
    for c in tests {
        for (runner, how) in crate::checks::tools::alone_in_plan(&c.uses, &c.command, &plan.env) {
            let check = format!("{} alone", c.name);
            match how {
                Ok(how) => f.add(
                    "checks",
                    &check,
                    Status::Ok,
                    format!("a failing {runner} test is run again alone, e.g. `{how}`: passing then, it is flaky and blamed on nobody"),
                ),
                Err(why) => f.add(
                    "checks",
                    &check,
                    Status::Warn,
                    format!("a failing {runner} test cannot be run again alone ({why}): a flaky one fails the change like a regression"),
                ),
            }
        }
    }
}

/// How a worktree's environment is made, what every check runs with, how coverage is measured.
fn environment_checks(f: &mut Findings, settings: &Settings, plan: &crate::checks::CheckPlan) {
    match &plan.setup {
        Some(s) => f.add(
            "checks",
            "setup",
            Status::Ok,
            format!(
                "`{}` ({}) runs in each new worktree and again when a dependency manifest changes",
                s.command, s.reason
            ),
        ),
        None => f.add(
            "checks",
            "setup",
            Status::Ok,
            "none: a worktree is used as checked out (set `setup` under [checks] when the checks need an install)".into(),
        ),
    }
    let vars =
        crate::checks::environment::variables(&settings.root, &settings.ralph_dir.join("cache"));
    for (k, v) in vars {
        let what = match k.as_str() {
            "CARGO_TARGET_DIR" => {
                "one target directory shared by every worktree, so builds are incremental"
            }
            "GOCACHE" | "CCACHE_DIR" => {
                "ralph's own build cache, shared by the worktrees: a check never writes yours"
            }
            "PYTHONPATH" => {
                "the worktree's import roots first, so the checks import the worktree's code"
            }
            _ => "set for every check",
        };
        f.add(
            "checks",
            "environment",
            Status::Ok,
            format!("{k}={v} ({what}; shown for the main checkout)"),
        );
    }
    if let Some(n) = &plan.native {
        f.add(
            "checks",
            "native code",
            Status::Ok,
            format!(
                "`{}` ({}): built for the baseline, and again before the checks whenever a change touches native sources",
                n.command, n.reason
            ),
        );
    }
    for note in &plan.notes {
        let (check, status) = if note.starts_with("coverage") {
            ("coverage", Status::Warn)
        } else if note.contains("left out") {
            ("CI", Status::Warn)
        } else {
            ("CI", Status::Ok)
        };
        f.add("checks", check, status, note.clone());
    }
    if let Some(c) = &plan.coverage {
        let how = match &c.test_command {
            Some(t) => format!("the tests run as `{t}`, then `{}`", c.command),
            None if c.command.is_empty() => "read from the report the tests write".to_owned(),
            None => format!("`{}` after the checks", c.command),
        };
        f.add(
            "checks",
            "coverage",
            Status::Ok,
            format!("{how} ({})", c.reason),
        );
    }
}

async fn issue_checks(
    f: &mut Findings,
    settings: &Settings,
    t: &dyn IssueTracker,
    n: u64,
    facts: &RepoFacts,
) {
    let issue = match t.issue(n).await {
        Ok(i) => i,
        Err(e) => {
            f.add("issue", &format!("#{n}"), Status::Fail, e.to_string());
            f.hint(e.hint().unwrap_or_default());
            return;
        }
    };
    let name = format!("#{n}");
    let ready = &settings.config.github.ready_label;
    match issue_problem(&issue, n, ready) {
        Some((what, hint)) => {
            f.add(
                "issue",
                &name,
                Status::Fail,
                format!("{}: {what}", issue.title),
            );
            f.hint(hint);
        }
        None => f.add(
            "issue",
            &name,
            Status::Ok,
            format!("{}: open and `{ready}`", issue.title),
        ),
    }
    let reqs = Requirements::from_body(&issue.body);
    let open = reqs.open().count();
    if open == 0 {
        f.add(
            "issue",
            "checkboxes",
            Status::Fail,
            "no open checkbox".into(),
        );
        f.hint(requirements_hint(n));
    } else {
        f.add(
            "issue",
            "checkboxes",
            Status::Ok,
            format!("{open} open of {}", reqs.explicit_requirements.len()),
        );
    }
    forge::gate_finding(f, settings, t, n).await;
    branch_finding(f, settings, &issue, n, facts).await;
}

/// Why issue `n` cannot compete, with what to do: a pull request, closed, already in progress
/// or not labelled `ready`; `None` when it can.
fn issue_problem(issue: &Issue, n: u64, ready: &str) -> Option<(String, String)> {
    if issue.is_pull_request {
        Some(("a pull request, not an issue".to_owned(), String::new()))
    } else if issue.state == IssueState::Closed {
        Some((
            "closed".into(),
            "reopen it if it should be worked on".into(),
        ))
    } else if issue.has_label(LABEL_IN_PROGRESS) {
        Some((
            format!("labelled `{LABEL_IN_PROGRESS}`"),
            format!("a run may be working on it; if none is, `ralph ready {n}` re-arms it"),
        ))
    } else if !issue.has_label(ready) {
        Some((
            format!("not labelled `{ready}`"),
            format!("mark it ready with `ralph ready {n}` once its spec is complete"),
        ))
    } else {
        None
    }
}

/// Whether the branch of `issue` (number `n`) is free, as a competition's preflight would find
/// it; the preflight's other refusals are left to the git findings.
async fn branch_finding(
    f: &mut Findings,
    settings: &Settings,
    issue: &Issue,
    n: u64,
    facts: &RepoFacts,
) {
    let git = &settings.config.git;
    let pre = workspace::preflight(
        &settings.root,
        &git.remote,
        None,
        &PreflightOptions {
            issue: n,
            title: &issue.title,
            base: git.base.as_deref(),
            default_branch: facts.default_branch.as_deref(),
            resume: false,
        },
    )
    .await;
    match pre {
        Ok(p) => f.add(
            "issue",
            "branch",
            Status::Ok,
            format!("{} is free", p.branch),
        ),
        // The repository's own problems are reported above; only the branch's go here.
        Err(e) if e.to_string().contains("already exists") => {
            f.add("issue", "branch", Status::Fail, e.to_string());
            f.hint(e.hint().unwrap_or_default().to_owned());
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests;
