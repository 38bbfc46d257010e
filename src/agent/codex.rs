//! `backend = "codex"`: the Codex CLI, `codex exec --json [-m M] -`, prompt on stdin. Its
//! stdout is JSONL: `thread.started` (thread id), `item.*` events (the `agent_message` items
//! are the answer; commands and file changes are the work), `turn.completed` with usage, or
//! `turn.failed` / `error`. Bots and the arbiter run in a read-only sandbox, the implementer in
//! a workspace-write one.

use super::subprocess::{call_cli, Parsed};
use super::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use async_trait::async_trait;
use serde_json::Value;

pub struct CodexBackend {
    program: String,
    model: Option<String>,
}

impl CodexBackend {
    pub fn new(program: String, model: Option<String>) -> CodexBackend {
        CodexBackend { program, model }
    }

    pub fn args(&self, role: Role) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into(), "--json".into()];
        if let Some(m) = &self.model {
            args.extend(["-m".into(), m.clone()]);
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
            // The prompt comes from stdin.
            "-".into(),
        ]);
        args
    }
}

/// What a Codex JSONL transcript says.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The agent messages, joined by blank lines (the last carries the answer).
    pub text: String,
    /// The kinds of work items seen (`command_execution`, `file_change`, …), in order.
    pub items: Vec<String>,
    pub usage: Usage,
    pub thread_id: Option<String>,
}

/// Parses a transcript; a `turn.failed` or `error` event is an error with its message.
pub fn parse_stream(stdout: &str) -> Result<Transcript, String> {
    let mut messages = Vec::new();
    let mut items = Vec::new();
    let mut usage = Usage::default();
    let mut thread_id = None;
    let mut completed = false;
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let text_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => thread_id = text_of(&event, "thread_id"),
            Some("item.completed") => {
                let Some(item) = event.get("item") else {
                    continue;
                };
                // Older releases name the kind `item_type`.
                let kind = text_of(item, "type").or_else(|| text_of(item, "item_type"));
                match kind.as_deref() {
                    Some("agent_message") | Some("assistant_message") => {
                        if let Some(t) = text_of(item, "text") {
                            messages.push(t);
                        }
                    }
                    Some(other) => items.push(other.to_owned()),
                    None => {}
                }
            }
            Some("turn.completed") => {
                completed = true;
                let n = |k: &str| {
                    event
                        .pointer(&format!("/usage/{k}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                usage.add(Usage {
                    input_tokens: n("input_tokens"),
                    output_tokens: n("output_tokens"),
                    cost_usd: None,
                });
            }
            Some("turn.failed") => {
                return Err(event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the turn failed")
                    .to_owned())
            }
            Some("error") => {
                return Err(text_of(&event, "message").unwrap_or_else(|| "error".into()))
            }
            _ => {}
        }
    }
    if messages.is_empty() {
        return Err(if completed {
            "the turn completed without an agent message".into()
        } else {
            "the stream ended without an agent message".into()
        });
    }
    Ok(Transcript {
        text: messages.join("\n\n"),
        items,
        usage,
        thread_id,
    })
}

#[async_trait]
impl Backend for CodexBackend {
    fn describe(&self) -> String {
        match &self.model {
            Some(m) => format!("codex ({m})"),
            None => "codex".into(),
        }
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let args = self.args(call.role);
        call_cli(&self.describe(), &self.program, &args, call, |stdout| {
            let t = parse_stream(stdout)?;
            tracing::debug!(items = ?t.items, "codex transcript");
            Ok(Parsed {
                text: t.text,
                usage: t.usage,
                session_id: t.thread_id,
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_transcript_yields_the_message_and_usage() {
        let t = parse_stream(include_str!("../../tests/fixtures/agents/codex_exec.jsonl")).unwrap();
        assert_eq!(
            t.thread_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert_eq!(t.items, ["reasoning", "command_execution"]);
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
            "stream disconnected before completion"
        );
        let s = r#"{"type":"error","message":"unexpected status 401 Unauthorized"}"#;
        assert!(parse_stream(s).unwrap_err().contains("401"));
        let s = r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#;
        assert!(parse_stream(s)
            .unwrap_err()
            .contains("without an agent message"));
        let s = r#"{"type":"item.completed","item":{"id":"item_0","item_type":"assistant_message","text":"old format"}}"#;
        assert_eq!(parse_stream(s).unwrap().text, "old format");
    }

    #[test]
    fn roles_get_their_sandbox() {
        let b = CodexBackend::new("codex".into(), Some("gpt-5-codex".into()));
        assert_eq!(
            b.args(Role::Judge).join(" "),
            "exec --json -m gpt-5-codex --sandbox read-only --skip-git-repo-check -"
        );
        assert!(b
            .args(Role::Implement)
            .contains(&"workspace-write".to_owned()));
    }
}
