//! Task-list checkboxes in a markdown body, found with a real CommonMark parser
//! (pulldown-cmark) so that code blocks, HTML comments and quoted text never yield
//! requirements, and ticked off by changing exactly one byte per box.

use super::collapse_whitespace;
use crate::output::is_invisible_format;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::collections::BTreeSet;
use std::ops::Range;

/// A checkbox found in a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkbox {
    /// `req_1 …` in document order.
    pub id: String,
    /// The item's text as written (inline code, links, emphasis kept), cleaned for prompts.
    pub text: String,
    pub checked: bool,
    /// The nearest heading above, if any.
    pub section: Option<String>,
    /// Byte offset of the character between the brackets (` ` or `x`).
    pub marker: usize,
}

/// One list item being read.
struct Item {
    /// (checked, byte offset of the mark, inside a block quote).
    task: Option<(bool, Option<usize>, bool)>,
    /// Byte span of the item's own text: its first paragraph, before any nested list.
    span: Option<(usize, usize)>,
    /// The item's own text is complete (a paragraph ended or a nested list began).
    closed: bool,
}

impl Item {
    /// The checkbox this item is, once it has ended: `None` unless it is a task with its mark
    /// found, outside a block quote. Its text is its own, cleaned; `section` is the heading
    /// above; the id is left for the caller.
    fn checkbox(self, body: &str, section: &Option<String>) -> Option<Checkbox> {
        let Some((checked, Some(marker), quoted)) = self.task else {
            return None;
        };
        if quoted {
            return None;
        }
        let raw = self.span.map_or("", |(s, e)| &body[s..e]);
        Some(Checkbox {
            id: String::new(),
            text: collapse_whitespace(&strip_for_prompt(raw)),
            checked,
            section: section.clone(),
            marker,
        })
    }

    /// Widens the item's own text over the inline event at `range`, while the item is a task
    /// and its own text is not complete.
    fn take_in(&mut self, range: &Range<usize>) {
        if self.task.is_some() && !self.closed {
            self.span = Some(match self.span {
                Some((s, e)) => (s.min(range.start), e.max(range.end)),
                None => (range.start, range.end),
            });
        }
    }
}

fn is_inline(event: &Event<'_>) -> bool {
    match event {
        Event::Text(_)
        | Event::Code(_)
        | Event::InlineHtml(_)
        | Event::SoftBreak
        | Event::HardBreak
        | Event::FootnoteReference(_)
        | Event::InlineMath(_) => true,
        Event::Start(tag) => matches!(
            tag,
            Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. } | Tag::Image { .. }
        ),
        Event::End(tag) => matches!(
            tag,
            TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image
        ),
        _ => false,
    }
}

/// Every task-list checkbox of `body` that is a requirement: at any nesting depth, with any
/// list marker (`-`, `*`, `+`, numbers), CRLF or LF. Boxes inside code blocks and HTML
/// comments are not list items to the parser; boxes inside block quotes (quoted from
/// elsewhere) are skipped. Ids count checked boxes too.
pub fn find_checkboxes(body: &str) -> Vec<Checkbox> {
    let options =
        Options::ENABLE_TASKLISTS | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES;
    let mut found = Vec::new();
    let mut section: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut quote_depth = 0usize;
    let mut items: Vec<Item> = Vec::new();
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        if let Some(h) = heading.as_mut() {
            if let Event::Text(t) | Event::Code(t) = &event {
                h.push_str(t);
            }
        }
        match &event {
            Event::Start(Tag::Heading { .. }) if quote_depth == 0 => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    let h = collapse_whitespace(&strip_for_prompt(&h));
                    section = (!h.is_empty()).then_some(h);
                }
            }
            Event::Start(Tag::BlockQuote(_)) => quote_depth += 1,
            Event::End(TagEnd::BlockQuote(_)) => quote_depth = quote_depth.saturating_sub(1),
            Event::Start(Tag::List(_)) => {
                if let Some(parent) = items.last_mut() {
                    parent.closed = true;
                }
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(item) = items.last_mut() {
                    item.closed |= item.span.is_some();
                }
            }
            Event::Start(Tag::Item) => items.push(Item {
                task: None,
                span: None,
                closed: false,
            }),
            Event::TaskListMarker(checked) => {
                if let Some(item) = items.last_mut() {
                    let mark = body[range.clone()].find('[').map(|i| range.start + i + 1);
                    item.task = Some((*checked, mark, quote_depth > 0));
                }
            }
            Event::End(TagEnd::Item) => {
                let item = items.pop();
                found.extend(item.and_then(|item| item.checkbox(body, &section)));
            }
            _ => {}
        }
        if is_inline(&event) {
            if let Some(item) = items.last_mut() {
                item.take_in(&range);
            }
        }
    }
    // Items end inner-first; ids follow the document order of the boxes.
    found.sort_by_key(|c| c.marker);
    for (i, c) in found.iter_mut().enumerate() {
        c.id = format!("req_{}", i + 1);
    }
    found
}

/// Checks the boxes with the given ids (`[ ]` → `[x]`) and changes nothing else, byte for
/// byte. Returns the new body and the ids that were actually changed (already checked or
/// unknown ids are left alone).
pub fn check_off(body: &str, ids: &BTreeSet<String>) -> (String, Vec<String>) {
    let mut bytes = body.as_bytes().to_vec();
    let mut changed = Vec::new();
    for c in find_checkboxes(body) {
        if !c.checked && ids.contains(&c.id) && bytes.get(c.marker) == Some(&b' ') {
            bytes[c.marker] = b'x';
            changed.push(c.id);
        }
    }
    // Only an ASCII space became an ASCII `x`: still valid UTF-8.
    let text = String::from_utf8(bytes).unwrap_or_else(|_| body.to_owned());
    (text, changed)
}

/// Cleans untrusted text before it reaches a prompt (docs/specification.md §9): hidden HTML
/// comments are removed (an unterminated one to the end), and so are invisible and bidirectional
/// formatting characters and control characters other than newline and tab; CRLF becomes LF.
pub fn strip_for_prompt(text: &str) -> String {
    let mut visible = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        visible.push_str(&rest[..start]);
        rest = match rest[start + 4..].find("-->") {
            Some(end) => &rest[start + 4 + end + 3..],
            None => "",
        };
    }
    visible.push_str(rest);
    visible
        .replace("\r\n", "\n")
        .chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|&c| !is_invisible_format(c) && (!c.is_control() || c == '\n' || c == '\t'))
        .collect()
}

#[cfg(test)]
mod tests;
