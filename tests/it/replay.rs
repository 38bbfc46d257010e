//! `ralph replay` through the binary: a real `ralph compete --record` (fake bots with different
//! plans, a fake judge), then the recorded round and the kept run report replayed under the
//! same configuration (nothing changes, and the recomputed totals are the round's own) and
//! under weights that hand the round to the other bot — and nothing written. Also every
//! refusal: no such directory, nothing replayable, a damaged or newer file, a bad `--config`.

use crate::common::{run_without, script, Out};
use crate::compete::{Repo, Setup, TOKEN};
use assert_cmd::Command;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn run(cmd: &mut Command) -> Out {
    run_without(cmd, &[TOKEN])
}

/// alpha: the broad plan (the box, its component, six files, 300 lines); beta: the narrow one
/// (one file, three lines, nothing addressed). The default weights favour alpha; weights on
/// risk and efficiency alone favour beta.
const BOTS: &str = r#"cat > /dev/null
case "$RALPH_BOT_ID" in
alpha) cat <<'JSON'
{"approach_summary":"Add greet to lib.sh with docs and tests","pseudo_code":"greet() { echo Hello; } plus documentation and tests across the tree","files_affected":[{"path":"lib.sh","change_type":"modify"},{"path":"test.sh","change_type":"modify"},{"path":"README.md","change_type":"create"},{"path":"docs/greet.md","change_type":"create"},{"path":"tests/a.sh","change_type":"create"},{"path":"tests/b.sh","change_type":"create"}],"estimated_complexity":{"lines_of_code":300,"files":6,"modules":3,"difficulty":"medium"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"overall_risk":"low"},"spec_alignment":{"checkboxes_addressed":["req_1"],"components_addressed":["`greet NAME` prints `Hello, NAME!`"],"implicit_requirements_addressed":["req_implicit_2"]},"success_probability":0.8}
JSON
;;
*) cat <<'JSON'
{"approach_summary":"One line in lib.sh","pseudo_code":"greet() { echo Hello; } and nothing else at all in this small change","files_affected":[{"path":"lib.sh","change_type":"modify"}],"estimated_complexity":{"lines_of_code":3,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"overall_risk":"low"},"spec_alignment":{"checkboxes_addressed":[],"components_addressed":[],"implicit_requirements_addressed":[]},"success_probability":0.8}
JSON
;;
esac"#;

/// Judges both proposals alike, in either order; verifies the box; fails `extract` (the
/// checkboxes are the requirements).
const ARBITER: &str = r#"cat > /dev/null
case "$RALPH_ROLE" in
  judge) echo '{"scores":[{"proposal_id":"proposal_1","technical_quality":0.7,"technical_quality_reasoning":"fine","innovation":0.5,"innovation_reasoning":"plain"},{"proposal_id":"proposal_2","technical_quality":0.7,"technical_quality_reasoning":"fine","innovation":0.5,"innovation_reasoning":"plain"}]}';;
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  *) echo 'no' >&2; exit 1;;
esac"#;

/// Weights on risk and efficiency alone.
const SMALL_WINS: &str = "[scoring.weights]\nspec_alignment = 0.0\ntechnical_quality = 0.0\ninnovation = 0.0\nspecialist_validation = 0.0\nrisk = 0.5\nefficiency = 0.5\n";

/// A competition recorded into `<tools>/rec`, won by alpha.
fn recorded_competition() -> (Repo, PathBuf) {
    let repo = Repo::with(Setup {
        bots: &["alpha", "beta"],
        arbiter: ARBITER,
        ..Setup::default()
    });
    script(&repo.tools, "bot.sh", BOTS);
    let rec = repo.tools.join("rec");
    let out = run(repo
        .ralph()
        .args(["compete", "3", "--record", rec.to_str().unwrap()]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(rec.join("scoring.r1.json").is_file());
    (repo, rec)
}

fn replay(repo: &Repo, args: &[&str]) -> Value {
    let out = run(repo.ralph().arg("replay").args(args).arg("--json"));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    files
}

fn bot_of_winner(round: &Value, key: &str) -> String {
    let id = round[key].as_str().unwrap();
    round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["proposal_id"] == id)
        .unwrap()["bot_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_recorded_competition_replays_unchanged_and_flips_under_other_weights() {
    let (repo, rec) = recorded_competition();
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".ralph/runs/3/report.json")).unwrap(),
    )
    .unwrap();
    let kept = &report["rounds"][0];
    assert_eq!(kept["winner_bot"], "alpha");
    std::fs::write(repo.tools.join("other.toml"), SMALL_WINS).unwrap();
    let before = (snapshot(&repo.root), snapshot(&repo.tools));
    let rec_arg = rec.to_str().unwrap();

    // The same configuration: nothing changes, and every total is the round's own.
    let same = replay(&repo, &[rec_arg]);
    assert_eq!(
        same["summary"],
        json!({"rounds": 1, "rankings_changed": 0, "winners_changed": 0, "winner_changes": []})
    );
    assert_eq!(
        same["config"],
        repo.root.join(".ralph/config.toml").display().to_string()
    );
    assert_eq!(same["order_swaps"], 1);
    let round = &same["rounds"][0];
    assert_eq!(round["method"], "recomputed");
    assert_eq!(
        (round["issue"].as_u64(), round["round"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(round["notes"], json!([]));
    assert_eq!(round["old_ranking"], kept["ranking"]);
    for p in round["proposals"].as_array().unwrap() {
        let reported = kept["proposals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["proposal_id"] == p["proposal_id"])
            .unwrap();
        let total = reported["total_score"].as_f64().unwrap();
        assert!(
            (p["new_total"].as_f64().unwrap() - total).abs() < 1e-12,
            "{p} vs {reported}"
        );
        assert!((p["old_total"].as_f64().unwrap() - total).abs() < 1e-12);
        assert_eq!(p["scores"], reported["scores"]);
    }

    // Weights on risk and efficiency: beta's narrow plan would have won.
    let other = repo.tools.join("other.toml");
    let other_arg = other.to_str().unwrap();
    let flipped = replay(&repo, &[rec_arg, "--config", other_arg]);
    assert_eq!(flipped["weights"]["risk"], 0.5);
    assert_eq!(flipped["summary"]["winners_changed"], 1);
    let change = &flipped["summary"]["winner_changes"][0];
    assert_eq!(
        (change["issue"].as_u64(), change["round"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(change["from"]["bot_id"], "alpha");
    assert_eq!(change["to"]["bot_id"], "beta");
    let round = &flipped["rounds"][0];
    assert_eq!(bot_of_winner(round, "old_winner"), "alpha");
    assert_eq!(bot_of_winner(round, "new_winner"), "beta");
    assert_eq!(round["ranking_changed"], true);

    // The terminal view: a table per round and the summary line.
    let out = run(repo
        .ralph()
        .args(["replay", rec_arg, "--config", other_arg]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("issue 3 round 1 (initial)"),
        "{}",
        out.stdout
    );
    let header = out.stdout.lines().find(|l| l.starts_with("  proposal "));
    assert!(
        header.is_some_and(|h| h.contains(" bot ") && h.contains(" total ") && h.ends_with("rank")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("1 → 2") && out.stdout.contains("2 → 1"));
    assert!(
        out.stdout.contains("winner would change:"),
        "{}",
        out.stdout
    );
    let summary = out.stdout.lines().last().unwrap();
    assert!(
        summary.starts_with(
            "1 round replayed: 1 ranking and 1 winner would change (issue 3 round 1: proposal_"
        ) && summary.contains(" alpha ")
            && summary.contains(" beta "),
        "{summary}"
    );

    // The kept run reports: re-weighted, with the same outcome.
    let runs = repo.root.join(".ralph/runs");
    let from_report = replay(&repo, &[runs.to_str().unwrap()]);
    assert_eq!(from_report["summary"]["winners_changed"], 0);
    let round = &from_report["rounds"][0];
    assert_eq!(round["method"], "reweighted");
    assert!(round["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("re-weighted from the report's scores"));
    let flipped = replay(&repo, &[runs.to_str().unwrap(), "--config", other_arg]);
    assert_eq!(
        flipped["summary"]["winner_changes"][0]["to"]["bot_id"],
        "beta"
    );
    // The whole .ralph directory: the report two levels down.
    let whole = replay(&repo, &[".ralph"]);
    assert_eq!(whole["summary"]["rounds"], 1);

    // Nothing was written by any of it.
    let after = (snapshot(&repo.root), snapshot(&repo.tools));
    let changed: Vec<&PathBuf> = [(&before.0, &after.0), (&before.1, &after.1)]
        .into_iter()
        .flat_map(|(b, a)| {
            b.keys()
                .chain(a.keys())
                .filter(|k| b.get(*k) != a.get(*k))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(changed.is_empty(), "replay changed {changed:?}");
}

/// A run report as `ralph compete` keeps it (the fields replay reads, and a few more).
fn report(issue: u64) -> Value {
    let scores = |sa: f64, risk: f64| {
        json!({"spec_alignment": sa, "technical_quality": 0.6, "innovation": 0.5, "risk": risk,
               "efficiency": 0.6, "specialist_validation": 1.0})
    };
    json!({
        "issue": issue, "title": "t", "run_id": "r", "outcome": "success",
        "rounds": [{
            "round": 1, "phase": "initial", "seed": 1,
            "proposals": [
                {"proposal_id": "proposal_1", "bot_id": "smart_bot_1", "total_score": 0.675,
                 "scores": scores(0.9, 0.5), "submission_time": "2026-01-05T10:00:00Z"},
                {"proposal_id": "proposal_2", "bot_id": "smart_bot_2", "total_score": 0.635,
                 "scores": scores(0.5, 0.9), "submission_time": "2026-01-05T10:01:00Z"}
            ],
            "ranking": ["proposal_1", "proposal_2"], "winner": "proposal_1", "human_review": false
        }]
    })
}

fn plain_ralph(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env_remove("RALPH_LOG")
        .env("NO_COLOR", "1");
    cmd
}

#[test]
fn replay_refuses_what_it_cannot_read_and_skips_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join(".ralph/runs/12")).unwrap();
    std::fs::create_dir_all(d.join("empty")).unwrap();

    let out = run(plain_ralph(d).args(["replay", "missing"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("missing: no such file or directory"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint: "), "{}", out.stderr);

    let out = run(plain_ralph(d).args(["replay", "empty"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("no scoring.r<N>.json or report.json in empty"),
        "{}",
        out.stderr
    );
    assert!(out
        .stderr
        .contains("record rounds with `ralph compete N --record empty`"));

    // A damaged report beside a good one: a warning naming it, and the good one replayed.
    std::fs::write(d.join(".ralph/runs/12/report.json"), report(12).to_string()).unwrap();
    std::fs::create_dir_all(d.join(".ralph/runs/13")).unwrap();
    std::fs::write(d.join(".ralph/runs/13/report.json"), "{\"issue\": 13").unwrap();
    let out = run(plain_ralph(d).args(["replay", ".ralph/runs"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("warning: skipped .ralph/runs/13/report.json: not JSON"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("1 round replayed: no ranking or winner would change"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("under defaults"), "{}", out.stdout);
    let out = run(plain_ralph(d).args(["replay", ".ralph/runs/13/report.json"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("cannot replay .ralph/runs/13/report.json: not JSON"),
        "{}",
        out.stderr
    );

    // A recording from a newer ralph.
    std::fs::create_dir_all(d.join("rec")).unwrap();
    std::fs::write(
        d.join("rec/scoring.r1.json"),
        json!({"version": 99}).to_string(),
    )
    .unwrap();
    let out = run(plain_ralph(d).args(["replay", "rec"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("recorded by a newer ralph (recording version 99"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: they were recorded by a newer ralph: update ralph"),
        "{}",
        out.stderr
    );

    // --config: missing, and invalid with the configuration's own message.
    let out = run(plain_ralph(d).args(["replay", ".ralph/runs/12", "--config", "nope.toml"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--config nope.toml: no such file"),
        "{}",
        out.stderr
    );
    std::fs::write(d.join("bad.toml"), "[scoring.weights]\nrisk = 0.9\n").unwrap();
    let out = run(plain_ralph(d).args(["replay", ".ralph/runs/12", "--config", "bad.toml"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("bad.toml") && out.stderr.contains("must sum to 1.0"),
        "{}",
        out.stderr
    );

    // A prototype config.json works as --config too, and re-weights the report.
    std::fs::write(
        d.join("proto.json"),
        json!({"scoring_weights": {"spec_alignment": 0.0, "technical_quality": 0.0, "innovation": 0.0,
                                   "risk": 1.0, "efficiency": 0.0, "specialist_validation": 0.0}})
        .to_string(),
    )
    .unwrap();
    let out = run(plain_ralph(d).args([
        "replay",
        ".ralph/runs/12/report.json",
        "--config",
        "proto.json",
        "--json",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["summary"]["winner_changes"][0]["to"]["bot_id"],
        "smart_bot_2"
    );
    assert_eq!(v["summary"]["winner_changes"][0]["to"]["total"], 0.9);
}
