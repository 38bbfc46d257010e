//! A test that fails on the change where it passed on the base is run again, alone, before it
//! counts: one that passes then is flaky — reported, blamed on nobody, and no longer used to
//! judge. ralph knows how to run one test alone for pytest (its JUnit ids, through
//! `PYTEST_ADDOPTS=-k`) and for a plain `cargo test` (`-- --exact`); other runners' failures
//! count as they are. A check where more than [`MAX_RERUNS`] such tests fail is not a flaky
//! one: nothing is run again.

use super::baseline::Baseline;
use super::compare::Runner;
use super::run::run_check;
use super::{CheckKind, CheckResult, CheckSpec, CheckStatus};
use std::path::Path;
use std::time::Duration;

/// The most tests of one check run again alone.
pub const MAX_RERUNS: usize = 3;

/// How to run one test alone: the check's command changed, and variables to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alone {
    pub command: String,
    pub env: Vec<(String, String)>,
}

/// How to run the test `id` (as `runner` named it) of a check whose command is `command`
/// alone; `None` where ralph does not know how. `addopts` is the `PYTEST_ADDOPTS` the check
/// already has.
pub fn alone(command: &str, runner: Runner, id: &str, addopts: &str) -> Option<Alone> {
    match runner {
        Runner::Junit => {
            // `tests.test_x.TestC::test_y[1]`: the class (or module) and the function.
            let (classname, name) = id.rsplit_once("::")?;
            let function = name.split('[').next().unwrap_or(name);
            let owner = classname.rsplit('.').next().unwrap_or(classname);
            let word =
                |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !word(function) || !word(owner) {
                return None;
            }
            Some(Alone {
                command: command.to_owned(),
                env: vec![(
                    "PYTEST_ADDOPTS".into(),
                    format!("{addopts} -k '{owner} and {function}'")
                        .trim()
                        .to_owned(),
                )],
            })
        }
        Runner::Cargo => {
            let plain = command.trim_start().starts_with("cargo test")
                && !command.contains(['&', ';', '|', '`', '$', '\n', '>', '<', '\'', '"']);
            let (binary, name) = id.split_once("::")?;
            // A test path is Rust identifiers and `::`; anything else is not appended to a
            // command (a doc test, a name a report made up).
            let path = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
            if !plain || binary.starts_with("doc-tests ") || !path {
                return None;
            }
            let sep = if command.split_whitespace().any(|w| w == "--") {
                ""
            } else {
                " --"
            };
            Some(Alone {
                command: format!("{}{sep} --exact {name}", command.trim_end()),
                env: Vec::new(),
            })
        }
        Runner::Counts | Runner::Go | Runner::Ctest | Runner::Jest => None,
    }
}

/// Runs again alone each test `result` failed that passed on `base` — when there are at most
/// [`MAX_RERUNS`] of them and ralph knows how — and marks those that pass then as flaky in
/// its measure. The result's status is left to the baseline's judgement.
pub async fn settle(
    spec: &CheckSpec,
    result: &mut CheckResult,
    base: &Baseline,
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
) {
    if spec.kind != CheckKind::Test || result.status != CheckStatus::Failed {
        return;
    }
    let Some(passed_on_base) = base.passed_tests(&spec.name) else {
        return;
    };
    let Some(tests) = result.measure.tests.as_ref().filter(|t| t.by_name) else {
        return;
    };
    let broken: Vec<String> = tests
        .failed
        .iter()
        .filter(|id| passed_on_base.contains(*id))
        .cloned()
        .collect();
    if broken.is_empty() || broken.len() > MAX_RERUNS {
        return;
    }
    let addopts = super::run::pytest_addopts(env);
    let runner = tests.runner;
    let mut flaky = Vec::new();
    for id in broken {
        let Some(how) = alone(&spec.command, runner, &id, &addopts) else {
            return;
        };
        let once = CheckSpec {
            command: how.command,
            ..spec.clone()
        };
        let mut env = env.to_vec();
        env.extend(how.env);
        let again = run_check(&once, workdir, timeout, &env).await;
        let passed_alone = again
            .measure
            .tests
            .as_ref()
            .is_some_and(|t| t.passed.contains(&id) && !t.failed.contains(&id));
        if passed_alone {
            flaky.push(id);
        }
    }
    if let Some(t) = result.measure.tests.as_mut() {
        t.flaky.extend(flaky);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_test_is_run_alone_as_its_runner_takes_it() {
        let a = alone(
            "poetry run pytest",
            Runner::Junit,
            "tests.test_v.TestGit::test_shallow[x]",
            "-p no:cacheprovider",
        )
        .unwrap();
        assert_eq!(a.command, "poetry run pytest");
        assert_eq!(
            a.env,
            [(
                "PYTEST_ADDOPTS".to_owned(),
                "-p no:cacheprovider -k 'TestGit and test_shallow'".to_owned()
            )]
        );
        let a = alone(
            "cargo test --features x",
            Runner::Cargo,
            "tests/it.rs::a::b",
            "",
        )
        .unwrap();
        assert_eq!(a.command, "cargo test --features x -- --exact a::b");
        let a = alone(
            "cargo test -- --nocapture",
            Runner::Cargo,
            "src/lib.rs::t",
            "",
        )
        .unwrap();
        assert_eq!(a.command, "cargo test -- --nocapture --exact t");
        // Not a plain cargo test, a doc test, another runner: not known how.
        assert!(alone(
            "cargo test && cargo test --features x",
            Runner::Cargo,
            "a::b",
            ""
        )
        .is_none());
        assert!(alone(
            "cargo test",
            Runner::Cargo,
            "doc-tests x::src/lib.rs - f (line 3)",
            ""
        )
        .is_none());
        assert!(alone("go test ./...", Runner::Go, "pkg/TestX", "").is_none());
        assert!(alone("pytest", Runner::Junit, "tests.t::test_$(x)", "").is_none());
        assert!(alone(
            "cargo test",
            Runner::Cargo,
            "tests/a.rs::x;touch${IFS}y",
            ""
        )
        .is_none());
    }
}
