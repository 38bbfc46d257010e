//! Where `.ci/run` installs the agent CLIs that take a key, for the tests and the benchmark:
//! the npm ones in `RALPH_TEST_AGENT_CLIS` (default `target/agent-clis`), Aider in a venv,
//! `RALPH_TEST_AIDER` (default `target/ci-tools/aider`).

use std::path::{Path, PathBuf};

/// The program of `cli` (`gemini`, `qwen`, `opencode`, `aider`) where `.ci/run` installs it,
/// when it is there.
pub fn installed(cli: &str) -> Result<PathBuf, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = if cli == "aider" {
        std::env::var_os("RALPH_TEST_AIDER")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/ci-tools/aider"))
            .join("bin/aider")
    } else {
        std::env::var_os("RALPH_TEST_AGENT_CLIS")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/agent-clis"))
            .join("node_modules/.bin")
            .join(cli)
    };
    if path.exists() {
        Ok(path)
    } else {
        Err(path)
    }
}
