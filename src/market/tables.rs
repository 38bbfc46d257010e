//! The data tables of `scoring/`, embedded at build time and parsed once.
//!
//! A malformed table is a build defect, not a user error: the unit tests below parse every
//! table, so a bad edit to `scoring/` fails `cargo test` before it can ship.

use super::{Outcome, Scores};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const WEIGHTS_TOML: &str = include_str!("../../scoring/weights.toml");
const DELTAS_TOML: &str = include_str!("../../scoring/deltas.toml");
const PROPOSAL_TOML: &str = include_str!("../../scoring/proposal.toml");
const SPECIALISTS_TOML: &str = include_str!("../../scoring/specialists.toml");
const SEATING_TOML: &str = include_str!("../../scoring/seating.toml");
/// The judge's rubric (`scoring/rubric.md`), given to every judge prompt.
pub const RUBRIC: &str = include_str!("../../scoring/rubric.md");

/// The parsed contents of `scoring/`.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Default dimension weights (`scoring/weights.toml`).
    pub default_weights: Scores,
    /// Weight deltas per outcome and the accuracy bonus (`scoring/deltas.toml`).
    pub deltas: DeltaTable,
    /// Normalisations and thresholds (`scoring/proposal.toml`).
    pub scoring: ScoringParams,
    /// Expected specialists by language and area (`scoring/specialists.toml`).
    pub specialists: Vec<Specialist>,
    /// What the seats of a round are drawn from (`scoring/seating.toml`).
    pub seating: SeatingParams,
}

/// `scoring/seating.toml`: how a bot's record becomes the posterior its seat is drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeatingParams {
    /// A pull request's fate counts as this many rounds.
    pub merge_weight: f64,
    /// The weight of evidence from issues sharing no topic label with the one seated.
    pub other_labels: f64,
    /// The share of its weight an observation keeps for each newer one of the same bot.
    pub memory: f64,
    /// How many of a bot's latest costed proposals give its cost per proposal.
    pub cost_window: usize,
    /// What a merged pull request is worth, in US dollars, unless `[marketplace]
    /// value_per_merge` says.
    pub value_per_merge: f64,
    /// Without `[marketplace] value_per_merge`, once the ledger has enough seated rounds: the
    /// tuned value of a merge is this many times what a merge costs when every bot proposes.
    pub value_multiple: f64,
    /// The chance that the judges pick a failing proposal over one that delivers, until the
    /// ledger's audits measure it.
    pub misjudge: f64,
    /// How many of a bot's latest placings are tested for departing from its record.
    pub drift_window: usize,
    /// How many times likelier the latest placings must be for a bot of unknown chance than
    /// for the bot the record describes, for the record to be set aside.
    pub drift_odds: f64,
    /// After this many seated rounds without a seat, a bot is explored.
    pub stale_after: u32,
    /// A bot whose latest placings are this many times likelier for a bot of unknown chance
    /// than for its record, where they beat it, is tried again before the idle ones.
    pub suspect_odds: f64,
}

/// `scoring/proposal.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoringParams {
    pub spec_alignment: AlignmentParams,
    pub risk: RiskParams,
    pub efficiency: EfficiencyParams,
    pub ranking: RankingParams,
    pub judge: JudgeParams,
    pub similarity: SimilarityParams,
    pub implementation: ImplementationParams,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlignmentParams {
    pub checkboxes: f64,
    pub components: f64,
    pub implicit: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskParams {
    pub files: f64,
    pub files_half: f64,
    pub breaking: f64,
    pub unmitigated_security: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EfficiencyParams {
    pub lines: f64,
    pub lines_half: f64,
    pub files: f64,
    pub files_half: f64,
    pub modules: f64,
    pub modules_half: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RankingParams {
    pub human_review_below: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeParams {
    pub unavailable: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimilarityParams {
    pub shingle_words: usize,
    pub threshold: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImplementationParams {
    pub tests: f64,
    pub coverage: f64,
    pub size: f64,
    pub attempts: f64,
    pub unknown: f64,
}

/// One specialist a proposal may be expected to consult.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Specialist {
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub extensions: Vec<String>,
    #[serde(default)]
    pub path_words: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecialistsFile {
    specialist: Vec<Specialist>,
}

/// The weight delta of every outcome (docs/specification.md §8.1).
#[derive(Debug, Clone)]
pub struct DeltaTable {
    deltas: BTreeMap<Outcome, f64>,
    /// The bonus for a passing winner whose accuracy is above the threshold.
    pub accuracy_bonus: AccuracyBonus,
}

/// Extra delta for an accurate passing winner.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccuracyBonus {
    pub delta: f64,
    /// The bonus applies when accuracy is strictly greater than this.
    pub threshold: f64,
}

impl DeltaTable {
    /// The base delta of an outcome, without any bonus.
    pub fn base(&self, outcome: Outcome) -> f64 {
        self.deltas[&outcome]
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeltasFile {
    deltas: BTreeMap<String, f64>,
    accuracy_bonus: AccuracyBonus,
}

fn parse() -> Result<Tables, String> {
    let default_weights: Scores =
        toml::from_str(WEIGHTS_TOML).map_err(|e| format!("scoring/weights.toml: {e}"))?;
    let file: DeltasFile =
        toml::from_str(DELTAS_TOML).map_err(|e| format!("scoring/deltas.toml: {e}"))?;
    let mut deltas = BTreeMap::new();
    for (word, delta) in file.deltas {
        let outcome = word
            .parse::<Outcome>()
            .map_err(|e| format!("scoring/deltas.toml: {e}"))?;
        deltas.insert(outcome, delta);
    }
    if let Some(missing) = Outcome::ALL.iter().find(|o| !deltas.contains_key(o)) {
        return Err(format!("scoring/deltas.toml: no delta for `{missing}`"));
    }
    let scoring: ScoringParams =
        toml::from_str(PROPOSAL_TOML).map_err(|e| format!("scoring/proposal.toml: {e}"))?;
    check_params(&scoring).map_err(|e| format!("scoring/proposal.toml: {e}"))?;
    let specialists: SpecialistsFile =
        toml::from_str(SPECIALISTS_TOML).map_err(|e| format!("scoring/specialists.toml: {e}"))?;
    let seating: SeatingParams =
        toml::from_str(SEATING_TOML).map_err(|e| format!("scoring/seating.toml: {e}"))?;
    check_seating(&seating).map_err(|e| format!("scoring/seating.toml: {e}"))?;
    Ok(Tables {
        default_weights,
        deltas: DeltaTable {
            deltas,
            accuracy_bonus: file.accuracy_bonus,
        },
        scoring,
        specialists: specialists.specialist,
        seating,
    })
}

/// The ranges that keep a seat's posterior a posterior.
fn check_seating(p: &SeatingParams) -> Result<(), String> {
    if p.merge_weight.is_nan() || p.merge_weight <= 0.0 {
        return Err("`merge_weight` must be positive".into());
    }
    if !(0.0..=1.0).contains(&p.other_labels)
        || p.memory.is_nan()
        || p.memory <= 0.0
        || p.memory > 1.0
    {
        return Err("`other_labels` must be within [0, 1] and `memory` within (0, 1]".into());
    }
    if p.cost_window == 0 {
        return Err("`cost_window` must be at least 1".into());
    }
    if p.drift_window == 0
        || p.drift_odds.is_nan()
        || p.drift_odds <= 1.0
        || p.stale_after == 0
        || p.suspect_odds.is_nan()
        || p.suspect_odds <= 1.0
        || p.suspect_odds > p.drift_odds
    {
        return Err(
            "`drift_window` and `stale_after` must be at least 1, `suspect_odds` more than 1 and at most `drift_odds`".into(),
        );
    }
    if !(0.0..=1.0).contains(&p.misjudge) {
        return Err("`misjudge` must be within [0, 1]".into());
    }
    if !(p.value_per_merge.is_finite() && p.value_per_merge > 0.0) {
        return Err("`value_per_merge` must be a positive number of US dollars".into());
    }
    if !(p.value_multiple.is_finite() && p.value_multiple >= 1.0) {
        return Err(
            "`value_multiple` must be a number of at least 1: the tuned value of a merge is that many times what a merge costs when every bot proposes".into(),
        );
    }
    Ok(())
}

/// The rules a scoring table must keep for every score to stay in [0, 1].
fn check_params(p: &ScoringParams) -> Result<(), String> {
    let sums = [
        (
            "spec_alignment",
            p.spec_alignment.checkboxes + p.spec_alignment.components + p.spec_alignment.implicit,
        ),
        (
            "risk",
            p.risk.files + p.risk.breaking + p.risk.unmitigated_security,
        ),
        (
            "efficiency",
            p.efficiency.lines + p.efficiency.files + p.efficiency.modules,
        ),
        (
            "implementation risk",
            p.implementation.tests + p.implementation.coverage,
        ),
        (
            "implementation efficiency",
            p.implementation.size + p.implementation.attempts,
        ),
    ];
    for (name, sum) in sums {
        if (sum - 1.0).abs() > 1e-9 {
            return Err(format!("the {name} weights sum to {sum}, not 1"));
        }
    }
    let halves = [
        p.risk.files_half,
        p.efficiency.lines_half,
        p.efficiency.files_half,
        p.efficiency.modules_half,
    ];
    if halves.iter().any(|h| *h <= 0.0) {
        return Err("every `*_half` must be positive".into());
    }
    if p.similarity.shingle_words == 0 {
        return Err("`similarity.shingle_words` must be at least 1".into());
    }
    Ok(())
}

/// The embedded tables. Panics only if `scoring/` was edited into an invalid state, which the
/// unit tests of this module catch at build time.
pub fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| parse().unwrap_or_else(|e| panic!("embedded scoring table: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_tables_parse_and_match_the_spec() {
        let t = parse().unwrap();
        assert!((t.default_weights.sum() - 1.0).abs() < 1e-9);
        assert_eq!(t.default_weights.spec_alignment, 0.30);
        assert_eq!(t.default_weights.specialist_validation, 0.05);
        let expected = [
            (Outcome::Success, 0.10),
            (Outcome::NotSelected, -0.02),
            (Outcome::Failure, -0.15),
            (Outcome::ReplanSuccess, 0.12),
            (Outcome::ReplanFailure, -0.20),
            (Outcome::CollectiveFailure, -0.05),
            (Outcome::ResubmittedSame, -0.05),
            (Outcome::Merged, 0.15),
            (Outcome::ClosedUnmerged, -0.10),
            (Outcome::Reverted, -0.25),
            (Outcome::RevisionSuccess, 0.02),
            (Outcome::RevisionFailure, -0.05),
        ];
        for (outcome, delta) in expected {
            assert_eq!(t.deltas.base(outcome), delta, "{outcome}");
        }
        assert_eq!(t.deltas.accuracy_bonus.delta, 0.05);
        assert_eq!(t.deltas.accuracy_bonus.threshold, 0.85);
        assert_eq!(t.scoring.ranking.human_review_below, 0.5);
        assert_eq!(t.scoring.similarity.threshold, 0.70);
        assert_eq!(t.scoring.similarity.shingle_words, 5);
        assert!(t.specialists.iter().any(|s| s.name == "rust"));
        assert!(RUBRIC.contains("technical_quality") && RUBRIC.contains("innovation"));
        assert_eq!(t.seating.merge_weight, 2.0);
        assert_eq!((t.seating.other_labels, t.seating.memory), (0.5, 0.98));
        assert_eq!(t.seating.cost_window, 20);
        assert_eq!(t.seating.value_multiple, 5.0);
    }
}
