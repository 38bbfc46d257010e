//! The local issue file format: a front-matter block, the body, and ralph's comments.
//!
//! ```text
//! ---
//! title: Add a widget
//! labels: [ready, enhancement]
//! state: open
//! ---
//! The body, in markdown.
//!
//! <!-- ralph comments -->
//! …comments ralph appended…
//! ```
//!
//! Keys: `title` (required), `labels`, `state` (`open`/`closed`), `assignees`, `author`,
//! `created` (RFC 3339). Lists are `[a, b]` or YAML block lists (`- a` lines). Unknown keys and
//! `#` comments are kept. Edits replace only the lines of the key that changed, so a file
//! written by hand stays as it was written; the body and comments are kept byte for byte.

use chrono::{DateTime, Utc};

/// The marker after which ralph appends comments; the body ends before it.
const COMMENTS_MARKER: &str = "<!-- ralph comments -->";

/// A parsed issue file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueFile {
    /// The front-matter lines between the fences, without line endings.
    lines: Vec<String>,
    /// `\r\n` when the file uses CRLF.
    newline: &'static str,
    /// Everything after the closing fence's line ending, up to the comments section.
    pub body: String,
    /// The blank line before the marker, the marker and everything after it (empty when there
    /// are no comments yet).
    pub comments: String,
}

/// One front-matter entry: its key, value text and the lines it spans.
struct Entry {
    key: String,
    start: usize,
    end: usize,
}

impl IssueFile {
    /// Parses a file's text. The error says what is wrong, for `path: message`.
    pub fn parse(text: &str) -> Result<IssueFile, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let newline = if text.starts_with("---\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let first_line_end = text
            .find('\n')
            .ok_or("the file has no front-matter block (it must start with a `---` line)")?;
        if text[..first_line_end].trim_end() != "---" {
            return Err("the file must start with a `---` line opening the front matter".into());
        }
        let mut lines = Vec::new();
        let mut pos = first_line_end + 1;
        let rest_start = loop {
            if pos >= text.len() {
                return Err("the front matter is not closed by a `---` line".into());
            }
            let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            let line = text[pos..end].trim_end_matches('\r');
            if line.trim_end() == "---" {
                break (end + 1).min(text.len());
            }
            lines.push(line.to_owned());
            pos = end + 1;
        };
        let rest = &text[rest_start..];
        let (body, comments) = match rest.find(COMMENTS_MARKER) {
            Some(i) => {
                // The blank line ralph puts before the marker belongs to the comments.
                let before = &rest[..i];
                let sep = if before.ends_with("\r\n") {
                    2
                } else {
                    usize::from(before.ends_with('\n'))
                };
                let split = if sep > 0 && before[..i - sep].ends_with('\n') {
                    i - sep
                } else {
                    i
                };
                (rest[..split].to_owned(), rest[split..].to_owned())
            }
            None => (rest.to_owned(), String::new()),
        };
        let file = IssueFile {
            lines,
            newline,
            body,
            comments,
        };
        file.validate()?;
        Ok(file)
    }

    fn validate(&self) -> Result<(), String> {
        match self.get("title") {
            Some(t) if !t.is_empty() => {}
            _ => return Err("the front matter has no `title:`".into()),
        }
        match self.get("state").as_deref() {
            None | Some("open") | Some("closed") => {}
            Some(other) => {
                return Err(format!(
                    "`state: {other}` is not a state: use open or closed"
                ))
            }
        }
        if let Some(created) = self.get("created") {
            DateTime::parse_from_rfc3339(&created).map_err(|e| {
                format!(
                    "`created: {created}` is not an RFC 3339 time ({e}), e.g. 2026-11-01T09:30:00Z"
                )
            })?;
        }
        for (i, line) in self.lines.iter().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') || line.starts_with([' ', '\t']) {
                continue;
            }
            if !t.contains(':') {
                return Err(format!(
                    "front-matter line {} `{t}` is not `key: value`",
                    i + 2
                ));
            }
        }
        Ok(())
    }

    /// The entries, in order.
    fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        for (i, line) in self.lines.iter().enumerate() {
            let indented = line.starts_with([' ', '\t']);
            let t = line.trim();
            if indented || t.is_empty() || t.starts_with('#') {
                // A continuation (block list item) belongs to the entry above.
                if indented && t.starts_with('-') {
                    if let Some(last) = out.last_mut() {
                        if last.end == i {
                            last.end = i + 1;
                        }
                    }
                }
                continue;
            }
            if let Some((key, _)) = line.split_once(':') {
                out.push(Entry {
                    key: key.trim().to_owned(),
                    start: i,
                    end: i + 1,
                });
            }
        }
        out
    }

    fn entry(&self, key: &str) -> Option<Entry> {
        self.entries().into_iter().find(|e| e.key == key)
    }

    /// A scalar value, unquoted.
    pub fn get(&self, key: &str) -> Option<String> {
        let e = self.entry(key)?;
        let (_, value) = self.lines[e.start].split_once(':')?;
        Some(unquote(value.trim()))
    }

    /// A list value: `[a, b]`, block items, or a single scalar.
    pub fn get_list(&self, key: &str) -> Vec<String> {
        let Some(e) = self.entry(key) else {
            return Vec::new();
        };
        let value = self.lines[e.start]
            .split_once(':')
            .map(|(_, v)| v.trim())
            .unwrap_or("");
        if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            return split_flow_list(inner);
        }
        if !value.is_empty() {
            return vec![unquote(value)];
        }
        self.lines[e.start + 1..e.end]
            .iter()
            .filter_map(|l| l.trim().strip_prefix('-'))
            .map(|v| unquote(v.trim()))
            .filter(|v| !v.is_empty())
            .collect()
    }

    pub fn created(&self) -> Option<DateTime<Utc>> {
        self.get("created")
            .and_then(|c| DateTime::parse_from_rfc3339(&c).ok())
            .map(|d| d.with_timezone(&Utc))
    }

    /// Sets a key to a raw value text, replacing its lines or appending a line.
    fn set_raw(&mut self, key: &str, value: String) {
        let line = format!("{key}: {value}");
        match self.entry(key) {
            Some(e) => {
                self.lines.splice(e.start..e.end, [line]);
            }
            None => self.lines.push(line),
        }
    }

    pub fn set_list(&mut self, key: &str, items: &[String]) {
        let items: Vec<String> = items.iter().map(|i| quote(i)).collect();
        self.set_raw(key, format!("[{}]", items.join(", ")));
    }

    /// The whole file's text.
    pub fn render(&self) -> String {
        let nl = self.newline;
        let mut out = format!("---{nl}");
        for l in &self.lines {
            out.push_str(l);
            out.push_str(nl);
        }
        out.push_str("---");
        out.push_str(nl);
        out.push_str(&self.body);
        out.push_str(&self.comments);
        out
    }

    /// Replaces the body, keeping the comments.
    pub fn set_body(&mut self, body: &str) {
        self.body = body.to_owned();
        if !self.comments.is_empty() && !self.body.ends_with('\n') {
            self.body.push_str(self.newline);
        }
    }

    /// Appends a comment under the marker.
    pub fn push_comment(&mut self, at: DateTime<Utc>, text: &str) {
        let nl = self.newline;
        if self.comments.is_empty() {
            if !self.body.is_empty() && !self.body.ends_with('\n') {
                self.body.push_str(nl);
            }
            self.comments = format!("{nl}{COMMENTS_MARKER}{nl}");
        } else if !self.comments.ends_with('\n') {
            self.comments.push_str(nl);
        }
        let text = text.trim_end().replace("\r\n", "\n").replace('\n', nl);
        self.comments.push_str(&format!(
            "{nl}**ralph** commented at {}:{nl}{nl}{text}{nl}",
            at.format("%Y-%m-%dT%H:%M:%SZ")
        ));
    }
}

/// Splits `a, "b, c", d` at commas outside quotes.
fn split_flow_list(inner: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        match quote {
            Some(q) => {
                current.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == ',' => items.push(std::mem::take(&mut current)),
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                current.push(c);
            }
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|i| unquote(i.trim()))
        .filter(|i| !i.is_empty())
        .collect()
}

/// Removes one level of `"…"` (with `\"` and `\\` escapes) or `'…'` (with `''`) quoting.
fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        let mut out = String::new();
        let mut chars = v[1..v.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else {
                out.push(c);
            }
        }
        out
    } else if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        v[1..v.len() - 1].replace("''", "'")
    } else {
        v.to_owned()
    }
}

/// Quotes a list item when it would not read back as itself.
fn quote(v: &str) -> String {
    let plain = !v.is_empty()
        && v.trim() == v
        && !v.contains([',', '[', ']', '"', '\'', '#', ':', '\\', '\n', '\r'])
        && !v.starts_with(['-', '{', '&', '*', '!', '|', '>', '%', '@', '`']);
    if plain {
        v.to_owned()
    } else {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "---\ntitle: Add a widget\nlabels: [ready, \"needs: design\", bug]\nstate: open\n# a comment\npriority: high\n---\n## Tasks\n\n- [ ] one\n- [x] two\n";

    #[test]
    fn parses_keys_lists_and_body() {
        let f = IssueFile::parse(SAMPLE).unwrap();
        assert_eq!(f.get("title").as_deref(), Some("Add a widget"));
        assert_eq!(f.get_list("labels"), ["ready", "needs: design", "bug"]);
        assert_eq!(f.get("state").as_deref(), Some("open"));
        assert_eq!(f.get_list("assignees"), Vec::<String>::new());
        assert_eq!(f.body, "## Tasks\n\n- [ ] one\n- [x] two\n");
        assert_eq!(f.comments, "");
        assert_eq!(f.render(), SAMPLE);
    }

    #[test]
    fn block_lists_quotes_and_single_values() {
        let text = "---\ntitle: 'It''s here'\nlabels:\n  - ready\n  - \"a, b\"\nassignees: alice\n---\nbody";
        let f = IssueFile::parse(text).unwrap();
        assert_eq!(f.get("title").as_deref(), Some("It's here"));
        assert_eq!(f.get_list("labels"), ["ready", "a, b"]);
        assert_eq!(f.get_list("assignees"), ["alice"]);
        assert_eq!(f.body, "body");
    }

    #[test]
    fn label_edits_touch_only_their_line() {
        let mut f = IssueFile::parse(SAMPLE).unwrap();
        f.set_list("labels", &["in-progress".into(), "needs: design".into()]);
        let want = SAMPLE.replace(
            "labels: [ready, \"needs: design\", bug]",
            "labels: [in-progress, \"needs: design\"]",
        );
        assert_eq!(f.render(), want);
        // A block list collapses into one flow line; other keys stay.
        let text = "---\ntitle: T\nlabels:\n  - a\n  - b\nstate: open\n---\nx\n";
        let mut f = IssueFile::parse(text).unwrap();
        f.set_list("labels", &["c".into()]);
        assert_eq!(
            f.render(),
            "---\ntitle: T\nlabels: [c]\nstate: open\n---\nx\n"
        );
        // A missing key is appended.
        let mut f = IssueFile::parse("---\ntitle: T\n---\nx").unwrap();
        f.set_list("labels", &["ready".into()]);
        assert_eq!(f.render(), "---\ntitle: T\nlabels: [ready]\n---\nx");
        assert_eq!(f.get_list("labels"), ["ready"]);
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let text = "---\r\ntitle: T\r\nlabels: [a]\r\n---\r\n- [ ] one\r\n";
        let mut f = IssueFile::parse(text).unwrap();
        assert_eq!(f.get("title").as_deref(), Some("T"));
        assert_eq!(f.body, "- [ ] one\r\n");
        f.set_list("labels", &["b".into()]);
        assert_eq!(
            f.render(),
            "---\r\ntitle: T\r\nlabels: [b]\r\n---\r\n- [ ] one\r\n"
        );
        f.push_comment(DateTime::from_timestamp(0, 0).unwrap(), "hi\nthere");
        assert!(f.render().ends_with(
            "\r\n<!-- ralph comments -->\r\n\r\n**ralph** commented at 1970-01-01T00:00:00Z:\r\n\r\nhi\r\nthere\r\n"
        ));
    }

    #[test]
    fn comments_follow_the_marker_and_are_not_body() {
        let mut f = IssueFile::parse("---\ntitle: T\n---\n- [ ] one").unwrap();
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        f.push_comment(at, "first\n");
        f.push_comment(at, "- [ ] not a requirement");
        let text = f.render();
        let back = IssueFile::parse(&text).unwrap();
        assert_eq!(back.body, "- [ ] one\n");
        assert!(back.comments.starts_with(&format!("\n{COMMENTS_MARKER}")));
        assert!(back.comments.contains("first\n"));
        assert!(back.comments.contains("- [ ] not a requirement"));
        // Replacing the body keeps the comments.
        let mut back = back;
        back.set_body("- [x] one");
        let again = IssueFile::parse(&back.render()).unwrap();
        assert_eq!(again.body, "- [x] one\n");
        assert_eq!(again.comments, back.comments);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let cases = [
            ("no front matter", "front-matter"),
            ("---\ntitle: T\nbody", "not closed"),
            ("---\nlabels: [a]\n---\n", "no `title:`"),
            ("---\ntitle: T\nstate: merged\n---\n", "not a state"),
            ("---\ntitle: T\ncreated: yesterday\n---\n", "RFC 3339"),
            ("---\ntitle: T\njust words\n---\n", "not `key: value`"),
        ];
        for (text, want) in cases {
            let err = IssueFile::parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn quoting_round_trips() {
        for v in [
            "plain",
            "with space",
            "a,b",
            "needs: x",
            "\"q\"",
            "back\\slash",
            "-dash",
            "🚀 ship",
        ] {
            let mut f = IssueFile::parse("---\ntitle: T\n---\n").unwrap();
            f.set_list("labels", &[v.to_owned(), "z".into()]);
            let back = IssueFile::parse(&f.render()).unwrap();
            assert_eq!(back.get_list("labels"), [v, "z"], "{v}");
        }
    }
}
