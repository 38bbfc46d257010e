//! A test the change adds that no check's output named — a check ralph cannot see into may have
//! run it, naming none of its tests — is run alone by its language's runners, each the way it
//! runs one test ([`super::tools::Tool::alone_in`]: pytest, then unittest for a test of a
//! class): it counts as run, and passed, when it passes under one of them. Anything else leaves
//! it "not reported by name", held against nobody: those runners may not be how the project runs
//! its tests, so what they did is said, never blamed.

use super::new_tests::{self, NewTest, Outcome, TestFn};
use super::result::CheckStatus;
use super::run::run_check;
use super::rust_modules::Tree;
use super::spec::CheckSpec;
use super::tools::{self, CheckKind, Role};
use std::path::Path;
use std::time::Duration;

/// The most such tests run alone in one verification.
const MAX_ALONE: usize = 3;

/// The most runners a test is tried with.
const MAX_RUNNERS: usize = 2;

/// Runs alone each of `tests` no check named (at most [`MAX_ALONE`]), in `workdir` with `env`.
pub async fn run_alone(
    tests: &mut [NewTest],
    workdir: &Path,
    timeout: Duration,
    env: &[(String, String)],
    tree: &dyn Tree,
) {
    let project = super::project::Project::read(workdir);
    let tool_env = tools::Env::of(&project);
    let unnamed = tests.iter_mut().filter(|t| t.outcome == Outcome::Unknown);
    for test in unnamed.take(MAX_ALONE) {
        let Some(lang) = new_tests::lang(&test.file) else {
            continue;
        };
        // Each runner of its language that can, in the registry's order, until one runs it.
        let runners: Vec<_> = tools::TOOLS
            .iter()
            .filter(|t| t.role() == Role::Tests(lang))
            .filter_map(|t| Some((*t, t.alone_in(&tool_env, &test.file, &test.name)?)))
            .take(MAX_RUNNERS)
            .collect();
        let before = test.hint.take().unwrap_or_default();
        let mut tried = Vec::new();
        for (runner, how) in runners {
            let mut spec = CheckSpec::new(&format!("{} alone", runner.name()), &how.command);
            spec.kind = CheckKind::Test;
            let spec = spec.seen_in(&project);
            let mut with = env.to_vec();
            with.extend(how.env);
            let result = run_check(&spec, workdir, timeout, &with).await;
            let status = result.status;
            let found = TestFn {
                name: test.name.clone(),
                body: String::new(),
                feature: None,
                decorators: Vec::new(),
            };
            let alone = new_tests::locate(&[(test.file.clone(), found)], &[result], tree);
            let ran = format!("run alone by {} (`{}`", runner.name(), spec.command);
            let outcome = alone.first().map(|t| t.outcome);
            if outcome == Some(Outcome::Passed) {
                test.outcome = Outcome::Passed;
                test.check = Some(spec.name.clone());
                tried.insert(0, format!("{ran}), it passed"));
                break;
            }
            let what = match (outcome, status) {
                (Some(Outcome::Failed), _) => "it failed there".to_owned(),
                (_, CheckStatus::Passed) => "it was not among the tests it ran".to_owned(),
                (_, s) => format!("it did not run there ({})", s.word()),
            };
            tried.push(format!("{ran}, not how the project may run it), {what}"));
        }
        // What was tried, the run that passed first; then why no check named it.
        let said: Vec<String> = tried
            .into_iter()
            .chain((!before.is_empty()).then_some(before))
            .collect();
        test.hint = (!said.is_empty()).then(|| said.join("; "));
    }
}
