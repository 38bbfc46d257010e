//! `backend = "opencode"`: OpenCode (`opencode-ai`) headless,
//! `opencode run --format json --pure --title ralph [-m provider/model]`, prompt on stdin. Its
//! stdout is JSONL, one event per line: `step_start`, `text` (a step's text), `tool_use` (a
//! tool and its state), `step_finish` (the step's tokens and cost), or `error` (the API's
//! error with its status; exit 1). The answer is the text of the last step.
//!
//! Every call has a fresh home (the four XDG folders and `HOME`) whose `opencode.json` holds
//! the permissions of the role — read-only roles may not edit, run commands or fetch; the
//! implementer edits and runs commands inside ralph's sandbox — and, with `base_url`, an
//! OpenAI-compatible provider `ralph` for the model, its key read from `api_key_env` by
//! OpenCode itself (`{env:…}`), never written down. Without `base_url`, `model` names the
//! provider as OpenCode users write it (`anthropic/claude-sonnet-4-5`) and the provider's own
//! key variable is passed. Its model catalogue download, update check, default plugins, LSP
//! downloads, formatters and the Claude Code files it would read are off.

use super::cli::{jsonl_events, AgentCli, CliBackend, CliError, ModelSettings, Transcript};
use super::Role;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// OpenCode, as an [`AgentCli`].
pub struct OpenCode;

/// The `opencode` backend.
pub type OpenCodeBackend = CliBackend<OpenCode>;

/// The provider ralph defines for a `base_url`.
const OWN_PROVIDER: &str = "ralph";

/// The key variables of the providers OpenCode users name most.
const PROVIDER_KEYS: [&str; 9] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "XAI_API_KEY",
];

/// The model as OpenCode names it: `ralph/<model>` for a `base_url`, else as configured.
fn model_id(model: &ModelSettings) -> Option<String> {
    match (&model.base_url, &model.model) {
        (Some(_), Some(m)) => Some(format!("{OWN_PROVIDER}/{m}")),
        (_, m) => m.clone(),
    }
}

impl AgentCli for OpenCode {
    const NAME: &'static str = "opencode";
    const REPORTS_COST: bool = false;
    const FRESH_HOME: bool = true;

    fn args(_role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        // A title of its own saves the model call that would write one.
        let mut args = ["run", "--format", "json", "--pure", "--title", "ralph"]
            .map(String::from)
            .to_vec();
        if let Some(m) = model_id(model) {
            args.extend(["--model".into(), m]);
        }
        args.extend(extra.iter().cloned());
        args
    }

    fn home_files(role: Role, model: &ModelSettings, _prompt: &str) -> Vec<(&'static str, String)> {
        let permission = if role.edits() {
            json!({"edit": "allow", "bash": "allow", "webfetch": "deny"})
        } else {
            json!({"edit": "deny", "bash": "deny", "webfetch": "deny"})
        };
        let mut config = json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "formatter": false,
            "lsp": false,
            "permission": permission,
        });
        if let Some(id) = model_id(model) {
            config["model"] = json!(id);
            config["small_model"] = json!(id);
        }
        if let (Some(url), Some(m)) = (&model.base_url, &model.model) {
            let key = model.key_var.as_deref().unwrap_or("OPENAI_API_KEY");
            config["provider"] = json!({OWN_PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "ralph's model",
                "options": {"baseURL": url, "apiKey": format!("{{env:{key}}}")},
                "models": {m.as_str(): {"name": m}}
            }});
        }
        vec![(".config/opencode/opencode.json", format!("{config:#}\n"))]
    }

    fn call_env(_role: Role, _model: &ModelSettings, home: &Path) -> Vec<(String, String)> {
        let at = |rel: &str| home.join(rel).to_string_lossy().into_owned();
        let mut env: Vec<(String, String)> = vec![
            ("HOME".into(), at("")),
            ("XDG_CONFIG_HOME".into(), at(".config")),
            ("XDG_DATA_HOME".into(), at(".local/share")),
            ("XDG_STATE_HOME".into(), at(".local/state")),
            ("XDG_CACHE_HOME".into(), at(".cache")),
            ("npm_config_cache".into(), at(".npm")),
            // It installs its plugin package into the config folder on every start: never
            // from the network here (it runs without it).
            ("npm_config_offline".into(), "true".into()),
        ];
        for var in [
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_AUTOUPDATE",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS",
            "OPENCODE_DISABLE_LSP_DOWNLOAD",
            "OPENCODE_DISABLE_CLAUDE_CODE",
            "OPENCODE_DISABLE_SHARE",
        ] {
            env.push((var.into(), "1".into()));
        }
        env
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_stream(stdout)
    }

    fn activity(line: &str, workdir: &str) -> Option<String> {
        crate::progress::activity::opencode(line, workdir)
    }

    fn own_env(_home: Option<&Path>) -> Vec<String> {
        PROVIDER_KEYS.map(String::from).to_vec()
    }

    fn endpoints(_home: Option<&Path>, model: &ModelSettings) -> Vec<String> {
        super::cli::model_hosts(model)
    }
}

/// One line of `opencode run --format json`.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "text")]
    Text { part: TextPart },
    #[serde(rename = "tool_use")]
    ToolUse { part: ToolPart },
    #[serde(rename = "step_start")]
    StepStart,
    #[serde(rename = "step_finish")]
    StepFinish { part: FinishPart },
    #[serde(rename = "error")]
    Error { error: Option<ErrorEvent> },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct TextPart {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct ToolPart {
    tool: Option<String>,
}

#[derive(Deserialize)]
struct FinishPart {
    #[serde(default)]
    tokens: Tokens,
    cost: Option<f64>,
}

#[derive(Deserialize, Default)]
struct Tokens {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    output: u64,
    #[serde(default)]
    reasoning: u64,
    #[serde(default)]
    cache: Cache,
}

#[derive(Deserialize, Default)]
struct Cache {
    #[serde(default)]
    read: u64,
}

#[derive(Deserialize)]
struct ErrorEvent {
    name: Option<String>,
    data: Option<ErrorData>,
}

#[derive(Deserialize)]
struct ErrorData {
    message: Option<String>,
    #[serde(rename = "statusCode")]
    status_code: Option<u16>,
}

/// Parses a transcript: the text of the last step is the answer, tokens and cost are summed
/// over the steps (a cost of 0 is OpenCode not knowing the price), an `error` event is the
/// error.
pub fn parse_stream(stdout: &str) -> Result<Transcript, CliError> {
    let (events, skipped) = jsonl_events::<Event>(stdout);
    let mut t = Transcript {
        skipped_lines: skipped,
        ..Transcript::default()
    };
    let mut step_text = String::new();
    let mut answer = String::new();
    let mut cost = 0.0;
    for event in events {
        match event {
            Event::StepStart => step_text.clear(),
            Event::Text { part } => {
                if !step_text.is_empty() {
                    step_text.push('\n');
                }
                step_text.push_str(&part.text);
            }
            Event::ToolUse { part } => t
                .tools_used
                .push(part.tool.unwrap_or_else(|| "tool".into())),
            Event::StepFinish { part } => {
                let k = part.tokens;
                t.usage.input_tokens += k.input + k.cache.read;
                t.usage.cached_input_tokens += k.cache.read;
                t.usage.output_tokens += k.output + k.reasoning;
                cost += part.cost.unwrap_or(0.0);
                if !step_text.trim().is_empty() {
                    answer = std::mem::take(&mut step_text);
                }
            }
            Event::Error { error } => {
                let (name, data) = error.map(|e| (e.name, e.data)).unwrap_or_default();
                let (message, status) =
                    data.map(|d| (d.message, d.status_code)).unwrap_or_default();
                let message = message
                    .or(name)
                    .unwrap_or_else(|| "the run ended in an error".into());
                return Err(CliError::reported(message, status));
            }
            Event::Other => {}
        }
    }
    if answer.trim().is_empty() {
        // A stream cut inside its last step still has that step's text.
        answer = step_text;
    }
    if answer.trim().is_empty() {
        return Err(CliError::missing("the model gave no answer"));
    }
    t.text = answer;
    t.usage.cost_usd = (cost > 0.0).then_some(cost);
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

    #[test]
    fn a_real_answer_reads_with_its_tokens() {
        let t = parse_stream(&real_transcript("opencode-ok.jsonl")).unwrap();
        assert_eq!(t.text, "FAKE-ANSWER: hello from fake server");
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (11, 7));
        assert_eq!(t.usage.cost_usd, None, "a cost of 0 is an unknown price");
    }

    #[test]
    fn the_answer_is_the_last_steps_text_and_tools_are_listed() {
        let t = parse_stream(&real_transcript("opencode-tool.jsonl")).unwrap();
        assert_eq!(t.tools_used, ["write"]);
        assert!(!t.text.is_empty());
        let two = concat!(
            r#"{"type":"step_start","part":{}}"#,
            "\n",
            r#"{"type":"text","part":{"text":"let me look"}}"#,
            "\n",
            r#"{"type":"step_finish","part":{"tokens":{"input":5,"output":1,"cache":{"read":2}},"cost":0.25}}"#,
            "\n",
            r#"{"type":"step_start","part":{}}"#,
            "\n",
            r#"{"type":"text","part":{"text":"the answer"}}"#,
            "\n",
            r#"{"type":"step_finish","part":{"tokens":{"input":7,"output":3},"cost":0.5}}"#,
        );
        let t = parse_stream(two).unwrap();
        assert_eq!(t.text, "the answer");
        assert_eq!(
            (
                t.usage.input_tokens,
                t.usage.cached_input_tokens,
                t.usage.output_tokens
            ),
            (14, 2, 4)
        );
        assert_eq!(t.usage.cost_usd, Some(0.75));
    }

    #[test]
    fn an_error_event_is_reported_with_its_status() {
        let e = parse_stream(&real_transcript("opencode-err429.jsonl")).unwrap_err();
        assert_eq!(
            e,
            CliError::reported("Rate limit reached for fake-model (fake 429)", Some(429))
        );
        let e = parse_stream(&real_transcript("opencode-err401.jsonl")).unwrap_err();
        assert_eq!(e.status, Some(401));
    }

    #[test]
    fn a_base_url_is_a_provider_of_its_own_and_roles_their_permissions() {
        let m = ModelSettings {
            model: Some("qwen3-coder".into()),
            base_url: Some("http://127.0.0.1:7/v1".into()),
            key_var: Some("LOCAL_KEY".into()),
        };
        let args = OpenCode::args(Role::Propose, &m, &[]);
        assert!(args
            .windows(2)
            .any(|w| w == ["--model", "ralph/qwen3-coder"]));
        let read: serde_json::Value =
            serde_json::from_str(&OpenCode::home_files(Role::Judge, &m, "")[0].1).unwrap();
        assert_eq!(read["permission"]["edit"], "deny");
        assert_eq!(read["permission"]["bash"], "deny");
        assert_eq!(
            read["provider"]["ralph"]["options"]["apiKey"], "{env:LOCAL_KEY}",
            "the key is read by OpenCode, never written"
        );
        let write: serde_json::Value =
            serde_json::from_str(&OpenCode::home_files(Role::Implement, &m, "")[0].1).unwrap();
        assert_eq!(write["permission"]["edit"], "allow");
        assert_eq!(OpenCode::endpoints(None, &m), ["127.0.0.1:7"]);
        let hosted = ModelSettings {
            model: Some("anthropic/claude-sonnet-4-5".into()),
            ..ModelSettings::default()
        };
        assert!(OpenCode::args(Role::Propose, &hosted, &[])
            .windows(2)
            .any(|w| w == ["--model", "anthropic/claude-sonnet-4-5"]));
        assert_eq!(OpenCode::endpoints(None, &hosted), ["api.anthropic.com"]);
    }
}
