//! A job's `run:` steps read, in order, into the checks and notes of [`Ci`](super::Ci), under one
//! matrix combination: which steps run here, the check each test or quality step becomes — a
//! step of its job ([`JobPlace`]), after the job's steps before it (installs, builds, code
//! generation), which run first in the job's own tree — and why a step is left out (a system
//! install, a secret, a value only a workflow run has).

use super::{check_name, classify, command, expand, expr, provides, runs_on_linux};
use super::{string_map, Ci, StepKind};
use crate::checks::spec::{CheckSpec, JobPlace, JobStep};
use std::collections::BTreeMap;
use yaml_rust2::Yaml;

/// A job of a workflow file as its steps are read: where it is, and its working directory.
pub(super) struct Job<'a> {
    pub(super) file: &'a str,
    pub(super) id: &'a str,
    pub(super) yaml: &'a Yaml,
    /// The job's default working directory (its own, else the workflow's).
    pub(super) dir: Option<String>,
    pub(super) dir_exists: &'a dyn Fn(&str) -> bool,
    /// The job runs here as several matrix combinations.
    pub(super) matrix: bool,
    /// The event its run stands for (`pull_request`, `push`).
    pub(super) event: &'static str,
}

/// Whether `job` runs here under one matrix combination: `Ok(false)` where its `if:` does not
/// hold (as on a runner), `Err` with why where this machine cannot be that instance (another
/// OS, an interpreter not here) or its `if:` cannot be decided.
pub(super) fn runs_here(
    job: &Job,
    combo: &BTreeMap<String, String>,
    wf_env: &BTreeMap<String, String>,
) -> Result<bool, String> {
    let env = string_map(&job.yaml["env"], combo, wf_env, job.event);
    let cx = expr::Context {
        matrix: combo,
        env: &env,
        event: job.event,
    };
    let linux =
        runs_on_linux(job.yaml, &cx).map_err(|why| format!("its runner cannot be told: {why}"))?;
    if !linux {
        return Err("it runs on another OS".into());
    }
    if let Some(cond) = job.yaml["if"].as_str() {
        let holds = expr::condition(cond, &cx)
            .map_err(|what| format!("its condition `{}` needs {what}", cond.trim()))?;
        if !holds {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Reads the steps of `job` under one matrix combination (one that [`runs_here`]) into `ci`,
/// with `path` (the interpreter it names) first on `PATH`.
pub(super) fn read_combination(
    job: &Job,
    combo: &BTreeMap<String, String>,
    path: Vec<String>,
    wf_env: &BTreeMap<String, String>,
    ci: &mut Ci,
) {
    let env = string_map(&job.yaml["env"], combo, wf_env, job.event);
    let Some(steps) = job.yaml["steps"].as_vec() else {
        return;
    };
    let mut sequence = Sequence {
        instance: instance(job, combo),
        pending: Vec::new(),
        path,
        trailing_build: None,
        steps_read: 0,
    };
    for (i, step) in steps.iter().enumerate() {
        read_step(job, combo, &env, i, step, &mut sequence, ci);
    }
    // A build no check follows is the job's check: whether it builds is what the job says.
    if let Some(build) = sequence.trailing_build.take() {
        sequence.pending.truncate(build.at);
        let step = &steps[build.step];
        add_check(
            job,
            combo,
            step,
            &build.label,
            crate::checks::tools::CheckKind::Quality,
            &build.expanded,
            build.dir,
            build.command,
            Made::default(),
            &mut sequence,
            ci,
        );
    }
}

/// A check's step made ready to run here: warnings allowed (before anything is split off, so a
/// configure allows them too); the installs it starts with (`npm ci` then `npm run tsc`) made a
/// step before it, with the setup's network; an env-building runner (tox, nox) building its
/// environments among the steps before, with the network, and then running offline — however
/// the step wraps it.
fn made_check(
    label: &str,
    script: &mut String,
    dir: Option<&str>,
    env: &mut BTreeMap<String, String>,
    sequence: &mut Sequence,
) -> Made {
    let kind = classify(script);
    let relaxed = relax(kind, script, env);
    let mut whole = None;
    if let Some((install, rest)) = installs_first(script) {
        if sequence.pending.is_empty() && dir.is_none() {
            whole = Some(script.clone());
        }
        sequence.pending.push(JobStep {
            label: format!("{label} (its installs)"),
            command: command(&install, dir, env),
            installs: true,
        });
        *script = rest;
    }
    let environments = crate::checks::tools::offline(script).map(|(build, offline)| {
        *script = offline;
        command(&build, dir, env)
    });
    Made {
        relaxed,
        environments,
        whole,
    }
}

/// What ralph made of a check's step: what it took off to allow warnings, and the command
/// that builds its runner's environments first.
#[derive(Default)]
struct Made {
    relaxed: Option<String>,
    environments: Option<String>,
    /// The step's script before its own installs were taken out, when nothing else runs
    /// before it: what the step runs, as a whole, for telling its checks from the plan's.
    whole: Option<String>,
}

/// A build step since the job's last check: where it is among the steps pending, and what it
/// runs.
struct Build {
    at: usize,
    step: usize,
    label: String,
    expanded: String,
    dir: Option<String>,
    command: String,
}

/// A job instance's steps as they are read: what runs before its next check.
struct Sequence {
    instance: String,
    /// The steps since the job's last check.
    pending: Vec<JobStep>,
    /// The interpreter its matrix names, where this machine has it.
    path: Vec<String>,
    /// The last build among the steps pending.
    trailing_build: Option<Build>,
    /// How many of its `run:` steps that run here were read.
    steps_read: usize,
}

/// `<file>#<job>` and the combination's values: one instance of a job.
fn instance(job: &Job, combo: &BTreeMap<String, String>) -> String {
    let values: Vec<String> = combo
        .iter()
        .filter(|(k, _)| !k.starts_with("inputs."))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{}#{}[{}]", job.file, job.id, values.join(","))
}

/// The step's name, else its command's first line: what a maintainer would call it.
fn label_of(step: &Yaml, i: usize, cx: &expr::Context) -> String {
    step["name"]
        .as_str()
        .map(|n| expand(n, cx).unwrap_or_else(|_| n.to_owned()))
        .or_else(|| {
            let first = step["run"]
                .as_str()?
                .lines()
                .find(|l| !l.trim().is_empty())?;
            let first = expand(first, cx).unwrap_or_else(|_| first.to_owned());
            Some(first.trim().chars().take(60).collect())
        })
        .unwrap_or_else(|| format!("step {}", i + 1))
}

/// Reads one step (the `i`-th, 0-based) into the job's sequence: a check (after the steps
/// pending), a step that prepares, or a note on why it is left out or what its action would
/// provide.
fn read_step(
    job: &Job,
    combo: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
    i: usize,
    step: &Yaml,
    sequence: &mut Sequence,
    ci: &mut Ci,
) {
    let Job { file, id, .. } = *job;
    let cx = expr::Context {
        matrix: combo,
        env,
        event: job.event,
    };
    let label = label_of(step, i, &cx);
    if let Some(uses) = step["uses"].as_str() {
        let provides = provides(uses);
        let note = format!("{file}, job `{id}`: `{uses}` is not run{provides}");
        if !provides.is_empty() && !ci.notes.contains(&note) {
            ci.notes.push(note);
        }
        return;
    }
    let Some(script) = step["run"].as_str() else {
        return;
    };
    let Some((mut expanded, dir, mut env)) = runnable(job, combo, env, &label, step, script, ci)
    else {
        return;
    };
    let first = sequence.steps_read == 0;
    sequence.steps_read += 1;
    let noted = classify(script) != StepKind::Other;
    if !dir_is_there(job, &label, dir.as_deref(), first, noted, ci) {
        return;
    }
    let kind = classify(&expanded);
    let made = match kind {
        StepKind::Check(_) => made_check(&label, &mut expanded, dir.as_deref(), &mut env, sequence),
        _ => Made::default(),
    };
    let command = command(&expanded, dir.as_deref(), &env);
    match kind {
        StepKind::Check(kind) => add_check(
            job, combo, step, &label, kind, &expanded, dir, command, made, sequence, ci,
        ),
        StepKind::Setup | StepKind::Other if system_install(&expanded) => {
            let note = format!(
                "{file}, job `{id}`, `{label}`: left out, it installs into the system (what it installs must be on this machine)"
            );
            if !ci.notes.contains(&note) {
                ci.notes.push(note);
            }
        }
        StepKind::Setup => sequence.pending.push(JobStep {
            label,
            command,
            installs: true,
        }),
        StepKind::Build => {
            sequence.trailing_build = Some(Build {
                at: sequence.pending.len(),
                step: i,
                label: label.clone(),
                expanded: expanded.clone(),
                dir,
                command: command.clone(),
            });
            sequence.pending.push(JobStep {
                label,
                command,
                installs: false,
            })
        }
        StepKind::Other => sequence.pending.push(JobStep {
            label,
            command,
            installs: false,
        }),
    }
}

/// The installs a check's script starts with, and the rest: its first lines (or `&&` links)
/// while each only installs. `None` when it does not start so, or when its text is more than
/// plain commands (quotes, continuations, groupings, control flow) that can be cut safely.
fn installs_first(script: &str) -> Option<(String, String)> {
    let plain = |s: &str| {
        !s.contains(['\'', '"', '\\', '(', ')', '{', '}', '`', ';', '|'])
            && !s.split_whitespace().any(|w| {
                matches!(
                    w,
                    "if" | "then" | "else" | "fi" | "for" | "while" | "do" | "done" | "case"
                )
            })
    };
    if !plain(script) {
        return None;
    }
    let parts: Vec<&str> = script
        .lines()
        .flat_map(|l| l.split("&&"))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let n = parts
        .iter()
        .take_while(|p| classify(p) == StepKind::Setup)
        .count();
    (n > 0 && n < parts.len()).then(|| (parts[..n].join(" && "), parts[n..].join("\n")))
}

/// A test step runs for its tests with warnings allowed (its warnings judged by rule): what was
/// taken off its script and variables, if anything.
fn relax(
    kind: StepKind,
    script: &mut String,
    env: &mut BTreeMap<String, String>,
) -> Option<String> {
    if kind != StepKind::Check(crate::checks::tools::CheckKind::Test) {
        return None;
    }
    let (relaxed, off) = crate::checks::warnings::allow(script, env)?;
    *script = relaxed;
    Some(off)
}

/// The check a test or quality step becomes: a step of its job instance, after the steps
/// pending — an env-building runner (tox, nox) building its environments among them, with the
/// network, and then running offline.
#[allow(clippy::too_many_arguments)]
fn add_check(
    job: &Job,
    combo: &BTreeMap<String, String>,
    step: &Yaml,
    label: &str,
    kind: crate::checks::tools::CheckKind,
    expanded: &str,
    dir: Option<String>,
    command: String,
    made: Made,
    sequence: &mut Sequence,
    ci: &mut Ci,
) {
    // The same command in the same place after the same steps is one check (a matrix key no
    // step reads); after other steps (another compiler configured) it is another. A quality
    // check is one whatever interpreter the combination puts first: a lint runs once, not once
    // per instance.
    let pending: Vec<&str> = sequence
        .pending
        .iter()
        .map(|s| s.command.as_str())
        .collect();
    let same = |c: &CheckSpec| {
        c.command == command
            && c.job.as_ref().is_none_or(|j| {
                (j.path == sequence.path || kind == crate::checks::tools::CheckKind::Quality)
                    && j.before
                        .iter()
                        .map(|s| s.command.as_str())
                        .eq(pending.iter().copied())
            })
    };
    if ci.checks.iter().any(same) {
        // This instance's steps so far are that check's: nothing of them is left to run.
        sequence.pending.clear();
        sequence.trailing_build = None;
        return;
    }
    if let Some(build) = made.environments {
        sequence.pending.push(JobStep {
            label: format!("{label} (its environments)"),
            command: build,
            installs: true,
        });
    }
    // Named by the matrix values its own step, the job's variables and the `run:` steps before
    // it read (another compiler configured is another check), never by one only an action reads.
    let mut used: Vec<&Yaml> = vec![step, &job.yaml["env"]];
    if let Some(steps) = job.yaml["steps"].as_vec() {
        used.extend(
            steps
                .iter()
                .take_while(|s| !std::ptr::eq(*s, step))
                .filter(|s| s["uses"].is_badvalue()),
        );
    }
    let mut name = check_name(job.id, label, &used_keys(combo, &used));
    if ci.checks.iter().any(|c| c.name == name) {
        // Two instances told apart only by what an action reads (`python-version`).
        name = check_name(job.id, label, combo);
    }
    let mut spec = CheckSpec::new(&name, &command).because(&check_reason(job, label, combo));
    spec.kind = kind;
    let before = std::mem::take(&mut sequence.pending);
    sequence.trailing_build = None;
    if before.is_empty() && dir.is_none() {
        ci.scripts
            .insert(spec.name.clone(), expanded.trim().to_owned());
    } else if let Some(whole) = &made.whole {
        ci.scripts
            .insert(spec.name.clone(), whole.trim().to_owned());
    }
    spec.relaxed = made.relaxed;
    spec.job = Some(JobPlace {
        instance: sequence.instance.clone(),
        job: format!("{}#{}", job.file, job.id),
        before,
        path: sequence.path.clone(),
    });
    ci.checks.push(spec);
}

/// Whether a setup step installs into the system (root, a system package manager, a piped
/// installer script): left out — what it installs must already be here.
fn system_install(script: &str) -> bool {
    const SYSTEM: [&str; 11] = [
        "sudo", "apt-get", "apt", "brew", "choco", "winget", "snap", "dnf", "yum", "pacman",
        "rustup",
    ];
    let piped = script.contains("| sh") || script.contains("| bash") || script.contains("|sh");
    piped
        || crate::checks::tools::simple_commands(script)
            .iter()
            .any(|w| {
                w.first()
                    .is_some_and(|p| SYSTEM.contains(&p.rsplit('/').next().unwrap_or(p)))
                    // Playwright's browsers with their system libraries: `apt-get` as root.
                    || w.iter().any(|a| a == "playwright")
                        && w.iter().any(|a| a == "--with-deps" || a == "install-deps")
            })
}

/// A `run:` step as it would run here: its script with the expressions put in, its working
/// directory and its environment. `None` where it does not run here — its `if:` fails or needs
/// a secret, its `env` needs a secret, an expression only a workflow run has, or a working
/// directory not in the repository — with a note in `ci` on why when the step checks or
/// installs.
fn runnable(
    job: &Job,
    combo: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
    label: &str,
    step: &Yaml,
    script: &str,
    ci: &mut Ci,
) -> Option<(String, Option<String>, BTreeMap<String, String>)> {
    let Job { file, id, .. } = *job;
    // What a step that neither checks nor installs (a publish, an upload) needs is not worth a
    // note.
    let noted = classify(script) != StepKind::Other;
    let needs_secret = step["env"].as_hash().is_some_and(|h| {
        h.values()
            .any(|v| v.as_str().is_some_and(|s| s.contains("secrets.")))
    });
    let env = string_map(&step["env"], combo, env, job.event);
    let cx = expr::Context {
        matrix: combo,
        env: &env,
        event: job.event,
    };
    if let Some(cond) = step["if"].as_str() {
        match expr::condition(cond, &cx) {
            Ok(true) => {}
            Ok(false) => return None,
            // Not run blind: named, so the plan says what it leaves out.
            Err(what) => {
                let note = format!(
                    "{file}, job `{id}`, `{label}`: left out, its condition `{}` cannot be decided here (it needs {what})",
                    cond.trim()
                );
                if !ci.notes.contains(&note) {
                    ci.notes.push(note);
                }
                return None;
            }
        }
    }
    if needs_secret {
        if noted {
            ci.notes.push(format!(
                "{file}, job `{id}`, `{label}`: left out, it needs a secret"
            ));
        }
        return None;
    }
    let expanded = match expand(script, &cx) {
        Ok(s) => s,
        Err(why) => {
            let note = format!("{file}, job `{id}`, `{label}`: left out, {why}");
            if noted && !ci.notes.contains(&note) {
                ci.notes.push(note);
            }
            return None;
        }
    };
    // `${{ github.workspace }}/sub` is the checkout's `sub`.
    let dir = step["working-directory"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| job.dir.clone())
        .map(|d| expand(&d, &cx).unwrap_or(d))
        .map(|d| match d.strip_prefix("$GITHUB_WORKSPACE") {
            Some(rest) => rest.trim_start_matches('/').to_owned(),
            None => d,
        })
        .filter(|d| !d.is_empty());
    Some((expanded, dir, env))
}

/// Whether a step's working directory `dir` is there for it: in the repository, or possibly
/// made by the job's steps before it (`mkdir -p build/test`, a configure's build folder) — a
/// first step's that the repository lacks is left out, with a note when the step checks or
/// installs.
fn dir_is_there(
    job: &Job,
    label: &str,
    dir: Option<&str>,
    first: bool,
    noted: bool,
    ci: &mut Ci,
) -> bool {
    let Some(d) = dir.filter(|d| !(job.dir_exists)(d)) else {
        return true;
    };
    if !first {
        return true;
    }
    let note = format!(
        "{}, job `{}`, `{label}`: left out, its working directory `{d}` is not in the repository",
        job.file, job.id
    );
    if noted && !ci.notes.contains(&note) {
        ci.notes.push(note);
    }
    false
}

/// The keys of `combo` that the YAML of `used` refers to (`${{ matrix.k }}`): a check is named
/// by the values that make it what it is, not by a `python-version` only a `uses:` step reads.
fn used_keys(combo: &BTreeMap<String, String>, used: &[&Yaml]) -> BTreeMap<String, String> {
    fn text(y: &Yaml, out: &mut String) {
        match y {
            Yaml::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Yaml::Array(a) => a.iter().for_each(|e| text(e, out)),
            Yaml::Hash(h) => h.values().for_each(|e| text(e, out)),
            _ => {}
        }
    }
    let mut all = String::new();
    used.iter().for_each(|y| text(y, &mut all));
    let all: String = all.split_whitespace().collect();
    // `matrix.py` is not `matrix.python`: the key ends where a name's characters do.
    let refers = |k: &str| {
        let needle = format!("matrix.{k}");
        all.match_indices(&needle).any(|(at, _)| {
            !all[at + needle.len()..]
                .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
    };
    combo
        .iter()
        .filter(|(k, _)| refers(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Where a CI check comes from, for its reason: the file, the job, the step and the matrix
/// combination.
fn check_reason(job: &Job, label: &str, combo: &BTreeMap<String, String>) -> String {
    let combo_words: Vec<String> = combo
        .iter()
        .filter(|(k, _)| !k.starts_with("inputs."))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "{}, job `{}`, `{label}`{}",
        job.file,
        job.id,
        if combo_words.is_empty() {
            String::new()
        } else {
            format!(" (matrix {})", combo_words.join(", "))
        }
    )
}
