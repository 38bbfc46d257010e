//! `backend = "aider"`: Aider (`aider-chat`, from PyPI) with one message and no terminal,
//! `aider --model M --message-file … --yes-always --no-git …`. Aider has no structured output:
//! its stdout is a header (version, model, repository), the model's reply, the edits it applied
//! (`Applied edit to lib.sh`) and a line of tokens and cost
//! (`Tokens: 1.2k sent, 310 received. Cost: $0.0042 message, …`). A failed API call is not an
//! exit code (Aider exits 0) but a `litellm.RateLimitError: …` line, wrapped at 80 columns,
//! possibly between retries that end in a reply.
//!
//! Read-only roles ask (`--chat-mode ask`, `--dry-run`): Aider edits nothing. The implementer
//! edits the files the model names (whole files or diffs, as Aider chooses for the model).
//! Aider runs no command it suggests, commits nothing (ralph does), adds nothing to
//! `.gitignore`, scrapes no URL and checks for no update. Every call has a fresh home: its
//! history files (which Aider would otherwise write into the checkout) and `~/.aider` go there,
//! and the prompt is a file in it; its output is not wrapped (`COLUMNS`), and the price list it
//! would download on every start is litellm's own. The key is passed under the variable the model's vendor
//! reads (`OPENAI_API_KEY` for a `base_url`, which Aider reaches as an OpenAI-compatible API
//! with the model `openai/<model>`).

use super::cli::{
    model_family, model_hosts, AgentCli, CliBackend, CliError, ModelSettings, Transcript,
};
use super::Role;
use std::path::Path;

/// Aider, as an [`AgentCli`].
pub struct Aider;

/// The `aider` backend.
pub type AiderBackend = CliBackend<Aider>;

/// The prompt, in the call's home.
const PROMPT_FILE: &str = "prompt.md";
/// What ralph tells Aider of the model, in the call's home.
const METADATA_FILE: &str = "model-metadata.json";

/// The key variable of each vendor Aider reaches, by the family of the model's name.
const VENDOR_KEYS: [(&[&str], &str); 6] = [
    (
        &["anthropic", "claude", "sonnet", "opus", "haiku"],
        "ANTHROPIC_API_KEY",
    ),
    (&["gemini", "google"], "GEMINI_API_KEY"),
    (&["openrouter"], "OPENROUTER_API_KEY"),
    (&["deepseek"], "DEEPSEEK_API_KEY"),
    (&["groq"], "GROQ_API_KEY"),
    (&["mistral", "codestral"], "MISTRAL_API_KEY"),
];

/// The model as Aider names it: `openai/<model>` for a `base_url` (unless it names its
/// provider), else as configured.
fn model_id(model: &ModelSettings) -> Option<String> {
    match (&model.base_url, &model.model) {
        (Some(_), Some(m)) if !m.contains('/') => Some(format!("openai/{m}")),
        (_, m) => m.clone(),
    }
}

/// The variable the model's vendor reads its key from.
fn key_name(model: &ModelSettings) -> &'static str {
    if model.base_url.is_some() {
        return "OPENAI_API_KEY";
    }
    let family = model_family(model).unwrap_or_default();
    VENDOR_KEYS
        .iter()
        .find(|(families, _)| families.contains(&family.as_str()))
        .map_or("OPENAI_API_KEY", |(_, key)| key)
}

impl AgentCli for Aider {
    const NAME: &'static str = "aider";
    const REPORTS_COST: bool = false;
    const FRESH_HOME: bool = true;

    fn args(role: Role, model: &ModelSettings, extra: &[String]) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        if let Some(m) = model_id(model) {
            // Without a model Aider starts a browser login and waits for it.
            args.extend(["--model".into(), m]);
        }
        args.extend(
            [
                "--yes-always",
                "--no-git",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-suggest-shell-commands",
                "--no-detect-urls",
                "--no-auto-lint",
                "--no-auto-test",
                "--analytics-disable",
                "--no-check-update",
                "--no-show-release-notes",
                "--no-show-model-warnings",
                "--no-pretty",
                "--no-fancy-input",
                "--no-stream",
                "--map-tokens",
                "0",
            ]
            .map(String::from),
        );
        if !role.edits() {
            args.extend(["--chat-mode", "ask", "--dry-run"].map(String::from));
        }
        args.extend(extra.iter().cloned());
        args
    }

    fn home_files(_role: Role, model: &ModelSettings, prompt: &str) -> Vec<(&'static str, String)> {
        // Aider fetches litellm's price list on every start unless its cache has one, or the
        // model has an entry of its own: ralph's entries stand in for both, and litellm's
        // shipped list (which Aider asks first) answers for the models it knows.
        let mut metadata = serde_json::Map::new();
        if let Some(id) = model_id(model) {
            metadata.insert(id, serde_json::json!({"mode": "chat"}));
        }
        vec![
            (PROMPT_FILE, prompt.to_owned()),
            (
                ".aider/caches/model_prices_and_context_window.json",
                "{\"ralph\": {}}\n".to_owned(),
            ),
            (
                METADATA_FILE,
                format!("{}\n", serde_json::Value::Object(metadata)),
            ),
        ]
    }

    fn call_env(_role: Role, model: &ModelSettings, home: &Path) -> Vec<(String, String)> {
        let at = |rel: &str| home.join(rel).to_string_lossy().into_owned();
        let mut env: Vec<(String, String)> = vec![
            ("HOME".into(), at("")),
            ("AIDER_MESSAGE_FILE".into(), at(PROMPT_FILE)),
            ("AIDER_CHAT_HISTORY_FILE".into(), at("chat.history.md")),
            ("AIDER_INPUT_HISTORY_FILE".into(), at("input.history")),
            ("AIDER_MODEL_METADATA_FILE".into(), at(METADATA_FILE)),
            // litellm's price list as shipped, not fetched on every start.
            ("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into()),
            // Its output is wrapped at the terminal's width, 80 without one: JSON strings
            // would break.
            ("COLUMNS".into(), "100000".into()),
        ];
        if let Some(key) = model.key() {
            env.push((key_name(model).into(), key));
        }
        if let Some(url) = &model.base_url {
            env.push(("OPENAI_API_BASE".into(), url.clone()));
        }
        env
    }

    fn parse(stdout: &str) -> Result<Transcript, CliError> {
        parse_output(stdout)
    }

    fn activity(line: &str, _workdir: &str) -> Option<String> {
        let line = line.trim();
        if let Some(file) = line.strip_prefix("Applied edit to ") {
            return Some(crate::progress::activity::one_line(&format!(
                "edited {file}"
            )));
        }
        if line.starts_with("Tokens: ") {
            return Some("finished".into());
        }
        line.starts_with("Retrying in ")
            .then(|| "retrying the model API".to_owned())
    }

    fn own_env(_home: Option<&Path>) -> Vec<String> {
        let mut names: Vec<String> = VENDOR_KEYS.iter().map(|(_, k)| (*k).to_owned()).collect();
        names.extend(["OPENAI_API_KEY", "OPENAI_API_BASE"].map(String::from));
        names
    }

    fn endpoints(_home: Option<&Path>, model: &ModelSettings) -> Vec<String> {
        model_hosts(model)
    }
}

/// Lines of Aider's own before the model's reply.
const HEADER: [&str; 12] = [
    "Aider v",
    "Model:",
    "Main model:",
    "Weak model:",
    "Editor model:",
    "Git repo:",
    "Repo-map:",
    "Analytics have been",
    "Update git ",
    "Warning:",
    "Added ",
    "Note:",
];

/// The HTTP status of a litellm error class.
fn status_of(class: &str) -> Option<u16> {
    Some(match class {
        "BadRequestError" | "ContextWindowExceededError" | "UnsupportedParamsError" => 400,
        "AuthenticationError" => 401,
        "PermissionDeniedError" => 403,
        "NotFoundError" => 404,
        "Timeout" => 408,
        "RateLimitError" => 429,
        "InternalServerError" | "APIError" => 500,
        "ServiceUnavailableError" => 503,
        _ => return None,
    })
}

/// A count as Aider prints it: `593`, `1.2k`, `12k`, `1.1M`.
fn count(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1e3),
        'M' => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    let n: f64 = number.parse().ok()?;
    Some((n * scale).round() as u64)
}

/// The tokens and cost of a `Tokens: … sent, … received. Cost: $X message, …` line.
fn tokens_line(line: &str) -> Option<(u64, u64, u64, Option<f64>)> {
    let rest = line.strip_prefix("Tokens: ")?;
    let (tokens, cost) = rest.split_once(". Cost: $").unwrap_or((rest, ""));
    let (mut sent, mut received, mut cached) = (0, 0, 0);
    for part in tokens.trim_end_matches('.').split(", ") {
        let (n, what) = part.split_once(' ')?;
        match what {
            "sent" => sent = count(n)?,
            "received" => received = count(n)?,
            w if w.starts_with("cache hit") => cached = count(n)?,
            _ => {}
        }
    }
    let cost = cost
        .split_whitespace()
        .next()
        .and_then(|c| c.parse::<f64>().ok())
        .filter(|c| *c > 0.0);
    Some((sent + cached, cached, received, cost))
}

/// Reads Aider's output: the reply between its header and its last tokens line, the edits it
/// applied, and — when no reply came — the last litellm error, with its status.
pub fn parse_output(stdout: &str) -> Result<Transcript, CliError> {
    let lines: Vec<&str> = stdout.lines().collect();
    let mut t = Transcript::default();
    let start = lines
        .iter()
        .position(|l| {
            let l = l.trim();
            !l.is_empty() && !HEADER.iter().any(|h| l.starts_with(h))
        })
        .unwrap_or(lines.len());
    let last_tokens = lines.iter().rposition(|l| l.starts_with("Tokens: "));
    for l in &lines {
        if let Some(file) = l.trim().strip_prefix("Applied edit to ") {
            t.tools_used.push(format!("edit {file}"));
        }
        if l.starts_with("Retrying in ") {
            t.warnings
                .push(format!("the model API failed; Aider retried: {}", l.trim()));
        }
    }
    let Some(end) = last_tokens else {
        return Err(last_error(&lines)
            .unwrap_or_else(|| CliError::missing("Aider printed no reply (no `Tokens:` line)")));
    };
    // The reply of the last exchange: after its errors and retries, when there were some.
    let from = lines[..end]
        .iter()
        .rposition(|l| l.starts_with("Retrying in ") || l.starts_with("Tokens: "))
        .map_or(start, |i| i + 1)
        .max(start);
    for l in &lines[..end] {
        if let Some((input, cached, output, cost)) = tokens_line(l) {
            t.usage.input_tokens += input;
            t.usage.cached_input_tokens += cached;
            t.usage.output_tokens += output;
            if let Some(c) = cost {
                *t.usage.cost_usd.get_or_insert(0.0) += c;
            }
        }
    }
    if let Some((input, cached, output, cost)) = tokens_line(lines[end]) {
        t.usage.input_tokens += input;
        t.usage.cached_input_tokens += cached;
        t.usage.output_tokens += output;
        if let Some(c) = cost {
            *t.usage.cost_usd.get_or_insert(0.0) += c;
        }
    }
    t.text = lines[from..end].join("\n").trim().to_owned();
    if t.text.is_empty() {
        return Err(CliError::missing("the model gave no answer"));
    }
    Ok(t)
}

/// The last `litellm.<Class>: …` error, its message joined from the wrapped lines after it.
fn last_error(lines: &[&str]) -> Option<CliError> {
    let at = lines.iter().rposition(|l| l.starts_with("litellm."))?;
    let first = lines[at].trim_start_matches("litellm.");
    let (class, _) = first.split_once(':')?;
    let mut message = first.trim_end().to_owned();
    for l in &lines[at + 1..] {
        let l = l.trim();
        if l.is_empty() || l.starts_with("The API provider") || l.starts_with("Retrying") {
            break;
        }
        message.push(' ');
        message.push_str(l);
    }
    // `AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key…`
    let message = message
        .rsplit_once(" - ")
        .map_or(message.as_str(), |(_, m)| m)
        .trim()
        .to_owned();
    Some(CliError::reported(message, status_of(class)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::cli::real_transcript;

    #[test]
    fn a_real_reply_reads_without_the_header_with_tokens_and_cost() {
        let t = parse_output(&real_transcript("aider-ok.txt")).unwrap();
        assert_eq!(t.text, "FAKE-ANSWER: hello from fake server");
        assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (593, 10));
        assert_eq!(t.usage.cost_usd, Some(0.00061));
    }

    #[test]
    fn applied_edits_are_the_work() {
        let t = parse_output(&real_transcript("aider-edit-whole.txt")).unwrap();
        assert_eq!(t.tools_used, ["edit hello.txt"]);
        assert!(t.text.starts_with("hello.txt"), "{}", t.text);
    }

    #[test]
    fn an_error_with_exit_0_is_the_error_it_names() {
        let e = parse_output(&real_transcript("aider-err401.txt")).unwrap_err();
        assert_eq!(
            e,
            CliError::reported(
                "Incorrect API key provided: fake****. (fake 401)",
                Some(401)
            )
        );
        let e = parse_output(&real_transcript("aider-err429.txt")).unwrap_err();
        assert_eq!(e.status, Some(429));
        assert_eq!(e.message, "Rate limit reached for fake-model (fake 429)");
        let e = parse_output(&real_transcript("aider-err404.txt")).unwrap_err();
        assert_eq!(e.status, Some(404));
    }

    #[test]
    fn a_reply_after_retries_is_the_reply() {
        let out = "Aider v0.86.2\nModel: openai/m with whole edit format\n\nlitellm.RateLimitError: RateLimitError: OpenAIException - slow\ndown\nThe API provider has rate limited you.\nRetrying in 0.2 seconds...\n{\"ok\": true}\nTokens: 1.2k sent, 12 cache hit, 310 received. Cost: $0.0042 message, $0.0042 session.\n";
        let t = parse_output(out).unwrap();
        assert_eq!(t.text, "{\"ok\": true}");
        assert_eq!(
            (
                t.usage.input_tokens,
                t.usage.cached_input_tokens,
                t.usage.output_tokens
            ),
            (1212, 12, 310)
        );
        assert_eq!(t.warnings.len(), 1);
    }

    #[test]
    fn its_lines_say_what_it_does() {
        assert_eq!(
            Aider::activity("Applied edit to src/lib.rs", "/w").as_deref(),
            Some("edited src/lib.rs")
        );
        assert_eq!(
            Aider::activity("Retrying in 0.5 seconds...", "/w").as_deref(),
            Some("retrying the model API")
        );
        assert_eq!(Aider::activity("Aider v0.86.2", "/w"), None);
    }

    #[test]
    fn read_only_roles_ask_and_keys_go_to_the_vendors_variable() {
        let local = ModelSettings {
            model: Some("qwen3-coder".into()),
            base_url: Some("http://127.0.0.1:6/v1".into()),
            key_var: None,
        };
        let ask = Aider::args(Role::Propose, &local, &[]);
        assert!(ask
            .windows(2)
            .any(|w| w == ["--model", "openai/qwen3-coder"]));
        assert!(ask.windows(2).any(|w| w == ["--chat-mode", "ask"]));
        assert!(ask.contains(&"--dry-run".to_owned()));
        let edit = Aider::args(Role::Implement, &local, &[]);
        assert!(!edit.contains(&"--dry-run".to_owned()));
        assert_eq!(key_name(&local), "OPENAI_API_KEY");
        let sonnet = ModelSettings {
            model: Some("sonnet".into()),
            ..ModelSettings::default()
        };
        assert_eq!(key_name(&sonnet), "ANTHROPIC_API_KEY");
        assert_eq!(Aider::endpoints(None, &sonnet), ["api.anthropic.com"]);
        let env = Aider::call_env(Role::Propose, &local, Path::new("/h"));
        assert!(env.contains(&("AIDER_MESSAGE_FILE".into(), "/h/prompt.md".into())));
        assert!(env.contains(&("OPENAI_API_BASE".into(), "http://127.0.0.1:6/v1".into())));
    }
}
