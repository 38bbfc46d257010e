//! The project's CI as a source of checks: the `run:` steps of the jobs its GitHub Actions
//! workflows run on `push` and `pull_request`, with the job's matrix expanded, its `env` and
//! `working-directory` applied, classified into check steps (tests, lints, type checks, builds),
//! setup steps (installs) and the rest. A step that needs a secret, a service, an OS other than
//! Linux or a value only a workflow run has (`github.*`, `steps.*`) is left out, and so is a
//! step that `uses:` an action — what it would provide (a toolchain, a Python) is said instead.
//! YAML is read with `yaml-rust2` (maintained, no `unsafe` serde layer; `serde_yaml` is not).

use super::spec::CheckSpec;
use std::collections::BTreeMap;
use yaml_rust2::{Yaml, YamlLoader};

mod classify;
mod env_list;
mod expr;
mod interpreters;
mod steps;
use steps::{read_combination, Job};

/// The most checks taken from CI: beyond them a matrix would multiply the verification time.
const MAX_CHECKS: usize = 8;

/// The most combinations of one job that run here, counted after those that cannot (another
/// OS, a failing `if:`) are left out.
const MAX_COMBINATIONS: usize = 16;

/// The most combinations a matrix is expanded to before any is left out: a bound on the work of
/// reading a hostile or enormous matrix, far above any real one's.
const MAX_EXPANDED: usize = 1024;

/// What the workflows say, for the plan and for `ralph doctor`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ci {
    pub checks: Vec<CheckSpec>,
    /// Each check's own step script, by check name, where the check is that script alone (no
    /// working directory, no earlier steps): a detected check running the same command is the
    /// same check.
    pub scripts: BTreeMap<String, String>,
    /// What was left out, and what the `uses:` steps would provide.
    pub notes: Vec<String>,
}

/// What a `run:` step does.
pub use crate::checks::tools::StepKind;

pub use classify::{canonical, checks_in, classify};

/// Branch names a default branch is likely to have: a push filter must let one of them through.
const DEFAULT_BRANCHES: [&str; 5] = ["main", "master", "trunk", "develop", "default"];

/// Whether a branch filter (`branches:`, `branches-ignore:`) lets a push to the default branch
/// or a pull request into it through. `$default-branch` is a template's placeholder: it matches
/// nothing on a real workflow.
fn lets_default_through(filter: &Yaml) -> bool {
    let matches = |list: &Yaml| {
        list.as_vec().is_some_and(|l| {
            l.iter()
                .filter_map(Yaml::as_str)
                .any(|pattern| DEFAULT_BRANCHES.iter().any(|b| glob_matches(pattern, b)))
        }) || list
            .as_str()
            .is_some_and(|p| DEFAULT_BRANCHES.iter().any(|b| glob_matches(p, b)))
    };
    let only = &filter["branches"];
    let ignored = &filter["branches-ignore"];
    let tags_only = only.is_badvalue() && !filter["tags"].is_badvalue();
    let allowed = only.is_badvalue() || matches(only);
    let refused = !ignored.is_badvalue() && matches(ignored);
    allowed && !refused && !tags_only
}

/// Whether a branch filter's `pattern` (`*`, `**`, `release/*`, `main`) matches `name`.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if pattern.starts_with('!') {
        return false;
    }
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            let tail = tail.trim_start_matches('*');
            name.starts_with(head)
                && name.len() >= head.len() + tail.len()
                && name.ends_with(tail)
                && !name[head.len()..name.len() - tail.len()].contains('/')
                || pattern.contains("**") && name.starts_with(head) && name.ends_with(tail)
        }
    }
}

/// Whether the workflow runs on a pull request or a push to the default branch (a
/// `pull_request` trigger limited to `types` such as `labeled` does not run on a pull request's
/// commits; a push limited to tags or to other branches does not run on the default branch); when
/// not, why, for the note.
fn on_push_or_pr(wf: &Yaml) -> Result<(), String> {
    let on = &wf["on"];
    let is = |s: &str| s == "push" || s == "pull_request";
    let runs = match on {
        Yaml::String(s) => is(s),
        Yaml::Array(a) => a.iter().any(|e| e.as_str().is_some_and(is)),
        Yaml::Hash(h) => h.iter().any(|(k, v)| match k.as_str() {
            Some("push") => v.is_null() || lets_default_through(v),
            Some("pull_request") => {
                let types = v["types"].as_vec().is_none_or(|types| {
                    types
                        .iter()
                        .any(|t| matches!(t.as_str(), Some("opened" | "synchronize" | "reopened")))
                });
                types && (v.is_null() || lets_default_through(v))
            }
            _ => false,
        }),
        _ => false,
    };
    if runs {
        return Ok(());
    }
    let triggers: Vec<String> = match on {
        Yaml::String(s) => vec![s.clone()],
        Yaml::Array(a) => a
            .iter()
            .filter_map(|e| e.as_str().map(str::to_owned))
            .collect(),
        Yaml::Hash(h) => h
            .keys()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    Err(if triggers.is_empty() {
        "it has no trigger".to_owned()
    } else if triggers.iter().any(|t| is(t)) {
        "its push and pull request triggers never fire for the default branch (a branch or tag filter, a template's `$default-branch`, or only some pull request events)".to_owned()
    } else {
        format!("it runs only on {}", triggers.join(", "))
    })
}

/// The other repository a job checks out (`actions/checkout` with `repository:`): its steps
/// test that project, not this one.
fn other_repository(job: &Yaml) -> Option<String> {
    job["steps"].as_vec()?.iter().find_map(|step| {
        let uses = step["uses"].as_str()?;
        if uses.split('@').next() != Some("actions/checkout") {
            return None;
        }
        let repo = step["with"]["repository"].as_str()?;
        (!repo.contains("github.repository")).then(|| repo.to_owned())
    })
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Real(r) => Some(r.clone()),
        Yaml::Boolean(b) => Some(b.to_string()),
        // `features:` with nothing after it: the empty value, as a workflow run reads it.
        Yaml::Null => Some(String::new()),
        _ => None,
    }
}

/// The matrix's combinations (`include` entries added), each a map of key to value.
fn combinations(strategy: &Yaml) -> Vec<BTreeMap<String, String>> {
    let matrix = &strategy["matrix"];
    let Some(hash) = matrix.as_hash() else {
        return vec![BTreeMap::new()];
    };
    let mut out: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
    for (k, v) in hash {
        let Some(key) = k.as_str() else { continue };
        if key == "include" || key == "exclude" {
            continue;
        }
        let values: Vec<String> = match v {
            Yaml::Array(a) => a.iter().filter_map(scalar).collect(),
            other => scalar(other).into_iter().collect(),
        };
        if values.is_empty() {
            continue;
        }
        out = out
            .into_iter()
            .flat_map(|combo| {
                values.iter().map(move |value| {
                    let mut c = combo.clone();
                    c.insert(key.to_owned(), value.clone());
                    c
                })
            })
            .take(MAX_EXPANDED)
            .collect();
    }
    let entry = |y: &Yaml| -> BTreeMap<String, String> {
        y.as_hash()
            .map(|h| {
                h.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), scalar(v)?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(exclude) = matrix["exclude"].as_vec() {
        let excluded: Vec<BTreeMap<String, String>> = exclude.iter().map(entry).collect();
        out.retain(|c| {
            !excluded
                .iter()
                .any(|e| e.iter().all(|(k, v)| c.get(k) == Some(v)))
        });
    }
    let include = matrix["include"].as_vec();
    // A matrix of `include` entries alone is those entries, not one more empty combination.
    if include.is_some() && out.iter().all(BTreeMap::is_empty) {
        out.clear();
    }
    if let Some(include) = include {
        for e in include.iter().map(entry) {
            if out.len() >= MAX_EXPANDED {
                break;
            }
            // An entry that matches existing combinations extends them; otherwise it is one.
            let mut matched = false;
            for c in out.iter_mut() {
                if e.iter().all(|(k, v)| c.get(k).is_none_or(|x| x == v)) && !c.is_empty() {
                    c.extend(e.clone());
                    matched = true;
                }
            }
            if !matched {
                out.push(e);
            }
        }
    }
    if out.is_empty() {
        out.push(BTreeMap::new());
    }
    out
}

/// `text` with every `${{ … }}` put in as a runner would ([`expr`]); `Err` with what is left
/// when an expression only a workflow run can give remains.
fn expand(text: &str, cx: &expr::Context) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find("}}") else {
            return Err("an unterminated expression".into());
        };
        let text = rest[start + 3..start + len].trim();
        let value = expr::evaluate(text, cx)
            .map_err(|e| format!("its expression `{text}` cannot be read: {e}"))?;
        match value.text() {
            Ok(v) => out.push_str(&v),
            Err(what) if what == "a secret" => return Err("it needs a secret".into()),
            Err(_) => return Err(format!("it needs `{text}`, which only a workflow run has")),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The event a workflow's run stands for: a pull request where the workflow runs on one, else a
/// push.
fn event_of(wf: &Yaml) -> &'static str {
    let on = &wf["on"];
    let pr = match on {
        Yaml::String(s) => s == "pull_request",
        Yaml::Array(a) => a.iter().any(|e| e.as_str() == Some("pull_request")),
        Yaml::Hash(h) => h.keys().any(|k| k.as_str() == Some("pull_request")),
        _ => false,
    };
    if pr {
        "pull_request"
    } else {
        "push"
    }
}

/// Whether a job runs on Linux (its `runs-on`, the matrix put in); `Err` when its runner cannot
/// be told (an expression only a workflow run has).
fn runs_on_linux(job: &Yaml, cx: &expr::Context) -> Result<bool, String> {
    let runs_on = match &job["runs-on"] {
        Yaml::String(s) => expand(s, cx)?,
        Yaml::Array(a) => a
            .iter()
            .filter_map(Yaml::as_str)
            .map(|s| expand(s, cx))
            .collect::<Result<Vec<_>, _>>()?
            .join(" "),
        Yaml::Hash(h) => h
            .values()
            .filter_map(Yaml::as_str)
            .map(|s| expand(s, cx))
            .collect::<Result<Vec<_>, _>>()?
            .join(" "),
        _ => String::new(),
    }
    .to_lowercase();
    Ok(!(runs_on.contains("windows") || runs_on.contains("macos") || runs_on.contains("mac-")))
}

fn string_map(
    y: &Yaml,
    matrix: &BTreeMap<String, String>,
    base: &BTreeMap<String, String>,
    event: &str,
) -> BTreeMap<String, String> {
    let mut out = base.clone();
    if let Some(h) = y.as_hash() {
        for (k, v) in h {
            if let (Some(k), Some(v)) = (k.as_str(), scalar(v)) {
                let cx = expr::Context {
                    matrix,
                    env: &out,
                    event,
                };
                if let Ok(v) = expand(&v, &cx) {
                    out.insert(k.to_owned(), v);
                }
            }
        }
    }
    out
}

/// A name people read for a check from a step: `CI <job> (<matrix key value>, …): <step>`,
/// the step its name or its command's first line, at most 80 characters.
fn check_name(job: &str, step: &str, combo: &BTreeMap<String, String>) -> String {
    let values: Vec<String> = combo
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let mut name = format!("CI {job}");
    if !values.is_empty() {
        name.push_str(&format!(" ({})", values.join(", ")));
    }
    name.push_str(&format!(": {step}"));
    name.chars().filter(|c| !c.is_control()).take(80).collect()
}

/// The shell command that runs `script` as the workflow would: in `dir`, with `env`, by bash
/// with `-e`.
fn command(script: &str, dir: Option<&str>, env: &BTreeMap<String, String>) -> String {
    let mut cmd = String::new();
    if let Some(d) = dir.filter(|d| !d.is_empty() && *d != ".") {
        cmd.push_str(&format!("cd {} && ", crate::process::shell_quote(d)));
    }
    if !env.is_empty() {
        cmd.push_str("env ");
        for (k, v) in env {
            cmd.push_str(&format!("{k}={} ", crate::process::shell_quote(v)));
        }
    }
    if script.lines().count() <= 1 && dir.is_none() && env.is_empty() {
        return script.trim().to_owned();
    }
    cmd.push_str(&format!(
        "bash -ec {}",
        crate::process::shell_quote(script.trim())
    ));
    cmd
}

/// Reads one workflow file's text into `ci`; `dir_exists` says whether a working directory is
/// in the repository (one a job makes, or another checkout's, cannot be run from here).
fn read_workflow(file: &str, text: &str, here: &Here, ci: &mut Ci) {
    let Ok(docs) = YamlLoader::load_from_str(text) else {
        ci.notes
            .push(format!("{file} is not valid YAML: its checks are not used"));
        return;
    };
    let Some(wf) = docs.first() else { return };
    if let Err(why) = on_push_or_pr(wf) {
        ci.notes.push(format!(
            "{file}: left out, {why}: it would not run on a pull request"
        ));
        return;
    }
    let event = event_of(wf);
    let wf_env = string_map(&wf["env"], &BTreeMap::new(), &BTreeMap::new(), event);
    let default_dir = wf["defaults"]["run"]["working-directory"]
        .as_str()
        .map(str::to_owned);
    let Some(jobs) = wf["jobs"].as_hash() else {
        return;
    };
    for (id, job) in jobs {
        let Some(id) = id.as_str() else { continue };
        if let Some(why) = job_left_out(job) {
            ci.notes
                .push(format!("{file}, job `{id}`: left out, {why}"));
            continue;
        }
        let mut job = Job {
            file,
            id,
            yaml: job,
            dir: job["defaults"]["run"]["working-directory"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| default_dir.clone()),
            dir_exists: here.dir_exists,
            matrix: false,
            event,
        };
        let runnable = instances(&job, &wf_env, here, ci);
        job.matrix = runnable.len() > 1;
        for (combo, path) in runnable {
            let mut combo = combo;
            combo.extend(input_defaults(wf));
            read_combination(&job, &combo, path, &wf_env, ci);
        }
    }
}

/// The folders first on `PATH` for a matrix combination, or why it is not provided here.
pub(super) type Provided = dyn Fn(&BTreeMap<String, String>) -> Result<Vec<String>, String>;

/// What this machine offers a workflow's jobs: which working directories the repository has,
/// and what a matrix combination asks of it ([`interpreters::provided`]).
pub(super) struct Here<'a> {
    /// Whether a working directory is in the repository.
    pub dir_exists: &'a dyn Fn(&str) -> bool,
    pub provided: &'a Provided,
}

/// The combinations of `job` that run here, each with its folders first on `PATH` — at most
/// [`MAX_COMBINATIONS`] — and notes in `ci` on those that do not (another OS, an interpreter
/// or compiler not here, an undecidable condition) and on those beyond the cap. Where the only
/// reason none runs is an interpreter not here, one runs with what is here, and says so.
fn instances(
    job: &Job,
    wf_env: &BTreeMap<String, String>,
    here: &Here,
    ci: &mut Ci,
) -> Vec<(BTreeMap<String, String>, Vec<String>)> {
    let (file, id) = (job.file, job.id);
    let mut runnable = Vec::new();
    let mut unprovided = Vec::new();
    let mut not_here: Vec<String> = Vec::new();
    let named = |combo: &BTreeMap<String, String>, why: &str| {
        if combo.is_empty() {
            return why.to_owned();
        }
        let name = check_name(id, "", combo);
        let name = name.trim_end_matches(": ").trim_start_matches("CI ");
        format!("{name} ({why})")
    };
    for combo in combinations(&job.yaml["strategy"]) {
        match steps::runs_here(job, &combo, wf_env) {
            Ok(true) => match (here.provided)(&combo) {
                Ok(path) => runnable.push((combo, path)),
                Err(why) => {
                    not_here.push(named(&combo, &why));
                    unprovided.push(combo);
                }
            },
            Ok(false) => {}
            Err(why) => not_here.push(named(&combo, &why)),
        }
    }
    if runnable.is_empty() {
        if let Some(first) = unprovided.into_iter().next() {
            ci.notes.push(format!(
                "{file}, job `{id}`: none of its combinations is provided here; {} runs with what is here",
                named(&first, "the first").trim_end_matches(" (the first)")
            ));
            runnable.push((first, Vec::new()));
        }
    }
    if !not_here.is_empty() {
        not_here.dedup();
        ci.notes.push(format!(
            "{file}, job `{id}`: not provided here: {}",
            not_here.join("; ")
        ));
    }
    if runnable.len() > MAX_COMBINATIONS {
        let dropped: Vec<String> = runnable[MAX_COMBINATIONS..]
            .iter()
            .map(|(c, _)| check_name(id, "", c).trim_end_matches(": ").to_owned())
            .collect();
        ci.notes.push(format!(
            "{file}, job `{id}`: only the first {MAX_COMBINATIONS} of its {} combinations that run here are used; left out: {}",
            runnable.len(),
            dropped.join("; ")
        ));
        runnable.truncate(MAX_COMBINATIONS);
    }
    runnable
}

/// The defaults of the inputs a workflow declares (`workflow_dispatch`, `workflow_call`), keyed
/// `inputs.<name>`: what an expression naming one gets when the workflow runs on a push.
fn input_defaults(wf: &Yaml) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for trigger in ["workflow_dispatch", "workflow_call"] {
        if let Some(inputs) = wf["on"][trigger]["inputs"].as_hash() {
            for (name, input) in inputs {
                if let (Some(name), Some(default)) = (name.as_str(), scalar(&input["default"])) {
                    out.insert(format!("inputs.{name}"), default);
                }
            }
        }
    }
    out
}

/// Why a whole job is left out (it needs services, or it tests another repository), or `None`.
fn job_left_out(job: &Yaml) -> Option<String> {
    if let Some(services) = job["services"].as_hash() {
        let names: Vec<&str> = services.keys().filter_map(Yaml::as_str).collect();
        return Some(format!("it needs the service(s) {}", names.join(", ")));
    }
    other_repository(job).map(|repo| format!("it checks out and tests another repository ({repo})"))
}

/// What a `uses:` step gives the workflow's later steps, for the note.
fn provides(uses: &str) -> String {
    let action = uses.split('@').next().unwrap_or(uses);
    let what = super::tools::provided_by(action).unwrap_or_default();
    if what.is_empty() {
        String::new()
    } else {
        format!(" (it would provide {what}: the checks use what is installed here)")
    }
}

/// The checks, setup steps and notes of the workflows of the project `p`.
pub fn read(p: &super::project::Project) -> Ci {
    let mut ci = Ci::default();
    let files: Vec<String> = p
        .list(".github/workflows")
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .collect();
    for file in files {
        let name = format!(".github/workflows/{file}");
        if let Some(text) = p.text(&name) {
            let exists = |d: &str| !d.contains("${{") && p.is_dir(d);
            let here = Here {
                dir_exists: &exists,
                provided: &interpreters::provided,
            };
            read_workflow(&name, &text, &here, &mut ci);
        }
    }
    narrow_env_lists(p, &mut ci);
    if ci.checks.len() > MAX_CHECKS {
        let left: Vec<String> = ci.checks[MAX_CHECKS..]
            .iter()
            .map(|c| c.name.clone())
            .collect();
        ci.notes.push(format!(
            "only the first {MAX_CHECKS} CI checks are run; left out: {}",
            left.join(", ")
        ));
        ci.checks.truncate(MAX_CHECKS);
    }
    ci
}

/// A CI check that runs an env runner's whole list (a bare `tox`) runs the envs this machine can
/// run instead (see [`env_list::narrow`]).
fn narrow_env_lists(p: &super::project::Project, ci: &mut Ci) {
    for tool in super::tools::TOOLS {
        let list = tool.env_list(p);
        if !list.is_empty() {
            env_list::narrow(*tool, &list, ci, super::tools::local_python());
        }
    }
}

#[cfg(test)]
mod tests;
