//! The output layer: data to stdout, progress, warnings and errors to stderr; colour decided
//! once from `--color`, `NO_COLOR` and whether the stream is a terminal; and sanitising of any
//! text that came from outside (file names, issue text, model output) before it is printed.
//! Everything printed passes the secret redactor ([`crate::secret::redact`]).

use crate::secret::redact;
use anstyle::{AnsiColor, Style};
use serde::Serialize;
use std::io::{self, IsTerminal, Write};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and NO_COLOR is not set
    #[default]
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (or is not) a terminal.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = crate::env::is_set(crate::env::NO_COLOR);
                let dumb = crate::env::get(crate::env::TERM).is_some_and(|t| t == "dumb");
                is_terminal && !no_color && !dumb
            }
        }
    }
}

/// Styles text when colour is on, and leaves it alone otherwise. Output reads the same
/// without colour: colour never carries meaning on its own.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    enabled: bool,
}

impl Paint {
    pub fn new(enabled: bool) -> Paint {
        Paint { enabled }
    }

    pub fn plain() -> Paint {
        Paint { enabled: false }
    }

    /// Whether colour is on.
    pub fn enabled(self) -> bool {
        self.enabled
    }

    fn apply(self, style: Style, text: &str) -> String {
        if self.enabled {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_owned()
        }
    }

    pub fn error(self, text: &str) -> String {
        self.apply(AnsiColor::Red.on_default().bold(), text)
    }
    pub fn warn(self, text: &str) -> String {
        self.apply(AnsiColor::Yellow.on_default().bold(), text)
    }
    pub fn hint(self, text: &str) -> String {
        self.apply(AnsiColor::Cyan.on_default().bold(), text)
    }
    pub fn good(self, text: &str) -> String {
        self.apply(AnsiColor::Green.on_default(), text)
    }
    pub fn bad(self, text: &str) -> String {
        self.apply(AnsiColor::Red.on_default(), text)
    }
    pub fn bold(self, text: &str) -> String {
        self.apply(Style::new().bold(), text)
    }
    pub fn dim(self, text: &str) -> String {
        self.apply(Style::new().dimmed(), text)
    }
}

/// `text` without ANSI escape sequences and control characters (tabs and line breaks kept).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI (`ESC [ … letter`) and OSC (`ESC ] … BEL or ESC \\`); else the next char.
                match chars.next() {
                    Some('[') => {
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Replaces control characters (ANSI escapes, carriage returns, NUL…) and Unicode
/// bidirectional or invisible formatting characters with `�`, so that outside text can never
/// move the cursor, recolour the terminal or reorder what the user reads. Tabs become spaces.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' => ' ',
            c if c.is_control() || is_invisible_format(c) => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// Bidi controls, zero-width characters and other invisible formatting code points.
pub fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{061c}' | '\u{180e}' | '\u{00ad}')
}

/// Where a command's output goes.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    json: bool,
    quiet: bool,
    out: Paint,
    err: Paint,
}

impl Printer {
    pub fn new(json: bool, quiet: bool, color: ColorChoice) -> Printer {
        Printer {
            json,
            quiet,
            out: Paint::new(color.enabled(io::stdout().is_terminal())),
            err: Paint::new(color.enabled(io::stderr().is_terminal())),
        }
    }

    /// `--json` was given: data goes out as JSON.
    pub fn json_mode(&self) -> bool {
        self.json
    }

    /// Styling for stdout.
    pub fn paint(&self) -> Paint {
        self.out
    }

    /// Styling for stderr.
    pub fn paint_err(&self) -> Paint {
        self.err
    }

    /// Writes data to stdout. A closed pipe surfaces as an `io::Error` the caller propagates
    /// (and `main` turns into a quiet exit 0).
    pub fn data(&self, text: &str) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(redact(text).as_bytes())?;
        out.flush()
    }

    /// Writes a value as pretty JSON and a newline to stdout.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        text.push('\n');
        self.data(&text)
    }

    /// A progress or status line on stderr (hidden by `-q`), above the live view when one is
    /// drawn.
    pub fn status(&self, text: &str) {
        if !self.quiet {
            let text = redact(text);
            crate::progress::suspend_for(|| eprintln!("{text}"));
        }
    }

    /// Whether status lines are shown (not `-q`).
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// A warning on stderr (shown even with `-q`).
    pub fn warn(&self, text: &str) {
        let line = format!("{} {}", self.err.warn("warning:"), sanitize(&redact(text)));
        crate::progress::suspend_for(|| eprintln!("{line}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_neutralises_escapes_and_bidi() {
        assert_eq!(sanitize("plain text ✓ 日本"), "plain text ✓ 日本");
        assert_eq!(sanitize("a\u{1b}[2Jb"), "a\u{fffd}[2Jb");
        assert_eq!(sanitize("evil\u{202e}gnp.exe"), "evil\u{fffd}gnp.exe");
        assert_eq!(
            sanitize("zero\u{200b}width\r\n"),
            "zero\u{fffd}width\u{fffd}\u{fffd}"
        );
        assert_eq!(sanitize("a\tb"), "a b");
    }

    #[test]
    fn paint_is_transparent_without_colour() {
        let p = Paint::plain();
        assert_eq!(p.error("error:"), "error:");
        let c = Paint::new(true);
        assert!(c.error("error:").contains("\u{1b}["));
        assert!(c.error("error:").contains("error:"));
    }

    #[test]
    fn explicit_colour_choices_ignore_the_terminal() {
        assert!(ColorChoice::Always.enabled(false));
        assert!(!ColorChoice::Never.enabled(true));
        assert!(!ColorChoice::Auto.enabled(false));
    }
}
