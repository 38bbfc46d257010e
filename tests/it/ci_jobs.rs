//! A CI job as its author meant it, through the binary (docs/checks.md "The checks your CI
//! runs"): a CMake project whose job makes its build folder, exports a variable through
//! `$GITHUB_ENV`, configures, builds and tests in separate steps with a `cd` in each — judged by
//! the job's own steps in order, the real fix accepted and a broken one refused; a template
//! workflow whose trigger is the `$default-branch` placeholder beside it never runs; ralph's
//! own CMake suite runs on the base only, while the CI's can judge.

use crate::common::{commit_all, git};
use crate::compete::{run, Repo, Setup};
use std::path::Path;

const CMAKE: &str = "cmake_minimum_required(VERSION 3.10)
project(calc CXX)
enable_testing()
add_library(calc calc.cpp)
add_executable(test_add tests/test_add.cpp)
target_link_libraries(test_add calc)
add_test(NAME add COMMAND test_add)
add_test(NAME greeting COMMAND sh -c \"test \\\"$GREETING\\\" = hello\")
";

/// The CI: each step starts in the checkout's root; the test sees the build the earlier steps
/// made and the variable one of them exported.
const WORKFLOW: &str = r#"name: CI
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: mkdir build
      - run: echo "GREETING=hello" >> "$GITHUB_ENV"
      - name: Configure
        run: cd build && cmake .. -DCMAKE_BUILD_TYPE=Debug
      - name: Build
        run: cd build && make
      - name: Test
        run: cd build && ctest --output-on-failure
"#;

/// A starter workflow left as it came: its branch is a placeholder, so it never runs — and its
/// test step would fail if it did.
const TEMPLATE: &str = r#"name: CMake on a single platform
on:
  push:
    branches: [ $default-branch ]
  pull_request:
    branches: [ $default-branch ]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Test
        run: ctest --test-dir does-not-exist --no-tests=error
"#;

/// An implementer that adds `mul` (returning `body`) and its test.
fn implementer(body: &str) -> String {
    format!(
        r#"cat > /dev/null
printf 'int mul(int a, int b);\n' >> calc.h
printf 'int mul(int a, int b) {{ return {body}; }}\n' >> calc.cpp
printf '#include "../calc.h"\nint main() {{ return mul(2, 3) == 6 ? 0 : 1; }}\n' > tests/test_mul.cpp
printf 'add_executable(test_mul tests/test_mul.cpp)\ntarget_link_libraries(test_mul calc)\nadd_test(NAME mul COMMAND test_mul)\n' >> CMakeLists.txt
echo '{{"summary":"added mul","checkboxes_completed":["req_1"]}}'"#
    )
}

fn cmake_repo(implementer: &str) -> Repo {
    cmake_repo_in(implementer, None, None)
}

fn cmake_repo_in(implementer: &str, under: Option<&Path>, sandbox: Option<&str>) -> Repo {
    let repo = Repo::with(Setup {
        implementer,
        checks: "",
        under,
        sandbox,
        ..Setup::default()
    });
    for (name, text) in [
        ("CMakeLists.txt", CMAKE),
        ("calc.h", "int add(int a, int b);\n"),
        (
            "calc.cpp",
            "#include \"calc.h\"\nint add(int a, int b) { return a + b; }\n",
        ),
        (
            "tests/test_add.cpp",
            "#include \"../calc.h\"\nint main() { return add(1, 2) == 3 ? 0 : 1; }\n",
        ),
        (".github/workflows/ci.yml", WORKFLOW),
        (".github/workflows/cmake-single-platform.yml", TEMPLATE),
    ] {
        let path = repo.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::remove_file(repo.root.join("test.sh")).unwrap();
    commit_all(
        &repo.root,
        "a calculator built by CMake, tested by its CI job",
    );
    git(&repo.root, &["push", "--quiet", "origin", "main"]);
    repo
}

fn cmake_here() -> bool {
    let there = ["cmake", "make", "c++"].iter().all(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !there {
        eprintln!("skipped: cmake, make or a C++ compiler is not installed");
    }
    there
}

#[test]
fn a_job_configured_built_and_tested_in_steps_judges_the_change_in_order() {
    if !cmake_here() {
        return;
    }
    let repo = cmake_repo(&implementer("a * b"));
    let doctor = run(repo.ralph().args(["doctor", "--json"]));
    assert!(
        doctor.stdout.contains("cmake-single-platform.yml")
            && doctor.stdout.contains("$default-branch"),
        "doctor names the template that never runs: {}",
        doctor.stdout
    );
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{}", out.stderr);
    let text = out.stdout.clone() + &out.stderr;
    assert!(text.contains("CI build: Test"), "{text}");
    // Configure and build prepare the test, in order: they are no checks of their own.
    assert!(!text.contains("CI build: Build"), "{text}");
    assert!(
        !text.contains("does-not-exist"),
        "the template's step ran: {text}"
    );
    assert!(!text.contains("File exists"), "{text}");
    let body = repo.pull_request_body().expect("a pull request");
    assert!(body.contains("CI build: Test"), "{body}");

    // The same change with `mul` wrong: the job's own test refuses it.
    let repo = cmake_repo(&implementer("a + b"));
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("CI build: Test"), "{}", out.stderr);
    assert!(repo.pull_request_body().is_none());
}

#[test]
fn the_same_verdict_with_the_sandbox_required_outside_the_temporary_folder() {
    if !cmake_here() {
        return;
    }
    if let Err(why) = crate::security::bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    let under = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let sandbox = Some("[sandbox]\nmode = \"required\"\n");
    let repo = cmake_repo_in(&implementer("a * b"), Some(under), sandbox);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = cmake_repo_in(&implementer("a + b"), Some(under), sandbox);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("CI build: Test"), "{}", out.stderr);
}
