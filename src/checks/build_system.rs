//! The test suite of a C or C++ project's build system, found without a CI workflow: each build
//! system's tool says when the build files declare tests and how they run (CMake with
//! `enable_testing()` runs `ctest`, Meson with a `test(…)` runs `meson test`). Each is
//! configured and built out of tree, in a build folder of the run's own ([`BUILD_DIR_VAR`], a
//! fresh folder for every run of the checks): the configuration of one run — a compiler, a
//! cache — never leaks into another, and the worktree holds only the change.

use super::project::Project;
use super::spec::CheckSpec;
use super::tools::CheckKind;

/// The variable that names the run's own build folder in a build system's check.
pub const BUILD_DIR_VAR: &str = "RALPH_BUILD_DIR";

/// The build system's test check, and where it came from (its build system's name); `None` when
/// the build files declare no test. With several, the one whose program is installed here
/// judges (the contributor's tools, not the first file found), and the others stand in for it
/// where it cannot run (`cmake-test`, `meson-test`).
pub fn checks(p: &Project) -> Option<(&'static str, Vec<CheckSpec>)> {
    checks_with(p, &|program| crate::process::on_path(program))
}

/// [`checks`], with `installed` telling which programs are here.
fn checks_with(
    p: &Project,
    installed: &dyn Fn(&str) -> bool,
) -> Option<(&'static str, Vec<CheckSpec>)> {
    let dir = |name: &str| format!("\"${BUILD_DIR_VAR}/{name}\"");
    let mut found = super::tools::build_suites(p, &dir);
    // The installed one first; the tools' order among equals.
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

/// Whether the project's task runner's file runs one of these build systems in a recipe (its
/// `test` target then runs what [`checks`] runs, and the build system is the project's own way).
pub fn task_file_drives_it(p: &Project) -> bool {
    super::tools::task_files(p).iter().any(|(_, tasks)| {
        tasks
            .targets
            .values()
            .flat_map(|(_, lines)| lines)
            .any(|l| super::tools::runs_build_system(l))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::project;

    fn read(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = project(files);
        let p = Project::read(dir.path());
        (dir, p)
    }

    #[test]
    fn cmake_with_tests_runs_ctest_out_of_tree() {
        let cmake = "project(cJSON C)\n# enable_testing() in a comment is not one\nENABLE_TESTING ()\nadd_subdirectory(tests)\n";
        let (_d, p) = read(&[("CMakeLists.txt", cmake)]);
        let (source, found) = checks(&p).unwrap();
        assert_eq!(source, "cmake");
        assert_eq!(found[0].kind, CheckKind::Test);
        assert_eq!(
            found[0].command,
            "cmake -S . -B \"$RALPH_BUILD_DIR/cmake\" && cmake --build \"$RALPH_BUILD_DIR/cmake\" --parallel \"$(nproc)\" && cd \"$RALPH_BUILD_DIR/cmake\" && ctest --output-on-failure --parallel \"$(nproc)\""
        );
        assert_eq!(found[0].program.as_deref(), Some("cmake"));
        assert!(checks(&read(&[("CMakeLists.txt", "include(CTest)\n")]).1).is_some());
        let untested = "project(x)\n# enable_testing()\nadd_library(x x.c)\n";
        assert!(checks(&read(&[("CMakeLists.txt", untested)]).1).is_none());
    }

    #[test]
    fn meson_with_tests_runs_meson_test_out_of_tree() {
        let meson = "project('x', 'c')\nexe = executable('t', 't.c')\ntest('basic', exe)\n";
        let (source, found) = checks(&read(&[("meson.build", meson)]).1).unwrap();
        assert_eq!(source, "meson");
        assert_eq!(
            found[0].command,
            "meson setup \"$RALPH_BUILD_DIR/meson\" && meson test -C \"$RALPH_BUILD_DIR/meson\" --print-errorlogs"
        );
        let untested = "project('x', 'c')\n# test('no', exe)\n";
        assert!(checks(&read(&[("meson.build", untested)]).1).is_none());
    }

    #[test]
    fn with_cmake_and_meson_the_installed_one_judges_and_the_other_stands_in() {
        let (_d, p) = read(&[
            ("CMakeLists.txt", "enable_testing()\n"),
            ("meson.build", "test('basic', exe)\n"),
        ]);
        let (source, found) = checks_with(&p, &|p| p == "meson").unwrap();
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
        let (source, found) = checks_with(&p, &|_| true).unwrap();
        assert_eq!((source, found[1].name.as_str()), ("cmake", "meson-test"));
        assert_eq!(checks_with(&p, &|_| false).unwrap().0, "cmake");
    }

    #[test]
    fn a_makefile_that_calls_cmake_is_its_driver() {
        let drives = |make: &str| task_file_drives_it(&read(&[("Makefile", make)]).1);
        assert!(drives(
            "test:\n\tcmake -S . -B build\n\tctest --test-dir build\n"
        ));
        assert!(drives("check:\n\tcd build && meson test\n"));
        assert!(!drives("test: all\n\t./cJSON_test\n# cmake is better\n"));
    }
}
