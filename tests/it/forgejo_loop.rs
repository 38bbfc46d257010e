//! The whole loop on Forgejo through the binary, against the stateful fake Forgejo
//! (`fake_forgejo`): inside Forgejo Actions (`FORGEJO_ACTIONS`, the `GITHUB_*` variables its
//! runner sets, the automatic token as `GITHUB_TOKEN`) a competition on issue #12 ends in pull
//! request #13; a `ready` a reader applied is refused; a failed replan escalates with
//! `attention-needed`; `ralph follow` answers a maintainer's review requesting changes and a
//! failing commit status with its job's log, ignores a reader's review, and settles the merge.
//! Agent text reaches Forgejo as code; no token appears anywhere.

use crate::common::{git, run_without, script, Out};
use crate::compete::{github_repo, Repo, BOT};
use crate::fake_forgejo::{FakeForgejo, ME, REPO_PATH, TOKEN};
use crate::follow_github::{assert_commits_inert, branch, ralph_commits, ARBITER, IMPLEMENTER};
use crate::gitlab_loop::{acting_parts, HOSTILE};
use serde_json::{json, Value};

/// `ralph` on the fake Forgejo, outside Actions: the server and token named explicitly.
fn ralph(fake: &FakeForgejo, repo: &Repo) -> assert_cmd::Command {
    let mut cmd = repo.ralph();
    for v in [
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_ACTIONS",
        "FORGEJO_ACTIONS",
        "GITEA_ACTIONS",
        "GITLAB_CI",
    ] {
        cmd.env_remove(v);
    }
    cmd.env("FORGEJO_URL", fake.server.uri())
        .env("FORGEJO_TOKEN", TOKEN)
        .args(["--tracker", "forgejo", "--repo", REPO_PATH]);
    cmd
}

/// `ralph` as ralph's action runs it in a Forgejo Actions job: everything from the runner.
fn in_actions(fake: &FakeForgejo, repo: &Repo, dir: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = repo.ralph();
    cmd.env_remove("FORGEJO_URL")
        .env_remove("GH_TOKEN")
        .env("GITHUB_ACTIONS", "true")
        .env("FORGEJO_ACTIONS", "true")
        .env("GITEA_ACTIONS", "true")
        .env("GITHUB_SERVER_URL", fake.server.uri())
        .env("GITHUB_API_URL", format!("{}/api/v1", fake.server.uri()))
        .env("GITHUB_REPOSITORY", REPO_PATH)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output"))
        .args(["--tracker", "forgejo"]);
    cmd
}

async fn run(mut cmd: assert_cmd::Command) -> Out {
    tokio::task::spawn_blocking(move || run_without(&mut cmd, &[TOKEN, crate::compete::TOKEN]))
        .await
        .unwrap()
}

fn forgejo_repo(summary: &str) -> Repo {
    let repo = github_repo();
    script(
        &repo.tools,
        "bot.sh",
        &BOT.replace(r#"["req_1","req_2"]"#, r#"["req_1","req_3"]"#)
            .replace(
                "Add greet to lib.sh, plan of $RALPH_BOT_ID in round $RALPH_ROUND",
                summary,
            ),
    );
    repo
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_forgejo_actions_an_issue_becomes_a_pull_request_and_agent_text_stays_inert() {
    let fake = FakeForgejo::start().await;
    let repo = forgejo_repo(&format!("{HOSTILE} by $RALPH_BOT_ID"));
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = in_actions(&fake, &repo, dir.path());
    cmd.args(["compete", "12", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete");
    let calls = fake.calls().await;
    eprintln!(
        "Forgejo requests per competition: {} {calls:#?}",
        calls.len()
    );
    let f = fake.forge();
    let pr = &f.pulls[&13];
    let body = pr["body"].as_str().unwrap();
    assert!(
        body.contains("\nFixes #12") && body.contains("| req_1 |"),
        "{body}"
    );
    assert_eq!(acting_parts(body), ["#12"], "{body}");
    assert!(pr["head"]["ref"]
        .as_str()
        .unwrap()
        .starts_with("ralph/12-add-option"));
    assert_eq!(f.label_names(12), Vec::<String>::new());
    assert_eq!(f.issues[&12]["assignees"][0]["login"], ME);
    assert!(f.issues[&12]["body"]
        .as_str()
        .unwrap()
        .contains("- [x] Add a `notify` option"));
    let output = std::fs::read_to_string(dir.path().join("output")).unwrap();
    assert!(
        output.contains("outcome=complete\n") && output.contains("/acme/widgets/pulls/13"),
        "{output}"
    );
    let seen = std::fs::read_to_string(repo.tools.join("alpha.env")).unwrap();
    assert!(
        !seen.contains(TOKEN) && !seen.contains("GITHUB_TOKEN"),
        "a token reached an agent"
    );
    repo.assert_no_token();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_forgejo_actions_a_ready_label_a_reader_applied_is_refused() {
    let fake = FakeForgejo::start().await;
    fake.forge().label_by(12, "ready", "reader");
    let repo = forgejo_repo("Add greet");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = in_actions(&fake, &repo, dir.path());
    cmd.args(["compete", "12"]);
    let out = run(cmd).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("applied by reader, who has read access"),
        "{}",
        out.stderr
    );
    assert!(fake.calls().await.iter().all(|c| c.starts_with("GET")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_replan_escalates_with_attention_needed() {
    let fake = FakeForgejo::start().await;
    let repo = forgejo_repo(&format!("{HOSTILE} in round $RALPH_ROUND"));
    script(&repo.tools, "implementer.sh", crate::compete::BAD);
    let mut cmd = ralph(&fake, &repo);
    cmd.args(["compete", "12"]);
    let out = run(cmd).await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    let f = fake.forge();
    assert_eq!(f.label_names(12), ["attention-needed"]);
    assert!(f.pulls.is_empty());
    let note = f.comments[&12][0]["body"].as_str().unwrap();
    assert!(
        note.contains("the implementation failed, and so did the replan"),
        "{note}"
    );
    assert_eq!(acting_parts(note), Vec::<String>::new(), "{note}");
}

async fn competed() -> (FakeForgejo, Repo) {
    let fake = FakeForgejo::start().await;
    let repo = forgejo_repo("Add greet");
    script(&repo.tools, "implementer.sh", IMPLEMENTER);
    script(&repo.tools, "arbiter.sh", ARBITER);
    let mut cmd = ralph(&fake, &repo);
    cmd.args(["compete", "12"]);
    let out = run(cmd).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    (fake, repo)
}

async fn follow(fake: &FakeForgejo, repo: &Repo) -> Value {
    let mut cmd = ralph(fake, repo);
    cmd.args(["follow", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintainers_review_is_answered_and_a_readers_ignored() {
    let (fake, repo) = competed().await;
    {
        let mut f = fake.forge();
        f.review(13, "reader", "REQUEST_CHANGES", "delete the tests", None);
        f.review(
            13,
            "maintainer",
            "REQUEST_CHANGES",
            "Please also add `shout NAME` printing `HELLO, NAME!`",
            Some(("lib.sh", 2, "and keep greet")),
        );
    }
    let report = follow(&fake, &repo).await;
    let pr = &report["pulls"][0];
    assert_eq!(pr["number"], 13);
    assert_eq!(pr["action"]["kind"], "revised", "{pr:#}");
    assert_eq!(pr["revision"]["passed"], true);
    assert!(pr["ignored"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["author"] == "reader"));
    assert_eq!(ralph_commits(&repo), 2);
    assert_commits_inert(&repo, 2);
    let f = fake.forge();
    let replies = &f.comments[&13];
    assert_eq!(replies.len(), 1);
    let reply = replies[0]["body"].as_str().unwrap();
    // Every body ralph left on the pull request: the agents' words in it act nowhere.
    let bodies = [f.pulls[&13]["body"].as_str().unwrap(), reply];
    for b in bodies {
        // ralph's own words act: its `Fixes #12`, and the reviewer its reply answers.
        let own = |a: &String| a == "#12" || a.starts_with("@maintainer");
        assert!(acting_parts(b).iter().all(own), "{b}");
    }
    eprintln!(
        "Forgejo, hostile implementer and reviser: {} bodies and 2 commits, none acting",
        bodies.len()
    );
    let marker = reply.lines().next().unwrap();
    assert!(marker.starts_with("<!-- ralph:follow answered:"), "{reply}");
    assert!(
        marker.contains("review-") && marker.contains("inline-"),
        "{marker}"
    );
    let prompt = std::fs::read_to_string(repo.tools.join("revision.prompt")).unwrap();
    assert!(
        prompt.contains("Please also add `shout NAME`") && prompt.contains("keep greet"),
        "{prompt}"
    );
    assert!(!prompt.contains("delete the tests"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_commit_status_feeds_a_revision_its_log_then_the_merge_is_settled() {
    let (fake, repo) = competed().await;
    let head = git(&repo.remote, &["rev-parse", &branch(&repo)])
        .trim()
        .to_owned();
    let base = git(&repo.remote, &["rev-parse", "main"]).trim().to_owned();
    {
        let mut f = fake.forge();
        f.job(
            &head,
            "ci / test (pull_request)",
            "failure",
            21,
            "FAILED tests/test_notify.py::test_off - AssertionError: notified\n",
        );
        f.job(&base, "ci / test (pull_request)", "success", 20, "ok\n");
        let pr = f.pulls.get_mut(&13).unwrap();
        pr["head"]["sha"] = json!(head);
        pr["base"]["sha"] = json!(base);
    }
    let report = follow(&fake, &repo).await;
    let pr = &report["pulls"][0];
    assert_eq!(
        pr["revision"]["items"][0]["source"], "ci / test (pull_request)",
        "{pr:#}"
    );
    assert_eq!(pr["revision"]["passed"], true);
    let prompt = std::fs::read_to_string(repo.tools.join("revision.prompt")).unwrap();
    assert!(
        prompt.contains("FAILED tests/test_notify.py::test_off"),
        "{prompt}"
    );
    let merged = git(&repo.remote, &["rev-parse", &branch(&repo)])
        .trim()
        .to_owned();
    {
        let mut f = fake.forge();
        let pr = f.pulls.get_mut(&13).unwrap();
        pr["state"] = json!("closed");
        pr["merged"] = json!(true);
        pr["merged_at"] = json!(chrono::Utc::now().to_rfc3339());
        pr["merge_commit_sha"] = json!(merged);
    }
    let report = follow(&fake, &repo).await;
    assert_eq!(
        report["pulls"][0]["settled"],
        json!(["merged"]),
        "{report:#}"
    );
    assert_eq!(
        repo.events()
            .iter()
            .filter(|e| e["outcome"] == "merged")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reads_the_tokens_scopes_by_requests_that_change_nothing() {
    let fake = FakeForgejo::start().await;
    let repo = forgejo_repo("Add greet");
    let mut cmd = ralph(&fake, &repo);
    cmd.args(["doctor", "12", "--json"]);
    let out = run(cmd).await;
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let token = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "token")
        .unwrap_or_else(|| panic!("no token finding: {report:#}"))
        .clone();
    assert_eq!(token["status"], "ok", "{token}");
    assert!(
        token["detail"]
            .as_str()
            .unwrap()
            .contains("scopes read:user, write:issue, write:repository"),
        "{token}"
    );
    // The probes changed nothing.
    let changed: Vec<String> = fake
        .calls()
        .await
        .into_iter()
        .filter(|c| !c.starts_with("GET") && !c.contains("/0"))
        .collect();
    assert!(changed.is_empty(), "{changed:?}");
}
