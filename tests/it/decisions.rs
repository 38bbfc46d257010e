//! Decisions you can measure (issue 19), through the binary: the `review` role scores the
//! implemented change — its innovation and consultation-concern scores replace the neutral 0.5
//! in the implementation score, the accuracy, the events, the report and the pull request —
//! and when it cannot answer the neutral score stays and the report says why.

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
    let file = std::fs::read_dir(repo.root.join(".ralph/issues"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".pr-"))
        .unwrap();
    std::fs::read_to_string(file).unwrap()
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
