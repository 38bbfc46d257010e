//! Whole-output tests of `ralph demo`: the terminal story and the `--json` document, and the
//! `--json` documents of the commands a user runs after it in the sample repository
//! (`leaderboard`, `spec`, `queue`, `config`), each compared with its reviewed snapshot in
//! `tests/it/snapshots/` (update with
//! `INSTA_UPDATE=always cargo test --test it snapshots` and review the diff). What differs from
//! run to run is normalised first: temporary paths, times, durations, commit hashes, event file
//! names, the blinded labels `proposal_N` (drawn from a fresh seed each round), the order the
//! proposals arrive in, and the baseline's line, which is printed whenever the baseline — run
//! beside the first proposals — ends.

use assert_cmd::Command;
use serde_json::Value;

fn demo(json: bool) -> (String, String) {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1")
        .env("RALPH_SANDBOX", "off")
        .arg("demo");
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// The story with the lines whose place depends on timing put in a fixed place: proposal
/// arrivals sorted within their block, the baseline line first.
fn steady(story: &str) -> String {
    let mut baseline = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let mut arrivals: Vec<String> = Vec::new();
    for line in story.lines() {
        if line.starts_with("Baseline ") {
            baseline.push(line.to_owned());
            continue;
        }
        if line.starts_with("  ✓ ") && line.contains(": proposal in ") {
            arrivals.push(line.to_owned());
            continue;
        }
        arrivals.sort();
        out.append(&mut arrivals);
        out.push(line.to_owned());
    }
    arrivals.sort();
    out.append(&mut arrivals);
    baseline.extend(out);
    baseline.join("\n")
}

fn filters() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"/tmp/ralph-demo-[A-Za-z0-9]+", "[tmp]");
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d+Z-([a-z_0-9-]+)\.json",
        "[stamp]-$1.json",
    );
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?Z?)?",
        "[time]",
    );
    s.add_filter(r"\b[0-9a-f]{10,40}\b", "[hash]");
    s.add_filter(r"\b\d+(\.\d+)?m?s\b", "[dur]");
    s.add_filter(r"proposal_\d", "proposal_N");
    s
}

#[test]
fn the_demo_story_matches_its_snapshot() {
    let (stdout, stderr) = demo(false);
    assert!(
        !stderr.contains("warning"),
        "the demo prints no warning:\n{stderr}"
    );
    let story = format!("{}\n--- stdout ---\n{stdout}", steady(&stderr));
    filters().bind(|| insta::assert_snapshot!("demo_story", story));
}

#[test]
fn the_demo_json_document_matches_its_snapshot() {
    let (stdout, _) = demo(true);
    let mut v: Value = serde_json::from_str(&stdout).unwrap();
    // Each round's proposals in bot order: their labels and order are the round's seed's.
    for round in v["report"]["rounds"].as_array_mut().unwrap() {
        if let Some(list) = round["proposals"].as_array_mut() {
            list.sort_by(|a, b| a["bot_id"].as_str().cmp(&b["bot_id"].as_str()));
        }
    }
    let mut s = filters();
    for (selector, what) in [
        (".report.run_id", "[run_id]"),
        (".report.wall_ms", "[ms]"),
        (".report.check_time.total_ms", "[ms]"),
        (".report.phases", "[phases]"),
        (".report.critical_path", "[critical path]"),
        (".report.sandbox", "[this machine's sandbox]"),
        (".report.rounds[].seed", "[seed]"),
        (".report.rounds[].ranking", "[labels]"),
        (".report.rounds[].winner", "[label]"),
        (".report.rounds[].order", "[labels]"),
        (".report.rounds[].proposals[].proposal_id", "[label]"),
        (".**.duration_ms", "[ms]"),
    ] {
        s.add_redaction(selector, what);
    }
    s.bind(|| insta::assert_json_snapshot!("demo_json", v));
}

/// Runs `ralph ARGS --json` in `dir` and returns its document.
fn json_in(dir: &std::path::Path, args: &[&str]) -> Value {
    let out = Command::cargo_bin("ralph")
        .unwrap()
        .current_dir(dir)
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1")
        .env("RALPH_SANDBOX", "off")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ralph {args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("ralph {args:?}: {e}"))
}

#[test]
fn the_json_documents_after_the_demo_match_their_snapshots() {
    let out = Command::cargo_bin("ralph")
        .unwrap()
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1")
        .env("RALPH_SANDBOX", "off")
        .args(["demo", "--keep"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let sample = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Sample repository: "))
        .and_then(|l| l.split(' ').next())
        .map(std::path::PathBuf::from)
        .unwrap();
    let mut s = filters();
    s.add_filter(r"\bproposal_\d\b", "proposal_N");
    s.add_redaction(".**.timestamp", "[time]");
    s.add_redaction(".**.last_event", "[time]");
    s.add_redaction(".**.file", "[event file]");
    // The agent CLIs this machine has on PATH.
    s.add_redaction(".clis", "[this machine's CLIs]");
    // Where this machine keeps ralph's checkouts (its home folder's state folder).
    s.add_filter(r"/[^\x22 ]*/ralph/checkouts/", "[checkouts]/");
    // The environment of the machine running the tests.
    s.add_filter(
        r"(\d+ of \d+ variables dropped|all \d+ variables pass)[^\x22]*",
        "[this machine's environment, by the allowlist]",
    );
    s.bind(|| {
        insta::assert_json_snapshot!("leaderboard_json", json_in(&sample, &["leaderboard"]));
        insta::assert_json_snapshot!("spec_json", json_in(&sample, &["spec", "1"]));
        insta::assert_json_snapshot!("queue_json", json_in(&sample, &["queue"]));
        insta::assert_json_snapshot!("config_json", json_in(&sample, &["config"]));
        // After the demo's merge was settled: the pull request is followed, nothing is new.
        insta::assert_json_snapshot!("follow_json", json_in(&sample, &["follow"]));
        insta::assert_json_snapshot!("doctor_json", json_in(&sample, &["doctor"]));
    });
    let root = sample.parent().unwrap();
    assert!(root.starts_with(std::env::temp_dir()), "{root:?}");
    std::fs::remove_dir_all(root).unwrap();
}
