//! The marketplace's pure logic: the proposal model, blinding, the six-dimension scoring,
//! ranking, the implementation score, the similarity of resubmissions, the outcome rules
//! that turn a round into weight deltas, and who proposes in a round (`seating`) — with the
//! data tables from `scoring/` that give them their numbers. Nothing here performs I/O; the tables are embedded in the binary at build
//! time so every ranking and weight change can be explained from the files in `scoring/`
//! alone.

mod dimension;
mod implementation;
pub mod order;
mod outcome;
pub mod proposal;
mod ranking;
mod rules;
pub mod scoring;
pub mod seating;
mod similarity;
mod tables;
pub mod tune;

pub use dimension::{Dimension, Scores};
pub use implementation::{accuracy, score_implementation, ImplementationScore, Review, Verified};
pub use outcome::Outcome;
pub use proposal::{
    safe_relative_path, Complexity, Consultation, FileChange, Proposal, RiskAssessment,
    SpecAlignment,
};
pub use ranking::{blind_label, blind_order, rank, Entry, Ranking};
pub use rules::{awards, Award, RoundFacts};
pub use scoring::{score_proposal, ProposalScore, Subjective, Targets};
pub use similarity::{jaccard, same_proposal};
pub use tables::{
    tables, AccuracyBonus, DeltaTable, ScoringParams, SeatingParams, Specialist, Tables, RUBRIC,
};

use serde::{Deserialize, Serialize};

/// Whether a round is the first try or a replan after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Initial,
    Replan,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Initial => "initial",
            Phase::Replan => "replan",
        }
    }
}
