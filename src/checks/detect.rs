//! Which checks a repository has. `[checks]` in the configuration wins; otherwise what the
//! repository declares — a `maskfile.md` with `development <language> <check>` commands, a C or
//! C++ build system's tests (`build_system.rs`), a `Makefile` or `justfile` with a test target —
//! and else every language it has: Python (only the tools it configures, `python.rs`), Cargo,
//! Node (its package.json scripts), a pre-commit configuration standing for the linters; then
//! the checks its CI runs (`ci.rs`). Ralph's own Rust lints advise where the project does not
//! run them.
//! Every check says why it was chosen; every rule is a function of the project read once.

use super::coverage::CoverageSpec;
pub use super::plan::CheckPlan;
use super::project::Project;
use super::spec::CheckSpec;
use super::tools::CheckKind;
use super::tools::{ecosystem, Lang};
use crate::config::ChecksConfig;
use std::path::Path;

mod ci;

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
        ci::join(&mut plan, ci, p);
    }
    if plan.source != "config" {
        build_environments_in_setup(&mut plan);
    }
    // Each check's tools, read through the project (a Makefile's recipe, a package script).
    plan.checks = std::mem::take(&mut plan.checks)
        .into_iter()
        .map(|c| c.seen_in(p))
        .collect();
    plan
}

/// The environments a detected quality check's runner builds (`tox -e flake8`) are built in
/// the setup, with the setup's network, and the check runs them offline (`tox
/// --skip-pkg-install -e flake8`): a check has no network to install its environment at run
/// time. (A test environment is not: it would test the package the setup installed, not the
/// change.)
fn build_environments_in_setup(plan: &mut CheckPlan) {
    let mut builds: Vec<String> = Vec::new();
    let mut runners: Vec<&str> = Vec::new();
    for check in plan
        .checks
        .iter_mut()
        .filter(|c| c.job.is_none() && c.kind == CheckKind::Quality)
    {
        if let Some((runner, build, offline)) = super::tools::offline_by(&check.command) {
            builds.push(build);
            if !runners.contains(&runner) {
                runners.push(runner);
            }
            check.command = offline;
        }
    }
    if builds.is_empty() {
        return;
    }
    let builds = builds.join(" && ");
    plan.setup = Some(match plan.setup.take() {
        Some(setup) => super::environment::SetupSpec {
            command: format!("{} && {builds}", setup.command),
            reason: format!("{}; the checks' environments built", setup.reason),
            ..setup
        },
        None => super::environment::SetupSpec {
            command: builds,
            reason: format!(
                "the environments of the checks' runner ({}), built with the network",
                runners.join(", ")
            ),
            configured: false,
        },
    });
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
                .any(|t| super::tools::mentions(t, tool.name(), Some(p)))
        });
        if ci_runs {
            check.advisory = None;
        }
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
    let build = super::build_system::checks(p);
    // A C or C++ project's build system before a Makefile of its own (a deprecated one, a
    // demo), unless that Makefile drives the build system itself.
    let driven = super::build_system::task_file_drives_it(p);
    let language = ["Cargo.toml", "pyproject.toml", "setup.py", "package.json"]
        .iter()
        .any(|f| p.is_file(f));
    if let Some((source, checks)) = build.clone().filter(|_| !driven && !language) {
        return CheckPlan::new(source, checks, config);
    }
    if let Some((source, checks)) = super::declared::targets(p) {
        let mut plan = declared(p, source, checks, config);
        runners_stand_in(&mut plan, p, build.into_iter());
        return plan;
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
    let rust = p.is_file("Cargo.toml");
    if super::python::is_python(p) && (!rust || python_beside_rust(p)) {
        let (checks, coverage) = super::python::checks(p);
        out.push(Language {
            name: ecosystem::named("Python").part,
            checks: with_pre_commit(p, checks),
            coverage,
        });
    }
    let env = super::tools::Env::of(p);
    if rust {
        out.push(Language {
            name: ecosystem::named("Rust").part,
            checks: found(super::tools::detect(&env, Lang::Rust)),
            coverage: None,
        });
    }
    if p.is_file("package.json") {
        let checks = with_pre_commit(p, found(super::tools::detect(&env, Lang::Js)));
        if !checks.is_empty() || out.is_empty() {
            out.push(Language {
                name: ecosystem::named("Node").part,
                checks,
                coverage: super::tools::coverage(&env, Lang::Js),
            });
        }
    }
    out
}

/// The checks the tools found, as the plan's.
fn found(found: Vec<super::tools::Found>) -> Vec<CheckSpec> {
    found.into_iter().map(CheckSpec::from).collect()
}

/// A language's `checks` with a pre-commit configuration, when the project has one, in place of
/// its quality checks: it runs the project's own linters and formatters, pinned.
fn with_pre_commit(p: &Project, mut checks: Vec<CheckSpec>) -> Vec<CheckSpec> {
    if let Some(pc) = super::declared::pre_commit(p) {
        checks.retain(|c| c.kind == CheckKind::Test);
        checks.insert(0, pc);
    }
    checks
}

/// Whether the Python files beside a Cargo.toml are a Python package of their own: built from
/// the crate (maturin, setuptools-rust), or with Python tests.
fn python_beside_rust(p: &Project) -> bool {
    let python_tests = ["tests", "test", "python/tests"].iter().any(|d| {
        p.list(d)
            .iter()
            .any(|(n, _)| n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py")))
    });
    super::tools::builds_python_from_rust(p) || python_tests
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
            Some(c)
                if c
                    .test_command
                    .as_deref()
                    .is_some_and(|t| super::declared::test_runs_only(p, t)) =>
            {
                let runner = c
                    .test_command
                    .as_deref()
                    .and_then(super::declared::runner_of)
                    .unwrap_or_default();
                plan.coverage = Some(CoverageSpec {
                    reason: format!("{}; the `test` target only runs {runner}", c.reason),
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

/// The test runners the project configures (its languages' test checks, its build system's
/// suite) stand in for the tests a Makefile or justfile declares, where those cannot judge on
/// the base (a `make test` that runs a linter from the internet first): each named after where
/// it comes from (`python-test`, `cmake-test`), tried in that order.
fn runners_stand_in(
    plan: &mut CheckPlan,
    p: &Project,
    build: impl Iterator<Item = (&'static str, Vec<CheckSpec>)>,
) {
    let mut gives_way_to: Vec<String> = plan
        .checks
        .iter()
        .filter(|c| c.kind == CheckKind::Test)
        .map(|c| c.name.clone())
        .collect();
    if gives_way_to.is_empty() {
        return;
    }
    let own: Vec<(&str, CheckSpec)> = languages(p)
        .into_iter()
        .flat_map(|l| l.checks.into_iter().map(move |c| (l.name, c)))
        .chain(build.flat_map(|(source, checks)| checks.into_iter().map(move |c| (source, c))))
        .filter(|(_, c)| c.kind == CheckKind::Test)
        .collect();
    for (from, check) in own {
        let same = plan.checks.iter().any(|c| {
            super::workflows::canonical(&c.command) == super::workflows::canonical(&check.command)
        });
        let name = format!("{from}-test");
        if same || plan.checks.iter().any(|c| c.name == name) {
            continue;
        }
        let why = format!(
            "the project's {from} tests run directly ({}), for where {} cannot judge on the base",
            check.reason,
            gives_way_to
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
        let mut spec = check.standing_in(gives_way_to.clone(), &why);
        spec.name = name.clone();
        spec.kind = CheckKind::Test;
        plan.checks.push(spec);
        gives_way_to.push(name);
    }
}

/// A `[checks]` section to start from, for the language the repository at `root` looks like it
/// is written in (for the message that refuses a competition with no check).
pub fn example(root: &Path) -> String {
    example_in(&Project::read(root))
}

/// [`example`] for the project `p`.
fn example_in(p: &Project) -> String {
    let lines = super::tools::ecosystem::example(p);
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
