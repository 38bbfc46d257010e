//! `backend = "claude"`: the Claude Code CLI in print mode,
//! `claude -p --output-format stream-json --verbose [--model M] --tools … --allowedTools …`,
//! prompt on stdin. The stream is one JSON object per line: `system` (session id), `assistant`
//! messages (text and tool use), `user` tool results, and a final `result` with the answer,
//! usage (`modelUsage` per model, which counts subagents too) and cost — or an error, which the
//! CLI reports on stdout even when it exits 1.
//!
//! `--tools` sets the exact list of tools the model gets (`--allowedTools` alone only decides
//! which need no permission, and leaves about twenty tools available — `EnterWorktree` among
//! them, which writes a worktree into the user's repository): read-only roles get Read, Glob and
//! Grep; the implementer adds Edit, Write and Bash, with edits accepted.

use super::cli::{
    endpoint_of, jsonl_events, AgentCli, CliBackend, CliError, ModelSettings, Transcript,
};
use super::{Role, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// Tools for roles that only read the repository.
const READ_ONLY_TOOLS: &str = "Read,Glob,Grep";
/// Tools for the implementer.
const EDIT_TOOLS: &str = "Read,Glob,Grep,Edit,Write,Bash";

/// Claude Code, as an [`AgentCli`].
pub struct Claude;

/// The `claude` backend.
pub type ClaudeBackend = CliBackend<Claude>;

impl AgentCli for Claude {
    const NAME: &'static str = "claude";
    const REPORTS_COST: bool = true;
    /// In the sandbox its telemetry, bootstrap and event calls would be refused on every call:
    /// off, unless the user says otherwise.
    const SANDBOX_ENV: &'static [(&'static str, &'static str)] =
        &[("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")];

    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        let mut args = ["-p", "--output-format", "stream-json", "--verbose"]
            .map(String::from)
            .to_vec();
        if let Some(m) = &model.model {
            args.extend(["--model".into(), m.to_owned()]);
        }
        let tools = if role.edits() {
            EDIT_TOOLS
        } else {
            READ_ONLY_TOOLS
        };
        // `--tools` is the list the model gets; `--allowedTools` lets those run unasked.
        args.extend([
            "--tools".into(),
            tools.into(),
            "--allowedTools".into(),
            tools.into(),
        ]);
        if role.edits() {
            args.extend(["--permission-mode".into(), "acceptEdits".into()]);
        }
        args.extend(extra.iter().cloned());
        args
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_stream(stdout)
    }

    fn activity(line: &str, workdir: &str) -> Option<String> {
        crate::progress::activity::claude(line, workdir)
    }

    fn own_env(_home: Option<&Path>) -> Vec<String> {
        [
            "ANTHROPIC_*",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_*",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "DISABLE_*",
            "MAX_THINKING_TOKENS",
            "API_TIMEOUT_MS",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_TIMEOUT_MS",
        ]
        .map(String::from)
        .to_vec()
    }

    /// `ANTHROPIC_BASE_URL`, else Anthropic's API and the hosts its login is refreshed at.
    fn endpoints(_home: Option<&Path>, _model: &ModelSettings) -> Vec<String> {
        match endpoint_of(crate::env::non_empty("ANTHROPIC_BASE_URL")) {
            Some(own) => vec![own],
            None => [
                "api.anthropic.com",
                "platform.claude.com",
                "console.anthropic.com",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// One line of Claude Code's `stream-json` output: the events ralph reads, typed; every other
/// event and field is ignored, and a line that is not one of these shapes is skipped.
#[derive(Deserialize)]
struct Line {
    session_id: Option<String>,
    #[serde(flatten)]
    event: Event,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    Assistant {
        #[serde(default)]
        message: AssistantMessage,
    },
    Result(Box<ResultEvent>),
    System(SystemEvent),
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct AssistantMessage {
    #[serde(default)]
    content: Vec<Block>,
}

/// A block of an assistant message: text, or a tool call (its name).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: Option<String>,
    },
    ToolUse {
        name: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// The `result` event that ends a session.
#[derive(Deserialize, Default)]
struct ResultEvent {
    #[serde(default)]
    subtype: String,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    result: String,
    api_error_status: Option<u64>,
    total_cost_usd: Option<f64>,
    cost_usd: Option<f64>,
    /// Per model, subagents included (the final `usage` leaves them out).
    #[serde(rename = "modelUsage", default)]
    model_usage: std::collections::BTreeMap<String, TokenUsage>,
    #[serde(default)]
    usage: TokenUsage,
}

/// Tokens of a `result`'s `usage` (snake_case) or of one model in its `modelUsage`
/// (camelCase).
#[derive(Deserialize, Default)]
struct TokenUsage {
    #[serde(default, alias = "inputTokens")]
    input_tokens: u64,
    #[serde(default, alias = "outputTokens")]
    output_tokens: u64,
    #[serde(default, alias = "cacheReadInputTokens")]
    cache_read_input_tokens: u64,
    #[serde(default, alias = "cacheCreationInputTokens")]
    cache_creation_input_tokens: u64,
}

/// A `system` event; `api_retry` ones say the model API failed and the CLI retries.
#[derive(Deserialize)]
struct SystemEvent {
    #[serde(default)]
    subtype: String,
    error: Option<String>,
    error_status: Option<Value>,
    attempt: Option<Value>,
    max_retries: Option<Value>,
}

/// Parses a stream-json transcript. An error `result` (or none at all and no text) is an
/// error with the CLI's message and, for an API error, its HTTP status.
pub fn parse_stream(stdout: &str) -> Result<Transcript, CliError> {
    let mut assistant_text: Vec<String> = Vec::new();
    let mut tools_used = Vec::new();
    let mut session_id = None;
    let mut warnings = Vec::new();
    let mut result: Option<Box<ResultEvent>> = None;
    let (lines, skipped_lines) = jsonl_events::<Line>(stdout);
    for Line {
        session_id: id,
        event,
    } in lines
    {
        if id.is_some() {
            session_id = id;
        }
        match event {
            Event::Assistant { message } => {
                for block in message.content {
                    match block {
                        Block::Text { text } => assistant_text.extend(text),
                        Block::ToolUse { name } => tools_used.extend(name),
                        Block::Other => {}
                    }
                }
            }
            Event::Result(r) => result = Some(r),
            Event::System(e) if e.subtype == "api_retry" => warnings.push(retry_warning(&e)),
            Event::System(_) | Event::Other => {}
        }
    }
    let Some(result) = result else {
        if assistant_text.is_empty() {
            return Err(CliError::missing("the stream ended without a result"));
        }
        return Ok(Transcript {
            text: assistant_text.join("\n"),
            tools_used,
            usage: Usage::default(),
            session_id,
            skipped_lines,
            warnings,
        });
    };
    let is_error = result.is_error || result.subtype.starts_with("error");
    if is_error {
        return Err(reported_error(&result));
    }
    let usage = usage_of(&result);
    let text = if result.result.trim().is_empty() {
        assistant_text.join("\n")
    } else {
        result.result.clone()
    };
    Ok(Transcript {
        text,
        tools_used,
        usage,
        session_id,
        skipped_lines,
        warnings,
    })
}

/// The warning of an `api_retry` event: the model API failed, and the CLI tries again.
fn retry_warning(e: &SystemEvent) -> String {
    let n = |v: &Option<Value>| v.as_ref().map(Value::to_string).unwrap_or_default();
    format!(
        "the model API failed ({}, status {}): retry {} of {}",
        e.error.as_deref().unwrap_or("error"),
        n(&e.error_status),
        n(&e.attempt),
        n(&e.max_retries)
    )
}

/// The error an error `result` reports: its message (after the kind of error its subtype
/// names) and, for an API error, its HTTP status.
fn reported_error(result: &ResultEvent) -> CliError {
    let status = result.api_error_status.and_then(|s| u16::try_from(s).ok());
    // The CLI says `subtype: "success"` even for an API error: only a real error subtype
    // (`error_max_turns`, `error_during_execution`) says anything.
    let kind = result
        .subtype
        .strip_prefix("error_")
        .map(|k| k.replace('_', " "));
    let message = match (result.result.trim(), kind) {
        ("", Some(k)) => k,
        ("", None) => "the CLI reported an error without a message".to_owned(),
        (text, Some(k)) => format!("{k}: {text}"),
        (text, None) => text.to_owned(),
    };
    CliError::reported(message, status)
}

/// Tokens and cost of a `result` event: the sum over `modelUsage` when present (the final
/// `usage` leaves out subagents' tokens), else `usage`; cached input counted as input.
fn usage_of(result: &ResultEvent) -> Usage {
    let cost = result.total_cost_usd.or(result.cost_usd);
    if !result.model_usage.is_empty() {
        let mut u = Usage {
            cost_usd: cost,
            ..Usage::default()
        };
        for m in result.model_usage.values() {
            u.input_tokens +=
                m.input_tokens + m.cache_read_input_tokens + m.cache_creation_input_tokens;
            u.cached_input_tokens += m.cache_read_input_tokens;
            u.output_tokens += m.output_tokens;
        }
        return u;
    }
    let t = &result.usage;
    Usage {
        input_tokens: t.input_tokens + t.cache_creation_input_tokens + t.cache_read_input_tokens,
        cached_input_tokens: t.cache_read_input_tokens,
        output_tokens: t.output_tokens,
        cost_usd: cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

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
        assert_eq!(
            parse_stream(stream).unwrap_err(),
            CliError::reported("max turns", None)
        );
        let stream = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key"}"#;
        assert_eq!(
            parse_stream(stream).unwrap_err(),
            CliError::reported("Invalid API key · Fix external API key", Some(401)),
            "no `success:` artefact, and the status kept"
        );
        let missing = parse_stream("not json\n").unwrap_err();
        assert!(
            !missing.reported,
            "nothing was reported: the exit code says more"
        );
    }

    #[test]
    fn unknown_events_are_ignored_and_malformed_lines_counted() {
        let stream = r#"{"type":"stream_event","event":{"x":1},"session_id":"s1"}
{"type":"assistant","message":"not an object"}
not json
{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"…"},{"type":"text","text":"the answer"}]}}"#;
        let t = parse_stream(stream).unwrap();
        assert_eq!(t.text, "the answer");
        assert_eq!(
            t.skipped_lines, 2,
            "the malformed assistant event and the non-JSON line"
        );
        assert_eq!(t.session_id.as_deref(), Some("s1"), "read from any event");
    }

    #[test]
    fn without_a_result_the_assistant_text_is_used() {
        let stream = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"part one"},{"type":"text","text":"part two"}]}}"#;
        let t = parse_stream(stream).unwrap();
        assert_eq!(t.text, "part one\npart two");
        assert_eq!(t.usage, Usage::default());
    }

    #[test]
    fn roles_get_exactly_their_tools() {
        let b = ClaudeBackend::new("claude".into(), &[], &[], Some("sonnet".into()));
        assert_eq!(
            b.args(Role::Propose).join(" "),
            "-p --output-format stream-json --verbose --model sonnet --tools Read,Glob,Grep --allowedTools Read,Glob,Grep"
        );
        let imp = b.args(Role::Implement).join(" ");
        assert!(imp.ends_with("--tools Read,Glob,Grep,Edit,Write,Bash --allowedTools Read,Glob,Grep,Edit,Write,Bash --permission-mode acceptEdits"), "{imp}");
        assert!(!imp.contains("MultiEdit"), "gone from Claude Code 2");
    }

    /// Real transcripts of Claude Code 2.1.330 against a local model server.
    #[test]
    fn real_transcripts_parse() {
        let t = parse_stream(&real_transcript("claude_propose.jsonl")).unwrap();
        assert!(t.text.contains("```json"));
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (120, 42));
        assert_eq!(t.usage.cost_usd, Some(0.00066));
        let t = parse_stream(&real_transcript("claude_implement.jsonl")).unwrap();
        assert_eq!(t.tools_used, ["Write"]);
        assert_eq!(t.text, "Done. I wrote hello.txt.");
        let t = parse_stream(&real_transcript("claude_readonly_denied.jsonl")).unwrap();
        assert_eq!(
            t.tools_used,
            ["EnterWorktree", "Write", "Bash"],
            "asked for, refused"
        );
        let t = parse_stream(&real_transcript("claude_500_then_ok.jsonl")).unwrap();
        assert_eq!(
            t.warnings,
            ["the model API failed (server_error, status 500): retry 1 of 10"]
        );
        let e = parse_stream(&real_transcript("claude_401_no_retry.jsonl")).unwrap_err();
        assert_eq!(
            e,
            CliError::reported("Invalid API key · Fix external API key", Some(401))
        );
        let e = parse_stream(&real_transcript("claude_400.jsonl")).unwrap_err();
        assert_eq!(
            e,
            CliError::reported("API Error: 400 messages: field required", Some(400))
        );
        let e = parse_stream(&real_transcript("claude_529_exhausted.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(529));
    }

    #[test]
    fn model_usage_counts_subagents() {
        let stream = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0.05,
"usage":{"input_tokens":10,"cache_read_input_tokens":0,"output_tokens":5},
"modelUsage":{"claude-sonnet":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":100,"cacheCreationInputTokens":0,"costUSD":0.04},
"claude-haiku":{"inputTokens":300,"outputTokens":40,"cacheReadInputTokens":0,"cacheCreationInputTokens":20,"costUSD":0.01}}}"#;
        let u = parse_stream(&stream.replace('\n', "")).unwrap().usage;
        assert_eq!((u.input_tokens, u.output_tokens), (10 + 100 + 300 + 20, 45));
        assert_eq!(u.cached_input_tokens, 100);
        assert_eq!(u.cost_usd, Some(0.05));
    }
}
