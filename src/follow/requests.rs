//! A revision round's requirements (pure): the issue's own checkboxes, all checked — they are
//! the pull request's work already —, then one open box per piece of feedback (`feedback_1…`)
//! and per CI check the change broke (`ci_1…`), each saying where it came from. The text is the
//! feedback's, cleaned and bounded; the prompt hands it to the implementer as data.

use super::ci::Judged;
use super::feedback::{Request, Sorted};
use crate::spec::{ExplicitRequirement, Requirements};

/// What an open pull request asks for.
#[derive(Default)]
pub struct Asked {
    /// The head commit.
    pub head: Option<String>,
    pub sorted: Sorted,
    pub ci: Judged,
}

/// A CI check the change broke, with its log excerpt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub name: String,
    /// The failing job's log excerpt, when it could be read.
    pub excerpt: Option<String>,
}

/// The section the feedback boxes are filed under.
pub const FEEDBACK_SECTION: &str = "Review feedback on the pull request";
/// The section the CI boxes are filed under.
pub const CI_SECTION: &str = "The project's CI on the pull request";

/// The revision's requirements and which box is which request (`feedback_1` → its feedback id,
/// `ci_1` → its check name).
pub fn revision_requirements(
    issue_body: &str,
    requests: &[Request],
    broken: &[Broken],
) -> (Requirements, Vec<(String, String)>) {
    let mut reqs = Requirements::from_body(issue_body);
    for r in &mut reqs.explicit_requirements {
        r.checked = true;
    }
    let mut map = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        let id = format!("feedback_{}", i + 1);
        let by = r
            .author
            .as_deref()
            .map(|a| format!(" by @{a}"))
            .unwrap_or_default();
        let text = format!("Review feedback ({}{by}): {}", r.place, r.text);
        reqs.explicit_requirements
            .push(open(&id, text, FEEDBACK_SECTION));
        map.push((id, r.id.clone()));
    }
    for (i, b) in broken.iter().enumerate() {
        let id = format!("ci_{}", i + 1);
        let mut text = format!(
            "The project's CI check `{}` fails on this pull request and passes on its base: make it pass",
            b.name
        );
        if let Some(e) = &b.excerpt {
            text.push_str(&format!(". The failing job's log (excerpt):\n{e}"));
        }
        reqs.explicit_requirements.push(open(&id, text, CI_SECTION));
        map.push((id, b.name.clone()));
    }
    (reqs, map)
}

fn open(id: &str, text: String, section: &str) -> ExplicitRequirement {
    ExplicitRequirement {
        id: id.to_owned(),
        components: vec![text.clone()],
        text,
        checked: false,
        section: Some(section.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_is_done_and_each_request_and_broken_check_is_an_open_box() {
        let body = "## Do\n- [x] `greet NAME` prints `Hello, NAME!`\n- [ ] an open one\n";
        let requests = [Request {
            id: "review-9".into(),
            author: Some("maint".into()),
            place: "greet.py:3".into(),
            text: "handle empty names".into(),
        }];
        let broken = [Broken {
            name: "test (3.12)".into(),
            excerpt: Some("FAILED test_greet.py::test_empty".into()),
        }];
        let (reqs, map) = revision_requirements(body, &requests, &broken);
        assert!(reqs.explicit_requirements[..2].iter().all(|r| r.checked));
        let open: Vec<&str> = reqs.open().map(|r| r.id.as_str()).collect();
        assert_eq!(open, ["feedback_1", "ci_1"]);
        assert_eq!(
            reqs.explicit_requirements[2].text,
            "Review feedback (greet.py:3 by @maint): handle empty names"
        );
        assert!(reqs.explicit_requirements[3].text.contains("`test (3.12)`"));
        assert!(reqs.explicit_requirements[3]
            .text
            .ends_with("FAILED test_greet.py::test_empty"));
        assert_eq!(
            map,
            [
                ("feedback_1".to_owned(), "review-9".to_owned()),
                ("ci_1".to_owned(), "test (3.12)".to_owned())
            ]
        );
        assert!(
            !reqs.implicit_requirements.is_empty(),
            "the defaults hold for a revision too"
        );
    }
}
