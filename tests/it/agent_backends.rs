//! The agent backends against fakes: fake agent programs (shell scripts) for the subprocess
//! backends, wiremock servers for the Anthropic and OpenAI APIs (streamed and not, 429 with
//! retry-after, 500 then success, 401).

use crate::common::script;

use ralph::agent::anthropic::AnthropicBackend;
use ralph::agent::claude::ClaudeBackend;
use ralph::agent::codex::CodexBackend;
use ralph::agent::command::CommandBackend;
use ralph::agent::openai::OpenAiBackend;
use ralph::agent::protocol::{ask, AnswerContext, Proposal};
use ralph::agent::{AgentCall, AgentError, Backend, Phase, Role};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn call(dir: &Path, timeout: Duration) -> AgentCall {
    AgentCall {
        role: Role::Propose,
        prompt: "Propose an approach for issue 12.".into(),
        workdir: dir.to_path_buf(),
        bot_id: Some("smart_bot_1".into()),
        issue: 12,
        round: 2,
        phase: Phase::Replan,
        timeout,
        attempt: 0,
        speaker: None,
        variant: None,
        activity: None,
    }
}

fn command(program: String) -> CommandBackend {
    CommandBackend::new(vec![program]).unwrap()
}

const PROPOSAL: &str = r#"{"approach_summary":"Add a flag","pseudo_code":"p","files_affected":[{"path":"src/a.rs","change_type":"modify","description":"d"}],"estimated_complexity":{"lines_of_code":10,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"deployment_impact":"none","overall_risk":"low","mitigation":"m"},"spec_alignment":{"checkboxes_addressed":["req_1"],"components_addressed":[],"implicit_requirements_addressed":[],"reasoning":"r"},"specialist_consultations":[],"innovation":"i","success_probability":0.7}"#;

#[tokio::test]
async fn a_command_gets_the_prompt_the_environment_and_no_github_token() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("GITHUB_TOKEN", "ghp_must_not_reach_agents_123");
    std::env::set_var("GH_TOKEN", "gho_must_not_reach_agents_456");
    let prog = script(
        dir.path(),
        "agent.sh",
        r#"prompt=$(cat)
echo "prompt=$prompt"
echo "role=$RALPH_ROLE bot=$RALPH_BOT_ID issue=$RALPH_ISSUE round=$RALPH_ROUND phase=$RALPH_PHASE"
echo "workdir=$RALPH_WORKDIR pwd=$(pwd)"
echo "tokens=[$GITHUB_TOKEN$GH_TOKEN]""#,
    );
    let reply = command(prog)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    let t = reply.text;
    assert!(
        t.contains("prompt=Propose an approach for issue 12."),
        "{t}"
    );
    assert!(
        t.contains("role=propose bot=smart_bot_1 issue=12 round=2 phase=replan"),
        "{t}"
    );
    let wd = dir.path().display().to_string();
    assert!(t.contains(&format!("workdir={wd}")), "{t}");
    assert!(t.contains("tokens=[]"), "{t}");
}

#[tokio::test]
async fn a_failing_command_reports_its_exit_and_stderr_tail() {
    let dir = tempfile::tempdir().unwrap();
    let prog = script(
        dir.path(),
        "fail.sh",
        "echo lots >&2; echo 'model overloaded' >&2; exit 3",
    );
    let err = command(prog)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap_err();
    match &err {
        AgentError::Exit { status, tail, .. } => {
            assert_eq!(status, "exit code 3");
            assert!(tail.ends_with("model overloaded"), "{tail}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.kind(), "failed");
}

#[tokio::test]
async fn a_hung_command_is_killed_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let prog = script(dir.path(), "hang.sh", "sleep 60");
    let started = Instant::now();
    let err = command(prog)
        .call(&call(dir.path(), Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Timeout { .. }), "{err:?}");
    assert_eq!(err.kind(), "timed out");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn fifty_megabytes_of_output_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let prog = script(
        dir.path(),
        "flood.sh",
        "echo BEGIN; head -c 52428800 /dev/zero | tr '\\0' 'y'; echo; echo END",
    );
    let reply = command(prog)
        .call(&call(dir.path(), Duration::from_secs(60)))
        .await
        .unwrap();
    assert!(
        reply.text.len() <= 17 << 20,
        "{} bytes kept",
        reply.text.len()
    );
    assert!(reply.text.starts_with("BEGIN"));
    assert!(reply.text.trim_end().ends_with("END"));
    assert!(reply.text.contains("bytes omitted"));
}

#[tokio::test]
async fn a_missing_program_fails_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let err = command("/nonexistent/agent".into())
        .call(&call(dir.path(), Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "failed to start");
}

#[tokio::test]
async fn garbage_fails_and_chatter_before_json_is_fine() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = AnswerContext::default();
    let garbage = script(
        dir.path(),
        "garbage.sh",
        "cat >/dev/null; echo '%%% not json {{{'",
    );
    let err = ask::<Proposal>(
        &command(garbage),
        &call(dir.path(), Duration::from_secs(10)),
        &ctx,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), "invalid answer");
    let chatty = script(
        dir.path(),
        "chatty.sh",
        &format!("cat >/dev/null; echo 'Let me think about this...'; echo '```json'; echo '{PROPOSAL}'; echo '```'"),
    );
    let asked = ask::<Proposal>(
        &command(chatty),
        &call(dir.path(), Duration::from_secs(10)),
        &ctx,
    )
    .await
    .unwrap();
    assert!(!asked.repaired);
    assert_eq!(asked.answer.approach_summary, "Add a flag");
}

#[tokio::test]
async fn invalid_then_valid_after_the_repair_retry() {
    let dir = tempfile::tempdir().unwrap();
    // The fake answers by attempt: nonsense first, a proposal when asked to repair.
    let prog = script(
        dir.path(),
        "repair.sh",
        &format!(
            "prompt=$(cat)\nif [ \"$RALPH_ATTEMPT\" = 1 ]; then\n  case \"$prompt\" in *'could not be used'*) echo '{PROPOSAL}';; *) echo 'no hint';; esac\nelse\n  echo '{{\"approach_summary\": \"\"}}'\nfi"
        ),
    );
    let asked = ask::<Proposal>(
        &command(prog),
        &call(dir.path(), Duration::from_secs(10)),
        &AnswerContext::default(),
    )
    .await
    .unwrap();
    assert!(asked.repaired);
    assert_eq!(asked.answer.files_affected[0].path, "src/a.rs");
}

#[tokio::test]
async fn the_claude_and_codex_backends_parse_their_fake_clis() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    // The fake CLIs check their arguments, then print a recorded transcript.
    let claude = script(
        dir.path(),
        "claude",
        &format!(
            "cat >/dev/null\ncase \"$*\" in *'-p --output-format stream-json --verbose --model sonnet'*) cat '{}';; *) echo \"bad args: $*\" >&2; exit 2;; esac",
            fixtures.join("claude_stream.jsonl").display()
        ),
    );
    let reply = ClaudeBackend::new(claude, &[], &[], Some("sonnet".into()))
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(reply.usage.cost_usd, Some(0.0421));
    assert!(reply.text.contains("approach_summary"));
    let codex = script(
        dir.path(),
        "codex",
        &format!(
            "cat >/dev/null\ncase \"$*\" in 'exec --json --sandbox read-only --skip-git-repo-check -c features.plugins=false -c analytics.enabled=false -') cat '{}';; *) echo \"bad args: $*\" >&2; exit 2;; esac",
            fixtures.join("codex_exec.jsonl").display()
        ),
    );
    let reply = CodexBackend::new(codex, &[], &[], None)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(reply.usage.output_tokens, 122);
    assert_eq!(
        reply.session_id.as_deref(),
        Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
    );
}

fn sse(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| {
            if name.is_empty() {
                format!("data: {data}\n\n")
            } else {
                format!("event: {name}\ndata: {data}\n\n")
            }
        })
        .collect()
}

fn anthropic(server: &MockServer) -> AnthropicBackend {
    std::env::set_var("RALPH_TEST_ANTHROPIC_KEY", "sk-ant-test-key-0123456789");
    std::env::set_var("RALPH_TEST_NO_RETRY_DELAY", "1");
    AnthropicBackend::new(
        Some(server.uri()),
        Some("RALPH_TEST_ANTHROPIC_KEY".into()),
        Some("claude-sonnet-4-5".into()),
        Some(2000),
        Some(0.0),
    )
    .unwrap()
}

#[tokio::test]
async fn anthropic_streams_text_and_usage() {
    let server = MockServer::start().await;
    let body = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":321,"output_tokens":1}}}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        ("ping", json!({"type":"ping"})),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, "}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"world ✓"}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        (
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":42}}),
        ),
        ("message_stop", json!({"type":"message_stop"})),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test-key-0123456789"))
        .and(header("anthropic-version", "2023-06-01"))
        .and(body_partial_json(json!({"model": "claude-sonnet-4-5", "max_tokens": 2000, "stream": true, "temperature": 0.0})))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let reply = anthropic(&server)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(reply.text, "Hello, world ✓");
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (321, 42)
    );
    assert_eq!(reply.session_id.as_deref(), Some("msg_01"));
}

#[tokio::test]
async fn anthropic_plain_json_429_then_success_and_500_then_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal"))
        .up_to_n_times(1)
        .with_priority(2)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_02", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": "plain answer"}],
            "usage": {"input_tokens": 10, "output_tokens": 3}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let reply = anthropic(&server)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(reply.text, "plain answer");
    assert_eq!(reply.usage.output_tokens, 3);
}

#[tokio::test]
async fn anthropic_401_is_an_auth_error_without_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-test-key-0123456789"}})))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let err = anthropic(&server)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap_err();
    assert!(matches!(err, AgentError::Auth { .. }), "{err:?}");
    assert!(
        !err.to_string().contains("sk-ant-test-key-0123456789"),
        "{err}"
    );
    assert!(err.to_string().contains("invalid x-api-key ***"), "{err}");
}

#[tokio::test]
async fn anthropic_stream_errors_are_reported() {
    let server = MockServer::start().await;
    let body = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}),
        ),
        (
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        ),
    ]);
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let err = anthropic(&server)
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Overloaded"), "{err}");
}

#[tokio::test]
async fn openai_streams_chunks_with_usage_and_done() {
    let server = MockServer::start().await;
    let body = sse(&[
        (
            "",
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}),
        ),
        (
            "",
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"{\"ok\":"}}]}),
        ),
        (
            "",
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" true}"},"finish_reason":"stop"}]}),
        ),
        (
            "",
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":55,"completion_tokens":7,"total_tokens":62}}),
        ),
    ]) + "data: [DONE]\n\n";
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-openai-test-0123456789"))
        .and(body_partial_json(
            json!({"model": "gpt-4.1", "stream": true, "stream_options": {"include_usage": true}}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .expect(1)
        .mount(&server)
        .await;
    std::env::set_var("RALPH_TEST_OPENAI_KEY", "sk-openai-test-0123456789");
    let b = OpenAiBackend::new(
        Some(format!("{}/v1", server.uri())),
        Some("RALPH_TEST_OPENAI_KEY".into()),
        Some("gpt-4.1".into()),
        None,
        None,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The live view hears of the call and of the tokens as they arrive.
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut c = call(dir.path(), Duration::from_secs(10));
    let log = heard.clone();
    c.activity = Some(ralph::progress::ActivitySink::new(move |a: &str| {
        log.lock().unwrap().push(a.to_owned())
    }));
    let reply = b.call(&c).await.unwrap();
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard[0], "waiting for openai (gpt-4.1)", "{heard:?}");
    assert!(
        heard[1..]
            .iter()
            .any(|a| a.starts_with("receiving the answer: ~")),
        "{heard:?}"
    );
    assert_eq!(reply.text, "{\"ok\": true}");
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (55, 7)
    );
    assert_eq!(reply.session_id.as_deref(), Some("chatcmpl-1"));
}

#[tokio::test]
async fn a_local_openai_compatible_server_needs_no_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "ollama-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "local answer"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2}
        })))
        .expect(1)
        .mount(&server)
        .await;
    std::env::remove_var("OPENAI_API_KEY");
    let b = OpenAiBackend::new(
        Some(format!("{}/v1", server.uri())),
        None,
        Some("llama3.1".into()),
        None,
        None,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reply = b
        .call(&call(dir.path(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(reply.text, "local answer");
    let received = server.received_requests().await.unwrap();
    assert!(received[0].headers.get("authorization").is_none());
    // The public API without a key is refused before any request.
    assert!(OpenAiBackend::new(None, None, Some("gpt-4.1".into()), None, None).is_err());
}

#[tokio::test]
async fn an_unresponsive_api_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let err = anthropic(&server)
        .call(&call(dir.path(), Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "timed out", "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_fan_out_keeps_every_bot_and_says_why_one_was_skipped() {
    use ralph::agent::fanout::{gather, BotOutcome, BotTask};
    use ralph::progress::Progress;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let good = script(
        dir.path(),
        "good.sh",
        &format!("cat >/dev/null; sleep 0.3; echo '{PROPOSAL}'"),
    );
    let slow = script(
        dir.path(),
        "slow.sh",
        &format!("cat >/dev/null; sleep 0.6; echo '{PROPOSAL}'"),
    );
    let hung = script(dir.path(), "hung.sh", "sleep 30");
    let broken = script(dir.path(), "broken.sh", "echo nope >&2; exit 1");
    let bots: Vec<(&str, Arc<dyn Backend>)> = vec![
        ("good", Arc::new(command(good))),
        ("hung", Arc::new(command(hung))),
        ("broken", Arc::new(command(broken))),
        ("missing", Arc::new(command("/nonexistent/bot".into()))),
        ("slow", Arc::new(command(slow))),
    ];
    let tasks = bots
        .into_iter()
        .map(|(id, backend)| BotTask {
            bot_id: id.into(),
            backend,
            call: AgentCall {
                bot_id: Some(id.into()),
                ..call(dir.path(), Duration::from_secs(1))
            },
        })
        .collect();
    let started = Instant::now();
    let results = gather(tasks, &["req_1".to_owned()].into(), 8, &Progress::off()).await;
    let elapsed = started.elapsed();
    let summary: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            (
                r.bot_id.as_str(),
                match &r.outcome {
                    BotOutcome::Proposal { .. } => "proposal",
                    BotOutcome::Skipped { reason, .. } => reason,
                },
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("good", "proposal"),
            ("hung", "timed out"),
            ("broken", "failed"),
            ("missing", "failed to start"),
            ("slow", "proposal"),
        ]
    );
    // Concurrent: bounded by the 1 s timeout, not the sum.
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    // Ties go to the earlier submission: the fast bot's stamp is earlier.
    let stamp = |i: usize| match &results[i].outcome {
        BotOutcome::Proposal { submitted_at, .. } => *submitted_at,
        _ => unreachable!(),
    };
    assert!(stamp(0) < stamp(4));
}
