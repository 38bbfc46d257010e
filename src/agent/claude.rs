//! `backend = "claude"`: the Claude Code CLI in print mode,
//! `claude -p --output-format stream-json --verbose [--model M]`, prompt on stdin. The stream is
//! one JSON object per line: `system` (session id), `assistant` messages (text and tool use),
//! `user` tool results, and a final `result` with the answer, usage and cost — or an error.
//! Bots and the arbiter get read-only tools; the implementer gets edit tools.

use super::subprocess::{call_cli, Parsed};
use super::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use async_trait::async_trait;
use serde_json::Value;

/// Tools for roles that only read the repository.
pub const READ_ONLY_TOOLS: &str = "Read,Glob,Grep";
/// Tools for the implementer.
pub const EDIT_TOOLS: &str = "Read,Glob,Grep,Edit,MultiEdit,Write,Bash";

pub struct ClaudeBackend {
    program: String,
    model: Option<String>,
}

impl ClaudeBackend {
    pub fn new(program: String, model: Option<String>) -> ClaudeBackend {
        ClaudeBackend { program, model }
    }

    /// The arguments for a role.
    pub fn args(&self, role: Role) -> Vec<String> {
        let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
            .map(String::from)
            .to_vec();
        if let Some(m) = &self.model {
            args.extend(["--model".into(), m.clone()]);
        }
        if role.edits() {
            args.extend([
                "--allowedTools".into(),
                EDIT_TOOLS.into(),
                "--permission-mode".into(),
                "acceptEdits".into(),
            ]);
        } else {
            args.extend([
                "--allowedTools".into(),
                READ_ONLY_TOOLS.into(),
                "--disallowedTools".into(),
                "Edit,MultiEdit,Write,Bash,NotebookEdit".into(),
            ]);
        }
        args
    }
}

/// What a stream-json transcript says.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The final answer: the `result` text, else the assistant's text.
    pub text: String,
    /// Names of the tools used, in order.
    pub tools_used: Vec<String>,
    pub usage: Usage,
    pub session_id: Option<String>,
    /// Lines that were not JSON (warnings printed by the CLI, a cut in the middle).
    pub skipped_lines: usize,
}

/// Parses a stream-json transcript. An error `result` (or none at all and no text) is an
/// error with the CLI's message.
pub fn parse_stream(stdout: &str) -> Result<Transcript, String> {
    let mut assistant_text: Vec<String> = Vec::new();
    let mut tools_used = Vec::new();
    let mut session_id = None;
    let mut skipped_lines = 0;
    let mut result: Option<Value> = None;
    for line in stdout.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            skipped_lines += 1;
            continue;
        };
        if let Some(id) = event.get("session_id").and_then(Value::as_str) {
            session_id = Some(id.to_owned());
        }
        match event.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                let content = event
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for block in content {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = block.get("text").and_then(Value::as_str) {
                                assistant_text.push(t.to_owned());
                            }
                        }
                        Some("tool_use") => {
                            if let Some(n) = block.get("name").and_then(Value::as_str) {
                                tools_used.push(n.to_owned());
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("result") => result = Some(event),
            _ => {}
        }
    }
    let Some(result) = result else {
        if assistant_text.is_empty() {
            return Err("the stream ended without a result".into());
        }
        return Ok(Transcript {
            text: assistant_text.join("\n"),
            tools_used,
            usage: Usage::default(),
            session_id,
            skipped_lines,
        });
    };
    let is_error = result
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || result
            .get("subtype")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("error"));
    let result_text = result
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if is_error {
        let subtype = result
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("error");
        return Err(if result_text.is_empty() {
            subtype.to_owned()
        } else {
            format!("{subtype}: {result_text}")
        });
    }
    let count = |key: &str| {
        result
            .pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let usage = Usage {
        input_tokens: count("input_tokens")
            + count("cache_creation_input_tokens")
            + count("cache_read_input_tokens"),
        output_tokens: count("output_tokens"),
        // Older CLIs call it cost_usd.
        cost_usd: result
            .get("total_cost_usd")
            .or_else(|| result.get("cost_usd"))
            .and_then(Value::as_f64),
    };
    let text = if result_text.trim().is_empty() {
        assistant_text.join("\n")
    } else {
        result_text
    };
    Ok(Transcript {
        text,
        tools_used,
        usage,
        session_id,
        skipped_lines,
    })
}

#[async_trait]
impl Backend for ClaudeBackend {
    fn describe(&self) -> String {
        match &self.model {
            Some(m) => format!("claude ({m})"),
            None => "claude".into(),
        }
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        let args = self.args(call.role);
        call_cli(&self.describe(), &self.program, &args, call, |stdout| {
            let t = parse_stream(stdout)?;
            tracing::debug!(tools = ?t.tools_used, skipped = t.skipped_lines, "claude transcript");
            Ok(Parsed {
                text: t.text,
                usage: t.usage,
                session_id: t.session_id,
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_transcript_yields_text_tools_usage_and_cost() {
        let t = parse_stream(include_str!(
            "../../tests/fixtures/agents/claude_stream.jsonl"
        ))
        .unwrap();
        assert!(t.text.contains("\"approach_summary\""), "{}", t.text);
        assert_eq!(t.tools_used, ["Grep", "Read"]);
        assert_eq!(t.usage.input_tokens, 1200 + 300 + 4500);
        assert_eq!(t.usage.output_tokens, 850);
        assert_eq!(t.usage.cost_usd, Some(0.0421));
        assert_eq!(
            t.session_id.as_deref(),
            Some("8f0c2a5e-1111-4c4c-9d9d-2b2b2b2b2b2b")
        );
        assert_eq!(t.skipped_lines, 1);
    }

    #[test]
    fn error_results_are_errors() {
        let stream = r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s","num_turns":5}"#;
        assert_eq!(parse_stream(stream).unwrap_err(), "error_max_turns");
        let stream = r#"{"type":"result","subtype":"success","is_error":true,"result":"Credit balance is too low"}"#;
        assert_eq!(
            parse_stream(stream).unwrap_err(),
            "success: Credit balance is too low"
        );
        assert!(parse_stream("not json\n").is_err());
    }

    #[test]
    fn without_a_result_the_assistant_text_is_used() {
        let stream = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"part one"},{"type":"text","text":"part two"}]}}"#;
        let t = parse_stream(stream).unwrap();
        assert_eq!(t.text, "part one\npart two");
        assert_eq!(t.usage, Usage::default());
    }

    #[test]
    fn roles_get_their_tools() {
        let b = ClaudeBackend::new("claude".into(), Some("sonnet".into()));
        let bot = b.args(Role::Propose).join(" ");
        assert!(bot.starts_with("-p --output-format stream-json --verbose --model sonnet"));
        assert!(bot.contains("--allowedTools Read,Glob,Grep"));
        assert!(bot.contains("--disallowedTools Edit"));
        let imp = b.args(Role::Implement).join(" ");
        assert!(imp.contains("Edit,MultiEdit,Write,Bash"));
        assert!(imp.contains("--permission-mode acceptEdits"));
    }
}
