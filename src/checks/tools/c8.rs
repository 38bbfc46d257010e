//! c8 and nyc, coverage around a Node test run (`c8 mocha`, `nyc ava`): each starts the command
//! after its own options, prints its table after the run and keeps the run's data, so a
//! project whose `test` script runs under one has its coverage read from that tool's text
//! report of the run (`c8 report --reporter=text`), found in the project's own
//! `node_modules/.bin` (never fetched: `npx` would reach for the registry).

use super::coverage_spec::CoverageSpec;
use super::shell::Call;
use super::tool::{Env, Inner, Lang, Role, Tool};
use crate::checks::project::Project;

/// The options of c8 and nyc that take a value.
const VALUED: [&str; 17] = [
    "-r",
    "--reporter",
    "-n",
    "--include",
    "-x",
    "--exclude",
    "--reports-dir",
    "--report-dir",
    "-o",
    "--temp-directory",
    "--src",
    "--lines",
    "--functions",
    "--branches",
    "--statements",
    "--extension",
    "-e",
];

/// c8 or nyc, by its program's name.
pub struct Istanbul(&'static str);

pub static C8: Istanbul = Istanbul("c8");
pub static NYC: Istanbul = Istanbul("nyc");

impl Tool for Istanbul {
    fn name(&self) -> &'static str {
        self.0
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Js)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == self.0
    }

    fn coverage_reports(&self) -> &'static [&'static str] {
        super::jest::ISTANBUL_REPORTS
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        super::npm::after_flags(&call.args, &VALUED)
    }

    fn coverage(&self, env: &Env) -> Option<CoverageSpec> {
        around_test_script(env.project, self.name())
    }
}

/// The coverage of a project whose `test` script runs under `tool` (c8 or nyc): its text report
/// of the run's data.
fn around_test_script(p: &Project, tool: &str) -> Option<CoverageSpec> {
    let test = super::npm::script(p, "", "test")?;
    let around = super::shell::plain_commands(&test)
        .iter()
        .any(|words| words.first().is_some_and(|w| w == tool));
    around.then(|| CoverageSpec {
        test_command: None,
        command: format!("PATH=\"$PWD/node_modules/.bin:$PATH\" {tool} report --reporter=text"),
        reason: format!("`{tool}` around the `test` script of package.json: its report of the run"),
    })
}
