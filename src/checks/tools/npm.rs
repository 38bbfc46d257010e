//! npm (and npx): a package script is what `npm test`, `npm run X` run (with its `pre`/`post`
//! scripts and the arguments after `--`), `npx X` and `npm exec X` start `X`; with
//! `--workspaces`/`-ws`/`--workspace X`, the script of each package. A workspace run is read
//! package by package from the `> name@version script` header npm prints before each. Its
//! environment is the lockfile's (`npm ci`). The workspace's packages and their scripts are read
//! here for every Node wrapper.

use super::ecosystem::Registry;
use super::found::Found;
use super::shell::Call;
use super::step::StepKind;
use super::tool::{Inner, Lang, Role, Tool};
use crate::checks::project::Project;

pub struct Npm;

impl Tool for Npm {
    fn name(&self) -> &'static str {
        "npm"
    }

    fn ecosystem(&self) -> Option<Lang> {
        Some(Lang::Js)
    }

    /// The checks of package.json's scripts: its format, lint and type-check scripts, then its
    /// `test` script, each run by the project's own package manager (by its lockfile: a Yarn
    /// project's scripts through Yarn, as its CI runs them; npm where nothing says otherwise).
    fn detect(&self, env: &super::tool::Env) -> Vec<Found> {
        let p = env.project;
        let Some(package) = p.json("package.json") else {
            return Vec::new();
        };
        let has = |s: &str| package["scripts"][s].is_string();
        let manager = env.scripts;
        let run = |script: &str| manager.run_script(script).unwrap_or_default();
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
                    Found::new(name, &run(script))
                        .because(&format!("the `{script}` script of package.json")),
                );
            }
        }
        if has("test") {
            checks.push(
                Found::new("test", &run("test")).because("the `test` script of package.json"),
            );
        }
        checks
    }

    fn role(&self) -> Role {
        Role::Wrapper
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        matches!(call.name(), "npm" | "npx")
    }

    fn makes_local_env(&self, call: &Call) -> bool {
        call.sub() == "ci"
    }

    super::npm::node_manager!();

    fn cache(&self) -> Option<(&'static str, &'static str)> {
        Some(("npm_config_cache", "npm"))
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["package-lock.json"]
    }

    fn installs_by_name(&self, call: &Call) -> bool {
        global(call)
    }

    fn installs_into(&self) -> &'static [(&'static str, &'static str, Option<&'static str>)] {
        &[("npm_config_prefix", "npm", Some("bin"))]
    }

    fn user_config(&self) -> Option<(&'static str, &'static str)> {
        Some(("npm_config_userconfig", "npmrc"))
    }

    fn inner(&self, call: &Call, project: Option<&Project>) -> Inner {
        if call.name() == "npx" {
            return after_flags(&call.args, &["-p", "--package", "-c", "--call"]);
        }
        let script = match call.sub() {
            "test" | "t" | "tst" => "test".to_owned(),
            "start" | "stop" | "restart" => call.sub().to_owned(),
            "run" | "run-script" | "rum" | "urn" => match call.after(call.sub()) {
                Some(words) => words[0].clone(),
                None => return Inner::Nothing,
            },
            "exec" | "x" => return call.after(call.sub()).map_or(Inner::Nothing, Inner::Words),
            _ => return Inner::Nothing,
        };
        let Some(project) = project else {
            return Inner::Unknown;
        };
        let extra = after_separator(call);
        let workspaces = call.args.iter().any(|a| {
            matches!(a.as_str(), "-ws" | "--workspaces" | "-w" | "--workspace")
                || a.starts_with("--workspace=")
        });
        if workspaces {
            return each(project, &script, &extra);
        }
        script_with_hooks(project, "", &script, &extra).map_or(Inner::Unknown, Inner::Script)
    }

    fn state(&self, _: &std::path::Path) -> Vec<(String, String)> {
        // npm asks the registry for a newer npm where it cannot record that it did (the user's
        // home, read-only to a check): a connection the sandbox refuses on every run.
        vec![("npm_config_update_notifier".into(), "false".into())]
    }

    fn sections(&self, text: &str, project: Option<&Project>) -> Option<Vec<(String, String)>> {
        let folders = package_folders(project?);
        let mut out: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            // `> @scope/a@1.0.0 test`
            let header = line.strip_prefix("> ").and_then(|h| {
                let (spec, _) = h.rsplit_once(' ')?;
                let (name, _) = spec.rsplit_once('@')?;
                folders
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, f)| f.clone())
            });
            match (header, out.last_mut()) {
                (Some(folder), _) => out.push((folder, String::new())),
                (None, Some((_, text))) => {
                    text.push_str(line);
                    text.push('\n');
                }
                (None, None) => {}
            }
        }
        (out.len() > 1).then_some(out)
    }

    fn run_script(&self, name: &str) -> Option<String> {
        Some(match name {
            "test" => "npm test".to_owned(),
            other => format!("npm run --silent {other}"),
        })
    }

    fn manages(&self, project: &Project) -> Option<Lang> {
        (project.is_file("package-lock.json") || unlocked(project)).then_some(Lang::Js)
    }

    fn setup(&self, project: &Project) -> Option<(String, String)> {
        if project.is_file("package-lock.json") {
            return Some(("npm ci".to_owned(), "a package-lock.json".to_owned()));
        }
        // No lockfile committed: the contributor ran `npm install`, and so does the checkout
        // (writing no lockfile into it: the change would carry one).
        unlocked(project).then(|| {
            (
                "npm install --no-package-lock --no-audit --no-fund".to_owned(),
                "a package.json with dependencies and no lockfile (the contributor's `npm install`)"
                    .to_owned(),
            )
        })
    }

    fn missing(&self, line: &str) -> Option<String> {
        line.contains("could not determine executable to run")
            .then(|| "the npx executable".to_owned())
    }
}

/// Whether `project`'s package.json declares dependencies and no package manager's lockfile is
/// committed: its `node_modules` exist only where someone ran `npm install`.
fn unlocked(project: &Project) -> bool {
    const LOCKFILES: [&str; 5] = [
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
    ];
    if LOCKFILES.iter().any(|f| project.is_file(f)) || project.is_file("bun.lockb") {
        return false;
    }
    let Some(text) = project.text("package.json") else {
        return false;
    };
    let package: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    ["dependencies", "devDependencies"]
        .iter()
        .any(|k| package[k].as_object().is_some_and(|o| !o.is_empty()))
}

/// The words after a runner's own flags (those in `valued` with their value).
pub(super) fn after_flags(args: &[String], valued: &[&str]) -> Inner {
    match args.get(super::shell::past_flags(args, 0, valued)..) {
        Some(rest) if !rest.is_empty() => Inner::Words(rest.to_vec()),
        _ => Inner::Nothing,
    }
}

/// The script `name` of the package in `folder` (`""`: the root).
pub(super) fn script(project: &Project, folder: &str, name: &str) -> Option<String> {
    let file = if folder.is_empty() || folder == "." {
        "package.json".to_owned()
    } else {
        format!("{}/package.json", folder.trim_end_matches('/'))
    };
    let package = project.json(&file)?;
    package["scripts"][name].as_str().map(str::to_owned)
}

/// The script `name` of the package in `folder` with its `pre` and `post` scripts and `extra`
/// arguments, as npm runs it.
pub(super) fn script_with_hooks(
    project: &Project,
    folder: &str,
    name: &str,
    extra: &str,
) -> Option<String> {
    let main = script(project, folder, name)?;
    let mut lines: Vec<String> = Vec::new();
    lines.extend(script(project, folder, &format!("pre{name}")));
    lines.push(format!("{main} {extra}").trim().to_owned());
    lines.extend(script(project, folder, &format!("post{name}")));
    let cd = if folder.is_empty() || folder == "." {
        String::new()
    } else {
        format!("cd {folder}\n")
    };
    Some(format!("{cd}{}", lines.join("\n")))
}

/// The script `name` in each package of the workspace that has it.
pub(super) fn each(project: &Project, name: &str, extra: &str) -> Inner {
    let scripts: Vec<(String, String)> = packages(project)
        .into_iter()
        .filter_map(|folder| {
            let s = script_with_hooks(project, &folder, name, extra)?;
            Some((folder, s))
        })
        .collect();
    match scripts.is_empty() {
        true => Inner::Unknown,
        false => Inner::Each(scripts),
    }
}

/// The folders of the workspace's packages: package.json's `workspaces` (a list, or `{packages}`)
/// or pnpm-workspace.yaml's `packages`, each glob's `*` matched one folder deep.
pub(super) fn packages(project: &Project) -> Vec<String> {
    let mut globs: Vec<String> = Vec::new();
    if let Some(package) = project.json("package.json") {
        let list = package["workspaces"]
            .as_array()
            .or_else(|| package["workspaces"]["packages"].as_array());
        globs.extend(
            list.into_iter()
                .flatten()
                .filter_map(|g| g.as_str().map(str::to_owned)),
        );
    }
    if let Some(text) = project.text("pnpm-workspace.yaml") {
        if let Ok(docs) = yaml_rust2::YamlLoader::load_from_str(&text) {
            if let Some(list) = docs.first().and_then(|d| d["packages"].as_vec()) {
                globs.extend(list.iter().filter_map(|g| g.as_str().map(str::to_owned)));
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for glob in globs.iter().filter(|g| !g.starts_with('!')) {
        let glob = glob.trim_start_matches("./").trim_end_matches('/');
        let found: Vec<String> = match glob.split_once('*') {
            Some((dir, _)) => {
                let dir = dir.trim_end_matches('/');
                project
                    .list(dir)
                    .into_iter()
                    .filter(|(_, k)| *k == crate::untrusted_dir::Kind::Dir)
                    .map(|(n, _)| {
                        if dir.is_empty() {
                            n
                        } else {
                            format!("{dir}/{n}")
                        }
                    })
                    .filter(|f| project.is_file(&format!("{f}/package.json")))
                    .collect()
            }
            None => vec![glob.to_owned()],
        };
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Each workspace package's name and folder.
pub(super) fn package_folders(project: &Project) -> Vec<(String, String)> {
    packages(project)
        .into_iter()
        .filter_map(|f| {
            let name = project.json(&format!("{f}/package.json"))?["name"]
                .as_str()?
                .to_owned();
            Some((name, f))
        })
        .collect()
}

/// The words after a call's `--`, which npm and pnpm pass on to the package script.
pub fn after_separator(call: &Call) -> String {
    call.args
        .iter()
        .position(|a| a == "--")
        .map(|at| call.args[at + 1..].join(" "))
        .unwrap_or_default()
}

/// corepack, which fetches the package manager a project names (`corepack enable`, `corepack
/// prepare pnpm@9`): from npm's registry.
pub struct Corepack;

impl Tool for Corepack {
    fn name(&self) -> &'static str {
        "corepack"
    }

    fn role(&self) -> Role {
        Role::Other
    }

    fn is(&self, call: &Call, _: Option<&Project>) -> bool {
        call.name() == "corepack"
    }

    fn step(&self, _: &Call) -> Option<StepKind> {
        Some(StepKind::Setup)
    }

    fn registry(&self) -> Option<Registry> {
        Some(Registry::Npm)
    }
}

/// What every JavaScript package manager (npm, pnpm, Yarn, Bun) answers alike: what its call does
/// in a CI step, the package script it runs, and npm's registry.
macro_rules! node_manager {
    () => {
        fn step(&self, call: &Call) -> Option<StepKind> {
            super::npm::node_step(call)
        }

        fn script(&self, call: &Call) -> Option<(String, Vec<String>)> {
            super::npm::script_of(call)
        }

        fn registry(&self) -> Option<Registry> {
            Some(Registry::Npm)
        }
    };
}
pub(super) use node_manager;

/// What a JavaScript package manager's call does in a CI step (npm, pnpm, Yarn, Bun): what
/// changes the installed dependencies sets up, a package script by its name; `None` for a call
/// that starts a program (`npx X`, `npm exec X`).
pub(super) fn node_step(call: &Call) -> Option<StepKind> {
    let runs = matches!(call.name(), "npx" | "pnpx" | "bunx")
        || matches!(call.sub(), "exec" | "x" | "dlx");
    if runs {
        return None;
    }
    Some(match call.sub() {
        "" if call.name() == "yarn" => StepKind::Setup,
        // What changes the installed dependencies reaches the registry: removing one makes npm
        // resolve the rest again.
        "ci" | "install" | "i" | "add" | "rm" | "remove" | "uninstall" | "un" | "r" | "update"
        | "up" | "upgrade" | "dedupe" | "prune" => StepKind::Setup,
        "test" | "t" => StepKind::Check(super::found::CheckKind::Test),
        "run" | "run-script" => call
            .after(call.sub())
            .map_or(StepKind::Other, |s| super::step::by_name(&s[0])),
        // `yarn lint`, `pnpm typecheck`: a script by its name.
        other if call.name() != "npm" => super::step::by_name(other),
        _ => StepKind::Other,
    })
}

/// The package script a package manager's call runs and the arguments it passes on, its own
/// output flags left out (`npm run --silent lint` = `yarn lint`); `None` for a call that runs
/// no script (`npm ci`, `yarn add x`).
pub(super) fn script_of(call: &Call) -> Option<(String, Vec<String>)> {
    let args: Vec<&String> = call.args.iter().filter(|a| !output_flag(a)).collect();
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map_or("", |a| a.as_str());
    let rest: Vec<String> = args
        .iter()
        .filter(|a| a.as_str() != sub)
        .map(|a| (*a).clone())
        .collect();
    let run = matches!(sub, "run" | "run-script");
    let script = match sub {
        "run" | "run-script" => rest.first().cloned().unwrap_or_default(),
        "t" => "test".to_owned(),
        other => other.to_owned(),
    };
    if matches!(
        script.as_str(),
        "" | "install" | "i" | "ci" | "add" | "exec"
    ) {
        return None;
    }
    Some((script, rest.into_iter().skip(usize::from(run)).collect()))
}

/// A package manager's flag that changes only what it prints.
fn output_flag(arg: &str) -> bool {
    matches!(
        arg,
        "--silent" | "-s" | "--quiet" | "-q" | "--if-present" | "--color" | "--no-color"
    ) || arg.starts_with("--loglevel")
        || arg.starts_with("--reporter=")
}

/// Whether a package manager's call is global (`npm i -g pnpm`, `yarn global add x`): it
/// installs a tool by name.
pub(super) fn global(call: &Call) -> bool {
    call.args
        .iter()
        .any(|w| w == "-g" || w == "--global" || w == "global")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tools::{read_tests, recognise, Printed};

    fn workspace() -> Project {
        Project::in_memory(
            std::path::Path::new("/w"),
            &[
                (
                    "package.json",
                    r#"{"name": "root", "workspaces": ["packages/*"], "scripts": {"test": "npm test -ws", "pretest": "tsc -b"}}"#,
                ),
                (
                    "packages/a/package.json",
                    r#"{"name": "@nws/a", "scripts": {"test": "vitest run"}}"#,
                ),
                (
                    "packages/b/package.json",
                    r#"{"name": "@nws/b", "scripts": {"test": "jest"}}"#,
                ),
            ],
        )
    }

    #[test]
    fn scripts_and_workspaces_are_followed() {
        let p = workspace();
        assert_eq!(
            recognise("npm test", Some(&p)).tools,
            ["npm", "tsc", "vitest", "jest"]
        );
        assert_eq!(
            recognise("npx --yes eslint .", None).tools,
            ["npm", "eslint"]
        );
        assert_eq!(packages(&p), ["packages/a", "packages/b"]);
    }

    #[test]
    fn a_workspace_run_is_read_package_by_package() {
        // `npm test -ws`, as recorded: vitest in each package, `b` failing.
        let out = "\n> @nws/a@1.0.0 test\n> vitest run\n\n\n RUN  v3.2.7 /w/packages/a\n\n ✓ a.test.js (2 tests) 4ms\n\n Test Files  1 passed (1)\n\n> @nws/b@1.0.0 test\n> vitest run\n\n ❯ b.test.js (2 tests | 1 failed) 11ms\n   ✓ b passes 2ms\n   × b fails 8ms\n     → expected 1 to be 2 // Object.is equality\n\n Test Files  1 failed (1)\n";
        let p = workspace();
        let sections = Npm.sections(out, Some(&p)).unwrap();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[1].0, "packages/b");
        let uses = recognise("npm test -ws", Some(&p));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("packages/a")).unwrap();
        std::fs::create_dir_all(dir.path().join("packages/b")).unwrap();
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"workspaces": ["packages/*"]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("packages/a/package.json"),
            r#"{"name": "@nws/a"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("packages/b/package.json"),
            r#"{"name": "@nws/b"}"#,
        )
        .unwrap();
        let t = read_tests(
            &uses,
            &Printed {
                stdout: out,
                stderr: "",
                scratch: None,
                root: Some(dir.path()),
            },
        )
        .unwrap();
        assert_eq!(
            t.passed.iter().collect::<Vec<_>>(),
            ["packages/a/a.test.js"]
        );
        assert_eq!(
            t.failed.iter().collect::<Vec<_>>(),
            ["packages/b/b.test.js::b fails"]
        );
    }
}
