//! What ralph adds around one call of each agent CLI that takes a key — Gemini CLI, Qwen Code,
//! OpenCode and Aider — against a local model server: the call's wall time through ralph's
//! backend (its fresh home written, the environment built, the transcript read, the home
//! removed) against the time of the CLI's own process, and the tokens and cost each reports.
//! With bubblewrap installed it also measures the calls in ralph's sandbox.
//!
//! The CLIs are looked for where `.ci/run` installs them (`RALPH_TEST_AGENT_CLIS`, default
//! `target/agent-clis`; `RALPH_TEST_AIDER`, default `target/ci-tools/aider`); a CLI that is not
//! there is skipped with a line saying so. `RALPH_BENCH_CALLS` sets the calls per CLI (5).
//!
//! `cargo bench --bench agent_cli_overhead`

use ralph::agent::{clis, AgentCall, Phase, Role};
use ralph::config::{AgentConfig, BackendKind};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const ANSWER: &str = "```json\n{\"ok\": true}\n```";

/// Answers Chat Completions (streamed or not) and Gemini's `streamGenerateContent` with one
/// short text.
struct Answer;

impl Respond for Answer {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let usage = json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});
        if req.url.path().starts_with("/v1beta/") {
            let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}});
            return ResponseTemplate::new(200)
                .set_body_raw(format!("data: {chunk}\n\n"), "text/event-stream");
        }
        if body["stream"].as_bool().unwrap_or(false) {
            let chunk = |delta: Value, finish: Value, usage: Value| {
                json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage})
            };
            let events = [
                chunk(
                    json!({"role": "assistant", "content": ANSWER}),
                    Value::Null,
                    Value::Null,
                ),
                chunk(json!({}), json!("stop"), Value::Null),
                json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage}),
            ];
            let mut sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            sse.push_str("data: [DONE]\n\n");
            return ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream");
        }
        ResponseTemplate::new(200).set_body_json(json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}], "usage": usage}))
    }
}

#[path = "../tests/support/agent_clis.rs"]
mod agent_clis;

fn program(cli: &str) -> Option<PathBuf> {
    agent_clis::installed(cli).ok()
}

fn agent(kind: BackendKind, program: &Path, server: &str) -> AgentConfig {
    let base = match kind {
        BackendKind::Gemini => server.to_owned(),
        _ => format!("{server}/v1"),
    };
    AgentConfig {
        backend: kind,
        model: Some("bench-model".into()),
        command: vec![program.to_string_lossy().into_owned()],
        base_url: Some(base),
        timeout_secs: 120,
        dir: None,
        api_key_env: Some("RALPH_BENCH_MODEL_KEY".into()),
        max_tokens: None,
        temperature: None,
        args: vec![],
        price: None,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn measure(server: &str, workdir: &Path, calls: usize, label: &str) {
    println!("\n{label}");
    println!(
        "  {:<9} {:>9} {:>11} {:>13} {:>8} {:>7} {:>7} {:>10}",
        "CLI", "version", "call (s)", "CLI alone (s)", "ralph (s)", "in", "out", "cost"
    );
    for kind in [
        BackendKind::Gemini,
        BackendKind::Qwen,
        BackendKind::Opencode,
        BackendKind::Aider,
    ] {
        let name = kind.as_str();
        let Some(program) = program(name) else {
            println!("  {name:<9} not installed: skipped");
            continue;
        };
        // With a throwaway HOME: Gemini CLI writes its state even to say its version.
        let version = std::process::Command::new(&program)
            .arg("--version")
            .env("HOME", workdir)
            .env_remove("GEMINI_CLI_HOME")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .replace("aider ", "")
            })
            .unwrap_or_default();
        let backend = clis::build(kind, &agent(kind, &program, server));
        let (mut total, mut alone, mut ralph) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..calls {
            let call = AgentCall {
                role: Role::Propose,
                prompt: "You are bench_bot, one of several independent engineers. Propose.".into(),
                workdir: workdir.to_owned(),
                bot_id: Some("bench_bot".into()),
                issue: 1,
                round: 1,
                phase: Phase::Initial,
                timeout: Duration::from_secs(120),
                attempt: 0,
                speaker: None,
                variant: None,
                activity: None,
            };
            let start = Instant::now();
            match backend.call(&call).await {
                Ok(reply) => {
                    let t = start.elapsed().as_secs_f64();
                    total.push(t);
                    alone.push(reply.duration.as_secs_f64());
                    ralph.push(t - reply.duration.as_secs_f64());
                    last = Some(reply.usage);
                }
                Err(e) => {
                    println!("  {name:<9} failed: {e}");
                    break;
                }
            }
        }
        let Some(usage) = last else { continue };
        println!(
            "  {name:<9} {version:>9} {:>11.2} {:>13.2} {:>8.3} {:>7} {:>7} {:>10}",
            median(total),
            median(alone),
            median(ralph),
            usage.input_tokens,
            usage.output_tokens,
            usage
                .cost_usd
                .map_or_else(|| "none".to_owned(), |c| format!("${c:.6}"))
        );
    }
}

fn main() {
    // In the sandbox ralph's network forwarder is the running binary, started again.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(ralph::process::egress::forward::SUBCOMMAND) {
        std::process::exit(ralph::process::egress::forward::main(&args[2..]));
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(bench());
}

async fn bench() {
    let calls: usize = std::env::var("RALPH_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    std::env::set_var("RALPH_BENCH_MODEL_KEY", "sk-bench-0000");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path_regex(r"^/(v1/chat/completions|v1beta/models/.*)$"))
        .respond_with(Answer)
        .mount(&server)
        .await;
    let workdir = tempfile::tempdir().unwrap();
    println!(
        "agent CLI overhead: {calls} proposal calls per CLI, medians; `ralph` is the call's wall time less the CLI process's"
    );
    measure(&server.uri(), workdir.path(), calls, "without a sandbox").await;
    let sandbox = ralph::process::sandbox::Sandbox::detect(
        ralph::process::sandbox::Mode::Required,
        false,
        &[],
        &[],
    )
    .await
    .with_network(&ralph::config::Config::default().sandbox.network);
    if sandbox.status().active {
        ralph::process::sandbox::install(sandbox);
        measure(
            &server.uri(),
            workdir.path(),
            calls,
            "in ralph's sandbox (bubblewrap)",
        )
        .await;
    } else {
        println!("\nno sandbox here (bubblewrap missing or refused): the sandboxed calls are not measured");
    }
}
