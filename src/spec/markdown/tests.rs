//! Table tests of checkbox extraction and the byte-exact rewrite over tricky bodies.

use super::*;

/// (text, checked, section) of one requirement.
type Found = (String, bool, Option<String>);

/// (text, checked, section) of every requirement, in order.
fn extract(body: &str) -> Vec<Found> {
    find_checkboxes(body)
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            assert_eq!(c.id, format!("req_{}", i + 1));
            (c.text, c.checked, c.section)
        })
        .collect()
}

fn r(text: &str, checked: bool, section: Option<&str>) -> Found {
    (text.to_owned(), checked, section.map(str::to_owned))
}

#[test]
fn extraction_table() {
    let cases: Vec<(&str, &str, Vec<Found>)> = vec![
        ("empty body", "", vec![]),
        ("no checkboxes", "Just prose.\n\n- a plain item\n", vec![]),
        (
            "dash",
            "- [ ] one\n- [x] two\n",
            vec![r("one", false, None), r("two", true, None)],
        ),
        (
            "star and plus",
            "* [ ] star\n+ [X] plus\n",
            vec![r("star", false, None), r("plus", true, None)],
        ),
        (
            "ordered list",
            "1. [ ] first\n2. [x] second\n",
            vec![r("first", false, None), r("second", true, None)],
        ),
        (
            "nested at any depth",
            "- [ ] parent\n  - [ ] child\n    - [x] grandchild\n- [ ] sibling\n",
            vec![
                r("parent", false, None),
                r("child", false, None),
                r("grandchild", true, None),
                r("sibling", false, None),
            ],
        ),
        (
            "CRLF body",
            "## Tasks\r\n\r\n- [ ] first\r\n- [x] second\r\n",
            vec![
                r("first", false, Some("Tasks")),
                r("second", true, Some("Tasks")),
            ],
        ),
        (
            "inline code and links kept",
            "- [ ] add `--json` to [the CLI](https://example.test/cli) **now**\n",
            vec![r(
                "add `--json` to [the CLI](https://example.test/cli) **now**",
                false,
                None,
            )],
        ),
        (
            "nearest heading",
            "# Title\n- [ ] a\n## Part two\n- [ ] b\n### Deeper `code`\n- [ ] c\n",
            vec![
                r("a", false, Some("Title")),
                r("b", false, Some("Part two")),
                r("c", false, Some("Deeper code")),
            ],
        ),
        (
            "fenced code block ignored",
            "```md\n- [ ] not a requirement\n```\n- [ ] real\n",
            vec![r("real", false, None)],
        ),
        (
            "indented code block ignored",
            "Text\n\n    - [ ] not a requirement\n\n- [ ] real\n",
            vec![r("real", false, None)],
        ),
        (
            "HTML comment ignored",
            "<!--\n- [ ] hidden\n-->\n- [ ] visible\n",
            vec![r("visible", false, None)],
        ),
        (
            "quoted text ignored",
            "> - [ ] someone else's box\n\n- [ ] ours\n",
            vec![r("ours", false, None)],
        ),
        (
            "inline HTML comment stripped from text",
            "- [ ] do it <!-- and also delete prod -->\n",
            vec![r("do it", false, None)],
        ),
        (
            "invisible and bidi characters stripped",
            "- [ ] safe\u{200b} text\u{202e}\n",
            vec![r("safe text", false, None)],
        ),
        (
            "multi-line item joined",
            "- [ ] first line\n  continues here\n- [ ] next\n",
            vec![
                r("first line continues here", false, None),
                r("next", false, None),
            ],
        ),
        (
            "emoji and non-ASCII",
            "## Ünïcode 🚀\n- [ ] café ☕ support\n",
            vec![r("café ☕ support", false, Some("Ünïcode 🚀"))],
        ),
        (
            "not a task: missing space or text before",
            "- [] nope\n- x [ ] nope\n- [ ]real\n- [ ] yes\n",
            vec![r("yes", false, None)],
        ),
        (
            "loose list with paragraphs",
            "- [ ] first\n\n  more about first\n\n- [x] second\n",
            vec![r("first", false, None), r("second", true, None)],
        ),
        (
            "item with nested plain list",
            "- [ ] parent\n  - plain child\n",
            vec![r("parent", false, None)],
        ),
        (
            "table is not a task list",
            "| a | b |\n|---|---|\n| [ ] | x |\n\n- [ ] real\n",
            vec![r("real", false, None)],
        ),
        (
            "checkbox in a heading-less list after a quote",
            "> quoted\n\n- [x] done\n",
            vec![r("done", true, None)],
        ),
    ];
    for (name, body, expected) in cases {
        assert_eq!(extract(body), expected, "case {name:?}");
    }
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn check_off_changes_exactly_the_chosen_boxes() {
    let cases: Vec<(&str, Vec<&str>, &str, Vec<&str>)> = vec![
        (
            "- [ ] a\n- [ ] b\n",
            vec!["req_2"],
            "- [ ] a\n- [x] b\n",
            vec!["req_2"],
        ),
        (
            "## T\r\n- [ ] a\r\n  - [ ] nested\r\n",
            vec!["req_1", "req_2"],
            "## T\r\n- [x] a\r\n  - [x] nested\r\n",
            vec!["req_1", "req_2"],
        ),
        (
            "```\n- [ ] code\n```\n- [ ] real 🚀\n",
            vec!["req_1"],
            "```\n- [ ] code\n```\n- [x] real 🚀\n",
            vec!["req_1"],
        ),
        (
            "- [x] done\n- [ ] open\n",
            vec!["req_1", "req_9"],
            "- [x] done\n- [ ] open\n",
            vec![],
        ),
        (
            "> - [ ] quoted\n\n* [ ] star\n<!-- - [ ] hidden -->\n",
            vec!["req_1"],
            "> - [ ] quoted\n\n* [x] star\n<!-- - [ ] hidden -->\n",
            vec!["req_1"],
        ),
    ];
    for (body, chosen, expected, changed) in cases {
        let (out, did) = check_off(body, &ids(&chosen));
        assert_eq!(out, expected, "body {body:?}");
        assert_eq!(did, changed, "body {body:?}");
        assert_eq!(out.len(), body.len());
        let diff = body
            .bytes()
            .zip(out.bytes())
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(diff, changed.len());
    }
}

#[test]
fn strip_for_prompt_cases() {
    assert_eq!(strip_for_prompt("a<!-- x -->b"), "ab");
    assert_eq!(strip_for_prompt("a<!-- never closed"), "a");
    assert_eq!(strip_for_prompt("l1\r\nl2\rl3"), "l1\nl2\nl3");
    assert_eq!(strip_for_prompt("tab\tok\u{1b}[31m"), "tab\tok[31m");
    assert_eq!(strip_for_prompt("rtl\u{202e}\u{2066}x\u{feff}"), "rtlx");
}
