//! CMake, known by what it does in a CI step: `cmake -B build`, `cmake ..` configure — and may
//! download what the project fetches —, `cmake --build`/`--install` build. Its tests are ctest's
//! ([`super::ctest`]); a project whose `CMakeLists.txt` turns them on is configured, built and
//! tested out of tree.

use super::shell::Call;
use super::step::StepKind;
use super::tool::{Role, Tool};
use crate::checks::project::Project;

pub struct Cmake;

impl Tool for Cmake {
    fn name(&self) -> &'static str {
        "cmake"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "cmake"
    }

    fn build_system(&self) -> Option<&'static str> {
        Some("cmake")
    }

    fn suite(&self, project: &Project, build: &str) -> Option<(String, &'static str)> {
        cmake_tests(&project.text("CMakeLists.txt")?).then(|| {
            (
                format!(
                    "cmake -S . -B {build} && cmake --build {build} --parallel \"$(nproc)\" && cd {build} && ctest --output-on-failure --parallel \"$(nproc)\""
                ),
                "CMakeLists.txt turns its tests on (enable_testing): built out of tree, run by ctest",
            )
        })
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        Some(if call.has("--build") || call.has("--install") {
            StepKind::Build
        } else {
            StepKind::Setup
        })
    }
}

/// Whether a CMake file's text turns on its tests (commands are case-insensitive).
fn cmake_tests(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").to_ascii_lowercase())
        .any(|l| {
            let l: String = l.split_whitespace().collect();
            l.contains("enable_testing(") || l.contains("include(ctest)")
        })
}
