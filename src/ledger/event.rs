//! The event schema (docs/specification.md §8.2): one JSON file per outcome per bot.
//!
//! The prototype's fields are all kept with their names; the fields ralph added are optional
//! so that the prototype's files (schema version 0, no `schema_version` key) still load.

use crate::market::seating::Seating;
use crate::market::{Outcome, Phase, Scores};
use chrono::{DateTime, SubsecRound, Utc};
use serde::{Deserialize, Serialize};

/// The schema version ralph writes. Files without the key are the prototype's (version 0).
pub const SCHEMA_VERSION: u32 = 1;

/// One ledger event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// `0` for the prototype's files, [`SCHEMA_VERSION`] for ralph's.
    #[serde(default)]
    pub schema_version: u32,
    pub timestamp: DateTime<Utc>,
    pub issue_number: u64,
    pub bot_id: String,
    pub outcome: Outcome,
    #[serde(default)]
    pub proposal_score: Option<f64>,
    #[serde(default)]
    pub implementation_score: Option<f64>,
    #[serde(default)]
    pub accuracy: Option<f64>,
    pub weight_delta: f64,
    /// The prototype's iteration counter: the round the event belongs to.
    #[serde(default)]
    pub iteration_count: Option<u32>,
    #[serde(default)]
    pub metrics: Option<Metrics>,
    /// The competition run that wrote the event.
    #[serde(default)]
    pub run_id: Option<String>,
    /// 1-based round number within the run.
    #[serde(default)]
    pub round: Option<u32>,
    #[serde(default)]
    pub phase: Option<Phase>,
    /// The bot's proposal rank in the round (1 = winner).
    #[serde(default)]
    pub rank: Option<u32>,
    #[serde(default)]
    pub scores: Option<EventScores>,
    /// The bot's own estimate that its proposal would pass.
    #[serde(default)]
    pub success_probability: Option<f64>,
    #[serde(default)]
    pub tokens: Option<Tokens>,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// The round's order check (`[arbiter] order_swaps`), with this bot's proposal's
    /// disagreement between the two readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_order: Option<JudgeOrder>,
    /// On the winner's event of an audited round: the runner-up's implementation, never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditOutcome>,
    /// What happened after the pull request (`ralph follow`): which pull request, and for a
    /// merge how long it took and how many revision rounds it had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRequestOutcome>,
    /// With `[marketplace] seats`: the round's draw — who was seated and why, from what
    /// posteriors, samples and costs, under which seed, labels and cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<Seating>,
}

/// The pull request an after-the-pull-request event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestOutcome {
    pub number: u64,
    /// From opening to merging, on a `merged` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_to_merge: Option<u64>,
    /// Revision rounds the pull request had when it settled (on `merged`/`closed_unmerged`),
    /// or the round's number (on `revision_success`/`revision_failure`).
    #[serde(default)]
    pub revisions: u32,
}

/// How the judges' reading order bore on the round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JudgeOrder {
    /// Whether the forward and the reversed readings had different winners.
    pub top_flipped: bool,
    /// How far this bot's proposal's scores moved between the readings (0 to 1).
    #[serde(default)]
    pub disagreement: Option<f64>,
}

/// The runner-up's audit: whose proposal, its scores, whether its implementation passed, and
/// what that cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditOutcome {
    /// The runner-up's bot.
    pub runner_up: String,
    /// The runner-up's proposal scores (what `ralph tune` learns from).
    #[serde(default)]
    pub proposal_scores: Option<Scores>,
    pub passed: bool,
    pub attempts: u32,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub tokens: Option<Tokens>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// Verification metrics of the round (the prototype's `metrics` object).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default)]
    pub tests_passed: Option<bool>,
    #[serde(default)]
    pub code_quality_passed: Option<bool>,
    #[serde(default)]
    pub coverage_delta: Option<f64>,
    #[serde(default)]
    pub lines_changed: Option<u64>,
    #[serde(default)]
    pub files_affected: Option<u64>,
}

/// Per-dimension scores of the bot's proposal and, when it was implemented, of the
/// implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventScores {
    pub proposal: Scores,
    #[serde(default)]
    pub implementation: Option<Scores>,
}

/// Tokens used by the bot's calls in the round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// The rule for bot ids: `[a-z0-9_-]{1,64}` (docs/specification.md §3). Event files written by the
/// prototype follow it too.
pub fn valid_bot_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl Event {
    /// A new event stamped now (to the microsecond, the resolution of file names), with every
    /// optional field empty.
    pub fn new(issue_number: u64, bot_id: &str, outcome: Outcome, weight_delta: f64) -> Event {
        Event {
            schema_version: SCHEMA_VERSION,
            timestamp: Utc::now().trunc_subsecs(6),
            issue_number,
            bot_id: bot_id.to_owned(),
            outcome,
            proposal_score: None,
            implementation_score: None,
            accuracy: None,
            weight_delta,
            iteration_count: None,
            metrics: None,
            run_id: None,
            round: None,
            phase: None,
            rank: None,
            scores: None,
            success_probability: None,
            tokens: None,
            cost_usd: None,
            duration_ms: None,
            judge_order: None,
            pull_request: None,
            audit: None,
            seating: None,
        }
    }

    /// The file name of docs/specification.md §8.2: `<timestamp>-<bot_id>-<outcome>.json`, with the
    /// timestamp as `2026-01-29T10-15-00-123456Z` (no colons, so it is valid on every file system).
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}-{}.json",
            self.timestamp.format("%Y-%m-%dT%H-%M-%S-%6fZ"),
            self.bot_id,
            self.outcome
        )
    }

    /// Checks everything a well-formed event must satisfy, including that `file_name` (the
    /// name it was loaded from) ends with its bot and outcome. Returns the first problem.
    pub fn validate(&self, file_name: &str) -> Result<(), String> {
        self.check_identity(file_name)?;
        self.check_ranges()?;
        self.check_scores()?;
        if let Some(cost) = self.cost_usd {
            if !cost.is_finite() || cost < 0.0 {
                return Err(format!(
                    "cost_usd {} is negative or not a number",
                    compact(cost)
                ));
            }
        }
        if self.round == Some(0) {
            return Err("round is 1-based; 0 is not a round".to_owned());
        }
        if let Some(seating) = &self.seating {
            check_seating(seating)?;
        }
        Ok(())
    }

    /// Whether this ralph can read the event, its bot id is one, and `file_name` ends with its
    /// bot and outcome.
    fn check_identity(&self, file_name: &str) -> Result<(), String> {
        if self.schema_version > SCHEMA_VERSION {
            return Err(format!(
                "schema_version {} is newer than this ralph understands ({SCHEMA_VERSION}); upgrade ralph",
                self.schema_version
            ));
        }
        if !valid_bot_id(&self.bot_id) {
            return Err(format!(
                "bot_id {:?} is not a valid bot id ([a-z0-9_-], 1 to 64 characters)",
                self.bot_id
            ));
        }
        // `<anything>-<bot_id>-<outcome>.json`, checked without building the suffix: this runs
        // for every event of every cold fold.
        let matches = file_name
            .strip_suffix(".json")
            .and_then(|s| s.strip_suffix(self.outcome.as_str()))
            .and_then(|s| s.strip_suffix('-'))
            .and_then(|s| s.strip_suffix(self.bot_id.as_str()))
            .is_some_and(|s| s.ends_with('-'));
        if !matches {
            return Err(format!(
                "file name does not match its content: expected a name ending in `-{}-{}.json`",
                self.bot_id, self.outcome
            ));
        }
        Ok(())
    }

    /// Whether the weight delta is within [-1, 1] and the scores, accuracy and success
    /// probability within [0, 1].
    fn check_ranges(&self) -> Result<(), String> {
        if !self.weight_delta.is_finite() || self.weight_delta.abs() > 1.0 {
            return Err(format!(
                "weight_delta {} is outside [-1, 1]",
                compact(self.weight_delta)
            ));
        }
        let unit = [
            ("proposal_score", self.proposal_score),
            ("implementation_score", self.implementation_score),
            ("accuracy", self.accuracy),
            ("success_probability", self.success_probability),
        ];
        for (name, value) in unit {
            if let Some(v) = value {
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!("{name} {} is outside [0, 1]", compact(v)));
                }
            }
        }
        Ok(())
    }

    /// Whether every dimension of the proposal's, the implementation's and the audited
    /// proposal's scores is within [0, 1].
    fn check_scores(&self) -> Result<(), String> {
        let Some(scores) = &self.scores else {
            return Ok(());
        };
        let sets = [
            ("proposal", Some(&scores.proposal)),
            ("implementation", scores.implementation.as_ref()),
            (
                "audit.proposal",
                self.audit.as_ref().and_then(|a| a.proposal_scores.as_ref()),
            ),
        ];
        for (which, set) in sets {
            if let Some((dimension, v)) = set.and_then(Scores::first_out_of_unit_range) {
                return Err(format!(
                    "scores.{which}.{} {} is outside [0, 1]",
                    dimension.key(),
                    compact(v)
                ));
            }
        }
        Ok(())
    }

    /// The round this event belongs to: `round`, else the prototype's `iteration_count`.
    pub fn round_number(&self) -> Option<u32> {
        self.round.or(self.iteration_count)
    }
}

/// The rules a recorded seating keeps: bot ids that are bot ids, labels without control
/// characters, posteriors, samples and costs that are numbers in their range.
fn check_seating(s: &Seating) -> Result<(), String> {
    if let Some(label) = s.labels.iter().find(|l| l.chars().any(char::is_control)) {
        return Err(format!(
            "seating.labels has {label:?}, with a control character"
        ));
    }
    if let Some(v) = &s.value_tuned {
        let numbers = [
            v.value_usd,
            v.multiple,
            v.merges,
            v.cost_usd,
            v.every_bot_merges,
            v.every_bot_cost_usd,
        ];
        if !numbers.iter().all(|x| x.is_finite() && *x >= 0.0) {
            return Err("seating.value_tuned has a negative number or none".to_owned());
        }
    }
    for b in &s.bots {
        if !valid_bot_id(&b.bot_id) {
            return Err(format!(
                "seating.bots names {:?}, not a valid bot id",
                b.bot_id
            ));
        }
        let unit = b.sample.is_none_or(|x| (0.0..=1.0).contains(&x));
        let cost = b.cost_usd.is_none_or(|c| c.is_finite() && c >= 0.0);
        let posterior = [b.alpha, b.beta].iter().all(|v| v.is_finite() && *v > 0.0);
        if !(posterior && unit && cost) {
            return Err(format!(
                "seating of {}: its posterior, sample or cost is out of range",
                b.bot_id
            ));
        }
    }
    Ok(())
}

/// A number for a message: as written for ordinary magnitudes, in exponent form for huge or
/// tiny ones (`1e308`, not 309 digits).
fn compact(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Parses and validates one event file's bytes. `file_name` is the name it was read from.
pub fn parse_event(file_name: &str, bytes: &[u8]) -> Result<Event, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("file is empty".to_owned());
    }
    // Text that is UTF-8 as a whole (ralph's files always are) is parsed as a `str`, which
    // spares serde_json a UTF-8 check of every string in it; anything else gets `from_slice`
    // and its error, which says where.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    };
    let event: Event = parsed.map_err(|e| format!("invalid JSON: {e}"))?;
    event.validate(file_name)?;
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTOTYPE: &str = r#"{
      "timestamp": "2026-01-29T10:30:00Z",
      "issue_number": 123,
      "bot_id": "smart_bot_2",
      "outcome": "success",
      "proposal_score": 0.87,
      "implementation_score": 0.85,
      "accuracy": 0.98,
      "weight_delta": 0.15,
      "iteration_count": 3,
      "metrics": {
        "tests_passed": true,
        "code_quality_passed": true,
        "coverage_delta": 2.5,
        "lines_changed": 45,
        "files_affected": 3
      }
    }"#;

    #[test]
    fn numbers_in_reasons_are_compact() {
        assert_eq!(compact(1e308), "1e308");
        assert_eq!(compact(-2.5e-9), "-2.5e-9");
        assert_eq!(compact(0.15), "0.15");
        assert_eq!(compact(1.5), "1.5");
        let e = PROTOTYPE.replace("\"weight_delta\": 0.15", "\"weight_delta\": 1e308");
        let err = parse_event(
            "2026-01-29T10:30:00Z-smart_bot_2-success.json",
            e.as_bytes(),
        )
        .unwrap_err();
        assert_eq!(err, "weight_delta 1e308 is outside [-1, 1]");
    }

    #[test]
    fn prototype_event_loads_as_schema_zero() {
        let e = parse_event(
            "2026-01-29T10:30:00Z-smart_bot_2-success.json",
            PROTOTYPE.as_bytes(),
        )
        .unwrap();
        assert_eq!(e.schema_version, 0);
        assert_eq!(e.bot_id, "smart_bot_2");
        assert_eq!(e.outcome, Outcome::Success);
        assert_eq!(e.weight_delta, 0.15);
        assert_eq!(e.round_number(), Some(3));
        assert_eq!(e.metrics.unwrap().lines_changed, Some(45));
    }

    #[test]
    fn file_name_follows_the_spec_and_round_trips() {
        let mut e = Event::new(7, "smart_bot_1", Outcome::ReplanFailure, -0.2);
        e.timestamp = "2026-01-29T10:15:00.123456Z".parse().unwrap();
        assert_eq!(
            e.file_name(),
            "2026-01-29T10-15-00-123456Z-smart_bot_1-replan_failure.json"
        );
        let json = serde_json::to_vec(&e).unwrap();
        assert_eq!(parse_event(&e.file_name(), &json).unwrap(), e);
    }

    #[test]
    fn invalid_events_are_described() {
        let cases: &[(&str, &str, &str)] = &[
            ("x-smart_bot_2-success.json", "", "empty"),
            ("x-smart_bot_2-success.json", "{not json", "invalid JSON"),
            (
                "x-smart_bot_2-success.json",
                r#"{"bot_id":"smart_bot_2"}"#,
                "missing field",
            ),
            ("x-smart_bot_9-success.json", PROTOTYPE, "does not match"),
            (
                "x-smart_bot_2-success.json",
                &PROTOTYPE.replace("0.98", "1.7"),
                "accuracy 1.7 is outside",
            ),
            (
                "x-smart_bot_2-success.json",
                &PROTOTYPE.replace("\"success\"", "\"won\""),
                "unknown variant",
            ),
            (
                "x-Smart Bot-success.json",
                &PROTOTYPE.replace("smart_bot_2", "Smart Bot"),
                "not a valid bot id",
            ),
            (
                "x-smart_bot_2-success.json",
                &PROTOTYPE.replace("\"timestamp\"", "\"schema_version\": 9, \"timestamp\""),
                "upgrade ralph",
            ),
            (
                "x-smart_bot_2-success.json",
                &PROTOTYPE.replace("0.15", "4.0"),
                "weight_delta",
            ),
        ];
        for (name, body, needle) in cases {
            let err = parse_event(name, body.as_bytes()).unwrap_err();
            assert!(
                err.contains(needle),
                "{name}: {err:?} should mention {needle:?}"
            );
        }
    }

    #[test]
    fn the_name_must_end_with_dash_bot_dash_outcome() {
        let e = parse_event("x-smart_bot_2-success.json", PROTOTYPE.as_bytes()).unwrap();
        for (name, ok) in [
            ("2026-01-29T10:30:00Z-smart_bot_2-success.json", true),
            ("--smart_bot_2-success.json", true),
            ("-smart_bot_2-success.json", true),
            ("smart_bot_2-success.json", false),
            ("x-not_smart_bot_2-success.json", false),
            ("x-not-smart_bot_2-success.json", true),
            ("x-bot_2-success.json", false),
            ("x-smart_bot_2-replan_success.json", false),
            ("x-smart_bot_2_success.json", false),
            ("x-smart_bot_2-success.json.bak", false),
            ("x-smart_bot_2-success.JSON", false),
        ] {
            // The rule as it reads: the name ends in `-<bot_id>-<outcome>.json`.
            assert_eq!(name.ends_with("-smart_bot_2-success.json"), ok, "{name}");
            assert_eq!(e.validate(name).is_ok(), ok, "{name}");
        }
    }

    #[test]
    fn a_seating_is_checked_like_the_rest() {
        use crate::market::seating::value::ValueFit;
        let mut e = parse_event("x-smart_bot_2-success.json", PROTOTYPE.as_bytes()).unwrap();
        e.seating = Some(crate::fixtures::seating(
            &["smart_bot_2", "smart_bot_3"],
            &["smart_bot_2"],
            &["bug"],
            1,
        ));
        let name = "x-smart_bot_2-success.json";
        let json = serde_json::to_vec(&e).unwrap();
        assert_eq!(parse_event(name, &json).unwrap(), e);
        let bad = |edit: &dyn Fn(&mut Seating)| {
            let mut e = e.clone();
            edit(e.seating.as_mut().unwrap());
            parse_event(name, &serde_json::to_vec(&e).unwrap()).unwrap_err()
        };
        assert!(bad(&|s| s.bots[0].bot_id = "Bad Bot".into()).contains("not a valid bot id"));
        assert!(bad(&|s| s.labels.push("a\u{1b}[31m".into())).contains("control character"));
        assert!(bad(&|s| s.bots[0].sample = Some(1.5)).contains("out of range"));
        assert!(bad(&|s| s.bots[0].cost_usd = Some(-1.0)).contains("out of range"));
        let tuned = crate::market::seating::value::ValueFit {
            rounds: 30,
            value_usd: 12.0,
            multiple: 5.0,
            merges: 10.0,
            cost_usd: 5.0,
            every_bot_merges: 10.0,
            every_bot_cost_usd: 24.0,
        };
        let mut with = e.clone();
        with.seating.as_mut().unwrap().value_tuned = Some(tuned);
        assert_eq!(
            parse_event(name, &serde_json::to_vec(&with).unwrap()).unwrap(),
            with
        );
        assert!(bad(&|s| s.value_tuned = Some(ValueFit {
            value_usd: -3.0,
            ..tuned
        }))
        .contains("value_tuned has a negative number"));
    }

    #[test]
    fn bot_id_rule() {
        assert!(valid_bot_id("smart_bot_1"));
        assert!(valid_bot_id("claude-opus-4"));
        assert!(!valid_bot_id(""));
        assert!(!valid_bot_id("Bot"));
        assert!(!valid_bot_id("a/b"));
        assert!(!valid_bot_id(&"a".repeat(65)));
    }
}
