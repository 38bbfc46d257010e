//! The documentation holds together: every relative link in README.md and docs/*.md names a
//! file that exists and, with `#anchor`, a heading of that file (GitHub's anchor rule); the
//! README stays an entrance (under 20 KB) and links every page of docs/. The contract is inside
//! the repository: every `§N` or `§N.M` cited in src/ and tests/ is a section of
//! docs/specification.md (its `<a id="sN-M">` anchor), and src/ cites no document outside it.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The link targets and the heading anchors of a markdown file.
fn links_and_anchors(text: &str) -> (Vec<String>, BTreeSet<String>) {
    let mut links = Vec::new();
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            Event::Start(Tag::Heading { level, .. }) if level != HeadingLevel::H6 => {
                heading = Some(String::new())
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    anchors.insert(anchor(&h));
                }
            }
            _ => {}
        }
    }
    (links, anchors)
}

fn anchors_of(path: &Path) -> BTreeSet<String> {
    links_and_anchors(&std::fs::read_to_string(path).unwrap()).1
}

#[test]
fn every_relative_link_resolves() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (links, own_anchors) = links_and_anchors(&text);
        for link in links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = match link.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
                continue;
            }
            if let Some(a) = fragment {
                let anchors = if file.is_empty() {
                    own_anchors.clone()
                } else {
                    anchors_of(&target)
                };
                if !anchors.contains(a) {
                    broken.push(format!("{}: {link} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 20, "only {checked} links were found");
}

#[test]
fn the_readme_is_an_entrance_that_links_every_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.len() < 20_000, "README.md is {} bytes", readme.len());
    for page in pages().iter().skip(1) {
        let name = page.file_name().unwrap().to_string_lossy();
        assert!(
            readme.contains(&format!("(docs/{name})")),
            "README.md does not link docs/{name}"
        );
    }
    // The two commands of a fresh machine.
    assert!(readme.contains("cargo install --path . --locked && ralph demo"));
    assert!(readme.contains("cargo test --locked"));
}

#[test]
fn anchors_follow_githubs_rule() {
    assert_eq!(anchor("Exit codes"), "exit-codes");
    assert_eq!(
        anchor("GitHub Action: scheduled competitions"),
        "github-action-scheduled-competitions"
    );
    assert_eq!(
        anchor("`ralph compete` end to end"),
        "ralph-compete-end-to-end"
    );
}

/// The `<a id="…">` anchors of docs/specification.md.
fn specification_anchors() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("docs/specification.md")).unwrap();
    text.split("<a id=\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(id, _)| id.to_owned()))
        .collect()
}

/// The section citations of a line, as anchors: `§5.1` is `s5-1`, `§6` is `s6`.
fn cited_sections(line: &str) -> Vec<String> {
    let mut anchors = Vec::new();
    for (at, _) in line.match_indices('§') {
        let rest = &line[at + '§'.len_utf8()..];
        let major: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if major.is_empty() {
            continue;
        }
        let after = &rest[major.len()..];
        let minor: String = match after.strip_prefix('.') {
            Some(m) => m.chars().take_while(char::is_ascii_digit).collect(),
            None => String::new(),
        };
        anchors.push(if minor.is_empty() {
            format!("s{major}")
        } else {
            format!("s{major}-{minor}")
        });
    }
    anchors
}

#[test]
fn every_cited_section_of_the_specification_exists() {
    let anchors = specification_anchors();
    assert!(
        anchors.contains("s5-1"),
        "docs/specification.md has no anchors"
    );
    let mut files = Vec::new();
    crate::common::rust_files(&root().join("src"), &mut files);
    crate::common::rust_files(&root().join("tests"), &mut files);
    files.sort();
    let (mut cited, mut missing) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            for anchor in cited_sections(line) {
                cited += 1;
                if !anchors.contains(&anchor) {
                    missing.push(format!(
                        "{name}:{}: no section `{anchor}`: {}",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "citations of sections docs/specification.md does not have (add the section with its \
         `<a id=\"…\">` anchor, or fix the citation):\n{}",
        missing.join("\n")
    );
    assert!(cited > 50, "only {cited} section citations were found");
}

#[test]
fn the_source_cites_no_document_outside_the_repository() {
    let mut files = Vec::new();
    crate::common::rust_files(&root().join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            for outside in ["SPEC §", "../shared", "SPEC.md"] {
                if line.contains(outside) {
                    found.push(format!("{name}:{}: `{outside}`: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "references to documents outside the repository (cite docs/specification.md §N):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_numbered_section_of_the_specification_has_its_anchor() {
    let text = std::fs::read_to_string(root().join("docs/specification.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut numbered = 0;
    for (i, line) in lines.iter().enumerate() {
        let Some(title) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        else {
            continue;
        };
        let number = title.split(' ').next().unwrap().trim_end_matches('.');
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
            continue;
        }
        numbered += 1;
        let expected = format!("<a id=\"s{}\"></a>", number.replace('.', "-"));
        assert_eq!(
            i.checked_sub(1).map(|p| lines[p]),
            Some(expected.as_str()),
            "the line before `{line}` must be its anchor"
        );
    }
    assert!(numbered >= 16, "only {numbered} numbered sections");
}

#[test]
fn citations_read_as_anchors() {
    assert_eq!(
        cited_sections("see docs/specification.md §6 step 7, §5.1 and §8.3."),
        ["s6", "s5-1", "s8-3"]
    );
    assert!(cited_sections("a lone § sign").is_empty());
}
