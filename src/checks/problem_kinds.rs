//! The kinds of problems a linter reported, by its rule: clippy's and rustc's diagnostics (by
//! their code, else by their message with the quoted parts left out), ruff's, flake8's and
//! pylint's rule codes, ESLint's rule ids. A lint check that fails on the base is held to the
//! rules the base keeps: a change that adds findings only of rules the base already breaks
//! (today's clippy flags a style the whole file uses) is no worse; one that breaks a rule the
//! base keeps is. Type checkers and formatters give no kinds here: they stay counted.

use std::collections::BTreeMap;

/// Each rule's finding count in a lint's output; `None` when no line names a rule.
pub fn problem_kinds(stdout: &str, stderr: &str) -> Option<BTreeMap<String, u64>> {
    let mut kinds = BTreeMap::new();
    for text in [stdout, stderr] {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).copied().unwrap_or("");
            let kind = rustc_kind(line, next)
                .or_else(|| located_code(line))
                .or_else(|| eslint_rule(line));
            if let Some(k) = kind {
                *kinds.entry(k).or_insert(0) += 1;
            }
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// A rustc or clippy diagnostic's header (`error: this `map_or` can be simplified`, `warning:
/// unused variable: `x``, `error[E0308]: mismatched types`) when the next line points into the
/// source (`  --> src/x.rs:5:5`): its code, else its message with each quoted part as `…`.
fn rustc_kind(line: &str, next: &str) -> Option<String> {
    if !next.trim_start().starts_with("--> ") {
        return None;
    }
    let rest = line
        .strip_prefix("error")
        .or_else(|| line.strip_prefix("warning"))?;
    if let Some(code) = rest.strip_prefix('[') {
        let code = code.split(']').next()?;
        return Some(code.to_owned());
    }
    let message = rest.strip_prefix(": ")?;
    let mut out = String::new();
    for (i, part) in message.split('`').enumerate() {
        out.push_str(if i % 2 == 1 { "`…`" } else { part });
    }
    Some(out)
}

/// The rule code after a location: `src/a.py:3:1: E501 Line too long` (ruff, flake8) or
/// `a.py:1:0: C0114: Missing module docstring` (pylint).
fn located_code(line: &str) -> Option<String> {
    let mut parts = line.splitn(4, ':');
    let (path, row, col, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if path.is_empty() || path.contains(' ') || !digits(row) || !digits(col) {
        return None;
    }
    let code = rest.split_whitespace().next()?.trim_end_matches(':');
    is_rule_code(code).then(|| code.to_owned())
}

/// A code of letters then digits: `E501`, `PLR0913`, `C0114`, `ANN001`.
fn is_rule_code(s: &str) -> bool {
    let letters = s.chars().take_while(|c| c.is_ascii_uppercase()).count();
    let digits = s.len() - letters;
    (1..=4).contains(&letters)
        && (2..=5).contains(&digits)
        && s[letters..].chars().all(|c| c.is_ascii_digit())
}

/// ESLint's stylish line `  12:5  error  'x' is defined but never used  no-unused-vars`: the
/// rule id at its end.
fn eslint_rule(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (at, level, rule) = (words.first()?, words.get(1)?, words.last()?);
    let located = at.split_once(':').is_some_and(|(r, c)| {
        [r, c]
            .iter()
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
    });
    let rule_like = rule
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-/@".contains(c))
        && rule.contains('-');
    (located && matches!(*level, "error" | "warning") && words.len() >= 4 && rule_like)
        .then(|| (*rule).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(out: &str) -> Vec<(String, u64)> {
        problem_kinds(out, "")
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    #[test]
    fn clippy_and_rustc_diagnostics_are_kinds_by_code_or_by_message() {
        let out = "error: this `map_or` can be simplified\n --> src/value/partial_eq.rs:5:5\n  |\nerror: this `map_or` can be simplified\n  --> src/value/partial_eq.rs:14:29\nerror: unexpected `cfg` condition name: `no_btreemap_retain`\n   --> src/map.rs:279:15\nerror[E0308]: mismatched types\n --> src/lib.rs:1:1\nwarning: unused variable: `x`\n --> src/lib.rs:3:9\nerror: could not compile `serde_json` (lib) due to 37 previous errors\n";
        assert_eq!(
            kinds(out),
            [
                ("E0308".to_owned(), 1),
                ("this `…` can be simplified".to_owned(), 2),
                ("unexpected `…` condition name: `…`".to_owned(), 1),
                ("unused variable: `…`".to_owned(), 1),
            ]
        );
    }

    #[test]
    fn ruff_flake8_pylint_and_eslint_rules_are_kinds() {
        let out = "src/a.py:3:1: E501 Line too long (99 > 88)\nsrc/a.py:9:1: F401 [*] `os` imported but unused\nb.py:1:0: C0114: Missing module docstring (missing-module-docstring)\n/repo/src/x.js\n  12:5  error  'x' is defined but never used  no-unused-vars\n  14:1  warning  Unexpected console statement  no-console\n\n✖ 2 problems (1 error, 1 warning)\n";
        assert_eq!(
            kinds(out),
            [
                ("C0114".to_owned(), 1),
                ("E501".to_owned(), 1),
                ("F401".to_owned(), 1),
                ("no-console".to_owned(), 1),
                ("no-unused-vars".to_owned(), 1),
            ]
        );
    }

    #[test]
    fn outputs_that_name_no_rule_have_no_kinds() {
        // mypy (its codes judge types: counted), a formatter's diff, a summary line.
        for out in [
            "src/a.py:3: error: Argument 1 has incompatible type \"str\"  [arg-type]\nFound 1 error in 1 file\n",
            "Diff in /repo/src/lib.rs at line 3:\n",
            "1 file would be reformatted\n",
            "src/a.py:3:1: this line has no code\n",
        ] {
            assert_eq!(problem_kinds(out, ""), None, "{out}");
        }
        assert!(is_rule_code("PLR0913") && !is_rule_code("E") && !is_rule_code("error"));
    }
}
