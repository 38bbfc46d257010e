//! Secrets (the GitHub token, API keys): a type that never shows its value in `Debug` or
//! `Display`, and a process-wide redactor that every output path (errors, logs, status lines)
//! runs text through, so a secret echoed back by a server or a child process is masked too.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::sync::{Mutex, OnceLock};

/// What a secret is replaced with wherever it would be printed.
pub const MASK: &str = "***";

/// Secrets shorter than this are not registered for redaction: masking every occurrence of a
/// two-letter string would garble output and protect nothing.
const MIN_REDACTED_LEN: usize = 8;

fn registry() -> &'static Mutex<Vec<String>> {
    static SECRETS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| Mutex::new(Vec::new()))
}

/// A secret value. Creating one registers it with the redactor.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        let value = value.into();
        if value.len() >= MIN_REDACTED_LEN {
            let mut secrets = registry().lock().unwrap_or_else(|e| e.into_inner());
            if !secrets.contains(&value) {
                secrets.push(value.clone());
                // Longest first, so a secret that contains another is masked whole.
                secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
            }
        }
        Secret(value)
    }

    /// The value itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({MASK})")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

/// A token git sends to a remote over HTTPS, with the user name the forge wants beside it in
/// basic authentication (GitHub `x-access-token`, GitLab `oauth2`). `Debug` shows the user,
/// never the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitToken {
    pub user: &'static str,
    pub secret: Secret,
}

impl GitToken {
    pub fn new(user: &'static str, secret: Secret) -> GitToken {
        GitToken { user, secret }
    }
}

/// `text` with every registered secret replaced by [`MASK`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = registry().lock().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_owned();
    for s in secrets.iter() {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), MASK);
        }
    }
    Cow::Owned(out)
}

/// A writer that redacts what passes through it. The log formatter writes each event in one
/// call, so a secret is never split across writes.
pub struct RedactingWriter<W: Write>(pub W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints_its_value() {
        let s = Secret::new("ghp_0123456789abcdefDEBUG");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(s.expose(), "ghp_0123456789abcdefDEBUG");
    }

    #[test]
    fn registered_secrets_are_masked_anywhere_in_text() {
        let _s = Secret::new("tok_secret_value_42");
        let _t = Secret::new("tok_secret_value_42_longer");
        assert_eq!(
            redact("header: Bearer tok_secret_value_42_longer; again tok_secret_value_42."),
            "header: Bearer ***; again ***."
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        let _short = Secret::new("abc");
        assert_eq!(redact("abc"), "abc");
    }

    #[test]
    fn the_redacting_writer_masks_log_lines() {
        let _s = Secret::new("writer_secret_123456");
        let mut w = RedactingWriter(Vec::new());
        w.write_all(b"DEBUG token=writer_secret_123456 end\n")
            .unwrap();
        assert_eq!(String::from_utf8(w.0).unwrap(), "DEBUG token=*** end\n");
    }
}
