//! What `--record DIR` keeps of a round's decision, beside the agents' answers: the round's
//! scoring inputs — requirements, the blinded proposals, every judge's reading in every order —
//! and the ranking and winner they produced, as `<DIR>/scoring.r<round>.json`. `ralph replay`
//! re-scores these under another configuration with no agent or tracker call.

use crate::fsutil::write_atomic;
use crate::market::order::Reading;
use crate::market::seating::Seating;
use crate::market::{Phase, Proposal, Scores};
use crate::spec::Requirements;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The version of the recorded round's shape.
pub const RECORDING_VERSION: u32 = 1;

/// One round's scoring inputs and result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRound {
    pub version: u32,
    pub issue: u64,
    pub round: u32,
    pub phase: Phase,
    /// The blinding seed.
    pub seed: u64,
    pub requirements: Requirements,
    /// In blind order (`proposal_1` first).
    pub proposals: Vec<RecordedProposal>,
    /// Every judge reading that came back.
    pub readings: Vec<Reading>,
    /// Why the judges' scores are neutral when no reading came back (not asked, a cap, every
    /// judge failed).
    #[serde(default)]
    pub judge_unavailable: Option<String>,
    /// The scoring weights the round was ranked with.
    pub weights: Scores,
    /// The order (best first) and the winner the round produced.
    pub ranking: Vec<String>,
    pub winner: Option<String>,
    /// With `[marketplace] seats`: the round's seats, which a replay keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating: Option<Seating>,
}

/// A blinded proposal and who wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedProposal {
    pub proposal_id: String,
    pub bot_id: String,
    pub submitted_at: DateTime<Utc>,
    pub proposal: Proposal,
}

/// The file a round is recorded in.
pub fn path(dir: &Path, round: u32) -> PathBuf {
    dir.join(format!("scoring.r{round}.json"))
}

/// Writes the round; a failure is logged, never fatal (like the recorded answers).
pub fn write(dir: &Path, recorded: &RecordedRound) {
    let file = path(dir, recorded.round);
    let result = std::fs::create_dir_all(dir).and_then(|()| {
        let json = serde_json::to_vec_pretty(recorded).map_err(std::io::Error::other)?;
        write_atomic(&file, &json)
    });
    if let Err(e) = result {
        tracing::warn!("cannot record {}: {e}", file.display());
    }
}
