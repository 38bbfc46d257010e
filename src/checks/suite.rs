//! Running a plan's checks in a worktree: the quality checks side by side (one build lock at a
//! time), then the tests one at a time — the first under coverage when the plan measures it —,
//! then the coverage report. A [`Schedule`] runs first the checks that failed last time and
//! stops at the first check that fails for the change, the rest not run: a broken change is
//! rejected as soon as that is known.

use super::baseline::Baseline;
use super::plan::CheckPlan;
use super::result::{CheckResult, CheckStatus};
use super::run::{run_check, skipped, Observer};
use super::spec::CheckSpec;
use super::tools::CheckKind;
use std::path::Path;
use std::time::{Duration, Instant};

/// What running a plan's checks found.
#[derive(Debug, Clone)]
pub struct Ran {
    /// In the order of the plan.
    pub checks: Vec<CheckResult>,
    /// The coverage total, when the plan measures it and it could be read.
    pub coverage: Option<f64>,
    /// Why there is no total, when there is none.
    pub coverage_missing: Option<String>,
    /// How long the whole run took, on the wall clock.
    pub took_ms: u64,
}

/// What a lane of quality checks reports as it goes.
enum Event {
    Started(usize),
    Finished(usize, Box<CheckResult>),
}

/// The quality checks among `indices` in lanes that run at the same time: one lane for the
/// checks that write into the tree (never two writers at once in one tree), one per build lock
/// (its checks in plan order), one lane for each check that takes none.
fn lanes(plan: &CheckPlan, indices: &[usize]) -> Vec<Vec<usize>> {
    let mut locked: Vec<(&'static str, Vec<usize>)> = Vec::new();
    let mut out = Vec::new();
    for &i in indices {
        let spec = &plan.checks[i];
        if spec.kind != CheckKind::Quality {
            continue;
        }
        let lock = if spec.uses.writes {
            Some("the tree")
        } else {
            spec.uses.lock
        };
        match lock {
            Some(lock) => match locked.iter_mut().find(|(l, _)| *l == lock) {
                Some((_, lane)) => lane.push(i),
                None => locked.push((lock, vec![i])),
            },
            None => out.push(vec![i]),
        }
    }
    out.extend(locked.into_iter().map(|(_, lane)| lane));
    out
}

/// How a run of the checks is ordered and when it stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct Schedule<'a> {
    /// Checks that failed last time, by name: they run first (then the rest).
    pub first: &'a [String],
    /// The base's results: a check that fails for the change — failing where it passed on
    /// the base, or worse — stops the run, the checks after it not run ([`CheckStatus::Skipped`]).
    /// `None` (the baseline itself) runs every check.
    pub stop_against: Option<&'a Baseline>,
    /// The test files the change adds or edits: after a change, they run first, alone
    /// ([`super::first`]).
    pub changed_tests: &'a [String],
}

impl Schedule<'_> {
    /// Whether `result` is a failure of the change that ends the run.
    fn stops_at(&self, result: &CheckResult) -> bool {
        let Some(base) = self.stop_against.filter(|_| result.advisory.is_none()) else {
            return false;
        };
        let mut judged = result.clone();
        base.judge(&mut judged);
        matches!(judged.status, CheckStatus::Failed | CheckStatus::TimedOut)
    }

    /// The plan's indices in the order they run: those that failed last time, then the rest,
    /// each group in plan order.
    fn phases(&self, plan: &CheckPlan) -> [Vec<usize>; 2] {
        let (first, rest): (Vec<usize>, Vec<usize>) = (0..plan.checks.len())
            .partition(|i| self.first.iter().any(|n| *n == plan.checks[*i].name));
        [first, rest]
    }
}

/// Runs the plan's checks in `workdir`, in the order of `schedule` (each group's quality checks
/// side by side, then its tests in order — the plan's first test check under coverage when the
/// plan says how —), stopping where `schedule` says; then the coverage report, when every check
/// ran. The plan's environment is set for all of them; a shared Cargo target directory is held
/// for the whole run ([`super::shared_target`]); a build system builds in a folder of the
/// run's own.
pub async fn run_checks(
    plan: &CheckPlan,
    workdir: &Path,
    timeout: Duration,
    watch: &dyn Observer,
    schedule: Schedule<'_>,
) -> Ran {
    let started = Instant::now();
    // A shared Cargo target directory is this worktree's alone while its checks run.
    let _held = hold_shared_target(plan, workdir).await;
    let cov_dir = tempfile::tempdir().ok();
    let build_dir = tempfile::tempdir().ok();
    let env = run_env(plan, workdir, build_dir.as_ref(), cov_dir.as_ref());
    let run = Run {
        plan,
        workdir,
        timeout,
        env: &env,
        watch,
        schedule,
    };
    let mut state = State {
        results: vec![None; plan.checks.len()],
        under_coverage: plan
            .coverage
            .as_ref()
            .and_then(|c| c.test_command.clone())
            .zip(
                plan.checks
                    .iter()
                    .position(|c| c.kind == CheckKind::Test && c.job.is_none()),
            ),
        untraced: false,
        covered: None,
        stopped: None,
    };
    // A check that failed on the base without a measure cannot judge the change: not run again.
    if let Some(base) = schedule.stop_against {
        for (i, spec) in plan.checks.iter().enumerate() {
            state.results[i] = base.cannot_judge(spec);
        }
    }
    // The change's own tests first: where they fail, that is the verdict, and the rest waits.
    if let Some(base) = schedule.stop_against {
        let first = super::first::Setting {
            plan,
            workdir,
            timeout,
            env: &env,
            watch,
        };
        let decided = super::first::run(&first, base, schedule.changed_tests, &state.results).await;
        if let Some((at, verdict)) = decided {
            state.results[at] = Some(verdict);
            for (i, spec) in plan.checks.iter().enumerate() {
                if state.results[i].is_none() {
                    state.results[i] = Some(super::first::not_run(spec));
                }
            }
            return Ran {
                checks: state.results.into_iter().flatten().collect(),
                coverage: None,
                coverage_missing: Some(
                    "the change's own tests failed first, and the suite was not run".into(),
                ),
                took_ms: started.elapsed().as_millis() as u64,
            };
        }
    }
    // A stand-in runs after the change only where it stood in on the base; on the base, only
    // after the checks it gives way to, where none of them can judge.
    for phase in schedule.phases(plan) {
        let phase: Vec<usize> = phase
            .into_iter()
            .filter(|i| {
                let spec = &plan.checks[*i];
                spec.fallback.is_none()
                    || schedule
                        .stop_against
                        .is_some_and(|base| base.stood_in(spec))
            })
            .collect();
        run.phase(&phase, &mut state).await;
    }
    if schedule.stop_against.is_none() {
        stand_in(&run, &mut state).await;
    }
    let measured = measure_coverage(&run, &state, cov_dir.as_ref()).await;
    let (coverage, coverage_missing) = match measured {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    Ran {
        checks: state.results.into_iter().flatten().collect(),
        coverage,
        coverage_missing,
        took_ms: started.elapsed().as_millis() as u64,
    }
}

/// On the base, runs each stand-in, in plan order, where none of the checks it gives way to
/// could judge (a stand-in after another names it among them).
async fn stand_in(run: &Run<'_>, state: &mut State) {
    let plan = run.plan;
    for (i, spec) in plan.checks.iter().enumerate() {
        if spec.fallback.is_none() || state.results[i].is_some() {
            continue;
        }
        let so_far: Vec<&CheckResult> = state.results.iter().flatten().collect();
        let needed = super::baseline::stand_in_needed(spec, &so_far);
        if needed {
            run.phase(&[i], state).await;
        }
    }
}

/// The variables every check of the run gets: the plan's, the run's own build folder, Cargo
/// kept offline (the setup downloaded its crates; a project that keeps no Cargo.lock resolves
/// again in every check), coverage.py's data out of the worktree.
fn run_env(
    plan: &CheckPlan,
    workdir: &Path,
    build_dir: Option<&tempfile::TempDir>,
    cov_dir: Option<&tempfile::TempDir>,
) -> Vec<(String, String)> {
    let mut env = plan.env.clone();
    if let Some(dir) = build_dir {
        env.push((
            super::build_system::BUILD_DIR_VAR.into(),
            dir.path().display().to_string(),
        ));
    }
    // Each ecosystem's builds stay off the network, as a check has none (unless the user says).
    let project = super::project::Project::read(workdir);
    for (var, value) in super::tools::ecosystem::of(&project).filter_map(|e| e.offline) {
        if crate::env::get(var).is_none() {
            env.push((var.into(), value.into()));
        }
    }
    if let (Some(_), Some(dir)) = (&plan.coverage, cov_dir) {
        for (var, file, _) in super::tools::data_files() {
            env.push((var.into(), dir.path().join(file).display().to_string()));
        }
    }
    env
}

/// The coverage total after the checks, or why there is none: decided by the check that ran
/// under coverage alone (another test check that could not run — a CI step whose tool is
/// missing — takes nothing from its figure).
async fn measure_coverage(
    run: &Run<'_>,
    state: &State,
    cov_dir: Option<&tempfile::TempDir>,
) -> Result<f64, String> {
    match (&run.plan.coverage, cov_dir, &state.stopped) {
        (Some(_), _, Some(name)) => Err(format!(
            "the change failed `{name}`, and the checks stopped there"
        )),
        (Some(spec), Some(dir), None) => {
            match (&state.covered, state.untraced, spec.test_command.is_some()) {
                (Some((name, false)), _, true) => {
                    Err(format!("the test check `{name}` could not run"))
                }
                (None, _, true) => Err("no test check ran under coverage".to_owned()),
                (_, true, true) => {
                    Err("the tests pass but fail when run under coverage".to_owned())
                }
                _ => {
                    super::coverage::measure(spec, run.workdir, dir.path(), run.timeout, run.env)
                        .await
                }
            }
        }
        (Some(_), None, None) => Err("no temporary folder for its data could be made".to_owned()),
        (None, ..) => Err(run
            .plan
            .notes
            .iter()
            .find_map(|n| n.strip_prefix("coverage is not measured: "))
            .map_or_else(
                || "no coverage tool is configured or detected".to_owned(),
                str::to_owned,
            )),
    }
}

/// One run of the checks: what it runs, where and how.
struct Run<'a> {
    plan: &'a CheckPlan,
    workdir: &'a Path,
    timeout: Duration,
    env: &'a [(String, String)],
    watch: &'a dyn Observer,
    schedule: Schedule<'a>,
}

/// Where a run of the checks stands.
struct State {
    /// Each check's result, at its plan index.
    results: Vec<Option<CheckResult>>,
    /// The command under coverage and the plan index of the test check it stands for, until
    /// that check runs.
    under_coverage: Option<(String, usize)>,
    /// The check under coverage failed there but passes as the project runs it.
    untraced: bool,
    /// The check run under coverage, and whether it could run at all.
    covered: Option<(String, bool)>,
    /// The check whose failure stopped the run.
    stopped: Option<String>,
}

impl Run<'_> {
    /// Runs the checks at `indices`: the quality checks side by side, then the tests in order;
    /// once the run has stopped, each is recorded as not run.
    async fn phase(&self, indices: &[usize], state: &mut State) {
        let quality: Vec<usize> = indices
            .iter()
            .copied()
            .filter(|i| {
                let c = &self.plan.checks[*i];
                c.kind != CheckKind::Test && c.job.is_none() && state.results[*i].is_none()
            })
            .collect();
        if state.stopped.is_none() {
            state.stopped = run_quality(self, &quality, &mut state.results).await;
        }
        for &i in indices {
            let spec = &self.plan.checks[i];
            if state.results[i].is_some() {
                continue;
            }
            if state.stopped.is_some() {
                state.results[i] = Some(skipped(spec));
                continue;
            }
            if let Some(place) = &spec.job {
                self.run_jobs(&place.job.clone(), state).await;
                continue;
            }
            let view = self.watch.started(&spec.name, &spec.command);
            let result = match state.under_coverage.take_if(|(_, at)| *at == i) {
                Some((command, _)) => {
                    let (r, passes_untraced) =
                        run_under_coverage(spec, command, self.workdir, self.timeout, self.env)
                            .await;
                    state.untraced |= passes_untraced;
                    state.covered = Some((spec.name.clone(), r.status != CheckStatus::Unavailable));
                    r
                }
                None => run_check(spec, self.workdir, self.timeout, self.env).await,
            };
            let mut result = result;
            if let Some(base) = self.schedule.stop_against {
                super::rerun::settle(
                    spec,
                    &mut result,
                    base,
                    self.workdir,
                    self.timeout,
                    self.env,
                )
                .await;
            }
            drop(view);
            self.watch.finished(&result);
            if self.schedule.stops_at(&result) {
                state.stopped = Some(spec.name.clone());
            }
            state.results[i] = Some(result);
        }
    }
}

/// The most a worktree copy for one CI job may hold; a larger worktree runs its jobs one after
/// another in place.
const MAX_COPY: u64 = 1 << 30;

impl Run<'_> {
    /// Runs the CI job `job` — each of its instances (the matrix's combinations) in a copy of
    /// the worktree of its own, side by side (as many at once as the machine has cores), each
    /// instance's checks in order after the steps before them ([`super::job`]). A worktree
    /// that cannot be copied runs them in place, one instance at a time. After a check fails
    /// for the change, no other instance starts.
    async fn run_jobs(&self, job: &str, state: &mut State) {
        use std::sync::atomic::{AtomicBool, Ordering};
        let checks = &self.plan.checks;
        let mut instances: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, c) in checks.iter().enumerate() {
            let Some(place) = c.job.as_ref().filter(|p| p.job == job) else {
                continue;
            };
            match instances.iter_mut().find(|(k, _)| *k == place.instance) {
                Some((_, ix)) => ix.push(i),
                None => instances.push((place.instance.clone(), vec![i])),
            }
        }
        let width = std::thread::available_parallelism().map_or(2, |n| n.get());
        let slots = tokio::sync::Semaphore::new(width.max(2));
        let in_place = tokio::sync::Mutex::new(());
        let stop = AtomicBool::new(false);
        let done: Vec<bool> = state.results.iter().map(Option::is_some).collect();
        let base = self.schedule.stop_against;
        let stops = |r: &CheckResult| {
            if fails_for_change(base, r) {
                stop.store(true, Ordering::SeqCst);
            }
            stop.load(Ordering::SeqCst)
        };
        let instance = |ix: Vec<usize>| {
            let (slots, in_place, stop, done, stops) = (&slots, &in_place, &stop, &done, &stops);
            async move {
                let refs: Vec<(usize, &CheckSpec)> = ix.iter().map(|&i| (i, &checks[i])).collect();
                let Ok(_slot) = slots.acquire().await else {
                    return refs.iter().map(|(i, s)| (*i, skipped(s))).collect();
                };
                if stop.load(Ordering::SeqCst) {
                    return refs.iter().map(|(i, s)| (*i, skipped(s))).collect();
                }
                let copy = copy_of(self.workdir).await;
                let _alone = match &copy {
                    Some(_) => None,
                    None => Some(in_place.lock().await),
                };
                let run = super::job::JobRun {
                    tree: copy.as_ref().map_or(self.workdir, |c| c.path()),
                    workdir: self.workdir,
                    timeout: self.timeout,
                    env: self.env,
                    base,
                    watch: self.watch,
                };
                super::job::run_job(&refs, &run, &|i| done[i], stops).await
            }
        };
        let results =
            futures_util::future::join_all(instances.into_iter().map(|(_, ix)| instance(ix))).await;
        for (i, r) in results.into_iter().flatten() {
            if state.stopped.is_none() && self.schedule.stops_at(&r) {
                state.stopped = Some(r.name.clone());
            }
            state.results[i] = Some(r);
        }
        // A check no instance reached: not run.
        for (i, c) in checks.iter().enumerate() {
            if c.job.as_ref().is_some_and(|p| p.job == job) && state.results[i].is_none() {
                state.results[i] = Some(skipped(c));
            }
        }
    }
}

/// Whether `result` fails for the change against `base` (an advisory check never does).
fn fails_for_change(base: Option<&Baseline>, result: &CheckResult) -> bool {
    let Some(base) = base.filter(|_| result.advisory.is_none()) else {
        return false;
    };
    let mut judged = result.clone();
    base.judge(&mut judged);
    matches!(judged.status, CheckStatus::Failed | CheckStatus::TimedOut)
}

/// A copy of the worktree `dir` in a temporary folder of its own; `None` (with a warning) when
/// it cannot be made.
async fn copy_of(dir: &Path) -> Option<tempfile::TempDir> {
    let dir = dir.to_owned();
    let made = tokio::task::spawn_blocking(move || {
        let copy = tempfile::Builder::new()
            .prefix("ralph-job-tree")
            .tempdir()?;
        crate::untrusted_dir::copy_tree(&dir, copy.path(), MAX_COPY)?;
        Ok::<_, std::io::Error>(copy)
    })
    .await;
    match made {
        Ok(Ok(copy)) => Some(copy),
        Ok(Err(e)) => {
            tracing::warn!("the worktree cannot be copied for a CI job ({e}): the jobs run in place, one at a time");
            None
        }
        Err(_) => None,
    }
}

/// The shared Cargo target directory of the plan's environment, held for `workdir`; `None`
/// (with a warning when it cannot be taken) without one.
async fn hold_shared_target(
    plan: &CheckPlan,
    workdir: &Path,
) -> Option<super::shared_target::Held> {
    match super::shared_target::of(&plan.env) {
        Some(dir) => match super::shared_target::hold(&dir, workdir).await {
            Ok(held) => Some(held),
            Err(e) => {
                tracing::warn!(
                    "cannot take the shared target directory {}: {e}",
                    dir.display()
                );
                None
            }
        },
        None => None,
    }
}

/// Runs the quality checks at `indices` in their [`lanes`], the lanes at the same time, telling
/// the watcher as each check starts and ends, and puts each result at its plan index in
/// `results`. Once one fails for the change, no lane starts another (those running finish): the
/// rest are recorded as not run, and the failed check's name is returned.
async fn run_quality(
    run: &Run<'_>,
    indices: &[usize],
    results: &mut [Option<CheckResult>],
) -> Option<String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Quality checks at the same time — but those that share a build lock one after another
    // (two cargo builds would only wait for each other, and each check's time would include
    // the other's).
    let plan = run.plan;
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let mut set = tokio::task::JoinSet::new();
    for lane in lanes(plan, indices) {
        let (tx, dir, env) = (tx.clone(), run.workdir.to_owned(), run.env.to_vec());
        let (timeout, stop) = (run.timeout, stop.clone());
        let specs: Vec<(usize, CheckSpec)> = lane
            .into_iter()
            .map(|i| (i, plan.checks[i].clone()))
            .collect();
        set.spawn(async move {
            for (i, spec) in specs {
                if stop.load(Ordering::SeqCst) {
                    let _ = tx.send(Event::Finished(i, Box::new(skipped(&spec))));
                    continue;
                }
                let _ = tx.send(Event::Started(i));
                let r = run_check(&spec, &dir, timeout, &env).await;
                let _ = tx.send(Event::Finished(i, Box::new(r)));
            }
        });
    }
    drop(tx);
    let mut stopped = None;
    let mut views: Vec<Option<Box<dyn Send>>> = (0..plan.checks.len()).map(|_| None).collect();
    while let Some(event) = rx.recv().await {
        match event {
            Event::Started(i) => {
                let spec = &plan.checks[i];
                views[i] = Some(run.watch.started(&spec.name, &spec.command));
            }
            Event::Finished(i, r) => {
                views[i] = None;
                if r.status != CheckStatus::Skipped {
                    run.watch.finished(&r);
                }
                if stopped.is_none() && run.schedule.stops_at(&r) {
                    stop.store(true, Ordering::SeqCst);
                    stopped = Some(r.name.clone());
                }
                results[i] = Some(*r);
            }
        }
    }
    while set.join_next().await.is_some() {}
    stopped
}

/// Runs the test check `spec` as `command`, its command under coverage. Where that cannot run
/// here, `spec` runs as it is; where it fails, `spec` runs as it is too, and a pass then wins
/// with a hint — and `true`: coverage is not measured.
async fn run_under_coverage(
    spec: &CheckSpec,
    command: String,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) -> (CheckResult, bool) {
    let wrapped = CheckSpec {
        command,
        program: None,
        ..spec.clone()
    };
    let r = run_check(&wrapped, workdir, timeout, env).await;
    match r.status {
        CheckStatus::Unavailable => {
            tracing::warn!(
                "`{}` cannot run under coverage here; running it without",
                spec.name
            );
            (run_check(spec, workdir, timeout, env).await, false)
        }
        // Some suites fail only under a tracer (a recursion test sees coverage's frames): the
        // project's own command decides, and coverage is not taken.
        CheckStatus::Failed => {
            let mut plain = run_check(spec, workdir, timeout, env).await;
            if plain.passed() {
                plain.hint = Some(format!(
                    "passes as `{}` but fails under coverage (`{}`): coverage is not measured",
                    spec.command, wrapped.command
                ));
                (plain, true)
            } else {
                (r, false)
            }
        }
        _ => (r, false),
    }
}

#[cfg(test)]
mod tests;
