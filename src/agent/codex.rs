//! `backend = "codex"`: the Codex CLI, `codex exec --json [-m M] --sandbox … -`, prompt on
//! stdin. Its stdout is JSONL: `thread.started` (thread id), `item.*` events (the
//! `agent_message` items are the answer; commands and file changes are the work),
//! `turn.completed` with usage, or `turn.failed`. An `error` event is not fatal: Codex emits one
//! for every stream retry ("Reconnecting... 1/5") and may still finish with an answer, so it is
//! kept as a warning; the call fails on `turn.failed`, or when no agent message arrived. Bots and
//! the arbiter run in a read-only sandbox, the implementer in a workspace-write one.

use super::subprocess::{call_cli, CliError, Parsed};
use super::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

pub struct CodexBackend {
    program: String,
    /// Leading arguments of `command`.
    leading: Vec<String>,
    /// `args`, appended to ralph's (before the `-` that reads the prompt).
    extra: Vec<String>,
    model: Option<String>,
}

impl CodexBackend {
    /// `command` is the program and its leading arguments (empty: `program`).
    pub fn new(
        program: String,
        command: &[String],
        extra: &[String],
        model: Option<String>,
    ) -> CodexBackend {
        let (program, leading) = match command.split_first() {
            Some((p, rest)) => (p.clone(), rest.to_vec()),
            None => (program, Vec::new()),
        };
        CodexBackend {
            program,
            leading,
            extra: extra.to_vec(),
            model,
        }
    }

    pub fn args(&self, role: Role) -> Vec<String> {
        let mut args = self.leading.clone();
        args.extend(["exec".into(), "--json".into()]);
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
            // Its plugin sync (GitHub, ChatGPT) and analytics: nothing an agent of ralph's needs,
            // and the sandbox's network policy would refuse them on every call.
            "-c".into(),
            "features.plugins=false".into(),
            "-c".into(),
            "analytics.enabled=false".into(),
        ]);
        args.extend(self.extra.iter().cloned());
        // The prompt comes from stdin.
        args.push("-".into());
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
    /// The `error` events that did not end the turn (stream retries).
    pub warnings: Vec<String>,
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
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Event>(line.trim()) else {
            continue;
        };
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
        items,
        usage,
        thread_id,
        warnings,
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
        call_cli(
            &self.describe(),
            "codex",
            &self.program,
            &args,
            call,
            crate::progress::activity::codex,
            |stdout| {
                let t = parse_stream(stdout)?;
                tracing::debug!(items = ?t.items, "codex transcript");
                Ok(Parsed {
                    text: t.text,
                    usage: t.usage,
                    session_id: t.thread_id,
                    tools_used: t.items,
                    warnings: t.warnings,
                })
            },
        )
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

    /// Real transcripts of Codex 0.169.0 against a local model server
    /// (tests/fixtures/agents/real/README.md says how each was made).
    fn real(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/agents/real/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn real_transcripts_parse() {
        let t = parse_stream(&real("codex_propose.jsonl")).unwrap();
        assert!(t.text.contains("```json"));
        let t = parse_stream(&real("codex_implement.jsonl")).unwrap();
        assert_eq!(t.items, ["command_execution"]);
        assert_eq!(
            (t.usage.input_tokens, t.usage.cached_input_tokens),
            (2000, 400)
        );
        let t = parse_stream(&real("codex_5xx_then_ok.jsonl")).unwrap();
        assert_eq!(t.warnings.len(), 1, "a reconnect is not fatal");
        assert!(t.warnings[0].starts_with("Reconnecting... 1/5"));
        let e = parse_stream(&real("codex_401.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(401));
        assert!(e.message.contains("Incorrect API key provided"), "{e:?}");
        let e = parse_stream(&real("codex_400.jsonl")).unwrap_err();
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
