//! Credentials in a git configuration file: the token `actions/checkout` leaves in
//! `.git/config` (`persist-credentials: true`, its default, writes it as
//! `http.<url>.extraheader = AUTHORIZATION: basic …`), or a remote URL with a password in it.
//! A confined process reads the repository's configuration (git needs it); it must not read
//! those. This module finds them and makes the scrubbed copy the sandbox shows in place of the
//! file. Line-based, as git's own format is: a key is `name = value` under a `[section]` or
//! `[section "subsection"]` header.

use std::path::{Path, PathBuf};

/// What a credential in a configuration file is, for messages (never its value).
fn describe(section: &str, key: &str) -> String {
    format!("{section}.{key}")
}

/// The `[section …]` header a line opens, lower-cased, when it is one.
fn header(line: &str) -> Option<String> {
    let t = line.trim_start();
    let inner = t.strip_prefix('[')?.split(']').next()?;
    Some(inner.trim().to_owned())
}

/// The key of a `name = value` line, lower-cased, and its value.
fn key_value(line: &str) -> Option<(String, &str)> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with(';') || t.starts_with('[') {
        return None;
    }
    let (k, v) = t.split_once('=').unwrap_or((t, ""));
    let key = k.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return None;
    }
    Some((key.to_ascii_lowercase(), v.trim()))
}

/// A URL with its user information (`user:password@`) removed, when it has a password or a
/// token as user (`https://x-access-token:…@host`, `https://ghp_…@host`).
fn without_credentials(value: &str) -> Option<String> {
    let (scheme, rest) = value.split_once("://")?;
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let (userinfo, host) = authority.rsplit_once('@')?;
    // A user name alone (`git@host`, `https://user@host`) is no secret; a password is.
    let secret = userinfo.contains(':') || userinfo.len() >= 20;
    secret.then(|| format!("{scheme}://{host}{}", &rest[authority_end..]))
}

/// `url` without the password or token it carries (`https://x:secret@host/…` →
/// `https://host/…`); any other URL as it is.
pub fn url_without_credentials(url: &str) -> String {
    without_credentials(url).unwrap_or_else(|| url.to_owned())
}

/// The credentials in the configuration `text`, each named as `section.key` (no value).
pub fn credentials(text: &str) -> Vec<String> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(h) = header(line) {
            section = h;
            continue;
        }
        let Some((key, value)) = key_value(line) else {
            continue;
        };
        if key == "extraheader" || without_credentials(value.trim_matches('"')).is_some() {
            out.push(describe(&section, &key));
        }
    }
    out
}

/// `text` without its credentials: `extraheader` lines dropped, passwords taken out of URLs;
/// everything else as it is.
pub fn scrubbed(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match key_value(line) {
            Some((key, _)) if key == "extraheader" => {
                out.push_str("\t# (a credential ralph keeps from agents and checks)\n");
            }
            Some((_, value)) => match without_credentials(value.trim_matches('"')) {
                Some(clean) => {
                    let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
                    let key = line.trim_start().split('=').next().unwrap_or("").trim_end();
                    out.push_str(&format!("{indent}{key} = {clean}\n"));
                }
                None => out.push_str(line),
            },
            None => out.push_str(line),
        }
    }
    out
}

/// The git configuration files a confined process reads that may hold a credential: the
/// repository's (`<common>/config`) and the user's global ones.
pub fn files(common: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let xdg = crate::env::non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")));
    common
        .map(|c| c.join("config"))
        .into_iter()
        .chain(home.map(|h| h.join(".gitconfig")))
        .chain(xdg.map(|x| x.join("git/config")))
        .collect()
}

/// The credentials each of `paths` holds: (file, what), for `ralph doctor` and the refusal.
pub fn found_in(paths: &[PathBuf]) -> Vec<(PathBuf, Vec<String>)> {
    paths
        .iter()
        .filter_map(|p| {
            let text = crate::fsutil::read_regular_text(p, 4 << 20).ok()?;
            let found = credentials(&text);
            (!found.is_empty()).then(|| (p.clone(), found))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKOUT: &str = "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://github.com/o/r\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==\n";

    #[test]
    fn the_checkout_token_is_found_by_name_and_scrubbed() {
        assert_eq!(
            credentials(CHECKOUT),
            ["http \"https://github.com/\".extraheader"]
        );
        let clean = scrubbed(CHECKOUT);
        assert!(
            !clean.contains("AUTHORIZATION") && !clean.contains("Z2hz"),
            "{clean}"
        );
        assert!(clean.contains("url = https://github.com/o/r"));
        assert!(credentials(&clean).is_empty());
    }

    #[test]
    fn a_password_in_a_remote_url_is_taken_out() {
        let text = "[remote \"origin\"]\n\turl = https://x-access-token:ghs_abc@github.com/o/r.git\n[remote \"up\"]\n\turl = git@github.com:o/r.git\n";
        assert_eq!(credentials(text), ["remote \"origin\".url"]);
        let clean = scrubbed(text);
        assert!(
            clean.contains("\turl = https://github.com/o/r.git\n"),
            "{clean}"
        );
        assert!(clean.contains("url = git@github.com:o/r.git"));
        assert!(!clean.contains("ghs_abc"));
    }

    #[test]
    fn a_plain_configuration_is_left_as_it_is() {
        let text = "[user]\n\tname = Someone\n# extraheader in a comment\n";
        assert!(credentials(text).is_empty());
        assert_eq!(scrubbed(text), text);
    }
}
