//! The test suite of a C or C++ project's build system, found without a CI workflow: CMake
//! with `enable_testing()` (or `include(CTest)`) runs `ctest`, Meson with a `test(…)` runs
//! `meson test`. Each is configured and built out of tree, in a build folder of the run's own
//! ([`BUILD_DIR_VAR`], a fresh folder for every run of the checks): the configuration of one
//! run — a compiler, a cache — never leaks into another, and the worktree holds only the change.

use super::{CheckKind, CheckSpec};

/// The variable that names the run's own build folder in a build system's check.
pub const BUILD_DIR_VAR: &str = "RALPH_BUILD_DIR";

/// A project's build files, as read.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildFiles<'a> {
    /// The root `CMakeLists.txt`.
    pub cmake: Option<&'a str>,
    /// The root `meson.build`.
    pub meson: Option<&'a str>,
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

/// Whether a Meson file's text declares a test (`test('name', exe)`).
fn meson_tests(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .any(|l| {
            let t = l.trim_start();
            t.starts_with("test(") || t.contains(" test(") || t.contains("=test(")
        })
}

/// The build system's test check, and where it came from (`cmake`, `meson`); `None` when the
/// build files declare no test. With both, the one whose program is installed here judges (the
/// contributor's tools, not the first file found), and the other stands in for it where it
/// cannot run: `cmake-test` or `meson-test`.
pub fn checks(files: BuildFiles) -> Option<(&'static str, Vec<CheckSpec>)> {
    checks_with(files, &|program| super::on_path(program))
}

/// [`checks`], with `installed` telling which programs are here.
fn checks_with(
    files: BuildFiles,
    installed: &dyn Fn(&str) -> bool,
) -> Option<(&'static str, Vec<CheckSpec>)> {
    let dir = |name: &str| format!("\"${BUILD_DIR_VAR}/{name}\"");
    let mut found: Vec<(&'static str, String, &str)> = Vec::new();
    if files.cmake.is_some_and(cmake_tests) {
        let build = dir("cmake");
        found.push((
            "cmake",
            format!(
                "cmake -S . -B {build} && cmake --build {build} --parallel \"$(nproc)\" && cd {build} && ctest --output-on-failure --parallel \"$(nproc)\""
            ),
            "CMakeLists.txt turns its tests on (enable_testing): built out of tree, run by ctest",
        ));
    }
    if files.meson.is_some_and(meson_tests) {
        let build = dir("meson");
        found.push((
            "meson",
            format!("meson setup {build} && meson test -C {build} --print-errorlogs"),
            "meson.build declares tests: built out of tree, run by meson test",
        ));
    }
    // The installed one first; the files' order among equals.
    found.sort_by_key(|(source, ..)| !installed(source));
    let (first, ..) = *found.first()?;
    let checks = found
        .iter()
        .enumerate()
        .map(|(i, (source, command, why))| {
            let name = if i == 0 {
                "test".to_owned()
            } else {
                format!("{source}-test")
            };
            let mut spec = CheckSpec::new(&name, command).because(why);
            spec.kind = CheckKind::Test;
            spec.program = Some((*source).to_owned());
            if i > 0 {
                spec = spec.standing_in(
                    vec!["test".into()],
                    &format!("the project builds with {source} too: it judges where {first} cannot run here"),
                );
            }
            spec
        })
        .collect();
    Some((first, checks))
}

/// Whether a Makefile's text only drives one of these build systems (its `test` target then
/// runs what [`checks`] runs, and the build system is the project's own way).
pub fn makefile_drives_it(makefile: &str) -> bool {
    makefile.lines().any(|l| {
        l.starts_with('\t')
            && l.split_whitespace()
                .any(|w| matches!(w, "cmake" | "ctest" | "meson"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmake_with_tests_runs_ctest_out_of_tree() {
        let cmake = "project(cJSON C)\n# enable_testing() in a comment is not one\nENABLE_TESTING ()\nadd_subdirectory(tests)\n";
        let (source, found) = checks(BuildFiles {
            cmake: Some(cmake),
            meson: None,
        })
        .unwrap();
        assert_eq!(source, "cmake");
        assert_eq!(found[0].kind, CheckKind::Test);
        assert_eq!(
            found[0].command,
            "cmake -S . -B \"$RALPH_BUILD_DIR/cmake\" && cmake --build \"$RALPH_BUILD_DIR/cmake\" --parallel \"$(nproc)\" && cd \"$RALPH_BUILD_DIR/cmake\" && ctest --output-on-failure --parallel \"$(nproc)\""
        );
        assert_eq!(found[0].program.as_deref(), Some("cmake"));
        let ctest = "include(CTest)\n";
        assert!(checks(BuildFiles {
            cmake: Some(ctest),
            meson: None
        })
        .is_some());
        let untested = "project(x)\n# enable_testing()\nadd_library(x x.c)\n";
        assert!(checks(BuildFiles {
            cmake: Some(untested),
            meson: None
        })
        .is_none());
    }

    #[test]
    fn meson_with_tests_runs_meson_test_out_of_tree() {
        let meson = "project('x', 'c')\nexe = executable('t', 't.c')\ntest('basic', exe)\n";
        let (source, found) = checks(BuildFiles {
            cmake: None,
            meson: Some(meson),
        })
        .unwrap();
        assert_eq!(source, "meson");
        assert_eq!(
            found[0].command,
            "meson setup \"$RALPH_BUILD_DIR/meson\" && meson test -C \"$RALPH_BUILD_DIR/meson\" --print-errorlogs"
        );
        assert!(checks(BuildFiles {
            cmake: None,
            meson: Some("project('x', 'c')\n# test('no', exe)\n")
        })
        .is_none());
    }

    #[test]
    fn with_cmake_and_meson_the_installed_one_judges_and_the_other_stands_in() {
        let files = BuildFiles {
            cmake: Some("enable_testing()\n"),
            meson: Some("test('basic', exe)\n"),
        };
        let (source, found) = checks_with(files, &|p| p == "meson").unwrap();
        assert_eq!(source, "meson");
        let names: Vec<(&str, Option<&str>)> = found
            .iter()
            .map(|c| (c.name.as_str(), c.program.as_deref()))
            .collect();
        assert_eq!(
            names,
            [("test", Some("meson")), ("cmake-test", Some("cmake"))]
        );
        let stand_in = found[1].fallback.as_ref().unwrap();
        assert_eq!(stand_in.for_checks, ["test"]);
        // Both installed (or neither): CMake first, as before.
        let (source, found) = checks_with(files, &|_| true).unwrap();
        assert_eq!((source, found[1].name.as_str()), ("cmake", "meson-test"));
        assert_eq!(checks_with(files, &|_| false).unwrap().0, "cmake");
    }

    #[test]
    fn a_makefile_that_calls_cmake_is_its_driver() {
        assert!(makefile_drives_it(
            "test:\n\tcmake -S . -B build\n\tctest --test-dir build\n"
        ));
        assert!(!makefile_drives_it(
            "test: all\n\t./cJSON_test\n# cmake is better\n"
        ));
    }
}
