//! `ralph compete N` and `ralph demo` end to end through the binary: a temporary git repository
//! with a bare remote, the local tracker, fake agent programs for the bots, the arbiter and the
//! implementer (which really edits the worktree), and checks that really run. Each test asserts
//! labels, body, comments, pull request, branch contents, events and their deltas — and that no
//! token appears anywhere.

use crate::common::{commit_all, git, run_without, script, Out};
use assert_cmd::Command;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub(crate) const TOKEN: &str = "ghp_competeTestToken0123456789abcdef";

pub(crate) const ISSUE: &str = "---\ntitle: Add a greet function\nlabels: [ready]\n---\n## Tasks\n- [ ] `greet NAME` prints `Hello, NAME!`\n- [x] Keep `add` working\n";

pub(crate) struct Repo {
    _dir: TempDir,
    pub(crate) root: PathBuf,
    pub(crate) tools: PathBuf,
    pub(crate) remote: PathBuf,
}

/// The proposal every fake bot sends, naming itself so proposals differ.
pub(crate) const BOT: &str = r#"cat > "$HOME/$RALPH_BOT_ID.prompt"
env > "$HOME/$RALPH_BOT_ID.env"
cat <<JSON
{"approach_summary":"Add greet to lib.sh, plan of $RALPH_BOT_ID in round $RALPH_ROUND","pseudo_code":"greet() { echo Hello; } by $RALPH_BOT_ID for round $RALPH_ROUND of the competition","files_affected":[{"path":"lib.sh","change_type":"modify"}],"estimated_complexity":{"lines_of_code":3,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"overall_risk":"low"},"spec_alignment":{"checkboxes_addressed":["req_1","req_2"],"components_addressed":[],"implicit_requirements_addressed":["req_implicit_2"]},"success_probability":0.8}
JSON"#;

pub(crate) const ARBITER: &str = r#"cat > /dev/null
case "$RALPH_ROLE" in
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"greet in lib.sh"}],"unsatisfied":[]}';;
  *) echo 'no' >&2; exit 1;;
esac"#;

/// An implementer that writes a correct greet.
pub(crate) const GOOD: &str = r#"cat > /dev/null
echo 'greet() { echo "Hello, $1!"; }' >> lib.sh
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#;

/// An implementer whose greet is always wrong.
pub(crate) const BAD: &str = r#"cat > /dev/null
echo 'greet() { echo "Hi $1"; }' >> lib.sh
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#;

/// What a test repository is made of; `Repo::new` takes the defaults.
pub(crate) struct Setup<'a> {
    pub(crate) implementer: &'a str,
    pub(crate) bots: &'a [&'a str],
    pub(crate) arbiter: &'a str,
    /// Extra `[[bots]]` entries, verbatim.
    pub(crate) extra_bots: &'a str,
    pub(crate) base_budget_per_bot: u32,
    pub(crate) issues: &'a [(u64, &'a str)],
    /// The `[checks]` section, verbatim.
    pub(crate) checks: &'a str,
    /// More configuration, appended verbatim (start it with a table header).
    pub(crate) extra_config: &'a str,
    /// More keys of `[implementer]`, verbatim.
    pub(crate) implementer_keys: &'a str,
    /// More keys of `[arbiter]` and of `[marketplace]`, verbatim.
    pub(crate) arbiter_keys: &'a str,
    pub(crate) marketplace_keys: &'a str,
    /// The `[sandbox]` section, verbatim; by default the tools folder is writable.
    pub(crate) sandbox: Option<&'a str>,
    /// Where the test's folder is made (default: the system's temporary folder, which the
    /// sandbox replaces with its own).
    pub(crate) under: Option<&'a Path>,
}

/// The checks of the test repository: a syntax check and its test script.
pub(crate) const CHECKS: &str = "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\n";

impl Default for Setup<'_> {
    fn default() -> Self {
        Setup {
            implementer: GOOD,
            bots: &["alpha"],
            arbiter: ARBITER,
            extra_bots: "",
            base_budget_per_bot: 1,
            issues: &[(3, ISSUE)],
            checks: CHECKS,
            extra_config: "",
            implementer_keys: "",
            arbiter_keys: "",
            marketplace_keys: "",
            sandbox: None,
            under: None,
        }
    }
}

impl Repo {
    pub(crate) fn new(implementer: &str, bots: &[&str]) -> Repo {
        Repo::with(Setup {
            implementer,
            bots,
            ..Setup::default()
        })
    }

    pub(crate) fn with(setup: Setup<'_>) -> Repo {
        let Setup {
            implementer,
            bots,
            arbiter,
            extra_bots,
            base_budget_per_bot,
            issues,
            checks,
            extra_config,
            implementer_keys,
            arbiter_keys,
            marketplace_keys,
            sandbox,
            under,
        } = setup;
        let dir = match under {
            Some(parent) => tempfile::tempdir_in(parent).unwrap(),
            None => tempfile::tempdir().unwrap(),
        };
        let root = dir.path().join("work");
        let tools = dir.path().join("tools");
        let remote = dir.path().join("origin.git");
        std::fs::create_dir_all(root.join(".ralph/issues")).unwrap();
        std::fs::create_dir_all(&tools).unwrap();
        for (n, text) in issues {
            std::fs::write(root.join(format!(".ralph/issues/{n}.md")), text).unwrap();
        }
        std::fs::write(root.join(".gitignore"), ".ralph/worktrees/\n.ralph/runs/\n").unwrap();
        std::fs::write(root.join("lib.sh"), "add() { echo $(($1 + $2)); }\n").unwrap();
        std::fs::write(
            root.join("test.sh"),
            ". ./lib.sh\n[ \"$(add 1 2)\" = 3 ] || exit 1\nif type greet >/dev/null 2>&1; then [ \"$(greet Ann)\" = 'Hello, Ann!' ] || { echo \"greet gave: $(greet Ann)\"; exit 1; }; fi\necho ok\n",
        )
        .unwrap();
        let bot = script(&tools, "bot.sh", BOT);
        let arbiter = script(&tools, "arbiter.sh", arbiter);
        let implementer = script(&tools, "implementer.sh", implementer);
        // The fake agents keep their logs beside their scripts, in the test's HOME: outside the
        // worktree, where only `[sandbox] writable` lets them write.
        let sandbox = match sandbox {
            Some(s) => s.to_owned(),
            None => format!("[sandbox]\nwritable = [\"{}\"]\n", tools.display()),
        };
        let mut config = format!(
            "tracker = \"local\"\nmax_iterations = 5\n[marketplace]\nbase_budget_per_bot = {base_budget_per_bot}\n{marketplace_keys}[defaults]\nbackend = \"command\"\ncommand = [\"{bot}\"]\n"
        );
        for b in bots {
            config.push_str(&format!("[[bots]]\nid = \"{b}\"\n"));
        }
        config.push_str(extra_bots);
        config.push_str(&format!(
            "[arbiter]\ncommand = [\"{arbiter}\"]\n{arbiter_keys}[implementer]\ncommand = [\"{implementer}\"]\n{implementer_keys}{checks}[git]\nauthor = \"ralph <ralph@example.com>\"\n{sandbox}{extra_config}"
        ));
        std::fs::write(root.join(".ralph/config.toml"), config).unwrap();
        git(&root, &["init", "--quiet", "-b", "main"]);
        commit_all(&root, "init");
        git(
            dir.path(),
            &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
        );
        git(
            &root,
            &["remote", "add", "origin", remote.to_str().unwrap()],
        );
        git(&root, &["push", "--quiet", "-u", "origin", "main"]);
        git(&root, &["remote", "set-head", "origin", "main"]);
        Repo {
            root,
            tools,
            remote,
            _dir: dir,
        }
    }

    pub(crate) fn ralph(&self) -> Command {
        let mut cmd = Command::cargo_bin("ralph").unwrap();
        cmd.current_dir(&self.root)
            .env_remove("RALPH_LOG")
            .env("GITHUB_TOKEN", TOKEN)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &self.tools)
            .env_remove("XDG_STATE_HOME")
            .env_remove("RUNNER_TEMP")
            .env("NO_COLOR", "1");
        cmd
    }

    /// Where ralph makes the checkout `label` (`3`, `3-read`) of this repository.
    pub(crate) fn checkout(&self, label: &str) -> PathBuf {
        crate::common::checkout_of(&self.tools, &self.root, label)
    }

    pub(crate) fn issue(&self) -> String {
        std::fs::read_to_string(self.root.join(".ralph/issues/3.md")).unwrap()
    }

    /// The body of the pull request the local tracker recorded, if one was opened.
    pub(crate) fn pull_request_body(&self) -> Option<String> {
        let file = std::fs::read_dir(self.root.join(".ralph/issues"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains(".pr-"))?;
        Some(std::fs::read_to_string(file).unwrap())
    }

    pub(crate) fn events(&self) -> Vec<Value> {
        let dir = self.root.join(".ralph/events");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        names.sort();
        names
            .iter()
            .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    }

    /// No token in any file ralph or an agent wrote.
    pub(crate) fn assert_no_token(&self) {
        for entry in walk(&self.root).into_iter().chain(walk(&self.tools)) {
            if let Ok(text) = std::fs::read_to_string(&entry) {
                assert!(!text.contains(TOKEN), "the token is in {}", entry.display());
            }
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

pub(crate) fn run(cmd: &mut Command) -> Out {
    run_without(cmd, &[TOKEN])
}

pub(crate) fn outcomes(events: &[Value]) -> Vec<(String, String, f64)> {
    let mut v: Vec<(String, String, f64)> = events
        .iter()
        .map(|e| {
            (
                e["bot_id"].as_str().unwrap().to_owned(),
                e["outcome"].as_str().unwrap().to_owned(),
                (e["weight_delta"].as_f64().unwrap() * 1000.0).round() / 1000.0,
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    v
}

#[test]
fn success_in_one_round_opens_the_pull_request() {
    let repo = Repo::new(GOOD, &["alpha", "beta"]);
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete");
    assert_eq!(report["branch"], "ralph/3-add-a-greet-function");
    assert_eq!(report["rounds"].as_array().unwrap().len(), 1);
    assert_eq!(
        report["rounds"][0]["checks"],
        json!([{"name": "syntax", "passed": true, "status": "passed", "duration_ms": report["rounds"][0]["checks"][0]["duration_ms"]},
               {"name": "test", "passed": true, "status": "passed", "duration_ms": report["rounds"][0]["checks"][1]["duration_ms"]}])
    );
    assert!(out.stderr.contains("<promise>COMPLETE</promise>"));

    // The body: exactly the satisfied checkbox flipped; the labels released.
    let issue = repo.issue();
    assert!(
        issue.contains("- [x] `greet NAME` prints `Hello, NAME!`"),
        "{issue}"
    );
    assert!(issue.contains("labels: []"), "{issue}");
    // The pull request, recorded by the local tracker, says what it fixes.
    let prs = std::fs::read_to_string(repo.root.join(".ralph/issues/3.prs.json")).unwrap();
    assert!(prs.contains("ralph/3-add-a-greet-function"), "{prs}");
    let body = repo.pull_request_body().unwrap();
    assert!(body.contains("Fixes #3") && body.contains("| rank | proposal | bot | total |"));
    // What changed: the winning approach and the implementer's own summary.
    assert!(body.contains("**Approach** ("), "{body}");
    assert!(body.contains("**Implementation**: added greet"), "{body}");
    assert!(body.contains("`test` ✅ passed"), "{body}");
    assert!(
        body.contains("| ✅ | greet in lib.sh |"),
        "the evidence: {body}"
    );

    // The branch is on the remote with the change and the trailers.
    let log = git(
        &repo.remote,
        &[
            "log",
            "-1",
            "--format=%an <%ae>%n%B",
            "ralph/3-add-a-greet-function",
        ],
    );
    assert!(
        log.starts_with("ralph <ralph@example.com>\nAdd a greet function (#3)"),
        "{log}"
    );
    assert!(log.contains("Ralph-Bot: ") && log.contains("Ralph-Run: "));
    let lib = git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:lib.sh"],
    );
    assert!(lib.contains("greet()"));
    // The user's checkout did not change; the worktree is gone.
    assert!(!std::fs::read_to_string(repo.root.join("lib.sh"))
        .unwrap()
        .contains("greet"));
    assert!(!repo.checkout("3").exists());

    // Events: the winner's success (with the accuracy bonus or not) and the other's not_selected.
    let events = repo.events();
    let o = outcomes(&events);
    assert_eq!(o.len(), 2, "{o:?}");
    let winner = events.iter().find(|e| e["outcome"] == "success").unwrap();
    let bonus = winner["accuracy"].as_f64().unwrap() > 0.85;
    assert!(
        (winner["weight_delta"].as_f64().unwrap() - if bonus { 0.15 } else { 0.10 }).abs() < 1e-9
    );
    assert_eq!(winner["metrics"]["tests_passed"], true);
    assert_eq!(winner["round"], 1);
    assert_eq!(winner["phase"], "initial");
    assert_eq!(winner["rank"], 1);
    let loser = events
        .iter()
        .find(|e| e["outcome"] == "not_selected")
        .unwrap();
    assert_eq!(loser["weight_delta"], -0.02);
    assert_eq!(report["events"].as_array().unwrap().len(), 2);
    // The run summary is kept.
    assert!(repo.root.join(".ralph/runs/3/summary.md").is_file());
    assert!(!repo.root.join(".ralph/runs/3.lock").exists());
    // No token reached the bots or any file.
    let env = std::fs::read_to_string(repo.tools.join("alpha.env")).unwrap();
    assert!(!env.contains("GITHUB_TOKEN"));
    repo.assert_no_token();
}

#[test]
fn replan_failure_escalates_with_every_penalty() {
    let repo = Repo::new(BAD, &["alpha", "beta", "gamma"]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let issue = repo.issue();
    assert!(issue.contains("labels: [attention-needed]"), "{issue}");
    assert!(
        issue.contains("- [ ] `greet NAME`"),
        "nothing checked off: {issue}"
    );
    let comment = issue.split("<!-- ralph comments -->").nth(1).unwrap();
    assert!(
        comment.contains("the implementation failed, and so did the replan"),
        "{comment}"
    );
    assert!(comment.contains("Initial round") && comment.contains("Replan round"));
    assert!(
        comment.contains("greet gave: Hi Ann"),
        "the failing output: {comment}"
    );
    assert!(comment.contains("ralph/3-add-a-greet-function"));
    assert!(
        comment.contains(&repo.checkout("3").display().to_string()),
        "the worktree is named"
    );
    assert!(repo.checkout("3").is_dir(), "kept for inspection");

    let o = outcomes(&repo.events());
    let failure: Vec<_> = o.iter().filter(|e| e.1 == "failure").collect();
    let replan: Vec<_> = o.iter().filter(|e| e.1 == "replan_failure").collect();
    let collective: Vec<_> = o.iter().filter(|e| e.1 == "collective_failure").collect();
    assert_eq!(failure.len(), 1, "{o:?}");
    assert_eq!(failure[0].2, -0.15);
    assert_eq!(replan.len(), 1);
    assert_eq!(replan[0].2, -0.2);
    assert_eq!(collective.len(), 3, "every bot");
    assert!(collective.iter().all(|e| e.2 == -0.05));
    // The bots saw the failure in the replan prompt.
    let prompt = std::fs::read_to_string(repo.tools.join("alpha.prompt")).unwrap();
    assert!(
        prompt.contains("The previous attempt failed") && prompt.contains("greet gave"),
        "{prompt}"
    );
    // Nothing was pushed.
    assert!(!git(&repo.remote, &["branch", "--list"]).contains("ralph/"));
    repo.assert_no_token();
}

#[test]
fn a_second_run_on_the_same_issue_is_refused_while_one_holds_the_lock() {
    let repo = Repo::new(GOOD, &["alpha"]);
    std::fs::create_dir_all(repo.root.join(".ralph/runs")).unwrap();
    // Our own test process holds the lock, as a running competition does.
    let held = std::fs::File::create(repo.root.join(".ralph/runs/3.lock")).unwrap();
    held.lock().unwrap();
    std::fs::write(
        repo.root.join(".ralph/runs/3.lock"),
        format!("{}\n", std::process::id()),
    )
    .unwrap();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("another `ralph compete 3` is running"),
        "{}",
        out.stderr
    );
    assert!(repo.issue().contains("labels: [ready]"), "nothing changed");
    // A stale lock file (its process gone, so nobody holds the lock) is taken over.
    drop(held);
    std::fs::write(repo.root.join(".ralph/runs/3.lock"), "999999999\n").unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--no-push"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !git(&repo.remote, &["branch", "--list"]).contains("ralph/"),
        "--no-push"
    );
}

#[test]
fn an_issue_that_is_not_ready_is_refused_without_changes() {
    let repo = Repo::new(GOOD, &["alpha"]);
    std::fs::write(
        repo.root.join(".ralph/issues/3.md"),
        ISSUE.replace("labels: [ready]", "labels: []"),
    )
    .unwrap();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("ralph ready 3"), "{}", out.stderr);
    assert!(repo.events().is_empty());
}

#[test]
fn the_demo_runs_a_whole_competition_offline() {
    let out = Command::cargo_bin("ralph")
        .unwrap()
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1")
        .args(["demo", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["report"]["outcome"], "complete");
    assert_eq!(v["report"]["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(v["report"]["rounds"][1]["phase"], "replan");
    let bots: Vec<(&str, &str)> = v["leaderboard"]["recent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["bot_id"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bots,
        [
            ("smart_bot_2", "failure"),
            ("smart_bot_3", "replan_success"),
            ("smart_bot_1", "not_selected"),
            ("smart_bot_2", "resubmitted_same"),
            ("smart_bot_3", "revision_success"),
            ("smart_bot_3", "merged"),
        ]
    );
    // After the pull request: the review answered with a revision, then the merge settled.
    let revision = &v["follow"][0]["pulls"][0]["revision"];
    assert_eq!(revision["passed"], true, "{v:#}");
    assert_eq!(revision["items"][0]["done"], true);
    assert_eq!(v["follow"][1]["pulls"][0]["settled"], json!(["merged"]));
    assert_eq!(v["leaderboard"]["bots"][0]["pull_requests"]["merged"], 1);
    assert!(
        !stderr.contains("warning"),
        "the demo runs with no warning: {stderr}"
    );
    assert!(stderr.contains("## Phase 3: Implementation") && stderr.contains("## Result: FAILURE"));
    assert!(stderr.contains("resubmitted its failed proposal"));
    // The temporary directory is removed without --keep.
    let path = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Sample repository: "))
        .and_then(|l| l.split(' ').next())
        .unwrap();
    assert!(!Path::new(path).exists(), "{path} was not cleaned up");
}

const TWO_BOXES: &str = "---\ntitle: Add greet and wave\nlabels: [ready]\n---\n- [ ] `greet NAME` prints `Hello, NAME!`\n- [ ] `wave` prints `o/`\n";

/// Round 1 adds greet, round 2 adds wave.
const ROUND_BY_ROUND: &str = r#"cat > /dev/null
if [ "$RALPH_ROUND" = 1 ]; then echo 'greet() { echo "Hello, $1!"; }' >> lib.sh; else echo 'wave() { echo "o/"; }' >> lib.sh; fi
echo '{"summary":"one more function","checkboxes_completed":[]}'"#;

/// The verify role confirms one checkbox per round.
const ONE_PER_ROUND: &str = r#"cat > /dev/null
case "$RALPH_ROLE" in
  verify) echo "{\"satisfied\":[{\"id\":\"req_$RALPH_ROUND\",\"evidence\":\"see lib.sh\"}],\"unsatisfied\":[]}";;
  *) exit 1;;
esac"#;

#[test]
fn success_over_two_rounds_with_the_checkboxes_split() {
    let repo = Repo::with(Setup {
        implementer: ROUND_BY_ROUND,
        arbiter: ONE_PER_ROUND,
        issues: &[(3, TWO_BOXES)],
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete");
    assert_eq!(report["rounds"].as_array().unwrap().len(), 2);
    assert!(
        out.stderr.contains("1 checkbox(es) remain"),
        "{}",
        out.stderr
    );
    let issue = repo.issue();
    assert!(
        issue.contains("- [x] `greet NAME`") && issue.contains("- [x] `wave`"),
        "{issue}"
    );
    let log = git(
        &repo.remote,
        &["log", "--format=%s", "ralph/3-add-greet-and-wave"],
    );
    assert_eq!(
        log.lines()
            .filter(|l| l.starts_with("Add greet and wave (#3)"))
            .count(),
        2
    );
    let o = outcomes(&repo.events());
    assert_eq!(o.iter().filter(|e| e.1 == "success").count(), 2, "{o:?}");
}

/// Wrong on the first attempt, right on the second.
const SECOND_TIME: &str = r#"cat > /dev/null
if [ "$RALPH_ATTEMPT" = 0 ]; then echo 'greet() { echo "Hi $1"; }' >> lib.sh; else echo 'greet() { echo "Hello, $1!"; }' >> lib.sh; fi
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#;

#[test]
fn success_on_a_second_attempt_within_the_budget() {
    let repo = Repo::with(Setup {
        implementer: SECOND_TIME,
        base_budget_per_bot: 2,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("Attempt 1/2: check `test` failed"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Attempt 2/2: verification passed"));
    let events = repo.events();
    assert_eq!(outcomes(&events)[0].1, "success", "one round, no replan");
    // Efficiency of the implementation counts the second attempt: 0.5·size + 0.5·(1 − 1/2).
    let eff = events[0]["scores"]["implementation"]["efficiency"]
        .as_f64()
        .unwrap();
    assert!(eff <= 0.75 + 1e-9, "{eff}");
    // The final commit has only the good version.
    let lib = git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:lib.sh"],
    );
    assert!(
        lib.contains("Hello, $1!") && !lib.contains("Hi $1"),
        "{lib}"
    );
}

#[test]
fn a_crashing_bot_is_skipped_and_a_failing_judge_gives_neutral_scores() {
    let repo = Repo::with(Setup {
        bots: &["alpha"],
        extra_bots:
            "[[bots]]\nid = \"crasher\"\ncommand = [\"sh\", \"-c\", \"echo boom >&2; exit 9\"]\n",
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let round = &report["rounds"][0];
    assert_eq!(round["skipped"][0]["bot_id"], "crasher");
    assert_eq!(round["skipped"][0]["reason"], "failed");
    assert!(round["skipped"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("boom"));
    assert_eq!(round["judges"]["answered"], json!([]));
    assert_eq!(round["proposals"][0]["scores"]["technical_quality"], 0.5);
    // A bot that did not propose gets no not_selected event.
    let o = outcomes(&repo.events());
    assert_eq!(o.len(), 1, "{o:?}");
}

#[test]
fn all_proposals_below_the_threshold_escalate() {
    // A proposal touching 40 files with breaking changes and nothing addressed.
    let poor = r#"cat > /dev/null
files=""
for i in $(seq 1 40); do files="$files{\"path\":\"src/m$i.sh\",\"change_type\":\"modify\"},"; done
files="${files%,}"
echo "{\"approach_summary\":\"Rewrite everything\",\"files_affected\":[$files],\"estimated_complexity\":{\"lines_of_code\":9000,\"files\":40,\"modules\":20,\"difficulty\":\"high\"},\"risk_assessment\":{\"breaking_changes\":true,\"security_critical\":true,\"overall_risk\":\"high\"},\"spec_alignment\":{},\"success_probability\":0.1}""#;
    let repo = Repo::new(GOOD, &["alpha"]);
    script(&repo.tools, "bot.sh", poor);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let issue = repo.issue();
    assert!(issue.contains("attention-needed"), "{issue}");
    assert!(issue.contains("below 0.5"), "{issue}");
    assert!(repo.events().is_empty(), "no implementation, no events");
}

#[cfg(unix)]
#[test]
fn ctrl_c_mid_implementation_escalates_and_resume_finishes_without_duplicate_events() {
    // Round 1 fails fast (events written), the replan's implementer hangs until interrupted.
    let slow = r#"cat > /dev/null
if [ "$RALPH_ROUND" = 1 ]; then echo 'greet() { echo "Hi $1"; }' >> lib.sh
elif [ -f "$HOME/fast" ]; then echo 'greet() { echo "Hello, $1!"; }' >> lib.sh
else touch "$HOME/started"; sleep 60; fi
echo '{"summary":"added greet","checkboxes_completed":["req_1"]}'"#;
    let repo = Repo::with(Setup {
        implementer: slow,
        bots: &["alpha", "beta"],
        ..Setup::default()
    });
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ralph"))
        .current_dir(&repo.root)
        .env("GITHUB_TOKEN", TOKEN)
        .env("HOME", &repo.tools)
        .env("NO_COLOR", "1")
        .args(["compete", "3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !repo.tools.join("started").exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the replan never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the hung implementer was killed"
    );
    let issue = repo.issue();
    assert!(
        issue.contains("attention-needed") && issue.contains("interrupted"),
        "{issue}"
    );
    let before = repo.events();
    assert_eq!(outcomes(&before).len(), 1, "round 1's failure only");

    // Resume: the implementer is fast now; the replan round runs again and completes.
    std::fs::write(repo.tools.join("fast"), "").unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--resume"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = repo.events();
    let o = outcomes(&after);
    assert_eq!(
        o.iter().filter(|e| e.1 == "failure").count(),
        1,
        "not written twice: {o:?}"
    );
    assert_eq!(
        o.iter().filter(|e| e.1 == "replan_success").count(),
        1,
        "{o:?}"
    );
    let run_ids: BTreeSet<&str> = after
        .iter()
        .map(|e| e["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(run_ids.len(), 1, "the same run");
    assert!(repo.issue().contains("- [x] `greet NAME`"));
}

#[test]
fn two_issues_compete_at_the_same_time_in_one_repository() {
    let other = ISSUE
        .replace("Add a greet function", "Add a wave function")
        .replace("`greet NAME` prints `Hello, NAME!`", "`wave` prints `o/`");
    let repo = Repo::with(Setup {
        issues: &[(3, ISSUE), (4, &other)],
        ..Setup::default()
    });
    let spawn = |n: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("ralph"))
            .current_dir(&repo.root)
            .env("HOME", &repo.tools)
            .env("NO_COLOR", "1")
            .args(["compete", n])
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| spawn("3"));
        let b = s.spawn(|| spawn("4"));
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let branches = git(&repo.remote, &["branch", "--list"]);
    assert!(
        branches.contains("ralph/3-add-a-greet-function")
            && branches.contains("ralph/4-add-a-wave-function"),
        "{branches}"
    );
    let issues: BTreeSet<u64> = repo
        .events()
        .iter()
        .map(|e| e["issue_number"].as_u64().unwrap())
        .collect();
    assert_eq!(issues, BTreeSet::from([3, 4]));
}

pub(crate) const REPO_PATH: &str = "/repos/octo-org/octo-repo";

/// A wiremock GitHub serving issue 12 of the fixtures and accepting every change a run makes.
pub(crate) async fn github_server() -> wiremock::MockServer {
    use wiremock::matchers::{method, path_regex};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let issue = format!("^{REPO_PATH}/issues/12$");
    let reply = |status: u16, file: &str| {
        ResponseTemplate::new(status).set_body_raw(crate::common::fixture(file), "application/json")
    };
    let empty = || ResponseTemplate::new(200).set_body_json(json!([]));
    let routes = [
        ("GET", issue.clone(), reply(200, "issue_12.json")),
        ("PATCH", issue, reply(200, "issue_12.json")),
        ("POST", format!("^{REPO_PATH}/issues/12/labels$"), empty()),
        (
            "DELETE",
            format!("^{REPO_PATH}/issues/12/labels/.+$"),
            empty(),
        ),
        ("GET", "^/user$".to_owned(), reply(200, "user.json")),
        (
            "POST",
            format!("^{REPO_PATH}/issues/12/assignees$"),
            reply(201, "issue_12.json"),
        ),
        (
            "POST",
            format!("^{REPO_PATH}/pulls$"),
            reply(201, "pull_request.json"),
        ),
    ];
    for (verb, route, response) in routes {
        Mock::given(method(verb))
            .and(path_regex(route))
            .respond_with(response)
            .mount(&server)
            .await;
    }
    server
}

/// The repository for the GitHub runs: every open checkbox of issue 12 (req_1 and the nested
/// req_3) is proposed and verified.
pub(crate) fn github_repo() -> Repo {
    let verify_all = r#"cat > /dev/null
case "$RALPH_ROLE" in
  verify) echo '{"satisfied":[{"id":"req_1","evidence":"setup() takes notify"},{"id":"req_3","evidence":"CHANGELOG"}],"unsatisfied":[]}';;
  *) exit 1;;
esac"#;
    let repo = Repo::with(Setup {
        arbiter: verify_all,
        issues: &[],
        ..Setup::default()
    });
    script(
        &repo.tools,
        "bot.sh",
        &BOT.replace(r#"["req_1","req_2"]"#, r#"["req_1","req_3"]"#),
    );
    repo
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_github_issue_is_completed_through_the_api() {
    let server = github_server().await;
    let fixture = |name: &str| crate::common::fixture(name);
    let repo = github_repo();
    let out = tokio::task::spawn_blocking({
        let mut cmd = repo.ralph();
        cmd.env("GITHUB_API_URL", server.uri()).args([
            "--tracker",
            "github",
            "--repo",
            "octo-org/octo-repo",
            "compete",
            "12",
            "--json",
        ]);
        move || run(&mut cmd)
    })
    .await
    .unwrap();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete");
    assert!(report["pr_url"].as_str().unwrap().starts_with("https://"));

    let requests = server.received_requests().await.unwrap();
    let calls: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    // The measure docs/forges.md quotes (`--nocapture` shows it).
    eprintln!(
        "GitHub requests per competition: {} {calls:#?}",
        calls.len()
    );
    let has = |c: &str| calls.iter().any(|x| x == c);
    assert!(
        has(&format!("POST {REPO_PATH}/issues/12/labels")),
        "{calls:?}"
    );
    assert!(
        has(&format!("DELETE {REPO_PATH}/issues/12/labels/ready")),
        "{calls:?}"
    );
    assert!(
        has(&format!("DELETE {REPO_PATH}/issues/12/labels/in-progress")),
        "{calls:?}"
    );
    assert!(
        has(&format!("DELETE {REPO_PATH}/issues/12/labels/ralph")),
        "{calls:?}"
    );
    assert!(has(&format!("POST {REPO_PATH}/issues/12/assignees")));
    let added: Value = requests
        .iter()
        .find(|r| r.method.as_str() == "POST" && r.url.path().ends_with("/issues/12/labels"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .unwrap();
    assert_eq!(added, json!({"labels": ["in-progress", "ralph"]}));
    // The body: exactly the two open boxes flipped, CRLF and everything else kept.
    let patch: Value = requests
        .iter()
        .find(|r| r.method.as_str() == "PATCH")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .unwrap();
    let original: Value = serde_json::from_str(&fixture("issue_12.json")).unwrap();
    let before = original["body"].as_str().unwrap();
    let after = patch["body"].as_str().unwrap();
    assert_eq!(before.len(), after.len());
    let diffs: Vec<usize> = before
        .bytes()
        .zip(after.bytes())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(diffs.len(), 2, "two bytes changed");
    assert!(after.contains("- [x] Add a `notify` option") && after.contains("  - [x] Nested"));
    assert!(
        after.contains("- [ ] not a requirement (code block)"),
        "code blocks untouched"
    );
    // The pull request: the issue's title, the branch, `Fixes #12`.
    let pr: Value = requests
        .iter()
        .find(|r| r.url.path().ends_with("/pulls"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .unwrap();
    assert_eq!(pr["title"], "Add option to remove the notification");
    assert!(pr["head"]
        .as_str()
        .unwrap()
        .starts_with("ralph/12-add-option-to-remove"));
    assert_eq!(pr["base"], "main");
    let pr_body = pr["body"].as_str().unwrap();
    assert!(pr_body.contains("Fixes #12"));
    assert!(
        pr_body.contains("| req_1 | Add a `notify` option to `setup()` (default `true`) | ✅ | setup() takes notify |"),
        "{pr_body}"
    );
    // The token went only into the Authorization header, never into a body.
    for r in &requests {
        assert!(!String::from_utf8_lossy(&r.body).contains(TOKEN));
    }
    let remote_branches = git(&repo.remote, &["branch", "--list"]);
    assert!(
        remote_branches.contains("ralph/12-add-option-to-remove"),
        "{remote_branches}"
    );
    repo.assert_no_token();
}

/// Mounts who applied `ready` (the fixture's events: lastly `maintainer`) and that user's
/// permission.
pub(crate) async fn labeler(server: &wiremock::MockServer, role: &str) {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    Mock::given(method("GET"))
        .and(path(format!("{REPO_PATH}/issues/12/events")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            crate::common::fixture("issue_12_events.json"),
            "application/json",
        ))
        .mount(server)
        .await;
    let permission = if role == "read" { "read" } else { "write" };
    Mock::given(method("GET"))
        .and(path(format!(
            "{REPO_PATH}/collaborators/maintainer/permission"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"permission": permission, "role_name": role, "user": {"login": "maintainer"}}),
        ))
        .mount(server)
        .await;
}

pub(crate) fn action_mode(repo: &Repo, server: &wiremock::MockServer, dir: &Path) -> Command {
    let mut cmd = repo.ralph();
    cmd.env("GITHUB_API_URL", server.uri())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "octo-org/octo-repo")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output"))
        .args(["--tracker", "github", "compete", "12"]);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_actions_a_read_only_labeler_is_refused() {
    let server = github_server().await;
    labeler(&server, "read").await;
    let repo = github_repo();
    let files = tempfile::tempdir().unwrap();
    let mut cmd = action_mode(&repo, &server, files.path());
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("applied by maintainer, who has read access"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint:"));
    // Nothing changed on GitHub.
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests.iter().all(|r| r.method.as_str() == "GET"),
        "only reads"
    );
    assert!(repo.events().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_actions_a_maintainers_label_runs_and_leaves_summary_and_outputs() {
    let server = github_server().await;
    labeler(&server, "maintain").await;
    let repo = github_repo();
    let files = tempfile::tempdir().unwrap();
    let mut cmd = action_mode(&repo, &server, files.path());
    let out = tokio::task::spawn_blocking(move || run(&mut cmd))
        .await
        .unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let outputs = std::fs::read_to_string(files.path().join("output")).unwrap();
    assert!(outputs.contains("outcome=complete\n"), "{outputs}");
    assert!(outputs.contains("pr-url=https://"), "{outputs}");
    assert!(outputs.contains("winner=alpha\n"), "{outputs}");
    assert!(
        outputs.contains("branch=ralph/12-add-option-to-remove"),
        "{outputs}"
    );
    let summary = std::fs::read_to_string(files.path().join("summary.md")).unwrap();
    assert!(summary.contains("## ralph · issue #12: Add option to remove the notification"));
    assert!(summary.contains("| 1 | proposal_1 | alpha |"), "{summary}");
    assert!(summary.contains("`test` ✅"));
    // It ends with the standings after the run.
    let board = summary
        .split("### Leaderboard after this run")
        .nth(1)
        .unwrap();
    assert!(
        board.contains("| 1 | alpha | 1.000 | 100% | 1 | 0 |"),
        "{board}"
    );
    assert!(!summary.contains(TOKEN));
}
