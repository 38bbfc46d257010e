//! The documentation holds together: every relative link in README.md and docs/*.md names a
//! file that exists and, with `#anchor`, a heading of that file (GitHub's anchor rule); the
//! README stays an entrance (under 20 KB) and links every page of docs/.

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
