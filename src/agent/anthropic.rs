//! `backend = "anthropic"`: the Messages API (`POST {base_url}/v1/messages`), key from
//! `ANTHROPIC_API_KEY` (or `api_key_env`), streamed as server-sent events (`message_start`
//! with input tokens, `content_block_delta` text, `message_delta` with output tokens, `error`);
//! a plain JSON answer is read too, for servers that do not stream.

use super::http::{self, Collected, SseEvent};
use super::{AgentCall, AgentError, AgentReply, Backend, Usage};
use crate::secret::Secret;
use async_trait::async_trait;
use serde_json::{json, Value};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 8192;

pub struct AnthropicBackend {
    base_url: String,
    key: Secret,
    model: String,
    max_tokens: u32,
    temperature: Option<f64>,
}

impl AnthropicBackend {
    /// Fails when the model or the key is missing.
    pub fn new(
        base_url: Option<String>,
        key_env: Option<String>,
        model: Option<String>,
        max_tokens: Option<u32>,
        temperature: Option<f64>,
    ) -> Result<AnthropicBackend, AgentError> {
        let model = model.ok_or_else(|| AgentError::Config {
            message: "backend = \"anthropic\" needs `model` (e.g. \"claude-sonnet-4-5\")".into(),
        })?;
        let var = key_env.unwrap_or_else(|| crate::env::ANTHROPIC_API_KEY.into());
        let key = http::api_key(&var).ok_or_else(|| AgentError::Config {
            message: format!("backend = \"anthropic\" needs an API key in {var}"),
        })?;
        Ok(AnthropicBackend {
            base_url: http::base_url(base_url, DEFAULT_BASE_URL),
            key,
            model,
            max_tokens: max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            temperature,
        })
    }

    fn body(&self, prompt: &str) -> Value {
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "stream": true,
            "messages": [{"role": "user", "content": prompt}],
        });
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

/// Every input token a `usage` object counts: new, written to the cache and read from it.
fn input_tokens(usage: Option<&Value>) -> u64 {
    let n = |k: &str| {
        usage
            .and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")
}

/// Folds one streamed event into the answer so far.
fn apply_event(event: &SseEvent, c: &mut Collected) -> Result<(), String> {
    let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
        return Ok(());
    };
    match data.get("type").and_then(Value::as_str) {
        Some("message_start") => {
            c.id = data
                .pointer("/message/id")
                .and_then(Value::as_str)
                .map(str::to_owned);
            c.usage.input_tokens += input_tokens(data.pointer("/message/usage"));
        }
        Some("content_block_delta") => {
            if let Some(t) = data.pointer("/delta/text").and_then(Value::as_str) {
                c.text.push_str(t);
            }
        }
        // Output tokens are cumulative in message_delta.
        Some("message_delta") => {
            if let Some(o) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                c.usage.output_tokens = o;
            }
        }
        Some("error") => {
            return Err(data
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("stream error")
                .to_owned())
        }
        _ => {}
    }
    Ok(())
}

/// The text and usage of a non-streamed answer.
fn parse_message(body: &Value) -> Collected {
    let text = body
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default();
    let n = |p: &str| body.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        input_tokens: input_tokens(body.get("usage")),
        cached_input_tokens: 0,
        output_tokens: n("/usage/output_tokens"),
        cost_usd: None,
    };
    let id = body.get("id").and_then(Value::as_str).map(str::to_owned);
    Collected { text, usage, id }
}

#[async_trait]
impl Backend for AnthropicBackend {
    fn describe(&self) -> String {
        format!("anthropic ({})", self.model)
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let url = format!("{}/v1/messages", self.base_url);
        let body = self.body(&call.prompt);
        let request = || {
            http::client()
                .post(&url)
                .header("x-api-key", self.key.expose())
                .header("anthropic-version", API_VERSION)
                .json(&body)
        };
        http::ask(&self.describe(), call, request, apply_event, parse_message).await
    }
}
