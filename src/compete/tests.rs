//! Whole competitions in memory: the local tracker in a temporary directory, scripted backends
//! (answers chosen per role, bot and round; the implementer really writes files), the
//! in-memory workspace, and checks that really run in its worktree. No git repository, no
//! program but `sh`. Each test follows one path of the state machine end to end — success,
//! two rounds, replan success, replan failure, resume, caps, no proposal — and checks labels,
//! body, comments, pull request, commits, events and the saved state.

use super::agents::{Agent, Agents};
use super::{compete, RunInput, RunOptions};
use crate::agent::{AgentCall, AgentError, AgentReply, Backend, Role, Usage};
use crate::config::{Config, ConfigSource, TrackerKind};
use crate::output::{ColorChoice, Printer};
use crate::run_report::{RunOutcome, RunReport};
use crate::settings::Settings;
use crate::tracker::local::LocalTracker;
use crate::workspace::memory::{MemoryWorkspace, Record};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

const ISSUE: &str = "---\ntitle: Add a greet function\nlabels: [ready]\n---\n## Tasks\n- [ ] `greet NAME` prints `Hello, NAME!`\n- [ ] `greet` without a name prints `Hello, world!`\n";

const CONFIG: &str = r#"
tracker = "local"
max_iterations = 4
[marketplace]
base_budget_per_bot = 1
[[bots]]
id = "alpha"
backend = "command"
command = ["unused"]
[[bots]]
id = "beta"
backend = "command"
command = ["unused"]
[checks]
syntax = "sh -n lib.sh"
test = "! grep -q 'Hi ' lib.sh"
"#;

type Script = dyn Fn(&AgentCall) -> Result<String, String> + Send + Sync;

/// A backend whose answer a closure picks from the call.
struct Scripted(Box<Script>);

#[async_trait]
impl Backend for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }

    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        match (self.0)(call) {
            Ok(text) => Ok(AgentReply {
                text,
                usage: Usage {
                    input_tokens: 100,
                    cached_input_tokens: 0,
                    output_tokens: 20,
                    cost_usd: None,
                },
                duration: Duration::from_millis(5),
                session_id: None,
                ..AgentReply::default()
            }),
            Err(tail) => Err(AgentError::Exit {
                backend: "scripted".into(),
                status: "exit code 1".into(),
                tail,
            }),
        }
    }
}

fn agent(
    name: &str,
    script: impl Fn(&AgentCall) -> Result<String, String> + Send + Sync + 'static,
) -> Agent {
    Agent {
        name: name.into(),
        backend: Ok(Arc::new(Scripted(Box::new(script)))),
        timeout: Duration::from_secs(10),
    }
}

/// A valid proposal naming its bot and round, so every bot's differs.
fn proposal(call: &AgentCall) -> Result<String, String> {
    let bot = call.bot_id.clone().unwrap_or_default();
    Ok(json!({
        "approach_summary": format!("Add greet to lib.sh, the plan of {bot} in round {}", call.round),
        "pseudo_code": format!("greet() {{ echo Hello; }} written by {bot} for round {} of this competition", call.round),
        "files_affected": [{"path": "lib.sh", "change_type": "modify"}],
        "estimated_complexity": {"lines_of_code": 3, "files": 1, "modules": 1, "difficulty": "low"},
        "risk_assessment": {"breaking_changes": false, "security_critical": false, "overall_risk": "low"},
        "spec_alignment": {"checkboxes_addressed": ["req_1", "req_2"], "components_addressed": [], "implicit_requirements_addressed": ["req_implicit_2"]},
        "success_probability": 0.8
    })
    .to_string())
}

/// The arbiter: no extraction and no judging (checkbox-only, neutral judge scores); the
/// verify role finds satisfied the open boxes that `satisfied` names for the round.
fn arbiter(
    satisfied: fn(u32) -> Vec<&'static str>,
) -> impl Fn(&AgentCall) -> Result<String, String> {
    move |call| match call.role {
        Role::Verify => {
            let ids: Vec<Value> = satisfied(call.round)
                .into_iter()
                .map(|id| json!({"id": id, "evidence": format!("{id} in lib.sh")}))
                .collect();
            Ok(json!({"satisfied": ids, "unsatisfied": []}).to_string())
        }
        _ => Err("no".into()),
    }
}

fn both(_: u32) -> Vec<&'static str> {
    vec!["req_1", "req_2"]
}

/// An implementer that writes a correct greet when `good(round)`, a wrong one otherwise.
fn implementer(good: fn(u32) -> bool) -> impl Fn(&AgentCall) -> Result<String, String> {
    move |call| {
        let text = if good(call.round) {
            "greet() { echo \"Hello, ${1:-world}!\"; }\n"
        } else {
            "greet() { echo \"Hi $1\"; }\n"
        };
        std::fs::write(call.workdir.join("lib.sh"), text).map_err(|e| e.to_string())?;
        Ok(
            json!({"summary": "added greet", "checkboxes_completed": ["req_1", "req_2"]})
                .to_string(),
        )
    }
}

fn agents(satisfied: fn(u32) -> Vec<&'static str>, good: fn(u32) -> bool) -> Agents {
    Agents {
        bots: vec![agent("alpha", proposal), agent("beta", proposal)],
        arbiter: agent("arbiter", arbiter(satisfied)),
        judges: vec![agent("arbiter", arbiter(satisfied))],
        implementer: agent("implementer", implementer(good)),
        record: None,
    }
}

struct Harness {
    _dir: TempDir,
    settings: Settings,
    tracker: LocalTracker,
    workspace: MemoryWorkspace,
    printer: Printer,
}

impl Harness {
    fn new(config: &str) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let ralph_dir = root.join(".ralph");
        std::fs::create_dir_all(ralph_dir.join("issues")).unwrap();
        std::fs::write(ralph_dir.join("issues/3.md"), ISSUE).unwrap();
        let config = Config::from_toml(Path::new("config.toml"), config).unwrap();
        Harness {
            tracker: LocalTracker::new(ralph_dir.join("issues")),
            workspace: MemoryWorkspace::new(&root, &[("lib.sh", "add() { echo $(($1 + $2)); }\n")]),
            settings: Settings {
                root,
                ralph_dir,
                repo: None,
                tracker: TrackerKind::Local,
                config,
                config_source: ConfigSource::Defaults,
            },
            printer: Printer::new(true, true, ColorChoice::Never),
            _dir: dir,
        }
    }

    async fn compete(
        &self,
        agents: Agents,
        max_iterations: u32,
        resume: bool,
    ) -> anyhow::Result<RunReport> {
        compete(RunInput {
            settings: &self.settings,
            tracker: &self.tracker,
            workspace: &self.workspace,
            issue: 3,
            agents,
            printer: &self.printer,
            progress: crate::progress::Progress::off(),
            options: RunOptions {
                max_iterations,
                resume,
                no_push: false,
                base: None,
                token: None,
                sandbox: None,
                seed: 1,
            },
        })
        .await
    }

    fn issue(&self) -> String {
        std::fs::read_to_string(self.settings.ralph_dir.join("issues/3.md")).unwrap()
    }

    fn pull_request(&self) -> Option<String> {
        std::fs::read_to_string(self.settings.ralph_dir.join("issues/3.pr-4.md")).ok()
    }

    /// `(bot, outcome, weight_delta)` of every event, in file order.
    fn events(&self) -> Vec<(String, String, f64)> {
        let dir = self.settings.ralph_dir.join("events");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        names.sort();
        names
            .iter()
            .map(|p| {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
                (
                    v["bot_id"].as_str().unwrap().to_owned(),
                    v["outcome"].as_str().unwrap().to_owned(),
                    v["weight_delta"].as_f64().unwrap(),
                )
            })
            .collect()
    }

    fn record(&self) -> Record {
        self.workspace.record()
    }
}

fn outcomes(events: &[(String, String, f64)]) -> Vec<String> {
    events.iter().map(|(b, o, _)| format!("{b}:{o}")).collect()
}

#[tokio::test]
async fn one_passing_round_completes_with_a_pull_request() {
    let h = Harness::new(CONFIG);
    let report = h.compete(agents(both, |_| true), 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Complete);
    assert_eq!(report.rounds.len(), 1);
    let issue = h.issue();
    assert!(
        issue.contains("- [x] `greet NAME`") && issue.contains("- [x] `greet` without"),
        "{issue}"
    );
    assert!(
        !issue.contains("in-progress") && !issue.contains("attention-needed"),
        "{issue}"
    );
    let pr = h.pull_request().expect("a pull request");
    assert!(
        pr.contains("| req_1 |") && pr.contains("req_1 in lib.sh") && pr.ends_with("Fixes #3\n"),
        "{pr}"
    );
    let rec = h.record();
    assert_eq!(rec.commits.len(), 1);
    assert!(rec.commits[0].starts_with("Add a greet function (#3)\n\nadded greet"));
    assert!(rec.commits[0].contains(&format!("Ralph-Run: {}", report.run_id)));
    assert_eq!(rec.pushed, ["ralph/3-add-a-greet-function"]);
    assert!(
        rec.removed,
        "the worktree is removed after the pull request"
    );
    let events = h.events();
    assert_eq!(events.len(), 2);
    let winner = report.rounds[0].winner_bot.clone().unwrap();
    assert!(outcomes(&events).contains(&format!("{winner}:success")));
    assert!(events
        .iter()
        .any(|(_, o, d)| o == "not_selected" && (*d + 0.02).abs() < 1e-9));
    assert!(!h.settings.ralph_dir.join("runs/3.lock").exists());
}

#[tokio::test]
async fn boxes_left_after_a_round_go_to_the_next_round() {
    let h = Harness::new(CONFIG);
    let report = h
        .compete(
            agents(
                |round| {
                    if round == 1 {
                        vec!["req_1"]
                    } else {
                        vec!["req_2"]
                    }
                },
                |_| true,
            ),
            4,
            false,
        )
        .await
        .unwrap();
    assert_eq!(report.outcome, RunOutcome::Complete);
    assert_eq!(report.rounds.len(), 2);
    assert_eq!(h.record().commits.len(), 2);
    assert_eq!(
        h.events().iter().filter(|(_, o, _)| o == "success").count(),
        2
    );
    assert!(h.issue().matches("- [x]").count() == 2);
}

#[tokio::test]
async fn a_failed_round_replans_and_a_passing_replan_completes() {
    let h = Harness::new(CONFIG);
    let report = h
        .compete(agents(both, |round| round > 1), 4, false)
        .await
        .unwrap();
    assert_eq!(report.outcome, RunOutcome::Complete);
    let phases: Vec<_> = report.rounds.iter().map(|r| r.phase.as_str()).collect();
    assert_eq!(phases, ["initial", "replan"]);
    let events = outcomes(&h.events());
    let failed = report.rounds[0].winner_bot.clone().unwrap();
    assert_eq!(events[0], format!("{failed}:failure"));
    assert!(
        events.iter().any(|e| e.ends_with(":replan_success")),
        "{events:?}"
    );
    assert_eq!(
        h.record().resets,
        2,
        "one before the baseline, one to throw the failed attempt away"
    );
}

#[tokio::test]
async fn a_failed_replan_escalates_with_both_failures() {
    let h = Harness::new(CONFIG);
    let report = h.compete(agents(both, |_| false), 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Escalated);
    assert_eq!(
        report.escalation.as_deref(),
        Some("the implementation failed, and so did the replan")
    );
    let issue = h.issue();
    assert!(
        issue.contains("attention-needed") && !issue.contains("in-progress"),
        "{issue}"
    );
    assert!(
        issue.contains("**Initial round**") && issue.contains("**Replan round**"),
        "{issue}"
    );
    assert!(issue.contains("check `test` failed"), "{issue}");
    assert!(issue.contains("Worktree (kept for inspection)"), "{issue}");
    assert!(h.pull_request().is_none());
    let events = h.events();
    let count = |o: &str| events.iter().filter(|(_, x, _)| x == o).count();
    assert_eq!(
        (
            count("failure"),
            count("replan_failure"),
            count("collective_failure")
        ),
        (1, 1, 2)
    );
    assert!(!h.record().removed);
}

#[tokio::test]
async fn a_stopped_run_resumes_from_its_saved_round_without_repeating_events() {
    let h = Harness::new(CONFIG);
    // One round only: the initial failure leaves a replan for later.
    let first = h
        .compete(agents(both, |round| round > 1), 1, false)
        .await
        .unwrap();
    assert_eq!(first.outcome, RunOutcome::Escalated);
    assert_eq!(
        first.escalation.as_deref(),
        Some("max_iterations (1) rounds ran and checkboxes remain")
    );
    let after_first = h.events();
    assert_eq!(after_first.len(), 1);
    // Without --resume the branch exists and the issue is not ready: refused, nothing changed.
    let refused = h
        .compete(agents(both, |_| true), 4, false)
        .await
        .unwrap_err();
    assert!(format!("{refused:#}").contains("is not labelled `ready`"));
    let resumed = h.compete(agents(both, |_| true), 4, true).await.unwrap();
    assert_eq!(resumed.outcome, RunOutcome::Complete);
    assert_eq!(resumed.run_id, first.run_id, "the same run goes on");
    assert_eq!(resumed.rounds[0].phase.as_str(), "replan");
    let all = h.events();
    assert_eq!(&all[..1], &after_first[..], "no event written twice");
    assert!(outcomes(&all)
        .iter()
        .any(|e| e.ends_with(":replan_success")));
}

#[tokio::test]
async fn a_token_cap_aborts_and_escalates_keeping_the_proposals() {
    let h = Harness::new(&format!("{CONFIG}\n[limits]\nmax_tokens = 150\n"));
    let report = h.compete(agents(both, |_| true), 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Aborted);
    let stopped = report.stopped.clone().unwrap();
    assert!(stopped.contains("150"), "{stopped}");
    assert_eq!(report.rounds.len(), 1, "the proposals are kept");
    assert!(h.events().is_empty());
    assert!(h.issue().contains("attention-needed"));
    assert!(h.record().commits.is_empty());
}

#[tokio::test]
async fn no_valid_proposal_goes_to_a_human() {
    let h = Harness::new(CONFIG);
    let mut a = agents(both, |_| true);
    a.bots = vec![
        agent("alpha", |_| Ok("no plan".into())),
        agent("beta", |_| Err("crashed".into())),
    ];
    let report = h.compete(a, 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Escalated);
    assert_eq!(
        report.escalation.as_deref(),
        Some("no bot submitted a valid proposal")
    );
    assert_eq!(report.rounds[0].skipped.len(), 2);
    assert!(h.events().is_empty());
    assert!(h
        .issue()
        .contains("ralph needs a human: no bot submitted a valid proposal."));
}

#[tokio::test]
async fn a_cap_is_checked_before_every_implementation_attempt() {
    // Two proposals (240 tokens) stay under the cap; the first attempt (120 more) reaches it,
    // so the second attempt is never made.
    let config = CONFIG.replace("base_budget_per_bot = 1", "base_budget_per_bot = 2");
    let h = Harness::new(&format!("{config}\n[limits]\nmax_tokens = 300\n"));
    let report = h.compete(agents(both, |_| false), 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Aborted);
    assert!(report.stopped.as_deref().unwrap().contains("300"));
    assert_eq!(report.rounds.len(), 1);
    assert_eq!(
        report.rounds[0].attempts, 1,
        "the cap stopped the second attempt"
    );
    assert!(h.events().is_empty(), "an unfinished round settles nothing");
    assert!(h.issue().contains("attention-needed"));
}

#[tokio::test]
async fn an_implementer_that_writes_into_the_git_directory_fails_its_attempt() {
    let h = Harness::new(CONFIG);
    let mut agents = agents(both, |_| true);
    // Round 1's implementer plants a hook beside its correct change; round 2's does not.
    agents.implementer = agent("implementer", |call: &AgentCall| {
        let good = implementer(|_| true);
        if call.round == 1 {
            let git = call
                .workdir
                .join("../../..")
                .join(crate::workspace::memory::FAKE_GIT_DIR);
            std::fs::create_dir_all(git.join("hooks")).map_err(|e| e.to_string())?;
            std::fs::write(git.join("hooks/pre-push"), "#!/bin/sh\n").map_err(|e| e.to_string())?;
        }
        good(call)
    });
    let report = h.compete(agents, 4, false).await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Complete);
    let phases: Vec<_> = report.rounds.iter().map(|r| r.phase.as_str()).collect();
    assert_eq!(
        phases,
        ["initial", "replan"],
        "the tampering attempt failed"
    );
    assert_eq!(
        report.git_tampering,
        ["the implementer, attempt 1: .git/hooks/pre-push was added"]
    );
    let events = outcomes(&h.events());
    let failed = report.rounds[0].winner_bot.clone().unwrap();
    assert_eq!(events[0], format!("{failed}:failure"), "{events:?}");
    let pr = h.pull_request().expect("the honest replan's pull request");
    assert!(
        pr.contains(
            "restored by ralph:**\n\n- the implementer, attempt 1: .git/hooks/pre-push was added"
        ),
        "{pr}"
    );
}
