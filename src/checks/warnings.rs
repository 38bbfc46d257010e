//! Warnings are the lint's business: a CI test step that makes warnings errors
//! (`RUSTFLAGS=-Dwarnings`, `-Werror`, `PYTHONWARNINGS=error`, `--deny warnings`,
//! `CMAKE_COMPILE_WARNING_AS_ERROR`) is run for its tests with warnings allowed — today's
//! compiler warns about a years-old base in ways its authors never saw, and one such warning
//! would fail every test at once — and the warnings it prints are judged by rule, as lints are:
//! a change may not bring a warning of a rule the base keeps.

use std::collections::BTreeMap;

/// Variables whose value lists compiler flags.
const FLAG_VARS: [&str; 6] = [
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
];

/// `script` and `env` with warnings allowed, and what was taken off (`RUSTFLAGS=-Dwarnings`);
/// `None` when they do not make warnings errors.
pub fn allow(script: &str, env: &mut BTreeMap<String, String>) -> Option<(String, String)> {
    let mut taken = Vec::new();
    for var in FLAG_VARS {
        if let Some(value) = env.get(var) {
            let (kept, off) = without_error_flags(value);
            if !off.is_empty() {
                taken.push(format!("{var}={}", off.join(" ")));
                if kept.trim().is_empty() {
                    env.remove(var);
                } else {
                    env.insert(var.to_owned(), kept);
                }
            }
        }
    }
    if let Some(value) = env.get("PYTHONWARNINGS") {
        let kept: Vec<&str> = value
            .split(',')
            .filter(|w| !w.trim().starts_with("error"))
            .collect();
        if kept.len() != value.split(',').count() {
            taken.push(format!("PYTHONWARNINGS={value}"));
            if kept.is_empty() {
                env.remove("PYTHONWARNINGS");
            } else {
                env.insert("PYTHONWARNINGS".into(), kept.join(","));
            }
        }
    }
    let (script, off) = script_allowing(script);
    taken.extend(off);
    (!taken.is_empty()).then(|| (script, taken.join(", ")))
}

/// The flags of `value` that make warnings errors taken off: the rest, and what was.
fn without_error_flags(value: &str) -> (String, Vec<String>) {
    let words: Vec<&str> = value.split_whitespace().collect();
    let (mut kept, mut off) = (Vec::new(), Vec::new());
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let pair = words.get(i + 1).copied();
        if matches!(*w, "-D" | "--deny") && pair == Some("warnings") {
            off.push(format!("{w} warnings"));
            i += 2;
            continue;
        }
        if matches!(*w, "-Dwarnings" | "--deny=warnings" | "-Werror") {
            off.push((*w).to_owned());
        } else {
            kept.push(*w);
        }
        i += 1;
    }
    (kept.join(" "), off)
}

/// Spellings in a script that make warnings errors, and what each becomes.
const IN_SCRIPTS: [(&str, &str); 8] = [
    ("-Dwarnings", ""),
    ("-D warnings", ""),
    ("--deny warnings", ""),
    ("--deny=warnings", ""),
    ("-Werror", ""),
    ("-W error", ""),
    (
        "CMAKE_COMPILE_WARNING_AS_ERROR=ON",
        "CMAKE_COMPILE_WARNING_AS_ERROR=OFF",
    ),
    ("--compile-warning-as-error", ""),
];

/// `script` with the spellings of [`IN_SCRIPTS`] taken off where they stand as words (not
/// `-Werror=format-security`, which asks for one warning's error on purpose).
fn script_allowing(script: &str) -> (String, Vec<String>) {
    let mut out = script.to_owned();
    let mut off = Vec::new();
    for (spelling, instead) in IN_SCRIPTS {
        let mut from = 0;
        while let Some(at) = out[from..].find(spelling).map(|a| a + from) {
            let end = at + spelling.len();
            let before_ok = at == 0
                || out[..at].ends_with([' ', '"', '\'', '=', '\t', '\n'])
                || out[..at].ends_with("-D");
            let after_ok =
                out[end..].is_empty() || out[end..].starts_with([' ', '"', '\'', '\n', '\t', ';']);
            if before_ok && after_ok {
                out.replace_range(at..end, instead);
                if !off.iter().any(|o| o == spelling) {
                    off.push(spelling.to_owned());
                }
                from = at + instead.len();
            } else {
                from = end;
            }
        }
    }
    (out, off)
}

/// The warnings a test run printed, by rule: rustc's (`warning: unused variable: `x`` then
/// `--> src/lib.rs:3:9`, by its message with the quoted parts left out, or its code), GCC's and
/// Clang's (`x.c:3:5: warning: unused variable 'y' [-Wunused-variable]`, by the flag), Python's
/// (`x.py:3: DeprecationWarning: …`, by the category).
pub fn by_rule(stdout: &str, stderr: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for text in [stdout, stderr] {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if let Some(rule) = rule_of(line.trim_end(), next) {
                *out.entry(rule).or_insert(0) += 1;
            }
        }
    }
    out
}

/// The rule of one warning line, if it is one.
fn rule_of(line: &str, next: &str) -> Option<String> {
    // rustc: the header, with the source it points into on the next line.
    if line.starts_with("warning") {
        return crate::checks::tools::rustc_rule(line, next);
    }
    // GCC and Clang: `file:line:col: warning: message [-Wflag]`.
    if line.contains(": warning: ") {
        let flag = line.rsplit_once(" [-W")?.1.strip_suffix(']')?;
        return Some(format!("-W{flag}"));
    }
    // Python's warnings module: `file.py:12: SomethingWarning: message`.
    let (place, rest) = line.split_once(": ")?;
    let category = rest.split(':').next()?;
    (place.contains(".py:")
        && category.ends_with("Warning")
        && category
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.'))
    .then(|| category.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn warnings_made_errors_are_allowed_wherever_they_are_spelled() {
        let mut e = env(&[("RUSTFLAGS", "-Dwarnings"), ("CARGO_TERM_COLOR", "always")]);
        let (script, off) = allow("cargo test --features float_roundtrip", &mut e).unwrap();
        assert_eq!(script, "cargo test --features float_roundtrip");
        assert_eq!(off, "RUSTFLAGS=-Dwarnings");
        assert_eq!(e, env(&[("CARGO_TERM_COLOR", "always")]));

        let mut e = env(&[
            ("RUSTFLAGS", "--cfg x -D warnings"),
            ("PYTHONWARNINGS", "error,ignore::ResourceWarning"),
        ]);
        let (_, off) = allow("pytest", &mut e).unwrap();
        assert_eq!(e["RUSTFLAGS"], "--cfg x");
        assert_eq!(e["PYTHONWARNINGS"], "ignore::ResourceWarning");
        assert!(off.contains("RUSTFLAGS=-D warnings") && off.contains("PYTHONWARNINGS=error"));

        let mut e = BTreeMap::new();
        let (script, off) = allow(
            "cmake -B build -DCMAKE_CXX_FLAGS=\"-Wall -Werror\" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON && python -W error -m pytest",
            &mut e,
        )
        .unwrap();
        assert_eq!(
            script,
            "cmake -B build -DCMAKE_CXX_FLAGS=\"-Wall \" -DCMAKE_COMPILE_WARNING_AS_ERROR=OFF && python  -m pytest"
        );
        assert_eq!(off, "-Werror, -W error, CMAKE_COMPILE_WARNING_AS_ERROR=ON");
        let (script, _) = allow("RUSTFLAGS='-Dwarnings' cargo test", &mut e).unwrap();
        assert_eq!(script, "RUSTFLAGS='' cargo test");
    }

    #[test]
    fn a_step_that_keeps_warnings_as_warnings_is_left_as_it_is() {
        let mut e = env(&[
            ("RUSTFLAGS", "--cfg tokio_unstable"),
            ("CFLAGS", "-O2 -Werror=format-security"),
        ]);
        assert_eq!(allow("make check CFLAGS=-Werror=vla", &mut e), None);
        assert_eq!(e["CFLAGS"], "-O2 -Werror=format-security");
        assert_eq!(
            allow("cargo test -- --nocapture", &mut BTreeMap::new()),
            None
        );
    }

    #[test]
    fn warnings_are_read_by_rule_from_each_compiler() {
        let rustc = "warning: unused variable: `x`\n  --> src/lib.rs:3:9\n   |\nwarning: unused variable: `y`\n --> src/lib.rs:4:9\nwarning[E0601]: odd\n --> a.rs:1:1\nwarning: `serde_json` (lib) generated 2 warnings\n";
        let gcc = "src/a.c:3:5: warning: unused variable 'y' [-Wunused-variable]\nsrc/b.cpp:9:1: warning: no return [-Wreturn-type]\nIn file included from x.h:1:\n";
        let py =
            "tests/test_a.py:12: DeprecationWarning: datetime.utcnow() is deprecated\n  x = 1\n";
        let rules = by_rule(rustc, &format!("{gcc}{py}"));
        assert_eq!(
            rules,
            [
                ("-Wreturn-type", 1),
                ("-Wunused-variable", 1),
                ("DeprecationWarning", 1),
                ("E0601", 1),
                ("unused variable: `…`", 2),
            ]
            .into_iter()
            .map(|(k, n)| (k.to_owned(), n))
            .collect()
        );
        assert!(by_rule("test a ... ok\nerror: warning: not one\n", "").is_empty());
    }
}
