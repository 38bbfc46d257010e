//! A local model server for the real agent CLIs: the Anthropic Messages API (what Claude Code
//! calls), the OpenAI Responses API (what Codex calls), OpenAI Chat Completions (what Qwen Code,
//! OpenCode and Aider call; streamed or not, as asked) and Gemini's `streamGenerateContent`
//! (what Gemini CLI calls).
//! A test gives it a script — a function from what was asked (the role, read from ralph's
//! prompt, and whether a tool's result came back) to a reply — and it records every request.

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// What the server is asked, as far as a script needs to know.
#[derive(Debug, Clone)]
pub struct Asked {
    /// ralph's role, from its prompt: `extract`, `propose`, `judge`, `implement`, `verify`,
    /// `refine`, `review`.
    pub role: &'static str,
    /// The bot, for `propose` (`You are smart_bot_2, …`).
    pub bot: Option<String>,
    /// A tool result came back: this is the turn after a tool call.
    pub after_tool: bool,
    /// The whole request body.
    pub body: Value,
}

/// One reply of the server.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A text answer.
    Text(String),
    /// Tool calls: (name, input). Anthropic `tool_use` blocks; for Codex one `function_call`.
    Tools(Vec<(String, Value)>),
    /// An HTTP error with the API's error body.
    Error(u16, &'static str),
    /// The reply, sent after a delay (a model that takes its time).
    After(std::time::Duration, Box<Reply>),
}

type Script = dyn Fn(&Asked) -> Reply + Send + Sync;

/// The running server and what it was asked.
pub struct ModelServer {
    pub server: MockServer,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

fn role_of(text: &str) -> &'static str {
    if text.contains("You are implementing the winning proposal") {
        "implement"
    } else if text.contains("You are reviewing an implementation") {
        "review"
    } else if text.contains("You are verifying an implementation") {
        "verify"
    } else if text.contains("You are the judge of a blind competition") {
        "judge"
    } else if text.contains("is about to be worked on by AI agents that compete") {
        "refine"
    } else if text.contains("You are the arbiter of a competition") {
        "extract"
    } else if text.contains("one of several independent engineers") {
        "propose"
    } else {
        "other"
    }
}

fn bot_of(text: &str) -> Option<String> {
    let rest = text.split("You are ").nth(1)?;
    let id = rest.split(',').next()?;
    id.starts_with("smart_bot")
        .then(|| id.to_owned())
        .or_else(|| (!id.contains(' ')).then(|| id.to_owned()))
}

struct Responder {
    api: Api,
    script: Arc<Script>,
    requests: Arc<Mutex<Vec<Value>>>,
}

#[derive(Clone, Copy)]
enum Api {
    Anthropic,
    Responses,
    Chat,
    Gemini,
}

impl Respond for Responder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let text = body.to_string();
        let (role, after_tool) = match self.api {
            Api::Anthropic => {
                let last = &body["messages"].as_array().and_then(|m| m.last().cloned());
                let after = last
                    .as_ref()
                    .is_some_and(|m| m.to_string().contains("\"tool_result\""));
                (role_of(&text), after)
            }
            Api::Responses => {
                let last = body["input"].as_array().and_then(|i| i.last().cloned());
                let after = last.is_some_and(|i| {
                    let t = i["type"].as_str().unwrap_or("");
                    t.ends_with("_output")
                });
                (role_of(&text), after)
            }
            Api::Chat => {
                let last = body["messages"].as_array().and_then(|m| m.last().cloned());
                let after = last.is_some_and(|m| m["role"] == "tool");
                (role_of(&text), after)
            }
            Api::Gemini => {
                let last = body["contents"].as_array().and_then(|c| c.last().cloned());
                let after = last.is_some_and(|c| c.to_string().contains("\"functionResponse\""));
                (role_of(&text), after)
            }
        };
        self.requests
            .lock()
            .unwrap()
            .push(json!({"role": role, "after_tool": after_tool, "body": body.clone()}));
        let asked_body = body.clone();
        let asked = Asked {
            role,
            bot: (role == "propose").then(|| bot_of(&text)).flatten(),
            after_tool,
            body,
        };
        let (delay, reply) = match (self.script)(&asked) {
            Reply::After(d, r) => (d, *r),
            r => (std::time::Duration::ZERO, r),
        };
        let template = match (self.api, reply) {
            (_, Reply::Error(status, message)) => ResponseTemplate::new(status).set_body_json(
                match self.api {
                    Api::Anthropic => json!({"type": "error", "error": {"type": error_type(status), "message": message}}),
                    Api::Responses | Api::Chat => json!({"error": {"message": message, "type": error_type(status), "param": null, "code": null}}),
                    Api::Gemini => json!({"error": {"code": status, "message": message, "status": gemini_status(status)}}),
                },
            ),
            (Api::Anthropic, r) => sse(&anthropic_events(&r)),
            (Api::Responses, r) => sse(&responses_events(&r)),
            (Api::Chat, r) if asked_stream(&asked_body) => data_sse(&chat_chunks(&r), true),
            (Api::Chat, r) => ResponseTemplate::new(200).set_body_json(chat_completion(&r)),
            (Api::Gemini, r) => data_sse(&[gemini_chunk(&r)], false),
        };
        template.set_delay(delay)
    }
}

fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn gemini_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        _ => "INTERNAL",
    }
}

/// Whether a Chat Completions request asked for a stream.
fn asked_stream(body: &Value) -> bool {
    body["stream"].as_bool().unwrap_or(false)
}

/// Server-sent events with `data:` lines only (Chat Completions, Gemini); Chat Completions'
/// end in `[DONE]`.
fn data_sse(events: &[Value], done: bool) -> ResponseTemplate {
    let mut body = String::new();
    for data in events {
        body.push_str(&format!("data: {data}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// The message of a Chat Completions reply: its text, or its tool calls.
fn chat_message(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Text(t) => (json!({"role": "assistant", "content": t}), "stop"),
        Reply::Tools(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, input))| {
                    json!({"index": i, "id": format!("call_{i}"), "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}})
                })
                .collect();
            (
                json!({"role": "assistant", "content": null, "tool_calls": calls}),
                "tool_calls",
            )
        }
        Reply::Error(..) | Reply::After(..) => unreachable!("errors and delays are not streamed"),
    }
}

const CHAT_USAGE: fn() -> Value =
    || json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});

/// A streamed Chat Completions reply: the message as one delta, its finish reason, the usage.
fn chat_chunks(reply: &Reply) -> Vec<Value> {
    let (message, finish) = chat_message(reply);
    let chunk = |delta: Value, finish: Value, usage: Value| {
        json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage})
    };
    vec![
        chunk(message, Value::Null, Value::Null),
        chunk(json!({}), json!(finish), Value::Null),
        json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
               "choices": [], "usage": CHAT_USAGE()}),
    ]
}

/// A Chat Completions reply, not streamed.
fn chat_completion(reply: &Reply) -> Value {
    let (mut message, finish) = chat_message(reply);
    if let Some(calls) = message["tool_calls"].as_array_mut() {
        for c in calls {
            c.as_object_mut().map(|o| o.remove("index"));
        }
    }
    json!({"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "test-model",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": CHAT_USAGE()})
}

/// A Gemini `GenerateContentResponse`: text, or function calls.
fn gemini_chunk(reply: &Reply) -> Value {
    let parts: Vec<Value> = match reply {
        Reply::Text(t) => vec![json!({"text": t})],
        Reply::Tools(calls) => calls
            .iter()
            .map(|(name, input)| json!({"functionCall": {"name": name, "args": input}}))
            .collect(),
        Reply::Error(..) | Reply::After(..) => unreachable!("errors and delays are not streamed"),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
           "modelVersion": "test-model"})
}

fn sse(events: &[(String, Value)]) -> ResponseTemplate {
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// A Messages stream: a text block, or tool_use blocks.
fn anthropic_events(reply: &Reply) -> Vec<(String, Value)> {
    let mut out = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {"id": "msg_test", "type": "message", "role": "assistant",
               "model": "claude-test", "content": [], "stop_reason": null, "stop_sequence": null,
               "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    let stop = match reply {
        Reply::Text(t) => {
            out.push(("content_block_start".into(), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
            out.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}})));
            out.push((
                "content_block_stop".into(),
                json!({"type": "content_block_stop", "index": 0}),
            ));
            "end_turn"
        }
        Reply::Tools(calls) => {
            for (i, (name, input)) in calls.iter().enumerate() {
                out.push(("content_block_start".into(), json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {}}})));
                out.push(("content_block_delta".into(), json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}})));
                out.push((
                    "content_block_stop".into(),
                    json!({"type": "content_block_stop", "index": i}),
                ));
            }
            "tool_use"
        }
        Reply::Error(..) | Reply::After(..) => unreachable!("errors and delays are not streamed"),
    };
    out.push(("message_delta".into(), json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}})));
    out.push(("message_stop".into(), json!({"type": "message_stop"})));
    out
}

/// A Responses stream: a message, or one function call.
fn responses_events(reply: &Reply) -> Vec<(String, Value)> {
    let item = match reply {
        Reply::Text(t) => {
            json!({"type": "message", "id": "msg_test", "role": "assistant", "status": "completed",
                                 "content": [{"type": "output_text", "text": t, "annotations": []}]})
        }
        Reply::Tools(calls) => {
            let (name, input) = &calls[0];
            json!({"type": "function_call", "id": "fc_test", "call_id": "call_test", "name": name, "arguments": input.to_string()})
        }
        Reply::Error(..) | Reply::After(..) => unreachable!("errors and delays are not streamed"),
    };
    vec![
        (
            "response.output_item.done".into(),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed".into(),
            json!({"type": "response.completed", "response": {"id": "resp_test",
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 20,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}}}),
        ),
    ]
}

impl ModelServer {
    /// Starts a server answering both APIs with `script`.
    pub async fn start(script: impl Fn(&Asked) -> Reply + Send + Sync + 'static) -> ModelServer {
        let server = MockServer::start().await;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        for (route, api) in [
            (r"^/v1/messages$", Api::Anthropic),
            (r"^/v1/responses$", Api::Responses),
            (r"^/v1/chat/completions$", Api::Chat),
            (
                r"^/v1beta/models/[^/]+:(stream)?[gG]enerateContent$",
                Api::Gemini,
            ),
        ] {
            Mock::given(method("POST"))
                .and(path_regex(route))
                .respond_with(Responder {
                    api,
                    script: script.clone(),
                    requests: requests.clone(),
                })
                .mount(&server)
                .await;
        }
        // Anything else (a probe) is not there.
        Mock::given(method("HEAD"))
            .respond_with(ResponseTemplate::new(404))
            .mount(&server)
            .await;
        ModelServer { server, requests }
    }

    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// The requests of `role`.
    pub fn of(&self, role: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r["role"] == role)
            .cloned()
            .collect()
    }
}

/// The tool names a Messages, Responses, Chat Completions or Gemini request offered the model.
pub fn tool_names(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .flat_map(|t| match t["functionDeclarations"].as_array() {
                    Some(decls) => decls
                        .iter()
                        .filter_map(|d| d["name"].as_str().map(String::from))
                        .collect(),
                    None => t["name"]
                        .as_str()
                        .or(t["function"]["name"].as_str())
                        .map(String::from)
                        .into_iter()
                        .collect::<Vec<_>>(),
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The answers a competition on the greet issue needs, per role: a proposal, an extraction, a
/// judgement, a verification; `implement` writes lib.sh through `tool` and then answers.
pub fn greet_answers(asked: &Asked, tool: &dyn Fn() -> (String, Value)) -> Reply {
    let fenced = |v: Value| Reply::Text(format!("Here it is.\n```json\n{v}\n```"));
    match (asked.role, asked.after_tool) {
        ("extract", _) => fenced(
            json!({"explicit_requirements": [{"id": "req_1", "components": ["greet prints Hello, NAME!"]}], "implicit_requirements": []}),
        ),
        ("propose", _) => {
            let bot = asked.bot.clone().unwrap_or_default();
            fenced(json!({
                "approach_summary": format!("Add greet to lib.sh, the plan of {bot}"),
                "pseudo_code": format!("greet() {{ echo \"Hello, $1!\"; }} as {bot} would write it for this issue"),
                "files_affected": [{"path": "lib.sh", "change_type": "modify", "description": "add greet"}],
                "estimated_complexity": {"lines_of_code": 1, "files": 1, "modules": 1, "difficulty": "low"},
                "risk_assessment": {"breaking_changes": false, "security_critical": false, "deployment_impact": "none", "overall_risk": "low", "mitigation": "a test"},
                "spec_alignment": {"checkboxes_addressed": ["req_1"], "components_addressed": ["greet prints Hello, NAME!"], "implicit_requirements_addressed": [], "reasoning": "r"},
                "specialist_consultations": [],
                "innovation": "none",
                "success_probability": 0.8
            }))
        }
        ("judge", _) => {
            let text = asked.body.to_string();
            let scores: Vec<Value> = (1..=4)
                .filter(|i| text.contains(&format!("proposal_{i}")))
                .map(|i| json!({"proposal_id": format!("proposal_{i}"), "technical_quality_reasoning": "sound", "technical_quality": 0.8, "innovation_reasoning": "plain", "innovation": 0.5}))
                .collect();
            fenced(json!({"scores": scores}))
        }
        ("implement", false) => {
            let (name, input) = tool();
            Reply::Tools(vec![(name, input)])
        }
        ("implement", true) => {
            fenced(json!({"summary": "added greet", "checkboxes_completed": ["req_1"]}))
        }
        ("review", _) => fenced(
            json!({"innovation": 0.6, "innovation_reasoning": "a plain shell function", "concerns_addressed": 1.0, "concerns_reasoning": "no concerns were raised"}),
        ),
        ("verify", _) => fenced(
            json!({"satisfied": [{"id": "req_1", "evidence": "greet in lib.sh"}], "unsatisfied": []}),
        ),
        _ => Reply::Text("nothing to say".into()),
    }
}
