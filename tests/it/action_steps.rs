//! The composite action's own `run:` steps, run with bash as a runner would
//! (docs/github-action.md): the inputs as the action passes them (through `env:`, with their
//! defaults), `if:` conditions, `GITHUB_OUTPUT` per step, `GITHUB_STEP_SUMMARY`, `GITHUB_PATH`
//! (prepended for later steps), `GITHUB_ENV`, and the action's outputs from its steps' — on a
//! sample repository against the wiremock GitHub. `uses:` steps (the cache, setup-node) are the
//! runner's business and are skipped; ralph is already on `PATH` (the test binary), so the install
//! step keeps it.

use crate::compete::{github_repo, github_server, labeler, REPO_PATH};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};
use yaml_rust2::{Yaml, YamlLoader};

const TOKEN: &str = "ghs_actionStepsToken0123456789abcdef";

/// What a run of the action left.
struct Ran {
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    /// `name → exit code` of each step that ran; skipped steps are absent.
    steps: Vec<(String, i32)>,
    summary: String,
    /// Everything the steps printed.
    log: String,
    path_additions: Vec<String>,
}

/// A runner for `action.yml`.
struct Runner {
    action: Yaml,
    inputs: BTreeMap<String, String>,
    workdir: PathBuf,
    files: tempfile::TempDir,
    /// Variables every step gets (the runner's and the job's).
    env: BTreeMap<String, String>,
    /// Directories put first on `PATH`, like `GITHUB_PATH` entries.
    path: Vec<String>,
    /// Stop after the step of this name.
    stop_after: Option<String>,
    /// The runner's own `PATH` after the added folders (default: the test's).
    system_path: Option<String>,
}

impl Runner {
    fn new(workdir: &Path, inputs: &[(&str, &str)]) -> Runner {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
        let action = YamlLoader::load_from_str(&text).unwrap().remove(0);
        let mut all = BTreeMap::new();
        for (k, v) in action["inputs"].as_hash().unwrap() {
            let default = v["default"].as_str().unwrap_or("").to_owned();
            all.insert(k.as_str().unwrap().to_owned(), default);
        }
        // Where bubblewrap cannot run, the action's default (`required`) would stop every run:
        // these runs go unconfined, and say so.
        if let Err(why) = crate::security::bubblewrap() {
            eprintln!("the action runs with sandbox = off: {why}");
            all.insert("sandbox".into(), "off".into());
        }
        for (k, v) in inputs {
            assert!(all.contains_key(*k), "no input {k}");
            all.insert((*k).to_owned(), (*v).to_owned());
        }
        let files = tempfile::tempdir().unwrap();
        // ralph as the build step would leave it: on PATH.
        let bin = files.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ralph"), bin.join("ralph")).unwrap();
        let mut env = BTreeMap::new();
        for (k, v) in [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REPOSITORY", "octo-org/octo-repo"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("NO_COLOR", "1"),
        ] {
            env.insert(k.to_owned(), v.to_owned());
        }
        env.insert(
            "RUNNER_TEMP".into(),
            files.path().join("tmp").display().to_string(),
        );
        env.insert(
            "GITHUB_ACTION_PATH".into(),
            env!("CARGO_MANIFEST_DIR").into(),
        );
        std::fs::create_dir_all(files.path().join("tmp")).unwrap();
        Runner {
            action,
            inputs: all,
            workdir: workdir.to_owned(),
            env,
            path: vec![bin.display().to_string()],
            files,
            stop_after: None,
            system_path: None,
        }
    }

    /// `${{ … }}` in a value: inputs, the token, steps' outputs.
    fn expand(&self, text: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").unwrap() + start;
            out.push_str(&self.value(rest[start + 3..end].trim(), outputs));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    fn value(&self, expr: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> String {
        if let Some(name) = expr.strip_prefix("inputs.") {
            return self
                .inputs
                .get(name)
                .cloned()
                .unwrap_or_else(|| panic!("input {name}"));
        }
        if expr == "github.token" {
            return TOKEN.to_owned();
        }
        if let Some(rest) = expr.strip_prefix("steps.") {
            let (id, key) = rest.split_once(".outputs.").unwrap();
            return outputs
                .get(id)
                .and_then(|o| o.get(key))
                .cloned()
                .unwrap_or_default();
        }
        if let Some(lit) = expr.strip_prefix('\'').and_then(|e| e.strip_suffix('\'')) {
            return lit.to_owned();
        }
        panic!("an expression the test runner does not know: {expr}");
    }

    /// `a == 'b'` or `a != 'b'`.
    fn compare(&self, part: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> bool {
        if let Some((a, b)) = part.split_once("!=") {
            self.value(a.trim(), outputs) != self.value(b.trim(), outputs)
        } else if let Some((a, b)) = part.split_once("==") {
            self.value(a.trim(), outputs) == self.value(b.trim(), outputs)
        } else {
            panic!("a condition the test runner does not know: {part}");
        }
    }

    /// An `if:` condition: `a == 'b'`, `a != 'b'`, `(… || …)` of those, `always()`, joined by
    /// `&&`.
    fn condition(
        &self,
        cond: Option<&str>,
        failed: bool,
        outputs: &BTreeMap<String, BTreeMap<String, String>>,
    ) -> bool {
        let Some(cond) = cond else {
            return !failed;
        };
        let mut always = false;
        let mut ok = true;
        for part in cond.split("&&").map(str::trim) {
            if part == "always()" {
                always = true;
            } else if let Some(any) = part.strip_prefix('(').and_then(|p| p.strip_suffix(')')) {
                ok &= any.split("||").any(|p| self.compare(p.trim(), outputs));
            } else {
                ok &= self.compare(part, outputs);
            }
        }
        ok && (always || !failed)
    }

    fn run(&self) -> Ran {
        let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut steps = Vec::new();
        let mut failed = false;
        let mut log = String::new();
        let mut path = self.path.clone();
        let tmp = self.files.path();
        let summary = tmp.join("summary.md");
        let github_path = tmp.join("path");
        let github_env = tmp.join("env");
        for f in [&summary, &github_path, &github_env] {
            std::fs::write(f, "").unwrap();
        }
        for (i, step) in self.action["runs"]["steps"]
            .as_vec()
            .unwrap()
            .iter()
            .enumerate()
        {
            let name = step["name"].as_str().unwrap_or("").to_owned();
            let stop = self.stop_after.as_deref() == Some(name.as_str());
            let (Some(script), true) = (
                step["run"].as_str(),
                self.condition(step["if"].as_str(), failed, &outputs),
            ) else {
                if stop {
                    break;
                }
                continue;
            };
            assert_eq!(step["shell"].as_str(), Some("bash"), "{name}");
            let output = tmp.join(format!("output-{i}"));
            std::fs::write(&output, "").unwrap();
            let mut cmd = std::process::Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .current_dir(&self.workdir)
                .env_clear()
                .env("HOME", tmp)
                .env("GITHUB_OUTPUT", &output)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("GITHUB_PATH", &github_path)
                .env("GITHUB_ENV", &github_env);
            let system = self
                .system_path
                .clone()
                .unwrap_or_else(|| std::env::var("PATH").unwrap());
            cmd.env("PATH", format!("{}:{system}", path.join(":")));
            for (k, v) in &self.env {
                cmd.env(k, v);
            }
            for line in std::fs::read_to_string(&github_env).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    cmd.env(k, v);
                }
            }
            if let Some(vars) = step["env"].as_hash() {
                for (k, v) in vars {
                    cmd.env(
                        k.as_str().unwrap(),
                        self.expand(v.as_str().unwrap(), &outputs),
                    );
                }
            }
            let out = cmd.output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            log.push_str(&format!(
                "== {name} (exit {code})\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            steps.push((name, code));
            failed |= code != 0;
            let mut mine = BTreeMap::new();
            for line in std::fs::read_to_string(&output).unwrap().lines() {
                if let Some((k, v)) = line.split_once('=') {
                    mine.insert(k.to_owned(), v.to_owned());
                }
            }
            if let Some(id) = step["id"].as_str() {
                outputs.insert(id.to_owned(), mine);
            }
            // GITHUB_PATH entries come first for the steps after.
            let added: Vec<String> = std::fs::read_to_string(&github_path)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect();
            path = added
                .iter()
                .rev()
                .cloned()
                .chain(self.path.clone())
                .collect();
            if stop {
                break;
            }
        }
        let mut action_outputs = BTreeMap::new();
        for (k, v) in self.action["outputs"].as_hash().unwrap() {
            let value = self.expand(v["value"].as_str().unwrap(), &outputs);
            action_outputs.insert(k.as_str().unwrap().to_owned(), value);
        }
        Ran {
            outputs: action_outputs,
            steps,
            summary: std::fs::read_to_string(summary).unwrap(),
            log,
            path_additions: std::fs::read_to_string(github_path)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// The sample repository, with the GitHub tracker (as a repository using the action has).
fn repository() -> crate::compete::Repo {
    let repo = github_repo();
    let config = repo.root.join(".ralph/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("tracker = \"local\"", "tracker = \"github\""),
    )
    .unwrap();
    repo
}

fn ran(r: &Ran, step: &str) -> Option<i32> {
    r.steps.iter().find(|(n, _)| n == step).map(|(_, c)| *c)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_mode_gives_the_matrix_and_names_stale_issues_in_the_summary() {
    let server = wiremock::MockServer::start().await;
    let mut ready: Value = serde_json::from_str(&crate::common::fixture("issue_12.json")).unwrap();
    ready["labels"] = json!([{"name": "ready"}]);
    let mut stuck = ready.clone();
    stuck["number"] = json!(14);
    stuck["labels"] = json!([{"name": "in-progress"}]);
    for (label, body) in [("ready", json!([ready])), ("in-progress", json!([stuck]))] {
        Mock::given(method("GET"))
            .and(path(format!("{REPO_PATH}/issues")))
            .and(query_param("labels", label))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues/14/events")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([
            {"event": "labeled", "actor": {"login": "ralph-bot"}, "label": {"name": "in-progress"}, "created_at": "2026-01-05T05:00:00Z"}
        ])))
        .mount(&server)
        .await;
    // In refinement: #15 waits for a draft, #16 has one.
    let mut waiting = ready.clone();
    waiting["number"] = json!(15);
    waiting["labels"] = json!([{"name": "in-refinement"}]);
    let mut drafted = waiting.clone();
    drafted["number"] = json!(16);
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues")))
        .and(query_param("labels", "in-refinement"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([waiting, drafted])))
        .mount(&server)
        .await;
    for (n, comments) in [
        (15, json!([])),
        (
            16,
            json!([{"body": "<!-- ralph:refine -->\nralph drafted"}]),
        ),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("{REPO_PATH}/issues/{n}/comments")))
            .respond_with(ResponseTemplate::new(200).set_body_json(comments))
            .mount(&server)
            .await;
    }
    let repo = repository();
    let mut runner = Runner::new(&repo.root, &[("mode", "queue")]);
    runner.env.insert("GITHUB_API_URL".into(), server.uri());
    let r = tokio::task::spawn_blocking(move || runner.run())
        .await
        .unwrap();
    assert_eq!(ran(&r, "List the ready issues"), Some(0), "{}", r.log);
    assert_eq!(
        r.outputs["matrix"], r#"{"include":[{"issue":12}]}"#,
        "{}",
        r.log
    );
    assert!(
        r.summary.contains("**Stale**") && r.summary.contains("- #14 "),
        "{}",
        r.summary
    );
    assert_eq!(r.outputs["refine-matrix"], r#"{"include":[{"issue":15}]}"#);
    assert_eq!(ran(&r, "Compete"), None, "queue mode does not compete");
    assert_eq!(ran(&r, "Refine"), None);
    assert_eq!(ran(&r, "Install the agent CLIs"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refine_mode_drafts_the_spec_and_neither_competes_nor_records_a_ledger() {
    let server = wiremock::MockServer::start().await;
    let mut prose: Value = serde_json::from_str(&crate::common::fixture("issue_12.json")).unwrap();
    prose["body"] = json!("Users want the shell library to greet them by name.\r\n");
    prose["labels"] = json!([{"name": "in-refinement"}]);
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues/12")))
        .respond_with(ResponseTemplate::new(200).set_body_json(prose))
        .mount(&server)
        .await;
    crate::common::labelled_by(&server, 12, "in-refinement", "maintainer", "write").await;
    Mock::given(method("POST"))
        .and(path(format!("{REPO_PATH}/issues/12/comments")))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({})))
        .expect(1)
        .mount(&server)
        .await;
    let repo = repository();
    crate::common::script(&repo.tools, "arbiter.sh", crate::refine::ARBITER);
    let mut runner = Runner::new(&repo.root, &[("mode", "refine"), ("issue", "12")]);
    runner.env.insert("GITHUB_API_URL".into(), server.uri());
    let r = tokio::task::spawn_blocking(move || runner.run())
        .await
        .unwrap();
    assert_eq!(ran(&r, "Refine"), Some(0), "{}", r.log);
    assert!(r.log.contains("Drafted #12: 1 requirement(s)"), "{}", r.log);
    for step in ["Compete", "Record the ledger", "List the ready issues"] {
        assert_eq!(ran(&r, step), None, "{step}");
    }
    let requests = server.received_requests().await.unwrap();
    let writes: Vec<String> = requests
        .iter()
        .filter(|q| q.method.as_str() != "GET")
        .map(|q| format!("{} {}", q.method, q.url.path()))
        .collect();
    assert_eq!(writes, [format!("POST {REPO_PATH}/issues/12/comments")]);
}

#[test]
fn an_unknown_mode_stops_before_anything_runs() {
    let repo = repository();
    let runner = Runner::new(&repo.root, &[("mode", "compet")]);
    let r = runner.run();
    assert_eq!(ran(&r, "Check the mode"), Some(1));
    assert!(
        r.log
            .contains("mode must be compete, queue, refine or follow, not \"compet\""),
        "{}",
        r.log
    );
    assert_eq!(r.steps.len(), 1, "{:?}", r.steps);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compete_mode_runs_publishes_its_outputs_and_pushes_the_ledger() {
    let server = github_server().await;
    labeler(&server, "maintain").await;
    let repo = repository();
    let mut runner = Runner::new(&repo.root, &[("issue", "12")]);
    runner.env.insert("GITHUB_API_URL".into(), server.uri());
    let r = tokio::task::spawn_blocking(move || runner.run())
        .await
        .unwrap();
    for step in [
        "Key the ralph build",
        "Install ralph",
        "Find the agent CLIs",
        "Install the agent CLIs",
        "Compete",
        "Record the ledger",
    ] {
        assert_eq!(ran(&r, step), Some(0), "{step}:\n{}", r.log);
    }
    assert!(r.log.contains("ralph is on PATH"), "{}", r.log);
    assert!(r.log.contains("no agent CLI to install"), "{}", r.log);
    assert_eq!(r.outputs["outcome"], "complete");
    assert!(
        r.outputs["pr-url"].starts_with("https://"),
        "{:?}",
        r.outputs
    );
    assert_eq!(r.outputs["winner"], "alpha");
    assert!(r.outputs["branch"].starts_with("ralph/12-"));
    assert!(
        r.summary.contains("### Leaderboard after this run"),
        "{}",
        r.summary
    );
    // The ledger step committed the new events to the base branch on the remote.
    let listed = crate::common::git(&repo.remote, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(
        listed.contains(".ralph/events/") && listed.contains("-alpha-success.json"),
        "{listed}"
    );
    assert!(!r.log.contains(TOKEN) && !r.summary.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_writes_nothing_and_skips_the_ledger() {
    let server = github_server().await;
    let repo = repository();
    let mut runner = Runner::new(&repo.root, &[("issue", "12"), ("dry-run", "true")]);
    runner.env.insert("GITHUB_API_URL".into(), server.uri());
    let r = tokio::task::spawn_blocking(move || runner.run())
        .await
        .unwrap();
    assert_eq!(ran(&r, "Compete"), Some(0), "{}", r.log);
    assert_eq!(r.outputs["outcome"], "dry_run");
    assert_eq!(ran(&r, "Record the ledger"), None);
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests.iter().all(|q| q.method.as_str() == "GET"),
        "a dry run only reads"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_clis_the_configuration_runs_are_installed_at_the_pinned_versions() {
    let repo = repository();
    // A configuration with a claude, a gemini and an aider bot and a codex implementer; none
    // of the CLIs is installed.
    let config_path = repo.root.join(".ralph/config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    let mut lines: Vec<String> = Vec::new();
    let mut in_implementer = false;
    for line in config.lines() {
        if line.starts_with('[') {
            in_implementer = line == "[implementer]";
        }
        if line == "[arbiter]" {
            lines.push(
                "[[bots]]\nid = \"claude-bot\"\nbackend = \"claude\"\nmodel = \"sonnet\"".into(),
            );
            lines.push(
                "[[bots]]\nid = \"gemini-bot\"\nbackend = \"gemini\"\nmodel = \"gemini-2.5-pro\""
                    .into(),
            );
            lines.push(
                "[[bots]]\nid = \"aider-bot\"\nbackend = \"aider\"\nmodel = \"sonnet\"".into(),
            );
        }
        if in_implementer && line.starts_with("command = ") {
            lines.push("backend = \"codex\"\nmodel = \"gpt-5\"".into());
            continue;
        }
        lines.push(line.to_owned());
    }
    std::fs::write(&config_path, lines.join("\n") + "\n").unwrap();
    // A stand-in npm: records its arguments and provides each package's program.
    let mut runner = Runner::new(&repo.root, &[("issue", "12"), ("codex-version", "0.170.0")]);
    let npm_dir = runner.files.path().join("npm-bin");
    std::fs::create_dir_all(&npm_dir).unwrap();
    crate::common::script(
        &npm_dir,
        "npm",
        r#"echo "$@" >> "$RUNNER_TEMP/npm.calls"
prefix=""; while [ $# -gt 0 ]; do case "$1" in --prefix) prefix=$2; shift;; esac; shift; done
mkdir -p "$prefix/node_modules/.bin"
for p in claude codex gemini; do printf '#!/bin/sh\necho fake\n' > "$prefix/node_modules/.bin/$p"; chmod +x "$prefix/node_modules/.bin/$p"; done"#,
    );
    // A stand-in python3 whose venv's pip records its arguments and provides aider.
    crate::common::script(
        &npm_dir,
        "python3",
        r##"[ "$1 $2" = "-m venv" ] || exit 3
mkdir -p "$3/bin"
printf '#!/bin/sh\necho "$@" >> "$RUNNER_TEMP/pip.calls"\nprintf "#!/bin/sh\\necho fake\\n" > "%s/bin/aider"; chmod +x "%s/bin/aider"\n' "$3" "$3" > "$3/bin/pip"
chmod +x "$3/bin/pip""##,
    );
    runner.path.push(npm_dir.display().to_string());
    // Keep a system `claude` or `codex` out of the way.
    runner
        .env
        .insert("RALPH_CLAUDE_BIN".into(), "ralph-test-claude".into());
    runner
        .env
        .insert("RALPH_CODEX_BIN".into(), "ralph-test-codex".into());
    runner
        .env
        .insert("RALPH_GEMINI_BIN".into(), "ralph-test-gemini".into());
    runner
        .env
        .insert("RALPH_AIDER_BIN".into(), "ralph-test-aider".into());
    runner.stop_after = Some("Install the agent CLIs".into());
    let tmp = runner.files.path().join("tmp");
    let r = runner.run();
    assert_eq!(ran(&r, "Install the agent CLIs"), Some(0), "{}", r.log);
    let calls = std::fs::read_to_string(tmp.join("npm.calls")).unwrap();
    assert!(
        calls.contains("@anthropic-ai/claude-code@2.1.330"),
        "{calls}"
    );
    assert!(calls.contains("@openai/codex@0.170.0"), "{calls}");
    assert!(calls.contains("@google/gemini-cli@0.61.0"), "{calls}");
    assert!(calls.contains("--no-audit"), "{calls}");
    // Aider from PyPI, in a venv; only its program goes on PATH.
    let pip = std::fs::read_to_string(tmp.join("pip.calls")).unwrap();
    assert!(pip.contains("aider-chat==0.86.2"), "{pip}");
    assert!(
        r.path_additions.iter().any(|p| p.ends_with("agent-bin")),
        "{:?}",
        r.path_additions
    );
    assert!(
        r.path_additions
            .iter()
            .any(|p| p.ends_with("agent-clis/node_modules/.bin")),
        "{:?}",
        r.path_additions
    );
}

#[test]
fn the_sandbox_step_installs_bubblewrap_and_allows_it_user_namespaces() {
    let repo = repository();
    let mut runner = Runner::new(&repo.root, &[("issue", "12")]);
    // A runner without bwrap: every program of the test's PATH but bwrap, and stand-ins for
    // sudo and apt-get (which "installs" a bwrap that logs its calls).
    let fakes = runner.files.path().join("fakes");
    let system = runner.files.path().join("system");
    std::fs::create_dir_all(&fakes).unwrap();
    std::fs::create_dir_all(&system).unwrap();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let link = system.join(&name);
            if name != "bwrap" && name != "sudo" && name != "apt-get" && !link.exists() {
                let _ = std::os::unix::fs::symlink(entry.path(), link);
            }
        }
    }
    crate::common::script(
        &fakes,
        "sudo",
        r#"echo "sudo $*" >> "$RUNNER_TEMP/calls"; "$@""#,
    );
    let bwrap =
        "#!/bin/sh\necho \"bwrap $*\" >> \"$RUNNER_TEMP/calls\"\n[ \"$1\" = --version ] && echo 'bubblewrap 0.9.0'\nexit 0\n";
    crate::common::script(
        &fakes,
        "apt-get",
        &format!(
            "echo \"apt-get $*\" >> \"$RUNNER_TEMP/calls\"\ncase \"$*\" in *install*) cat > \"{}/bwrap\" <<'EOF'\n{bwrap}EOF\nchmod +x \"{}/bwrap\";; esac",
            fakes.display(),
            fakes.display()
        ),
    );
    runner.path.push(fakes.display().to_string());
    runner.system_path = Some(system.display().to_string());
    runner.stop_after = Some("Set up the sandbox".into());
    let tmp = runner.files.path().join("tmp");
    let r = runner.run();
    assert_eq!(ran(&r, "Set up the sandbox"), Some(0), "{}", r.log);
    let calls = std::fs::read_to_string(tmp.join("calls")).unwrap();
    assert!(
        calls.contains("sudo apt-get install -y -qq --no-install-recommends bubblewrap"),
        "{calls}"
    );
    assert!(
        calls.contains("bwrap --ro-bind / / --unshare-pid --proc /proc --dev /dev true"),
        "the step checks that bwrap works: {calls}"
    );
    assert!(r.log.contains("sandbox: bubblewrap 0.9.0"), "{}", r.log);

    // `off` skips the step.
    let mut off = Runner::new(&repo.root, &[("issue", "12"), ("sandbox", "off")]);
    off.stop_after = Some("Set up the sandbox".into());
    let r = off.run();
    assert_eq!(ran(&r, "Set up the sandbox"), None, "{:?}", r.steps);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_mode_settles_a_merged_pull_request_lists_it_in_the_summary_and_pushes_the_ledger() {
    let server = github_server().await;
    let repo = repository();
    // The competition that opened pull request #21.
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri())
        .args(["--repo", "octo-org/octo-repo", "compete", "12"]);
    let out = tokio::task::spawn_blocking(move || crate::compete::run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let branch = crate::common::git(
        &repo.remote,
        &[
            "branch",
            "--list",
            "ralph/12-*",
            "--format=%(refname:short)",
        ],
    );
    let mut pr: Value = serde_json::from_str(&crate::common::fixture("pull_request.json")).unwrap();
    pr["head"]["ref"] = json!(branch.trim());
    pr["head"]["repo"]["full_name"] = json!("octo-org/octo-repo");
    pr["state"] = json!("closed");
    pr["merged_at"] = json!("2026-11-24T12:00:00Z");
    pr["created_at"] = json!("2026-11-24T10:00:00Z");
    pr["merge_commit_sha"] = json!("0123456789abcdef0123456789abcdef01234567");
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/pulls")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([pr])))
        .mount(&server)
        .await;
    let mut runner = Runner::new(&repo.root, &[("mode", "follow")]);
    runner.env.insert("GITHUB_API_URL".into(), server.uri());
    let r = tokio::task::spawn_blocking(move || runner.run())
        .await
        .unwrap();
    for step in ["Find the agent CLIs", "Follow", "Record the ledger"] {
        assert_eq!(ran(&r, step), Some(0), "{step}:\n{}", r.log);
    }
    assert_eq!(ran(&r, "Compete"), None);
    assert!(r.summary.contains("### ralph follow"), "{}", r.summary);
    assert!(
        r.summary.contains("settled merged for alpha"),
        "{}",
        r.summary
    );
    let listed = crate::common::git(&repo.remote, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(listed.contains("-alpha-merged.json"), "{listed}");
    assert!(!r.log.contains(TOKEN) && !r.summary.contains(TOKEN));
}
