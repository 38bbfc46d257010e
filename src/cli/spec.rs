//! `ralph spec N`: the requirements ralph extracts from issue N (docs/specification.md §5.1) — its
//! checkboxes as explicit requirements and the implicit ones — as a readable list or, with
//! `--json`, the requirements document. Also names the guidance files found (CLAUDE.md, AGENTS.md,
//! CONTRIBUTING.md), which the `extract` role reads for implicit requirements.

use super::Context;
use crate::error::Exit;
use crate::output::{sanitize, Paint};
use crate::spec::{read_guidance, Requirements};
use crate::tracker::{self, Issue, IssueState};
use anyhow::Result;
use clap::Args;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Debug, Args)]
pub struct SpecArgs {
    /// The issue number
    #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub issue: u64,
}

/// `ralph spec N --json`: the requirements document plus where it came from.
#[derive(Serialize)]
struct SpecJson<'a> {
    issue: u64,
    title: &'a str,
    state: IssueState,
    labels: &'a [String],
    url: Option<&'a str>,
    /// How components were found: `checkboxes` (each checkbox is its own component) until an
    /// `extract` agent is configured.
    extraction: &'static str,
    /// The guidance files the `extract` role and the bots will read.
    guidance_files: Vec<&'a str>,
    #[serde(flatten)]
    requirements: &'a Requirements,
}

pub async fn run(ctx: &Context, args: SpecArgs) -> Result<Exit> {
    let settings = ctx.settings()?;
    let tracker = tracker::open(&settings).await?;
    let issue = super::fetch_issue(tracker.as_ref(), args.issue).await?;
    let requirements = Requirements::from_body(&issue.body);
    let guidance = read_guidance(&settings.root);
    let guidance_files: Vec<&str> = guidance.iter().map(|g| g.path.as_str()).collect();
    if ctx.printer.json_mode() {
        ctx.printer.json(&SpecJson {
            issue: issue.number,
            title: &issue.title,
            state: issue.state,
            labels: &issue.labels,
            url: issue.url.as_deref(),
            extraction: "checkboxes",
            guidance_files,
            requirements: &requirements,
        })?;
    } else {
        ctx.printer.data(&render(
            &issue,
            &requirements,
            &guidance_files,
            ctx.printer.paint(),
        ))?;
    }
    Ok(Exit::Success)
}

/// The human view: the issue line, then the checkboxes grouped under their headings, then the
/// implicit requirements.
fn render(issue: &Issue, reqs: &Requirements, guidance: &[&str], paint: Paint) -> String {
    let mut out = String::new();
    let labels = if issue.labels.is_empty() {
        "no labels".to_owned()
    } else {
        issue.labels.join(", ")
    };
    let _ = writeln!(
        out,
        "{} {}  ({} · {})",
        paint.bold(&format!("#{}", issue.number)),
        paint.bold(&sanitize(&issue.title)),
        issue.state,
        sanitize(&labels)
    );
    if let Some(url) = &issue.url {
        let _ = writeln!(out, "{}", paint.dim(&sanitize(url)));
    }
    let total = reqs.explicit_requirements.len();
    let checked = total - reqs.open().count();
    let _ = writeln!(
        out,
        "\n{} {total} ({checked} checked)",
        paint.bold("Explicit requirements:")
    );
    if total == 0 {
        let _ = writeln!(
            out,
            "  none: the body has no task-list checkboxes (`- [ ] …`); ralph compete needs at least one"
        );
    }
    let mut section: Option<&str> = None;
    for r in &reqs.explicit_requirements {
        if r.section.as_deref() != section {
            section = r.section.as_deref();
            if let Some(s) = section {
                let _ = writeln!(out, "  {}", paint.dim(&sanitize(s)));
            }
        }
        let mark = if r.checked {
            paint.good("[x]")
        } else {
            "[ ]".to_owned()
        };
        let _ = writeln!(out, "    {mark} {:<7} {}", r.id, sanitize(&r.text));
        if r.components.len() > 1 || r.components.first() != Some(&r.text) {
            for c in &r.components {
                let _ = writeln!(out, "            · {}", sanitize(c));
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} {}",
        paint.bold("Implicit requirements:"),
        reqs.implicit_requirements.len()
    );
    for r in &reqs.implicit_requirements {
        let _ = writeln!(out, "    {:<16} {}", r.id, sanitize(&r.text));
    }
    let _ = writeln!(
        out,
        "\n{} {}",
        paint.bold("Guidance files:"),
        if guidance.is_empty() {
            "none (CLAUDE.md, AGENTS.md, CONTRIBUTING.md)".to_owned()
        } else {
            guidance.join(", ")
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_human_view_groups_by_section() {
        let issue = Issue {
            number: 12,
            title: "Add\u{1b}[31m a widget".into(),
            body: "## API\n- [ ] one\n- [x] two\n## Docs\n- [ ] three\n".into(),
            labels: vec!["ready".into()],
            state: IssueState::Open,
            assignees: vec![],
            author: None,
            created_at: None,
            is_pull_request: false,
            url: None,
        };
        let reqs = Requirements::from_body(&issue.body);
        let text = render(&issue, &reqs, &["CLAUDE.md"], Paint::plain());
        assert!(
            text.starts_with("#12 Add\u{fffd}[31m a widget  (open · ready)\n"),
            "{text}"
        );
        assert!(text.contains("Explicit requirements: 3 (1 checked)"));
        let api = text.find("  API\n").unwrap();
        let one = text.find("[ ] req_1   one").unwrap();
        let docs = text.find("  Docs\n").unwrap();
        let three = text.find("[ ] req_3   three").unwrap();
        assert!(api < one && one < docs && docs < three, "{text}");
        assert!(text.contains("[x] req_2   two"));
        assert!(text.contains("Implicit requirements: 4"));
        assert!(text.contains("req_implicit_4"));
        assert!(text.ends_with("Guidance files: CLAUDE.md\n"));
    }
}
