//! The markdown pieces every rendering of a run shares — pull request body, escalation comment,
//! job summary, run summary, verification report: one rule for a table cell, one ranking table,
//! one line of check results.

use crate::run_report::{CheckReport, RoundReport};
use std::fmt::Write as _;

/// Text made safe for one markdown table cell: inert (see [`inert`]), `|` escaped, line
/// breaks turned into spaces.
pub fn cell(text: &str) -> String {
    inert(text)
        .replace('|', "\\|")
        .replace("\r\n", " ")
        .replace(['\r', '\n'], " ")
}

/// Text an agent (or an issue, or a reviewer) wrote, made data for a markdown page on any forge
/// ralph posts to: it can neither act nor load anything. Into code spans, where no forge
/// notifies, links, closes or runs anything, go mentions (`@user`, `@org/team`); references —
/// GitHub's and Forgejo's issues (`#7`, `owner/repo#7`, `GH-7`), GitLab's merge requests
/// (`!7`), labels (`~bug`, `~"two words"`), milestones (`%v1.0`), epics (`&7`), snippets
/// (`$7`), iterations (`*iteration:…`), and any of them after a project path
/// (`group/project!7`); web addresses; and GitLab's quick actions, a `/command` opening a line
/// (`/merge`, `/approve`, `/close`, `/label`, `/assign`…), which GitLab would run with the
/// token's rights. So `Closes #7` closes nothing on any forge: only ralph's own `Fixes #N` line
/// does. `[`, `]`, `<`, `>` and unpaired backticks are escaped, so no image loads, no link or
/// HTML (a hidden comment, a forged marker of ralph's) is made; code spans, inert already, are
/// kept; ANSI escapes and other control characters are dropped.
pub fn inert(text: &str) -> String {
    let text = strip_ansi(text);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        // A code span is inert already: kept as it is (ralph's own `check` names too).
        if chars[i] == '`' {
            if let Some(end) = code_span_end(&chars, i) {
                out.extend(&chars[i..end]);
                i = end;
                continue;
            }
        }
        if let Some(end) = acting_token(&chars, i) {
            let token: String = chars[i..end].iter().collect();
            out.push('`');
            out.push_str(&token);
            out.push('`');
            i = end;
            continue;
        }
        match chars[i] {
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push_str("\\`"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// `text` as one inline code span, whatever backticks it holds (the fence is longer than its
/// longest run of them), on one line: a file name or a check name an agent chose, shown as data.
pub fn code(text: &str) -> String {
    let text = strip_ansi(text).replace(['\n', '\r'], " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

pub use crate::output::strip_ansi;

/// The end of the code span opening at `i` (a run of backticks closed by a run of the same
/// length on the same line), if it closes.
fn code_span_end(chars: &[char], i: usize) -> Option<usize> {
    let run = |from: usize| chars[from..].iter().take_while(|c| **c == '`').count();
    let open = run(i);
    let mut j = i + open;
    while j < chars.len() && chars[j] != '\n' {
        if chars[j] == '`' {
            let close = run(j);
            if close == open {
                return Some(j + close);
            }
            j += close;
        } else {
            j += 1;
        }
    }
    None
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// Whether `i` opens a line, spaces and tabs before it aside.
fn opens_line(chars: &[char], i: usize) -> bool {
    chars[..i]
        .iter()
        .rev()
        .take_while(|c| **c != '\n')
        .all(|c| *c == ' ' || *c == '\t')
}

/// Where a GitLab reference's name starting at `from` ends: a `"quoted name"` on one line, else
/// word characters, `.`, `:` and `-` (`v1.0`, `scope::value`), not ending in `.` or `:`.
fn reference_name(chars: &[char], from: usize) -> Option<usize> {
    if chars.get(from) == Some(&'"') {
        let close = chars[from + 1..]
            .iter()
            .take_while(|c| **c != '\n')
            .position(|c| *c == '"')?;
        return Some(from + close + 2);
    }
    let mut j = from;
    while j < chars.len() && (word_char(chars[j]) || matches!(chars[j], '.' | ':')) {
        j += 1;
    }
    while j > from && matches!(chars[j - 1], '.' | ':') {
        j -= 1;
    }
    (j > from).then_some(j)
}

/// Where the acting token starting at `i` ends (a mention, a reference, a web address, a
/// quick action), if one starts there.
pub(super) fn acting_token(chars: &[char], i: usize) -> Option<usize> {
    let at_word_start = i == 0 || !word_char(chars[i - 1]) && chars[i - 1] != '/';
    let run = |from: usize, ok: &dyn Fn(char) -> bool| {
        let mut j = from;
        while j < chars.len() && ok(chars[j]) {
            j += 1;
        }
        j
    };
    let digit_at = |k: usize| chars.get(k).is_some_and(char::is_ascii_digit);
    match chars[i] {
        // GitLab's quick actions: /merge, /label ~x… opening a line.
        '/' if opens_line(chars, i) && chars.get(i + 1).is_some_and(char::is_ascii_alphabetic) => {
            Some(run(i + 1, &|c| c.is_ascii_alphanumeric() || c == '_'))
        }
        // GitLab: !7 merge request, &7 epic, $7 snippet.
        '!' | '&' | '$' if at_word_start && digit_at(i + 1) => {
            Some(run(i + 1, &|c| c.is_ascii_digit()))
        }
        // GitLab: ~label, ~"two words", ~7; %milestone, %"v 1", %7.
        '~' | '%' if at_word_start => reference_name(chars, i + 1),
        // GitLab: *iteration:"name", *iteration:7.
        '*' if at_word_start
            && chars[i + 1..].iter().take(10).collect::<String>() == "iteration:" =>
        {
            reference_name(chars, i + 11)
        }
        // @user, @org/team
        '@' if at_word_start && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric()) => {
            Some(run(i + 1, &|c| word_char(c) || c == '/'))
        }
        // #7
        '#' if chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
            Some(run(i + 1, &|c| c.is_ascii_digit()))
        }
        // GH-7
        'G' | 'g'
            if at_word_start
                && chars
                    .get(i + 1)
                    .is_some_and(|c| c.eq_ignore_ascii_case(&'h'))
                && chars.get(i + 2) == Some(&'-')
                && chars.get(i + 3).is_some_and(char::is_ascii_digit) =>
        {
            Some(run(i + 3, &|c| c.is_ascii_digit()))
        }
        // owner/repo#7, group/project!7, group/project~label, group/project%v1…
        c if at_word_start && word_char(c) => {
            let end = run(i, &|c| word_char(c) || c == '.' || c == '/');
            let slash = chars[i..end].contains(&'/');
            let after_path = match chars.get(end) {
                Some('#' | '!' | '&' | '$') if slash && digit_at(end + 1) => {
                    Some(run(end + 1, &|c| c.is_ascii_digit()))
                }
                Some('~' | '%') if slash => reference_name(chars, end + 1),
                _ => None,
            };
            after_path.or_else(|| web_address(chars, i))
        }
        _ => None,
    }
}

/// The end of a web address (`http://`, `https://`, `www.`) starting at `i`.
fn web_address(chars: &[char], i: usize) -> Option<usize> {
    let starts = |p: &str| {
        p.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k).is_some_and(|x| x.eq_ignore_ascii_case(&c)))
    };
    if !(starts("http://") || starts("https://") || starts("www.")) {
        return None;
    }
    let mut j = i;
    while j < chars.len() && !chars[j].is_whitespace() && !matches!(chars[j], '`' | '<' | '>') {
        j += 1;
    }
    Some(j)
}

/// Which columns a ranking table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// rank, proposal, bot, total.
    Totals,
    /// The totals and the six dimension scores.
    Scores,
}

/// A round's ranking as a markdown table, best first, each line ending in a newline.
pub fn ranking_table(round: &RoundReport, columns: Columns) -> String {
    let mut out = match columns {
        Columns::Totals => "| rank | proposal | bot | total |\n|---|---|---|---|\n".to_owned(),
        Columns::Scores => "| rank | proposal | bot | total | spec | quality | innovation | risk | efficiency | specialist |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n".to_owned(),
    };
    for (rank, p) in round.ranked() {
        let _ = write!(
            out,
            "| {rank} | {} | {} | {:.3} |",
            cell(&p.proposal_id),
            cell(&p.bot_id),
            p.total_score
        );
        if columns == Columns::Scores {
            let s = &p.scores;
            for v in [
                s.spec_alignment,
                s.technical_quality,
                s.innovation,
                s.risk,
                s.efficiency,
                s.specialist_validation,
            ] {
                let _ = write!(out, " {v:.2} |");
            }
        }
        out.push('\n');
    }
    out
}

/// The checks of a round on one line: `` `test` ✅ passed`` joined by `separator`.
pub fn checks_line(checks: &[CheckReport], separator: &str) -> String {
    checks
        .iter()
        .map(|c| {
            let advisory = if c.advisory.is_some() {
                " (advisory)"
            } else {
                ""
            };
            format!("`{}` {}{advisory}", c.name, c.status.markdown())
        })
        .collect::<Vec<_>>()
        .join(separator)
}

/// A round's seats (`[marketplace] seats`) in a sentence: who was seated and why, who was
/// not, and what the numbers are. Prices are written `USD 0.25`: `$0` would be a GitLab
/// snippet reference, which `inert` breaks.
pub fn seats_line(s: &crate::market::seating::Seating) -> String {
    let usd = |line: String| inert(&line.replace('$', "USD "));
    let left_out = s
        .left_out_line()
        .map(|l| format!(" · {}", usd(l)))
        .unwrap_or_default();
    format!(
        "**Seats** — {}{left_out}. _Each number is the chance of winning and delivering the bot drew this round from its record in the ledger (Thompson sampling, seed {}), each price its cost per proposal; a bot is seated while the chance it adds is worth its price, and a bot with no record is seated to explore it._\n",
        usd(s.line()),
        s.seed
    )
}

/// The bots' standings as a markdown table, for the job summary after a run.
pub fn standings(state: &crate::ledger::LedgerState) -> String {
    let mut out = String::from(
        "| rank | bot | weight | efficiency | successes | failures | budget |\n|---|---|---|---|---|---|---|\n",
    );
    for (i, b) in state.bots.iter().enumerate() {
        let rank = if b.retired {
            "retired".to_owned()
        } else {
            (i + 1).to_string()
        };
        out.push_str(&format!(
            "| {rank} | {} | {:.3} | {:.0}% | {} | {} | {} |\n",
            cell(&b.bot_id),
            b.weight,
            b.efficiency * 100.0,
            b.successes,
            b.failures,
            b.budget
        ));
    }
    out
}

/// The checks that fail on the base as well, named with what that means; `None` when none do.
pub fn failing_on_base_note(checks: &[CheckReport]) -> Option<String> {
    let names: Vec<String> = checks
        .iter()
        .filter(|c| c.status == crate::run_report::CheckState::FailingOnBase)
        .map(|c| format!("`{}`", c.name))
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "_Failing on base: {} — failing on the base commit too, and no worse after the change; not held against it._",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inert_text_neither_mentions_references_links_nor_loads() {
        assert_eq!(
            inert("Closes #7 for @acme/everyone, see owner/repo#9 and GH-2"),
            "Closes `#7` for `@acme/everyone`, see `owner/repo#9` and `GH-2`"
        );
        assert_eq!(
            inert("![x](https://t.example/p.png) <img src=x>"),
            "!\\[x\\](`https://t.example/p.png)` &lt;img src=x&gt;"
        );
        assert_eq!(inert("a@b.com 3#4 x_y `c @d`"), "a@b.com 3`#4` x_y `c @d`");
        assert_eq!(inert("one ` alone"), "one \\` alone");
        assert_eq!(inert("\u{1b}[31mred\u{1b}[0m\r\n"), "red\n");
        assert_eq!(inert("plain text (ok) - fine."), "plain text (ok) - fine.");
    }

    #[test]
    fn gitlab_quick_actions_and_references_are_inert() {
        assert_eq!(
            inert("Done.\n/merge\n  /label ~security\n/approve"),
            "Done.\n`/merge`\n  `/label` `~security`\n`/approve`"
        );
        assert_eq!(inert("/close"), "`/close`");
        assert_eq!(
            inert("see !3, &4, $5, %v1.0, %\"Sprint 2\", ~\"needs review\", ~bug::high."),
            "see `!3`, `&4`, `$5`, `%v1.0`, `%\"Sprint 2\"`, `~\"needs review\"`, `~bug::high`."
        );
        assert_eq!(
            inert("group/project!7 and group/sub/project~bug *iteration:12"),
            "`group/project!7` and `group/sub/project~bug` `*iteration:12`"
        );
        // Ordinary text stays as it was.
        for plain in [
            "50% done, R&D, Wow! x/y, ~/path, a/b, 100 $ and 5$",
            "path /usr/bin in the middle",
            "1 * 2",
        ] {
            assert_eq!(inert(plain), plain, "{plain}");
        }
    }

    #[test]
    fn a_code_span_holds_any_backticks() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("plain"), "`plain`");
    }
    use crate::fixtures::{proposal, round};
    use crate::run_report::CheckState;

    #[test]
    fn cells_cannot_break_a_table() {
        assert_eq!(cell("a|b\nc\r\nd"), "a\\|b c d");
    }

    #[test]
    fn ranking_tables_follow_the_ranking() {
        let r = round(
            vec![
                proposal("proposal_1", "b1", 0.5),
                proposal("proposal_2", "b|2", 0.81234),
            ],
            &["proposal_2", "proposal_1"],
        );
        assert_eq!(
            ranking_table(&r, Columns::Totals),
            "| rank | proposal | bot | total |\n|---|---|---|---|\n| 1 | proposal_2 | b\\|2 | 0.812 |\n| 2 | proposal_1 | b1 | 0.500 |\n"
        );
        let full = ranking_table(&r, Columns::Scores);
        assert!(
            full.contains(
                "| 1 | proposal_2 | b\\|2 | 0.812 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 |\n"
            ),
            "{full}"
        );
    }

    #[test]
    fn check_lines() {
        let check = |name: &str, status| CheckReport {
            name: name.into(),
            passed: status == CheckState::Passed,
            status,
            duration_ms: 1,
            advisory: None,
        };
        let checks = [
            check("fmt", CheckState::Passed),
            check("lint", CheckState::Unavailable),
            check("types", CheckState::FailingOnBase),
            check("test", CheckState::Failed),
        ];
        assert_eq!(
            checks_line(&checks, ", "),
            "`fmt` ✅ passed, `lint` ➖ unavailable, `types` ⚠️ failing on base, `test` ❌ failed"
        );
        assert_eq!(
            failing_on_base_note(&checks).unwrap(),
            "_Failing on base: `types` — failing on the base commit too, and no worse after the change; not held against it._"
        );
        assert_eq!(failing_on_base_note(&checks[..1]), None);
    }
}
