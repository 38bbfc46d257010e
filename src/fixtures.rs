//! Test data shared by the unit tests of several modules: a valid proposal, a proposal's and a
//! round's report, a one-round run report, a passed check, a round's seating, the settings of a
//! local repository, a hermetic `git`. Compiled for tests only; production code never sees it.

use crate::checks::result::CheckResult;
use crate::checks::{CheckKind, CheckStatus};
use crate::market::{Phase, Proposal, Scores};
use crate::run_report::{ProposalReport, RoundReport, RunOutcome, RunReport, SkippedBot};
use serde_json::json;

/// A valid proposal to vary in tests.
pub fn sample() -> Proposal {
    serde_json::from_value(json!({
        "approach_summary": "Add a --verbose flag",
        "pseudo_code": "parse flag; print more",
        "files_affected": [{"path": "src/main.rs", "change_type": "modify"}],
        "estimated_complexity": {"lines_of_code": 40, "files": 1, "modules": 1, "difficulty": "low"},
        "risk_assessment": {"breaking_changes": false, "security_critical": false, "overall_risk": "low"},
        "spec_alignment": {"checkboxes_addressed": ["req_1"]},
        "success_probability": 0.8
    }))
    .unwrap()
}

/// A proposal's report with neutral scores.
pub fn proposal(id: &str, bot: &str, total: f64) -> ProposalReport {
    ProposalReport {
        proposal_id: id.into(),
        bot_id: bot.into(),
        total_score: total,
        scores: Scores::default(),
        reasons: Default::default(),
        submission_time: chrono::Utc::now(),
        success_probability: 0.7,
        approach_summary: "s".into(),
        files_affected: vec![],
        repaired: false,
        warnings: vec![],
        order_disagreement: None,
    }
}

/// A first round's report of `proposals`, ranked as `ranking` (the first wins).
pub fn round(proposals: Vec<ProposalReport>, ranking: &[&str]) -> RoundReport {
    RoundReport {
        round: 1,
        phase: Phase::Initial,
        seed: 1,
        proposals,
        skipped: vec![],
        ranking: ranking.iter().map(|s| s.to_string()).collect(),
        winner: ranking.first().map(|s| s.to_string()),
        winner_bot: None,
        human_review: false,
        judges: Default::default(),
        checks: vec![],
        new_tests: vec![],
        settings_changes: vec![],
        moved_tests: vec![],
        attempts: 0,
        verified_by_claims: false,
        implementation_summary: None,
        environment_failure: None,
        implementation: None,
        coverage: None,
        order: None,
        audit: None,
        seating: None,
    }
}

/// A one-round report for rendering tests.
pub fn report(outcome: RunOutcome) -> RunReport {
    RunReport {
        issue: 12,
        title: "Add option".into(),
        run_id: "r-1".into(),
        outcome,
        requirements: crate::spec::Requirements::from_body(""),
        extraction: "checkboxes",
        rounds: vec![RoundReport {
            skipped: vec![SkippedBot {
                bot_id: "smart_bot_3".into(),
                reason: "timed out".into(),
                detail: String::new(),
            }],
            winner_bot: Some("smart_bot_2".into()),
            ..round(
                vec![proposal("proposal_1", "smart_bot_2", 0.8123)],
                &["proposal_1"],
            )
        }],
        events: vec!["e.json".into()],
        accounts: vec![],
        total: Default::default(),
        stopped: None,
        branch: Some("ralph/12-add-option".into()),
        pr_url: Some("https://github.com/o/r/pull/13".into()),
        escalation: None,
        warnings: vec![],
        sandbox: None,
        git_tampering: vec![],
        network_refused: vec![],
        phases: vec![],
        critical_path: vec![],
        check_time: Default::default(),
        wall_ms: 0,
    }
}

/// A check that ran and passed.
pub fn passed_check(name: &str, kind: CheckKind, command: &str) -> CheckResult {
    CheckResult {
        name: name.into(),
        kind,
        command: command.into(),
        status: CheckStatus::Passed,
        exit_code: Some(0),
        duration_ms: 1,
        output_tail: String::new(),
        hint: None,
        measure: Default::default(),
        configured: false,
        advisory: None,
        uses: Default::default(),
        trace: Default::default(),
    }
}

/// A round's seating (`seed`, round 1) of `bots` in which exactly the `seated` ones have a seat:
/// they are sure winners, the others sure losers, and all have a history.
pub fn seating(
    bots: &[&str],
    seated: &[&str],
    labels: &[&str],
    seed: u64,
) -> crate::market::seating::Seating {
    use crate::market::seating::{draw, Candidate, SeatAsk};
    let candidates: Vec<Candidate> = bots
        .iter()
        .map(|id| {
            let sure = seated.contains(id);
            Candidate {
                bot_id: id.to_string(),
                alpha: if sure { 1e6 } else { 1.0 },
                beta: if sure { 1.0 } else { 1e6 },
                history: 1,
                idle: 0,
                departed: None,
                surprise: 1.0,
                cost_usd: None,
                cost_estimate_usd: None,
                unavailable: None,
            }
        })
        .collect();
    let ask = SeatAsk {
        seats: seated.len() as u32,
        value_per_merge: 10.0,
        stale_after: 8,
        suspect_odds: 2.0,
        anchor: true,
        misjudge: 0.0,
        budget_usd: None,
        seed,
        issue: 0,
        round: 1,
        labels: labels.iter().map(|l| l.to_string()).collect(),
    };
    let s = draw(&candidates, &ask);
    assert_eq!(s.seated().count(), seated.len(), "{}", s.line());
    s
}

/// A bot's seat record with a uniform posterior, `history` observations and its measured
/// cost per proposal.
pub fn seat_record(bot: &str, history: u32, cost: Option<f64>) -> crate::ledger::seats::SeatRecord {
    crate::ledger::seats::SeatRecord {
        bot_id: bot.to_owned(),
        alpha: 1.0,
        beta: 1.0,
        history,
        departed: None,
        surprise: 1.0,
        idle: 0,
        cost_per_proposal: cost,
        proposal_cost_usd: 0.0,
        seats_won: 0,
        merged: 0,
    }
}

/// The settings of a repository at `root` with the local tracker and the configuration `config`.
/// An agent of `backend` with nothing else set (a 60 s timeout).
pub fn agent_config(backend: crate::config::BackendKind) -> crate::config::AgentConfig {
    crate::config::AgentConfig {
        backend,
        model: None,
        command: vec![],
        base_url: None,
        timeout_secs: 60,
        dir: None,
        api_key_env: None,
        max_tokens: None,
        temperature: None,
        args: vec![],
        price: None,
    }
}

pub fn settings(root: &std::path::Path, config: &str) -> crate::settings::Settings {
    use crate::config::{Config, ConfigSource, TrackerKind};
    crate::settings::Settings {
        root: root.to_owned(),
        ralph_dir: root.join(".ralph"),
        repo: None,
        tracker: TrackerKind::Local,
        config: Config::from_toml(std::path::Path::new("config.toml"), config).unwrap(),
        config_source: ConfigSource::Defaults,
    }
}

/// Runs `git ARGS` in `dir` without the user's or the system's configuration, as a fixed
/// author; panics when it fails. Returns its output, trimmed.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
