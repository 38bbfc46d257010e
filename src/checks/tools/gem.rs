//! Ruby's gem and Bundler, known by what they do in a CI step: `gem install`, `bundle install`
//! set up; a gem installed by name lands in the job's own `GEM_HOME`.

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Gem;

impl Tool for Gem {
    fn name(&self) -> &'static str {
        "gem"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "gem" | "bundle")
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::step::installs_by(call, super::step::INSTALLS)
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.name() == "gem" && call.sub() == "install"
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[("GEM_HOME", "gem", Some("bin"))]
    }
}
