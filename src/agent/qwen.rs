//! `backend = "qwen"`: Qwen Code (`@qwen-code/qwen-code`) headless,
//! `qwen --output-format stream-json [-m M] --approval-mode …`, prompt on stdin, talking to an
//! OpenAI-compatible API. Its stream is Claude Code's shape (`system` init, `assistant`
//! messages, `user` tool results, a final `result` with the answer and usage) and is read by
//! the same parser — except that Qwen Code reports a failed API call as a *successful* result
//! whose text is `[API Error: 401 …]` (exit 0), which is read here as the error it is. It
//! reports no cost.
//!
//! Read-only roles run in its `default` approval mode (a headless run offers no tool that
//! writes or runs commands); the implementer in `yolo`, inside ralph's sandbox. Every call has
//! a fresh home (`QWEN_HOME`) whose `settings.json` selects the OpenAI-compatible
//! authentication, turns usage statistics, telemetry, updates and the memory extractor (a
//! second model call per run) off, and leaves the retries to ralph. The key comes from
//! `OPENAI_API_KEY` (or `api_key_env`), the address from `base_url` (else `OPENAI_BASE_URL`).

use super::cli::Transcript;
use super::cli::{address_or, api_error_in, AgentCli, CliBackend, CliError, ModelSettings};
use super::Role;
use serde_json::json;
use std::path::Path;

/// Qwen Code, as an [`AgentCli`].
pub struct Qwen;

/// The `qwen` backend.
pub type QwenBackend = CliBackend<Qwen>;

impl AgentCli for Qwen {
    const NAME: &'static str = "qwen";
    const REPORTS_COST: bool = false;
    const FRESH_HOME: bool = true;

    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        let mut args = ["--output-format", "stream-json", "--auth-type", "openai"]
            .map(String::from)
            .to_vec();
        if let Some(m) = &model.model {
            args.extend(["--model".into(), m.clone()]);
        }
        let mode = if role.edits() { "yolo" } else { "default" };
        args.extend(["--approval-mode".into(), mode.into()]);
        args.extend(extra.iter().cloned());
        args
    }

    fn home_files(
        _role: Role,
        model: &ModelSettings,
        _prompt: &str,
    ) -> Vec<(&'static str, String)> {
        let mut settings = json!({
            "security": {"auth": {"selectedType": "openai"}},
            // Its own retries of a 429 last minutes; ralph's timeout and replan decide.
            "model": {"generationConfig": {"maxRetries": 0}},
            "general": {"enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "memory": {"enableManagedAutoMemory": false},
            "tools": {"sandbox": false}
        });
        if let Some(m) = &model.model {
            settings["model"]["name"] = json!(m);
        }
        vec![(".qwen/settings.json", format!("{settings:#}\n"))]
    }

    fn call_env(_role: Role, model: &ModelSettings, home: &Path) -> Vec<(String, String)> {
        let mut env = vec![
            ("HOME".to_owned(), home.to_string_lossy().into_owned()),
            (
                "QWEN_HOME".to_owned(),
                home.join(".qwen").to_string_lossy().into_owned(),
            ),
            ("QWEN_CODE_DISABLE_PRECONNECT".to_owned(), "1".to_owned()),
        ];
        if let Some(key) = model.key() {
            env.push(("OPENAI_API_KEY".into(), key));
        }
        if let Some(url) = &model.base_url {
            env.push(("OPENAI_BASE_URL".into(), url.clone()));
        }
        if let Some(m) = &model.model {
            env.push(("OPENAI_MODEL".into(), m.clone()));
        }
        env
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_stream(stdout)
    }

    fn activity(line: &str, workdir: &str) -> Option<String> {
        crate::progress::activity::claude(line, workdir)
    }

    fn own_env(_home: Option<&Path>) -> Vec<String> {
        ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"]
            .map(String::from)
            .to_vec()
    }

    fn endpoints(_home: Option<&Path>, model: &ModelSettings) -> Vec<String> {
        address_or(model, "OPENAI_BASE_URL", "api.openai.com")
    }
}

/// Parses a transcript as Claude Code's, then reads an answer that is an API error as that
/// error; an error result's own `error.message` (a configuration error) is its message.
pub fn parse_stream(stdout: &str) -> Result<Transcript, CliError> {
    // `-o json` prints the same events as one array.
    let lines: String = match serde_json::from_str::<Vec<serde_json::Value>>(stdout.trim()) {
        Ok(events) => events.iter().map(|e| format!("{e}\n")).collect(),
        Err(_) => stdout.to_owned(),
    };
    match super::claude::parse_stream(&lines) {
        Ok(t) if t.text.trim_start().starts_with("[API Error:") => {
            let (status, message) = api_error_in(&t.text).unwrap_or((None, t.text.clone()));
            Err(CliError::reported(message, status))
        }
        Ok(t) => Ok(t),
        Err(e) if e.reported => Err(error_message(&lines)
            .map_or(e.clone(), |message| CliError::reported(message, e.status))),
        Err(e) => Err(e),
    }
}

/// The `error.message` of the transcript's error result, when it has one.
fn error_message(lines: &str) -> Option<String> {
    lines.lines().rev().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
        (v["type"] == "result")
            .then(|| v.pointer("/error/message")?.as_str().map(str::to_owned))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

    #[test]
    fn a_real_answer_reads_as_claude_codes() {
        let t = parse_stream(&real_transcript("qwen-ok.stream.jsonl")).unwrap();
        assert_eq!(t.text, "FAKE-ANSWER: hello from fake server");
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (11, 7));
        let t = parse_stream(&real_transcript("qwen-tool-yolo.stream.jsonl")).unwrap();
        assert_eq!(t.text, "Done: wrote hello.txt");
        assert_eq!(t.tools_used, ["write_file"]);
    }

    #[test]
    fn an_api_error_in_a_successful_result_is_an_error() {
        let e = parse_stream(&real_transcript("qwen-err401.stream.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(401));
        assert!(
            e.message.starts_with("Incorrect API key provided"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_configuration_error_says_what_the_cli_said() {
        let e = parse_stream(&real_transcript("qwen-nokey.json")).unwrap_err();
        assert!(e.reported);
        assert!(
            e.message.starts_with("No auth type is selected."),
            "{}",
            e.message
        );
    }

    #[test]
    fn roles_get_their_approval_mode_and_the_home_its_settings() {
        let m = ModelSettings {
            model: Some("qwen3-coder-plus".into()),
            base_url: Some("http://127.0.0.1:8/v1".into()),
            key_var: None,
        };
        let review = Qwen::args(Role::Review, &m, &[]);
        assert!(review
            .windows(2)
            .any(|w| w == ["--approval-mode", "default"]));
        let implement = Qwen::args(Role::Implement, &m, &[]);
        assert!(implement
            .windows(2)
            .any(|w| w == ["--approval-mode", "yolo"]));
        let files = Qwen::home_files(Role::Propose, &m, "");
        let settings: serde_json::Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(settings["model"]["name"], "qwen3-coder-plus");
        assert_eq!(settings["memory"]["enableManagedAutoMemory"], false);
        let env = Qwen::call_env(Role::Propose, &m, Path::new("/h"));
        assert!(env.contains(&("QWEN_HOME".into(), "/h/.qwen".into())));
        assert!(env.contains(&("OPENAI_BASE_URL".into(), "http://127.0.0.1:8/v1".into())));
        assert_eq!(Qwen::endpoints(None, &m), ["127.0.0.1:8"]);
    }
}
