//! `backend = "gemini"`: Gemini CLI (`@google/gemini-cli`) headless,
//! `gemini --output-format stream-json --skip-trust [-m M] --approval-mode …`, prompt on stdin.
//! Its stdout is JSONL: `init` (session id, model), `message` deltas (the assistant's text),
//! `tool_use` / `tool_result`, and a final `result` with its status, token counts and — on
//! failure — the API's error (`[API Error: {"error":{"code":429,…}}]`). It reports no cost.
//!
//! Read-only roles run in its `default` approval mode, where a headless run offers the model
//! no tool that writes or runs commands; the implementer runs in `yolo` (edits and commands,
//! inside ralph's sandbox). Every call has a fresh home (`GEMINI_CLI_HOME`) whose
//! `settings.json` selects key authentication, turns usage statistics, telemetry and updates
//! off and keeps its retries short; the key comes from `GEMINI_API_KEY` (or `api_key_env`), the
//! model's address from `base_url` (else `GOOGLE_GEMINI_BASE_URL`, else Google's API).

use super::cli::{
    address_or, api_error_in, jsonl_events, AgentCli, CliBackend, CliError, ModelSettings,
    Transcript,
};
use super::{Role, Usage};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// Gemini CLI, as an [`AgentCli`].
pub struct Gemini;

/// The `gemini` backend.
pub type GeminiBackend = CliBackend<Gemini>;

/// Google's Gemini API, where the CLI calls its model unless told otherwise.
const GOOGLE_API: &str = "generativelanguage.googleapis.com";

impl AgentCli for Gemini {
    const NAME: &'static str = "gemini";
    const REPORTS_COST: bool = false;
    const FRESH_HOME: bool = true;

    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        let mut args = ["--output-format", "stream-json", "--skip-trust"]
            .map(String::from)
            .to_vec();
        if let Some(m) = &model.model {
            // Named, the model takes every request (unnamed, a router model is asked first).
            args.extend(["--model".into(), m.clone()]);
        }
        let mode = if role.edits() { "yolo" } else { "default" };
        args.extend(["--approval-mode".into(), mode.into()]);
        args.extend(extra.iter().cloned());
        args
    }

    fn home_files(
        _role: Role,
        _model: &ModelSettings,
        _prompt: &str,
    ) -> Vec<(&'static str, String)> {
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {
                "enableAutoUpdate": false,
                "enableAutoUpdateNotification": false,
                // A 429 is otherwise retried ten times over minutes.
                "maxAttempts": 3
            },
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "tools": {"sandbox": false}
        });
        vec![(".gemini/settings.json", format!("{settings:#}\n"))]
    }

    fn call_env(_role: Role, model: &ModelSettings, home: &Path) -> Vec<(String, String)> {
        let home = home.to_string_lossy().into_owned();
        let mut env = vec![
            ("HOME".to_owned(), home.clone()),
            ("GEMINI_CLI_HOME".to_owned(), home),
        ];
        if let Some(key) = model.key() {
            env.push(("GEMINI_API_KEY".into(), key));
        }
        if let Some(url) = &model.base_url {
            env.push(("GOOGLE_GEMINI_BASE_URL".into(), url.clone()));
        }
        env
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_stream(stdout)
    }

    fn activity(line: &str, workdir: &str) -> Option<String> {
        crate::progress::activity::gemini(line, workdir)
    }

    fn own_env(_home: Option<&Path>) -> Vec<String> {
        ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"]
            .map(String::from)
            .to_vec()
    }

    fn endpoints(_home: Option<&Path>, model: &ModelSettings) -> Vec<String> {
        address_or(model, "GOOGLE_GEMINI_BASE_URL", GOOGLE_API)
    }

    /// It exits with the API error's status modulo 256 (a 429 is 173); its own failures use
    /// small codes (41 for authentication settings, 42 for input, 52 for configuration).
    fn exit_status(code: i32) -> Option<u16> {
        [400, 401, 403, 404, 429, 500, 503]
            .into_iter()
            .find(|s| i32::from(*s) % 256 == code)
    }
}

/// One line of `gemini --output-format stream-json`: the events ralph reads, typed.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "init")]
    Init { session_id: Option<String> },
    #[serde(rename = "message")]
    Message {
        role: Option<String>,
        #[serde(default)]
        content: String,
    },
    #[serde(rename = "tool_use")]
    ToolUse { tool_name: Option<String> },
    #[serde(rename = "tool_result")]
    ToolResult,
    #[serde(rename = "result")]
    Result {
        status: Option<String>,
        error: Option<ErrorBody>,
        #[serde(default)]
        stats: Stats,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
}

#[derive(Deserialize, Default)]
struct Stats {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cached: Option<u64>,
}

/// Parses a transcript: the answer is the assistant's text after its last tool call (the
/// final turn), else all of it; a `result` with status `error` is the CLI's error.
pub fn parse_stream(stdout: &str) -> Result<Transcript, CliError> {
    let (events, skipped) = jsonl_events::<Event>(stdout);
    let mut t = Transcript {
        skipped_lines: skipped,
        ..Transcript::default()
    };
    let (mut all, mut last_turn) = (String::new(), String::new());
    let mut finished = false;
    for event in events {
        match event {
            Event::Init { session_id } => t.session_id = session_id,
            Event::Message { role, content } if role.as_deref() == Some("assistant") => {
                all.push_str(&content);
                last_turn.push_str(&content);
            }
            Event::ToolUse { tool_name } => {
                t.tools_used
                    .push(tool_name.unwrap_or_else(|| "tool".into()));
                last_turn.clear();
            }
            Event::ToolResult => last_turn.clear(),
            Event::Result {
                status,
                error,
                stats,
            } => {
                if status.as_deref() == Some("error") {
                    let message = error.and_then(|e| e.message).unwrap_or_default();
                    return Err(match api_error_in(&message) {
                        Some((status, inner)) => CliError::reported(inner, status),
                        None if message.is_empty() => {
                            CliError::reported("the run ended in an error", None)
                        }
                        None => CliError::reported(message, None),
                    });
                }
                t.usage = Usage {
                    input_tokens: stats.input_tokens.unwrap_or(0),
                    cached_input_tokens: stats.cached.unwrap_or(0),
                    output_tokens: stats.output_tokens.unwrap_or(0),
                    cost_usd: None,
                };
                finished = true;
            }
            Event::Message { .. } | Event::Other => {}
        }
    }
    t.text = if last_turn.trim().is_empty() {
        all
    } else {
        last_turn
    };
    if !finished {
        return Err(CliError::missing("the stream ended without a result"));
    }
    if t.text.trim().is_empty() {
        return Err(CliError::missing("the model gave no answer"));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

    #[test]
    fn a_real_answer_reads_with_its_tokens_and_session() {
        let t = parse_stream(&real_transcript("gemini-ok.stream.jsonl")).unwrap();
        assert_eq!(t.text, "FAKE-ANSWER: hello from fake server");
        assert_eq!(
            t.session_id.as_deref(),
            Some("ad13766f-51e7-4022-a4d6-b3e005434130")
        );
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (11, 7));
        assert_eq!(t.usage.cost_usd, None);
    }

    #[test]
    fn the_answer_is_the_text_after_the_last_tool() {
        let t = parse_stream(&real_transcript("gemini-tool-yolo.stream.jsonl")).unwrap();
        assert_eq!(t.text, "Done: wrote hello.txt");
        assert_eq!(t.tools_used, ["write_file"]);
        assert_eq!(t.usage.input_tokens, 22);
    }

    #[test]
    fn an_api_error_is_reported_with_its_status() {
        let e = parse_stream(&real_transcript("gemini-err401.stream.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(401));
        assert!(e.reported);
        assert!(e.message.starts_with("API key not valid."), "{}", e.message);
        let plain =
            r#"{"type":"result","status":"error","error":{"type":"x","message":"disk full"}}"#;
        assert_eq!(
            parse_stream(plain).unwrap_err(),
            CliError::reported("disk full", None)
        );
    }

    #[test]
    fn its_exit_code_names_the_status() {
        assert_eq!(Gemini::exit_status(173), Some(429));
        assert_eq!(Gemini::exit_status(145), Some(401));
        assert_eq!(Gemini::exit_status(1), None);
        assert_eq!(Gemini::exit_status(41), None);
    }

    #[test]
    fn a_cut_stream_is_missing_its_result() {
        let cut = r#"{"type":"message","role":"assistant","content":"half"}"#;
        let e = parse_stream(cut).unwrap_err();
        assert!(!e.reported, "the exit code and stderr say more");
    }

    #[test]
    fn roles_get_their_approval_mode_and_homes_their_settings() {
        let m = ModelSettings {
            model: Some("gemini-3-pro".into()),
            ..ModelSettings::default()
        };
        let propose = Gemini::args(Role::Propose, &m, &[]);
        assert!(propose
            .windows(2)
            .any(|w| w == ["--approval-mode", "default"]));
        assert!(propose.windows(2).any(|w| w == ["--model", "gemini-3-pro"]));
        let implement = Gemini::args(Role::Implement, &m, &["--debug".into()]);
        assert!(implement
            .windows(2)
            .any(|w| w == ["--approval-mode", "yolo"]));
        assert_eq!(implement.last().map(String::as_str), Some("--debug"));
        let files = Gemini::home_files(Role::Propose, &m, "");
        let settings: serde_json::Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(settings["privacy"]["usageStatisticsEnabled"], false);
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
    }

    #[test]
    fn the_key_and_address_reach_it_under_its_own_names() {
        std::env::set_var("RALPH_TEST_GEMINI_KEY_1", "k-123");
        let m = ModelSettings {
            model: None,
            base_url: Some("http://127.0.0.1:9/".into()),
            key_var: Some("RALPH_TEST_GEMINI_KEY_1".into()),
        };
        let env = Gemini::call_env(Role::Judge, &m, Path::new("/tmp/h"));
        assert!(env.contains(&("GEMINI_API_KEY".into(), "k-123".into())));
        assert!(env.contains(&("GEMINI_CLI_HOME".into(), "/tmp/h".into())));
        assert!(env.contains(&(
            "GOOGLE_GEMINI_BASE_URL".into(),
            "http://127.0.0.1:9/".into()
        )));
        assert_eq!(Gemini::endpoints(None, &m), ["127.0.0.1:9"]);
    }
}
