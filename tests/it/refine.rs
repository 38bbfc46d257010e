//! `ralph refine N` (docs/refine.md) through the binary: a prose issue gets a drafted task list as
//! a comment (or in its body with `--write`, every other byte and CRLF kept, a second run
//! replacing ralph's section) and the `in-refinement` label; an issue with checkboxes gets a
//! review; `--dry-run` changes nothing; `ralph queue --refine` lists what waits for a draft; and
//! a drafted issue goes through `ralph ready` and `ralph compete` to a pull request.

use crate::compete::{run, Repo, Setup};
use serde_json::Value;

/// A prose issue, the way people write them.
const PROSE: &str = "---\ntitle: Say hello\nlabels: [backlog-review]\n---\nUsers want the shell library to greet them by name.\r\nToday `greet` does not exist.\r\n";

/// The arbiter: drafts one requirement (or reviews), verifies req_1.
pub(crate) const ARBITER: &str = r#"cat > "$HOME/arbiter.$RALPH_ROLE.prompt"
case "$RALPH_ROLE" in
  refine)
    if grep -q 'review them' "$HOME/arbiter.refine.prompt"; then
      echo '{"problem":"Greeting is wanted.","review":[{"id":"req_1","kind":"untestable","note":"say which output exactly"}],"questions":["Any locale?"]}'
    else
      echo '{"problem":"The library cannot greet.","requirements":[{"text":"`greet NAME` prints `Hello, NAME!`","rationale":"what users asked for"}],"implicit_requirements":[{"text":"`add` keeps working","rationale":"compatibility"}],"questions":["Should an empty NAME greet the world?"]}'
    fi;;
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  *) exit 1;;
esac"#;

fn repo() -> Repo {
    Repo::with(Setup {
        arbiter: ARBITER,
        issues: &[(5, PROSE)],
        ..Setup::default()
    })
}

fn issue(repo: &Repo) -> String {
    std::fs::read_to_string(repo.root.join(".ralph/issues/5.md")).unwrap()
}

#[test]
fn a_prose_issue_is_refused_then_drafted_in_a_comment() {
    let repo = repo();
    // Marked ready too early, compete refuses and names refine.
    let text = issue(&repo).replace("[backlog-review]", "[ready]");
    std::fs::write(repo.root.join(".ralph/issues/5.md"), text).unwrap();
    let out = run(repo.ralph().args(["compete", "5"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("ralph refine 5"), "{}", out.stderr);

    let out = run(repo.ralph().args(["refine", "5"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Drafted #5: 1 requirement(s), 1 question(s), commented"),
        "{}",
        out.stderr
    );
    let text = issue(&repo);
    assert!(text.contains("labels: [in-refinement]"), "{text}");
    assert!(
        text.contains("<!-- ralph:refine -->")
            && text.contains(
                "```markdown\n## Requirements\n\n- [ ] `greet NAME` prints `Hello, NAME!`\n```"
            ),
        "{text}"
    );
    assert!(text.contains("1. Should an empty NAME greet the world?"));
    // The prompt had the issue's prose as data and asked for a draft.
    let prompt = std::fs::read_to_string(repo.tools.join("arbiter.refine.prompt")).unwrap();
    assert!(
        prompt.contains("Users want the shell library to greet them by name.")
            && prompt.contains("draft its requirements")
    );
    // The agent read a checkout of the base, removed afterwards.
    assert!(!repo.checkout("ralph-refine-5").exists());
    // A draft exists: nothing waits in the refine queue.
    let out = run(repo.ralph().args(["queue", "--refine", "--json"]));
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["include"].as_array().unwrap().len(), 0, "{}", out.stdout);
}

#[test]
fn write_puts_the_task_list_in_the_body_keeping_every_other_byte() {
    let repo = repo();
    let before = issue(&repo);
    let out = run(repo.ralph().args(["refine", "5", "--dry-run"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out
        .stdout
        .contains("- [ ] `greet NAME` prints `Hello, NAME!`"));
    assert_eq!(issue(&repo), before, "a dry run changes nothing");

    let out = run(repo.ralph().args(["refine", "5", "--write"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = issue(&repo);
    let prose = &before[before.find("Users want").unwrap()..];
    let kept = &text[text.find("Users want").unwrap()..];
    assert!(kept.starts_with(prose), "the prose is kept byte for byte");
    assert!(text.contains("\r\n<!-- ralph:requirements -->\r\n## Requirements\r\n\r\n- [ ] `greet NAME` prints `Hello, NAME!`\r\n<!-- /ralph:requirements "), "{text:?}");
    // Refined again after the author edited around it: one section, replaced.
    let edited = text.replace("Today `greet`", "Today (edited) `greet`");
    std::fs::write(repo.root.join(".ralph/issues/5.md"), &edited).unwrap();
    let out = run(repo.ralph().args(["refine", "5", "--write"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let again = issue(&repo);
    assert_eq!(again.matches("<!-- ralph:requirements -->").count(), 1);
    assert!(again.contains("Today (edited) `greet`"));
}

#[test]
fn an_issue_with_checkboxes_gets_a_review() {
    let repo = Repo::with(Setup {
        arbiter: ARBITER,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["refine", "3", "--write"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("Reviewed #3"), "{}", out.stderr);
    let text = repo.issue();
    assert!(text.contains("**ralph reviewed this issue's requirements.**"));
    assert!(
        text.contains("- `req_1` — untestable: say which output exactly"),
        "{text}"
    );
    assert!(
        !text.contains("<!-- ralph:requirements -->"),
        "a review never rewrites the body"
    );
    assert!(text.contains("labels: [in-refinement]"), "{text}");
}

#[test]
fn the_refine_queue_lists_issues_in_refinement_without_a_draft() {
    let repo = repo();
    let text = issue(&repo).replace("[backlog-review]", "[in-refinement]");
    std::fs::write(repo.root.join(".ralph/issues/5.md"), text).unwrap();
    let out = run(repo.ralph().args(["queue", "--refine", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v, serde_json::json!({"include": [{"issue": 5}]}));
}

#[test]
fn from_prose_to_a_pull_request() {
    let repo = repo();
    for args in [
        &["refine", "5", "--write"][..],
        &["ready", "5", "--yes"],
        &["compete", "5"],
    ] {
        let out = run(repo.ralph().args(args));
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    let text = issue(&repo);
    assert!(
        text.contains("- [x] `greet NAME` prints `Hello, NAME!`"),
        "{text}"
    );
    assert!(repo.root.join(".ralph/issues/5.prs.json").is_file());
}
