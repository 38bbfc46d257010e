//! Reading a check's output: the part that explains a failure (the failing tests' names and
//! messages where the runner summarises them — pytest's short summary, cargo's `failures:`
//! section, jest's `●` blocks — else the head and the tail of both streams), and whether the
//! check could not run at all because its tool is missing, whatever wrapper started it (the
//! shell's `not found`, uv's `Failed to spawn`, npx, poetry, pnpm, yarn, `python -m`).

/// The most lines kept of a summary section.
const MAX_SECTION: usize = 60;
/// Lines kept from the start and from the end of a stream without a summary.
const HEAD: usize = 10;
const TAIL: usize = 30;

/// The lines of `text` from the first line `start` matches through the first later line `end`
/// matches (or the end), at most [`MAX_SECTION`] of them.
fn section(text: &str, start: impl Fn(&str) -> bool, end: impl Fn(&str) -> bool) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.iter().position(|l| start(l))?;
    let to = lines[from + 1..]
        .iter()
        .position(|l| end(l))
        .map_or(lines.len(), |i| from + 1 + i + 1);
    let kept: Vec<&str> = lines[from..to].iter().take(MAX_SECTION).copied().collect();
    Some(kept.join("\n"))
}

/// The most lines kept from pytest's `FAILURES` section.
const MAX_FAILURE_LINES: usize = 40;

/// pytest's `FAILURES` section reduced to what says why: each failing test's header, the
/// location lines (`src/x.py:95: TypeError`) and the `E   ` lines with the error itself — then
/// the `short test summary info` (which cuts messages at the terminal's width), through its final
/// `=== … failed … ===` line.
fn pytest(text: &str) -> Option<String> {
    let summary = section(
        text,
        |l| l.starts_with('=') && l.contains("short test summary info"),
        |l| l.starts_with('=') && (l.contains(" failed") || l.contains(" error")),
    )?;
    let why: Vec<&str> = text
        .lines()
        .skip_while(|l| {
            !(l.starts_with('=') && (l.contains(" FAILURES ") || l.contains(" ERRORS ")))
        })
        .take_while(|l| !(l.starts_with('=') && l.contains("short test summary info")))
        .filter(|l| {
            let located = l.split_once(": ").is_some_and(|(at, _)| {
                at.rsplit_once(':')
                    .is_some_and(|(_, n)| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            });
            (l.starts_with("___") && l.ends_with("___")) || l.starts_with("E ") || located
        })
        .take(MAX_FAILURE_LINES)
        .collect();
    Some(if why.is_empty() {
        summary
    } else {
        format!("{}\n{summary}", why.join("\n"))
    })
}

/// cargo test's `failures:` section (each failing test's output, then their names), through
/// `test result:`.
fn cargo(text: &str) -> Option<String> {
    section(
        text,
        |l| l == "failures:",
        |l| l.starts_with("test result:"),
    )
}

/// jest's and vitest's failure blocks (`●` / `FAIL`), through the `Tests:` summary.
fn jest(text: &str) -> Option<String> {
    section(
        text,
        |l| l.trim_start().starts_with("● ") || l.trim_start().starts_with("FAIL "),
        |l| l.trim_start().starts_with("Tests:"),
    )
}

/// The head and tail of a stream, with a marker where lines were dropped.
fn head_tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim().lines().collect();
    if lines.len() <= HEAD + TAIL {
        return lines.join("\n");
    }
    format!(
        "{}\n… ({} lines)\n{}",
        lines[..HEAD].join("\n"),
        lines.len() - HEAD - TAIL,
        lines[lines.len() - TAIL..].join("\n")
    )
}

/// The part of a check's output that explains it.
pub fn explain(stdout: &str, stderr: &str) -> String {
    for text in [stdout, stderr] {
        let found = pytest(text)
            .or_else(|| cargo(text))
            .or_else(|| jest(text))
            .filter(|s| !s.trim().is_empty());
        if let Some(s) = found {
            return s;
        }
    }
    match (stdout.trim().is_empty(), stderr.trim().is_empty()) {
        (true, true) => String::new(),
        (false, true) => head_tail(stdout),
        (true, false) => head_tail(stderr),
        (false, false) => format!("{}\n{}", head_tail(stdout), head_tail(stderr)),
    }
}

/// The tool a failed check could not start, read from what its wrapper said; `None` when the
/// output says nothing of the kind.
pub fn missing_tool(stdout: &str, stderr: &str) -> Option<String> {
    let word = |s: &str| {
        s.trim()
            .trim_matches(|c| c == '`' || c == '\'' || c == '"')
            .to_owned()
    };
    for line in stderr.lines().chain(stdout.lines()) {
        let line = line.trim();
        // uv: `error: Failed to spawn: `ruff``
        if let Some(rest) = line.split("Failed to spawn: ").nth(1) {
            return Some(word(rest));
        }
        // sh / dash / bash: `sh: 1: ruff: not found`, `bash: ruff: command not found`
        if let Some(rest) = line
            .strip_suffix(": command not found")
            .or_else(|| line.strip_suffix(": not found"))
        {
            let shell = line.starts_with("sh:")
                || line.starts_with("bash:")
                || line.starts_with("zsh:")
                || line.starts_with("/bin/sh:");
            if shell {
                return rest.rsplit(": ").next().map(word);
            }
        }
        // make, running a recipe's program itself: `make: tox: No such file or directory`
        if let Some(rest) = line
            .strip_prefix("make: ")
            .and_then(|r| r.strip_suffix(": No such file or directory"))
        {
            if !rest.contains(' ') && !rest.starts_with('*') {
                return Some(word(rest));
            }
        }
        // poetry: `Command not found: ruff`; yarn / pnpm: `Command "ruff" not found`
        if let Some(rest) = line.strip_prefix("Command not found: ") {
            return Some(word(rest));
        }
        if let Some(rest) = line.split("Command \"").nth(1).and_then(|r| {
            r.strip_suffix("\" not found.")
                .or_else(|| r.strip_suffix("\" not found"))
        }) {
            return Some(word(rest));
        }
        // npm / npx: `npm error could not determine executable to run`
        if line.contains("could not determine executable to run") {
            return Some("the npx executable".to_owned());
        }
        // `python -m pytest` without pytest: `/usr/bin/python3: No module named pytest`
        if let Some((interp, module)) = line.split_once(": No module named ") {
            if interp
                .rsplit('/')
                .next()
                .is_some_and(|p| p.starts_with("python"))
            {
                return Some(word(module));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_failures_are_read_from_its_summary() {
        let out = "collected 3 items\n\ntests/test_a.py .F.\n\n=== FAILURES ===\n___ test_b ___\n    assert 1 == 2\nE   assert 1 == 2\n\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_b - assert 1 == 2\n========================= 1 failed, 2 passed in 0.12s ==========================\n";
        assert_eq!(
            explain(out, ""),
            "___ test_b ___\nE   assert 1 == 2\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_b - assert 1 == 2\n========================= 1 failed, 2 passed in 0.12s =========================="
        );
        // cachetools at the parent of its fix for #387, with only the fix's test applied: the
        // summary cuts the message; the error and where it happened come from FAILURES.
        let out = "=================================== FAILURES ===================================\n___________________ AutospecTest.test_autospec_no_warnings ____________________\n\nself = <tests.test_cachedmethod.AutospecTest testMethod=test_autospec_no_warnings>\n\n    def test_autospec_no_warnings(self):\n>           _ = unittest.mock.create_autospec(Cached, instance=True)\n\ntests/test_cachedmethod.py:685: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n    def __get__(self, obj, objtype=None):\nE       TypeError: No '__dict__' attribute on 'NoneType' instance to cache 'get_cond_info' property.\n\nsrc/cachetools/_cachedmethod.py:95: TypeError\n=========================== short test summary info ============================\nFAILED tests/test_cachedmethod.py::AutospecTest::test_autospec_no_warnings - ...\n=================== 1 failed, 276 passed, 2 skipped in 1.18s ===================\n";
        let e = explain(out, "");
        assert!(
            e.starts_with("___________________ AutospecTest.test_autospec_no_warnings ____________________\ntests/test_cachedmethod.py:685: \nE       TypeError: No '__dict__' attribute on 'NoneType' instance to cache 'get_cond_info' property.\nsrc/cachetools/_cachedmethod.py:95: TypeError\n=========="),
            "{e}"
        );
        assert!(e.ends_with("1 failed, 276 passed, 2 skipped in 1.18s ==================="));
    }

    #[test]
    fn cargo_failures_keep_the_panic_and_the_name() {
        let out = "running 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n\nfailures:\n\n---- tests::b stdout ----\n\nthread 'tests::b' panicked at src/lib.rs:9:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n\n\nfailures:\n    tests::b\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n\n";
        let err = "   Compiling x v0.1.0\nerror: test failed, to rerun pass `--lib`\n";
        let e = explain(out, err);
        assert!(
            e.starts_with("failures:\n\n---- tests::b stdout ----"),
            "{e}"
        );
        assert!(e.contains("panicked at src/lib.rs:9:5") && e.contains("    tests::b"));
        assert!(e.ends_with("test result: FAILED. 1 passed; 1 failed; 0 ignored"));
    }

    #[test]
    fn jest_blocks_and_plain_output() {
        let out = "PASS src/a.test.js\nFAIL src/b.test.js\n  ● greets\n\n    expect(received).toBe(expected)\n\nTests:       1 failed, 3 passed, 4 total\n";
        assert!(explain(out, "").starts_with("FAIL src/b.test.js\n  ● greets"));
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let e = explain("", &long);
        assert!(e.starts_with("line 1\n") && e.contains("… (60 lines)") && e.ends_with("line 100"));
        assert_eq!(explain("ok\n", "warn\n"), "ok\nwarn");
    }

    #[test]
    fn missing_tools_are_found_behind_every_wrapper() {
        let cases = [
            ("", "error: Failed to spawn: `ruff`\n  Caused by: No such file or directory (os error 2)", "ruff"),
            ("", "sh: 1: mypy: not found", "mypy"),
            ("", "bash: line 1: eslint: command not found", "eslint"),
            ("Command not found: black", "", "black"),
            ("", "error Command \"tsc\" not found.", "tsc"),
            ("", "/usr/bin/python3: No module named pytest", "pytest"),
            ("", "npm error could not determine executable to run", "the npx executable"),
            // `make test` whose recipe is `tox` (sqlparse's Makefile), and one through the shell.
            ("tox -e py\n", "make: tox: No such file or directory\nmake: *** [Makefile:6: test] Error 127", "tox"),
            ("", "/bin/sh: 1: tox: not found\nmake: *** [Makefile:2: test] Error 127", "tox"),
        ];
        for (out, err, tool) in cases {
            assert_eq!(missing_tool(out, err).as_deref(), Some(tool), "{err}{out}");
        }
        assert_eq!(
            missing_tool("FAILED test_x - KeyError: not found", ""),
            None
        );
        assert_eq!(missing_tool("", "error: value not found"), None);
        // A file a recipe reads is not a program.
        assert_eq!(
            missing_tool("", "make: *** No rule to make target 'x.c'.  Stop."),
            None
        );
    }
}
