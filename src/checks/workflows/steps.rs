//! A job's `run:` steps read into the checks, setup steps and notes of [`Ci`](super::Ci), under
//! one matrix combination: which steps run here, the check each test or quality step becomes
//! (after the job's earlier plain steps), the setup line of each install, and why a step is
//! left out.

use super::{check_name, classify, command, condition_holds, expand, provides, runs_on_linux};
use super::{string_map, Ci, StepKind};
use crate::checks::CheckSpec;
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
}

/// Whether `job` runs here under one matrix combination: on Linux, and its `if:` holds.
pub(super) fn runs_here(
    job: &Job,
    combo: &BTreeMap<String, String>,
    wf_env: &BTreeMap<String, String>,
) -> bool {
    let env = string_map(&job.yaml["env"], combo, wf_env);
    runs_on_linux(job.yaml, combo, &env)
        && job.yaml["if"]
            .as_str()
            .is_none_or(|cond| condition_holds(cond, combo))
}

/// Reads the steps of `job` under one matrix combination (one that [`runs_here`]) into `ci`.
pub(super) fn read_combination(
    job: &Job,
    combo: &BTreeMap<String, String>,
    wf_env: &BTreeMap<String, String>,
    ci: &mut Ci,
) {
    let env = string_map(&job.yaml["env"], combo, wf_env);
    let Some(steps) = job.yaml["steps"].as_vec() else {
        return;
    };
    // The steps before a check that neither check nor install (building an sdist the test
    // then unpacks): the check runs after them, as in the job.
    let mut prelude: Vec<String> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        read_step(job, combo, &env, i, step, &mut prelude, ci);
    }
}

/// Reads one step (the `i`-th, 0-based) into `ci`: a check (run after `prelude`), a setup
/// line, a step added to `prelude`, or a note on why it is left out or what its action would
/// provide.
fn read_step(
    job: &Job,
    combo: &BTreeMap<String, String>,
    env: &BTreeMap<String, String>,
    i: usize,
    step: &Yaml,
    prelude: &mut Vec<String>,
    ci: &mut Ci,
) {
    let Job { file, id, .. } = *job;
    // The step's name, else its command's first line: what a maintainer would call it.
    let label = step["name"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            let first = step["run"]
                .as_str()?
                .lines()
                .find(|l| !l.trim().is_empty())?;
            let first = expand(first, combo, env).unwrap_or_else(|_| first.to_owned());
            Some(first.trim().chars().take(60).collect())
        })
        .unwrap_or_else(|| format!("step {}", i + 1));
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
    let Some((expanded, dir, env)) = runnable(job, combo, env, &label, step, script, ci) else {
        return;
    };
    match classify(&expanded) {
        StepKind::Check(kind) => {
            let script = if prelude.is_empty() {
                expanded.clone()
            } else {
                format!("{}\n{}", prelude.join("\n"), expanded.trim())
            };
            let command = command(&script, dir.as_deref(), &env);
            if ci.checks.iter().any(|c| c.command == command) {
                return;
            }
            let named = used_keys(combo, &[step, &job.yaml["env"]]);
            let mut spec = CheckSpec::new(&check_name(id, &label, &named), &command)
                .because(&check_reason(job, &label, combo));
            spec.kind = kind;
            spec.matrix_job = job.matrix.then(|| format!("{file}#{id}"));
            if prelude.is_empty() && dir.is_none() {
                ci.scripts
                    .insert(spec.name.clone(), expanded.trim().to_owned());
            }
            ci.checks.push(spec);
        }
        StepKind::Setup => {
            let line = setup_line(&expanded);
            if !ci.setup.contains(&line) {
                ci.setup.push(line);
            }
        }
        StepKind::Other => prelude.push(match &dir {
            Some(d) if job.dir.as_ref() != Some(d) => format!(
                "(cd {} && {})",
                crate::process::shell_quote(d),
                expanded.trim()
            ),
            _ => expanded.trim().to_owned(),
        }),
    }
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
    if let Some(cond) = step["if"].as_str() {
        if cond.contains("secrets.") || !condition_holds(cond, combo) {
            return None;
        }
    }
    let needs_secret = step["env"].as_hash().is_some_and(|h| {
        h.values()
            .any(|v| v.as_str().is_some_and(|s| s.contains("secrets.")))
    });
    let env = string_map(&step["env"], combo, env);
    if needs_secret {
        if noted {
            ci.notes.push(format!(
                "{file}, job `{id}`, `{label}`: left out, it needs a secret"
            ));
        }
        return None;
    }
    let expanded = match expand(script, combo, &env) {
        Ok(s) => s,
        Err(why) => {
            let note = format!("{file}, job `{id}`, `{label}`: left out, {why}");
            if noted && !ci.notes.contains(&note) {
                ci.notes.push(note);
            }
            return None;
        }
    };
    let dir = step["working-directory"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| job.dir.clone());
    if let Some(d) = dir.as_deref().filter(|d| !(job.dir_exists)(d)) {
        let note = format!(
            "{file}, job `{id}`, `{label}`: left out, its working directory `{d}` is not in the repository"
        );
        if noted && !ci.notes.contains(&note) {
            ci.notes.push(note);
        }
        return None;
    }
    Some((expanded, dir, env))
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
    let combo_words: Vec<String> = combo.iter().map(|(k, v)| format!("{k}={v}")).collect();
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

/// A setup script as one line for the note: its commands joined by `; `, its comments left out.
fn setup_line(script: &str) -> String {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("; ")
}
