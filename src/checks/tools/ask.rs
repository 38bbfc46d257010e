//! The stages' questions to a check's tools: what the run tested (each workspace package's
//! part by the runners, else a plain format), its findings by rule and their count, the program
//! it could not start, how one failing test runs again alone and how the change's test files run
//! first, what would have run a test no check ran.

use super::registry::TOOLS;
use super::tool::Uses;
use super::tool::{Lang, Missed, Prepared, Printed, Role, Tool};
use super::{plain, shell};
use crate::checks::outcomes::{self, TestOutcomes};
use crate::checks::project::Project;
use std::collections::BTreeMap;
use std::path::Path;

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
        if let Some(p) = shell::shell_missing(line) {
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
    if !shell::plain(command) {
        return None;
    }
    tail.tool.files(command, files, uses)
}

/// Appends `files` where `uses`' words reach the runner `tool`, when each is one of its test
/// What would have run a test of `lang` that no check ran, as its runners say.
pub fn missed_hint(lang: Lang, test: &Missed) -> Option<String> {
    TOOLS
        .iter()
        .filter(|t| t.role() == Role::Tests(lang))
        .find_map(|t| t.missed(test))
}

impl Uses {
    /// The tools to ask: the check's own, or every tool when ralph cannot see all it runs.
    pub fn asked(&self) -> Vec<&'static dyn Tool> {
        if self.opaque || self.tools.is_empty() {
            return TOOLS.to_vec();
        }
        self.tools.iter().map(|t| t.0).collect()
    }
}

/// `command` as the check's tools prepare it, with `env` (the plan's) and what they add.
pub fn prepare(uses: &Uses, command: &str, env: &[(String, String)], scratch: &Path) -> Prepared {
    let mut run = Prepared {
        command: command.to_owned(),
        env: env.to_vec(),
        writable: Vec::new(),
        tail: uses.tail,
    };
    for tool in uses.asked() {
        tool.prepare(&mut run, scratch);
    }
    with_state(uses, &mut run, scratch);
    run
}

/// Adds the state the tools of `uses` must write (their variables, the folder made writable)
/// to `run`, under `scratch`.
pub fn with_state(uses: &Uses, run: &mut Prepared, scratch: &Path) {
    for tool in uses.asked() {
        let dir = scratch.join("state").join(tool.name().replace(' ', "-"));
        let state = tool.state(&dir);
        if state.is_empty() {
            continue;
        }
        run.own_dir(scratch, "state");
        for (k, v) in state {
            // The sandbox shows only what exists: the tool's folders are made now.
            if Path::new(&v).starts_with(&dir) {
                let _ = std::fs::create_dir_all(&v);
            }
            run.set(&k, v);
        }
    }
}

/// The part of a check's output that explains it, as its tools (`uses`) read it.
pub fn explain(uses: &Uses, stdout: &str, stderr: &str) -> String {
    let (stdout, stderr) = (
        crate::output::strip_ansi(stdout),
        crate::output::strip_ansi(stderr),
    );
    let tools = uses.asked();
    // A run ralph cannot see into that prints a plain format is explained by its failures.
    let plain = |format| {
        [&stdout, &stderr]
            .iter()
            .find_map(|t| plain::excerpt(t, format))
    };
    if uses.opaque {
        if let Some(s) = plain(plain::Format::Marked) {
            return s;
        }
    }
    for text in [&stdout, &stderr] {
        let found = tools
            .iter()
            .find_map(|t| t.excerpt(text))
            .filter(|s| !s.trim().is_empty());
        if let Some(s) = found {
            return super::excerpt::without_coverage_table(&s);
        }
    }
    if let Some(s) = plain(plain::Format::Any) {
        return s;
    }
    match (stdout.trim().is_empty(), stderr.trim().is_empty()) {
        (true, true) => String::new(),
        (false, true) => super::excerpt::head_tail(&stdout),
        (true, false) => super::excerpt::head_tail(&stderr),
        (false, false) => format!(
            "{}\n{}",
            super::excerpt::head_tail(&stdout),
            super::excerpt::head_tail(&stderr)
        ),
    }
}
