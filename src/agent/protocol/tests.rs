//! Tests of the answer protocol: extraction of the JSON answer, validation per role, the
//! repair retry, and how failures are reported.

use super::*;
use crate::agent::{Phase, Role};
use async_trait::async_trait;
use std::sync::Mutex;

fn proposal_json(path: &str, ids: &[&str]) -> String {
    serde_json::json!({
        "approach_summary": "Add a flag",
        "pseudo_code": "if flag { notify() }",
        "files_affected": [{"path": path, "change_type": "modify", "description": "d"}],
        "estimated_complexity": {"lines_of_code": 20, "files": 1, "modules": 1, "difficulty": "low"},
        "risk_assessment": {"breaking_changes": false, "security_critical": false,
                            "deployment_impact": "none", "overall_risk": "low", "mitigation": "m"},
        "spec_alignment": {"checkboxes_addressed": ids, "components_addressed": [],
                           "implicit_requirements_addressed": [], "reasoning": "r"},
        "specialist_consultations": [],
        "innovation": "none",
        "success_probability": 0.7
    })
    .to_string()
}

fn ctx() -> AnswerContext {
    AnswerContext {
        requirement_ids: ["req_1", "req_2", "req_implicit_1"]
            .map(String::from)
            .into(),
        ..AnswerContext::default()
    }
}

#[test]
fn objects_are_found_bare_fenced_and_among_chatter() {
    let cases: &[(&str, usize)] = &[
        ("{\"a\":1}", 1),
        (
            "Sure! Here it is:\n```json\n{\"a\": {\"nested\": [1, 2]}}\n```\nDone.",
            1,
        ),
        ("first {\"a\":1} then {\"b\":2}", 2),
        ("braces in strings {\"t\": \"a } b { c\"} ok", 1),
        ("{ broken json ... } and then {\"ok\": true}", 1),
        ("no json at all", 0),
        ("[1, 2, 3] arrays are not answers", 0),
        ("{{{{{{", 0),
    ];
    for (text, n) in cases {
        assert_eq!(json_objects(text).len(), *n, "{text}");
    }
    // Nested objects are not listed on their own.
    let found = json_objects("{\"outer\": {\"inner\": 1}}");
    assert_eq!(found.len(), 1);
    assert!(found[0].get("outer").is_some());
}

#[test]
fn the_last_valid_answer_wins() {
    let first = proposal_json("src/a.rs", &["req_1"]);
    let second = proposal_json("src/b.rs", &["req_2"]);
    let text = format!(
        "Draft:\n{first}\nFinal:\n```json\n{second}\n```\n{{\"note\": \"not a proposal\"}}"
    );
    let p: Proposal = parse_answer(&text, &ctx()).unwrap();
    assert_eq!(p.files_affected[0].path, "src/b.rs");
    // An invalid last one falls back to the valid earlier one.
    let bad = proposal_json("/etc/passwd", &["req_1"]);
    let p: Proposal = parse_answer(&format!("{first}\n{bad}"), &ctx()).unwrap();
    assert_eq!(p.files_affected[0].path, "src/a.rs");
}

#[test]
fn proposals_are_checked() {
    for (path, want) in [
        ("/etc/passwd", "relative"),
        ("../outside.rs", "relative"),
        ("src/../../x", "relative"),
        ("C:\\x.rs", "relative"),
        ("~/x", "relative"),
    ] {
        let err = parse_answer::<Proposal>(&proposal_json(path, &[]), &ctx()).unwrap_err();
        assert!(err.contains(want), "{path}: {err}");
    }
    let mut v: Value = serde_json::from_str(&proposal_json("a.rs", &[])).unwrap();
    v["success_probability"] = 1.5.into();
    let err = parse_answer::<Proposal>(&v.to_string(), &ctx()).unwrap_err();
    assert!(err.contains("success_probability"), "{err}");
    v["success_probability"] = 0.5.into();
    v["risk_assessment"]["overall_risk"] = "extreme".into();
    let err = parse_answer::<Proposal>(&v.to_string(), &ctx()).unwrap_err();
    assert!(err.contains("overall_risk"), "{err}");
    let err = parse_answer::<Proposal>("{\"approach_summary\": \"x\"}", &ctx()).unwrap_err();
    assert!(err.contains("missing field"), "{err}");
}

#[test]
fn unknown_requirement_ids_are_dropped_with_a_warning() {
    let c = ctx();
    let p: Proposal = parse_answer(&proposal_json("a.rs", &["req_1", "req_99"]), &c).unwrap();
    assert_eq!(p.spec_alignment.checkboxes_addressed, ["req_1"]);
    assert!(c.take_warnings()[0].contains("req_99"));
}

#[test]
fn judge_answers_must_score_each_proposal_once() {
    let c = AnswerContext {
        proposal_ids: ["proposal_1", "proposal_2"].map(String::from).into(),
        ..AnswerContext::default()
    };
    let score = |id: &str, q: f64| {
        serde_json::json!({"proposal_id": id, "technical_quality": q, "technical_quality_reasoning": "r",
                           "innovation": 0.5, "innovation_reasoning": "r"})
    };
    let ok = serde_json::json!({"scores": [score("proposal_1", 0.8), score("proposal_2", 0.6)]});
    assert!(parse_answer::<JudgeAnswer>(&ok.to_string(), &c).is_ok());
    for (bad, want) in [
        (
            serde_json::json!({"scores": [score("proposal_1", 0.8)]}),
            "no score",
        ),
        (
            serde_json::json!({"scores": [score("proposal_1", 0.8), score("proposal_1", 0.8), score("proposal_2", 0.1)]}),
            "twice",
        ),
        (
            serde_json::json!({"scores": [score("proposal_1", 2.0), score("proposal_2", 0.1)]}),
            "between 0 and 1",
        ),
        (
            serde_json::json!({"scores": [score("proposal_9", 0.5), score("proposal_2", 0.1)]}),
            "not one of",
        ),
    ] {
        let err = parse_answer::<JudgeAnswer>(&bad.to_string(), &c).unwrap_err();
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn implement_and_verify_answers() {
    let c = ctx();
    let a: ImplementAnswer = parse_answer(
        r#"{"summary":"done","checkboxes_completed":["req_1","req_x"]}"#,
        &c,
    )
    .unwrap();
    assert_eq!(a.checkboxes_completed, ["req_1"]);
    let v: VerifyAnswer = parse_answer(
        r#"{"satisfied":[{"id":"req_1","evidence":"test passes"}],"unsatisfied":[{"id":"req_2","reason":"missing"}]}"#,
        &c,
    )
    .unwrap();
    assert_eq!(v.satisfied[0].id, "req_1");
    let err = parse_answer::<VerifyAnswer>(
        r#"{"satisfied":[{"id":"req_1"}],"unsatisfied":[{"id":"req_1"}]}"#,
        &c,
    )
    .unwrap_err();
    assert!(err.contains("both"), "{err}");
}

/// A backend answering from a script, recording the prompts it got.
struct Scripted {
    answers: Mutex<Vec<String>>,
    prompts: Mutex<Vec<(u32, String)>>,
}

#[async_trait]
impl Backend for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    async fn call(&self, call: &AgentCall) -> Result<AgentReply, AgentError> {
        self.prompts
            .lock()
            .unwrap()
            .push((call.attempt, call.prompt.clone()));
        let text = self.answers.lock().unwrap().remove(0);
        Ok(AgentReply {
            text,
            usage: Usage {
                input_tokens: 100,
                cached_input_tokens: 0,
                output_tokens: 10,
                cost_usd: Some(0.01),
            },
            duration: Duration::from_millis(5),
            session_id: None,
            ..AgentReply::default()
        })
    }
}

fn call() -> AgentCall {
    AgentCall {
        role: Role::Propose,
        prompt: "PROMPT".into(),
        workdir: ".".into(),
        bot_id: Some("bot".into()),
        issue: 1,
        round: 1,
        phase: Phase::Initial,
        timeout: Duration::from_secs(5),
        attempt: 0,
        speaker: None,
        variant: None,
        activity: None,
    }
}

#[tokio::test]
async fn an_invalid_answer_gets_one_repair_retry_with_the_error() {
    let b = Scripted {
        answers: Mutex::new(vec![
            "I think we should do it.".into(),
            format!(
                "Sorry:\n```json\n{}\n```",
                proposal_json("a.rs", &["req_1"])
            ),
        ]),
        prompts: Mutex::new(vec![]),
    };
    let asked: Asked<Proposal> = ask(&b, &call(), &ctx()).await.unwrap();
    assert!(asked.repaired);
    assert_eq!(asked.usage.input_tokens, 200);
    assert_eq!(asked.usage.cost_usd, Some(0.02));
    let prompts = b.prompts.lock().unwrap();
    assert_eq!(prompts[1].0, 1, "the retry is attempt 1");
    assert!(prompts[1].1.starts_with("PROMPT"));
    assert!(prompts[1].1.contains("contains no JSON object"));
}

#[tokio::test]
async fn two_invalid_answers_fail_clearly() {
    let b = Scripted {
        answers: Mutex::new(vec!["garbage".into(), "{\"still\": \"wrong\"}".into()]),
        prompts: Mutex::new(vec![]),
    };
    let err = ask::<Proposal>(&b, &call(), &ctx()).await.unwrap_err();
    assert_eq!(err.kind(), "invalid answer");
    assert!(
        err.to_string()
            .contains("no valid propose answer after a repair retry"),
        "{err}"
    );
}

#[test]
fn safe_paths() {
    for ok in ["a.rs", "src/lib.rs", "./src/x.rs", "dir/sub/file.txt"] {
        assert!(safe_relative_path(ok), "{ok}");
    }
    for bad in ["", "/abs", "..", "a/../../b", "\\\\server\\x", "c:x", "~/x"] {
        assert!(!safe_relative_path(bad), "{bad}");
    }
}

#[test]
fn review_answers_need_both_scores_in_range_with_reasons() {
    let c = AnswerContext::default();
    let ok = r#"Looks fine.
```json
{"innovation": 0.7, "innovation_reasoning": "one regex instead of a parser", "concerns_addressed": 1.0, "concerns_reasoning": "the timeout concern is handled in fetch()"}
```"#;
    let a = parse_answer::<ReviewAnswer>(ok, &c).unwrap();
    assert_eq!((a.innovation, a.concerns_addressed), (0.7, 1.0));
    for (bad, want) in [
        (
            r#"{"innovation": 1.5, "innovation_reasoning": "r", "concerns_addressed": 1, "concerns_reasoning": "r"}"#,
            "between 0 and 1",
        ),
        (
            r#"{"innovation": 0.5, "innovation_reasoning": " ", "concerns_addressed": 1, "concerns_reasoning": "r"}"#,
            "innovation_reasoning",
        ),
        (r#"{"innovation": 0.5}"#, "missing field"),
    ] {
        let err = parse_answer::<ReviewAnswer>(bad, &c)
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{bad}: {err}");
    }
}
