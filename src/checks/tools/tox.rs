//! tox: the `commands` of the environments it runs are what it runs (`tox -e lint,py` → those
//! of `[testenv:lint]` and `[testenv:py]`, else `[testenv]`'s; without `-e`, the env list), read
//! from tox.ini or setup.cfg's `[tox:tox]` sections; `{posargs}` and other substitutions left
//! out. The env list is read here once, for the tool and for a CI's bare `tox` alike, generative
//! names expanded (`py3{11,12}` → `py311`, `py312`). A configuration ralph cannot read
//! (tox.toml) is not seen into.

use super::ecosystem::Registry;
use super::found::CheckKind;
use super::found::Found;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Env, Inner, Lang, Role, Tool};
use crate::checks::project::Project;

/// tox environments named like quality checks, and the check name each stands for.
const QUALITY: [(&str, &str); 11] = [
    ("flake8", "flake8"),
    ("lint", "lint"),
    ("ruff", "lint"),
    ("pylint", "pylint"),
    ("black", "black"),
    ("format", "format"),
    ("isort", "isort"),
    ("mypy", "type-check"),
    ("typecheck", "type-check"),
    ("type", "type-check"),
    ("pep8", "flake8"),
];

pub struct Tox;

impl Tool for Tox {
    fn name(&self) -> &'static str {
        "tox"
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Python)
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "tox"
    }

    fn local_folders(&self) -> &'static [&'static str] {
        &[".tox"]
    }

    fn env_list(&self, project: &Project) -> Vec<String> {
        env_list(project)
    }

    fn runs_whole_list(&self, call: &Call) -> bool {
        !call
            .args
            .iter()
            .any(|w| w.starts_with("-e") || w.starts_with("--env"))
    }

    fn builds_envs(&self, call: &Call) -> bool {
        call.has("--notest")
    }

    fn split_envs(
        &self,
        list: &[String],
        python: (u32, u32),
    ) -> (Vec<String>, Vec<String>, Vec<String>) {
        split(list, python)
    }

    fn with_envs(&self, command: &str, envs: &[String]) -> String {
        format!("{command} -e {}", envs.join(","))
    }

    fn without_envs(&self, command: &str) -> String {
        command.split(" -e ").next().unwrap_or(command).to_owned()
    }

    fn step(&self, call: &Call) -> Option<StepKind> {
        sessions_step(call)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::PyPI)
    }

    /// The quality checks tox.ini declares as environments (`[testenv:flake8]` …), run through
    /// tox when it is installed: the environment holds the plugins and options the project
    /// uses, and they stand for the linters ralph would run by hand.
    fn detect(&self, env: &Env) -> Vec<Found> {
        match env.project.text("tox.ini") {
            Some(ini) if crate::process::on_path("tox") => quality_envs(&ini),
            _ => Vec::new(),
        }
    }

    /// `tox …` builds its environments with `--notest` (the network a setup has), then runs
    /// them with `--skip-pkg-install` (offline).
    fn offline(&self, command: &str) -> Option<(String, String)> {
        with_flag(command, "tox", "--notest").zip(with_flag(command, "tox", "--skip-pkg-install"))
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        let Some(ini) = project.and_then(|p| p.text("tox.ini").or_else(|| p.text("setup.cfg")))
        else {
            return Inner::Unknown;
        };
        let sections = ini_sections(&ini);
        let value = |section: &str, key: &str| -> Option<String> {
            sections
                .iter()
                .find(|(s, _)| s == section)
                .and_then(|(_, kv)| kv.iter().find(|(k, _)| k == key))
                .map(|(_, v)| v.clone())
        };
        // The envs named (`-e py3{11,12},lint`), else the env list, generative names expanded.
        let envs: Vec<String> = match call.args.iter().position(|a| a == "-e" || a == "--env") {
            Some(at) => {
                let named = call.args.get(at + 1).map_or("", String::as_str);
                split_top(named)
                    .into_iter()
                    .flat_map(|e| expand(e.trim()))
                    .filter(|e| !e.is_empty())
                    .collect()
            }
            None => project.map(env_list).unwrap_or_default(),
        };
        let mut lines = Vec::new();
        for env in if envs.is_empty() {
            vec![String::new()]
        } else {
            envs
        } {
            let own = value(&format!("testenv:{env}"), "commands");
            if let Some(commands) = own.or_else(|| value("testenv", "commands")) {
                lines.extend(commands.lines().map(without_substitutions));
            }
        }
        lines.retain(|l| !l.trim().is_empty());
        match lines.is_empty() {
            true => Inner::Unknown,
            false => Inner::Script(lines.join("\n")),
        }
    }
}

/// The env list of the project's tox configuration (`tox.ini`, `setup.cfg`'s `[tox:tox]`, or
/// `pyproject.toml`'s legacy ini), generative braces expanded (`py3{9,10}` → `py39`, `py310`).
pub fn env_list(p: &Project) -> Vec<String> {
    let sources = [
        ("tox.ini", "[tox]"),
        ("setup.cfg", "[tox:tox]"),
        ("pyproject.toml", "[tox]"),
    ];
    for (file, section) in sources {
        let Some(text) = p.text(file) else {
            continue;
        };
        if let Some(list) = env_list_in(&text, section) {
            return list;
        }
    }
    Vec::new()
}

/// The `envlist`/`env_list` of `section` in an ini `text` (values may continue on indented
/// lines), expanded.
fn env_list_in(text: &str, section: &str) -> Option<Vec<String>> {
    let mut inside = false;
    let mut value: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            if value.is_some() {
                break;
            }
            inside = t == section;
            continue;
        }
        if !inside {
            continue;
        }
        match &mut value {
            Some(v) if line.starts_with([' ', '\t']) && !t.is_empty() => {
                v.push(',');
                v.push_str(t);
            }
            Some(_) => break,
            None => {
                if let Some((k, v)) = t.split_once('=') {
                    if matches!(k.trim(), "envlist" | "env_list") {
                        value = Some(v.trim().to_owned());
                    }
                }
            }
        }
    }
    let value = value?;
    let mut out = Vec::new();
    for item in split_top(&value) {
        out.extend(expand(item.trim()));
    }
    out.retain(|e| !e.is_empty());
    Some(out)
}

/// `text` split at commas outside braces.
fn split_top(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// A generative env name expanded: `py3{9,10}-django{4,5}` → every combination.
fn expand(name: &str) -> Vec<String> {
    let Some(open) = name.find('{') else {
        return vec![name.to_owned()];
    };
    let Some(close) = name[open..].find('}').map(|c| open + c) else {
        return vec![name.to_owned()];
    };
    let (head, tail) = (&name[..open], &name[close + 1..]);
    name[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{head}{}{tail}", alt.trim())))
        .collect()
}

/// `command` with `flag` right after its one `program` word; `None` when the program is not
/// there once, as a word, or the command already has the flag.
pub(super) fn with_flag(command: &str, program: &str, flag: &str) -> Option<String> {
    let words: Vec<&str> = command.split(' ').collect();
    let at: Vec<usize> = words
        .iter()
        .enumerate()
        .filter(|(_, w)| **w == program || w.ends_with(&format!("/{program}")))
        .map(|(i, _)| i)
        .collect();
    let [at] = at.as_slice() else {
        return None;
    };
    if command.contains(flag) {
        return None;
    }
    let mut out: Vec<&str> = words[..=*at].to_vec();
    out.push(flag);
    out.extend(&words[at + 1..]);
    Some(out.join(" "))
}

/// Environments (and nox sessions) that are no test run either, though ralph makes no check of
/// its own of them: docs, packaging, audits.
const NOT_TESTS: [&str; 14] = [
    "linting",
    "fmt",
    "style",
    "typing",
    "types",
    "pyright",
    "docs",
    "doc",
    "audit",
    "package",
    "pre-commit",
    "precommit",
    "spelling",
    "check-manifest",
];

/// Whether a tox environment or nox session named `env` (`lint`, `mypy-strict`, `docs:build`)
/// checks quality or builds something rather than running tests, by its name.
pub fn checks_quality(env: &str) -> bool {
    let base = env.split(['-', ':']).next().unwrap_or(env);
    [env, base]
        .iter()
        .any(|n| QUALITY.iter().any(|(e, _)| e == n) || NOT_TESTS.contains(n))
}

/// The quality checks of the environments `ini` declares that are named like one.
pub(super) fn quality_envs(ini: &str) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for (section, _) in ini_sections(ini) {
        let Some(name) = section.strip_prefix("testenv:") else {
            continue;
        };
        if let Some((_, check)) = QUALITY.iter().find(|(e, _)| *e == name) {
            if !out.iter().any(|c| c.name == *check) {
                out.push(
                    Found::new(check, &format!("tox -e {name}"))
                        .because(&format!("the `[testenv:{name}]` environment of tox.ini")),
                );
            }
        }
    }
    out
}

/// A command line without tox's `{…}` substitutions and its `-` (ignore errors) prefix.
fn without_substitutions(line: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in line.trim().trim_start_matches('-').chars() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// An ini file's sections, each with its keys and their (continued) values.
fn ini_sections(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with(['#', ';']) || t.is_empty() {
            continue;
        }
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.push((name.trim().to_owned(), Vec::new()));
            continue;
        }
        let Some((_, keys)) = out.last_mut() else {
            continue;
        };
        if line.starts_with([' ', '\t']) {
            if let Some((_, v)) = keys.last_mut() {
                v.push('\n');
                v.push_str(t);
            }
        } else if let Some((k, v)) = t.split_once('=') {
            keys.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    out
}

/// What a tox or nox command does as a CI step: a quality check where it names only
/// environments that check quality, else a test run.
pub(super) fn sessions_step(call: &Call) -> Option<StepKind> {
    Some(if sessions_check_quality(&call.args) {
        StepKind::Check(CheckKind::Quality)
    } else {
        StepKind::Check(CheckKind::Test)
    })
}

/// Whether a tox or nox command names only environments that check quality (`tox -e
/// isort,lint`, `nox -s lint docs`): a quality check, not a test run.
fn sessions_check_quality(args: &[String]) -> bool {
    let mut named = Vec::new();
    let mut take = false;
    for a in args {
        if take {
            named.extend(a.split(',').map(str::trim).filter(|e| !e.is_empty()));
            take = a == "-e" || a == "-s";
            continue;
        }
        match a.as_str() {
            "-e" | "--env" | "-s" | "--session" | "--sessions" => take = true,
            _ => {
                if let Some(v) = a.strip_prefix("-e").filter(|v| !v.is_empty()) {
                    named.extend(v.split(','));
                }
            }
        }
    }
    !named.is_empty() && named.iter().all(|e| checks_quality(e))
}

/// The envs of `list` for Python `major.minor`: (those whose interpreter factor — `py311`,
/// `py3.11`, `py3`, `py` — it is; those that name no interpreter; those of other interpreters).
fn split(list: &[String], (major, minor): (u32, u32)) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mine = [
        format!("py{major}{minor}"),
        format!("py{major}.{minor}"),
        format!("py{major}"),
        "py".to_owned(),
    ];
    let interpreter = |f: &str| {
        f.strip_prefix("py")
            .is_some_and(|v| v.is_empty() || v.starts_with(|c: char| c.is_ascii_digit()))
            || f.starts_with("pypy")
    };
    let (mut take, mut neutral, mut leave) = (Vec::new(), Vec::new(), Vec::new());
    for env in list {
        let factors: Vec<&str> = env.split('-').collect();
        if factors.iter().any(|f| mine.iter().any(|m| m == f)) {
            take.push(env.clone());
        } else if factors.iter().any(|f| interpreter(f)) {
            leave.push(env.clone());
        } else {
            neutral.push(env.clone());
        }
    }
    (take, neutral, leave)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::recognise;

    #[test]
    fn a_generative_env_list_is_what_a_bare_tox_runs() {
        let ini = "[tox]\nenvlist = py3{11,12}-lint\n\n[testenv]\ncommands = pytest\n\n[testenv:py311-lint]\ncommands = ruff check .\n";
        let p = Project::in_memory(std::path::Path::new("/p"), &[("tox.ini", ini)]);
        // py311-lint has its own commands; py312-lint the [testenv]'s.
        assert_eq!(
            crate::checks::tools::recognise("tox", Some(&p)).tools,
            ["tox", "ruff", "pytest"]
        );
        assert_eq!(
            crate::checks::tools::recognise("tox -e 'py3{12,11}-lint'", Some(&p)).tools,
            ["tox", "pytest", "ruff"]
        );
    }

    #[test]
    fn the_env_list_is_read_and_expanded() {
        let ini = "[tox]\nenvlist = check-manifest,docs,flake8,py3{9,10,11,12},pypy3\n\n[testenv]\ndeps = pytest\n";
        assert_eq!(
            env_list_in(ini, "[tox]").unwrap(),
            [
                "check-manifest",
                "docs",
                "flake8",
                "py39",
                "py310",
                "py311",
                "py312",
                "pypy3"
            ]
        );
        let multi = "[tox]\nenv_list =\n    py311\n    lint\nskip_missing_interpreters = true\n";
        assert_eq!(env_list_in(multi, "[tox]").unwrap(), ["py311", "lint"]);
        assert!(env_list_in("[testenv]\nx=1\n", "[tox]").is_none());
    }

    #[test]
    fn an_environment_is_its_commands() {
        let ini = "[tox]\nenvlist = py311, lint\n\n[testenv]\ndeps = pytest\ncommands =\n    pytest {posargs:tests}\n\n[testenv:lint]\ncommands =\n    flake8 src\n    - isort --check-only .\n";
        let p = Project::in_memory(std::path::Path::new("/p"), &[("tox.ini", ini)]);
        assert_eq!(
            recognise("tox -e lint", Some(&p)).tools,
            ["tox", "flake8", "isort"]
        );
        assert_eq!(
            recognise("tox", Some(&p)).tools,
            ["tox", "pytest", "flake8", "isort"]
        );
        assert!(recognise("tox -e py", None).opaque);
    }

    #[test]
    fn an_environment_is_built_with_the_network_and_run_offline() {
        assert_eq!(
            Tox.offline("tox -e lint,isort").unwrap(),
            (
                "tox --notest -e lint,isort".to_owned(),
                "tox --skip-pkg-install -e lint,isort".to_owned()
            )
        );
        assert_eq!(
            crate::checks::tools::offline("python -m tox -e py")
                .unwrap()
                .1,
            "python -m tox --skip-pkg-install -e py"
        );
        assert_eq!(Tox.offline("tox && tox -e docs"), None);
    }

    #[test]
    fn environments_named_like_linters_are_quality_checks() {
        let ini = "[tox]\nenvlist = py3\n[testenv]\ncommands = pytest\n[testenv:flake8]\ncommands = flake8\n[testenv:pep8]\ncommands = flake8\n[testenv:docs]\n";
        let q = quality_envs(ini);
        assert_eq!(q.len(), 1, "one flake8 check");
        assert_eq!(q[0].command, "tox -e flake8");
        assert_eq!(q[0].reason, "the `[testenv:flake8]` environment of tox.ini");
    }

    #[test]
    fn the_env_of_the_interpreter_present_is_chosen() {
        let list: Vec<String> = ["docs", "py39", "py311", "py311-django5", "pypy3", "flake8"]
            .map(String::from)
            .to_vec();
        let (take, neutral, leave) = split(&list, (3, 11));
        assert_eq!(take, ["py311", "py311-django5"]);
        assert_eq!(neutral, ["docs", "flake8"]);
        assert_eq!(leave, ["py39", "pypy3"]);
        assert!(split(&["py39".to_owned()], (3, 11)).0.is_empty());
        assert_eq!(split(&["py".to_owned()], (3, 11)).0, ["py"]);
    }
}
