//! Accounting of a run's model calls: tokens, cost and time per agent and role, for the run
//! report and the events, and the run caps of `[limits]` (`max_cost_usd`, `max_tokens`) that
//! stop a run cleanly between phases. Pure bookkeeping: callers record what each call cost.

use super::{Role, Usage};
use crate::config::LimitsConfig;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// What calls by one agent in one role cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spend {
    pub calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// `None` while no call reported a cost.
    pub cost_usd: Option<f64>,
    #[serde(rename = "duration_ms", serialize_with = "millis")]
    pub duration: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

impl Spend {
    fn add(&mut self, other: &Spend) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.duration += other.duration;
    }

    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// What was spent beyond `earlier` (a snapshot of the same account).
    fn minus(&self, earlier: &Spend) -> Spend {
        Spend {
            calls: self.calls.saturating_sub(earlier.calls),
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            cost_usd: match (self.cost_usd, earlier.cost_usd) {
                (Some(now), before) => Some((now - before.unwrap_or(0.0)).max(0.0)),
                (None, _) => None,
            },
            duration: self.duration.saturating_sub(earlier.duration),
        }
    }
}

/// One row of the accounts: who (a bot id, `arbiter`, `judge_2`, `implementer`), in which
/// role, spent what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountRow {
    pub agent: String,
    pub role: Role,
    #[serde(flatten)]
    pub spend: Spend,
}

/// The run's accounts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accounts {
    entries: BTreeMap<(String, Role), Spend>,
}

/// A run cap that was reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapReached {
    Cost { spent: f64, cap: f64 },
    Tokens { used: u64, cap: u64 },
}

impl fmt::Display for CapReached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapReached::Cost { spent, cap } => write!(
                f,
                "the run's model calls cost ${spent:.4}, reaching `limits.max_cost_usd` = {cap}"
            ),
            CapReached::Tokens { used, cap } => write!(
                f,
                "the run's model calls used {used} tokens, reaching `limits.max_tokens` = {cap}"
            ),
        }
    }
}

impl Accounts {
    /// Records one answered call (or a call and its repair retry).
    pub fn record(&mut self, agent: &str, role: Role, usage: Usage, duration: Duration) {
        let e = self.entries.entry((agent.to_owned(), role)).or_default();
        e.add(&Spend {
            calls: 1,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cost_usd: usage.cost_usd,
            duration,
        });
    }

    /// What was spent since `earlier`, a snapshot of these accounts (a round's own spend).
    pub fn since(&self, earlier: &Accounts) -> Accounts {
        Accounts {
            entries: self
                .entries
                .iter()
                .map(|(k, s)| {
                    let spent = match earlier.entries.get(k) {
                        Some(e) => s.minus(e),
                        None => *s,
                    };
                    (k.clone(), spent)
                })
                .filter(|(_, s)| s.calls > 0)
                .collect(),
        }
    }

    /// Everything spent so far.
    pub fn total(&self) -> Spend {
        let mut t = Spend::default();
        for s in self.entries.values() {
            t.add(s);
        }
        t
    }

    /// What one agent spent over all its roles.
    pub fn of(&self, agent: &str) -> Spend {
        let mut t = Spend::default();
        for ((a, _), s) in &self.entries {
            if a == agent {
                t.add(s);
            }
        }
        t
    }

    /// The rows, by agent then role.
    pub fn rows(&self) -> Vec<AccountRow> {
        self.entries
            .iter()
            .map(|((agent, role), spend)| AccountRow {
                agent: agent.clone(),
                role: *role,
                spend: *spend,
            })
            .collect()
    }

    /// The first cap the run has reached, if any. Checked between phases: a phase that
    /// started finishes, and its work is kept.
    pub fn cap_reached(&self, limits: &LimitsConfig) -> Option<CapReached> {
        let total = self.total();
        if let (Some(cap), Some(spent)) = (limits.max_cost_usd, total.cost_usd) {
            if spent >= cap {
                return Some(CapReached::Cost { spent, cap });
            }
        }
        if let Some(cap) = limits.max_tokens {
            if total.tokens() >= cap {
                return Some(CapReached::Tokens {
                    used: total.tokens(),
                    cap,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(i: u64, o: u64, cost: Option<f64>) -> Usage {
        Usage {
            input_tokens: i,
            cached_input_tokens: 0,
            output_tokens: o,
            cost_usd: cost,
        }
    }

    #[test]
    fn spend_adds_up_per_agent_role_and_in_total() {
        let mut a = Accounts::default();
        let s = Duration::from_secs;
        a.record("bot_a", Role::Propose, usage(100, 50, Some(0.01)), s(2));
        a.record("bot_a", Role::Propose, usage(10, 5, None), s(1));
        a.record("bot_b", Role::Propose, usage(1, 1, None), s(1));
        a.record("arbiter", Role::Judge, usage(200, 100, Some(0.02)), s(3));
        let bot_a = a.of("bot_a");
        assert_eq!((bot_a.calls, bot_a.tokens()), (2, 165));
        assert_eq!(bot_a.cost_usd, Some(0.01));
        assert_eq!(a.of("bot_b").cost_usd, None);
        let t = a.total();
        assert_eq!((t.calls, t.tokens(), t.duration), (4, 467, s(7)));
        assert!((t.cost_usd.unwrap() - 0.03).abs() < 1e-12);
        let rows = a.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].agent, "arbiter");
        let json = serde_json::to_value(&rows[1]).unwrap();
        assert_eq!(json["role"], "propose");
        assert_eq!(json["duration_ms"], 3000);
        assert_eq!(json["input_tokens"], 110);
    }

    #[test]
    fn a_rounds_spend_is_what_came_after_its_snapshot() {
        let mut a = Accounts::default();
        let s = Duration::from_secs;
        a.record("bot_a", Role::Propose, usage(100, 50, Some(0.01)), s(2));
        a.record("bot_b", Role::Propose, usage(7, 7, None), s(1));
        let snapshot = a.clone();
        a.record("bot_a", Role::Propose, usage(10, 5, Some(0.02)), s(1));
        a.record("implementer", Role::Implement, usage(1, 1, None), s(4));
        let round = a.since(&snapshot);
        let bot_a = round.of("bot_a");
        assert_eq!((bot_a.calls, bot_a.tokens(), bot_a.duration), (1, 15, s(1)));
        assert!((bot_a.cost_usd.unwrap() - 0.02).abs() < 1e-12);
        assert_eq!(round.of("bot_b").calls, 0, "nothing new");
        assert_eq!(round.of("implementer").duration, s(4));
        assert_eq!(round.total().calls, 2);
    }

    #[test]
    fn caps_are_reached_at_the_limit_and_not_before() {
        let mut a = Accounts::default();
        a.record(
            "x",
            Role::Propose,
            usage(600, 399, Some(0.99)),
            Duration::ZERO,
        );
        let limits = LimitsConfig {
            max_cost_usd: Some(1.0),
            max_tokens: Some(1000),
        };
        assert_eq!(a.cap_reached(&limits), None);
        a.record("x", Role::Judge, usage(1, 0, None), Duration::ZERO);
        let reached = a.cap_reached(&limits).unwrap();
        assert_eq!(
            reached,
            CapReached::Tokens {
                used: 1000,
                cap: 1000
            }
        );
        assert!(reached.to_string().contains("limits.max_tokens"));
        a.record("x", Role::Judge, usage(0, 0, Some(0.01)), Duration::ZERO);
        assert!(matches!(
            a.cap_reached(&limits),
            Some(CapReached::Cost { .. })
        ));
        // Unknown cost never reaches a cost cap; no caps, no stop.
        let mut b = Accounts::default();
        b.record("y", Role::Propose, usage(5, 5, None), Duration::ZERO);
        let cost_only = LimitsConfig {
            max_cost_usd: Some(0.000001),
            max_tokens: None,
        };
        assert_eq!(b.cap_reached(&cost_only), None);
        assert_eq!(b.cap_reached(&LimitsConfig::default()), None);
    }
}
