//! Which checks a repository has. `[checks]` in the configuration wins; otherwise what the
//! repository declares — a `maskfile.md` with `development <language> <check>` commands, a C or
//! C++ build system's tests (`build_system.rs`), a `Makefile` or `justfile` with a test target —
//! and else every language it has: Python (only the tools it configures, `python.rs`), Cargo,
//! Node (its package.json scripts), a pre-commit configuration standing for the linters; then
//! the checks its CI runs. Ralph's own Rust lints advise where the project does not run them.
//! Every check says why it was chosen; every rule is a function of the project read once.

use super::coverage::CoverageSpec;
pub use super::plan::CheckPlan;
use super::project::Project;
use super::{CheckKind, CheckSpec};
use crate::config::ChecksConfig;
use std::collections::BTreeMap;
use std::path::Path;

/// The check names of a maskfile that ralph runs, in the order it runs them.
const MASK_CHECKS: [&str; 6] = ["format", "lint", "type-check", "check", "dead-code", "test"];

/// The checks of the repository at `root`, and how its environment is made: `[checks]` when it
/// names any; otherwise what the repository declares or its language gives, joined by the
/// checks its CI runs (see `workflows`) that are not among them already.
pub fn detect(root: &Path, config: &ChecksConfig) -> CheckPlan {
    detect_in(&Project::read(root), config)
}

/// [`detect`] on a project read once: every rule a function of `p` and `config` alone.
fn detect_in(p: &Project, config: &ChecksConfig) -> CheckPlan {
    let mut plan = CheckPlan {
        setup: super::environment::setup(p, config),
        native: super::environment::native(p),
        ..checks(p, config)
    };
    if plan.source != "config" {
        let ci = super::workflows::read(p);
        mark_advisory(&mut plan, p, &ci);
        join_ci(&mut plan, ci, p);
    }
    // Each check's tools, read through the project (a Makefile's recipe, a package script).
    plan.checks = std::mem::take(&mut plan.checks)
        .into_iter()
        .map(|c| c.seen_in(p))
        .collect();
    plan
}

/// A check ralph adds of its own that the project does not run itself only advises (its tool
/// said so when it made it, [`super::tools::Tool::detect`]) — unless the project's CI runs that
/// tool: then it counts. Its tests, and every check the project declares or configures, count.
fn mark_advisory(plan: &mut CheckPlan, p: &Project, ci: &super::workflows::Ci) {
    let texts: Vec<&str> = ci
        .checks
        .iter()
        .map(|c| c.command.as_str())
        .chain(ci.scripts.values().map(String::as_str))
        .chain(ci.notes.iter().map(String::as_str))
        .collect();
    for check in plan.checks.iter_mut().filter(|c| c.advisory.is_some()) {
        let uses = super::tools::recognise(&check.command, Some(p));
        let ci_runs = uses.tools.iter().any(|tool| {
            texts
                .iter()
                .any(|t| super::tools::mentions(t, tool, Some(p)))
        });
        if ci_runs {
            check.advisory = None;
        }
    }
}

/// Adds the CI's checks that the plan does not run already, and its notes. Where the CI runs a
/// check the plan detected after steps of its job that prepare (a build, a bootstrap), the CI's
/// run takes the detected one's place.
fn join_ci(plan: &mut CheckPlan, mut ci: super::workflows::Ci, p: &Project) {
    // A build system's suite that the CI runs its own way (its build folder, its options, its
    // compilers) judges the change the CI's way; ralph's own stands in where the CI's cannot
    // judge (every CI test check fails on the base naming no test).
    let ci_tests = ci.checks.iter().any(|c| c.kind == CheckKind::Test);
    if ci_tests && matches!(plan.source.as_str(), "cmake" | "meson") {
        let why = format!(
            "ralph's own {} suite, run on the base beside the CI's; it judges a change only where no CI test check can (each fails on the base naming no test)",
            plan.source
        );
        ci.notes.push(format!(
            "the {} tests run as the CI runs them (its own steps); `{}` stands in where those cannot judge the change",
            plan.source,
            plan.checks
                .iter()
                .map(|c| c.command.as_str())
                .collect::<Vec<_>>()
                .join("`, `")
        ));
        for check in &mut plan.checks {
            check.fallback = Some(why.clone());
        }
    }
    // One command is one check, however the project and its CI spell it.
    let normal = |c: &str| super::workflows::canonical(c);
    // The CI's own checks are told apart already (the same command after other steps is
    // another check): each is held only against the checks detected here.
    let detected: Vec<CheckSpec> = plan.checks.clone();
    let own = detected.len();
    let mut taken = vec![false; own];
    let mut added = 0;
    let mut prepared = Prepared::default();
    // The check coverage runs in place of stays ralph's (a job's checks run in their own tree).
    let covered = plan
        .coverage
        .as_ref()
        .filter(|c| c.test_command.is_some())
        .and_then(|_| plan.checks.iter().position(|c| c.kind == CheckKind::Test));
    for check in ci.checks {
        let script = ci.scripts.get(&check.name);
        let normal_script = script.map(|s| normal(s));
        let same = |c: &CheckSpec| {
            normal(&c.command) == normal(&check.command)
                || normal_script.as_ref() == Some(&normal(&c.command))
                || c.name == check.name
        };
        let after_preparation = prepared.before(&check);
        let same_as = detected.iter().position(same);
        // The detected check the CI runs its own way after its job's preparing steps (the
        // first instance of the job that does): the same command, or with words for the runner
        // added (`npm test -- --runInBand`).
        let replaced = same_as
            .or_else(|| {
                detected
                    .iter()
                    .position(|c| runs_with_more_words(c, &check.command, p))
            })
            .filter(|at| {
                after_preparation
                    && !taken[*at]
                    && detected[*at].fallback.is_none()
                    && covered != Some(*at)
            });
        if let Some(at) = replaced {
            taken[at] = true;
            plan.notes.push(format!(
                "`{}` runs as the CI runs it, after its job's steps ({}): `{}`",
                plan.checks[at].command,
                prepared.steps_of(&check).join(", "),
                check.name
            ));
            plan.checks[at] = check;
            added += 1;
            continue;
        }
        if same_as.is_some() {
            continue;
        }
        // A step that installs and runs checks the plan runs already (`yarn && yarn test &&
        // yarn lint`) adds nothing but a second run of them.
        if let Some((runs, false)) = script.map(|s| super::workflows::checks_in(s)) {
            let known: Vec<String> = detected.iter().map(|c| normal(&c.command)).collect();
            if !runs.is_empty() && runs.iter().all(|r| known.contains(r)) {
                plan.notes.push(format!(
                    "{}: its checks are run already (`{}`), not again",
                    check.name,
                    script.map(|s| s.trim()).unwrap_or_default()
                ));
                continue;
            }
        }
        plan.checks.push(check);
        added += 1;
    }
    if added > 0 {
        plan.source = if plan.source == "none" {
            "CI".into()
        } else {
            format!("{} and CI", plan.source)
        };
    }
    plan.notes.extend(ci.notes);
}

/// Whether `command` is `check`'s command with words added that reach the runner it runs.
fn runs_with_more_words(check: &CheckSpec, command: &str, p: &Project) -> bool {
    let Some(rest) = command.strip_prefix(check.command.trim_end()) else {
        return false;
    };
    rest.starts_with(' ')
        && super::tools::recognise(&check.command, Some(p))
            .tail
            .is_some()
}

/// The steps each CI job instance ran before its checks so far that prepare the tree beyond
/// installing (builds, bootstraps, configures): after them, the CI's run of a check is the one
/// that can judge.
#[derive(Default)]
struct Prepared(BTreeMap<String, Vec<String>>);

impl Prepared {
    /// Whether steps of its job that prepare ran before `check` (recorded as it passes).
    fn before(&mut self, check: &CheckSpec) -> bool {
        let Some(job) = &check.job else {
            return false;
        };
        let steps = self.0.entry(job.instance.clone()).or_default();
        steps.extend(
            job.before
                .iter()
                .filter(|s| !s.installs)
                .map(|s| s.label.clone()),
        );
        !steps.is_empty()
    }

    /// The preparing steps of `check`'s job instance so far.
    fn steps_of(&self, check: &CheckSpec) -> Vec<String> {
        check
            .job
            .as_ref()
            .and_then(|j| self.0.get(&j.instance))
            .cloned()
            .unwrap_or_default()
    }
}

/// The checks of the project `p`.
fn checks(p: &Project, config: &ChecksConfig) -> CheckPlan {
    if !config.commands.is_empty() || config.coverage_command.is_some() {
        return configured(config);
    }
    let read = |name: &str| p.text(name);
    if let Some(text) = read("maskfile.md") {
        let checks = mask_checks(&text);
        if !checks.is_empty() {
            return CheckPlan::new("maskfile.md", checks, config);
        }
    }
    let cmake = read("CMakeLists.txt");
    let meson = read("meson.build");
    let build = super::build_system::checks(super::build_system::BuildFiles {
        cmake: cmake.as_deref(),
        meson: meson.as_deref(),
    });
    // A C or C++ project's build system before a Makefile of its own (a deprecated one, a
    // demo), unless that Makefile drives the build system itself.
    let driven = read("Makefile").is_some_and(|m| super::build_system::makefile_drives_it(&m));
    let language = ["Cargo.toml", "pyproject.toml", "setup.py", "package.json"]
        .iter()
        .any(|f| p.is_file(f));
    if let Some((source, checks)) = build.clone().filter(|_| !driven && !language) {
        return CheckPlan::new(source, checks, config);
    }
    if let Some((source, checks)) = super::declared::targets(p) {
        return declared(p, source, checks, config);
    }
    let parts = languages(p);
    if parts.is_empty() {
        return match build {
            Some((source, checks)) => CheckPlan::new(source, checks, config),
            None => CheckPlan::new("none", Vec::new(), config),
        };
    }
    union(parts, config)
}

/// One language's checks in a project, and its coverage.
struct Language {
    name: &'static str,
    checks: Vec<CheckSpec>,
    coverage: Option<CoverageSpec>,
}

/// Every language of the project `p`, Python first (its coverage runs its test check): Python
/// (only the tools it configures), Cargo, Node (its package.json scripts). A Python part beside
/// a Cargo.toml is taken only when it is one (a maturin or PyO3 package, Python tests): a Rust
/// crate's own `tests/` folder is not a pytest suite.
fn languages(p: &Project) -> Vec<Language> {
    let mut out = Vec::new();
    let cargo = p.is_file("Cargo.toml");
    if super::python::is_python(p) && (!cargo || python_beside_rust(p)) {
        let (mut checks, coverage) = super::python::checks(p);
        // A pre-commit configuration runs the project's own linters, pinned.
        if let Some(pc) = super::declared::pre_commit(p) {
            checks.retain(|c| c.kind == CheckKind::Test);
            checks.insert(0, pc);
        }
        out.push(Language {
            name: "python",
            checks,
            coverage,
        });
    }
    if cargo {
        out.push(Language {
            name: "cargo",
            checks: super::tools::detect(&super::tools::Env::of(p), super::tools::Lang::Rust),
            coverage: None,
        });
    }
    if let Some(text) = p.text("package.json") {
        let checks = node_checks(p, &text);
        if !checks.is_empty() || out.is_empty() {
            out.push(Language {
                name: "node",
                checks,
                coverage: node_coverage(&text),
            });
        }
    }
    out
}

/// Whether the Python files beside a Cargo.toml are a Python package of their own: built by
/// maturin (or PyO3 through setuptools-rust), or with Python tests.
fn python_beside_rust(p: &Project) -> bool {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    let python_tests = ["tests", "test", "python/tests"].iter().any(|d| {
        p.list(d)
            .iter()
            .any(|(n, _)| n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py")))
    });
    pyproject.contains("maturin")
        || pyproject.contains("setuptools-rust")
        || pyproject.contains("setuptools_rust")
        || python_tests
}

/// The plan of the project's languages: one language's checks as they are; several, each
/// after the first named with its language (`cargo-test`, `node-lint`), the coverage of the
/// first that measures it (a coverage run is the first test check's, so only the first
/// language's may run the tests under coverage).
fn union(parts: Vec<Language>, config: &ChecksConfig) -> CheckPlan {
    let source = parts
        .iter()
        .map(|l| l.name)
        .collect::<Vec<_>>()
        .join(" and ");
    let mut checks = Vec::new();
    let mut coverage = None;
    for (i, part) in parts.into_iter().enumerate() {
        let first = i == 0;
        for mut check in part.checks {
            if !first {
                check.name = format!("{}-{}", part.name, check.name);
            }
            checks.push(check);
        }
        if coverage.is_none()
            && (first
                || part
                    .coverage
                    .as_ref()
                    .is_some_and(|c| c.test_command.is_none()))
        {
            coverage = part.coverage;
        }
    }
    CheckPlan {
        coverage,
        ..CheckPlan::new(&source, checks, config)
    }
}

/// The plan of the commands `[checks]` names, and its coverage command.
fn configured(config: &ChecksConfig) -> CheckPlan {
    let checks = config
        .commands
        .iter()
        .map(|(name, command)| CheckSpec::new(name, command).configured())
        .collect();
    CheckPlan {
        coverage: config
            .coverage_command
            .as_ref()
            .map(|command| CoverageSpec {
                test_command: None,
                command: command.clone(),
                reason: "[checks.coverage] in .ralph/config.toml".into(),
            }),
        ..CheckPlan::new("config", checks, config)
    }
}

/// The plan of the targets a Makefile or justfile (`source`) declares; for a Python project,
/// the coverage it configures, or a note on why it is not measured.
fn declared(p: &Project, source: &str, checks: Vec<CheckSpec>, config: &ChecksConfig) -> CheckPlan {
    let mut plan = CheckPlan::new(source, checks, config);
    if super::python::is_python(p) {
        // Coverage the project configures, measured in its own `test` target's run when
        // that target is pytest alone.
        match super::python::checks(p).1 {
            Some(c) if super::declared::test_runs_only_pytest(p) && c.test_command.is_some() => {
                plan.coverage = Some(CoverageSpec {
                    reason: format!("{}; the `test` target only runs pytest", c.reason),
                    ..c
                });
            }
            Some(c) => plan.notes.push(format!(
                "coverage is not measured: {}, but the tests run through the `test` target of {source}; set [checks.coverage] to measure it",
                c.reason
            )),
            None => {}
        }
    }
    plan
}

/// The checks of a Node project from its package.json `text`: its format, lint and type-check
/// scripts (or a pre-commit configuration in their place), then its `test` script.
fn node_checks(p: &Project, text: &str) -> Vec<CheckSpec> {
    let scripts: Vec<String> = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("scripts").and_then(|s| s.as_object()).cloned())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    // The project's own package manager, by its lockfile: a Yarn project's scripts through
    // Yarn (as its CI runs them), npm where nothing says otherwise.
    let manager = super::tools::script_runner(p);
    let run = |script: &str| manager.run_script(script).unwrap_or_default();
    let has = |s: &str| scripts.iter().any(|k| k == s);
    let mut checks = Vec::new();
    for (name, candidates) in [
        (
            "format",
            &["format:check", "format-check", "prettier:check"][..],
        ),
        ("lint", &["lint"][..]),
        ("type-check", &["typecheck", "type-check", "tsc"][..]),
    ] {
        if let Some(script) = candidates.iter().find(|c| has(c)) {
            checks.push(
                CheckSpec::new(name, &run(script))
                    .because(&format!("the `{script}` script of package.json")),
            );
        }
    }
    if let Some(pc) = super::declared::pre_commit(p) {
        checks.clear();
        checks.push(pc);
    }
    if has("test") {
        checks.push(
            CheckSpec::new("test", &run("test")).because("the `test` script of package.json"),
        );
    }
    checks
}

/// Coverage a Node project's `test` script already collects (`jest --coverage`, `vitest
/// --coverage`): read from the report it writes (`coverage/coverage-summary.json`,
/// `coverage/lcov.info`) after the tests.
fn node_coverage(text: &str) -> Option<CoverageSpec> {
    let package: serde_json::Value = serde_json::from_str(text).ok()?;
    let test = package["scripts"]["test"].as_str()?;
    let tool = ["jest", "vitest"].into_iter().find(|t| test.contains(t))?;
    test.contains("--coverage").then(|| CoverageSpec {
        test_command: None,
        command: String::new(),
        reason: format!("`{tool} --coverage` in the `test` script of package.json"),
    })
}

/// A `[checks]` section to start from, for the language the repository at `root` looks like it
/// is written in (for the message that refuses a competition with no check).
pub fn example(root: &Path) -> String {
    example_in(&Project::read(root))
}

/// [`example`] for the project `p`.
fn example_in(p: &Project) -> String {
    let has = |f: &str| p.exists(f);
    let lines: &[&str] = if has("Cargo.toml") {
        &[
            "format = \"cargo fmt --all -- --check\"",
            "lint = \"cargo clippy --all-targets -- -D warnings\"",
            "test = \"cargo test\"",
        ]
    } else if has("pyproject.toml") || has("setup.py") || has("setup.cfg") {
        &["lint = \"flake8\"", "test = \"python -m pytest\""]
    } else if has("package.json") {
        &["lint = \"npm run lint\"", "test = \"npm test\""]
    } else if has("go.mod") {
        &["lint = \"go vet ./...\"", "test = \"go test ./...\""]
    } else if has("pom.xml") {
        &["test = \"mvn -q test\""]
    } else {
        &["test = \"make test\""]
    };
    format!("[checks]\n{}", lines.join("\n"))
}

/// The `development <language> <check>` commands of a maskfile, as `mask development …`
/// checks named `<language>-<check>`. Mask commands are headings from level 2 down (level 1 is
/// the title); nesting is by level.
fn mask_checks(text: &str) -> Vec<CheckSpec> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let level = trimmed.bytes().take_while(|b| *b == b'#').count();
        // Level 1 is the maskfile's title; commands are level 2 and deeper.
        if !(2..=6).contains(&level) || !trimmed[level..].starts_with(" ") {
            continue;
        }
        // A heading's command name is its first word; `(args)` and the rest are not.
        let Some(name) = trimmed[level..].split_whitespace().next() else {
            continue;
        };
        while stack.last().is_some_and(|(l, _)| *l >= level) {
            stack.pop();
        }
        stack.push((level, name.to_lowercase()));
        let path: Vec<&str> = stack.iter().map(|(_, n)| n.as_str()).collect();
        if let ["development", language, check] = path.as_slice() {
            if MASK_CHECKS.contains(check) {
                found.push((language.to_string(), check.to_string()));
            }
        }
    }
    // Quality checks in the order of `MASK_CHECKS`, then tests; languages in file order.
    found.sort_by_key(|(_, check)| MASK_CHECKS.iter().position(|c| c == check));
    found
        .into_iter()
        .map(|(language, check)| {
            let mut spec = CheckSpec::new(
                &format!("{language}-{check}"),
                &format!("mask development {language} {check}"),
            )
            .because(&format!("`development {language} {check}` in maskfile.md"));
            if check == "test" {
                spec.kind = CheckKind::Test;
            }
            spec
        })
        .collect()
}

#[cfg(test)]
mod tests;
