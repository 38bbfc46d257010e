//! Before the issue is claimed: the run's worktree, its environment and the baseline. The
//! worktree is made (or reused on resume) and the checks are planned for it with the variables
//! that make them test the worktree's code ([`open`]); then, while the first round's agents
//! already read the worktree, the setup runs when the dependency manifests changed since it
//! last ran there and the checks run on the commit the first attempt will start from, or their
//! cached results are reused ([`ready`]). When nothing could be verified — no test passes
//! there, a configured tool is missing, the setup fails —, the competition is refused (exit 2)
//! with what failed, and a worktree made for it is removed with its branch: nothing changed.

use crate::checks::baseline::Baseline;
use crate::checks::environment::{
    build_native, check_interpreter, fingerprint, python_import, run_setup, variables, AfterChange,
    Diagnosis,
};
use crate::checks::{detect, run_checks, CheckPlan, CheckStatus};
use crate::error::UserError;
use crate::output::Printer;
use crate::settings::Settings;
use crate::workspace::{Preflight, Workspace, Worktree};
use anyhow::Result;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What preparing a run needs.
pub(super) struct Ground<'a> {
    pub settings: &'a Settings,
    pub workspace: &'a dyn Workspace,
    pub printer: &'a Printer,
    /// A resumed run keeps its worktree and branch whatever happens.
    pub resume: bool,
    pub progress: crate::progress::Progress,
}

/// The worktree and its check plan, before the environment and the baseline.
pub(super) struct Opened {
    pub wt: Worktree,
    pub plan: CheckPlan,
}

/// `.ralph/cache/`: baselines, setup fingerprints, the shared Cargo target directory.
pub(super) fn cache_dir(settings: &Settings) -> PathBuf {
    settings.ralph_dir.join("cache")
}

/// Where the fingerprint of the manifests the setup last ran on is kept, per worktree.
fn setup_mark(settings: &Settings, wt: &Worktree) -> PathBuf {
    let name = wt
        .path
        .file_name()
        .map_or_else(|| "worktree".into(), |n| n.to_string_lossy().into_owned());
    cache_dir(settings).join("setup").join(name)
}

/// What a setup or native build run again after an agent changed `wt` may write: the
/// worktree's private cache folder.
pub(super) fn after_change(settings: &Settings, wt: &Worktree) -> AfterChange {
    AfterChange {
        cache: crate::checks::environment::after_change_dir(&cache_dir(settings), &wt.path),
    }
}

/// Runs the plan's setup in the worktree when its manifests changed since it last ran there
/// (`after` an agent's change: confined to its private caches). `Ok(None)` when nothing had to
/// run; the error says what the setup said.
pub(super) async fn refresh_environment(
    settings: &Settings,
    wt: &Worktree,
    plan: &CheckPlan,
    timeout: Duration,
    after: Option<&AfterChange>,
) -> Result<Option<Duration>, String> {
    let Some(setup) = &plan.setup else {
        return Ok(None);
    };
    let mark = setup_mark(settings, wt);
    let now = format!("{}\n{}", setup.command, fingerprint(&wt.path));
    if std::fs::read_to_string(&mark).is_ok_and(|before| before == now) {
        return Ok(None);
    }
    let took = run_setup(setup, &wt.path, timeout, &plan.env, after).await?;
    if let Some(dir) = mark.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::fsutil::write_atomic(&mark, now.as_bytes()) {
        tracing::warn!("cannot record the setup in {}: {e}", mark.display());
    }
    Ok(Some(took))
}

/// Forgets the setup of a worktree that is gone, so a new one of the same name makes its
/// environment again.
pub(super) fn forget_setup(settings: &Settings, wt: &Worktree) {
    let _ = std::fs::remove_file(setup_mark(settings, wt));
}

/// The worktree (reset: a resumed run may have stopped in an attempt) and its check plan.
pub(super) async fn open(input: &Ground<'_>, pre: &Preflight) -> Result<Opened> {
    let wt = input.workspace.create_worktree(pre).await?;
    let settings = input.settings;
    if !input.resume {
        // What an earlier run's agents left in the private caches is not this run's.
        let _ = std::fs::remove_dir_all(after_change(settings, &wt).cache);
    }
    let mut plan = detect(&wt.path, &settings.config.checks);
    plan.env = variables(&wt.path, &cache_dir(settings));
    if let Err(e) = input.workspace.reset_worktree(&wt).await {
        discard(input, &wt).await;
        return Err(e.into());
    }
    Ok(Opened { wt, plan })
}

/// Removes a worktree made for a run that was refused before it began, with its branch (a
/// resumed run's stay).
pub(super) async fn discard(input: &Ground<'_>, wt: &Worktree) {
    if input.resume {
        return;
    }
    if let Err(e) = input.workspace.abandon(wt).await {
        input.printer.warn(&format!(
            "could not remove the worktree {} and its branch: {e}",
            wt.path.display()
        ));
    }
    let _ = std::fs::remove_file(setup_mark(input.settings, wt));
}

/// The worktree's environment and the baseline of the commit the first attempt starts from;
/// refuses (exit 2) when nothing could be verified there.
pub(super) async fn ready(input: &Ground<'_>, wt: &Worktree, plan: &CheckPlan) -> Result<Baseline> {
    let (settings, printer) = (input.settings, input.printer);
    let timeout = Duration::from_secs(settings.config.checks.timeout_secs);
    let made = make_environment(input, wt, plan, timeout).await?;
    let interpreter = check_interpreter(&plan.checks, &wt.path);
    match python_import(&wt.path, &plan.env, interpreter.as_deref()).await {
        Some(Diagnosis::Neutralised(note)) => printer.status(&note),
        Some(Diagnosis::Wrong(warning)) => printer.warn(&warning),
        None => {}
    }
    let commit = input.workspace.head(wt).await?;
    let cache = cache_dir(settings);
    // A cached baseline that would refuse the run is run again: the environment may have been
    // mended since (a tool installed), and a refusal must rest on what is true now.
    let cached = Baseline::load(&cache, &commit, plan)
        .filter(|b| b.unverifiable(plan.require_test).is_none());
    let baseline = match cached {
        Some(cached) => {
            printer.status(&format!(
                "Baseline {} (cached): {}",
                short(&commit),
                describe(&cached)
            ));
            cached
        }
        None => measure_baseline(input, wt, plan, timeout, &commit).await?,
    };
    let baseline = Baseline {
        native_unbuilt: made.native_unbuilt,
        setup_failed: made.setup_failed,
        ..baseline
    };
    if let Some(why) = baseline.unverifiable(plan.require_test) {
        let mut message = why.message;
        for d in &why.details {
            message.push_str("\n  ");
            message.push_str(&d.replace('\n', "\n    "));
        }
        return Err(UserError::usage(message)
            .with_hint("fix the checks on the base branch, or name ones that work under [checks] in .ralph/config.toml; `ralph doctor` shows what was detected and why")
            .into());
    }
    Ok(baseline)
}

/// What making the worktree's environment left undone, and why: ralph's guesses that failed.
struct Made {
    setup_failed: Option<String>,
    native_unbuilt: Option<String>,
}

/// Makes the worktree's environment: the setup when the dependency manifests changed since
/// it last ran there, then the base's native code built in place. Refuses (exit 2) when the
/// setup `[checks]` names fails. A detected setup or native build that fails is ralph's guess
/// failing, not the project: the checks run without it (a CI job installs and builds its own
/// way), and it says why — returned, so that no change is prepared by it either; a competition
/// is then refused only when no test can judge.
async fn make_environment(
    input: &Ground<'_>,
    wt: &Worktree,
    plan: &CheckPlan,
    timeout: Duration,
) -> Result<Made> {
    let (settings, printer) = (input.settings, input.printer);
    let mut made = Made {
        setup_failed: None,
        native_unbuilt: None,
    };
    if let Some(setup) = &plan.setup {
        match refresh_environment(settings, wt, plan, timeout, None).await {
            Ok(Some(took)) => printer.status(&format!(
                "Environment: `{}` ({}) took {:.1}s",
                setup.command,
                setup.reason,
                took.as_secs_f64()
            )),
            Ok(None) => {}
            Err(why) if setup.configured => {
                return Err(UserError::usage(format!(
                    "the worktree's environment could not be made: {why}"
                ))
                .with_hint("fix the setup, or set the command that makes the environment as `setup` under [checks] in .ralph/config.toml; `ralph doctor` shows what runs")
                .into())
            }
            Err(why) => {
                printer.warn(&format!(
                    "the detected setup `{}` ({}) failed on the base: the checks run without it (a CI job's own installs still can), and it is not run after a change either; `setup` under [checks] names one that works: {why}",
                    setup.command, setup.reason
                ));
                made.setup_failed = Some(why);
            }
        }
    }
    // The base's native code, built in place: the baseline tests what the base builds.
    if let Some(native) = &plan.native {
        match build_native(native, &wt.path, timeout, &plan.env, None).await {
            Ok(took) => printer.status(&format!(
                "Native code: `{}` ({}) took {:.1}s",
                native.command,
                native.reason,
                took.as_secs_f64()
            )),
            Err(why) => {
                printer.warn(&format!(
                    "the base's native code could not be built by `{}` ({}): the checks run without it, and a change's native code is built only by the checks' own steps (a CI job's): {why}",
                    native.command, native.reason
                ));
                made.native_unbuilt = Some(why);
            }
        }
    }
    Ok(made)
}

/// Runs the checks on `commit` in the worktree for the baseline, and caches it: what the
/// checks leave behind is removed, so the first attempt starts from the base.
async fn measure_baseline(
    input: &Ground<'_>,
    wt: &Worktree,
    plan: &CheckPlan,
    timeout: Duration,
    commit: &str,
) -> Result<Baseline> {
    let printer = input.printer;
    let cache = cache_dir(input.settings);
    let started = Instant::now();
    let watch = crate::checks::live::Watch {
        label: "baseline check",
        ..crate::checks::live::Watch::unwatched(&input.progress)
    };
    // What the checks leave in the worktree (an unpacked sdist, a report) goes after
    // them: the first attempt starts from the base, not from the baseline's leftovers.
    let before = input.workspace.snapshot(wt).await?;
    let ran = run_checks(plan, &wt.path, timeout, &watch, Default::default()).await;
    let left = input.workspace.tidy(wt, &before).await?;
    if !left.is_empty() {
        tracing::debug!("the baseline's checks left {} (removed)", left.join("; "));
    }
    let baseline = Baseline::from_results(
        commit,
        &ran.checks,
        ran.coverage,
        ran.coverage_missing.clone(),
    );
    printer.status(&format!(
        "Baseline {} ({:.1}s): {}",
        short(commit),
        started.elapsed().as_secs_f64(),
        describe(&baseline)
    ));
    if let Err(e) = baseline.save(&cache) {
        printer.warn(&format!(
            "cannot cache the baseline in {}: {e}",
            cache.display()
        ));
    }
    Ok(baseline)
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// `format ✓ · lint failing · test ✓ · coverage 91.25%`.
pub(super) fn describe(b: &Baseline) -> String {
    let mut parts: Vec<String> = b
        .checks
        .iter()
        .map(|c| {
            let state = match c.status {
                CheckStatus::Passed => "passes",
                CheckStatus::Unavailable => "unavailable",
                CheckStatus::TimedOut => "times out",
                CheckStatus::Failed | CheckStatus::FailingOnBase => "fails",
                CheckStatus::Skipped => "not run",
            };
            format!("{} {state}", c.name)
        })
        .collect();
    if let Some(c) = b.coverage {
        parts.push(format!("coverage {c:.2}%"));
    }
    parts.join(" · ")
}
