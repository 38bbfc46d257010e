//! `ralph compete N --dry-run` through the binary, offline: bots on all six backends at once
//! (a fake program, fake `claude` and `codex` CLIs, wiremock Anthropic and OpenAI servers, and
//! recorded replies), a broken bot skipped with its reason, the judge from recordings — and
//! nothing written anywhere, no token reaching any agent or any output. Also: the judge
//! failing (neutral scores, the run goes on), every proposal below 0.5 (human review), the
//! `--record` layout, and every number of the ranking recomputed from the report.

use crate::common::{run_without, script, Out};

use assert_cmd::Command;
use serde_json::{json, Value};
use std::path::Path;
use tempfile::TempDir;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "ghp_dryRunToken0123456789abcdefXYZ";
const GH_TOKEN: &str = "gho_dryRunOtherToken0123456789abc";

const ISSUE: &str = "---\ntitle: Add a --verbose flag\nlabels: [ready]\n---\n## Tasks\n- [ ] Parse a `--verbose` flag\n- [ ] Print timings when verbose\n- [x] Keep the default output\n";

fn proposal(summary: &str, lines: u64, files: &[&str], boxes: Value) -> Value {
    json!({
        "approach_summary": summary,
        "pseudo_code": format!("{summary}: parse the flag, then print timings"),
        "files_affected": files.iter().map(|f| json!({"path": f, "change_type": "modify", "description": "d"})).collect::<Vec<_>>(),
        "estimated_complexity": {"lines_of_code": lines, "files": files.len(), "modules": 1, "difficulty": "low"},
        "risk_assessment": {"breaking_changes": false, "security_critical": false, "deployment_impact": "none", "overall_risk": "low", "mitigation": ""},
        "spec_alignment": {"checkboxes_addressed": boxes, "components_addressed": ["Print timings when verbose"], "implicit_requirements_addressed": ["req_implicit_2"], "reasoning": "r"},
        "specialist_consultations": [{"specialist": "rust", "question": "q", "answer": "use clap", "applied": "yes"}],
        "innovation": "none",
        "success_probability": 0.7
    })
}

fn fenced(v: &Value) -> String {
    format!("My plan follows.\n```json\n{v}\n```\n")
}

fn judge_answer(n: usize) -> String {
    let scores: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"proposal_id": format!("proposal_{i}"),
                   "technical_quality_reasoning": format!("reasoning {i}"),
                   "technical_quality": 0.5 + 0.05 * i as f64,
                   "innovation_reasoning": "plain", "innovation": 0.4})
        })
        .collect();
    fenced(&json!({ "scores": scores }))
}

struct Repo {
    dir: TempDir,
}

impl Repo {
    fn new(config: &str) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let ralph = dir.path().join(".ralph");
        std::fs::create_dir_all(ralph.join("issues")).unwrap();
        std::fs::create_dir_all(dir.path().join("replay")).unwrap();
        std::fs::write(ralph.join("issues/7.md"), ISSUE).unwrap();
        // The fake agents keep what they were asked beside their scripts, in the directory a
        // dry run reads (read-only to reading agents, unless `[sandbox] writable` says so).
        let config = format!(
            "{config}\n[sandbox]\nwritable = [\"{}\"]\n",
            dir.path().display()
        );
        std::fs::write(ralph.join("config.toml"), config).unwrap();
        Repo { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Every command bot (`./bot.sh`) answers with `proposal`.
    fn bots_answer(&self, proposal: &Value) {
        self.write("answer.txt", &fenced(proposal));
        script(self.path(), "bot.sh", "cat >/dev/null\ncat answer.txt");
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path().join(rel), text).unwrap();
    }

    fn ralph(&self) -> Command {
        let mut cmd = Command::cargo_bin("ralph").unwrap();
        cmd.current_dir(self.path())
            .env_remove("RALPH_LOG")
            .env("GITHUB_TOKEN", TOKEN)
            .env("GH_TOKEN", GH_TOKEN)
            .env("NO_COLOR", "1")
            .env("RALPH_TEST_NO_RETRY_DELAY", "1");
        cmd
    }
}

fn run(cmd: &mut Command) -> Out {
    run_without(cmd, &[TOKEN, GH_TOKEN])
}

/// Every total equals the weighted sum of its six scores, every score is in [0, 1], and the
/// ranking is by total.
fn check_numbers(round: &Value) {
    let w = [
        ("spec_alignment", 0.30),
        ("technical_quality", 0.20),
        ("innovation", 0.15),
        ("risk", 0.20),
        ("efficiency", 0.10),
        ("specialist_validation", 0.05),
    ];
    let mut totals = Vec::new();
    for p in round["proposals"].as_array().unwrap() {
        let sum: f64 = w
            .iter()
            .map(|(k, weight)| {
                let v = p["scores"][k].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v), "{k} = {v}");
                v * weight
            })
            .sum();
        let total = p["total_score"].as_f64().unwrap();
        assert!((sum - total).abs() < 1e-9, "{sum} vs {total}");
        assert_eq!(p["reasons"].as_object().unwrap().len(), 6);
        totals.push((p["proposal_id"].as_str().unwrap().to_owned(), total));
    }
    let ranking: Vec<&str> = round["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let by_id = |id: &str| totals.iter().find(|(p, _)| p == id).unwrap().1;
    for pair in ranking.windows(2) {
        assert!(by_id(pair[0]) >= by_id(pair[1]) - 1e-9, "{ranking:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_gathers_proposals_from_all_six_backends_and_writes_nothing() {
    let anthropic = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_01", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": fenced(&proposal("Anthropic plan", 120, &["src/cli.rs", "src/run.rs"], json!(["req_1", "req_2"])))}],
            "usage": {"input_tokens": 1000, "output_tokens": 200}
        })))
        .mount(&anthropic)
        .await;
    let openai = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": fenced(&proposal("OpenAI plan", 60, &["src/main.rs"], json!([1])))}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 150}
        })))
        .mount(&openai)
        .await;

    let config = format!(
        r#"tracker = "local"
[[bots]]
id = "cmd_bot"
backend = "command"
command = ["./cmd_bot.sh"]
[[bots]]
id = "claude_bot"
backend = "claude"
model = "sonnet"
[[bots]]
id = "codex_bot"
backend = "codex"
[[bots]]
id = "anthropic_bot"
backend = "anthropic"
base_url = "{}"
model = "claude-sonnet-4-5"
[[bots]]
id = "openai_bot"
backend = "openai"
base_url = "{}/v1"
api_key_env = "TEST_OPENAI_KEY"
model = "gpt-4.1"
[[bots]]
id = "replay_bot"
backend = "replay"
dir = "replay"
[[bots]]
id = "broken_bot"
backend = "command"
command = ["./no-such-bot.sh"]
[arbiter]
backend = "replay"
dir = "replay"
"#,
        anthropic.uri(),
        openai.uri()
    );
    let repo = Repo::new(&config);
    let p = repo.path();
    // The command bot records its environment, to prove no token reaches it.
    std::fs::write(
        p.join("cmd_answer.txt"),
        fenced(&proposal(
            "Command plan",
            40,
            &["src/main.rs"],
            json!(["req_1"]),
        )),
    )
    .unwrap();
    script(
        p,
        "cmd_bot.sh",
        "cat >/dev/null\nenv > cmd_env.txt\ncat cmd_answer.txt",
    );
    // Fake claude and codex CLIs print transcripts in their documented formats.
    let claude_text = fenced(&proposal(
        "Claude plan",
        80,
        &["src/main.rs", "tests/cli.rs"],
        json!(["req_1", "req_2"]),
    ));
    let claude_stream = [
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "sonnet"}),
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": claude_text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": claude_text,
               "session_id": "s-1", "total_cost_usd": 0.0125,
               "usage": {"input_tokens": 500, "output_tokens": 120}}),
    ]
    .iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    std::fs::write(p.join("claude.jsonl"), claude_stream).unwrap();
    let claude = script(
        p,
        "fake-claude",
        "cat >/dev/null\nenv > claude_env.txt\ncat claude.jsonl",
    );
    let codex_text = fenced(&proposal(
        "Codex plan",
        200,
        &["src/main.rs", "src/timing.rs", "src/lib.rs"],
        json!(["req_1", "req_2"]),
    ));
    let codex_stream = [
        json!({"type": "thread.started", "thread_id": "t-1"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": codex_text}}),
        json!({"type": "turn.completed", "usage": {"input_tokens": 700, "cached_input_tokens": 0, "output_tokens": 90}}),
    ]
    .iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    std::fs::write(p.join("codex.jsonl"), codex_stream).unwrap();
    let codex = script(p, "fake-codex", "cat >/dev/null\ncat codex.jsonl");
    repo.write(
        "replay/replay_bot.propose.txt",
        &fenced(&proposal(
            "Replayed plan",
            30,
            &["src/main.rs"],
            json!(["req_2"]),
        )),
    );
    repo.write("replay/arbiter.judge.txt", &judge_answer(6));
    repo.write(
        "replay/arbiter.extract.txt",
        &fenced(&json!({"explicit_requirements": [{"id": "req_1", "components": ["flag parsed", "help text"]}],
                        "implicit_requirements": []})),
    );
    let issue_before = std::fs::read_to_string(p.join(".ralph/issues/7.md")).unwrap();

    let out = run(repo
        .ralph()
        .env("RALPH_CLAUDE_BIN", &claude)
        .env("RALPH_CODEX_BIN", &codex)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("TEST_OPENAI_KEY", "sk-test-openai-0123456789")
        .args(["compete", "7", "--dry-run", "--json", "--seed", "42"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "dry_run");
    assert_eq!(report["issue"], 7);
    assert_eq!(report["extraction"], "extract");
    assert_eq!(report["events"], json!([]));
    let round = &report["rounds"][0];
    assert_eq!(round["round"], 1);
    assert_eq!(round["phase"], "initial");
    assert_eq!(round["seed"], 42);
    let mut bots: Vec<&str> = round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["bot_id"].as_str().unwrap())
        .collect();
    bots.sort_unstable();
    assert_eq!(
        bots,
        [
            "anthropic_bot",
            "claude_bot",
            "cmd_bot",
            "codex_bot",
            "openai_bot",
            "replay_bot"
        ]
    );
    let ids: Vec<&str> = round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["proposal_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "proposal_1",
            "proposal_2",
            "proposal_3",
            "proposal_4",
            "proposal_5",
            "proposal_6"
        ]
    );
    assert_eq!(
        round["skipped"],
        json!([{"bot_id": "broken_bot", "reason": "failed to start",
                "detail": round["skipped"][0]["detail"]}])
    );
    assert!(round["skipped"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("no-such-bot.sh"));
    assert_eq!(round["judges"]["answered"], json!(["arbiter"]));
    assert_eq!(round["human_review"], false);
    let winner = round["winner"].as_str().unwrap();
    assert_eq!(round["ranking"][0], winner);
    check_numbers(round);
    // The judge's reasoning is carried with its score, per blinded proposal.
    let p3 = round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["proposal_id"] == "proposal_3")
        .unwrap();
    assert_eq!(p3["reasons"]["technical_quality"], "reasoning 3");
    assert!((p3["scores"]["technical_quality"].as_f64().unwrap() - 0.65).abs() < 1e-9);
    // `1` was read as `req_1` for the OpenAI bot.
    let openai_p = round["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["bot_id"] == "openai_bot")
        .unwrap();
    assert!(openai_p["reasons"]["spec_alignment"]
        .as_str()
        .unwrap()
        .contains("checkboxes 1/2"));
    // Accounting: tokens per bot; cost where the backend reports it.
    let total = &report["total"];
    assert_eq!(
        total["input_tokens"].as_u64().unwrap(),
        1000 + 900 + 500 + 700
    );
    assert!((total["cost_usd"].as_f64().unwrap() - 0.0125).abs() < 1e-9);
    let claude_row = report["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == "claude_bot")
        .unwrap();
    assert_eq!(claude_row["role"], "propose");
    assert_eq!(claude_row["output_tokens"], 120);

    // Nothing written: no events, no cache, the issue unchanged.
    assert!(!p.join(".ralph/events").exists());
    assert!(!p.join(".ralph/marketplace.json").exists());
    assert!(!p.join(".ralph/runs").exists());
    assert_eq!(
        std::fs::read_to_string(p.join(".ralph/issues/7.md")).unwrap(),
        issue_before
    );
    // No GitHub token reached the agents.
    for env_file in ["cmd_env.txt", "claude_env.txt"] {
        let env = std::fs::read_to_string(p.join(env_file)).unwrap();
        assert!(
            !env.contains(TOKEN) && !env.contains(GH_TOKEN),
            "{env_file}"
        );
        assert!(!env.contains("GITHUB_TOKEN=") && !env.contains("GH_TOKEN="));
        assert!(env.contains("RALPH_ROLE=propose"));
        assert!(env.contains("RALPH_ISSUE=7"));
    }
    // The API keys went only to their own servers, in headers.
    let received = anthropic.received_requests().await.unwrap();
    assert_eq!(
        received[0].headers.get("x-api-key").unwrap(),
        "sk-ant-test-0123456789"
    );
    let body = String::from_utf8_lossy(&received[0].body);
    assert!(body.contains("anthropic_bot") && body.contains("req_1"));
    assert!(!body.contains(TOKEN));
}

const TWO_COMMAND_BOTS: &str = r#"tracker = "local"
[defaults]
backend = "command"
command = ["./bot.sh"]
[[bots]]
id = "alpha"
[[bots]]
id = "beta"
[arbiter]
command = ["./judge.sh"]
"#;

#[test]
fn a_failing_judge_gives_neutral_scores_and_the_ranking_goes_on() {
    let repo = Repo::new(TWO_COMMAND_BOTS);
    let p = repo.path();
    repo.bots_answer(&proposal(
        "A plan",
        40,
        &["src/main.rs"],
        json!(["req_1", "req_2"]),
    ));
    script(
        p,
        "judge.sh",
        "cat > \"judge_prompt_$RALPH_ROLE.txt\"\necho 'model overloaded' >&2\nexit 3",
    );
    let out = run(repo.ralph().args(["compete", "7", "--dry-run", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["extraction"], "checkboxes");
    let round = &report["rounds"][0];
    assert_eq!(round["judges"]["answered"], json!([]));
    assert!(round["judges"]["failures"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("model overloaded"));
    for p in round["proposals"].as_array().unwrap() {
        assert_eq!(p["scores"]["technical_quality"], 0.5);
        assert_eq!(p["scores"]["innovation"], 0.5);
        assert!(p["reasons"]["innovation"]
            .as_str()
            .unwrap()
            .starts_with("judge unavailable"));
    }
    check_numbers(round);
    // Identical proposals tie on total: the earlier submission ranks first.
    let proposals = round["proposals"].as_array().unwrap();
    let first = round["ranking"][0].as_str().unwrap();
    let time = |id: &str| {
        proposals.iter().find(|p| p["proposal_id"] == id).unwrap()["submission_time"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let second = round["ranking"][1].as_str().unwrap();
    assert!(time(first) <= time(second));
    assert!(out.stderr.contains("## Phase 1: Requirement Extraction"));
    assert!(out.stderr.contains("judge arbiter failed"));
    // The judge saw the proposals blind: labels and rubric, no bot id.
    let prompt = std::fs::read_to_string(p.join("judge_prompt_judge.txt")).unwrap();
    assert!(prompt.contains("proposal_1") && prompt.contains("proposal_2"));
    assert!(
        prompt.contains("technical_quality"),
        "the rubric is in the prompt"
    );
    assert!(
        !prompt.contains("alpha") && !prompt.contains("beta"),
        "{prompt}"
    );
}

#[test]
fn several_judges_give_the_median() {
    let config = format!(
        "{TWO_COMMAND_BOTS}judges = [{{ backend = \"replay\", dir = \"replay\" }}, {{ backend = \"replay\", dir = \"replay\" }}, {{ backend = \"command\", command = [\"./missing-judge.sh\"] }}]\n"
    );
    let repo = Repo::new(&config);
    repo.bots_answer(&proposal("Plan", 40, &["src/main.rs"], json!(["req_1"])));
    let answer = |tq: f64| {
        fenced(&json!({"scores": [
            {"proposal_id": "proposal_1", "technical_quality": tq, "technical_quality_reasoning": format!("tq {tq}"), "innovation": 0.5, "innovation_reasoning": "i"},
            {"proposal_id": "proposal_2", "technical_quality": tq, "technical_quality_reasoning": format!("tq {tq}"), "innovation": 0.5, "innovation_reasoning": "i"}
        ]}))
    };
    // The first judge speaks as `arbiter`, the second as `judge_2`; the third cannot start.
    repo.write("replay/arbiter.judge.txt", &answer(0.2));
    repo.write("replay/judge_2.judge.txt", &answer(0.6));
    let out = run(repo.ralph().args(["compete", "7", "--dry-run", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let round = &report["rounds"][0];
    assert_eq!(round["judges"]["answered"], json!(["arbiter", "judge_2"]));
    assert_eq!(round["judges"]["failures"][0]["judge"], "judge_3");
    for p in round["proposals"].as_array().unwrap() {
        // The median of 0.2 and 0.6; the reasoning of the lower middle judge.
        assert!((p["scores"]["technical_quality"].as_f64().unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(p["reasons"]["technical_quality"], "tq 0.2");
    }
}

#[test]
fn all_proposals_below_the_threshold_go_to_human_review() {
    let repo = Repo::new(TWO_COMMAND_BOTS);
    let p = repo.path();
    // Addresses nothing, touches 30 files with breaking changes: a poor plan.
    let mut poor = proposal(
        "Rewrite everything",
        5000,
        &(0..30)
            .map(|i| format!("src/m{i}.rs"))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        json!([]),
    );
    poor["risk_assessment"]["breaking_changes"] = json!(true);
    poor["spec_alignment"]["components_addressed"] = json!([]);
    poor["spec_alignment"]["implicit_requirements_addressed"] = json!([]);
    poor["specialist_consultations"] = json!([]);
    repo.bots_answer(&poor);
    let zero: Vec<Value> = (1..=2)
        .map(|i| json!({"proposal_id": format!("proposal_{i}"), "technical_quality": 0.1, "technical_quality_reasoning": "no", "innovation": 0.1, "innovation_reasoning": "no"}))
        .collect();
    std::fs::write(p.join("judge.json"), json!({ "scores": zero }).to_string()).unwrap();
    script(p, "judge.sh", "cat >/dev/null\ncat judge.json");
    let out = run(repo.ralph().args(["compete", "7", "--dry-run", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let round = &report["rounds"][0];
    assert_eq!(round["human_review"], true);
    assert_eq!(round["winner"], Value::Null);
    assert_eq!(round["ranking"].as_array().unwrap().len(), 2);
    check_numbers(round);

    // The human view says so too.
    let out = run(repo.ralph().args(["compete", "7", "--dry-run"]));
    assert!(out.stdout.contains("No winner"), "{}", out.stdout);
    assert!(out.stdout.contains("spec_alignment"));
}

#[test]
fn record_writes_the_replay_layout_and_a_replay_run_reproduces_the_ranking() {
    let repo = Repo::new(TWO_COMMAND_BOTS);
    let p = repo.path();
    repo.bots_answer(&proposal("Plan", 40, &["src/main.rs"], json!(["req_1"])));
    std::fs::write(p.join("judge.txt"), judge_answer(2)).unwrap();
    script(p, "judge.sh", "cat >/dev/null\ncat judge.txt");
    let out = run(repo.ralph().args([
        "compete",
        "7",
        "--dry-run",
        "--json",
        "--seed",
        "7",
        "--record",
        "rec",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first: Value = serde_json::from_str(&out.stdout).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(p.join("rec"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.contains(&"alpha.propose.r1.a0.txt".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"beta.propose.r1.a0.txt".to_owned()));
    assert!(names.contains(&"arbiter.judge.r1.a0.txt".to_owned()));

    // Replaying the recordings gives the same ranking with the same seed.
    std::fs::write(
        p.join(".ralph/config.toml"),
        "tracker = \"local\"\n[defaults]\nbackend = \"replay\"\ndir = \"rec\"\n[[bots]]\nid = \"alpha\"\n[[bots]]\nid = \"beta\"\n",
    )
    .unwrap();
    let out = run(repo
        .ralph()
        .args(["compete", "7", "--dry-run", "--json", "--seed", "7"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let second: Value = serde_json::from_str(&out.stdout).unwrap();
    let totals = |r: &Value| -> Vec<(String, String)> {
        r["rounds"][0]["proposals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["bot_id"].as_str().unwrap().to_owned(),
                    p["total_score"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(totals(&first), totals(&second));
}

#[test]
fn preflight_and_bad_bot_counts_are_usage_errors() {
    let repo = Repo::new(TWO_COMMAND_BOTS);
    // A real run needs a git repository; the refusal changes nothing.
    let before = std::fs::read_to_string(repo.path().join(".ralph/issues/7.md")).unwrap();
    let out = run(repo.ralph().args(["compete", "7"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a git repository"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".ralph/issues/7.md")).unwrap(),
        before
    );
    let out = run(repo
        .ralph()
        .args(["compete", "7", "--dry-run", "--bots", "5"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("2 configured"), "{}", out.stderr);
    let out = run(repo.ralph().args(["compete", "99", "--dry-run"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn a_run_cap_stops_cleanly_and_keeps_the_proposals() {
    let repo = Repo::new(TWO_COMMAND_BOTS);
    let p = repo.path();
    // Command bots report no usage, so the bots are fake `claude` CLIs that do: 15 tokens
    // each, against a cap of 20 — reached once both have answered, before the judge.
    let text = fenced(&proposal("Plan", 40, &["src/main.rs"], json!(["req_1"])));
    let stream = json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
                        "usage": {"input_tokens": 10, "output_tokens": 5}})
    .to_string();
    std::fs::write(p.join("claude.jsonl"), stream).unwrap();
    let claude = script(p, "fake-claude", "cat >/dev/null\ncat claude.jsonl");
    std::fs::write(
        p.join(".ralph/config.toml"),
        "tracker = \"local\"\n[defaults]\nbackend = \"claude\"\n[[bots]]\nid = \"alpha\"\n[[bots]]\nid = \"beta\"\n[arbiter]\nbackend = \"command\"\ncommand = [\"./no-judge.sh\"]\n[limits]\nmax_tokens = 20\n",
    )
    .unwrap();
    let out = run(repo.ralph().env("RALPH_CLAUDE_BIN", &claude).args([
        "compete",
        "7",
        "--dry-run",
        "--json",
    ]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "aborted");
    assert!(report["stopped"]
        .as_str()
        .unwrap()
        .contains("limits.max_tokens"));
    assert_eq!(
        report["rounds"][0]["proposals"].as_array().unwrap().len(),
        2
    );
    assert_eq!(report["total"]["input_tokens"], 20);
    assert!(out.stderr.contains("stopping the run"));
}
