//! The go command, for what is not a check of its own (`go test` is [`super::go_test`], `go
//! vet`/`build` [`super::go_vet`], `go fmt` [`super::gofmt`]): `go install`, `go get`, `go mod
//! download` set up from the Go module proxy; a tool installed by name lands in the job's own
//! `GOBIN`.

use super::ecosystem::Registry;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Go;

impl Tool for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "go"
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        super::step::installs_by(call, &["install", "get", "mod", "download"])
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::GoProxy)
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        call.sub() == "install"
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[("GOBIN", "go/bin", Some(""))]
    }
}
