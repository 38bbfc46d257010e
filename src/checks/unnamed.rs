//! A test the change adds that no check's output named — a check ralph cannot see into may have
//! run it, naming none of its tests — is run alone by its language's runner, the way that runner
//! runs one test ([`super::tools::Tool::alone_in`]): it counts as run, and passed, when it passes
//! there. Anything else leaves it "not reported by name", held against nobody: that runner may
//! not be how the project runs its tests, so its failure is said, never blamed.

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
        let how = tools::TOOLS
            .iter()
            .filter(|t| t.role() == Role::Tests(lang))
            .find_map(|t| Some((*t, t.alone_in(&tool_env, &test.file, &test.name)?)));
        let Some((runner, how)) = how else {
            continue;
        };
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
            marks: Vec::new(),
        };
        let alone = new_tests::locate(&[(test.file.clone(), found)], &[result], tree);
        let ran = format!("run alone by {} (`{}`", runner.name(), spec.command);
        let before = test.hint.take().unwrap_or_default();
        match alone.first().map(|t| t.outcome) {
            Some(Outcome::Passed) => {
                test.outcome = Outcome::Passed;
                test.check = Some(spec.name.clone());
                test.hint = Some(format!("{ran}), it passed; {before}"));
            }
            outcome => {
                let what = match (outcome, status) {
                    (Some(Outcome::Failed), _) => "it failed there".to_owned(),
                    (_, CheckStatus::Passed) => "it was not among the tests it ran".to_owned(),
                    (_, s) => format!("it did not run there ({})", s.word()),
                };
                test.hint = Some(format!(
                    "{before}; {ran}, not how the project may run it), {what}"
                ));
            }
        }
    }
}
