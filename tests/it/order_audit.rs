//! Order-bias control and audited rounds (scoring/README.md, Measuring the decisions), through the
//! binary: a judge that favours whatever it reads first is caught by the reversed reading (the top
//! flips, the disagreement is recorded, the leaderboard's flip rate counts it) and
//! `order_swaps = 0` reads once; an audited round implements the runner-up in a scratch checkout
//! that leaves no commit, and a round whose winner failed while the runner-up passed is a regret
//! round on the leaderboard.

use crate::compete::{run, Repo, Setup};
use serde_json::Value;

/// A judge that gives 0.95 to the proposal it reads first and 0.1 to every other; it counts
/// its calls. The verify role satisfies req_1.
const BIASED: &str = r#"prompt=$(cat)
case "$RALPH_ROLE" in
  judge)
    echo call >> "$HOME/judge.calls"
    ids=$(printf '%s\n' "$prompt" | grep -o '^### proposal_[0-9]*' | cut -c5-)
    first=$(printf '%s\n' "$ids" | head -n 1)
    out=''
    for id in $ids; do
      if [ "$id" = "$first" ]; then s=0.95; else s=0.1; fi
      out="$out{\"proposal_id\":\"$id\",\"technical_quality\":$s,\"technical_quality_reasoning\":\"read first: $first\",\"innovation\":$s,\"innovation_reasoning\":\"r\"},"
    done
    echo "{\"scores\":[${out%,}]}";;
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  *) exit 1;;
esac"#;

/// A judge that prefers alpha's plan (the proposal text names its bot), so alpha wins and
/// beta is the runner-up, whatever the order.
const PREFERS_ALPHA: &str = r#"prompt=$(cat)
case "$RALPH_ROLE" in
  judge)
    out=''
    for id in $(printf '%s\n' "$prompt" | grep -o '^### proposal_[0-9]*' | cut -c5-); do
      block=$(printf '%s\n' "$prompt" | sed -n "/^### $id\$/,/^### /p")
      case "$block" in *"plan of alpha"*) s=0.9;; *) s=0.2;; esac
      out="$out{\"proposal_id\":\"$id\",\"technical_quality\":$s,\"technical_quality_reasoning\":\"r\",\"innovation\":$s,\"innovation_reasoning\":\"r\"},"
    done
    echo "{\"scores\":[${out%,}]}";;
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  *) exit 1;;
esac"#;

/// An implementer that gets alpha's plan wrong and any other right, and notes where it ran.
const WRONG_FOR_ALPHA: &str = r#"prompt=$(cat)
pwd >> "$HOME/implementer.dirs"
case "$prompt" in
  *"plan of alpha"*) echo 'greet() { echo "Hi $1"; }' >> lib.sh;;
  *) echo 'greet() { echo "Hello, $1!"; }' >> lib.sh;;
esac
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#;

fn report(out: &crate::common::Out) -> Value {
    assert!(out.code <= 1, "{}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

fn leaderboard(repo: &Repo) -> Value {
    let out = run(repo.ralph().args(["leaderboard", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

fn calls(repo: &Repo, name: &str) -> usize {
    std::fs::read_to_string(repo.tools.join(name))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_judge_biased_by_position_is_caught_by_the_reversed_reading() {
    let repo = Repo::with(Setup {
        bots: &["alpha", "beta"],
        arbiter: BIASED,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    let r = report(&out);
    assert_eq!(r["outcome"], "complete", "{}", out.stderr);
    assert_eq!(calls(&repo, "judge.calls"), 2, "one reading per order");
    let round = &r["rounds"][0];
    assert_eq!(round["order"]["top_flipped"], true, "{round}");
    assert_ne!(
        round["order"]["forward_top"],
        round["order"]["reversed_top"]
    );
    for p in round["proposals"].as_array().unwrap() {
        // 0.95 in one order, 0.1 in the other: averaged, and the gap recorded.
        assert!((p["scores"]["technical_quality"].as_f64().unwrap() - 0.525).abs() < 1e-9);
        assert!((p["order_disagreement"].as_f64().unwrap() - 0.85).abs() < 1e-9);
    }
    assert!(
        out.stderr.contains("Order check: the top proposal flipped"),
        "{}",
        out.stderr
    );
    let events = repo.events();
    assert!(
        events
            .iter()
            .all(|e| e["judge_order"]["top_flipped"] == true),
        "{events:?}"
    );
    let order = &leaderboard(&repo)["decisions"]["order"];
    assert_eq!(
        (order["rounds"].as_u64(), order["flipped"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(order["flip_rate"], 1.0);
    let text = run(repo.ralph().arg("leaderboard"));
    assert!(
        text.stdout.contains("Judge order: the top proposal flipped with the reading order in 1 of the last 1 rounds"),
        "{}",
        text.stdout
    );
}

#[test]
fn without_swaps_the_judge_reads_once() {
    let repo = Repo::with(Setup {
        bots: &["alpha", "beta"],
        arbiter: BIASED,
        arbiter_keys: "order_swaps = 0\n",
        ..Setup::default()
    });
    let r = report(&run(repo.ralph().args(["compete", "3", "--json"])));
    assert_eq!(calls(&repo, "judge.calls"), 1);
    let round = &r["rounds"][0];
    assert_eq!(round["order"]["swaps"], 0);
    assert!(round["order"]["top_flipped"].is_null(), "{round}");
    assert!(round["proposals"][0].get("order_disagreement").is_none());
    let scores: Vec<f64> = round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["scores"]["technical_quality"].as_f64().unwrap())
        .collect();
    assert!(
        scores.contains(&0.95) && scores.contains(&0.1),
        "{scores:?}"
    );
    assert!(repo.events().iter().all(|e| e.get("judge_order").is_none()));
}

#[test]
fn an_audited_round_implements_the_runner_up_and_keeps_nothing_of_it() {
    let repo = Repo::with(Setup {
        bots: &["alpha", "beta"],
        arbiter: PREFERS_ALPHA,
        implementer: WRONG_FOR_ALPHA,
        marketplace_keys: "audit_rate = 1.0\n",
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json", "--no-push"]));
    let r = report(&out);
    // Round 1: alpha wins and fails; the audit finds beta's plan would have passed.
    let first = &r["rounds"][0];
    assert_eq!(first["winner_bot"], "alpha", "{first}");
    let audit = &first["audit"];
    assert_eq!(audit["bot_id"], "beta", "{audit}");
    assert_eq!(audit["passed"], true, "{audit}");
    assert_eq!(audit["attempts"], 1);
    assert!(
        out.stderr.contains("## Audit: implementing the runner-up"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("- Audit: the runner-up passed"));
    // The audit ran in its own checkout, which is gone; only the winners' work is committed.
    let dirs = std::fs::read_to_string(repo.tools.join("implementer.dirs")).unwrap();
    assert!(dirs.lines().any(|d| d.ends_with("-audit")), "{dirs}");
    assert!(!dirs
        .lines()
        .filter(|d| d.ends_with("-audit"))
        .any(|d| std::path::Path::new(d).exists()));
    // The winner's event records the audit (with the runner-up's proposal scores, for
    // `ralph tune`); no bot's weight moves for it.
    let events = repo.events();
    let audited: Vec<&Value> = events.iter().filter(|e| e.get("audit").is_some()).collect();
    assert!(!audited.is_empty(), "{events:?}");
    let first_audit = audited[0];
    assert_eq!(first_audit["bot_id"], "alpha");
    assert_eq!(first_audit["outcome"], "failure");
    assert_eq!(first_audit["audit"]["runner_up"], "beta");
    assert_eq!(first_audit["audit"]["passed"], true);
    assert!(first_audit["audit"]["proposal_scores"]["spec_alignment"].is_number());
    // The leaderboard: every audited round a regret round, selection efficiency 0.
    let audits = &leaderboard(&repo)["decisions"]["audits"];
    assert_eq!(
        audits["audited"].as_u64(),
        Some(audited.len() as u64),
        "{audits}"
    );
    assert_eq!(audits["selection_efficiency"], 0.0);
    assert_eq!(audits["regret"][0]["winner"], "alpha");
    assert_eq!(audits["regret"][0]["runner_up"], "beta");
    assert_eq!(audits["regret"][0]["round"], 1);
    let text = run(repo.ralph().arg("leaderboard")).stdout;
    assert!(text.contains("regret: issue #3 round 1"), "{text}");
}
