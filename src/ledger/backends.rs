//! The leaderboard per backend: the bots grouped by what runs them (`claude`, `gemini`,
//! `aider`…, from the configuration), with their record summed — rounds won and lost, the
//! success rate those give, pull requests merged and the weight the group holds. Pure: the
//! standings and each bot's backend in, the groups out, the strongest first.

use super::fold::BotStanding;
use super::stats::{self, BetaSummary};
use serde::Serialize;

/// One backend's bots and their record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendStanding {
    /// The backend; `not configured` for retired bots.
    pub backend: String,
    pub bots: Vec<String>,
    pub successes: u32,
    pub failures: u32,
    /// Beta(1 + successes, 1 + failures) over the group's implemented proposals.
    pub success_rate: BetaSummary,
    pub merged: u32,
    pub closed_unmerged: u32,
    /// The group's share of the weight.
    pub weight: f64,
}

/// Groups `bots` by `backend_of` (their configured backend; `None` when no longer
/// configured), strongest first: by weight, then by name.
pub fn by_backend(
    bots: &[BotStanding],
    backend_of: impl Fn(&str) -> Option<String>,
) -> Vec<BackendStanding> {
    let mut groups: Vec<BackendStanding> = Vec::new();
    for bot in bots {
        let backend = backend_of(&bot.bot_id).unwrap_or_else(|| "not configured".to_owned());
        let at = match groups.iter().position(|g| g.backend == backend) {
            Some(i) => i,
            None => {
                groups.push(BackendStanding {
                    backend,
                    bots: Vec::new(),
                    successes: 0,
                    failures: 0,
                    success_rate: stats::success_rate(0, 0),
                    merged: 0,
                    closed_unmerged: 0,
                    weight: 0.0,
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[at];
        g.bots.push(bot.bot_id.clone());
        g.successes += bot.successes;
        g.failures += bot.failures;
        g.merged += bot.pull_requests.merged;
        g.closed_unmerged += bot.pull_requests.closed_unmerged;
        g.weight += bot.weight;
    }
    for g in &mut groups {
        g.success_rate = stats::success_rate(g.successes, g.failures);
    }
    groups.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| a.backend.cmp(&b.backend))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot(id: &str, weight: f64, successes: u32, failures: u32, merged: u32) -> BotStanding {
        BotStanding {
            bot_id: id.into(),
            weight,
            efficiency: 1.0,
            successes,
            failures,
            average_accuracy: None,
            budget: 0,
            retired: false,
            event_count: 0,
            total_delta: 0.0,
            last_event: None,
            success_rate: stats::success_rate(successes, failures),
            rating: stats::Rating::default(),
            brier_score: None,
            pull_requests: crate::ledger::merges::MergeStats {
                merged,
                ..Default::default()
            },
        }
    }

    #[test]
    fn bots_are_summed_per_backend_strongest_first() {
        let bots = [
            bot("a", 0.2, 1, 3, 1),
            bot("b", 0.5, 4, 1, 3),
            bot("c", 0.3, 2, 0, 2),
            bot("gone", 0.0, 0, 2, 0),
        ];
        let backend = |id: &str| match id {
            "a" | "c" => Some("gemini".to_owned()),
            "b" => Some("claude".to_owned()),
            _ => None,
        };
        let groups = by_backend(&bots, backend);
        let names: Vec<&str> = groups.iter().map(|g| g.backend.as_str()).collect();
        assert_eq!(names, ["claude", "gemini", "not configured"]);
        let gemini = &groups[1];
        assert_eq!(gemini.bots, ["a", "c"]);
        assert_eq!(
            (gemini.successes, gemini.failures, gemini.merged),
            (3, 3, 3)
        );
        assert!((gemini.weight - 0.5).abs() < 1e-12);
        assert!((gemini.success_rate.mean - 0.5).abs() < 1e-12, "Beta(4, 4)");
        assert!(by_backend(&[], backend).is_empty());
    }
}
