//! coverage.py, as a wrapper (`coverage run -m pytest` runs pytest, and writes its data file into
//! the tree) and as the way a Python project measures coverage: pytest-cov in pytest's
//! `addopts` (the suite already runs under it), else coverage.py configured or `--cov` in tox's
//! commands (the test check runs under `coverage run`, on the sources tox names); the total
//! comes from `coverage json`.

use super::coverage_spec::{CoverageSpec, REPORT};
use super::shell::Call;
use super::tool::{Env, Inner, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Coverage;

impl Tool for Coverage {
    fn name(&self) -> &'static str {
        "coverage"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "coverage"
    }

    fn coverage_reports(&self) -> &'static [&'static str] {
        &["coverage.json", "coverage.xml"]
    }

    fn data_file(&self) -> Option<(&'static str, &'static str)> {
        Some(("COVERAGE_FILE", ".coverage"))
    }

    fn inner(&self, call: &Call, _: Option<&Project>) -> Inner {
        if call.sub() != "run" {
            return Inner::Nothing;
        }
        match call.args.iter().position(|a| a == "-m") {
            Some(at) if at + 1 < call.args.len() => Inner::Words(call.args[at + 1..].to_vec()),
            // A script by its path: what it runs cannot be read.
            _ => Inner::Unknown,
        }
    }

    fn writes(&self, call: &Call) -> bool {
        // Its data file and its reports land in the folder it runs in.
        call.sub() != "report"
    }

    fn coverage(&self, env: &Env) -> Option<CoverageSpec> {
        let p = env.project;
        let tool = |args: &str| env.module("coverage", args);
        let report = tool(&format!("json -q -o {REPORT}"));
        let read = |f: &str| p.text(f).unwrap_or_default();
        let addopts_cov = ["pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini"]
            .into_iter()
            .find(|f| {
                read(f)
                    .lines()
                    .any(|l| l.trim_start().starts_with("addopts") && l.contains("--cov"))
            });
        if let Some(file) = addopts_cov {
            return Some(CoverageSpec {
                test_command: None,
                command: report,
                reason: format!("pytest-cov in pytest's addopts in {file}: the tests run under it"),
            });
        }
        let tox_cov = read("tox.ini")
            .lines()
            .find(|l| (l.contains("pytest") || l.contains("py.test")) && l.contains("--cov"))
            .map(cov_sources);
        let configured = super::ecosystem::declares(p, "tool.coverage")
            .or_else(|| super::ecosystem::declares(p, "coverage:run"))
            .or_else(|| p.is_file(".coveragerc").then_some(".coveragerc"));
        let reason = match (&tox_cov, configured) {
            (_, Some(file)) => format!("coverage.py is configured in {file}"),
            (Some(_), None) => "pytest --cov in tox.ini's commands".to_owned(),
            (None, None) => return None,
        };
        let source = tox_cov
            .filter(|s| !s.is_empty() && configured.is_none())
            .map(|s| format!(" --source={}", s.join(",")))
            .unwrap_or_default();
        Some(CoverageSpec {
            test_command: Some(tool(&format!("run{source} -m pytest"))),
            command: report,
            reason,
        })
    }
}

/// The values of `--cov=X` / `--cov X` options in `text`.
fn cov_sources(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = w.strip_prefix("--cov=") {
            out.push(v.trim_matches(['"', '\'']).to_owned());
        } else if *w == "--cov" {
            if let Some(v) = words.get(i + 1).filter(|v| !v.starts_with('-')) {
                out.push(v.trim_matches(['"', '\'']).to_owned());
            }
        }
    }
    out.retain(|v| !v.is_empty() && !v.contains('{'));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn a_run_under_coverage_is_the_module_it_runs() {
        let uses = recognise("python -m coverage run --source=src -m pytest -q", None);
        assert!(uses.tools.iter().any(|t| *t == "pytest"), "{uses:?}");
        assert!(uses.writes, "its data file lands in the tree");
        assert!(recognise("coverage run tests/run.py", None).opaque);
    }

    #[test]
    fn the_sources_tox_names_under_cov() {
        assert_eq!(
            cov_sources("py.test --cov=cachetools --cov src/other --cov-report term {posargs}"),
            ["cachetools", "src/other"]
        );
        assert!(cov_sources("pytest --cov={envsitepackagesdir}/x").is_empty());
    }
}
