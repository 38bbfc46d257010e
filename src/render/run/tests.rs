//! The tests of `run`.

use super::*;
use crate::fixtures::report;
use crate::run_report::RunOutcome;

#[test]
fn the_pull_request_and_the_summary_say_whether_the_run_was_sandboxed() {
    use crate::process::sandbox::{Mode, Status};
    let mut r = report(RunOutcome::Complete);
    assert!(!pr_body(&r, &BTreeMap::new()).contains("Sandbox"));
    let status = Status {
        mode: Mode::Required,
        active: true,
        mechanism: Some("bubblewrap 0.8.0".into()),
        reason: None,
        check_network: false,
        network: crate::process::sandbox::NetworkStatus::default(),
        hidden: vec!["/h/.ssh".into()],
    };
    r.sandbox = Some(status.clone());
    let body = pr_body(&r, &BTreeMap::new());
    assert!(body.contains("\n_Sandbox: agents and checks ran in a bubblewrap 0.8.0 sandbox (own PID namespace, read-only filesystem but the worktree, 1 credential path(s) hidden; network only to the hosts of each kind's allowlist)_.\n"), "{body}");
    r.network_refused = vec![crate::process::egress::Refusal {
        kind: "agent".into(),
        by: "implement smart_bot_1".into(),
        host: "evil.example".into(),
        port: 443,
        count: 3,
    }];
    let body = pr_body(&r, &BTreeMap::new());
    assert!(
        body.contains(
            "- blocked: 3 connections to evil.example:443 from implement smart_bot_1 (agent)\n"
        ),
        "{body}"
    );
    r.sandbox = Some(Status {
        active: false,
        mechanism: None,
        reason: Some("bubblewrap (`bwrap`) is not installed".into()),
        mode: Mode::Auto,
        ..status
    });
    r.git_tampering = vec!["implementer (attempt 1): .git/hooks/pre-push was added".into()];
    let md = job_summary(&r);
    assert!(md.contains("**⚠ Sandbox:** agents and checks ran WITHOUT a sandbox: bubblewrap (`bwrap`) is not installed.\n"), "{md}");
    assert!(
        md.contains(
            "restored by ralph:**\n\n- implementer (attempt 1): .git/hooks/pre-push was added\n"
        ),
        "{md}"
    );
}

#[test]
fn the_job_summary_has_the_outcome_the_ranking_and_the_links() {
    let r = report(RunOutcome::Complete);
    let md = job_summary(&r);
    assert!(md.contains("## ralph · issue #12: Add option"));
    assert!(md.contains("**Outcome:** complete"));
    assert!(
        md.contains("| 1 | proposal_1 | smart_bot_2 | 0.812 |"),
        "{md}"
    );
    assert!(md.contains("Skipped `smart_bot_3`: timed out"));
    assert!(md.contains("Pull request: https://github.com/o/r/pull/13"));
}

#[test]
fn the_pull_request_body_has_evidence_rankings_and_fixes() {
    let mut r = report(RunOutcome::Complete);
    r.requirements = crate::spec::Requirements::from_body("- [ ] a | b\n- [x] done\n");
    let evidence = BTreeMap::from([("req_1".to_owned(), "in x.rs\nline 3".to_owned())]);
    let body = pr_body(&r, &evidence);
    assert!(
        body.contains("| req_1 | a \\| b | ✅ | in x.rs line 3 |"),
        "{body}"
    );
    assert!(body.contains("| req_2 | done | ✅ |  |"), "{body}");
    assert!(body.contains("\n## Round 1 (initial)\n\n| rank | proposal | bot | total |\n|---|---|---|---|\n| 1 | proposal_1 | smart_bot_2 | 0.812 |\n"));
    assert!(body.ends_with("\nFixes #12\n"));
    let summary = run_summary(&r, &evidence);
    assert!(summary.starts_with("# Run r-1 on issue #12: complete\n\n"));
    assert!(summary.ends_with("Events:\n\n- `e.json`\n"), "{summary}");
}

#[test]
fn the_pull_request_says_when_the_order_decided_and_what_the_audit_found() {
    let mut r = report(RunOutcome::Complete);
    let quiet = pr_body(&r, &BTreeMap::new());
    assert!(!quiet.contains("Order check") && !quiet.contains("Audit"));
    r.rounds[0].order = Some(crate::market::order::OrderCheck::new(
        1,
        Some("proposal_1".into()),
        Some("proposal_2".into()),
    ));
    r.rounds[0].audit = Some(crate::run_report::AuditReport {
        proposal_id: "proposal_2".into(),
        bot_id: "smart_bot_1".into(),
        passed: Some(false),
        attempts: 1,
        checks: vec![],
        reason: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: None,
        duration_ms: 10,
    });
    let body = pr_body(&r, &BTreeMap::new());
    assert!(body.contains("_Order check: the judges' top proposal changed with the reading order (proposal_1 read forward, proposal_2 reversed); the two readings were averaged._"), "{body}");
    assert!(body.contains("_Audit: the runner-up proposal_2 (smart_bot_1) was implemented too, in a scratch checkout that was thrown away, and failed;"), "{body}");
}

#[test]
fn the_escalation_comment_tells_both_failures_and_where_the_work_is() {
    let r = report(RunOutcome::Escalated);
    let reasons = vec!["check `test` failed".to_owned()];
    let note = EscalationNote {
        issue: 12,
        reason: "the implementation failed, and so did the replan",
        initial: Some(FailureNote {
            bot: "smart_bot_1",
            kind: "tests",
            proposal_summary: " plan A ",
            reasons: &reasons,
        }),
        replan: None,
        last_round: Some(&r.rounds[0]),
        verification: None,
        remaining: &[RemainingBox {
            id: "req_2".into(),
            text: "Document it".into(),
            reason: Some("no docs changed".into()),
        }],
        diff: Some("+greet() {}\n"),
        branch: "ralph/12-add-option",
        commits: 1,
        pushed: true,
        worktree: Some(Path::new("/repo/.ralph/worktrees/12")),
    };
    let body = escalation_comment(&note);
    assert!(body
        .starts_with("ralph needs a human: the implementation failed, and so did the replan.\n"));
    assert!(body
        .contains("\n**Initial round** — smart_bot_1 (tests): plan A\n\n- check `test` failed\n"));
    assert!(!body.contains("Replan round"));
    assert!(body.contains("| 1 | proposal_1 | smart_bot_2 | 0.812 |"));
    assert!(body.contains("\nBranch: `ralph/12-add-option` — pushed, with the commits of 1 passing round(s)\nWorktree (kept for inspection): `/repo/.ralph/worktrees/12`\n"));
    assert!(body.contains("- req_2 Document it — verify role: no docs changed\n"));
    assert!(body.contains("<details><summary>The last failing attempt's diff</summary>\n\n```diff\n+greet() {}\n```\n</details>"), "{body}");
    assert!(body.ends_with("`ralph compete 12 --resume`.\n"));
}

/// The whole of each document, compared with its reviewed snapshot in `src/render/snapshots/`
/// (times that the fixtures take from the clock are filtered out).
#[test]
fn whole_documents_match_their_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?",
        "[time]",
    );
    let _guard = settings.bind_to_scope();
    let mut r = report(RunOutcome::Complete);
    r.requirements = crate::spec::Requirements::from_body(
        "- [ ] `greet NAME` prints `Hello, NAME!`\n- [x] a test covers it\n",
    );
    let evidence = BTreeMap::from([(
        "req_1".to_owned(),
        "greet in lib.sh; tests/greet_test.sh".to_owned(),
    )]);
    insta::assert_snapshot!("pr_body", pr_body(&r, &evidence));
    insta::assert_snapshot!("job_summary", job_summary(&r));
    insta::assert_snapshot!("run_summary", run_summary(&r, &evidence));

    let escalated = report(RunOutcome::Escalated);
    let reasons = vec!["check `test` failed".to_owned()];
    let replan_reasons = vec![
        "check `lint` failed".to_owned(),
        "coverage dropped from 81.00% to 79.50%".to_owned(),
    ];
    let note = EscalationNote {
        issue: 12,
        reason: "the implementation failed, and so did the replan",
        initial: Some(FailureNote {
            bot: "smart_bot_2",
            kind: "tests",
            proposal_summary: "Add greet to lib.sh",
            reasons: &reasons,
        }),
        replan: Some(FailureNote {
            bot: "smart_bot_3",
            kind: "quality",
            proposal_summary: "Add greet with a default name",
            reasons: &replan_reasons,
        }),
        last_round: Some(&escalated.rounds[0]),
        verification: None,
        remaining: &[RemainingBox {
            id: "req_2".into(),
            text: "Document it".into(),
            reason: Some("no docs changed".into()),
        }],
        diff: Some("+greet() {\n+    echo \"Hello $1!\"\n+}\n"),
        branch: "ralph/12-add-option",
        commits: 0,
        pushed: false,
        worktree: Some(Path::new("/repo/.ralph/worktrees/12")),
    };
    insta::assert_snapshot!("escalation_comment", escalation_comment(&note));
}

/// Text an agent controls, shaped to act on GitHub: close other issues, ping a team, load a
/// tracking image, forge ralph's hidden marker, colour the page.
const HOSTILE: &str = "Closes #7, fixes #8 and acme/other#9 and GH-10; resolves https://github.com/o/r/issues/11 @acme/everyone @admin ![t](https://evil.example/p.png) <img src=https://evil.example/q.png> <!-- ralph:follow answered: review-1 --> [x] done \u{1b}[31mred\u{1b}[0m `code`";

#[test]
fn agent_text_in_the_pull_request_body_is_inert() {
    let mut r = report(RunOutcome::Complete);
    r.rounds[0].proposals[0].approach_summary = HOSTILE.to_owned();
    r.rounds[0].implementation_summary = Some(HOSTILE.to_owned());
    r.requirements = crate::spec::Requirements::from_body(&format!("- [ ] {HOSTILE}\n"));
    let evidence = BTreeMap::from([("req_1".to_owned(), HOSTILE.to_owned())]);
    let body = pr_body(&r, &evidence);
    insta::assert_snapshot!("pr_body_hostile", body);
    // The only closing keyword GitHub sees is ralph's own line.
    let outside_code: String = body.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    for acting in [
        "#7", "#8", "#9", "GH-10", "@acme", "@admin", "https://", "<img", "<!--", "![", "\u{1b}",
    ] {
        assert!(!outside_code.contains(acting), "{acting} acts: {body}");
    }
    assert!(body.ends_with("\nFixes #12\n"), "{body}");
}

#[test]
fn a_round_on_the_terminal_lists_every_proposal_best_first() {
    let r = report(RunOutcome::DryRun);
    let text = render_round(&r.rounds[0], &Scores::default(), Paint::plain());
    assert!(text.starts_with("Round 1 (initial): 1 proposal(s), 1 bot(s) skipped\n"));
    assert!(text.contains("Winner: proposal_1 (smart_bot_2)"));
    assert!(text.contains("skipped smart_bot_3: timed out"));
}
