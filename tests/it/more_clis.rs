//! The other agent CLIs teams run — Gemini CLI, Qwen Code and OpenCode from npm, Aider from
//! PyPI — driven by ralph against a local model server (Gemini's API for Gemini CLI, OpenAI
//! Chat Completions for the others; never a real API): a whole competition on each, through
//! the binary and — where bubblewrap works — the sandbox, required, with one bot whose model
//! tries to write while proposing; the tools each role was offered; the user's own state of
//! each CLI untouched; and a 401 and a 429 reported with their reason.
//!
//! `.ci/run` installs pinned versions: the npm ones beside Claude Code and Codex in
//! `target/agent-clis` (`RALPH_TEST_AGENT_CLIS`), Aider in a venv, `target/ci-tools/aider`
//! (`RALPH_TEST_AIDER`). A CLI that is not there makes its test say why it is skipped.

use crate::common::git;
use crate::compete::{run, Repo, Setup, ISSUE};
use crate::model_server::{greet_answers, tool_names, Asked, ModelServer, Reply};
use crate::real_clis::outside_tmp;
use ralph::agent::{AgentError, Role};
use ralph::config::AgentConfig;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The versions `.ci/run` installs.
const VERSIONS: [(&str, &str); 4] = [
    ("gemini", "@google/gemini-cli@0.61.0"),
    ("qwen", "@qwen-code/qwen-code@0.15.10"),
    ("opencode", "opencode-ai@1.18.33"),
    ("aider", "aider-chat==0.86.2"),
];

const LIB: &str = "add() { echo $(($1 + $2)); }\ngreet() { echo \"Hello, $1!\"; }\n";

/// The variable the tests' key is in (`api_key_env`).
const KEY_VAR: &str = "RALPH_TEST_MODEL_KEY";

/// The program of `cli`, or `None` (with the reason printed).
fn program(cli: &str) -> Option<PathBuf> {
    crate::agent_clis::installed(cli)
        .map_err(|path| {
            let package = VERSIONS.iter().find(|(c, _)| *c == cli).map(|(_, p)| *p);
            eprintln!(
                "skipping: {cli} is not installed at {} (`.ci/run` installs {} there when its registry is reachable)",
                path.display(),
                package.unwrap_or(cli)
            );
        })
        .ok()
}

/// The model's address as each CLI is configured with it.
fn base_url(cli: &str, server: &str) -> String {
    match cli {
        "gemini" => server.to_owned(),
        _ => format!("{server}/v1"),
    }
}

fn config(cli: &str, program: &Path, server: &str) -> String {
    format!(
        "tracker = \"local\"\nmax_iterations = 2\n[marketplace]\nbase_budget_per_bot = 1\n[defaults]\nbackend = \"{cli}\"\nmodel = \"test-model\"\ncommand = [\"{}\"]\nbase_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\ntimeout_secs = 240\n[[bots]]\nid = \"smart_bot_1\"\n[[bots]]\nid = \"smart_bot_2\"\n[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\n[git]\nauthor = \"ralph <ralph@example.com>\"\n",
        program.display(),
        base_url(cli, server)
    )
}

/// The tool call that writes `lib.sh` in each CLI's vocabulary (Aider has none: it edits
/// the files its reply names).
fn write_tool(cli: &str, path: &str, content: &str) -> (String, Value) {
    match cli {
        "opencode" => (
            "write".into(),
            json!({"filePath": path, "content": content}),
        ),
        _ => (
            "write_file".into(),
            json!({"file_path": path, "content": content}),
        ),
    }
}

/// Aider's reply that writes a whole file (`file\n```\ncontent```), then ralph's answer.
fn aider_edit(path: &str, content: &str, answer: &str) -> Reply {
    Reply::Text(format!("{path}\n```\n{content}```\n\n{answer}"))
}

/// The greet competition's answers on `cli`, with smart_bot_2 first trying to write ROGUE.md
/// while proposing.
fn script(cli: &'static str) -> impl Fn(&Asked) -> Reply {
    move |asked| {
        let rogue = asked.role == "propose"
            && asked.bot.as_deref() == Some("smart_bot_2")
            && !asked.after_tool;
        let lib = workdir_path(asked, "lib.sh");
        // Qwen Code writes a file only after reading it in the same session.
        let tool_turns = asked.body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        match (cli, asked.role, asked.after_tool) {
            ("qwen", "implement", _) if tool_turns == 0 => {
                Reply::Tools(vec![("read_file".into(), json!({"file_path": lib}))])
            }
            ("qwen", "implement", _) if tool_turns == 1 => {
                Reply::Tools(vec![write_tool(cli, &lib, LIB)])
            }
            // In Aider's whole-file format every fence is a file: the summary goes unfenced.
            ("aider", "implement", _) => aider_edit(
                "lib.sh",
                LIB,
                "{\"summary\": \"added greet\", \"checkboxes_completed\": [\"req_1\"]}",
            ),
            ("aider", _, _) if rogue => {
                let Reply::Text(answer) = greet_answers(asked, &|| write_tool(cli, &lib, LIB))
                else {
                    unreachable!()
                };
                aider_edit("ROGUE.md", "rogue\n", &answer)
            }
            (_, _, _) if rogue => {
                let rogue = workdir_path(asked, "ROGUE.md");
                Reply::Tools(vec![write_tool(cli, &rogue, "rogue\n")])
            }
            _ => greet_answers(asked, &|| write_tool(cli, &lib, LIB)),
        }
    }
}

/// `name` in the checkout the request names (Qwen Code takes absolute paths only; each CLI
/// tells its model its working directory), else relative.
fn workdir_path(asked: &Asked, name: &str) -> String {
    let text = asked.body.to_string();
    let marker = "/ralph/checkouts/";
    let Some(i) = text.find(marker) else {
        return name.to_owned();
    };
    let start = text[..i]
        .rfind(|c: char| c == '"' || c.is_whitespace() || c == ':')
        .map_or(0, |s| s + 1);
    let rest = &text[i..];
    let end = rest
        .find(|c: char| c == '"' || c == '\\' || c == '`' || c.is_whitespace())
        .unwrap_or(rest.len());
    let dir = format!("{}{}", &text[start..i], &rest[..end]);
    format!("{}/{name}", dir.trim_end_matches(['/', '.', ',']))
}

/// Runs a competition of two bots on `cli` and checks what the run left behind.
async fn compete_on(cli: &'static str) {
    let Some(program) = program(cli) else { return };
    let repo = Repo::with(Setup {
        issues: &[(3, ISSUE)],
        under: Some(&outside_tmp()),
        ..Setup::default()
    });
    let server = ModelServer::start(script(cli)).await;
    std::fs::write(
        repo.root.join(".ralph/config.toml"),
        config(cli, &program, &server.uri()),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        // Where bubblewrap works, the sandbox is required: a run without it fails.
        if crate::security::bubblewrap().is_ok() {
            cmd.env("RALPH_SANDBOX", "required");
        }
        cmd.env(KEY_VAR, "sk-test-0000")
            .args(["compete", "3", "--json"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    eprintln!(
        "{cli}: the competition took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    if out.code != 0 {
        // What the implementer's model was told after its tool call.
        let all = server.requests.lock().unwrap().clone();
        let roles: Vec<String> = all
            .iter()
            .map(|r| {
                format!(
                    "{}{}",
                    r["role"],
                    if r["after_tool"] == true { "+tool" } else { "" }
                )
            })
            .collect();
        eprintln!("{cli}: requests {roles:?}");
        for r in server.of("implement") {
            let messages = &r["body"]["messages"];
            let last = messages
                .as_array()
                .and_then(|m| m.last())
                .unwrap_or(&r["body"]["contents"]);
            eprintln!("{cli} implement, after a tool: {}: {last}", r["after_tool"]);
        }
    }
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{}\n{report}", out.stderr);
    assert_eq!(
        report["sandbox"]["active"],
        crate::security::bubblewrap().is_ok(),
        "{}",
        report["sandbox"]
    );
    assert!(
        report.get("network_refused").is_none(),
        "{cli} reached only its model: {}",
        report["network_refused"]
    );
    let lib = git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:lib.sh"],
    );
    assert!(lib.contains("greet()"), "{cli} edited the worktree: {lib}");
    // Both proposals counted; the rogue one wrote nothing.
    assert_eq!(
        report["rounds"][0]["proposals"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    assert!(
        !repo.root.join("ROGUE.md").exists(),
        "{cli} wrote while proposing"
    );
    let branch_files = git(
        &repo.remote,
        &[
            "ls-tree",
            "-r",
            "--name-only",
            "ralph/3-add-a-greet-function",
        ],
    );
    assert!(!branch_files.contains("ROGUE.md"), "{branch_files}");
    assert!(
        !branch_files.contains(".aider"),
        "Aider's history stayed in its home: {branch_files}"
    );
    // The user's own state of the CLI (HOME is the test's) was never made or touched.
    for state in [
        ".gemini",
        ".qwen",
        ".config/opencode",
        ".local/share/opencode",
        ".aider",
    ] {
        assert!(
            !repo.tools.join(state).exists(),
            "{cli} left {state} in HOME"
        );
    }
    // Every model request came here, with the key from `api_key_env`.
    for role in ["extract", "propose", "judge", "implement", "verify"] {
        assert!(!server.of(role).is_empty(), "{cli}: no {role} request");
    }
    let offered = |role: &str| tool_names(&server.of(role)[0]["body"]);
    let writes = |tools: &[String]| {
        tools.iter().any(|t| {
            [
                "write_file",
                "write",
                "edit",
                "replace",
                "run_shell_command",
                "bash",
            ]
            .contains(&t.as_str())
        })
    };
    if cli != "aider" {
        for role in ["extract", "propose", "judge", "verify"] {
            let tools = offered(role);
            // OpenCode offers its tools and refuses them by its permissions.
            assert!(
                cli == "opencode" || !writes(&tools),
                "{cli} {role}: {tools:?}"
            );
        }
        assert!(
            writes(&offered("implement")),
            "{cli}: {:?}",
            offered("implement")
        );
    }
    // Each CLI reported its tokens (the server's usage, or Aider's count).
    let total = &report["total"];
    eprintln!(
        "{cli}: {} calls, {} input and {} output tokens, cost {}",
        total["calls"], total["input_tokens"], total["output_tokens"], total["cost_usd"]
    );
    assert!(total["input_tokens"].as_u64().unwrap_or(0) > 0, "{total}");
    assert!(total["output_tokens"].as_u64().unwrap_or(0) > 0, "{total}");
}

/// An agent on `cli` against `server`, as `[[bots]]` configures it.
fn agent(cli: &str, program: &Path, server: &str) -> AgentConfig {
    let file: toml::Table = config(cli, program, server).parse().unwrap();
    let d = &file["defaults"];
    AgentConfig {
        backend: serde_json::from_value(json!(cli)).unwrap(),
        model: Some("test-model".into()),
        command: vec![program.to_string_lossy().into_owned()],
        base_url: d["base_url"].as_str().map(String::from),
        timeout_secs: 240,
        dir: None,
        api_key_env: Some(KEY_VAR.into()),
        max_tokens: None,
        temperature: None,
        args: vec![],
        price: None,
    }
}

/// A 401 and a 429 from the model, through each CLI: the credentials error, and the rate
/// limit named as such, in the CLI's own words (each CLI retries a 429 its own way first:
/// about 25 s for Gemini CLI, 70 to 85 s for the others).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clis_401_and_429_come_through_with_their_reason() {
    let dir = tempfile::tempdir_in(outside_tmp()).unwrap();
    std::env::set_var(KEY_VAR, "sk-test-0000");
    let server = ModelServer::start(|asked: &Asked| match asked.body.to_string() {
        t if t.contains("CASE-401") => Reply::Error(401, "Incorrect API key provided (test 401)"),
        t if t.contains("CASE-429") => {
            Reply::Error(429, "Rate limit reached for test-model (test 429)")
        }
        _ => Reply::Text("```json\n{\"ok\": true}\n```".into()),
    })
    .await;
    let prompt = "You are smart_bot_1, one of several independent engineers. Propose.";
    let mut runs = Vec::new();
    for (cli, _) in VERSIONS {
        let Some(program) = program(cli) else {
            continue;
        };
        let backend = ralph::agent::clis::build(
            serde_json::from_value(json!(cli)).unwrap(),
            &agent(cli, &program, &server.uri()),
        );
        let workdir = dir.path().to_owned();
        runs.push(tokio::spawn(async move {
            let ask = |case: &str| {
                crate::real_clis::call(Role::Propose, &workdir, &format!("{prompt} CASE-{case}"))
            };
            let ok = backend.call(&ask("ok")).await;
            let e401 = backend.call(&ask("401")).await;
            let e429 = backend.call(&ask("429")).await;
            (cli, ok, e401, e429)
        }));
    }
    for run in runs {
        let (cli, ok, e401, e429) = run.await.unwrap();
        let ok = ok.unwrap_or_else(|e| panic!("{cli}: {e}"));
        assert!(ok.text.contains("\"ok\""), "{cli}: {}", ok.text);
        match e401 {
            Err(AgentError::Auth { message, .. }) => {
                assert!(
                    message.contains("HTTP 401") && message.contains("test 401"),
                    "{cli}: {message}"
                )
            }
            other => panic!("{cli} 401: {other:?}"),
        }
        match e429 {
            Err(e @ AgentError::Reported { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains("(HTTP 429)") && text.contains("test 429"),
                    "{cli}: {text}"
                );
                eprintln!("{cli}: {text}");
            }
            other => panic!("{cli} 429: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_gemini_cli() {
    compete_on("gemini").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_qwen_code() {
    compete_on("qwen").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_opencode() {
    compete_on("opencode").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_aider() {
    compete_on("aider").await;
}

/// One competition with a bot on each of the six agent CLIs — Claude Code, Codex, Gemini CLI,
/// Qwen Code, OpenCode and Aider — and on each of the two HTTP APIs (Messages, Chat
/// Completions), against one local server speaking each one's API, seats drawn from the ledger
/// across them; then the leaderboard per bot and per backend.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_field_of_six_clis_and_two_apis_competes_and_is_ranked_per_backend() {
    let Some(npm_bin) = crate::real_clis::clis() else {
        return;
    };
    let (Some(gemini), Some(qwen), Some(opencode), Some(aider)) = (
        program("gemini"),
        program("qwen"),
        program("opencode"),
        program("aider"),
    ) else {
        return;
    };
    let repo = Repo::with(Setup {
        issues: &[(3, ISSUE)],
        under: Some(&outside_tmp()),
        ..Setup::default()
    });
    let server = ModelServer::start(|asked: &Asked| {
        let lib = workdir_path(asked, "lib.sh");
        greet_answers(asked, &|| write_tool("gemini", &lib, LIB))
    })
    .await;
    let uri = server.uri();
    let bot = |id: &str, backend: &str, model: &str, program: &Path, url: Option<String>| {
        let url = url.map_or(String::new(), |u| {
            format!("base_url = \"{u}\"\napi_key_env = \"{KEY_VAR}\"\n")
        });
        format!(
            "[[bots]]\nid = \"{id}\"\nbackend = \"{backend}\"\nmodel = \"{model}\"\ncommand = [\"{}\"]\n{url}",
            program.display()
        )
    };
    let config = [
        format!(
            "tracker = \"local\"\nmax_iterations = 1\n[marketplace]\nbase_budget_per_bot = 1\nseats = 8\n[defaults]\ntimeout_secs = 240\n[arbiter]\nbackend = \"gemini\"\nmodel = \"test-model\"\ncommand = [\"{0}\"]\nbase_url = \"{uri}\"\napi_key_env = \"{KEY_VAR}\"\n[implementer]\nbackend = \"gemini\"\nmodel = \"test-model\"\ncommand = [\"{0}\"]\nbase_url = \"{uri}\"\napi_key_env = \"{KEY_VAR}\"\n",
            gemini.display()
        ),
        bot("on_claude", "claude", "sonnet", &npm_bin.join("claude"), None),
        bot("on_codex", "codex", "gpt-5.5", &npm_bin.join("codex"), None),
        bot("on_gemini", "gemini", "test-model", &gemini, Some(uri.clone())),
        bot("on_qwen", "qwen", "test-model", &qwen, Some(format!("{uri}/v1"))),
        bot("on_opencode", "opencode", "test-model", &opencode, Some(format!("{uri}/v1"))),
        bot("on_aider", "aider", "test-model", &aider, Some(format!("{uri}/v1"))),
        format!("[[bots]]\nid = \"on_anthropic\"\nbackend = \"anthropic\"\nmodel = \"claude-test\"\nbase_url = \"{uri}\"\napi_key_env = \"{KEY_VAR}\"\n"),
        format!("[[bots]]\nid = \"on_openai\"\nbackend = \"openai\"\nmodel = \"test-model\"\nbase_url = \"{uri}/v1\"\napi_key_env = \"{KEY_VAR}\"\n"),
        "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\n[git]\nauthor = \"ralph <ralph@example.com>\"\n".to_owned(),
    ]
    .concat();
    std::fs::write(repo.root.join(".ralph/config.toml"), config).unwrap();
    let codex_home = crate::real_clis::codex_home(&repo.tools, &uri);
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        for (k, v) in crate::real_clis::claude_env(&uri, &repo.tools) {
            cmd.env(k, v);
        }
        // Where bubblewrap works, the sandbox is required: a run without it fails.
        if crate::security::bubblewrap().is_ok() {
            cmd.env("RALPH_SANDBOX", "required");
        }
        cmd.env(KEY_VAR, "sk-test-0000")
            .env("CODEX_HOME", &codex_home)
            .env("MOCK_API_KEY", "sk-mock-0000")
            .args(["compete", "3", "--json"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{report}");
    // Every bot proposed, each through its own CLI.
    let bots: Vec<&str> = report["rounds"][0]["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["bot_id"].as_str())
        .collect();
    assert_eq!(bots.len(), 8, "{bots:?}\n{}", out.stderr);
    assert!(out.stderr.contains("seated: 8 of 8"), "{}", out.stderr);
    let board = run(repo.ralph().args(["leaderboard", "--json"]));
    let board: Value = serde_json::from_str(&board.stdout).unwrap();
    let backends: Vec<&str> = board["backends"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["backend"].as_str())
        .collect();
    for b in [
        "claude",
        "codex",
        "gemini",
        "qwen",
        "opencode",
        "aider",
        "anthropic",
        "openai",
    ] {
        assert!(backends.contains(&b), "{b}: {backends:?}");
    }
    let text = run(repo.ralph().arg("leaderboard"));
    assert!(text.stdout.contains("By backend"), "{}", text.stdout);
    eprintln!("{}", text.stdout);
}
