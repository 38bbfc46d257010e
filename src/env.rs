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
/// The GitLab token: a project, group or personal access token with the `api` scope.
pub const GITLAB_TOKEN: &str = "GITLAB_TOKEN";
/// The GitLab server's address (self-hosted; tests).
pub const GITLAB_URL: &str = "GITLAB_URL";
/// `true` inside GitLab CI.
pub const GITLAB_CI: &str = "GITLAB_CI";
/// GitLab CI's job token: it cannot use the issue or merge request APIs, so ralph says so.
pub const CI_JOB_TOKEN: &str = "CI_JOB_TOKEN";
/// The GitLab server's address, set by GitLab CI.
pub const CI_SERVER_URL: &str = "CI_SERVER_URL";
/// The GitLab REST API's address, set by GitLab CI.
pub const CI_API_V4_URL: &str = "CI_API_V4_URL";
/// `GROUP/…/PROJECT` of the project, set by GitLab CI.
pub const CI_PROJECT_PATH: &str = "CI_PROJECT_PATH";
/// The Forgejo (or Gitea) token.
pub const FORGEJO_TOKEN: &str = "FORGEJO_TOKEN";
/// The Gitea token (second choice on the forgejo tracker).
pub const GITEA_TOKEN: &str = "GITEA_TOKEN";
/// The Forgejo or Gitea server's address.
pub const FORGEJO_URL: &str = "FORGEJO_URL";
/// `true` inside Forgejo Actions (Gitea Actions sets `GITEA_ACTIONS`; Forgejo sets both).
pub const FORGEJO_ACTIONS: &str = "FORGEJO_ACTIONS";
pub const GITEA_ACTIONS: &str = "GITEA_ACTIONS";
/// Where `ralph compete` and `ralph queue` append their markdown summary outside GitHub Actions
/// (the GitLab CI template sets it; its file is the job's report artifact).
pub const RALPH_STEP_SUMMARY: &str = "RALPH_STEP_SUMMARY";
/// Where a run's outputs go outside GitHub Actions, as dotenv lines (`RALPH_OUTCOME=…`).
pub const RALPH_OUTPUT: &str = "RALPH_OUTPUT";
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
/// The home folder: the default place of ralph's checkouts is under it.
pub const HOME: &str = "HOME";
/// Where per-user state goes (the XDG base directories): ralph's checkouts, by default.
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
/// An Actions job's own temporary folder, emptied after the job: ralph's checkouts there.
pub const RUNNER_TEMP: &str = "RUNNER_TEMP";

/// Credentials never passed to an agent, a check or a hook, whoever names them: the forges'
/// tokens (GitHub, GitLab, Forgejo, Gitea), the Actions runtime tokens, and what GitLab CI
/// hands every job — its job token, the ID tokens, the registry and deploy passwords, and the
/// clone URL that carries the job token.
pub const SCRUBBED: [&str; 19] = [
    GITHUB_TOKEN,
    GH_TOKEN,
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    GITLAB_TOKEN,
    CI_JOB_TOKEN,
    "CI_JOB_JWT",
    "CI_JOB_JWT_V1",
    "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD",
    "CI_DEPLOY_PASSWORD",
    "CI_DEPENDENCY_PROXY_PASSWORD",
    "CI_REPOSITORY_URL",
    "GITLAB_ACCESS_TOKEN",
    FORGEJO_TOKEN,
    GITEA_TOKEN,
    "FORGEJO_RUNTIME_TOKEN",
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
    fn scrubbed_names_include_every_forges_tokens() {
        for name in [
            GITHUB_TOKEN,
            GH_TOKEN,
            GITLAB_TOKEN,
            CI_JOB_TOKEN,
            FORGEJO_TOKEN,
            GITEA_TOKEN,
            "CI_REPOSITORY_URL",
        ] {
            assert!(SCRUBBED.contains(&name), "{name}");
        }
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
