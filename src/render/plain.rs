//! Text a forge reads without rendering it as markdown — a commit message, a pull or merge
//! request title — made inert when it carries words ralph did not write (an agent's summary,
//! an issue's title). Code spans protect nothing there (a forge reads `Closes #7` in a commit
//! message wherever it stands, and GitHub closes the issue when the commit reaches the default
//! branch), so each token that would act is broken where it acts, visibly: the tokens are the
//! ones [`super::markdown::inert`] wraps in code spans, found by the same reader.

use super::markdown::{acting_token, strip_ansi};

/// `text` with every reference, mention, web address and quick action broken so that no forge
/// closes, links, notifies or runs anything from it: `Closes #7` becomes `Closes # 7`, `@all`
/// `@ all`, `owner/repo#7` `owner/repo# 7`, `GH-7` `GH- 7`, `!7` `! 7`, `~bug` `~ bug`,
/// `https://host/x` `https[:]//host/x`, and a `/merge` opening a line `\/merge`. ANSI escapes
/// and control characters other than line breaks and tabs are dropped; nothing else changes.
pub fn inert(text: &str) -> String {
    let text: String = strip_ansi(text)
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect();
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        match acting_token(&chars, i) {
            Some(end) => {
                let token: String = chars[i..end].iter().collect();
                out.push_str(&broken(&token));
                i = end;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// One acting token, broken where a forge's reader would take it.
fn broken(token: &str) -> String {
    let lower = token.to_ascii_lowercase();
    for scheme in ["https://", "http://"] {
        if lower.starts_with(scheme) {
            let colon = scheme.len() - 3;
            return format!("{}[:]{}", &token[..colon], &token[colon + 1..]);
        }
    }
    if lower.starts_with("www.") {
        return format!("{}[.]{}", &token[..3], &token[4..]);
    }
    if token.starts_with('/') {
        return format!("\\{token}");
    }
    let sigil = if lower.starts_with("*iteration:") {
        Some("*iteration".len())
    } else if lower.starts_with("gh-") {
        Some(2)
    } else {
        token.find(['#', '@', '!', '&', '$', '~', '%'])
    };
    match sigil {
        Some(k) => format!("{} {}", &token[..=k], &token[k + 1..]),
        None => token.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_patterns_references_and_mentions_are_broken() {
        assert_eq!(
            inert("Closes #15, fixes #16.\nResolves owner/repo#9 for @all and @acme/team, GH-2"),
            "Closes # 15, fixes # 16.\nResolves owner/repo# 9 for @ all and @ acme/team, GH- 2"
        );
        assert_eq!(
            inert("fixes https://github.com/o/r/issues/3 and WWW.example.org"),
            "fixes https[:]//github.com/o/r/issues/3 and WWW[.]example.org"
        );
        // Code spans protect nothing in a commit message.
        assert_eq!(inert("`Closes #4`"), "`Closes # 4`");
    }

    #[test]
    fn gitlab_quick_actions_and_references_are_broken() {
        assert_eq!(
            inert("Done.\n/merge\n  /label ~security\n/approve"),
            "Done.\n\\/merge\n  \\/label ~ security\n\\/approve"
        );
        assert_eq!(
            inert("see !3, &4, $5, %v1.0, ~\"needs review\", group/project!7 *iteration:12"),
            "see ! 3, & 4, $ 5, % v1.0, ~ \"needs review\", group/project! 7 *iteration: 12"
        );
    }

    #[test]
    fn ordinary_text_is_kept_and_control_characters_dropped() {
        for plain in [
            "Add multiplication to the calculator",
            "50% done, R&D, Wow! x/y, ~/path, a/b, 100 $ and 5$, 1 * 2, a@b.com",
            "path /usr/bin in the middle\n\n- a list\n\tindented",
            "[link](x) <b>not html here</b>",
        ] {
            assert_eq!(inert(plain), plain, "{plain}");
        }
        assert_eq!(inert("\u{1b}[31mred\u{1b}[0m\u{7}\r\n"), "red\n");
    }
}
