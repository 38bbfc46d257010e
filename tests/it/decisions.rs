//! Decisions you can measure (scoring/README.md, Measuring the decisions), through the binary: the
//! `review` role scores the implemented change — its innovation and consultation-concern scores
//! replace the neutral 0.5 in the implementation score, the accuracy, the events, the report and
//! the pull request — and when it cannot answer the neutral score stays and the report says why.

use crate::compete::{run, Repo, Setup, GOOD};
use serde_json::Value;

/// An arbiter that verifies req_1 and reviews the change (saving the review prompt).
const REVIEWER: &str = r#"cat > "$HOME/arbiter.$RALPH_ROLE.prompt"
case "$RALPH_ROLE" in
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  review) echo '{"innovation":0.8,"innovation_reasoning":"a one-line greet reusing echo","concerns_addressed":0.9,"concerns_reasoning":"the quoting concern is handled"}';;
  *) exit 1;;
esac"#;

fn pr_body(repo: &Repo) -> String {
    repo.pull_request_body().unwrap()
}

fn winner_event(repo: &Repo) -> Value {
    repo.events()
        .into_iter()
        .find(|e| e["outcome"] == "success")
        .expect("the winner's event")
}

#[test]
fn the_review_of_the_change_replaces_the_neutral_scores() {
    let repo = Repo::with(Setup {
        implementer: GOOD,
        arbiter: REVIEWER,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let imp = &report["rounds"][0]["implementation"];
    assert_eq!(imp["review"]["status"], "scored", "{imp}");
    assert_eq!(imp["scores"]["innovation"], 0.8);
    assert_eq!(imp["scores"]["specialist_validation"], 0.9);
    assert_eq!(
        imp["details"]["innovation"],
        "reviewed on the diff: a one-line greet reusing echo"
    );
    // The reviewer saw the change.
    let prompt = std::fs::read_to_string(repo.tools.join("arbiter.review.prompt")).unwrap();
    assert!(
        prompt.contains("+greet() { echo \"Hello, $1!\"; }")
            && prompt.contains("the attempt passed"),
        "{prompt}"
    );
    // The events carry the reviewed scores, and the accuracy is computed from them.
    let e = winner_event(&repo);
    assert_eq!(e["scores"]["implementation"]["innovation"], 0.8, "{e}");
    assert_eq!(e["implementation_score"], imp["total"]);
    assert_eq!(e["accuracy"], imp["accuracy"]);
    // The pull request says it.
    let body = pr_body(&repo);
    assert!(
        body.contains("Review of the change — innovation 0.80: a one-line greet reusing echo; concerns addressed 0.90: the quoting concern is handled"),
        "{body}"
    );
    assert!(out
        .stderr
        .contains("- Review: innovation 0.80, concerns addressed 0.90"));
}

#[test]
fn without_a_review_the_neutral_score_stays_and_the_report_says_why() {
    let repo = Repo::new(GOOD, &["alpha", "beta"]);
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let imp = &report["rounds"][0]["implementation"];
    assert_eq!(imp["review"]["status"], "unavailable", "{imp}");
    assert!(
        imp["review"]["reason"].as_str().unwrap().contains("exit"),
        "{imp}"
    );
    assert_eq!(imp["scores"]["innovation"], 0.5);
    assert_eq!(imp["scores"]["specialist_validation"], 0.5);
    assert!(out.stderr.contains("the review role gave no usable answer"));
    assert!(pr_body(&repo).contains("_No review of the change ("));
}

/// Writes `n` implemented proposals into the ledger: scores from a fixed generator, passing
/// exactly when spec alignment is above 0.5 (so it alone predicts the outcome).
fn ledger(dir: &std::path::Path, n: usize) {
    let events = dir.join(".ralph/events");
    let mut x: u64 = 42;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) as f64) / f64::from(1u32 << 31)
    };
    for k in 0..n {
        let s: Vec<f64> = (0..6).map(|_| (next() * 1000.0).round() / 1000.0).collect();
        let outcome = if s[0] > 0.5 { "success" } else { "failure" };
        let event = serde_json::json!({
            "schema_version": 1, "timestamp": format!("2026-02-01T00:00:00.{:06}Z", k + 1),
            "issue_number": 1 + k, "bot_id": "smart_bot_1", "outcome": outcome, "weight_delta": 0.0,
            "scores": {"proposal": {"spec_alignment": s[0], "technical_quality": s[1], "innovation": s[2],
                       "risk": s[3], "efficiency": s[4], "specialist_validation": s[5]}}
        });
        std::fs::write(
            events.join(format!(
                "2026-02-01T00-00-00-{:06}Z-smart_bot_1-{outcome}.json",
                k + 1
            )),
            event.to_string(),
        )
        .unwrap();
    }
}

fn ralph_in(dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env_remove("RALPH_LOG")
        .env("NO_COLOR", "1");
    cmd
}

#[test]
fn tune_refuses_with_too_few_outcomes_and_says_how_many_more() {
    let dir = tempfile::tempdir().unwrap();
    ralph_in(dir.path()).arg("init").assert().success();
    ledger(dir.path(), 12);
    let out = run(ralph_in(dir.path()).arg("tune"));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("no suggestion: 12 implemented proposals with an outcome; tune needs at least 30 (18 more)"),
        "{}",
        out.stderr
    );
}

#[test]
fn tune_finds_the_dimension_that_predicts_success_and_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    ralph_in(dir.path()).arg("init").assert().success();
    ledger(dir.path(), 150);
    let out = run(ralph_in(dir.path()).args(["tune", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let w = &v["suggested_weights"];
    let spec = w["spec_alignment"].as_f64().unwrap();
    for d in [
        "technical_quality",
        "innovation",
        "risk",
        "efficiency",
        "specialist_validation",
    ] {
        assert!(spec > w[d].as_f64().unwrap(), "{v}");
    }
    assert_eq!(v["better"], true, "{v}");
    assert!(v["suggested"]["log_loss"].as_f64() < v["current"]["log_loss"].as_f64());
    // The whole document: the fit is deterministic for a given ledger (figures to 4 places).
    let mut settings = insta::Settings::clone_current();
    for selector in [
        ".current.*",
        ".suggested.*",
        ".suggested_weights.*",
        ".intercept",
        ".scale",
    ] {
        settings.add_redaction(selector, insta::rounded_redaction(4));
    }
    settings.bind(|| insta::assert_json_snapshot!("tune_json", v));
    let out = run(ralph_in(dir.path()).arg("tune"));
    assert!(
        out.stdout.contains("spec_alignment              0.300"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("`ralph tune --write`"),
        "{}",
        out.stderr
    );

    let before = std::fs::read_to_string(dir.path().join(".ralph/config.toml")).unwrap();
    let out = run(ralph_in(dir.path()).args(["tune", "--write"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = std::fs::read_to_string(dir.path().join(".ralph/config.toml")).unwrap();
    assert!(
        after.contains(&format!("spec_alignment = {spec:.3}")),
        "{after}"
    );
    assert_eq!(
        before.lines().count(),
        after.lines().count(),
        "only values changed"
    );
    // The configuration still loads, with the new weights.
    let out = run(ralph_in(dir.path()).args(["config", "--json"]));
    let c: Value = serde_json::from_str(&out.stdout).unwrap();
    let loaded = c["config"]["scoring_weights"]["spec_alignment"]
        .as_f64()
        .unwrap();
    assert!((loaded - spec).abs() < 1e-9, "{c}");
}

/// Writes `n` winners whose pull requests settled: every one passed ralph's checks, and the
/// maintainers merged exactly those whose innovation score is above 0.5 (one was merged, then
/// reverted: not kept).
fn merge_ledger(dir: &std::path::Path, n: usize) {
    let events = dir.join(".ralph/events");
    let mut x: u64 = 7;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) as f64) / f64::from(1u32 << 31)
    };
    let write = |name: String, event: Value| {
        std::fs::write(events.join(name), event.to_string()).unwrap();
    };
    for k in 0..n {
        let s: Vec<f64> = (0..6).map(|_| (next() * 1000.0).round() / 1000.0).collect();
        write(
            format!("2026-03-01T00-00-00-{:06}Z-smart_bot_1-success.json", k + 1),
            serde_json::json!({
                "schema_version": 1, "timestamp": format!("2026-03-01T00:00:00.{:06}Z", k + 1),
                "issue_number": 1 + k, "bot_id": "smart_bot_1", "outcome": "success", "weight_delta": 0.1,
                "scores": {"proposal": {"spec_alignment": s[0], "technical_quality": s[1], "innovation": s[2],
                           "risk": s[3], "efficiency": s[4], "specialist_validation": s[5]}}
            }),
        );
        let outcome = if s[2] > 0.5 {
            "merged"
        } else {
            "closed_unmerged"
        };
        write(
            format!(
                "2026-03-02T00-00-00-{:06}Z-smart_bot_1-{outcome}.json",
                k + 1
            ),
            serde_json::json!({
                "schema_version": 1, "timestamp": format!("2026-03-02T00:00:00.{:06}Z", k + 1),
                "issue_number": 1 + k, "bot_id": "smart_bot_1", "outcome": outcome, "weight_delta": 0.0,
                "pull_request": {"number": 1000 + k, "revisions": 0}
            }),
        );
    }
}

#[test]
fn tune_fits_to_merges_once_enough_pull_requests_settled() {
    let dir = tempfile::tempdir().unwrap();
    ralph_in(dir.path()).arg("init").assert().success();
    merge_ledger(dir.path(), 10);
    // Ten settled, all passed the checks: neither basis has enough; it says which it tried.
    let out = run(ralph_in(dir.path()).arg("tune"));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("fitted to ralph's checks: only 10 pull requests have settled"),
        "{}",
        out.stderr
    );
    let dir = tempfile::tempdir().unwrap();
    ralph_in(dir.path()).arg("init").assert().success();
    merge_ledger(dir.path(), 150);
    let out = run(ralph_in(dir.path()).args(["tune", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["outcomes"]["basis"], "merges", "{v}");
    assert_eq!(v["outcomes"]["settled_pull_requests"], 150);
    let w = &v["suggested_weights"];
    let innovation = w["innovation"].as_f64().unwrap();
    for d in ["spec_alignment", "technical_quality", "risk", "efficiency"] {
        assert!(innovation > w[d].as_f64().unwrap(), "{v}");
    }
    let out = run(ralph_in(dir.path()).arg("tune"));
    assert!(
        out.stdout.contains("150 settled pull requests"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("Outcomes: fitted to merges"),
        "{}",
        out.stderr
    );
}
