//! A CI job as its author meant it: its steps in order, in one tree of its own (a copy of the
//! worktree, as a runner checks the repository out for each job), each step from the tree's
//! root with the environment earlier steps exported (`$GITHUB_ENV`, `$GITHUB_PATH`) and the
//! variables a runner gives (`GITHUB_WORKSPACE`, `RUNNER_TEMP`, `CI`). A step that installs runs
//! as a setup does — the setup's network, before the change into the user's caches, after it
//! into private ones — and what it installs globally (`pip install`, `npm i -g`, `cargo
//! install`, …) lands in the job's own folders, first on `PATH`; a pip install into the active
//! Python goes into a virtual environment of the job's own ([`python`]): the same on both sides.
//! The job's other steps run as checks do; a check that fails does not stop the job.
//!
//! A CI job is written for a fresh VM with the network and root. On the base, a step that fails
//! here (a browser download, `su`, a host outside the policy) is skipped and the checks after it
//! are tried without it: one that then judges does so (and the step is skipped after the change
//! too), one that does not could not run here — it gives way to the next candidate of its role.
//! After the change, a step that fails leaves the job's later checks unable to run: the change's
//! doing, unless the machine stopped it ([`cause`]) — then their verdict is unknown, held
//! against nobody.

mod cause;
mod python;

use super::baseline::Baseline;
use super::environment::Unready;
use super::result::{CheckResult, CheckStatus};
use super::run::{run_check, Observer};
use super::spec::{CheckSpec, JobStep};
use crate::process::{self, Kind};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use super::confined::JOB_DIR_VAR;

/// How a job runs: its tree, its time limit, the plan's variables, whether it runs on the base
/// (its installs may write the user's caches) and who watches.
pub struct JobRun<'a> {
    pub tree: &'a Path,
    /// The worktree the tree copies: the plan's import roots there point into the tree.
    pub workdir: &'a Path,
    pub timeout: Duration,
    pub env: &'a [(String, String)],
    /// The base's results: a check failing for the change is run again alone before it counts
    /// ([`super::rerun`]); `None`: this is the base.
    pub base: Option<&'a Baseline>,
    pub watch: &'a dyn Observer,
}

/// The job's state as its steps run: the folder of its own, the variables steps exported, the
/// folders they put on `PATH`.
struct Job {
    scratch: tempfile::TempDir,
    /// The scratch folder opened as untrusted: steps write into it, so a later step's files are
    /// made without following what an earlier step left there.
    dir: crate::untrusted_dir::UntrustedDir,
    exported: Vec<(String, String)>,
    path: Vec<String>,
    steps: usize,
    /// What its steps ask of its Python.
    python: python::Needs,
    workdir: PathBuf,
    tree: PathBuf,
}

/// Makes `rel` beneath the job's folder, as an I/O error when it cannot.
fn job_dir_made(dir: &crate::untrusted_dir::UntrustedDir, rel: &Path) -> std::io::Result<()> {
    dir.create_dir_all(rel)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

impl Job {
    fn new(
        tree: &Path,
        workdir: &Path,
        extra_path: &[String],
        python: python::Needs,
    ) -> std::io::Result<Job> {
        let scratch = tempfile::Builder::new().prefix("ralph-job").tempdir()?;
        let dir = crate::untrusted_dir::UntrustedDir::open(scratch.path())?;
        let mut job = Job {
            scratch,
            dir,
            exported: Vec::new(),
            path: extra_path.to_vec(),
            steps: 0,
            python,
            workdir: workdir.to_owned(),
            tree: tree.to_owned(),
        };
        let root = job.scratch.path().to_owned();
        let made = |rel: &Path| job_dir_made(&job.dir, rel);
        made(Path::new("tmp"))?;
        // The tools' user configuration is the job's own, as a runner's is: a step's `npm
        // config set` changes nothing of the user's, with the sandbox (which hides `~/.npmrc`)
        // or without it.
        for (var, file) in crate::checks::tools::user_configs() {
            job.dir
                .write(Path::new(file), b"")
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            job.exported
                .push((var.into(), root.join(file).display().to_string()));
        }
        for (var, dir, bin) in crate::checks::tools::private_installs() {
            let rel = Path::new("installed").join(dir);
            made(&rel)?;
            let place = root.join(rel);
            job.exported.push((var.into(), place.display().to_string()));
            if let Some(bin) = bin {
                let bin = if bin.is_empty() {
                    place.clone()
                } else {
                    place.join(bin)
                };
                job.path.push(bin.display().to_string());
            }
        }
        job.exported.extend([
            (JOB_DIR_VAR.to_owned(), root.display().to_string()),
            ("GITHUB_WORKSPACE".to_owned(), tree.display().to_string()),
            (
                "RUNNER_TEMP".to_owned(),
                root.join("tmp").display().to_string(),
            ),
            ("RUNNER_OS".to_owned(), "Linux".to_owned()),
            ("CI".to_owned(), "true".to_owned()),
        ]);
        Ok(job)
    }

    /// Makes the job's own Python environment where its steps install with pip, first on its
    /// `PATH`; where it cannot be made, the steps run without (and say what they find).
    async fn ready(&mut self, plan: &[(String, String)]) {
        if !self.python.venv {
            return;
        }
        let venv = self.scratch.path().join("venv");
        let path = self.path_value(plan);
        match python::make(&venv, &path, &self.tree, self.scratch.path()).await {
            Ok(()) => {
                self.path.push(venv.join("bin").display().to_string());
                self.exported
                    .push(("VIRTUAL_ENV".into(), venv.display().to_string()));
            }
            Err(e) => tracing::warn!("the CI job's Python environment cannot be made: {e}"),
        }
    }

    /// `PATH` for a step: the job's folders first (the last added first), then the plan's or
    /// ralph's own.
    fn path_value(&self, env: &[(String, String)]) -> String {
        let base = env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| crate::env::get("PATH"))
            .unwrap_or_default();
        let mut path: Vec<String> = self.path.iter().rev().cloned().collect();
        path.push(base);
        path.join(":")
    }

    /// The variables of the next step: the plan's (its import roots pointed at the job's
    /// tree, its coverage data in the job's folder: instances side by side share no writable
    /// place), the job's, `PATH` with the job's folders first, and fresh files for what the
    /// step exports.
    fn env_of_step(&mut self, plan: &[(String, String)]) -> Vec<(String, String)> {
        self.steps += 1;
        let rel = PathBuf::from(format!("step-{}", self.steps));
        let files = self.scratch.path().join(&rel);
        let _ = self.dir.create_dir_all(&rel);
        let mut env: Vec<(String, String)> = Vec::new();
        for (k, v) in plan {
            // A tool's data file (coverage.py's): the job's own.
            let data = crate::checks::tools::data_files().find(|(var, ..)| var == k);
            if let Some((_, file, tool)) = data {
                let _ = self.dir.create_dir_all(Path::new(tool));
                let own = self.scratch.path().join(tool).join(file);
                env.push((k.clone(), own.display().to_string()));
                continue;
            }
            match k.as_str() {
                "PYTHONPATH" => {
                    let roots =
                        python::import_roots(v, &self.workdir, &self.tree, self.python.project);
                    env.extend(roots.map(|r| (k.clone(), r)));
                }
                _ => env.push((k.clone(), v.clone())),
            }
        }
        env.extend(self.exported.iter().cloned());
        for (var, file) in [
            ("GITHUB_ENV", "env"),
            ("GITHUB_PATH", "path"),
            ("GITHUB_OUTPUT", "output"),
            ("GITHUB_STEP_SUMMARY", "summary"),
        ] {
            let f = files.join(file);
            let _ = self.dir.write(&rel.join(file), b"");
            env.push((var.into(), f.display().to_string()));
        }
        let path = self.path_value(&env);
        env.push(("PATH".into(), path));
        env
    }

    /// Takes in what the last step exported through `$GITHUB_ENV` and `$GITHUB_PATH`.
    fn read_exports(&mut self) {
        let files = self.scratch.path().join(format!("step-{}", self.steps));
        let read = |f: &str| crate::untrusted_dir::report_text(&files.join(f), "a step's exports");
        if let Some(text) = read("env") {
            for (k, v) in exports(&text) {
                self.exported.retain(|(e, _)| *e != k);
                self.exported.push((k, v));
            }
        }
        if let Some(text) = read("path") {
            self.path.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned),
            );
        }
    }

    /// The places a step may write besides the tree: the job's own folder.
    fn writable(&self) -> Vec<PathBuf> {
        vec![self.scratch.path().to_owned()]
    }
}

/// The variables a `$GITHUB_ENV` file sets: `NAME=value` lines and `NAME<<DELIMITER` blocks.
pub fn exports(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            out.push((name.trim().to_owned(), value.join("\n")));
        } else if let Some((name, value)) = line.split_once('=') {
            out.push((name.trim().to_owned(), value.to_owned()));
        }
    }
    out.retain(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    out
}

/// Runs the job's checks `checks` (plan index and check, in order) in its tree: each after the
/// steps before it. Checks already judged (`done`) are not run, their steps are. Stops before
/// the next check when `stop` says the run has stopped. Returns each check's result.
///
/// On the base, a step that fails is skipped and the checks after it are tried without it (each
/// such check's result names it, and one that cannot judge without it could not run here);
/// after the change, the steps the base skipped are skipped again, and one that fails leaves
/// the later checks unable to run — the change's doing, or the machine's ([`cause`]).
pub async fn run_job(
    checks: &[(usize, &CheckSpec)],
    run: &JobRun<'_>,
    done: &dyn Fn(usize) -> bool,
    stop: &dyn Fn(&CheckResult) -> bool,
) -> Vec<(usize, CheckResult)> {
    let places: Vec<&super::spec::JobPlace> =
        checks.iter().filter_map(|(_, c)| c.job.as_ref()).collect();
    let extra: Vec<String> = places.first().map(|j| j.path.clone()).unwrap_or_default();
    let needs = python::needs(places.iter().flat_map(|j| j.before.iter()));
    let mut job = match Job::new(run.tree, run.workdir, &extra, needs) {
        Ok(job) => job,
        Err(e) => {
            let why = format!("the job has no folder of its own: {e}");
            return checks
                .iter()
                .map(|(i, c)| (*i, cannot(c, &why, None)))
                .collect();
        }
    };
    job.ready(run.env).await;
    // The same environment on both sides: what the base skipped, the change skips.
    let skip: Vec<String> = run.base.map_or_else(Vec::new, |base| {
        checks
            .iter()
            .flat_map(|(_, c)| base.skipped_steps(&c.name).iter().cloned())
            .collect()
    });
    let mut out = Vec::new();
    let mut failed_here: Vec<StepFailure> = Vec::new();
    let mut broken: Option<StepFailure> = None;
    let mut stopped = false;
    for (i, spec) in checks {
        if stopped {
            out.push((*i, super::run::skipped(spec)));
            continue;
        }
        if let Some(b) = &broken {
            let result = cannot(spec, &b.unready.message, b.machine.as_deref());
            run.watch.finished(&result);
            out.push((*i, result));
            continue;
        }
        let steps = spec
            .job
            .as_ref()
            .map(|j| j.before.as_slice())
            .unwrap_or(&[]);
        let on_base = run.base.is_none();
        let failures = run_steps(&mut job, steps, run, &skip, on_base).await;
        if !on_base {
            if let Some(f) = failures.into_iter().next() {
                // Said as it happens: which step, how it ended, what it printed.
                let result = cannot(spec, &f.unready.message, f.machine.as_deref());
                run.watch.finished(&result);
                out.push((*i, result));
                broken = Some(f);
                continue;
            }
        } else {
            failed_here.extend(failures);
        }
        if done(*i) {
            continue;
        }
        let result = run_one(&mut job, spec, run, |result| {
            if on_base && !failed_here.is_empty() {
                without_steps(result, &failed_here);
            } else if !skip.is_empty() {
                result.trace.skipped_steps = skip.clone();
            }
        })
        .await;
        stopped = stop(&result);
        out.push((*i, result));
    }
    out
}

/// A job's step that failed: how, and why the machine made it fail, when it did.
struct StepFailure {
    label: String,
    unready: Unready,
    machine: Option<String>,
}

/// A check run on the base after steps of its job failed and were skipped (`failed`): where it
/// judges without them, it does, saying so; where it does not, it could not run here.
fn without_steps(result: &mut CheckResult, failed: &[StepFailure]) {
    result.trace.skipped_steps = failed.iter().map(|f| f.label.clone()).collect();
    let names = failed
        .iter()
        .map(|f| format!("`{}` ({})", f.label, f.unready.how))
        .collect::<Vec<_>>()
        .join(", ");
    // Without a step of its job, a test check must name or count a passing test to judge: a
    // pass that tested nothing (every test skipped without the build) proves nothing.
    let judges = super::baseline::judges(result)
        && (result.kind == super::tools::CheckKind::Quality
            || result
                .measure
                .tests
                .as_ref()
                .is_some_and(|t| t.passed_count > 0 || !t.passed.is_empty()));
    if judges {
        let note = format!(
            "its job's step(s) {names} failed on this machine and were skipped: it runs without them, on the base and after the change"
        );
        result.hint = Some(match result.hint.take() {
            Some(h) => format!("{h}; {note}"),
            None => note,
        });
        return;
    }
    let said = failed
        .iter()
        .map(|f| f.unready.message.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    result.status = CheckStatus::Unavailable;
    result.hint = Some(format!(
        "could not run here: its job's step(s) {names} failed on this machine, and it does not run without them"
    ));
    result.output_tail = format!(
        "{said}\n--- the check, run without them ---\n{}",
        result.output_tail
    );
    result.measure = Default::default();
}

/// Runs one of the job's checks in its tree, with the job's variables, and — failing for the
/// change — its failing tests again alone; `trace` says how the job got it there before the
/// watcher is told.
async fn run_one(
    job: &mut Job,
    spec: &CheckSpec,
    run: &JobRun<'_>,
    trace: impl FnOnce(&mut CheckResult),
) -> CheckResult {
    let env = job.env_of_step(run.env);
    let view = run.watch.started(&spec.name, &spec.command);
    let mut result = run_check(spec, run.tree, run.timeout, &env).await;
    if let Some(base) = run.base {
        super::rerun::settle(spec, &mut result, base, run.tree, run.timeout, &env).await;
    }
    trace(&mut result);
    drop(view);
    run.watch.finished(&result);
    job.read_exports();
    result
}

/// Runs `steps` in order, but those named in `skip`. With `keep_going` (the base) a step that
/// fails is recorded and the next one runs; without, the first that fails stops them. Returns
/// the steps that failed.
async fn run_steps(
    job: &mut Job,
    steps: &[JobStep],
    run: &JobRun<'_>,
    skip: &[String],
    keep_going: bool,
) -> Vec<StepFailure> {
    let mut failed = Vec::new();
    for step in steps.iter().filter(|s| !skip.contains(&s.label)) {
        if let Err(f) = run_step(job, step, run).await {
            failed.push(f);
            if !keep_going {
                break;
            }
        }
    }
    failed
}

/// Runs one step in the job's tree: a step that installs as a setup does (on the base, into
/// the user's caches; after the change, into the job's own), any other as a check. On failure,
/// how it ended and what it said, and whether the machine stopped it.
async fn run_step(
    job: &mut Job,
    step: &JobStep,
    run: &JobRun<'_>,
) -> Result<std::time::Duration, StepFailure> {
    let env = job.env_of_step(run.env);
    let writable = job.writable();
    let writable: Vec<&Path> = writable.iter().map(|p| p.as_path()).collect();
    let kind = match (step.installs, run.base) {
        (false, _) => Kind::Check,
        (true, None) => Kind::Setup,
        (true, Some(_)) => Kind::Rebuild,
    };
    let mut cmd = super::confined::shell(&step.command, run.tree, kind, &env, &writable)
        .label(step_label(step))
        .timeout(run.timeout)
        .max_output(1 << 20);
    if step.installs {
        cmd = cmd.hosts(super::environment::registries_for(
            &step.command,
            &super::project::Project::read(run.tree),
        ));
        if run.base.is_some() {
            // After the change: the package managers' caches are the job's own.
            let caches = job.scratch.path().join("caches");
            for (var, value) in super::environment::private_caches(&caches) {
                cmd = cmd.env(var, value);
            }
        }
    }
    let failure = |unready: Unready, machine: Option<String>| StepFailure {
        label: step.label.clone(),
        unready,
        machine,
    };
    let out = process::run(&cmd).await.map_err(|e| {
        failure(
            Unready::not_started(
                format!("could not start: {e}"),
                format!("the job's step `{}` could not start: {e}", step.label),
            ),
            None,
        )
    })?;
    job.read_exports();
    if out.success() {
        return Ok(out.duration);
    }
    let how = super::environment::ending(&out, run.timeout);
    let said = super::tools::explain(&Default::default(), &out.stdout, &out.stderr);
    let refused = process::egress::refused_to(&step_label(step));
    let machine = cause::not_the_changes(
        &step.command,
        &format!("{}\n{}", out.stdout, out.stderr),
        refused.as_deref(),
    );
    let message = format!(
        "the job's step `{}` failed ({how}) before it, so it could not run:\n{said}{}",
        step.label,
        refused.map(|r| format!("\n{r}")).unwrap_or_default()
    );
    Err(failure(Unready { how, said, message }, machine))
}

/// How the sandbox's refusals name a job's step: `step <label>`.
pub fn step_label(step: &JobStep) -> String {
    format!("step {}", step.label)
}

/// One of a job's steps as [`run_steps_alone`] ran it.
#[derive(Debug)]
pub struct StepRun {
    pub step: JobStep,
    pub took: std::time::Duration,
    /// How it failed, when it did.
    pub ended: Result<(), Unready>,
}

/// Runs `steps` — what a job does before its first check — in a job of its own in `tree` (a
/// copy of the checkout `workdir`), on the base, with `path` first on `PATH`, as the baseline's
/// checks run them; the first that fails stops them. For `ralph doctor`, which runs the
/// preparation without the checks.
pub async fn run_steps_alone(
    (tree, workdir): (&Path, &Path),
    path: &[String],
    steps: &[JobStep],
    timeout: std::time::Duration,
    env: &[(String, String)],
) -> Vec<StepRun> {
    let run = JobRun {
        tree,
        workdir,
        timeout,
        env,
        base: None,
        watch: &super::run::Unwatched,
    };
    let mut job = match Job::new(tree, workdir, path, python::needs(steps)) {
        Ok(job) => job,
        Err(e) => {
            return steps
                .iter()
                .take(1)
                .map(|step| StepRun {
                    step: step.clone(),
                    took: std::time::Duration::ZERO,
                    ended: Err(Unready::not_started(
                        format!("the job has no folder of its own: {e}"),
                        format!("the job has no folder of its own: {e}"),
                    )),
                })
                .collect()
        }
    };
    job.ready(env).await;
    let mut out = Vec::new();
    for step in steps {
        let started = std::time::Instant::now();
        let ended = run_step(&mut job, step, &run)
            .await
            .map(|_| ())
            .map_err(|f| f.unready);
        let failed = ended.is_err();
        out.push(StepRun {
            step: step.clone(),
            took: started.elapsed(),
            ended,
        });
        if failed {
            break;
        }
    }
    out
}

/// The result of a check the job could not run to: an earlier step failed (`why`) — the
/// change's doing, or where `machine` says why, the machine's: unknown, held against nobody.
fn cannot(spec: &CheckSpec, why: &str, machine: Option<&str>) -> CheckResult {
    let first = why.lines().next().unwrap_or(why).trim_end_matches(':');
    let mut result = CheckResult {
        status: CheckStatus::Failed,
        output_tail: why.lines().skip(1).collect::<Vec<_>>().join("\n"),
        hint: Some(first.to_owned()),
        ..super::run::skipped(spec)
    };
    if let Some(machine) = machine {
        result.status = CheckStatus::Unavailable;
        result.hint = Some(format!(
            "{first}: {machine} — the machine's doing, not the change's"
        ));
        result.trace.machine = Some(format!("{first}: {machine}"));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(label: &str, command: &str) -> JobStep {
        JobStep {
            label: label.into(),
            command: command.into(),
            installs: false,
        }
    }

    /// `steps` run alone in `tree`, with nothing on `PATH` first and no variables of the plan's.
    async fn alone(tree: &Path, steps: &[JobStep]) -> Vec<StepRun> {
        run_steps_alone(
            (tree, tree),
            &[],
            steps,
            std::time::Duration::from_secs(20),
            &[],
        )
        .await
    }

    #[tokio::test]
    async fn steps_run_alone_in_order_with_what_earlier_ones_exported_until_one_fails() {
        let tree = tempfile::tempdir().unwrap();
        let steps = [
            step("export", "echo GREETING=hello >> \"$GITHUB_ENV\""),
            step(
                "use it",
                "test \"$GREETING\" = hello && echo \"$GREETING\" > seen.txt",
            ),
            // npm's user configuration is the job's own, empty, and writable.
            step(
                "npm config",
                "test -f \"$npm_config_userconfig\" && test ! -s \"$npm_config_userconfig\" && case \"$npm_config_userconfig\" in \"$RALPH_JOB_DIR\"/*) echo x > \"$npm_config_userconfig\";; *) exit 9;; esac",
            ),
            step("fail", "echo 'cannot fetch fixtures' >&2; exit 5"),
            step("never", "touch never.txt"),
        ];
        let ran = alone(tree.path(), &steps).await;
        assert_eq!(ran.len(), 4, "{ran:?}");
        assert!(ran[..3].iter().all(|r| r.ended.is_ok()), "{ran:?}");
        let failed = ran[3].ended.as_ref().unwrap_err();
        assert_eq!(failed.how, "exit 5");
        assert!(failed.said.contains("cannot fetch fixtures"), "{failed:?}");
        assert!(
            failed
                .message
                .starts_with("the job's step `fail` failed (exit 5) before it"),
            "{}",
            failed.message
        );
        assert_eq!(
            std::fs::read_to_string(tree.path().join("seen.txt")).unwrap(),
            "hello\n"
        );
        assert!(!tree.path().join("never.txt").exists());
        assert_eq!(step_label(&ran[3].step), "step fail");
    }

    #[test]
    fn a_steps_exports_are_read_as_a_runner_reads_them() {
        let text = "A=1\nMULTI<<EOF\nline one\nline two\nEOF\nB = two=2\nnot an export\n=x\n";
        assert_eq!(
            exports(text),
            [
                ("A".to_owned(), "1".to_owned()),
                ("MULTI".to_owned(), "line one\nline two".to_owned()),
                ("B".to_owned(), " two=2".to_owned()),
            ]
        );
    }

    #[tokio::test]
    async fn a_step_cannot_lead_the_next_steps_files_elsewhere_by_a_link() {
        let tree = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("env"), "precious\n").unwrap();
        // The job's folder is RUNNER_TEMP's parent: step 1 plants `step-2` as a link.
        let plant = format!(
            "ln -s {} \"$RUNNER_TEMP/../step-2\"",
            elsewhere.path().display()
        );
        let steps = [
            step("plant", &plant),
            step("next", "echo X=1 >> \"$GITHUB_ENV\" || true"),
        ];
        let ran = alone(tree.path(), &steps).await;
        assert!(ran[0].ended.is_ok(), "{ran:?}");
        assert_eq!(
            std::fs::read_to_string(elsewhere.path().join("env")).unwrap(),
            "precious\n",
            "ralph wrote through the link"
        );
        assert!(!elsewhere.path().join("path").exists());
    }
}
