//! End-to-end tests of the `ralph` binary: init, leaderboard, events, verify, reset,
//! completions and configuration errors, each in a fresh temporary repository.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use tempfile::TempDir;

fn ralph(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env_remove("RALPH_LOG")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb");
    cmd
}

fn repo() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    ralph(dir.path()).arg("init").assert().success();
    dir
}

fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A prototype event file, as the original arbiter wrote them (colons in the name).
fn prototype_event(
    dir: &Path,
    time: &str,
    bot: &str,
    outcome: &str,
    delta: f64,
    accuracy: Option<f64>,
) {
    let body = serde_json::json!({
        "timestamp": time,
        "issue_number": 123,
        "bot_id": bot,
        "outcome": outcome,
        "proposal_score": 0.87,
        "implementation_score": accuracy.map(|_| 0.85),
        "accuracy": accuracy,
        "weight_delta": delta,
        "iteration_count": 3,
        "metrics": {"tests_passed": true, "code_quality_passed": true, "coverage_delta": 2.5,
                    "lines_changed": 45, "files_affected": 3}
    });
    let path = dir.join(format!(".ralph/events/{time}-{bot}-{outcome}.json"));
    fs::write(path, serde_json::to_string_pretty(&body).unwrap()).unwrap();
}

/// The prototype's record of a round of issue 123 won by smart_bot_2.
fn prototype_win(dir: &Path) {
    prototype_event(
        dir,
        "2026-01-29T10:30:00Z",
        "smart_bot_2",
        "success",
        0.15,
        Some(0.98),
    );
}

/// The same round with smart_bot_1 not selected.
fn prototype_round(dir: &Path) {
    prototype_win(dir);
    prototype_event(
        dir,
        "2026-01-29T10:31:00Z",
        "smart_bot_1",
        "not_selected",
        -0.02,
        None,
    );
}

fn bot<'a>(lb: &'a Value, id: &str) -> &'a Value {
    lb["bots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bot_id"] == id)
        .unwrap_or_else(|| panic!("no bot {id} in {lb}"))
}

#[test]
fn init_is_idempotent_and_force_rewrites_only_config_files() {
    let dir = repo();
    let ralph_dir = dir.path().join(".ralph");
    for f in ["config.toml", ".gitignore", "events/.gitkeep"] {
        assert!(ralph_dir.join(f).exists(), "{f}");
    }
    let gitignore = fs::read_to_string(ralph_dir.join(".gitignore")).unwrap();
    for line in ["marketplace.json", "runs/", "cache/"] {
        assert!(gitignore.lines().any(|l| l == line), "{line}");
    }
    fs::write(ralph_dir.join("config.toml"), "max_iterations = 3\n").unwrap();
    prototype_win(dir.path());
    ralph(dir.path())
        .arg("init")
        .assert()
        .success()
        .stdout(predicate::str::contains("kept  .ralph/config.toml"));
    assert_eq!(
        fs::read_to_string(ralph_dir.join("config.toml")).unwrap(),
        "max_iterations = 3\n"
    );
    ralph(dir.path())
        .args(["init", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains("overwritten  .ralph/config.toml"));
    assert!(fs::read_to_string(ralph_dir.join("config.toml"))
        .unwrap()
        .contains("max_iterations = 15"));
    assert_eq!(
        fs::read_dir(ralph_dir.join("events")).unwrap().count(),
        2,
        "events untouched"
    );
}

#[test]
fn leaderboard_without_events_shows_the_configured_bots() {
    let dir = repo();
    let lb = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(lb["event_count"], 0);
    assert_eq!(lb["total_budget_pool"], 30);
    assert_eq!(lb["bots"].as_array().unwrap().len(), 3);
    for b in lb["bots"].as_array().unwrap() {
        assert!((b["weight"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(b["efficiency"], 1.0);
        assert_eq!(b["budget"], 10);
        assert_eq!(b["retired"], false);
        for key in ["bot_id", "successes", "failures", "average_accuracy"] {
            assert!(b.get(key).is_some(), "{key}");
        }
    }
    ralph(dir.path()).arg("status").assert().success().stdout(
        predicate::str::contains("smart_bot_1").and(predicate::str::contains("No events yet")),
    );
}

#[test]
fn prototype_events_fold_into_the_expected_leaderboard() {
    let dir = repo();
    // 1/3 each; smart_bot_2 +0.15 → 0.48333/1.15; smart_bot_1 −0.02; old_bot is not configured.
    prototype_round(dir.path());
    prototype_event(
        dir.path(),
        "2026-01-30T09:00:00Z",
        "old_bot",
        "failure",
        -0.15,
        Some(0.5),
    );
    let lb = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(lb["event_count"], 3);
    assert_eq!(lb["skipped"].as_array().unwrap().len(), 0);
    let third = 1.0 / 3.0;
    let (w2, w1, w3) = ((third + 0.15) / 1.15, third / 1.15, third / 1.15);
    let (w2, w1, w3) = (w2 / 0.98, (w1 - 0.02) / 0.98, w3 / 0.98);
    for (id, w) in [
        ("smart_bot_2", w2),
        ("smart_bot_1", w1),
        ("smart_bot_3", w3),
    ] {
        let got = bot(&lb, id)["weight"].as_f64().unwrap();
        assert!((got - w).abs() < 1e-12, "{id}: {got} vs {w}");
    }
    assert_eq!(lb["bots"][0]["bot_id"], "smart_bot_2", "sorted by weight");
    assert_eq!(bot(&lb, "smart_bot_2")["successes"], 1);
    assert_eq!(bot(&lb, "smart_bot_2")["average_accuracy"], 0.98);
    let old = bot(&lb, "old_bot");
    assert_eq!(old["retired"], true);
    assert_eq!(old["failures"], 1);
    assert_eq!(old["efficiency"], 0.0);
    let budgets: u64 = lb["bots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["budget"].as_u64().unwrap())
        .sum();
    assert_eq!(budgets, 30);
    assert_eq!(lb["recent"].as_array().unwrap().len(), 3);
    // docs/specification.md §8.5 extras: Beta(2,1) for one success; the winner outranks the bot it
    // beat.
    let rate = &bot(&lb, "smart_bot_2")["success_rate"];
    assert!((rate["mean"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!((rate["low"].as_f64().unwrap() - 0.05f64.sqrt()).abs() < 1e-9);
    let rating = |id: &str| bot(&lb, id)["rating"]["conservative"].as_f64().unwrap();
    assert!(rating("smart_bot_2") > rating("smart_bot_1"));
    assert_eq!(lb["arbiter_health"]["pairs"], 2);
    assert!(lb["arbiter_health"]["rank_correlation"].is_null());

    let text = ralph(dir.path()).arg("leaderboard").output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("old_bot (retired)"), "{text}");
    assert!(text.contains("Recent events"), "{text}");
    assert!(text.contains("+0.150"), "{text}");
    assert!(text.contains("0.67 [0.22–0.97]"), "{text}");
    assert!(text.contains("Arbiter health"), "{text}");
}

#[test]
fn corrupt_files_are_named_skipped_and_kept() {
    let dir = repo();
    prototype_win(dir.path());
    let events = dir.path().join(".ralph/events");
    fs::write(
        events.join("2026-02-01T00-00-00-000000Z-smart_bot_1-success.json"),
        "{\"half\":",
    )
    .unwrap();
    fs::write(
        events.join("2026-02-02T00-00-00-000000Z-smart_bot_1-success.json"),
        "",
    )
    .unwrap();
    let wrong_name = events.join("2026-02-03T00-00-00-000000Z-smart_bot_3-failure.json");
    prototype_event(
        dir.path(),
        "2026-02-03T00:00:00Z",
        "smart_bot_1",
        "success",
        0.1,
        Some(0.9),
    );
    fs::rename(
        events.join("2026-02-03T00:00:00Z-smart_bot_1-success.json"),
        &wrong_name,
    )
    .unwrap();

    let out = ralph(dir.path())
        .args(["leaderboard", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lb: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(lb["event_count"], 1);
    let skipped = lb["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3);
    let reasons: Vec<String> = skipped
        .iter()
        .map(|s| s["reason"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("invalid JSON")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("empty")), "{reasons:?}");
    assert!(
        reasons.iter().any(|r| r.contains("does not match")),
        "{reasons:?}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("2026-02-01T00-00-00-000000Z-smart_bot_1-success.json"),
        "{stderr}"
    );

    ralph(dir.path())
        .args(["events", "verify"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains(
                "bad 2026-02-02T00-00-00-000000Z-smart_bot_1-success.json: file is empty",
            )
            .and(predicate::str::contains("1 valid event file(s), 3 bad")),
        );
    let v = ralph(dir.path())
        .args(["events", "verify", "--json"])
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(v["valid"], 1);
    assert_eq!(v["invalid"].as_array().unwrap().len(), 3);
    assert!(wrong_name.exists(), "bad files are never deleted");
    assert_eq!(fs::read_dir(&events).unwrap().count(), 5);
}

#[test]
fn events_verify_passes_on_a_clean_ledger() {
    let dir = repo();
    prototype_win(dir.path());
    ralph(dir.path())
        .args(["events", "verify"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 valid event file(s), 0 bad"));
}

#[test]
fn events_are_listed_and_filtered() {
    let dir = repo();
    prototype_round(dir.path());
    let all = json_of(ralph(dir.path()).args(["events", "--json"]));
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(
        all[0]["file"],
        "2026-01-29T10:30:00Z-smart_bot_2-success.json"
    );
    assert_eq!(all[0]["outcome"], "success");
    assert_eq!(all[0]["metrics"]["lines_changed"], 45);
    let one = json_of(ralph(dir.path()).args(["events", "--json", "--bot", "smart_bot_1"]));
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["bot_id"], "smart_bot_1");
    let none = json_of(ralph(dir.path()).args(["events", "--json", "--issue", "7"]));
    assert_eq!(none.as_array().unwrap().len(), 0);
    ralph(dir.path())
        .args(["events", "--issue", "123"])
        .assert()
        .success()
        .stdout(predicate::str::contains("not_selected").and(predicate::str::contains("-0.020")));
}

#[test]
fn the_cache_is_reused_until_events_change() {
    let dir = repo();
    prototype_win(dir.path());
    let first = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(first["cache"], "rebuilt");
    assert!(dir.path().join(".ralph/marketplace.json").exists());
    let second = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(second["cache"], "hit");
    assert_eq!(first["bots"], second["bots"]);
    prototype_event(
        dir.path(),
        "2026-01-29T10:31:00Z",
        "smart_bot_1",
        "failure",
        -0.15,
        Some(0.2),
    );
    let third = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(third["cache"], "rebuilt");
    assert_eq!(third["event_count"], 2);
}

/// Rewrites an event file in place, as a hand edit or a checkout over it would: same name.
fn edit_in_place(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut event: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    edit(&mut event);
    fs::write(path, serde_json::to_string_pretty(&event).unwrap()).unwrap();
}

#[test]
fn leaderboard_trusts_the_names_until_rebuild_reads_an_edit_in_place() {
    let dir = repo();
    prototype_win(dir.path());
    let file = dir
        .path()
        .join(".ralph/events/2026-01-29T10:30:00Z-smart_bot_2-success.json");
    let first = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(first["cache"], "rebuilt");
    assert_eq!(bot(&first, "smart_bot_2")["total_delta"], 0.15);

    edit_in_place(&file, |e| e["weight_delta"] = 0.05.into());
    let cached = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(cached["cache"], "hit", "the same names: the cached fold");
    assert_eq!(cached["bots"], first["bots"]);

    let rebuilt = json_of(ralph(dir.path()).args(["leaderboard", "--rebuild", "--json"]));
    assert_eq!(rebuilt["cache"], "rebuilt");
    assert_eq!(bot(&rebuilt, "smart_bot_2")["total_delta"], 0.05);
    let after = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(after["cache"], "hit", "--rebuild rewrote the cache");
    assert_eq!(after["bots"], rebuilt["bots"]);
}

#[test]
fn events_verify_reads_every_file_and_catches_an_edit_the_cache_hides() {
    let dir = repo();
    prototype_round(dir.path());
    let events = dir.path().join(".ralph/events");
    let win = events.join("2026-01-29T10:30:00Z-smart_bot_2-success.json");
    let verify_json = || {
        let out = ralph(dir.path())
            .args(["events", "verify", "--json"])
            .output()
            .unwrap();
        (
            out.status.code(),
            serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        )
    };
    let (code, v) = verify_json();
    assert_eq!((code, &v["cache"]), (Some(0), &Value::from("absent")));
    json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    let (code, v) = verify_json();
    assert_eq!((code, &v["cache"]), (Some(0), &Value::from("current")));

    // A valid edit in place: every file is still good, but the cache no longer folds them.
    edit_in_place(&win, |e| e["weight_delta"] = 0.05.into());
    let (code, v) = verify_json();
    assert_eq!(
        (code, &v["cache"], &v["valid"]),
        (Some(1), &Value::from("stale"), &Value::from(2))
    );
    ralph(dir.path())
        .args(["events", "verify"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("stale ")
                .and(predicate::str::contains("marketplace.json"))
                .and(predicate::str::contains("ralph leaderboard --rebuild")),
        );
    ralph(dir.path())
        .args(["leaderboard", "--rebuild"])
        .assert()
        .success();
    let (code, v) = verify_json();
    assert_eq!((code, &v["cache"]), (Some(0), &Value::from("current")));

    // Edited into garbage: the cached leaderboard does not look, verify names the file.
    fs::write(&win, "{\"timestamp\": oops").unwrap();
    let cached = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(
        (&cached["cache"], &cached["event_count"]),
        (&Value::from("hit"), &Value::from(2))
    );
    ralph(dir.path())
        .args(["events", "verify"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "bad 2026-01-29T10:30:00Z-smart_bot_2-success.json: invalid JSON",
        ));
    let rebuilt = json_of(ralph(dir.path()).args(["leaderboard", "--rebuild", "--json"]));
    assert_eq!(rebuilt["event_count"], 1);
    assert_eq!(
        rebuilt["skipped"][0]["file"],
        "2026-01-29T10:30:00Z-smart_bot_2-success.json"
    );
}

#[test]
fn html_report_has_a_chart_per_bot() {
    let dir = repo();
    prototype_win(dir.path());
    let page = dir.path().join("report.html");
    ralph(dir.path())
        .args(["leaderboard", "--html"])
        .arg(&page)
        .assert()
        .success()
        .stderr(predicate::str::contains("Wrote the HTML leaderboard"));
    let html = fs::read_to_string(page).unwrap();
    assert!(html.contains("<svg"));
    assert_eq!(html.matches("<polyline").count(), 3);
    assert!(html.contains("smart_bot_2"));
}

#[test]
fn reset_needs_confirmation_and_keeps_the_configuration() {
    let dir = repo();
    prototype_win(dir.path());
    ralph(dir.path()).arg("leaderboard").assert().success();
    fs::create_dir_all(dir.path().join(".ralph/runs/12")).unwrap();
    ralph(dir.path())
        .arg("reset")
        .write_stdin("y\n")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("error: refusing to delete 1 event file(s)")
                .and(predicate::str::contains("hint: run `ralph reset --yes`")),
        );
    assert_eq!(
        fs::read_dir(dir.path().join(".ralph/events"))
            .unwrap()
            .count(),
        2
    );
    ralph(dir.path())
        .args(["reset", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Deleted 1 event file(s)"));
    let ralph_dir = dir.path().join(".ralph");
    assert!(ralph_dir.join("config.toml").exists());
    assert!(ralph_dir.join("events/.gitkeep").exists());
    assert!(!ralph_dir.join("marketplace.json").exists());
    assert!(!ralph_dir.join("runs").exists());
    let lb = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(lb["event_count"], 0);
}

#[test]
fn configuration_errors_exit_2_and_name_the_key_and_file() {
    let dir = repo();
    fs::write(
        dir.path().join(".ralph/config.toml"),
        "[marketplace]\nnum_bot = 4\n",
    )
    .unwrap();
    ralph(dir.path())
        .arg("leaderboard")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("error: invalid configuration file")
                .and(predicate::str::contains("config.toml"))
                .and(predicate::str::contains("num_bot"))
                .and(predicate::str::contains("hint:")),
        );
    fs::write(
        dir.path().join(".ralph/config.toml"),
        "[scoring.weights]\nrisk = 0.4\n",
    )
    .unwrap();
    ralph(dir.path())
        .arg("leaderboard")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "must sum to 1.0, but they sum to 1.200000",
        ));
}

#[test]
fn the_prototype_config_json_is_read_when_there_is_no_toml() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".ralph/events")).unwrap();
    fs::write(
        dir.path().join(".ralph/config.json"),
        r#"{"num_bots": 2, "base_budget_per_bot": 4, "weight_constraints": {"min": 0.1, "max": 0.7}}"#,
    )
    .unwrap();
    let lb = json_of(ralph(dir.path()).args(["leaderboard", "--json"]));
    assert_eq!(lb["bots"].as_array().unwrap().len(), 2);
    assert_eq!(lb["total_budget_pool"], 8);
}

#[test]
fn global_options_and_usage_errors() {
    let dir = repo();
    ralph(dir.path())
        .args(["-C", "does/not/exist", "leaderboard"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such directory"));
    let elsewhere = tempfile::tempdir().unwrap();
    ralph(elsewhere.path())
        .arg("leaderboard")
        .arg("-C")
        .arg(dir.path())
        .arg("--json")
        .assert()
        .success();
    ralph(dir.path()).arg("frobnicate").assert().code(2);
    ralph(dir.path())
        .args(["--repo", "not-a-slug", "status"])
        .assert()
        .code(2);
    ralph(dir.path())
        .args(["leaderboard", "--color", "always"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\u{1b}["));
    ralph(dir.path())
        .args(["leaderboard", "--color", "never"])
        .assert()
        .success()
        .stdout(predicate::str::contains("\u{1b}[").not());
    ralph(dir.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("leaderboard").and(predicate::str::contains("compete")));
}

#[test]
fn completions_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        ralph(dir.path())
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("leaderboard"));
    }
    ralph(dir.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}
