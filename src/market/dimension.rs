//! The six scoring dimensions (docs/specification.md §7) and a score per dimension.

use serde::{Deserialize, Serialize};

/// One of the six dimensions a proposal or an implementation is scored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    SpecAlignment,
    TechnicalQuality,
    Innovation,
    Risk,
    Efficiency,
    SpecialistValidation,
}

impl Dimension {
    /// The six dimensions in the order of docs/specification.md §7.
    pub const ALL: [Dimension; 6] = [
        Dimension::SpecAlignment,
        Dimension::TechnicalQuality,
        Dimension::Innovation,
        Dimension::Risk,
        Dimension::Efficiency,
        Dimension::SpecialistValidation,
    ];

    /// The dimension whose key is `key`.
    pub fn from_key(key: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.key() == key)
    }

    /// The keys of all six dimensions, comma-separated, for messages.
    pub fn key_list() -> String {
        Dimension::ALL.map(Dimension::key).join(", ")
    }

    /// The key used in configuration, JSON and `scoring/`.
    pub fn key(self) -> &'static str {
        match self {
            Dimension::SpecAlignment => "spec_alignment",
            Dimension::TechnicalQuality => "technical_quality",
            Dimension::Innovation => "innovation",
            Dimension::Risk => "risk",
            Dimension::Efficiency => "efficiency",
            Dimension::SpecialistValidation => "specialist_validation",
        }
    }
}

/// A value per dimension: scores in [0, 1], or the dimension weights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scores {
    pub spec_alignment: f64,
    pub technical_quality: f64,
    pub innovation: f64,
    pub risk: f64,
    pub efficiency: f64,
    pub specialist_validation: f64,
}

impl Scores {
    /// The value of one dimension.
    pub fn get(&self, dimension: Dimension) -> f64 {
        match dimension {
            Dimension::SpecAlignment => self.spec_alignment,
            Dimension::TechnicalQuality => self.technical_quality,
            Dimension::Innovation => self.innovation,
            Dimension::Risk => self.risk,
            Dimension::Efficiency => self.efficiency,
            Dimension::SpecialistValidation => self.specialist_validation,
        }
    }

    /// Sets the value of one dimension.
    pub fn set(&mut self, dimension: Dimension, value: f64) {
        let slot = match dimension {
            Dimension::SpecAlignment => &mut self.spec_alignment,
            Dimension::TechnicalQuality => &mut self.technical_quality,
            Dimension::Innovation => &mut self.innovation,
            Dimension::Risk => &mut self.risk,
            Dimension::Efficiency => &mut self.efficiency,
            Dimension::SpecialistValidation => &mut self.specialist_validation,
        };
        *slot = value;
    }

    /// Sum over the six dimensions.
    pub fn sum(&self) -> f64 {
        Dimension::ALL.iter().map(|d| self.get(*d)).sum()
    }

    /// `Σ weight × score`: the total score of these scores under `weights`.
    pub fn weighted_total(&self, weights: &Scores) -> f64 {
        Dimension::ALL
            .iter()
            .map(|d| self.get(*d) * weights.get(*d))
            .sum()
    }

    /// The first dimension whose value is outside [0, 1] or not finite, with that value.
    pub fn first_out_of_unit_range(&self) -> Option<(Dimension, f64)> {
        Dimension::ALL
            .into_iter()
            .map(|d| (d, self.get(d)))
            .find(|(_, v)| !(0.0..=1.0).contains(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(v: f64) -> Scores {
        let mut s = Scores {
            spec_alignment: 0.0,
            technical_quality: 0.0,
            innovation: 0.0,
            risk: 0.0,
            efficiency: 0.0,
            specialist_validation: 0.0,
        };
        for d in Dimension::ALL {
            s.set(d, v);
        }
        s
    }

    #[test]
    fn get_and_set_address_the_same_field() {
        let mut s = uniform(0.0);
        for (i, d) in Dimension::ALL.into_iter().enumerate() {
            s.set(d, i as f64 / 10.0);
        }
        for (i, d) in Dimension::ALL.into_iter().enumerate() {
            assert_eq!(s.get(d), i as f64 / 10.0, "{}", d.key());
        }
        let json = serde_json::to_value(s).unwrap();
        for d in Dimension::ALL {
            assert_eq!(json[d.key()].as_f64().unwrap(), s.get(d));
        }
    }

    #[test]
    fn weighted_total_and_range_check() {
        let weights = crate::market::tables().default_weights;
        assert!((uniform(1.0).weighted_total(&weights) - 1.0).abs() < 1e-12);
        assert!((uniform(0.5).weighted_total(&weights) - 0.5).abs() < 1e-12);
        let mut s = uniform(0.5);
        assert_eq!(s.first_out_of_unit_range(), None);
        s.set(Dimension::Risk, 1.5);
        assert_eq!(s.first_out_of_unit_range(), Some((Dimension::Risk, 1.5)));
        s.set(Dimension::Risk, f64::NAN);
        assert!(s.first_out_of_unit_range().is_some());
    }
}
