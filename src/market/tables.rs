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

/// The parsed contents of `scoring/`.
#[derive(Debug, Clone)]
pub struct Tables {
    /// Default dimension weights (`scoring/weights.toml`).
    pub default_weights: Scores,
    /// Weight deltas per outcome and the accuracy bonus (`scoring/deltas.toml`).
    pub deltas: DeltaTable,
}

/// The weight delta of every outcome (SPEC §8.1).
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
    Ok(Tables {
        default_weights,
        deltas: DeltaTable {
            deltas,
            accuracy_bonus: file.accuracy_bonus,
        },
    })
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
        ];
        for (outcome, delta) in expected {
            assert_eq!(t.deltas.base(outcome), delta, "{outcome}");
        }
        assert_eq!(t.deltas.accuracy_bonus.delta, 0.05);
        assert_eq!(t.deltas.accuracy_bonus.threshold, 0.85);
    }
}
