//! What an agent is doing, read from its stream one line at a time as it arrives: Claude Code's
//! stream-json (each tool use with its file or command, text being written, the result) and
//! Codex's JSON events (commands run, files changed, messages), Gemini CLI's and OpenCode's JSON
//! events (tools used, text written; Qwen Code's stream reads as Claude Code's). Pure: a line in, at most one
//! short activity out; lines that say nothing new give `None`. The final answer and the
//! accounting are parsed from the whole stream afterwards, as before.

use serde_json::Value;

/// The longest activity kept: enough for a command or a path on one status line.
pub const MAX_ACTIVITY: usize = 72;

/// Shortens `text` to one line of at most [`MAX_ACTIVITY`] characters, printable only.
pub fn one_line(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.chars().count() <= MAX_ACTIVITY {
        line
    } else {
        let cut: String = line.chars().take(MAX_ACTIVITY - 1).collect();
        format!("{cut}…")
    }
}

/// A path as the user reads it: relative to the agent's working directory when inside it.
fn short_path(path: &str, workdir: &str) -> String {
    let base = workdir.trim_end_matches('/');
    match path.strip_prefix(base).and_then(|p| p.strip_prefix('/')) {
        Some(rel) if !base.is_empty() => rel.to_owned(),
        _ => path.to_owned(),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A tool use of Claude Code: `Edit src/lib.rs`, `Bash: cargo test`, `Grep greet`.
fn tool_use(item: &Value, workdir: &str) -> String {
    let name = text(item, "name").unwrap_or("tool");
    tool_call(name, item.get("input").unwrap_or(&Value::Null), workdir)
}

/// A tool called with `input`, named by its file, its command or its pattern.
fn tool_call(name: &str, input: &Value, workdir: &str) -> String {
    let detail = ["file_path", "filePath", "path", "dir_path", "notebook_path"]
        .iter()
        .find_map(|k| text(input, k))
        .map(|p| short_path(p, workdir))
        .or_else(|| text(input, "command").map(|c| format!(": {c}")))
        .or_else(|| text(input, "pattern").map(String::from))
        .or_else(|| text(input, "description").map(String::from))
        .unwrap_or_default();
    let sep = if detail.starts_with(':') || detail.is_empty() {
        ""
    } else {
        " "
    };
    one_line(&format!("{name}{sep}{detail}"))
}

/// The activity of one line of `claude -p --output-format stream-json --verbose`.
pub fn claude(line: &str, workdir: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line.trim()).ok()?;
    match text(&event, "type")? {
        "system" => match text(&event, "subtype") {
            Some("init") => Some(match text(&event, "model") {
                Some(model) => one_line(&format!("started ({model})")),
                None => "started".to_owned(),
            }),
            Some("api_retry") => Some("retrying the model API".to_owned()),
            _ => None,
        },
        "assistant" => {
            let content = event.pointer("/message/content")?.as_array()?;
            // The last item says what the agent is doing now.
            content
                .iter()
                .rev()
                .find_map(|item| match text(item, "type") {
                    Some("tool_use") => Some(tool_use(item, workdir)),
                    Some("text") => text(item, "text")
                        .filter(|t| !t.trim().is_empty())
                        .map(|t| one_line(&format!("writing: {t}"))),
                    Some("thinking") => Some("thinking".to_owned()),
                    _ => None,
                })
        }
        "user" => {
            let content = event.pointer("/message/content")?.as_array()?;
            content
                .iter()
                .any(|c| c.get("is_error").and_then(Value::as_bool) == Some(true))
                .then(|| "a tool call failed; carrying on".to_owned())
        }
        "result" => Some("finished".to_owned()),
        _ => None,
    }
}

/// The activity of one line of `gemini --output-format stream-json`.
pub fn gemini(line: &str, workdir: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line.trim()).ok()?;
    match text(&event, "type")? {
        "init" => Some(match text(&event, "model") {
            Some(model) => one_line(&format!("started ({model})")),
            None => "started".to_owned(),
        }),
        "tool_use" => Some(tool_call(
            text(&event, "tool_name").unwrap_or("tool"),
            event.get("parameters").unwrap_or(&Value::Null),
            workdir,
        )),
        "tool_result" if text(&event, "status") == Some("error") => {
            Some("a tool call failed; carrying on".to_owned())
        }
        "message" if text(&event, "role") == Some("assistant") => text(&event, "content")
            .filter(|t| !t.trim().is_empty())
            .map(|t| one_line(&format!("writing: {t}"))),
        "result" => Some("finished".to_owned()),
        _ => None,
    }
}

/// The activity of one line of `opencode run --format json`.
pub fn opencode(line: &str, workdir: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line.trim()).ok()?;
    let part = event.get("part");
    match text(&event, "type")? {
        "step_start" => Some("thinking".to_owned()),
        "tool_use" => {
            let part = part?;
            if part.pointer("/state/status").and_then(Value::as_str) == Some("error") {
                return Some("a tool call failed; carrying on".to_owned());
            }
            Some(tool_call(
                text(part, "tool").unwrap_or("tool"),
                part.pointer("/state/input").unwrap_or(&Value::Null),
                workdir,
            ))
        }
        "text" => text(part?, "text")
            .filter(|t| !t.trim().is_empty())
            .map(|t| one_line(&format!("writing: {t}"))),
        "error" => Some("failed".to_owned()),
        _ => None,
    }
}

/// A command without the shell Codex wraps it in (`/bin/bash -lc "…"`).
fn unwrap_shell(command: &str) -> &str {
    let inner = [
        "/bin/bash -lc ",
        "bash -lc ",
        "/bin/sh -c ",
        "sh -c ",
        "/usr/bin/bash -lc ",
    ]
    .iter()
    .find_map(|p| command.strip_prefix(p))
    .unwrap_or(command);
    ['"', '\'']
        .iter()
        .find_map(|q| inner.strip_prefix(*q).and_then(|s| s.strip_suffix(*q)))
        .unwrap_or(inner)
}

/// The activity of one line of `codex exec --json`.
pub fn codex(line: &str, workdir: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line.trim()).ok()?;
    let kind = text(&event, "type")?;
    match kind {
        "thread.started" => Some("started".to_owned()),
        "turn.started" => Some("thinking".to_owned()),
        "error" => Some(one_line(&format!(
            "retrying: {}",
            text(&event, "message").unwrap_or("an error")
        ))),
        "turn.completed" => Some("finished".to_owned()),
        "turn.failed" => Some("failed".to_owned()),
        "item.started" | "item.updated" | "item.completed" => {
            let item = event.get("item")?;
            let item_type = text(item, "type").or_else(|| text(item, "item_type"))?;
            let done = kind == "item.completed";
            match item_type {
                "command_execution" => {
                    let command = unwrap_shell(text(item, "command").unwrap_or("a command"));
                    let status = match (done, item.get("exit_code").and_then(Value::as_i64)) {
                        (false, _) => String::new(),
                        (true, Some(0)) => " (ok)".to_owned(),
                        (true, Some(code)) => format!(" (exit {code})"),
                        (true, None) => " (done)".to_owned(),
                    };
                    Some(one_line(&format!("$ {command}{status}")))
                }
                "file_change" => {
                    let paths: Vec<String> = item
                        .get("changes")
                        .and_then(Value::as_array)
                        .map(|c| {
                            c.iter()
                                .filter_map(|c| text(c, "path"))
                                .map(|p| short_path(p, workdir))
                                .collect()
                        })
                        .unwrap_or_default();
                    Some(one_line(&format!("changed {}", paths.join(", "))))
                }
                "reasoning" => Some("thinking".to_owned()),
                "agent_message" | "assistant_message" => text(item, "text")
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| one_line(&format!("writing: {t}"))),
                "web_search" => Some("searching the web".to_owned()),
                "mcp_tool_call" => Some(one_line(&format!(
                    "tool {}",
                    text(item, "tool").unwrap_or("call")
                ))),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_tool_uses_name_the_file_or_command() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Let me fix it."},{"type":"tool_use","id":"t","name":"Edit","input":{"file_path":"/w/tree/src/lib.rs","old_string":"a","new_string":"b"}}]}}"#;
        assert_eq!(claude(line, "/w/tree").as_deref(), Some("Edit src/lib.rs"));
        let bash = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"cargo test --quiet\n  -p x"}}]}}"#;
        assert_eq!(
            claude(bash, "/w").as_deref(),
            Some("Bash: cargo test --quiet -p x")
        );
        let grep = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Grep","input":{"pattern":"fn greet"}}]}}"#;
        assert_eq!(claude(grep, "/w").as_deref(), Some("Grep fn greet"));
        let text = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"All checks pass now."}]}}"#;
        assert_eq!(
            claude(text, "/w").as_deref(),
            Some("writing: All checks pass now.")
        );
    }

    #[test]
    fn claude_lines_without_news_say_nothing() {
        assert_eq!(claude("not json", "/w"), None);
        assert_eq!(claude(r#"{"type":"stream_event"}"#, "/w"), None);
        assert_eq!(
            claude(
                r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5"}"#,
                "/w"
            )
            .as_deref(),
            Some("started (claude-sonnet-4-5)")
        );
        assert_eq!(
            claude(r#"{"type":"result","subtype":"success"}"#, "/w").as_deref(),
            Some("finished")
        );
        let ok =
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"fine"}]}}"#;
        assert_eq!(claude(ok, "/w"), None);
    }

    #[test]
    fn gemini_events_name_tools_and_text() {
        let init = r#"{"type":"init","session_id":"s","model":"gemini-3-pro"}"#;
        assert_eq!(
            gemini(init, "/w").as_deref(),
            Some("started (gemini-3-pro)")
        );
        let tool = r#"{"type":"tool_use","tool_name":"write_file","tool_id":"t","parameters":{"file_path":"/w/src/a.py","content":"x"}}"#;
        assert_eq!(gemini(tool, "/w").as_deref(), Some("write_file src/a.py"));
        let shell = r#"{"type":"tool_use","tool_name":"run_shell_command","parameters":{"command":"pytest -q"}}"#;
        assert_eq!(
            gemini(shell, "/w").as_deref(),
            Some("run_shell_command: pytest -q")
        );
        let failed = r#"{"type":"tool_result","tool_id":"t","status":"error"}"#;
        assert_eq!(
            gemini(failed, "/w").as_deref(),
            Some("a tool call failed; carrying on")
        );
        let text = r#"{"type":"message","role":"assistant","content":"Done","delta":true}"#;
        assert_eq!(gemini(text, "/w").as_deref(), Some("writing: Done"));
        let user = r#"{"type":"message","role":"user","content":"the prompt"}"#;
        assert_eq!(gemini(user, "/w"), None);
    }

    #[test]
    fn opencode_events_name_tools_and_text() {
        let tool = r#"{"type":"tool_use","part":{"tool":"edit","state":{"status":"completed","input":{"filePath":"/w/lib.sh"}}}}"#;
        assert_eq!(opencode(tool, "/w").as_deref(), Some("edit lib.sh"));
        let denied =
            r#"{"type":"tool_use","part":{"tool":"write","state":{"status":"error","input":{}}}}"#;
        assert_eq!(
            opencode(denied, "/w").as_deref(),
            Some("a tool call failed; carrying on")
        );
        let text = r#"{"type":"text","part":{"text":"the plan"}}"#;
        assert_eq!(opencode(text, "/w").as_deref(), Some("writing: the plan"));
        assert_eq!(opencode(r#"{"type":"step_finish","part":{}}"#, "/w"), None);
        assert_eq!(opencode("not json", "/w"), None);
    }

    #[test]
    fn codex_events_name_commands_and_files() {
        let started = r#"{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc 'cargo test'","status":"in_progress"}}"#;
        assert_eq!(codex(started, "/w").as_deref(), Some("$ cargo test"));
        let done = r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","exit_code":2}}"#;
        assert_eq!(codex(done, "/w").as_deref(), Some("$ ls (exit 2)"));
        let files = r#"{"type":"item.completed","item":{"type":"file_change","changes":[{"path":"/w/a.rs","kind":"update"},{"path":"b.rs","kind":"add"}]}}"#;
        assert_eq!(codex(files, "/w").as_deref(), Some("changed a.rs, b.rs"));
        assert_eq!(
            codex(r#"{"type":"turn.completed","usage":{}}"#, "/w").as_deref(),
            Some("finished")
        );
        assert_eq!(
            codex(r#"{"type":"item.completed","item":{"type":"todo"}}"#, "/w"),
            None
        );
    }

    #[test]
    fn activities_are_one_short_printable_line() {
        let long = "x".repeat(200);
        let a = one_line(&long);
        assert_eq!(a.chars().count(), MAX_ACTIVITY);
        assert!(a.ends_with('…'));
        assert_eq!(one_line("a\u{1b}[2Jb\n c"), "a [2Jb c");
    }
}
