//! The stages' questions to a check's tools: what the run tested (each workspace package's
//! part by the runners, else a plain format), its findings by rule and their count, the program
//! it could not start, how one failing test runs again alone and how the change's test files run
//! first, what would have run a test no check ran.

use super::{call, plain, Lang, Missed, Printed, Role, Tool, Uses, TOOLS};
use crate::checks::outcomes::{self, TestOutcomes};
use crate::checks::project::Project;
use std::collections::BTreeMap;

/// The line with which a tool of `uses` says the run tested nothing, when one does.
pub fn ran_no_test<'a>(uses: &Uses, printed: &Printed<'a>) -> Option<&'a str> {
    uses.asked().iter().find_map(|t| t.ran_no_test(printed))
}

/// The tests a run names, read by the check's tools (each workspace package's part by the
/// runners, its tests under the package's folder); `None` when no tool names any.
pub fn read_tests(uses: &Uses, printed: &Printed) -> Option<TestOutcomes> {
    let asked = uses.asked();
    let runners: Vec<&dyn Tool> = asked
        .iter()
        .copied()
        .filter(|t| t.role() != Role::Wrapper && t.role() != Role::Quality)
        .collect();
    let read = |p: &Printed| runners.iter().find_map(|t| t.tests(p));
    let plain = |format| plain::tests(printed.stdout, printed.stderr, format);
    // A run ralph cannot see into is read by its `PASS:`/`FAIL:` lines first, where it prints
    // them: no other tool's reader is asked to guess at it.
    if uses.opaque {
        if let Some(t) = plain(plain::Format::Marked) {
            return Some(t);
        }
    }
    let merged = format!("{}\n{}", printed.stdout, printed.stderr);
    let project = printed.root.map(Project::read);
    for wrapper in asked.iter().filter(|t| t.role() == Role::Wrapper) {
        let Some(sections) = wrapper.sections(&merged, project.as_ref()) else {
            continue;
        };
        let mut all: Option<TestOutcomes> = None;
        for (folder, text) in sections {
            let part = Printed {
                stdout: &text,
                stderr: "",
                ..*printed
            };
            if let Some(t) = read(&part) {
                all.get_or_insert_with(TestOutcomes::default)
                    .absorb(t, Some(&folder));
            }
        }
        if all.is_some() {
            return all;
        }
    }
    read(printed).or_else(|| plain(plain::Format::Any))
}

/// A lint's findings by rule, read by the check's tools; `None` when no line names a rule.
pub fn read_rules(uses: &Uses, stdout: &str, stderr: &str) -> Option<BTreeMap<String, u64>> {
    let linters: Vec<&dyn Tool> = uses
        .asked()
        .into_iter()
        .filter(|t| t.role() == Role::Quality)
        .collect();
    let mut kinds = BTreeMap::new();
    for text in [stdout, stderr] {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let next = lines.get(i + 1).copied().unwrap_or("");
            if let Some(k) = linters.iter().find_map(|t| t.rule(line, next)) {
                *kinds.entry(k).or_insert(0) += 1;
            }
        }
    }
    (!kinds.is_empty()).then_some(kinds)
}

/// How many problems a quality check's output reports: as its tools count them, else as every
/// linter's findings are counted ([`crate::checks::outcomes::problems`]).
pub fn count_problems(uses: &Uses, stdout: &str, stderr: &str) -> Option<u64> {
    let text = format!("{stdout}\n{stderr}");
    uses.asked()
        .iter()
        .filter(|t| t.role() == Role::Quality)
        .find_map(|t| t.count(&text))
        .or_else(|| outcomes::problems(stdout, stderr))
}

/// The program a failed check could not start, as its wrappers or the shell said.
pub fn missing_program(uses: &Uses, stdout: &str, stderr: &str) -> Option<String> {
    let wrappers = uses.asked();
    for line in stderr.lines().chain(stdout.lines()) {
        let line = line.trim();
        if let Some(p) = call::shell_missing(line) {
            return Some(p);
        }
        if let Some(p) = wrappers.iter().find_map(|t| t.missing(line)) {
            return Some(p);
        }
    }
    None
}

/// How a test check running `command` (with `env`) runs one failing test again alone, per
/// runner it starts: the command (and variables) for one that can, why not for one that cannot.
/// Nothing for a check ralph cannot see into.
pub fn alone_in_plan(
    uses: &Uses,
    command: &str,
    env: &[(String, String)],
) -> Vec<(&'static str, Result<String, String>)> {
    if uses.opaque {
        return Vec::new();
    }
    uses.asked()
        .into_iter()
        .filter(|t| matches!(t.role(), Role::Tests(_) | Role::Suite))
        .filter_map(|t| {
            if let Some(why) = t.never_alone() {
                return Some((t.name(), Err(why.to_owned())));
            }
            let id = t.example_id()?;
            Some((
                t.name(),
                match t.alone(command, id, env, uses) {
                    Some(a) => Ok(a
                        .env
                        .iter()
                        .map(|(k, v)| format!("{k}={} ", shown(v)))
                        .chain(std::iter::once(a.command))
                        .collect()),
                    None => Err(format!(
                        "words added to `{command}` reach no {} that ralph can tell",
                        t.name()
                    )),
                },
            ))
        })
        .collect()
}

/// `value` as a shell reads it back, in double quotes where that is enough (`"-k 'a and b'"`).
fn shown(value: &str) -> String {
    if value.contains(['"', '$', '`', '\\', '!']) {
        shell_words::quote(value).into_owned()
    } else {
        format!("\"{value}\"")
    }
}

/// `command` narrowed to the project's test `files` alone, by the runner its appended words
/// reach, when that runner takes files; `None` for a command ralph cannot change so safely.
pub fn files_command(uses: &Uses, command: &str, files: &[&str]) -> Option<String> {
    let tail = uses.tail?;
    if !plain(command) {
        return None;
    }
    tail.tool.files(command, files, uses)
}

/// Appends `files` where `uses`' words reach the runner `tool`, when each is one of its test
/// files (`test_file`).
pub(crate) fn append_files(
    tool: &str,
    command: &str,
    files: &[&str],
    uses: &Uses,
    test_file: fn(&str) -> bool,
) -> Option<String> {
    let tail = uses.tail.filter(|t| t.tool == tool)?;
    let ours = !files.is_empty() && files.iter().all(|f| test_file(f) && !f.starts_with('-'));
    ours.then(|| tail.append(command, files))
}

/// What would have run a test of `lang` that no check ran, as its runners say.
pub fn missed_hint(lang: Lang, test: &Missed) -> Option<String> {
    TOOLS
        .iter()
        .filter(|t| t.role() == Role::Tests(lang))
        .find_map(|t| t.missed(test))
}
