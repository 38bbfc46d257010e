//! Every environment variable ralph reads, named in one place: what it is for, and the one
//! function that reads it. Code elsewhere asks this module instead of calling
//! `std::env::var` with a literal, so `grep env::` lists every input ralph takes from its
//! environment. (Variables ralph only *sets or removes* for the programs it starts — git's
//! `GIT_*`, the agents' `RALPH_ROLE`… — belong to the code that starts them.)

use std::ffi::OsString;

/// The GitHub token (first choice).
pub const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
/// The GitHub token (second choice, as the `gh` CLI names it).
pub const GH_TOKEN: &str = "GH_TOKEN";
/// The GitHub API base URL (GitHub Enterprise, Actions, tests).
pub const GITHUB_API_URL: &str = "GITHUB_API_URL";
/// `OWNER/NAME` of the repository, set by Actions.
pub const GITHUB_REPOSITORY: &str = "GITHUB_REPOSITORY";
/// The web address of the GitHub server, set by Actions (`https://github.com`).
pub const GITHUB_SERVER_URL: &str = "GITHUB_SERVER_URL";
/// `true` inside GitHub Actions: Action mode.
pub const GITHUB_ACTIONS: &str = "GITHUB_ACTIONS";
/// The file a step appends its markdown job summary to.
pub const GITHUB_STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";
/// The file a step appends its `key=value` outputs to.
pub const GITHUB_OUTPUT: &str = "GITHUB_OUTPUT";
/// The default API key variable of the `anthropic` backend (`api_key_env` overrides).
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
/// The default API key variable of the `openai` backend (`api_key_env` overrides).
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// The Claude Code program, when it is not `claude` on `PATH`.
pub const RALPH_CLAUDE_BIN: &str = "RALPH_CLAUDE_BIN";
/// The Codex program, when it is not `codex` on `PATH`.
pub const RALPH_CODEX_BIN: &str = "RALPH_CODEX_BIN";
/// A tracing `EnvFilter` that overrides `-v`/`-q`.
pub const RALPH_LOG: &str = "RALPH_LOG";
/// `auto`, `required` or `off`: overrides `[sandbox] mode` (the GitHub Action sets `required`).
pub const RALPH_SANDBOX: &str = "RALPH_SANDBOX";
/// Test-only: `1` makes the HTTP backends retry without waiting.
pub const RALPH_TEST_NO_RETRY_DELAY: &str = "RALPH_TEST_NO_RETRY_DELAY";
/// Any non-empty value turns colour off with `--color auto`.
pub const NO_COLOR: &str = "NO_COLOR";
/// `dumb` turns colour off with `--color auto`.
pub const TERM: &str = "TERM";
/// Where programs (checks, agents, hooks) are looked up.
pub const PATH: &str = "PATH";

/// Credentials never passed to an agent, a check or a hook: GitHub tokens and the Actions
/// runtime tokens.
pub const SCRUBBED: [&str; 6] = [
    GITHUB_TOKEN,
    GH_TOKEN,
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
];

/// The value of `name` when it is set and valid UTF-8.
pub fn get(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The value of `name` when it is set and not blank, trimmed.
pub fn non_empty(name: &str) -> Option<String> {
    get(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The raw value of `name` (for `PATH`, which may not be UTF-8).
pub fn get_os(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Whether `name` is set to something other than the empty string.
pub fn is_set(name: &str) -> bool {
    get_os(name).is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbed_names_include_both_github_token_variables() {
        assert!(SCRUBBED.contains(&GITHUB_TOKEN) && SCRUBBED.contains(&GH_TOKEN));
    }

    #[test]
    fn blank_values_count_as_unset() {
        std::env::set_var("RALPH_ENV_TEST_BLANK", "  ");
        std::env::set_var("RALPH_ENV_TEST_SET", " v ");
        assert_eq!(non_empty("RALPH_ENV_TEST_BLANK"), None);
        assert_eq!(non_empty("RALPH_ENV_TEST_SET").as_deref(), Some("v"));
        assert!(is_set("RALPH_ENV_TEST_SET"));
        assert!(!is_set("RALPH_ENV_TEST_NEVER_SET"));
    }
}
