//! `backend = "codex"`: the Codex CLI, `codex exec --json [-m M] --sandbox … -`, prompt on
//! stdin. Its stdout is JSONL: `thread.started` (thread id), `item.*` events (the
//! `agent_message` items are the answer; commands and file changes are the work),
//! `turn.completed` with usage, or `turn.failed`. An `error` event is not fatal: Codex emits one
//! for every stream retry ("Reconnecting... 1/5") and may still finish with an answer, so it is
//! kept as a warning; the call fails on `turn.failed`, or when no agent message arrived. Bots and
//! the arbiter run in a read-only sandbox, the implementer in a workspace-write one.

use super::cli::{
    endpoint_of, jsonl_events, AgentCli, CliBackend, CliError, ModelSettings, Transcript,
};
use super::{Role, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Codex, as an [`AgentCli`].
pub struct Codex;

/// The `codex` backend.
pub type CodexBackend = CliBackend<Codex>;

impl AgentCli for Codex {
    const NAME: &'static str = "codex";
    const REPORTS_COST: bool = false;

    /// `args` go before the `-` that reads the prompt.
    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into()];
        if let Some(m) = &model.model {
            args.extend(["-m".into(), m.to_owned()]);
        }
        let sandbox = if role.edits() {
            "workspace-write"
        } else {
            "read-only"
        };
        args.extend([
            "--sandbox".into(),
            sandbox.into(),
            "--skip-git-repo-check".into(),
            // Its plugin sync (GitHub, ChatGPT) and analytics: nothing an agent of ralph's needs,
            // and the sandbox's network policy would refuse them on every call.
            "-c".into(),
            "features.plugins=false".into(),
            "-c".into(),
            "analytics.enabled=false".into(),
        ]);
        args.extend(extra.iter().cloned());
        // The prompt comes from stdin.
        args.push("-".into());
        args
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_stream(stdout)
    }

    fn activity(line: &str, workdir: &str) -> Option<String> {
        crate::progress::activity::codex(line, workdir)
    }

    /// Its own variables, and the `env_key` (and `env_http_headers` variables) of every model
    /// provider its `config.toml` names.
    fn own_env(home: Option<&Path>) -> Vec<String> {
        let mut out: Vec<String> = ["OPENAI_*", "OPENAI_API_KEY", "CODEX_*", "RUST_LOG"]
            .map(String::from)
            .to_vec();
        out.extend(provider_keys(home));
        out
    }

    /// The provider its `config.toml` names (or `OPENAI_BASE_URL`), else OpenAI's API and, for
    /// a ChatGPT login, ChatGPT and its auth host.
    fn endpoints(home: Option<&Path>, _model: &ModelSettings) -> Vec<String> {
        let configured = config(home).and_then(|c| {
            let name = c.get("model_provider")?.as_str()?.to_owned();
            let url = c
                .get("model_providers")?
                .get(&name)?
                .get("base_url")?
                .as_str()?;
            Some(url.to_owned())
        });
        match endpoint_of(configured)
            .or_else(|| endpoint_of(crate::env::non_empty("OPENAI_BASE_URL")))
        {
            Some(own) => vec![own],
            None => ["api.openai.com", "chatgpt.com", "auth.openai.com"]
                .map(String::from)
                .to_vec(),
        }
    }
}

/// Codex's `config.toml`, parsed, when there is one.
fn config(home: Option<&Path>) -> Option<toml::Table> {
    let dir = crate::env::non_empty("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")))?;
    crate::fsutil::read_regular_text(&dir.join("config.toml"), 1 << 20)
        .ok()?
        .parse()
        .ok()
}

/// The variables Codex's `config.toml` names for its model providers' keys and headers.
fn provider_keys(home: Option<&Path>) -> Vec<String> {
    let Some(config) = config(home) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let providers = config.get("model_providers").and_then(|p| p.as_table());
    for provider in providers.into_iter().flat_map(|t| t.values()) {
        if let Some(key) = provider.get("env_key").and_then(|k| k.as_str()) {
            out.push(key.to_owned());
        }
        let headers = provider.get("env_http_headers").and_then(|h| h.as_table());
        out.extend(
            headers
                .into_iter()
                .flat_map(|h| h.values())
                .filter_map(|v| v.as_str().map(str::to_owned)),
        );
    }
    out
}

/// A Codex error message made readable: the raw JSON body of an API error becomes its
/// `error.type` and `error.message`.
fn readable(message: &str) -> String {
    serde_json::from_str::<Value>(message)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            let text = e.get("message")?.as_str()?;
            Some(match e.get("type").and_then(Value::as_str) {
                Some(kind) => format!("{kind}: {text}"),
                None => text.to_owned(),
            })
        })
        .unwrap_or_else(|| message.to_owned())
}

/// The HTTP status a Codex error message names (`unexpected status 401 Unauthorized: …`).
fn status_in(message: &str) -> Option<u16> {
    let rest = message.split("status ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
        .filter(|s| (100..600).contains(s))
}

/// One line of `codex exec --json`: the events ralph reads, typed; every other event and field
/// is ignored, and a line that is not one of these shapes is skipped.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: Option<String> },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: Item },
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default)]
        usage: TurnUsage,
    },
    #[serde(rename = "turn.failed")]
    TurnFailed { error: Option<Message> },
    #[serde(rename = "error")]
    Error { message: Option<String> },
    #[serde(other)]
    Other,
}

/// A finished work item: an agent message (its text) or work (its kind).
#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Older releases name the kind `item_type`.
    item_type: Option<String>,
    text: Option<String>,
}

#[derive(Deserialize, Default)]
struct TurnUsage {
    input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Message {
    message: Option<String>,
}

/// Parses a transcript; `turn.failed` is an error with its message, and so is a transcript
/// without an agent message (the last `error` event then says why).
pub fn parse_stream(stdout: &str) -> Result<Transcript, CliError> {
    let mut warnings: Vec<String> = Vec::new();
    let mut messages = Vec::new();
    let mut items = Vec::new();
    let mut usage = Usage::default();
    let mut thread_id = None;
    let mut completed = false;
    let (events, skipped_lines) = jsonl_events::<Event>(stdout);
    for event in events {
        match event {
            Event::ThreadStarted { thread_id: id } => thread_id = id,
            Event::ItemCompleted { item } => match item.kind.or(item.item_type).as_deref() {
                Some("agent_message" | "assistant_message") => messages.extend(item.text),
                Some(other) => items.push(other.to_owned()),
                None => {}
            },
            Event::TurnCompleted { usage: u } => {
                completed = true;
                usage.add(Usage {
                    input_tokens: u.input_tokens.unwrap_or(0),
                    cached_input_tokens: u.cached_input_tokens.unwrap_or(0),
                    output_tokens: u.output_tokens.unwrap_or(0),
                    cost_usd: None,
                });
            }
            Event::TurnFailed { error } => {
                let message = error
                    .and_then(|e| e.message)
                    .unwrap_or_else(|| "the turn failed".to_owned());
                let status = status_in(&message);
                return Err(CliError::reported(readable(&message), status));
            }
            Event::Error { message } => warnings.push(message.unwrap_or_else(|| "error".into())),
            Event::Other => {}
        }
    }
    if messages.is_empty() {
        if let Some(last) = warnings.last() {
            let status = status_in(last);
            return Err(CliError::reported(last.clone(), status));
        }
        return Err(CliError::missing(if completed {
            "the turn completed without an agent message"
        } else {
            "the stream ended without an agent message"
        }));
    }
    Ok(Transcript {
        text: messages.join("\n\n"),
        usage,
        session_id: thread_id,
        tools_used: items,
        skipped_lines,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

    #[test]
    fn a_recorded_transcript_yields_the_message_and_usage() {
        let t = parse_stream(include_str!("../../tests/fixtures/agents/codex_exec.jsonl")).unwrap();
        assert_eq!(
            t.session_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert_eq!(t.tools_used, ["reasoning", "command_execution"]);
        assert!(t.text.ends_with("```"), "{}", t.text);
        assert!(t.text.contains("\"approach_summary\""));
        assert_eq!(t.usage.input_tokens, 24_763);
        assert_eq!(t.usage.output_tokens, 122);
        assert_eq!(t.usage.cost_usd, None);
    }

    #[test]
    fn failures_carry_the_message() {
        let s = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}"#;
        assert_eq!(
            parse_stream(s).unwrap_err(),
            CliError::reported("stream disconnected before completion", None)
        );
        let s = r#"{"type":"error","message":"unexpected status 401 Unauthorized: invalid key"}"#;
        let e = parse_stream(s).unwrap_err();
        assert_eq!(e.status, Some(401));
        assert!(e.reported && e.message.contains("invalid key"));
        let s = r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#;
        let e = parse_stream(s).unwrap_err();
        assert!(e.message.contains("without an agent message") && !e.reported);
        let s = r#"{"type":"item.completed","item":{"id":"item_0","item_type":"assistant_message","text":"old format"}}"#;
        assert_eq!(parse_stream(s).unwrap().text, "old format");
    }

    /// Real transcripts of Codex 0.169.0 against a local model server.
    #[test]
    fn real_transcripts_parse() {
        let t = parse_stream(&real_transcript("codex_propose.jsonl")).unwrap();
        assert!(t.text.contains("```json"));
        let t = parse_stream(&real_transcript("codex_implement.jsonl")).unwrap();
        assert_eq!(t.tools_used, ["command_execution"]);
        assert_eq!(
            (t.usage.input_tokens, t.usage.cached_input_tokens),
            (2000, 400)
        );
        let t = parse_stream(&real_transcript("codex_5xx_then_ok.jsonl")).unwrap();
        assert_eq!(t.warnings.len(), 1, "a reconnect is not fatal");
        assert!(t.warnings[0].starts_with("Reconnecting... 1/5"));
        let e = parse_stream(&real_transcript("codex_401.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(401));
        assert!(e.message.contains("Incorrect API key provided"), "{e:?}");
        let e = parse_stream(&real_transcript("codex_400.jsonl")).unwrap_err();
        assert_eq!(
            e.message,
            "invalid_request_error: Invalid value for 'model'"
        );
    }

    #[test]
    fn reconnects_are_warnings_when_the_turn_completes() {
        let s = r#"{"type":"thread.started","thread_id":"t"}
{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"the answer"}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}"#;
        let t = parse_stream(s).unwrap();
        assert_eq!(t.text, "the answer");
        assert_eq!(t.warnings.len(), 1);
        assert_eq!(t.usage.cached_input_tokens, 4);
    }

    #[test]
    fn roles_get_their_sandbox() {
        let b = CodexBackend::new("codex".into(), &[], &[], Some("gpt-6.1-sol".into()));
        assert_eq!(
            b.args(Role::Judge).join(" "),
            "exec --json -m gpt-6.1-sol --sandbox read-only --skip-git-repo-check -c features.plugins=false -c analytics.enabled=false -"
        );
        let b = CodexBackend::new(
            "codex".into(),
            &["npx".into(), "@openai/codex".into()],
            &["-c".into(), "model_provider=\"mine\"".into()],
            None,
        );
        assert_eq!(
            b.args(Role::Propose).join(" "),
            "@openai/codex exec --json --sandbox read-only --skip-git-repo-check -c features.plugins=false -c analytics.enabled=false -c model_provider=\"mine\" -"
        );
        assert!(b
            .args(Role::Implement)
            .contains(&"workspace-write".to_owned()));
    }
}
