//! `backend = "openai"`: the Chat Completions API (`POST {base_url}/chat/completions`) of
//! OpenAI and compatible servers (Ollama, vLLM, llama.cpp). Key from `api_key_env`, else
//! `OPENAI_API_KEY`; a server with a custom `base_url` may need none. Streamed as server-sent
//! events (`choices[0].delta.content`, usage in the last chunk, `data: [DONE]`); a plain JSON
//! answer is read too.

use super::http::{self, Collected, SseEvent};
use super::{AgentCall, AgentError, AgentReply, Backend, Usage};
use crate::secret::Secret;
use async_trait::async_trait;
use serde_json::{json, Value};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

pub struct OpenAiBackend {
    base_url: String,
    key: Option<Secret>,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
}

impl OpenAiBackend {
    pub fn new(
        base_url: Option<String>,
        key_env: Option<String>,
        model: Option<String>,
        max_tokens: Option<u32>,
        temperature: Option<f64>,
    ) -> Result<OpenAiBackend, AgentError> {
        let model = model.ok_or_else(|| AgentError::Config {
            message: "backend = \"openai\" needs `model` (e.g. \"gpt-4.1\" or \"llama3.1\")".into(),
        })?;
        let var = key_env
            .clone()
            .unwrap_or_else(|| crate::env::OPENAI_API_KEY.into());
        let key = http::api_key(&var);
        // The public API needs a key; a local server usually does not.
        if key.is_none() && (base_url.is_none() || key_env.is_some()) {
            return Err(AgentError::Config {
                message: format!("backend = \"openai\" needs an API key in {var}"),
            });
        }
        Ok(OpenAiBackend {
            base_url: http::base_url(base_url, DEFAULT_BASE_URL),
            key,
            model,
            max_tokens,
            temperature,
        })
    }

    fn body(&self, prompt: &str) -> Value {
        let mut body = json!({
            "model": self.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": prompt}],
        });
        if let Some(m) = self.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if let Some(t) = self.temperature {
            body["temperature"] = json!(t);
        }
        body
    }
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input_tokens: n("prompt_tokens"),
        cached_input_tokens: 0,
        output_tokens: n("completion_tokens"),
        cost_usd: None,
    })
}

/// Folds one streamed chunk into the answer so far (`[DONE]` and non-JSON lines carry
/// nothing).
fn apply_chunk(event: &SseEvent, c: &mut Collected) -> Result<(), String> {
    let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
        return Ok(());
    };
    if let Some(msg) = data.pointer("/error/message").and_then(Value::as_str) {
        return Err(msg.to_owned());
    }
    if c.id.is_none() {
        c.id = data.get("id").and_then(Value::as_str).map(str::to_owned);
    }
    if let Some(t) = data
        .pointer("/choices/0/delta/content")
        .and_then(Value::as_str)
    {
        c.text.push_str(t);
    }
    if let Some(u) = usage_of(&data) {
        c.usage = u;
    }
    Ok(())
}

/// The text and usage of a non-streamed answer.
fn parse_completion(body: &Value) -> Collected {
    let text = body
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let id = body.get("id").and_then(Value::as_str).map(str::to_owned);
    Collected {
        text,
        usage: usage_of(body).unwrap_or_default(),
        id,
    }
}

#[async_trait]
impl Backend for OpenAiBackend {
    fn describe(&self) -> String {
        format!("openai ({})", self.model)
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let url = format!("{}/chat/completions", self.base_url);
        let body = self.body(&call.prompt);
        let request = || {
            let req = http::client().post(&url).json(&body);
            match &self.key {
                Some(k) => req.bearer_auth(k.expose()),
                None => req,
            }
        };
        http::ask(
            &self.describe(),
            call,
            request,
            apply_chunk,
            parse_completion,
        )
        .await
    }
}
