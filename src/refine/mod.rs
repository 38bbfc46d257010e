//! `ralph refine N` (docs/refine.md): from an issue as people write it — a title, prose, a stack
//! trace — to the checkbox spec a competition needs. The `refine` role (the arbiter, prompt
//! `prompts/refine.md`) answers with the problem restated, atomic checkable requirements with
//! their rationale, implicit requirements and questions for the author; for an issue that
//! already has open checkboxes it reviews them instead (gaps, ambiguities, untestable items).
//! This module is the pure part: the answer and its checks, the comment, and the task-list
//! section written into the body between markers, every other byte kept ([`run`] does the
//! work around it).

pub mod run;

use crate::agent::protocol::{Answer, AnswerContext};
use serde::{Deserialize, Serialize};

/// Where the drafted task list starts in an issue's body.
pub const MARK_START: &str = "<!-- ralph:requirements -->";
/// Where it ends: `<!-- /ralph:requirements FINGERPRINT -->`, the fingerprint of the text
/// ralph wrote, so a section edited by hand is told apart (and left alone).
const MARK_END_OPEN: &str = "<!-- /ralph:requirements";
/// The first line of a draft or review comment (how `ralph queue --refine` knows one exists).
pub const COMMENT_MARK: &str = "<!-- ralph:refine -->";

/// The most requirements a draft keeps.
const MAX_ITEMS: usize = 30;
/// The longest line kept from a model.
const MAX_LINE: usize = 300;

/// One drafted requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drafted {
    pub text: String,
    #[serde(default)]
    pub rationale: String,
}

/// A problem with one of the issue's checkboxes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub note: String,
}

/// The `refine` role's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefineAnswer {
    pub problem: String,
    #[serde(default)]
    pub requirements: Vec<Drafted>,
    #[serde(default)]
    pub implicit_requirements: Vec<Drafted>,
    #[serde(default)]
    pub questions: Vec<String>,
    /// Review mode only: the checkboxes with a problem.
    #[serde(default)]
    pub review: Vec<Finding>,
}

/// A model's text as one clean line: control and invisible characters removed, `@mentions`
/// defused (a comment must not ping people), a task-list prefix dropped, cut at [`MAX_LINE`].
fn line(text: &str) -> String {
    let flat = crate::output::sanitize(&text.replace(['\r', '\n', '\t'], " "));
    let mut t = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    for prefix in ["- [ ] ", "- [x] ", "- [X] ", "* [ ] ", "- ", "* "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest.to_owned();
        }
    }
    let mut t = t.replace('@', "@\u{2060}");
    if t.chars().count() > MAX_LINE {
        t = t.chars().take(MAX_LINE - 1).collect::<String>() + "…";
    }
    t
}

fn clean(items: &mut Vec<Drafted>) {
    for d in items.iter_mut() {
        d.text = line(&d.text);
        d.rationale = line(&d.rationale);
    }
    items.retain(|d| !d.text.is_empty());
    items.truncate(MAX_ITEMS);
}

impl Answer for RefineAnswer {
    /// Review mode when the context names the issue's requirement ids; a draft otherwise, which
    /// must hold at least one requirement.
    fn validate(&mut self, ctx: &AnswerContext) -> Result<(), String> {
        self.problem = line(&self.problem);
        if self.problem.is_empty() {
            return Err("`problem` is empty".into());
        }
        clean(&mut self.requirements);
        clean(&mut self.implicit_requirements);
        self.questions = self
            .questions
            .iter()
            .map(|q| line(q))
            .filter(|q| !q.is_empty())
            .take(MAX_ITEMS)
            .collect();
        let reviewing = !ctx.requirement_ids.is_empty();
        if reviewing {
            self.review.retain(|f| ctx.requirement_ids.contains(&f.id));
            for f in &mut self.review {
                f.note = line(&f.note);
                f.kind = match f.kind.as_str() {
                    "gap" | "ambiguity" | "untestable" => f.kind.clone(),
                    _ => "note".into(),
                };
            }
        } else {
            self.review.clear();
            if self.requirements.is_empty() {
                return Err("`requirements` is empty: draft at least one requirement".into());
            }
        }
        Ok(())
    }
}

/// The drafted task list: `## Requirements` and a `- [ ]` line per requirement.
pub fn task_list(a: &RefineAnswer, nl: &str) -> String {
    let mut out = format!("## Requirements{nl}{nl}");
    for r in &a.requirements {
        out.push_str(&format!("- [ ] {}{nl}", r.text));
    }
    out
}

/// `body` with the drafted task list between the markers: a previous ralph section replaced,
/// else the section appended; every other byte kept, CRLF bodies answered in CRLF.
pub fn write_into(body: &str, a: &RefineAnswer) -> String {
    let nl = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let list = task_list(a, nl);
    let section = format!(
        "{MARK_START}{nl}{list}{MARK_END_OPEN} {} -->",
        fingerprint(&list)
    );
    if let Some(found) = section_span(body) {
        return format!("{}{section}{}", &body[..found.start], &body[found.end..]);
    }
    let mut out = body.to_owned();
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push_str(nl);
        }
        out.push_str(nl);
    }
    out.push_str(&section);
    out.push_str(nl);
    out
}

/// ralph's section in a body.
struct Section {
    /// From the start marker to the end of the end marker.
    start: usize,
    end: usize,
    /// The text has changed since ralph wrote it.
    edited: bool,
}

/// FNV-1a (64 bits) of the text with line ends and trailing blanks normalised: enough to see
/// an edit, not a security measure.
fn fingerprint(text: &str) -> String {
    let mut h = crate::mix::Fnv1a::default();
    for line in text.lines() {
        h.eat(line.trim_end().as_bytes());
        h.eat(b"\n");
    }
    format!("{:016x}", h.finish())
}

/// Where ralph's section is in `body`, and whether it was edited by hand.
fn section_span(body: &str) -> Option<Section> {
    let start = body.find(MARK_START)?;
    let inner = start + MARK_START.len();
    let close = inner + body[inner..].find(MARK_END_OPEN)?;
    let tail = close + MARK_END_OPEN.len();
    let end = tail + body[tail..].find("-->")? + "-->".len();
    let stored = body[tail..end - 3].trim();
    let text = body[inner..close].trim_start_matches(['\r', '\n']);
    Some(Section {
        start,
        end,
        // A section without a fingerprint (an older ralph's) counts as ralph's own.
        edited: !stored.is_empty() && stored != fingerprint(text),
    })
}

/// Whether the body has ralph's section and someone edited it since ralph wrote it.
pub fn section_edited(body: &str) -> bool {
    section_span(body).is_some_and(|s| s.edited)
}

/// `body` without ralph's section: what the author wrote. The section is ralph's own, so its
/// checkboxes neither make a second `ralph refine` a review nor reach the agent as the issue —
/// unless it was edited by hand: then it is the author's, and a second `ralph refine` reviews it.
pub fn authored(body: &str) -> String {
    match section_span(body) {
        Some(s) if !s.edited => format!("{}{}", &body[..s.start], &body[s.end..]),
        _ => body.to_owned(),
    }
}

/// Whether the issue has a ralph draft already: the section in its body or a draft comment.
pub fn has_draft(body: &str, comments: &[String]) -> bool {
    body.contains(MARK_START) || comments.iter().any(|c| c.contains(COMMENT_MARK))
}

/// The comment on the issue: the draft (or the review), how to accept it, the questions.
pub fn comment(issue: u64, a: &RefineAnswer, review: bool, written: bool) -> String {
    let mut md = format!("{COMMENT_MARK}\n");
    if review {
        md.push_str("**ralph reviewed this issue's requirements.**\n\n");
    } else {
        md.push_str("**ralph drafted requirements for this issue.**\n\n");
    }
    md.push_str(&format!("**The problem, as I read it:** {}\n", a.problem));
    if review {
        if a.review.is_empty() {
            md.push_str("\nThe checkboxes look atomic, unambiguous and checkable.\n");
        } else {
            md.push_str("\n**The checkboxes:**\n\n");
            for f in &a.review {
                md.push_str(&format!("- `{}` — {}: {}\n", f.id, f.kind, f.note));
            }
        }
        if !a.requirements.is_empty() {
            md.push_str("\n**To add:**\n\n");
            for r in &a.requirements {
                md.push_str(&format!("- [ ] {} — _{}_\n", r.text, r.rationale));
            }
        }
    } else if written {
        md.push_str(&format!(
            "\nThe requirements are now in the issue's body, in the section ralph marks with hidden comments (a later `ralph refine {issue} --write` replaces only that section). Edit them as you see fit, then mark the issue ready with `ralph ready {issue}`.\n\n"
        ));
        for r in &a.requirements {
            md.push_str(&format!("- {} — _{}_\n", r.text, r.rationale));
        }
    } else {
        md.push_str(&format!(
            "\nPaste this into the issue's body (or run `ralph refine {issue} --write`), edit it as you see fit, then mark the issue ready with `ralph ready {issue}`:\n\n```markdown\n{}```\n\n**Why each one:**\n\n",
            task_list(a, "\n")
        ));
        for r in &a.requirements {
            md.push_str(&format!("- {} — _{}_\n", r.text, r.rationale));
        }
    }
    if !a.implicit_requirements.is_empty() {
        md.push_str("\n**Also expected of any change** (implicit requirements):\n\n");
        for r in &a.implicit_requirements {
            md.push_str(&format!("- {} — _{}_\n", r.text, r.rationale));
        }
    }
    if !a.questions.is_empty() {
        md.push_str("\n**Questions for the author:**\n\n");
        for (i, q) in a.questions.iter().enumerate() {
            md.push_str(&format!("{}. {q}\n", i + 1));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::protocol::parse_answer;

    fn answer() -> RefineAnswer {
        let text = r#"Here is my draft.
```json
{"problem": "The CLI\nprints nothing on --verbose.",
 "requirements": [{"text": "- [ ] `--verbose` prints each step to stderr", "rationale": "the issue asks @octocat for it"},
                  {"text": "  ", "rationale": "empty, dropped"},
                  {"text": "A test covers `--verbose`", "rationale": "checkable"}],
 "implicit_requirements": [{"text": "Quiet output stays unchanged", "rationale": "compatibility"}],
 "questions": ["Should -v be an alias?", ""],
 "review": [{"id": "req_1", "kind": "gap", "note": "ignored in a draft"}]}
```"#;
        parse_answer(text, &AnswerContext::default()).unwrap()
    }

    #[test]
    fn a_draft_is_cleaned_and_must_hold_a_requirement() {
        let a = answer();
        assert_eq!(a.problem, "The CLI prints nothing on --verbose.");
        assert_eq!(a.requirements.len(), 2);
        assert_eq!(
            a.requirements[0].text,
            "`--verbose` prints each step to stderr"
        );
        assert_eq!(
            a.requirements[0].rationale,
            "the issue asks @\u{2060}octocat for it"
        );
        assert_eq!(a.questions, ["Should -v be an alias?"]);
        assert!(a.review.is_empty(), "a draft has no review");
        let err = parse_answer::<RefineAnswer>(
            r#"{"problem": "p", "requirements": []}"#,
            &AnswerContext::default(),
        )
        .unwrap_err();
        assert!(err.contains("`requirements` is empty"), "{err}");
        let err = parse_answer::<RefineAnswer>(
            r#"{"problem": " ", "requirements": [{"text": "x"}]}"#,
            &AnswerContext::default(),
        )
        .unwrap_err();
        assert!(err.contains("`problem` is empty"));
    }

    #[test]
    fn a_review_keeps_known_ids_and_kinds() {
        let ctx = AnswerContext {
            requirement_ids: ["req_1".to_owned(), "req_2".to_owned()].into(),
            ..AnswerContext::default()
        };
        let a: RefineAnswer = parse_answer(
            r#"{"problem": "p", "review": [{"id": "req_1", "kind": "untestable", "note": "how fast is fast?"},
                {"id": "req_9", "kind": "gap", "note": "unknown id"}, {"id": "req_2", "kind": "weird", "note": "n"}]}"#,
            &ctx,
        )
        .unwrap();
        assert_eq!(a.review.len(), 2);
        assert_eq!(a.review[1].kind, "note");
        let md = comment(7, &a, true, false);
        assert!(md.starts_with(COMMENT_MARK));
        assert!(
            md.contains("- `req_1` — untestable: how fast is fast?"),
            "{md}"
        );
    }

    #[test]
    fn the_authored_body_leaves_out_ralphs_section_only() {
        let a = answer();
        let body = "Prose.\r\n";
        let written = write_into(body, &a);
        assert_eq!(authored(&written), "Prose.\r\n\r\n\r\n");
        assert_eq!(authored(body), body);
        // An end marker before the start marker is no section.
        let odd = format!("<!-- /ralph:requirements --> x {MARK_START} y");
        assert_eq!(authored(&odd), odd);
        // An older ralph's section, without a fingerprint, is still ralph's.
        let old = format!("P.\n{MARK_START}\n- [ ] a\n<!-- /ralph:requirements -->\n");
        assert_eq!(authored(&old), "P.\n\n");
    }

    #[test]
    fn a_section_edited_by_hand_becomes_the_authors() {
        let written = write_into("Prose.\r\n", &answer());
        assert!(!section_edited(&written));
        // Line ends changed by an editor are no edit.
        assert!(!section_edited(&written.replace("\r\n", "\n")));
        let edited = written.replace("A test covers", "Two tests cover");
        assert!(section_edited(&edited));
        assert_eq!(
            authored(&edited),
            edited,
            "its checkboxes are the author's now"
        );
        assert!(authored(&written).find("- [ ]").is_none());
    }

    #[test]
    fn the_section_replaces_its_markers_and_keeps_every_other_byte() {
        let a = answer();
        let body = "Some prose.\r\n\r\n```\r\nstack trace\r\n```\r\n";
        let once = write_into(body, &a);
        assert!(once.starts_with(body), "the body is kept: {once:?}");
        assert_eq!(
            &once[body.len()..],
            format!("\r\n<!-- ralph:requirements -->\r\n## Requirements\r\n\r\n- [ ] `--verbose` prints each step to stderr\r\n- [ ] A test covers `--verbose`\r\n<!-- /ralph:requirements {} -->\r\n", fingerprint(&task_list(&a, "\n")))
        );
        // Edited around, then refined again: only the section changes.
        let edited = format!("Intro.\r\n{once}Footer stays.\r\n");
        let mut other = a.clone();
        other.requirements.truncate(1);
        let twice = write_into(&edited, &other);
        assert!(twice.starts_with("Intro.\r\nSome prose."));
        assert!(twice.ends_with(" -->\r\nFooter stays.\r\n"));
        assert!(!section_edited(&twice));
        assert_eq!(twice.matches(MARK_START).count(), 1);
        assert!(!twice.contains("A test covers"));
        assert!(has_draft(&twice, &[]));
        assert!(!has_draft("prose", &["a comment".into()]));
        assert!(has_draft("prose", &[comment(7, &a, false, false)]));
        // An empty body gets the section alone.
        assert!(write_into("", &a).starts_with(MARK_START));
    }

    #[test]
    fn the_comment_says_how_to_accept_the_draft() {
        let a = answer();
        let md = comment(7, &a, false, false);
        assert!(
            md.contains(
                "```markdown\n## Requirements\n\n- [ ] `--verbose` prints each step to stderr\n"
            ),
            "{md}"
        );
        assert!(md.contains("`ralph refine 7 --write`") && md.contains("`ralph ready 7`"));
        assert!(md.contains("**Questions for the author:**\n\n1. Should -v be an alias?"));
        assert!(md.contains("- Quiet output stays unchanged — _compatibility_"));
        let written = comment(7, &a, false, true);
        assert!(written.contains("now in the issue's body") && !written.contains("```markdown"));
    }
}
