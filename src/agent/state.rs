//! An agent CLI's state, its own for one call. Claude Code keeps its settings, hooks,
//! instructions and login in `~/.claude` and `~/.claude.json`, Codex in `~/.codex`; a CLI run
//! with those writable could plant a hook or instructions there that the user's next session —
//! or the next agent of this run, a competitor — would obey. So, in the sandbox, each call gets
//! a private copy of the few files the CLI needs (its login and settings), shown at the real
//! paths and thrown away when the call ends: nothing it writes there reaches the user's state or
//! another agent.
//!
//! One thing does go back: a login the CLI refreshed during the call (OAuth tokens rotate, and
//! the user's stored one stops working once refreshed). Only the credentials file, only when it
//! is still a JSON object of the same account, only when the stored login was due for a refresh,
//! and only when nothing else changed the user's file meanwhile.

use crate::untrusted_dir::{Node, UntrustedDir};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One state entry of a CLI: relative to `HOME`, the variable that moves it, whether it is a
/// folder, and the files of it a call gets copied (for a folder; a file is copied whole).
struct Entry {
    cli: &'static str,
    rel: &'static str,
    var: Option<&'static str>,
    copied: &'static [&'static str],
}

/// The state each CLI gets a copy of. Claude Code: its login (`.credentials.json`), settings
/// and instructions in `~/.claude`, and `~/.claude.json` (onboarding state, the account).
/// Codex: its login (`auth.json`), `config.toml` (the model providers), its instructions and
/// the version check's cache.
const ENTRIES: [Entry; 3] = [
    Entry {
        cli: "claude",
        rel: ".claude",
        var: Some("CLAUDE_CONFIG_DIR"),
        copied: &[".credentials.json", "settings.json", "CLAUDE.md"],
    },
    Entry {
        cli: "claude",
        rel: ".claude.json",
        var: None,
        copied: &[],
    },
    Entry {
        cli: "codex",
        rel: ".codex",
        var: Some("CODEX_HOME"),
        copied: &["auth.json", "config.toml", "AGENTS.md", "version.json"],
    },
];

/// The most a copied state file may hold (`~/.claude.json` grows with the projects it knows).
const MAX_STATE_FILE: u64 = 32 << 20;

/// How long before its expiry a stored login counts as due for a refresh.
const REFRESH_MARGIN: Duration = Duration::from_secs(10 * 60);

/// Where `e` is for this user.
fn path_of(e: &Entry, home: Option<&Path>) -> Option<PathBuf> {
    e.var
        .and_then(crate::env::non_empty)
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(e.rel)))
}

/// A private copy of one CLI's state for one call, removed when dropped.
#[derive(Debug)]
pub struct CallState {
    /// The copies, in ralph's own folder.
    dir: tempfile::TempDir,
    /// (copy, the real path it is shown at).
    pub shown: Vec<(PathBuf, PathBuf)>,
    /// The credentials file: (its copy, the real one, its bytes when copied).
    login: Option<Login>,
}

#[derive(Debug)]
struct Login {
    copy_dir: PathBuf,
    name: &'static str,
    real: PathBuf,
    before: Vec<u8>,
}

/// The credentials file of a state folder.
fn login_file(cli: &str) -> Option<&'static str> {
    match cli {
        "claude" => Some(".credentials.json"),
        "codex" => Some("auth.json"),
        _ => None,
    }
}

impl CallState {
    /// Copies the state of `cli` (`claude`, `codex`) into a fresh private folder; `None` for a
    /// CLI without state, or when the copy cannot be made (the call then gets no state).
    pub fn copy(cli: &str, home: Option<&Path>) -> Option<CallState> {
        let entries: Vec<&Entry> = ENTRIES.iter().filter(|e| e.cli == cli).collect();
        if entries.is_empty() {
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("ralph-{cli}-state-"))
            .tempdir()
            .ok()?;
        let mut shown = Vec::new();
        let mut login = None;
        for (i, e) in entries.iter().enumerate() {
            let Some(real) = path_of(e, home) else {
                continue;
            };
            let copy = dir
                .path()
                .join(format!("{i}-{}", e.rel.trim_start_matches('.')));
            if e.copied.is_empty() {
                // A file, copied whole when it is one.
                match crate::fsutil::read_regular(&real, MAX_STATE_FILE) {
                    Ok(bytes) => {
                        crate::fsutil::write_atomic(&copy, &bytes).ok()?;
                        shown.push((copy, real));
                    }
                    Err(_) => continue,
                }
                continue;
            }
            // A folder: made when missing (a CLI's first run), then the files it needs.
            if !real.exists() {
                let _ = std::fs::create_dir_all(&real);
            }
            if !real.is_dir() {
                continue;
            }
            std::fs::create_dir(&copy).ok()?;
            for name in e.copied {
                if let Ok(bytes) = crate::fsutil::read_regular(&real.join(name), MAX_STATE_FILE) {
                    crate::fsutil::write_atomic(&copy.join(name), &bytes).ok()?;
                    if Some(*name) == login_file(cli) {
                        login = Some(Login {
                            copy_dir: copy.clone(),
                            name,
                            real: real.join(name),
                            before: bytes,
                        });
                    }
                }
            }
            shown.push((copy, real));
        }
        Some(CallState { dir, shown, login })
    }

    /// After the call: a login the CLI refreshed goes back to the user's file (see the module
    /// doc for when); returns what was done, for the log.
    pub fn keep_refreshed_login(&self, cli: &str) -> Option<String> {
        let login = self.login.as_ref()?;
        let dir = UntrustedDir::open(&login.copy_dir).ok()?;
        // The copy is the agent's: read as a regular file, never through a link, bounded.
        let Ok(Some(Node::File { bytes: after, .. })) = dir.read(Path::new(login.name), 1 << 20)
        else {
            return None;
        };
        if after == login.before {
            return None;
        }
        let now = crate::fsutil::read_regular(&login.real, 1 << 20).ok()?;
        if now != login.before {
            return Some(format!(
                "{cli}: the login changed on disk during the call; the call's refresh is not kept"
            ));
        }
        match refreshed(cli, &login.before, &after, SystemTime::now()) {
            Ok(()) => {
                let _ = crate::fsutil::write_atomic(&login.real, &after);
                Some(format!("{cli}: kept the login the call refreshed"))
            }
            Err(why) => Some(format!("{cli}: the call's login is not kept: {why}")),
        }
    }

    /// The private folder (for tests).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Whether `after` is a refresh of the login `before` that ralph keeps: the same shape, the
/// same account, and `before` was due for a refresh at `now`; else why not.
pub fn refreshed(cli: &str, before: &[u8], after: &[u8], now: SystemTime) -> Result<(), String> {
    let parse = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).ok();
    let (Some(before), Some(after)) = (parse(before), parse(after)) else {
        return Err("it is not JSON".into());
    };
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as i64;
    match cli {
        "claude" => {
            let (b, a) = (&before["claudeAiOauth"], &after["claudeAiOauth"]);
            if !a["accessToken"].is_string() || !a["refreshToken"].is_string() {
                return Err("it has no OAuth login".into());
            }
            let expires = b["expiresAt"].as_i64().unwrap_or(0);
            if expires > now_ms + REFRESH_MARGIN.as_millis() as i64 {
                return Err("the stored login was not due for a refresh".into());
            }
            if a["expiresAt"].as_i64().unwrap_or(0) <= expires {
                return Err("it does not last longer than the stored one".into());
            }
            Ok(())
        }
        "codex" => {
            let (b, a) = (&before["tokens"], &after["tokens"]);
            if !a["refresh_token"].is_string() || !a["access_token"].is_string() {
                return Err("it has no ChatGPT login".into());
            }
            if b["account_id"] != a["account_id"] {
                return Err("it is another account".into());
            }
            if before["OPENAI_API_KEY"] != after["OPENAI_API_KEY"] {
                return Err("it changes the API key".into());
            }
            let last = before["last_refresh"]
                .as_str()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.timestamp_millis())
                .unwrap_or(0);
            // Codex refreshes a login older than eight days.
            if now_ms - last
                < Duration::from_secs(8 * 86_400).as_millis() as i64
                    - REFRESH_MARGIN.as_millis() as i64
            {
                return Err("the stored login was not due for a refresh".into());
            }
            Ok(())
        }
        _ => Err("no login of this CLI is kept".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_login(expires: i64, token: &str) -> Vec<u8> {
        serde_json::json!({"claudeAiOauth": {"accessToken": token, "refreshToken": format!("r-{token}"), "expiresAt": expires, "scopes": []}})
            .to_string()
            .into_bytes()
    }

    fn at(ms: i64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms as u64)
    }

    #[test]
    fn a_refresh_is_kept_only_when_the_login_was_due() {
        let now = 1_000_000_000;
        let due = claude_login(now + 60_000, "old");
        let fresh = claude_login(now + 3_600_000, "new");
        assert_eq!(refreshed("claude", &due, &fresh, at(now)), Ok(()));
        let not_due = claude_login(now + 86_400_000, "old");
        assert!(refreshed("claude", &not_due, &fresh, at(now)).is_err());
        assert!(refreshed("claude", &due, b"{\"hooks\":1}", at(now)).is_err());
        assert!(refreshed("claude", &due, b"not json", at(now)).is_err());
    }

    #[test]
    fn a_codex_refresh_keeps_its_account() {
        let now = 40 * 86_400_000;
        let login = |account: &str, last: &str| {
            serde_json::json!({"OPENAI_API_KEY": null, "tokens": {"id_token": "i", "access_token": "a", "refresh_token": "r", "account_id": account}, "last_refresh": last})
                .to_string()
                .into_bytes()
        };
        let old = login("acct", "1970-01-02T00:00:00Z");
        assert_eq!(
            refreshed(
                "codex",
                &old,
                &login("acct", "1970-02-09T00:00:00Z"),
                at(now)
            ),
            Ok(())
        );
        assert!(refreshed(
            "codex",
            &old,
            &login("other", "1970-02-09T00:00:00Z"),
            at(now)
        )
        .is_err());
        let recent = login("acct", "1970-02-08T00:00:00Z");
        assert!(refreshed(
            "codex",
            &recent,
            &login("acct", "1970-02-09T00:00:00Z"),
            at(now)
        )
        .is_err());
    }

    #[test]
    fn a_call_gets_copies_and_the_users_state_is_untouched() {
        let home = tempfile::tempdir().unwrap();
        let claude = home.path().join(".claude");
        std::fs::create_dir_all(claude.join("projects")).unwrap();
        std::fs::write(claude.join("settings.json"), "{}").unwrap();
        std::fs::write(claude.join("projects/big.jsonl"), "history").unwrap();
        std::fs::write(home.path().join(".claude.json"), "{\"userID\":\"u\"}").unwrap();
        std::env::remove_var("CLAUDE_CONFIG_DIR");
        let state = CallState::copy("claude", Some(home.path())).unwrap();
        assert_eq!(state.shown.len(), 2);
        let (copy, real) = &state.shown[0];
        assert_eq!(real, &claude);
        assert!(copy.join("settings.json").is_file());
        assert!(
            !copy.join("projects").exists(),
            "only the files the CLI needs"
        );
        // The agent writes its copy: the user's state does not change.
        std::fs::write(copy.join("settings.json"), "{\"hooks\":{}}").unwrap();
        std::fs::write(copy.join("CLAUDE.md"), "obey").unwrap();
        assert_eq!(state.keep_refreshed_login("claude"), None);
        assert_eq!(
            std::fs::read_to_string(claude.join("settings.json")).unwrap(),
            "{}"
        );
        assert!(!claude.join("CLAUDE.md").exists());
        let dir = state.dir().to_owned();
        drop(state);
        assert!(!dir.exists(), "thrown away with the call");
    }
}
