//! What `ralph follow` says: the reply on a pull request after a revision round (what changed
//! for each request, what was not done and why), the escalation comment, the lines of the
//! terminal story and the job summary's section. Every comment ralph writes on a pull request
//! starts with the reply marker, so `follow` never reads its own words as feedback.

use super::markdown::{cell, checks_line, inert};
use crate::follow_report::{FollowAction, FollowReport, PullReport, RevisionItem, RevisionReport};
use std::fmt::Write as _;

/// How every comment `follow` writes begins (an HTML comment: invisible on GitHub). A reply
/// after a passing revision names the feedback it answered: `<!-- ralph:follow answered:
/// review-1 inline-2 -->`.
pub const REPLY_MARKER: &str = "<!-- ralph:follow";

/// The word before the answered feedback ids in the marker.
pub const ANSWERED: &str = "answered:";

/// Where a broken CI check's request is from, in a revision's items.
pub const CI_PLACE: &str = "CI";

/// The longest request shown in a table cell.
const MAX_CELL: usize = 160;

fn short(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_CELL) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// The reply on the pull request after a revision round.
pub fn revision_reply(r: &RevisionReport) -> String {
    let mut out = reply_marker(r);
    let _ = writeln!(out, "{}\n", reply_head(r));
    if let Some(s) = r.summary.as_deref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "> {}\n", inert(&short(s)));
    }
    if !r.items.is_empty() {
        out.push_str("| request | where | done | what happened |\n|---|---|---|---|\n");
        for i in &r.items {
            out.push_str(&request_row(i));
        }
        out.push('\n');
    }
    if !r.passed && !r.reasons.is_empty() {
        out.push_str("Why it failed:\n");
        for reason in &r.reasons {
            let _ = writeln!(out, "- {}", inert(&short(reason)));
        }
        out.push('\n');
    }
    if !r.checks.is_empty() {
        let _ = writeln!(out, "Checks: {}", checks_line(&r.checks, " · "));
    }
    out
}

/// The reply's first line, the marker; after a revision that passed and was pushed, it names
/// the feedback answered (a broken CI check is no one's feedback).
fn reply_marker(r: &RevisionReport) -> String {
    let answered: Vec<&str> = r
        .items
        .iter()
        .filter(|i| r.passed && r.push_error.is_none() && i.place != CI_PLACE)
        .map(|i| i.source.as_str())
        .collect();
    if answered.is_empty() {
        format!("{REPLY_MARKER} -->\n")
    } else {
        format!("{REPLY_MARKER} {ANSWERED} {} -->\n", answered.join(" "))
    }
}

/// The reply's headline: the revision pushed, committed, not pushed, unverifiable or failed.
fn reply_head(r: &RevisionReport) -> String {
    let (round, max) = (r.round, r.max);
    if let (true, Some(why)) = (r.passed, &r.push_error) {
        format!(
            "**ralph** revised this pull request (revision {round} of {max}) but could not push it ({}): the next `ralph follow` tries again.",
            short(why)
        )
    } else if r.passed {
        let pushed = match (&r.commit, r.pushed) {
            (Some(c), true) => format!("pushed {}", &c[..c.len().min(10)]),
            (Some(c), false) => format!("committed {} (not pushed)", &c[..c.len().min(10)]),
            (None, _) => "nothing committed".into(),
        };
        format!("**ralph** revised this pull request (revision {round} of {max}): {pushed}.")
    } else if let Some(env) = &r.environment {
        format!(
            "**ralph** could not revise this pull request (revision {round} of {max}): nothing could be verified — {}. Nothing was pushed.",
            short(env)
        )
    } else {
        format!(
            "**ralph** tried to revise this pull request (revision {round} of {max}) and could not: nothing was pushed."
        )
    }
}

/// One request's row in the reply's table: the request, where it is from and by whom, done
/// or not, what happened.
fn request_row(i: &RevisionItem) -> String {
    // The reviewer is named (and notified) by ralph: a login, nothing else.
    let by = i
        .author
        .as_deref()
        .map(|a| {
            a.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        })
        .filter(|a| !a.is_empty())
        .map(|a| format!(" (@{a})"))
        .unwrap_or_default();
    format!(
        "| {} | {}{} | {} | {} |\n",
        cell(&short(&i.request)),
        cell(&i.place),
        by,
        if i.done { "✅ done" } else { "❌ not done" },
        cell(&short(&i.note))
    )
}

/// The comment that hands a pull request (and its issue) to a human; `pr` is how the forge
/// refers to it (`#7`, GitLab's `!7`).
pub fn escalation(pr: &str, reason: &str, revision: Option<&RevisionReport>) -> String {
    let mut out = format!(
        "{REPLY_MARKER}\n**ralph** needs a human for pull request {pr}: {}.\n\n",
        inert(reason)
    );
    if let Some(r) = revision {
        let open: Vec<String> = r
            .items
            .iter()
            .filter(|i| !i.done)
            .map(|i| {
                format!(
                    "- {} ({}): {}",
                    inert(&short(&i.request)),
                    inert(&i.place),
                    inert(&short(&i.note))
                )
            })
            .collect();
        if !open.is_empty() {
            out.push_str("Still open:\n");
            out.push_str(&open.join("\n"));
            out.push_str("\n\n");
        }
    }
    out.push_str(
        "ralph will not revise it again while it carries `attention-needed`; remove the label to hand it back.\n",
    );
    out
}

/// One pull request's line in the terminal story.
pub fn terminal_line(p: &PullReport) -> String {
    use crate::tracker::pulls::PullState;
    let state = match p.state {
        PullState::Open => "open",
        PullState::Closed => "closed",
        PullState::Merged => "merged",
    };
    let issue = p
        .issue
        .map(|i| format!(" for issue #{i}"))
        .unwrap_or_default();
    std::iter::once(format!("#{}{issue} ({state})", p.number))
        .chain(what_happened(p))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// What `follow` did with a pull request, phrase by phrase: what it settled, the revision,
/// the escalation or why it left it, the feedback it ignored.
fn what_happened(p: &PullReport) -> Vec<String> {
    let mut parts = Vec::new();
    if !p.settled.is_empty() {
        let settled: Vec<&str> = p.settled.iter().map(|o| o.as_str()).collect();
        let bot = p.bot.as_deref().unwrap_or("?");
        parts.push(format!("settled {} for {bot}", settled.join(", ")));
    }
    if let Some(r) = &p.revision {
        parts.push(revision_phrase(r));
    }
    match &p.action {
        FollowAction::Escalated { reason } => parts.push(format!("escalated: {reason}")),
        FollowAction::Left { reason } if p.settled.is_empty() && p.revision.is_none() => {
            parts.push(reason.clone())
        }
        _ => {}
    }
    if !p.ignored.is_empty() {
        parts.push(format!("{} piece(s) of feedback ignored", p.ignored.len()));
    }
    parts
}

/// `revision 1/3 passed: 2 of 2 request(s) done, pushed`.
fn revision_phrase(r: &RevisionReport) -> String {
    let how = if r.passed && r.push_error.is_some() {
        "passed but could not be pushed: tried again next time".to_owned()
    } else if r.passed {
        let done = r.items.iter().filter(|i| i.done).count();
        let pushed = if r.pushed { ", pushed" } else { "" };
        format!(
            "passed: {done} of {} request(s) done{pushed}",
            r.items.len()
        )
    } else if r.environment.is_some() {
        "could not be verified (the environment)".into()
    } else {
        "failed".into()
    };
    format!("revision {}/{} {how}", r.round, r.max)
}

/// The job summary's section: a table of what `follow` did.
pub fn summary(report: &FollowReport) -> String {
    if report.pulls.is_empty() {
        return "### ralph follow\n\nNo pull request of ralph's to follow.\n".into();
    }
    let mut out = String::from(
        "### ralph follow\n\n| pull request | issue | what happened |\n|---|---|---|\n",
    );
    for p in &report.pulls {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            p.url
                .as_deref()
                .map(|u| format!("[#{}]({u})", p.number))
                .unwrap_or_else(|| format!("#{}", p.number)),
            p.issue.map(|i| format!("#{i}")).unwrap_or_default(),
            cell(&what_happened(p).join(" · "))
        );
    }
    out
}
