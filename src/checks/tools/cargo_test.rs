//! `cargo test`: every test binary run even after one fails (`--no-fail-fast`, or one failing
//! binary would hide every test after it, on the base and after the change alike); its tests named
//! `<test binary>::<module path>` from its `test <name> ... ok|FAILED` lines, the binary by the
//! source file cargo announces (`Running tests/it.rs (…)`; with `--verbose`, by the target's name
//! — never a compiler line taken for a binary); one test run alone by `-- --exact`.

use super::found::Found;
use super::shell::Call;
use super::tool::{Alone, Env, Lang, Missed, Prepared, Printed, Role, Tool};
use crate::checks::outcomes::TestOutcomes;
use crate::checks::project::Project;
use std::path::Path;

pub struct CargoTest;

impl Tool for CargoTest {
    fn name(&self) -> &'static str {
        "cargo test"
    }

    fn role(&self) -> Role {
        Role::Tests(Lang::Rust)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "cargo" && subcommand(call) == "test"
    }

    fn former_names(&self) -> &'static [&'static str] {
        &["cargo"]
    }

    fn detect(&self, env: &Env) -> Vec<Found> {
        if !env.project.is_file("Cargo.toml") {
            return Vec::new();
        }
        let mut check = Found::new("test", "cargo test").because("a Cargo.toml");
        check.kind = super::found::CheckKind::Test;
        vec![check]
    }

    fn lock(&self, _: &Call) -> Option<&'static str> {
        Some("cargo")
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        project.is_file("Cargo.toml").then_some(Lang::Rust)
    }

    /// The crates the checks build, downloaded: checks may not write the registry cache (a
    /// build script could poison what the user builds next), so they need them before; without
    /// a network, those already in the cache do (`--offline`). A lock file the project does not
    /// keep is not left behind: it would look like part of the change.
    fn setup(&self, project: &Project) -> Option<(String, String)> {
        self.manages(project)?;
        let command = if project.is_file("Cargo.lock") {
            "cargo fetch || cargo fetch --offline"
        } else {
            "(cargo fetch || cargo fetch --offline) && rm -f Cargo.lock"
        };
        Some((
            command.to_owned(),
            "a Cargo.toml: the crates the checks build are downloaded first".to_owned(),
        ))
    }

    fn prepare(&self, run: &mut Prepared, _: &Path) {
        run.command = no_fail_fast(&quiet(&run.command));
        if run.get("CARGO_TERM_VERBOSE").is_none() {
            run.set("CARGO_TERM_VERBOSE", "false");
        }
    }

    /// `--test <name>` for each of the package's own integration test files (`tests/<name>.rs`
    /// at the top), where words added reach cargo test and go to cargo, not to the binaries
    /// (no `--` yet). Other Rust files (a module's unit tests, a workspace member's) wait for the
    /// suite; without such a file, `None`.
    fn files(&self, command: &str, files: &[&str], uses: &super::tool::Uses) -> Option<String> {
        if command.split_whitespace().any(|w| w == "--") {
            return None;
        }
        let targets: Vec<&str> = files
            .iter()
            .filter_map(|f| {
                f.strip_prefix("tests/")
                    .and_then(|n| n.strip_suffix(".rs"))
                    .filter(|n| super::shell::word(n))
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        let mut words = Vec::new();
        for t in &targets {
            words.extend(["--test", t]);
        }
        let tail = uses.tail.filter(|t| t.tool == self.name())?;
        Some(tail.append(command, &words))
    }

    fn tests(&self, printed: &Printed) -> Option<TestOutcomes> {
        read(printed.stdout, printed.stderr)
    }

    fn example_id(&self) -> Option<&'static str> {
        Some("tests/calc.rs::adds")
    }

    fn alone(
        &self,
        command: &str,
        id: &str,
        _: &[(String, String)],
        _: &super::tool::Uses,
    ) -> Option<Alone> {
        let plain = command.trim_start().starts_with("cargo test") && super::shell::plain(command);
        let (binary, name) = id.split_once("::")?;
        // A test path is Rust identifiers and `::`; anything else is not appended to a command
        // (a doc test, a name a report made up).
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

    fn excerpt(&self, text: &str) -> Option<String> {
        super::excerpt::section(
            text,
            |l| l == "failures:",
            |l| l.starts_with("test result:"),
        )
    }

    fn missed(&self, test: &Missed) -> Option<String> {
        let file = test.file;
        Some(match test.feature {
            Some(f) => feature_hint(f, file, test),
            None => format!(
                "no check's cargo test ran it: does a check build {file}'s target (e.g. `cargo test --all-targets --workspace`)?"
            ),
        })
    }
}

/// cargo's subcommand in a call: its first word that is neither a flag nor a `+toolchain`.
pub(super) fn subcommand(call: &Call) -> &str {
    call.args
        .iter()
        .find(|a| !a.starts_with('-') && !a.starts_with('+'))
        .map_or("", String::as_str)
}

/// `command` without cargo's own `--verbose` (`-v`, `-vv`) in its `cargo test` runs: verbose,
/// cargo names each test binary by its target, not its source file, and the tests of a new file
/// would not be found by the path they have. What the tests do is unchanged. A command with
/// quotes is left as it is.
pub fn quiet(command: &str) -> String {
    if command.contains(['\'', '"', '\\']) {
        return command.to_owned();
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut in_test = false;
    for (i, w) in words.iter().enumerate() {
        if matches!(*w, "&&" | "||" | ";" | "|" | "--") || w.ends_with(';') {
            in_test = false;
        } else if *w == "test"
            && i > 0
            && words[..i].iter().rev().find(|p| !p.starts_with('+')) == Some(&"cargo")
        {
            in_test = true;
        } else if in_test && matches!(*w, "-v" | "-vv" | "-vvv" | "--verbose") {
            continue;
        }
        out.push(w);
    }
    if out.len() == words.len() {
        return command.to_owned();
    }
    out.join(" ")
}

/// `command` with `--no-fail-fast` after each `cargo test` in it. Whether the command fails
/// is unchanged.
fn no_fail_fast(command: &str) -> String {
    if command.contains("--no-fail-fast") {
        return command.to_owned();
    }
    let mut out = String::with_capacity(command.len() + 16);
    let mut rest = command;
    while let Some(at) = rest.find("cargo test") {
        let end = at + "cargo test".len();
        let starts = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '&' | ';' | '|' | '(' | '`' | '\''));
        let ends = rest[end..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '&' | ';' | '|' | ')' | '\''));
        out.push_str(&rest[..end]);
        if starts && ends {
            out.push_str(" --no-fail-fast");
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The test binary a line of cargo's announces: `Running tests/x.rs (target/…)`, `Running
/// unittests src/lib.rs (…)`, `Doc-tests name`; with `--verbose`, `Running
/// \`…/deps/<target>-<hash>\`` by its target's name. A compiler's or rustdoc's line is none.
fn announced_binary(line: &str) -> Option<String> {
    if let Some(rest) = line.strip_prefix("Running ") {
        if let Some(quoted) = rest.strip_prefix('`') {
            let program = quoted.split(['`', ' ']).next()?;
            let (dir, file) = program.rsplit_once('/')?;
            if !dir.ends_with("/deps") {
                return None;
            }
            let target = file.rsplit_once('-').map_or(file, |(t, _)| t);
            return Some(target.to_owned());
        }
        let rest = rest.trim_start_matches("unittests ");
        return Some(rest.split(" (").next().unwrap_or(rest).to_owned());
    }
    line.strip_prefix("Doc-tests ")
        .map(|name| format!("doc-tests {}", name.trim()))
}

/// Whether `line` is a `Running` line of a compiler or tool, not a test binary.
fn builds(line: &str) -> bool {
    line.starts_with("Running `") && announced_binary(line).is_none()
}

/// cargo test's `test <name> ... ok|FAILED` lines, named by the test binary they ran in.
///
/// cargo announces each binary on stderr and its tests print on stdout, and the two streams are
/// read apart: the binaries are taken in the order stderr announced them, one for each `running
/// N tests` header on stdout (where a stream holds both, as with `2>&1`, the announcement
/// itself names the binary).
pub fn read(stdout: &str, stderr: &str) -> Option<TestOutcomes> {
    let mut t = TestOutcomes::named("cargo test");
    let announced: Vec<String> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !builds(l))
        .filter_map(announced_binary)
        .collect();
    let mut queue = announced.into_iter();
    for (text, queued) in [(stdout, true), (stderr, false)] {
        let mut binary = String::new();
        let mut named_here = false;
        for line in text.lines() {
            let line = line.trim();
            if builds(line) {
                continue;
            }
            if let Some(b) = announced_binary(line) {
                binary = b;
                named_here = true;
                continue;
            }
            if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test"))
            {
                if queued && !named_here {
                    binary = queue.next().unwrap_or_default();
                }
                named_here = false;
                continue;
            }
            let Some((name, outcome)) = line
                .strip_prefix("test ")
                .and_then(|rest| rest.rsplit_once(" ... "))
            else {
                continue;
            };
            match outcome.trim() {
                "ok" => t.record(format!("{binary}::{name}"), true),
                "FAILED" => t.record(format!("{binary}::{name}"), false),
                _ => {}
            }
        }
    }
    t.finished()
}

/// Whether the cargo command `command` builds with the feature `feature`.
fn enables(command: &str, feature: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    words.iter().enumerate().any(|(i, w)| {
        let list = match w.strip_prefix("--features=") {
            Some(l) => Some(l),
            None if *w == "--features" || *w == "-F" => words.get(i + 1).copied(),
            None => None,
        };
        *w == "--all-features"
            || list.is_some_and(|l| {
                l.trim_matches(['"', '\''])
                    .split([',', ' '])
                    .any(|x| x == feature || x.ends_with(&format!("/{feature}")))
            })
    })
}

/// What would run a Rust test compiled only with the cargo feature `f`: a check with the feature
/// whose report lacks it, else one that failed on the base as a whole, else none at all.
fn feature_hint(f: &str, file: &str, test: &Missed) -> String {
    if let Some(c) = test.reporting.iter().find(|c| enables(c.command, f)) {
        return format!(
            "it is compiled only with the cargo feature `{f}`, which `{}` enables, and its report does not name it: is {file} a module of a test target of that package?",
            c.name
        );
    }
    // The check that would run it cannot judge: it failed on the base as a whole.
    let broken = test
        .checks
        .iter()
        .find(|c| c.failing_on_base && enables(c.command, f));
    match broken {
        Some(c) => format!(
            "it is compiled only with the cargo feature `{f}`, and `{}`, which enables it, fails on the base without naming a test (see its output there): name a check under [checks] that runs `cargo test --features {f}` and passes on the base",
            c.name
        ),
        None => format!(
            "it is compiled only with the cargo feature `{f}`: a check must run `cargo test --features {f}` (name one under [checks], or in the CI workflow ralph reads)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_binary_runs_after_a_failure() {
        assert_eq!(no_fail_fast("cargo test"), "cargo test --no-fail-fast");
        assert_eq!(
            no_fail_fast("cargo test --features x && (cd b && cargo test)"),
            "cargo test --no-fail-fast --features x && (cd b && cargo test --no-fail-fast)"
        );
        assert_eq!(no_fail_fast("cargo test-all"), "cargo test-all");
        assert_eq!(
            no_fail_fast("cargo test --no-fail-fast"),
            "cargo test --no-fail-fast"
        );
        assert_eq!(no_fail_fast("pytest"), "pytest");
    }

    #[test]
    fn cargos_own_verbose_is_left_out_of_its_test_runs() {
        assert_eq!(
            quiet("cargo test --verbose --workspace"),
            "cargo test --workspace"
        );
        assert_eq!(
            quiet("cargo +nightly test -v && cargo build -v"),
            "cargo +nightly test && cargo build -v"
        );
        assert_eq!(quiet("cargo test -- -v"), "cargo test -- -v");
        assert_eq!(
            quiet("cargo test --features \"a b\" -v"),
            "cargo test --features \"a b\" -v"
        );
        assert_eq!(quiet("pytest -v"), "pytest -v");
    }

    #[test]
    fn tests_are_named_by_their_binary() {
        // As captured: cargo's announcements on stderr, the tests on stdout, one block each.
        let err = "     Running unittests src/lib.rs (target/debug/deps/x-1)\n     Running tests/borsh.rs (target/debug/deps/borsh-2)\n     Running tests/it/main.rs (target/debug/deps/it-3)\n   Doc-tests x\n";
        let out = "\nrunning 1 test\ntest a::lib_ok ... ok\n\ntest result: ok. 1 passed\n\nrunning 2 tests\ntest array_vec::test_empty ... ok\ntest array_string::test_empty ... ok\n\ntest result: ok. 2 passed\n\nrunning 3 tests\ntest a::b ... ok\ntest a::c ... FAILED\ntest a::d ... ignored\n\ntest result: FAILED. 1 passed; 1 failed\n\nrunning 1 test\ntest src/lib.rs - f (line 3) ... ok\n";
        let t = read(out, err).unwrap();
        assert_eq!(t.failed.iter().next().unwrap(), "tests/it/main.rs::a::c");
        assert!(t.passed.contains("src/lib.rs::a::lib_ok"));
        assert!(t.passed.contains("tests/borsh.rs::array_vec::test_empty"));
        assert!(t.passed.contains("doc-tests x::src/lib.rs - f (line 3)"));
        assert_eq!((t.passed_count, t.failed_count), (5, 1));
        // Both in one stream (`2>&1`): the announcements name the blocks themselves.
        let merged = "     Running unittests src/lib.rs (x)\n\nrunning 1 test\ntest a::lib_ok ... ok\n     Running tests/borsh.rs (y)\n\nrunning 1 test\ntest m::t ... FAILED\n";
        let t = read(merged, "").unwrap();
        assert!(t.passed.contains("src/lib.rs::a::lib_ok"), "{t:?}");
        assert!(t.failed.contains("tests/borsh.rs::m::t"), "{t:?}");
        assert!(read("no tests here", "").is_none());
    }

    #[test]
    fn a_verbose_run_names_its_binaries_by_target_never_by_a_compiler_line() {
        // A workspace's `cargo test --verbose --no-fail-fast`, as captured (lines cut).
        let err = "   Compiling a v0.1.0 (/tmp/vt/ws/a)\n     Running `/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc --crate-name a --edition=2024 a/src/lib.rs --error-format=json`\n     Running `/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc --crate-name it --edition=2024 a/tests/it.rs`\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.61s\n     Running `/tmp/vt/ws/target/debug/deps/a-3110576fc3c3c96d`\n     Running `/tmp/vt/ws/target/debug/deps/it-e9084a9c25208d2e`\nerror: test failed, to rerun pass `-p a --test it`\n     Running `/tmp/vt/ws/target/debug/deps/b-d297d743c1d6421f`\n   Doc-tests a\n     Running `/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustdoc --edition=2024 --crate-type lib --crate-name a --test a/src/lib.rs`\n   Doc-tests b\n     Running `/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustdoc --edition=2024 --crate-name b --test b/src/lib.rs`\n";
        let out = "\nrunning 1 test\ntest tests::it_works ... ok\n\ntest result: ok. 1 passed; 0 failed\n\n\nrunning 2 tests\ntest it_ok ... ok\ntest it_bad ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed\n\n\nrunning 1 test\ntest tests::it_works ... ok\n\ntest result: ok. 1 passed\n\n\nrunning 0 tests\n\ntest result: ok. 0 passed\n\n\nrunning 0 tests\n\ntest result: ok. 0 passed\n";
        let t = read(out, err).unwrap();
        let passed: Vec<&String> = t.passed.iter().collect();
        assert_eq!(
            passed,
            ["a::tests::it_works", "b::tests::it_works", "it::it_ok"]
        );
        assert_eq!(t.failed.iter().collect::<Vec<_>>(), ["it::it_bad"]);
    }

    #[test]
    fn one_test_is_run_alone_by_exact() {
        let a = CargoTest
            .alone(
                "cargo test --features x",
                "tests/it.rs::a::b",
                &[],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(a.command, "cargo test --features x -- --exact a::b");
        let a = CargoTest
            .alone(
                "cargo test -- --nocapture",
                "src/lib.rs::t",
                &[],
                &crate::checks::tools::Uses::default(),
            )
            .unwrap();
        assert_eq!(a.command, "cargo test -- --nocapture --exact t");
        // Not a plain cargo test, a doc test, a made-up name: not known how.
        for (command, id) in [
            ("cargo test && cargo test --features x", "a::b"),
            ("cargo test", "doc-tests x::src/lib.rs - f (line 3)"),
            ("cargo test", "tests/a.rs::x;touch${IFS}y"),
        ] {
            assert!(
                CargoTest
                    .alone(command, id, &[], &crate::checks::tools::Uses::default())
                    .is_none(),
                "{command} {id}"
            );
        }
    }

    #[test]
    fn it_is_known_by_its_subcommand() {
        assert!(CargoTest.is(&Call::of(&["cargo", "+nightly", "test"]), None));
        assert!(!CargoTest.is(&Call::of(&["cargo", "clippy"]), None));
        assert!(enables("cargo test --features a,b", "b"));
        assert!(enables("cargo test --all-features", "x"));
        assert!(!enables("cargo test", "x"));
    }

    #[test]
    fn the_changes_integration_test_files_run_as_their_targets() {
        let uses = super::super::recognise("cargo test --workspace", None);
        assert_eq!(
            CargoTest.files(
                "cargo test --workspace",
                &["tests/calc.rs", "tests/io_2.rs"],
                &uses
            ),
            Some("cargo test --workspace --test calc --test io_2".into())
        );
        assert_eq!(
            CargoTest.files("cargo test --workspace", &["src/lib.rs"], &uses),
            None
        );
        assert_eq!(
            CargoTest.files("cargo test --workspace", &["crates/a/tests/calc.rs"], &uses),
            None
        );
        let to_binaries = super::super::recognise("cargo test -- --nocapture", None);
        assert_eq!(
            CargoTest.files(
                "cargo test -- --nocapture",
                &["tests/calc.rs"],
                &to_binaries
            ),
            None
        );
    }
}
