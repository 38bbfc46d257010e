//! The setup rehearsal of `ralph doctor`: the preparation a competition runs before its
//! baseline — the setup (`[checks] setup`, else the detected install), the base's native build,
//! and the steps each CI job runs before its first check — run for real, in a scratch checkout
//! of the base made as a competition makes its own (outside the repository, a git directory of
//! its own) and removed afterwards, with the same commands, the same confinement and network
//! policy, the same variables and caches. Each command is reported: ok, failed (how it ended,
//! what it said), or refused by the sandbox's network policy (the hosts, from the egress
//! proxy's count). A setup that fails stops a competition before it begins; the doctor says so
//! before the issue is claimed and the proposals are paid for.
//!
//! What runs is the competition's own code ([`try_setup`], [`try_native`],
//! [`run_steps_alone`]); this module only chooses, times and reports. The report of one
//! command is a pure function of how it ran ([`finding_of`]).

use super::{Finding, Findings, Report, Status};
use crate::checks::environment::{registries_for, try_native, try_setup, variables, Unready};
use crate::checks::job::{run_steps_alone, step_label};
use crate::checks::{detect, CheckPlan, JobStep};
use crate::process::egress::{allow_key, refusals, Refusal};
use crate::settings::Settings;
use std::path::Path;
use std::time::{Duration, Instant};

/// Whether and how the setup is rehearsed, as the command decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rehearsal {
    /// `--no-setup`.
    Skipped,
    /// The sandbox a competition would get could not be installed (a competition would be
    /// refused before it starts): why.
    Unconfined(String),
    /// Run, confined as a competition's setup is: the installed sandbox's state.
    Confined(crate::process::sandbox::Status),
}

/// How the setup runs under the sandbox `st`, in words.
fn confinement(st: &crate::process::sandbox::Status) -> String {
    use crate::process::sandbox::Mode;
    match &st.mechanism {
        Some(m) if st.active => format!(
            "in {m}, writing the checkout and the package caches, {}",
            if st.network.setup == "open" {
                "the network OPEN (`[sandbox.network] setup = \"open\"`)"
            } else {
                "the network only to the package registries and `setup_allow`"
            }
        ),
        _ if st.mode == Mode::Off => "unconfined (`[sandbox] mode = \"off\"`)".to_owned(),
        _ => format!(
            "unconfined: there is no sandbox here ({})",
            st.reason.as_deref().unwrap_or("none found")
        ),
    }
}

/// What a command's failure costs a competition.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stake {
    /// The setup `[checks]` names: the competition stops before it begins.
    Setup,
    /// A detected setup: the checks run without it.
    DetectedSetup,
    /// The base's native build: the checks run without it.
    Native,
    /// A CI job's step: the job's checks after it (named) cannot run on the base.
    Step { job: String, checks: Vec<String> },
}

/// One command of the preparation, as it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ran {
    stake: Stake,
    /// Its label in the report: the step's name, else the command.
    label: String,
    command: String,
    took: Duration,
    ended: Result<(), Unready>,
    /// The connections the sandbox refused it while it ran.
    refused: Vec<Refusal>,
    /// The registries its network policy lets it reach (those of the package managers it
    /// runs, and of the project's ecosystems).
    reaches: Vec<String>,
}

/// Runs the preparation a competition would run (unless `how` says otherwise) and adds what it
/// found to `report`, under `setup`; `say` is told what starts, as it can take minutes.
pub async fn rehearse(
    settings: &Settings,
    report: &mut Report,
    how: Rehearsal,
    say: &dyn Fn(&str),
) {
    let mut f = Findings::default();
    match how {
        Rehearsal::Skipped => f.add(
            "setup",
            "rehearsal",
            Status::Ok,
            "not run (--no-setup): the setup a competition runs is not tried here".into(),
        ),
        Rehearsal::Unconfined(why) => {
            f.add(
                "setup",
                "rehearsal",
                Status::Warn,
                format!("not run: a competition would not start here ({why})"),
            );
            f.hint("see the sandbox findings above");
        }
        Rehearsal::Confined(st) => match report.base.clone() {
            Some(base) => in_scratch(&mut f, settings, &base, &confinement(&st), say).await,
            None => f.add(
                "setup",
                "rehearsal",
                Status::Warn,
                "not run: there is no base branch to check out (see the git findings)".into(),
            ),
        },
    }
    report.findings.extend(f.0);
    report.ok = report.findings.iter().all(|x| x.status != Status::Fail);
}

/// Makes the scratch checkout of `base`, runs the preparation there, reports it, removes it.
async fn in_scratch(
    f: &mut Findings,
    settings: &Settings,
    base: &str,
    confinement: &str,
    say: &dyn Fn(&str),
) {
    let started = Instant::now();
    let not_run = |f: &mut Findings, why: String| {
        f.add(
            "setup",
            "rehearsal",
            Status::Warn,
            format!("not run: {why}"),
        );
    };
    let remote = &settings.config.git.remote;
    let (commit, from) = match crate::workspace::base_tip(&settings.root, remote, base).await {
        Ok(Some(tip)) => tip,
        Ok(None) => return not_run(f, format!("the base branch `{base}` has no commit here")),
        Err(e) => return not_run(f, format!("the base branch `{base}` cannot be read: {e}")),
    };
    let checkouts = match settings.checkouts() {
        Ok(dir) => dir,
        Err(e) => return not_run(f, format!("there is nowhere to check it out: {e}")),
    };
    let path = checkouts.join(format!("doctor-{}", std::process::id()));
    let wt = match crate::workspace::add_detached(&settings.root, &path, &commit).await {
        Ok(wt) => wt,
        Err(e) => return not_run(f, format!("cannot make a scratch checkout of {from}: {e}")),
    };
    let (ran, later, plan) = prepare(settings, &wt.path, say).await;
    // Which check judges: the plan's checks on the base, after the setup, as a competition's
    // baseline runs them (unless the setup failed: a competition stops there).
    let setup_failed = ran
        .iter()
        .any(|r| r.stake == Stake::Setup && r.ended.is_err());
    // (A detected setup that fails does not stop a competition: its checks run all the same.)
    let judged = if setup_failed || plan.checks.is_empty() {
        Vec::new()
    } else {
        say("Checks: running them on the base as a competition's baseline would, to see which judges…");
        let timeout = Duration::from_secs(settings.config.checks.timeout_secs);
        super::candidates::rehearse(&plan, &wt.path, timeout).await
    };
    if let Err(e) = crate::workspace::remove_detached(&settings.root, &wt.path).await {
        tracing::warn!(
            "could not remove the scratch checkout {}: {e}",
            path.display()
        );
    }
    // The repository's folder of checkouts goes too when nothing else is in it.
    let _ = std::fs::remove_dir(&checkouts);
    let summary = summary(&ran, later, &from, &commit, confinement, started.elapsed());
    f.add("setup", "rehearsal", Status::Ok, summary);
    for r in &ran {
        f.0.push(finding_of(r));
    }
    f.0.extend(judged);
}

/// Runs in `tree` what a competition runs there before its baseline, in its order: the setup,
/// the native build, then each CI job's steps before its first check. Returns what ran, how
/// many later steps (between a job's checks) were left out, and the plan.
async fn prepare(
    settings: &Settings,
    tree: &Path,
    say: &dyn Fn(&str),
) -> (Vec<Ran>, usize, CheckPlan) {
    let mut plan = detect(tree, &settings.config.checks);
    plan.env = variables(tree, &settings.ralph_dir.join("cache"));
    let timeout = Duration::from_secs(settings.config.checks.timeout_secs);
    let mut ran = Vec::new();
    let project = crate::checks::project::Project::read(tree);
    let reaches = |command: &str| registries_for(command, &project);
    if let Some(setup) = &plan.setup {
        say(&format!(
            "Setup: running `{}` as a competition would…",
            setup.command
        ));
        let r = timed("setup", || try_setup(setup, tree, timeout, &plan.env)).await;
        let failed = r.ended.is_err();
        ran.push(Ran {
            command: setup.command.clone(),
            reaches: reaches(&setup.command),
            stake: if setup.configured {
                Stake::Setup
            } else {
                Stake::DetectedSetup
            },
            ..r
        });
        if failed && setup.configured {
            // A competition stops here: nothing after the setup runs.
            return (ran, 0, plan);
        }
    }
    if let Some(native) = &plan.native {
        say(&format!(
            "Setup: building the native code with `{}`…",
            native.command
        ));
        let r = timed("native build", || {
            try_native(native, tree, timeout, &plan.env)
        })
        .await;
        // A competition goes on without it: its checks' own steps build the code.
        ran.push(Ran {
            stake: Stake::Native,
            command: native.command.clone(),
            reaches: reaches(&native.command),
            ..r
        });
    }
    let jobs = job_preparations(&plan);
    let later = jobs.iter().map(|j| j.later).sum();
    for job in jobs.iter().filter(|j| !j.steps.is_empty()) {
        say(&format!(
            "Setup: the steps of `{}` before its first check…",
            job.instance
        ));
        ran.extend(
            run_job_steps(job, tree, timeout, &plan.env)
                .await
                .into_iter()
                .map(|r| Ran {
                    reaches: if r.command.is_empty() || !installs(job, &r.label) {
                        Vec::new()
                    } else {
                        reaches(&r.command)
                    },
                    ..r
                }),
        );
    }
    (ran, later, plan)
}

/// Runs `run` (labelled `by` for the sandbox's refusals), timing it and collecting what the
/// sandbox refused it meanwhile.
async fn timed<F, Fut>(by: &str, run: F) -> Ran
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Duration, Unready>>,
{
    let before = refusals().all();
    let started = Instant::now();
    let ended = run().await.map(|_| ());
    Ran {
        stake: Stake::Setup,
        label: by.to_owned(),
        command: String::new(),
        took: started.elapsed(),
        ended,
        refused: refused_since(&before, &refusals().all(), by),
        reaches: Vec::new(),
    }
}

/// Whether `job`'s step `label` installs (and so has the setup's network).
fn installs(job: &JobPreparation, label: &str) -> bool {
    job.steps.iter().any(|s| s.label == label && s.installs)
}

/// The refusals of `by` in `after` that `before` did not hold (or held fewer times).
fn refused_since(before: &[Refusal], after: &[Refusal], by: &str) -> Vec<Refusal> {
    after
        .iter()
        .filter(|r| r.by == by)
        .filter_map(|r| {
            let had = before
                .iter()
                .find(|b| b.kind == r.kind && b.by == r.by && b.host == r.host && b.port == r.port)
                .map_or(0, |b| b.count);
            (r.count > had).then(|| Refusal {
                count: r.count - had,
                ..r.clone()
            })
        })
        .collect()
}

/// What one CI job instance prepares before its first check.
#[derive(Debug, Clone, PartialEq, Eq)]
struct JobPreparation {
    instance: String,
    /// Folders first on `PATH` (the interpreter its matrix names).
    path: Vec<String>,
    steps: Vec<JobStep>,
    /// The job's checks, in order: what cannot run on the base when a step fails.
    checks: Vec<String>,
    /// The job's steps between its checks, not run here: they may need what a check built.
    later: usize,
}

/// Each CI job instance of `plan` with the steps before its first check.
fn job_preparations(plan: &CheckPlan) -> Vec<JobPreparation> {
    let mut out: Vec<JobPreparation> = Vec::new();
    for c in &plan.checks {
        let Some(place) = &c.job else { continue };
        match out.iter_mut().find(|j| j.instance == place.instance) {
            Some(j) => {
                j.checks.push(c.name.clone());
                j.later += place.before.len();
            }
            None => out.push(JobPreparation {
                instance: place.instance.clone(),
                path: place.path.clone(),
                steps: place.before.clone(),
                checks: vec![c.name.clone()],
                later: 0,
            }),
        }
    }
    out
}

/// The most a copy of the checkout for one job may hold, as for a competition's jobs.
const MAX_COPY: u64 = 1 << 30;

/// Runs `job`'s steps in a copy of `tree` of its own (in `tree` when it cannot be copied), as a
/// competition's baseline does.
async fn run_job_steps(
    job: &JobPreparation,
    tree: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> Vec<Ran> {
    let copy = tempfile::Builder::new()
        .prefix("ralph-job-tree")
        .tempdir()
        .ok()
        .filter(|c| crate::untrusted_dir::copy_tree(tree, c.path(), MAX_COPY).is_ok());
    let at = copy.as_ref().map_or(tree, |c| c.path());
    let before = refusals().all();
    let runs = run_steps_alone((at, tree), &job.path, &job.steps, timeout, env).await;
    let after = refusals().all();
    runs.into_iter()
        .map(|run| Ran {
            stake: Stake::Step {
                job: job.instance.clone(),
                checks: job.checks.clone(),
            },
            label: run.step.label.clone(),
            command: run.step.command.clone(),
            took: run.took,
            ended: run.ended.map(|_| ()),
            refused: refused_since(&before, &after, &step_label(&run.step)),
            reaches: Vec::new(),
        })
        .collect()
}

/// The summary line: where it ran, confined how, how long it took, what it left out.
fn summary(
    ran: &[Ran],
    later: usize,
    from: &str,
    commit: &str,
    confinement: &str,
    took: Duration,
) -> String {
    let short = &commit[..commit.len().min(12)];
    let what = if ran.is_empty() {
        "nothing to run (no setup, no native build, no CI job step before a check)".to_owned()
    } else {
        format!(
            "{} command(s) run as a competition would, confined as its setup: {confinement}",
            ran.len()
        )
    };
    let left = if later > 0 {
        format!("; {later} CI job step(s) between checks not run here (they may need what a check built)")
    } else {
        String::new()
    };
    format!(
        "{what}; in a scratch checkout of {from} ({short}), removed afterwards; took {:.1}s{left}",
        took.as_secs_f64()
    )
}

/// The last lines of what a command said, on one line: at most 4 lines of 160 characters.
fn excerpt(said: &str) -> String {
    let lines: Vec<String> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l.chars().count() > 160 {
                format!("{}…", l.chars().take(159).collect::<String>())
            } else {
                l.to_owned()
            }
        })
        .collect();
    lines[lines.len().saturating_sub(4)..].join(" | ")
}

/// The finding of one command, from how it ran.
fn finding_of(r: &Ran) -> Finding {
    let (check, what) = match &r.stake {
        Stake::Setup | Stake::DetectedSetup => ("setup", format!("`{}`", r.command)),
        Stake::Native => ("native build", format!("`{}`", r.command)),
        Stake::Step { job, .. } => ("CI step", format!("`{job}` step `{}`", r.label)),
    };
    let hosts: Vec<String> = r
        .refused
        .iter()
        .map(|x| format!("{}:{}", x.host, x.port))
        .collect();
    let policy = r
        .refused
        .first()
        .map(|x| (x.kind.as_str(), allow_key(&x.kind), hosts.join(", ")));
    let network = if r.reaches.is_empty() {
        String::new()
    } else {
        format!(" (its network: {})", r.reaches.join(", "))
    };
    let what = format!("{what}{network}");
    let (status, detail, hint) = match (&r.ended, policy) {
        (Ok(()), None) => (Status::Ok, format!("{what} ok in {:.1}s", r.took.as_secs_f64()), None),
        (Ok(()), Some((kind, key, hosts))) => (
            Status::Warn,
            format!(
                "{what} succeeded in {:.1}s, but the sandbox refused its connection(s) to {hosts} (not in the {kind} network policy): what it wanted from there is missing",
                r.took.as_secs_f64()
            ),
            Some(capitalized(&allow_hint(key, &hosts))),
        ),
        (Err(u), policy) => {
            let refused = policy
                .as_ref()
                .map(|(kind, _, hosts)| {
                    format!("; the sandbox refused its connection(s) to {hosts} (not in the {kind} network policy)")
                })
                .unwrap_or_default();
            let said = excerpt(&u.said);
            let said = if said.is_empty() { String::new() } else { format!(": {said}") };
            let detail = format!("{what} failed ({}){refused}{said}", u.how);
            let status = match r.stake {
                Stake::Step { .. } | Stake::Native | Stake::DetectedSetup => Status::Warn,
                Stake::Setup => Status::Fail,
            };
            (status, detail, Some(failure_hint(r, u, policy.map(|(_, key, hosts)| (key, hosts)))))
        }
    };
    Finding {
        area: "setup",
        check: check.to_owned(),
        status,
        detail,
        hint,
    }
}

/// What to do about refused `hosts` (`host:port`, comma-separated): the `[sandbox.network]`
/// `key` that allows them, with the entries to add (a host alone allows ports 443 and 80).
fn allow_hint(key: &str, hosts: &str) -> String {
    let mut entries: Vec<String> = hosts
        .split(", ")
        .map(|h| {
            let bare = h.strip_suffix(":443").or_else(|| h.strip_suffix(":80"));
            format!("\"{}\"", bare.unwrap_or(h))
        })
        .collect();
    entries.dedup();
    format!(
        "if it must reach {hosts}, allow it in .ralph/config.toml: `[sandbox.network] {key} = [{}]`",
        entries.join(", ")
    )
}

/// What a failure costs a competition, then what to change; `policy`: the key and hosts of the
/// connections the sandbox refused it.
fn failure_hint(r: &Ran, u: &Unready, policy: Option<(&str, String)>) -> String {
    let cost = match &r.stake {
        Stake::Setup => "a competition would stop on it (exit 2), after its first round's agents had started".to_owned(),
        Stake::Native => "a competition would run its checks without it (a CI job that builds the code its own way still can), and build no change with it".to_owned(),
        Stake::DetectedSetup => "a competition would run its checks without it (a CI job that installs its own way still can; see the candidates below), and run it after no change either".to_owned(),
        Stake::Step { checks, .. } => format!(
            "the job's check(s) {} could not run on the base: they would verify nothing (a competition refuses when no test passes on the base)",
            checks.join(", ")
        ),
    };
    let mut todo: Vec<String> = Vec::new();
    if let Some((key, hosts)) = &policy {
        todo.push(allow_hint(key, hosts));
    }
    if u.said.contains("Read-only file system") {
        todo.push("it wrote where the sandbox allows no writing (the checkout and the package caches are writable): `[sandbox] writable` adds a place".into());
    }
    if u.how.starts_with("stopped after") {
        todo.push("raise `[checks] timeout_secs` if it needs longer".into());
    }
    todo.push(match &r.stake {
        Stake::Setup | Stake::DetectedSetup if policy.is_some() => "set `[checks] setup` to a command that needs no other host (e.g. one that skips the packages' install scripts)".into(),
        Stake::Setup | Stake::DetectedSetup => "make it pass on the base branch, or set `[checks] setup` to the command that makes the environment".into(),
        Stake::Native => "install the compiler and headers it needs, or set `[checks] setup` to build it".into(),
        Stake::Step { .. } => "make the step pass on the base branch, or name the checks under [checks]".into(),
    });
    format!("{cost}. {}", capitalized(&todo.join("; or ")))
}

/// `text` with its first letter upper-case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => format!("{}{}", c.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests;
