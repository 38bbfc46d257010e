//! A runner of a list of environments (tox) as a CI step runs its whole list — nine interpreters
//! in a matrix the runner has, one here. A CI check that runs the whole list runs instead, in
//! each instance of its job, the envs of that instance's interpreter (`py312` where the matrix
//! puts Python 3.12 first, or a bare `py`), and — once, in the job's first instance, each a
//! check of its own — the envs that name no interpreter (`flake8`, `docs`, `check-manifest`):
//! one that needs the network at run time then fails on its own, naming no test, and cannot
//! judge, rather than taking the tests of every instance with it. The envs of interpreters not
//! here are left out and named. What the list is, how an env is named for an interpreter and
//! how a command is narrowed are the runner's tool's.

use super::Ci;
use crate::checks::spec::{CheckSpec, JobPlace};
use crate::checks::tools::CheckKind;
use crate::checks::tools::{self, Tool};

/// The Python `X.Y` of a job instance: the folder its matrix puts first on `PATH`
/// (`…/versions/3.12.1/bin`, `…/cpython-3.12.4-linux-x86_64-gnu/bin`), else `here`.
fn python_of(place: &JobPlace, here: Option<(u32, u32)>) -> Option<(u32, u32)> {
    let named = place.path.iter().find_map(|dir| {
        let name = std::path::Path::new(dir)
            .parent()?
            .file_name()?
            .to_str()?
            .trim_start_matches("cpython-");
        let mut numbers = name.split(|c: char| !c.is_ascii_digit());
        Some((numbers.next()?.parse().ok()?, numbers.next()?.parse().ok()?))
    });
    named.or(here)
}

/// Each CI check that runs `tool`'s whole `list` (its step's script, however ralph split it
/// into building the environments and running them offline) runs, in each instance, the envs of
/// the instance's interpreter; the job's first instance also runs each env that names no
/// interpreter, as a check of its own after it. `here` is the Python on `PATH`, for an instance
/// whose matrix names none.
pub(super) fn narrow(tool: &dyn Tool, list: &[String], ci: &mut Ci, here: Option<(u32, u32)>) {
    let program = tool.name();
    // The step's script where the CI's check is it alone, else the check's command (after the
    // job's installs: `tox --skip-pkg-install`, its environments built by a step before it).
    let bare = |ci: &Ci, c: &CheckSpec| {
        let script = ci.scripts.get(&c.name).unwrap_or(&c.command).trim();
        only_call(script).is_some_and(|(call, t)| t == tool.name() && tool.runs_whole_list(&call))
    };
    let mut jobs_seen: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ci.checks.len() {
        if !bare(ci, &ci.checks[i]) || ci.checks[i].job.is_none() {
            i += 1;
            continue;
        }
        let place = ci.checks[i].job.clone().expect("a job's check");
        let Some(python) = python_of(&place, here) else {
            i += 1;
            continue;
        };
        let (mine, neutral, others) = tool.split_envs(list, python);
        let first = !jobs_seen.contains(&place.job);
        if first {
            jobs_seen.push(place.job.clone());
        }
        let neutral = if first { neutral } else { Vec::new() };
        let mut all: Vec<String> = mine.clone();
        all.extend(neutral.iter().cloned());
        let name = ci.checks[i].name.clone();
        if all.is_empty() {
            ci.notes.push(format!(
                "`{name}`: none of {program}'s envs is for the Python here ({}.{}); left out: {}",
                python.0,
                python.1,
                others.join(", ")
            ));
            ci.checks.remove(i);
            continue;
        }
        // Its environments are built, with the network, before it: only those it runs.
        let check = &mut ci.checks[i];
        if let Some(job) = check.job.as_mut() {
            for step in job.before.iter_mut().filter(|s| s.installs) {
                let builds = only_call(&step.command)
                    .is_some_and(|(call, t)| t == tool.name() && tool.builds_envs(&call));
                if builds {
                    step.command = tool.with_envs(&step.command, &all);
                }
            }
        }
        let runs_own = !mine.is_empty();
        if runs_own {
            check.command = tool.with_envs(&check.command, &mine);
        }
        let own_command = check.command.clone();
        ci.notes.push(format!(
            "`{name}` runs {program}'s envs for Python {}.{}: {}{}{}",
            python.0,
            python.1,
            if mine.is_empty() {
                "none".to_owned()
            } else {
                mine.join(", ")
            },
            if neutral.is_empty() {
                String::new()
            } else {
                format!("; once, each a check of its own: {}", neutral.join(", "))
            },
            if others.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", others.join(", "))
            }
        ));
        let mut at = i + 1;
        let base_command = tool.without_envs(&own_command);
        if !runs_own {
            ci.checks.remove(i);
            at = i;
        }
        for env in neutral {
            let mut spec = CheckSpec::new(
                &format!(
                    "{} -e {env}",
                    name.trim_end_matches(&format!(": {program}")).trim_end()
                ),
                &tool.with_envs(&base_command, std::slice::from_ref(&env)),
            )
            .because(&format!(
                "the `{env}` env of {program}'s list, run once for `{name}`"
            ));
            spec.kind = CheckKind::Quality;
            spec.job = Some(JobPlace {
                before: if runs_own {
                    Vec::new()
                } else {
                    place.before.clone()
                },
                ..place.clone()
            });
            ci.checks.insert(at, spec);
            at += 1;
        }
        i = at;
    }
}

/// The one call `script` makes, through its wrappers, with its tool's name.
fn only_call(script: &str) -> Option<(tools::Call, &'static str)> {
    let commands = tools::plain_commands(script);
    let [words] = commands.as_slice() else {
        return None;
    };
    tools::chain(words)
        .into_iter()
        .find_map(|(call, t)| Some((call, t?.name())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tox() -> &'static dyn Tool {
        tools::named("tox").unwrap()
    }

    fn tox_check(instance: &str, path: &[&str]) -> CheckSpec {
        let mut spec = CheckSpec::new(
            &format!("CI main ({instance}): tox"),
            "tox --skip-pkg-install",
        );
        spec.kind = CheckKind::Test;
        spec.job = Some(JobPlace {
            instance: format!("ci.yml#main[{instance}]"),
            job: "ci.yml#main".into(),
            before: vec![
                crate::checks::spec::JobStep {
                    label: "pip install tox".into(),
                    command: "pip install tox".into(),
                    installs: true,
                },
                crate::checks::spec::JobStep {
                    label: "tox (its environments)".into(),
                    command: "tox --notest".into(),
                    installs: true,
                },
            ],
            path: path.iter().map(|p| (*p).to_owned()).collect(),
        });
        spec
    }

    #[test]
    fn each_instance_runs_its_interpreters_envs_and_the_others_run_once() {
        // cachetools: four envs that name no interpreter, and `py`; a matrix of 3.11 and 3.12.
        let list: Vec<String> = ["check-manifest", "docs", "flake8", "py"]
            .map(String::from)
            .to_vec();
        let mut ci = Ci::default();
        for (instance, path) in [
            ("python=3.11", "/py/versions/3.11.7/bin"),
            ("python=3.12", "/py/versions/3.12.1/bin"),
        ] {
            // (After the job's installs the step's script is not kept: the command says it.)
            ci.checks.push(tox_check(instance, &[path]));
        }
        narrow(tox(), &list, &mut ci, Some((3, 11)));
        let checks: Vec<(&str, &str, usize)> = ci
            .checks
            .iter()
            .map(|c| {
                (
                    c.name.as_str(),
                    c.command.as_str(),
                    c.job.as_ref().unwrap().before.len(),
                )
            })
            .collect();
        assert_eq!(
            checks,
            [
                (
                    "CI main (python=3.11): tox",
                    "tox --skip-pkg-install -e py",
                    2
                ),
                (
                    "CI main (python=3.11) -e check-manifest",
                    "tox --skip-pkg-install -e check-manifest",
                    0
                ),
                (
                    "CI main (python=3.11) -e docs",
                    "tox --skip-pkg-install -e docs",
                    0
                ),
                (
                    "CI main (python=3.11) -e flake8",
                    "tox --skip-pkg-install -e flake8",
                    0
                ),
                (
                    "CI main (python=3.12): tox",
                    "tox --skip-pkg-install -e py",
                    2
                ),
            ]
        );
        // The first instance builds every env it runs; the second only its own.
        let built = |i: usize| ci.checks[i].job.as_ref().unwrap().before[1].command.clone();
        assert_eq!(built(0), "tox --notest -e py,check-manifest,docs,flake8");
        assert_eq!(built(4), "tox --notest -e py");
        assert_eq!(ci.checks[1].kind, CheckKind::Quality);
        assert!(ci.notes[0].contains("once, each a check of its own: check-manifest, docs, flake8"));
        assert_eq!(
            python_of(ci.checks[4].job.as_ref().unwrap(), None),
            Some((3, 12))
        );
    }
}
