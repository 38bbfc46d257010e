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

/// How a CLI keeps its state, and how a call is shown its private copy.
struct Layout {
    cli: &'static str,
    /// The state folder, relative to `HOME`, and the variable that moves it.
    rel: &'static str,
    var: &'static str,
    /// The files of it a call gets.
    copied: &'static [&'static str],
    /// A file the CLI keeps beside the folder, relative to `HOME` — or inside it when the
    /// variable moves the folder (Claude Code's `.claude.json`): copied into the folder.
    beside: Option<&'static str>,
    /// Where the copy is shown inside the sandbox, the variable then pointing there; `None`:
    /// at the real path. Claude Code takes a lock beside its folder when it refreshes a login,
    /// so its copy goes where the folder's parent is writable (the sandbox's own `/tmp`).
    shown_at: Option<&'static str>,
    /// The credentials file in the folder.
    login: &'static str,
}

/// Claude Code: its login (`.credentials.json`), settings, instructions and `.claude.json`
/// (onboarding state, the account). Codex: its login (`auth.json`), `config.toml` (the model
/// providers), its instructions and the version check's cache; it needs its folder writable.
const LAYOUTS: [Layout; 2] = [
    Layout {
        cli: "claude",
        rel: ".claude",
        var: "CLAUDE_CONFIG_DIR",
        copied: &[".credentials.json", "settings.json", "CLAUDE.md"],
        beside: Some(".claude.json"),
        shown_at: Some("/tmp/.ralph-claude/config"),
        login: ".credentials.json",
    },
    Layout {
        cli: "codex",
        rel: ".codex",
        var: "CODEX_HOME",
        copied: &["auth.json", "config.toml", "AGENTS.md", "version.json"],
        beside: None,
        shown_at: None,
        login: "auth.json",
    },
];

/// The most a copied state file may hold (`~/.claude.json` grows with the projects it knows).
const MAX_STATE_FILE: u64 = 32 << 20;

/// How long before its expiry a stored login counts as due for a refresh.
const REFRESH_MARGIN: Duration = Duration::from_secs(10 * 60);

/// A private copy of one CLI's state for one call, removed when dropped.
#[derive(Debug)]
pub struct CallState {
    /// The copies, in ralph's own folder.
    dir: tempfile::TempDir,
    /// (copy, the path it is shown at in the sandbox).
    pub shown: Vec<(PathBuf, PathBuf)>,
    /// Variables the call runs with (the state folder's, when it is shown elsewhere).
    pub env: Vec<(String, String)>,
    /// The credentials file: its copy, the real one, its bytes when copied.
    login: Option<Login>,
}

#[derive(Debug)]
struct Login {
    copy_dir: PathBuf,
    name: &'static str,
    real: PathBuf,
    before: Vec<u8>,
}

impl CallState {
    /// Copies the state of `cli` (`claude`, `codex`) into a fresh private folder; `None` for a
    /// CLI without state, or when the copy cannot be made (the call then gets no state).
    pub fn copy(cli: &str, home: Option<&Path>) -> Option<CallState> {
        let layout = LAYOUTS.iter().find(|l| l.cli == cli)?;
        let moved = crate::env::non_empty(layout.var).map(PathBuf::from);
        let real = moved.clone().or_else(|| home.map(|h| h.join(layout.rel)))?;
        // Made when missing (a CLI's first run), so that its first login has a place.
        if !real.exists() {
            let _ = std::fs::create_dir_all(&real);
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("ralph-{cli}-state-"))
            .tempdir()
            .ok()?;
        let copy = dir.path().join("state");
        std::fs::create_dir(&copy).ok()?;
        let mut login = None;
        for name in layout.copied {
            if let Ok(bytes) = crate::fsutil::read_regular(&real.join(name), MAX_STATE_FILE) {
                crate::fsutil::write_atomic(&copy.join(name), &bytes).ok()?;
                if *name == layout.login {
                    login = Some(Login {
                        copy_dir: copy.clone(),
                        name: layout.login,
                        real: real.join(name),
                        before: bytes,
                    });
                }
            }
        }
        if let Some(beside) = layout.beside {
            let file = match &moved {
                Some(folder) => folder.join(beside),
                None => home.map(|h| h.join(beside))?,
            };
            if let Ok(bytes) = crate::fsutil::read_regular(&file, MAX_STATE_FILE) {
                crate::fsutil::write_atomic(&copy.join(beside), &bytes).ok()?;
            }
        }
        let (at, env) = match layout.shown_at {
            Some(at) => (
                PathBuf::from(at),
                vec![(layout.var.to_owned(), at.to_owned())],
            ),
            None => (real, Vec::new()),
        };
        Some(CallState {
            dir,
            shown: vec![(copy, at)],
            env,
            login,
        })
    }

    /// A fresh home for one call of `cli` holding only `files` (paths relative to it): shown
    /// in the sandbox at `/tmp/.ralph-<cli>-home` (its private `/tmp`), else where it is.
    pub fn fresh(
        cli: &str,
        files: &[(&'static str, String)],
        sandboxed: bool,
    ) -> std::io::Result<CallState> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("ralph-{cli}-home-"))
            .tempdir()?;
        let home = dir.path().join("home");
        std::fs::create_dir(&home)?;
        for (rel, contents) in files {
            let path = home.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            crate::fsutil::write_atomic(&path, contents.as_bytes())?;
        }
        let at = if sandboxed {
            PathBuf::from(format!("/tmp/.ralph-{cli}-home"))
        } else {
            home.clone()
        };
        Ok(CallState {
            dir,
            shown: vec![(home, at)],
            env: Vec::new(),
            login: None,
        })
    }

    /// The same state, the call also running with `env`.
    pub fn with_env(mut self, env: Vec<(String, String)>) -> CallState {
        self.env.extend(env);
        self
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
            // Codex refreshes when the access token has expired (its JWT's `exp`), else — a
            // token without a readable expiry — when the login is older than eight days.
            let due = match b["access_token"].as_str().and_then(jwt_expiry_ms) {
                Some(exp) => exp <= now_ms + REFRESH_MARGIN.as_millis() as i64,
                None => {
                    let last = before["last_refresh"]
                        .as_str()
                        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                        .map(|t| t.timestamp_millis())
                        .unwrap_or(0);
                    now_ms - last
                        >= (Duration::from_secs(8 * 86_400) - REFRESH_MARGIN).as_millis() as i64
                }
            };
            if !due {
                return Err("the stored login was not due for a refresh".into());
            }
            Ok(())
        }
        _ => Err("no login of this CLI is kept".into()),
    }
}

/// The expiry (`exp`, in milliseconds) of a JWT, when its payload says.
fn jwt_expiry_ms(token: &str) -> Option<i64> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64url(payload)?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims["exp"].as_i64().map(|s| s * 1000)
}

/// Decodes unpadded base64url.
fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
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
    fn a_jwts_expiry_is_read() {
        // {"exp":1700000000}
        let token = "eyJhbGciOiJub25lIn0.eyJleHAiOjE3MDAwMDAwMDB9.sig";
        assert_eq!(jwt_expiry_ms(token), Some(1_700_000_000_000));
        assert_eq!(jwt_expiry_ms("not-a-jwt"), None);
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
        let (copy, at) = &state.shown[0];
        assert_eq!(at, Path::new("/tmp/.ralph-claude/config"));
        assert_eq!(
            state.env,
            [(
                "CLAUDE_CONFIG_DIR".to_owned(),
                "/tmp/.ralph-claude/config".to_owned()
            )]
        );
        assert!(copy.join("settings.json").is_file());
        assert!(
            copy.join(".claude.json").is_file(),
            "the file beside, inside"
        );
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

    #[test]
    fn codex_sees_its_copy_at_its_own_home() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), "model = \"x\"").unwrap();
        std::env::remove_var("CODEX_HOME");
        let state = CallState::copy("codex", Some(home.path())).unwrap();
        assert_eq!(state.shown[0].1, home.path().join(".codex"));
        assert!(state.env.is_empty());
        assert!(state.shown[0].0.join("config.toml").is_file());
    }
}

#[cfg(test)]
mod fresh_tests {
    use super::*;

    #[test]
    fn a_fresh_home_holds_its_files_in_their_folders() {
        let files = [
            ("prompt.md", "p".to_owned()),
            (".aider/caches/x.json", "{}".to_owned()),
        ];
        let state = CallState::fresh("aider", &files, false).unwrap();
        let (copy, at) = &state.shown[0];
        assert_eq!(copy, at, "shown where it is without a sandbox");
        assert_eq!(
            std::fs::read_to_string(copy.join(".aider/caches/x.json")).unwrap(),
            "{}"
        );
        let sandboxed = CallState::fresh("aider", &files, true).unwrap();
        assert_eq!(sandboxed.shown[0].1, Path::new("/tmp/.ralph-aider-home"));
    }
}
