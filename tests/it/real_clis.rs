//! The real agent CLIs — Claude Code and Codex, installed from npm — driven by ralph against a
//! local model server (never a real API): a whole competition on each (proposals, one bot whose
//! model asks for `EnterWorktree` and `Write` while proposing, an implementation whose tool call
//! really edits the worktree, judging, verification), the tool lists each role offers the
//! model, and the errors: a 401, a 400, a transient 5xx followed by success. And `ralph refine`
//! on each: the model looks at the checkout of the base with a read-only tool, then drafts.
//!
//! `.ci/run` installs pinned versions into `target/agent-clis` when `npm` is available
//! (`RALPH_TEST_AGENT_CLIS` names another folder). Without them these tests say why they are
//! skipped and pass.

use crate::common::git;
use crate::compete::{run, Repo, Setup, ISSUE};
use crate::model_server::{greet_answers, tool_names, Asked, ModelServer, Reply};
use ralph::agent::claude::ClaudeBackend;
use ralph::agent::codex::CodexBackend;
use ralph::agent::{AgentCall, AgentError, Backend, Phase, Role};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The versions `.ci/run` installs.
const CLAUDE_VERSION: &str = "2.1.330";
const CODEX_VERSION: &str = "0.169.0";

/// The folder holding `node_modules/.bin/{claude,codex}`, or `None` (with the reason printed).
pub(crate) fn clis() -> Option<PathBuf> {
    let dir = std::env::var_os("RALPH_TEST_AGENT_CLIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis"));
    let bin = dir.join("node_modules/.bin");
    if bin.join("claude").exists() && bin.join("codex").exists() {
        Some(bin)
    } else {
        eprintln!(
            "skipping: the real agent CLIs are not installed in {} (`.ci/run` installs @anthropic-ai/claude-code@{CLAUDE_VERSION} and @openai/codex@{CODEX_VERSION} there when npm is available)",
            dir.display()
        );
        None
    }
}

/// What Claude Code needs to talk to the local server and nothing else.
pub(crate) fn claude_env(server: &str, home: &Path) -> Vec<(String, String)> {
    [
        ("ANTHROPIC_BASE_URL", server.to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-0000".to_owned()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("HOME", home.to_string_lossy().into_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A throwaway `CODEX_HOME` whose provider is the local server.
pub(crate) fn codex_home(dir: &Path, server: &str) -> PathBuf {
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{server}/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 1\n"
        ),
    )
    .unwrap();
    home
}

const LIB: &str = "add() { echo $(($1 + $2)); }\ngreet() { echo \"Hello, $1!\"; }\n";

/// The greet competition's answers, with smart_bot_2 first asking for `EnterWorktree` and
/// `Write` while proposing (tools a read-only role does not have).
fn script(tool: fn() -> (String, Value)) -> impl Fn(&Asked) -> Reply {
    move |asked| {
        if asked.role == "propose"
            && asked.bot.as_deref() == Some("smart_bot_2")
            && !asked.after_tool
        {
            return Reply::Tools(vec![
                ("EnterWorktree".into(), json!({"name": "scratch"})),
                (
                    "Write".into(),
                    json!({"file_path": "ROGUE.md", "content": "rogue"}),
                ),
            ]);
        }
        greet_answers(asked, &tool)
    }
}

fn config(backend: &str, model: &str, program: &Path) -> String {
    format!(
        "tracker = \"local\"\nmax_iterations = 2\n[marketplace]\nbase_budget_per_bot = 1\n[defaults]\nbackend = \"{backend}\"\nmodel = \"{model}\"\ncommand = [\"{}\"]\ntimeout_secs = 180\n[[bots]]\nid = \"smart_bot_1\"\n[[bots]]\nid = \"smart_bot_2\"\n[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\n[git]\nauthor = \"ralph <ralph@example.com>\"\n",
        program.display()
    )
}

/// The sample repository (with `issues`) whose every agent is `backend` running `program`.
fn repo_on(
    issues: &'static [(u64, &'static str)],
    backend: &str,
    model: &str,
    program: &Path,
) -> Repo {
    // Outside the temporary folder, where a user's checkout and HOME are: Codex refuses to keep
    // its helpers (under CODEX_HOME) in a temporary folder — with or without ralph.
    let repo = Repo::with(Setup {
        issues,
        under: Some(&outside_tmp()),
        ..Setup::default()
    });
    std::fs::write(
        repo.root.join(".ralph/config.toml"),
        config(backend, model, program),
    )
    .unwrap();
    repo
}

/// Runs the competition and checks what every real CLI run left behind.
fn assert_competed(repo: &Repo, out: &crate::common::Out) -> Value {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{report}");
    // Where bubblewrap works, the real CLIs ran in ralph's sandbox (Codex with its own inside).
    assert_eq!(
        report["sandbox"]["active"],
        crate::security::bubblewrap().is_ok(),
        "{}",
        report["sandbox"]
    );
    let lib = git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:lib.sh"],
    );
    assert!(
        lib.contains("greet()"),
        "the tool call edited the worktree: {lib}"
    );
    assert!(repo.issue().contains("- [x] `greet NAME`"));
    // The review role answered through the real CLI: its scores replaced the neutral ones.
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let imp = &report["rounds"][0]["implementation"];
    assert_eq!(imp["review"]["status"], "scored", "{imp}");
    assert_eq!(imp["scores"]["innovation"], 0.6);
    // Nothing of the rogue proposal's tools reached the repository.
    assert!(!git(&repo.root, &["branch", "--list"]).contains("worktree-"));
    assert!(!git(&repo.root, &["worktree", "list"]).contains("scratch"));
    assert!(!repo.root.join("ROGUE.md").exists());
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_claude_code() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(script(|| {
        (
            "Write".into(),
            json!({"file_path": "lib.sh", "content": LIB}),
        )
    }))
    .await;
    let repo = repo_on(&[(3, ISSUE)], "claude", "sonnet", &bin.join("claude"));
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        for (k, v) in claude_env(&server.uri(), &repo.tools) {
            cmd.env(k, v);
        }
        cmd.args(["compete", "3", "--json"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    let report = assert_competed(&repo, &out);
    assert!(
        report["total"]["cost_usd"].as_f64().unwrap() > 0.0,
        "Claude Code reports its cost: {report}"
    );
    // Through the sandbox's proxy only its model server (its other traffic is off here).
    assert!(
        report.get("network_refused").is_none(),
        "{}",
        report["network_refused"]
    );
    // In the sandbox each call had a private copy of its state: the transcripts, plugins and
    // backups Claude Code writes (under `projects/`, …) went with it.
    if report["sandbox"]["active"] == true {
        assert_eq!(list(&repo.tools.join(".claude")), Vec::<String>::new());
    }
    // The tools each role offered the model: exactly the read-only ones, or the editing ones.
    let offered = |role: &str| {
        let mut names = tool_names(&server.of(role)[0]["body"]);
        names.retain(|n| n != "DeferredToolPlaceholder");
        names
    };
    for role in ["extract", "propose", "judge", "verify", "review"] {
        assert_eq!(offered(role), ["Glob", "Grep", "Read"], "{role}");
    }
    assert_eq!(
        offered("implement"),
        ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]
    );
    // The rogue bot's refused tool calls went back as errors, and its proposal counted.
    let rogue_turn = server
        .of("propose")
        .into_iter()
        .find(|r| r["after_tool"] == true)
        .expect("smart_bot_2 was answered after its tool calls");
    assert!(
        rogue_turn["body"]
            .to_string()
            .contains("No such tool available"),
        "{rogue_turn}"
    );
    let proposals = report["rounds"][0]["proposals"].as_array().unwrap();
    assert_eq!(proposals.len(), 2, "{report}");
    // The judge read the proposals in both orders (`order_swaps = 1`).
    assert_eq!(server.of("judge").len(), 2);
    assert_eq!(
        report["rounds"][0]["order"]["top_flipped"], false,
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_competition_on_the_real_codex() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(script(|| {
        (
            "exec_command".into(),
            json!({"cmd": "printf 'greet() { echo \"Hello, $1!\"; }\\n' >> lib.sh"}),
        )
    }))
    .await;
    let repo = repo_on(&[(3, ISSUE)], "codex", "gpt-5.5", &bin.join("codex"));
    let home = codex_home(&repo.tools, &server.uri());
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        cmd.env("CODEX_HOME", &home)
            .env("MOCK_API_KEY", "sk-mock-0000")
            .args(["compete", "3", "--json"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    let report = assert_competed(&repo, &out);
    // Through the sandbox's proxy only its model server; its plugin sync and analytics are off.
    assert!(
        report.get("network_refused").is_none(),
        "{}",
        report["network_refused"]
    );
    // Codex's sessions, logs and databases stayed in each call's private copy.
    if report["sandbox"]["active"] == true {
        assert_eq!(list(&home), ["config.toml"]);
    }
    // Every call went to the local server, through the Responses API.
    assert!(!server.of("implement").is_empty() && !server.of("propose").is_empty());
    // The judge read the proposals in both orders (`order_swaps = 1`).
    assert_eq!(server.of("judge").len(), 2);
    assert_eq!(
        report["rounds"][0]["order"]["top_flipped"], false,
        "{report}"
    );
}

pub(crate) fn call(role: Role, workdir: &Path, prompt: &str) -> AgentCall {
    AgentCall {
        role,
        prompt: prompt.to_owned(),
        workdir: workdir.to_owned(),
        bot_id: Some("smart_bot_1".into()),
        issue: 3,
        round: 1,
        phase: Phase::Initial,
        timeout: Duration::from_secs(180),
        attempt: 0,
        speaker: None,
        variant: None,
        activity: None,
    }
}

/// `env K=V … program`: the CLI with its environment, as a `command` sets it.
fn with_env(env: &[(String, String)], program: &Path) -> Vec<String> {
    std::iter::once("env".to_owned())
        .chain(env.iter().map(|(k, v)| format!("{k}={v}")))
        .chain(std::iter::once(program.to_string_lossy().into_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_clis_errors_come_through_with_their_own_words() {
    let Some(bin) = clis() else { return };
    let dir = tempfile::tempdir_in(outside_tmp()).unwrap();
    let prompt = "You are smart_bot_1, one of several independent engineers. Propose.";
    // A 401, a 400, and a 500 before a good answer (once per CLI).
    let fives = std::sync::atomic::AtomicUsize::new(0);
    let server = ModelServer::start(move |asked: &Asked| match asked.body.to_string() {
        t if t.contains("CASE-401") => Reply::Error(401, "invalid x-api-key"),
        t if t.contains("CASE-400") => Reply::Error(400, "messages: field required"),
        t if t.contains("CASE-500")
            && fives
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                .is_multiple_of(2) =>
        {
            Reply::Error(500, "Internal server error")
        }
        _ => Reply::Text("```json\n{\"ok\": true}\n```".into()),
    })
    .await;
    let mut env = claude_env(&server.uri(), dir.path());
    env.push(("CLAUDE_CODE_MAX_RETRIES".into(), "1".into()));
    let claude = ClaudeBackend::new(
        "claude".into(),
        &with_env(&env, &bin.join("claude")),
        &[],
        Some("sonnet".into()),
    );
    let ask = |case: &str| call(Role::Propose, dir.path(), &format!("{prompt} CASE-{case}"));
    match claude.call(&ask("401")).await {
        Err(AgentError::Auth { message, .. }) => assert!(message.contains("HTTP 401"), "{message}"),
        other => panic!("401: {other:?}"),
    }
    match claude.call(&ask("400")).await {
        Err(AgentError::Reported { message, .. }) => {
            assert!(
                message.contains("400") && !message.starts_with("success"),
                "{message}"
            )
        }
        other => panic!("400: {other:?}"),
    }
    let reply = claude
        .call(&ask("500"))
        .await
        .expect("retried past the 500");
    assert!(reply.text.contains("\"ok\""));
    assert_eq!(reply.warnings.len(), 1, "{:?}", reply.warnings);

    let home = codex_home(dir.path(), &server.uri());
    let codex_env = vec![
        ("CODEX_HOME".to_owned(), home.to_string_lossy().into_owned()),
        ("MOCK_API_KEY".to_owned(), "sk-mock-0000".to_owned()),
        ("HOME".to_owned(), dir.path().to_string_lossy().into_owned()),
    ];
    let codex = CodexBackend::new(
        "codex".into(),
        &with_env(&codex_env, &bin.join("codex")),
        &[],
        Some("gpt-5.5".into()),
    );
    match codex.call(&ask("401")).await {
        Err(AgentError::Auth { message, .. }) => assert!(message.contains("401"), "{message}"),
        other => panic!("codex 401: {other:?}"),
    }
    match codex.call(&ask("400")).await {
        Err(AgentError::Reported { message, .. }) => {
            assert!(message.contains("messages: field required"), "{message}")
        }
        other => panic!("codex 400: {other:?}"),
    }
    let reply = codex
        .call(&ask("500"))
        .await
        .expect("reconnected past the 500");
    assert!(reply.text.contains("\"ok\""));
}

/// The refine role's script: first a look at the repository (`tool`), then the draft.
fn refine_script(tool: fn() -> (String, Value)) -> impl Fn(&Asked) -> Reply {
    move |asked| match (asked.role, asked.after_tool) {
        ("refine", false) => {
            let (name, input) = tool();
            Reply::Tools(vec![(name, input)])
        }
        ("refine", true) => Reply::Text(format!(
            "```json\n{}\n```",
            json!({"problem": "There is no greet.", "requirements": [{"text": "`greet NAME` prints `Hello, NAME!`", "rationale": "asked for"}], "implicit_requirements": [], "questions": ["Which locale? cc @octocat"]})
        )),
        _ => Reply::Text("nothing to say".into()),
    }
}

const PROSE: &str = "---\ntitle: Greeting\nlabels: [backlog-review]\n---\nPlease add a way to greet people by name, next to add.\n";

/// What a refine through a real CLI left: the comment, the labels, and a tool result that
/// came from the checkout of the base.
fn assert_refined(repo: &Repo, out: &crate::common::Out, server: &ModelServer) {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let issue = std::fs::read_to_string(repo.root.join(".ralph/issues/7.md")).unwrap();
    assert!(issue.contains("labels: [in-refinement]"), "{issue}");
    assert!(
        issue.contains("- [ ] `greet NAME` prints `Hello, NAME!`"),
        "{issue}"
    );
    assert!(issue.contains("@\u{2060}octocat"), "no ping: {issue}");
    let after = server
        .of("refine")
        .into_iter()
        .find(|r| r["after_tool"] == true)
        .expect("the model's tool call was answered");
    let seen = after["body"].to_string();
    assert!(seen.contains("add()"), "the tool read lib.sh: {seen}");
    assert!(!repo.checkout("ralph-refine-7").exists());
    // The user's checkout is as it was, but for ralph's own files.
    let status = git(&repo.root, &["status", "--porcelain"]);
    assert!(
        status.lines().all(|l| l[3..].starts_with(".ralph/")),
        "{status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refine_on_the_real_claude_code_reads_the_base_and_drafts() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(refine_script(|| {
        (
            "Grep".into(),
            json!({"pattern": "add", "output_mode": "content"}),
        )
    }))
    .await;
    let repo = repo_on(&[(7, PROSE)], "claude", "sonnet", &bin.join("claude"));
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        for (k, v) in claude_env(&server.uri(), &repo.tools) {
            cmd.env(k, v);
        }
        cmd.args(["refine", "7"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    assert_refined(&repo, &out, &server);
    let mut offered = tool_names(&server.of("refine")[0]["body"]);
    offered.retain(|n| n != "DeferredToolPlaceholder");
    assert_eq!(offered, ["Glob", "Grep", "Read"], "read-only tools");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refine_on_the_real_codex_reads_the_base_and_drafts() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(refine_script(|| {
        ("exec_command".into(), json!({"cmd": "cat lib.sh"}))
    }))
    .await;
    let repo = repo_on(&[(7, PROSE)], "codex", "gpt-5.5", &bin.join("codex"));
    let home = codex_home(&repo.tools, &server.uri());
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        cmd.env("CODEX_HOME", &home)
            .env("MOCK_API_KEY", "sk-mock-0000")
            .args(["refine", "7"]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    assert_refined(&repo, &out, &server);
}

/// A model whose turn after the implementer's tool call takes a while, so that the heartbeat
/// sees the tool call's activity meanwhile.
fn slow_after_tool(tool: fn() -> (String, Value)) -> impl Fn(&Asked) -> Reply {
    move |asked| {
        let reply = greet_answers(asked, &tool);
        if asked.role == "implement" && asked.after_tool {
            Reply::After(Duration::from_millis(2500), Box::new(reply))
        } else {
            reply
        }
    }
}

/// Runs the competition with a heartbeat a second; returns the implementer's heartbeat lines.
fn implementer_heartbeats(repo: &Repo, env: &[(String, String)]) -> Vec<String> {
    let config = repo.root.join(".ralph/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[output]\nheartbeat_secs = 1\n");
    std::fs::write(&config, text).unwrap();
    let mut cmd = repo.ralph();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(cmd.args(["compete", "3", "--no-push"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("  ✓ test "), "{}", out.stderr);
    out.stderr
        .lines()
        .filter(|l| l.starts_with("  … implement · "))
        .map(String::from)
        .collect()
}

/// The live view follows the real Claude Code: its stream-json tool use reaches the heartbeat
/// lines while the model (slowed down here) thinks about the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_claude_codes_work_is_followed_live() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(slow_after_tool(|| {
        (
            "Write".into(),
            json!({"file_path": "lib.sh", "content": LIB}),
        )
    }))
    .await;
    let repo = repo_on(&[(3, ISSUE)], "claude", "sonnet", &bin.join("claude"));
    let env = claude_env(&server.uri(), &repo.tools);
    let beats = tokio::task::spawn_blocking(move || implementer_heartbeats(&repo, &env))
        .await
        .unwrap();
    assert!(
        beats.iter().any(|l| l.ends_with(" · Write lib.sh")),
        "the real stream's tool use is the activity: {beats:#?}"
    );
}

/// The same with the real Codex: its command, as its JSON events name it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_codexs_work_is_followed_live() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(slow_after_tool(|| {
        (
            "exec_command".into(),
            json!({"cmd": "printf 'greet() { echo \"Hello, $1!\"; }\\n' >> lib.sh"}),
        )
    }))
    .await;
    let repo = repo_on(&[(3, ISSUE)], "codex", "gpt-5.5", &bin.join("codex"));
    let home = codex_home(&repo.tools, &server.uri());
    let env = vec![
        ("CODEX_HOME".to_owned(), home.to_string_lossy().into_owned()),
        ("MOCK_API_KEY".to_owned(), "sk-mock-0000".to_owned()),
    ];
    let beats = tokio::task::spawn_blocking(move || implementer_heartbeats(&repo, &env))
        .await
        .unwrap();
    // Codex names the command as it ran it: bare, or wrapped in the user's login shell
    // (`/bin/sh -lc "…"` for a user whose shell is sh).
    assert!(
        beats
            .iter()
            .any(|l| l.contains(" · $ ") && l.contains("printf 'greet()")),
        "the real events' command is the activity: {beats:#?}"
    );
}

/// After the competition, a maintainer's review on the pull request: the revision's implementer
/// (its prompt says it is a revision) writes `shout` too, and the verify role finds the review's
/// request satisfied.
fn revision_script(asked: &Asked) -> Reply {
    let text = asked.body.to_string();
    let fenced = |v: Value| Reply::Text(format!("Here it is.\n```json\n{v}\n```"));
    let revision = text.contains("This is a revision");
    match (asked.role, asked.after_tool) {
        ("implement", false) if revision => Reply::Tools(vec![(
            "Write".into(),
            json!({"file_path": "lib.sh", "content": format!("{LIB}shout() {{ echo \"HELLO, $1!\"; }}\n")}),
        )]),
        ("implement", true) if revision => fenced(
            json!({"summary": "added shout as the review asked", "checkboxes_completed": ["feedback_1"]}),
        ),
        ("verify", _) if text.contains("feedback_1") => fenced(
            json!({"satisfied": [{"id": "feedback_1", "evidence": "shout in lib.sh"}], "unsatisfied": []}),
        ),
        _ => greet_answers(asked, &|| {
            (
                "Write".into(),
                json!({"file_path": "lib.sh", "content": LIB}),
            )
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_is_answered_by_a_revision_on_the_real_claude_code() {
    let Some(bin) = clis() else { return };
    let server = ModelServer::start(revision_script).await;
    let repo = repo_on(&[(3, ISSUE)], "claude", "sonnet", &bin.join("claude"));
    let ralph = |args: &'static [&'static str]| {
        let mut cmd = repo.ralph();
        for (k, v) in claude_env(&server.uri(), &repo.tools) {
            cmd.env(k, v);
        }
        cmd.args(args);
        cmd
    };
    let mut compete = ralph(&["compete", "3"]);
    let out = tokio::task::spawn_blocking(move || run(&mut compete))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The maintainer's review, written into the local pull request's record.
    let prs = repo.root.join(".ralph/issues/3.prs.json");
    let mut pulls: Value = serde_json::from_str(&std::fs::read_to_string(&prs).unwrap()).unwrap();
    pulls[0]["reviews"] = json!([{"author": "maintainer", "at": chrono::Utc::now(),
        "state": "changes_requested", "body": "Please also add `shout NAME` printing `HELLO, NAME!`"}]);
    std::fs::write(&prs, pulls.to_string()).unwrap();
    let mut follow = ralph(&["follow", "--json"]);
    let out = tokio::task::spawn_blocking(move || run(&mut follow))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let revision = &report["pulls"][0]["revision"];
    assert_eq!(revision["passed"], true, "{report:#}\n{}", out.stderr);
    assert_eq!(revision["pushed"], true);
    assert_eq!(revision["items"][0]["done"], true);
    let lib = git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:lib.sh"],
    );
    assert!(lib.contains("shout()") && lib.contains("greet()"), "{lib}");
    // The revision's implementer was the real CLI, with the editing tools and the review as data.
    let asked = server
        .of("implement")
        .into_iter()
        .find(|r| r["body"].to_string().contains("This is a revision"))
        .expect("the revision's implementer asked the model");
    assert!(asked["body"]
        .to_string()
        .contains("Please also add `shout NAME`"));
}

/// Every path under `dir`, relative, sorted.
fn list(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Where the tests' repositories and homes go: the target's own temporary folder, unless the
/// checkout is itself under the system's temporary folder (a clone in `/tmp`), then a folder in
/// the user's cache.
pub(crate) fn outside_tmp() -> PathBuf {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let temp = std::env::temp_dir();
    if !target.starts_with(&temp) && !target.starts_with("/tmp") {
        return target;
    }
    let dir = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
        .join(".cache/ralph-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
