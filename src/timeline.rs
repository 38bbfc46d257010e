//! Where a competition's time went: each phase's start and length on the run's clock (the
//! baseline, each round's extraction, proposals and judging, each attempt's implementer and
//! checks, the verify role, the review, the audit, the push), and the critical path — the chain
//! of phases that decided when the run ended, found backwards from the last phase to end.

use serde::Serialize;
use std::time::{Duration, Instant};

/// One phase on the run's clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseTime {
    pub name: String,
    /// Since the run started.
    pub start_ms: u64,
    pub duration_ms: u64,
}

impl PhaseTime {
    fn end_ms(&self) -> u64 {
        self.start_ms + self.duration_ms
    }
}

/// The phases of a run as they happen.
#[derive(Debug, Clone)]
pub struct Timeline {
    started: Instant,
    phases: Vec<PhaseTime>,
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline::new(Instant::now())
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Timeline {
    /// A timeline whose clock started at `started`.
    pub fn new(started: Instant) -> Timeline {
        Timeline {
            started,
            phases: Vec::new(),
        }
    }

    /// The phase `name` ran from `from` to `to`.
    pub fn record(&mut self, name: impl Into<String>, from: Instant, to: Instant) {
        self.phases.push(PhaseTime {
            name: name.into(),
            start_ms: ms(from.saturating_duration_since(self.started)),
            duration_ms: ms(to.saturating_duration_since(from)),
        });
    }

    /// The phase `name` ran from `from` until now.
    pub fn since(&mut self, name: impl Into<String>, from: Instant) {
        self.record(name, from, Instant::now());
    }

    /// The phases in the order they started.
    pub fn phases(&self) -> Vec<PhaseTime> {
        let mut out = self.phases.clone();
        out.sort_by_key(|p| (p.start_ms, std::cmp::Reverse(p.duration_ms)));
        out
    }

    /// The run's wall time so far.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// How far apart the end of one phase and the start of the next may be and still be one
/// chain: the bookkeeping between two phases.
const SLACK_MS: u64 = 50;

/// The names of the phases on the critical path, first to last: the phase that ended last,
/// preceded by the phase that ended last before it started (within [`SLACK_MS`]), and so on.
/// A phase that ran alongside the path and ended earlier is off it.
pub fn critical_path(phases: &[PhaseTime]) -> Vec<String> {
    let Some(mut current) = phases
        .iter()
        .max_by_key(|p| (p.end_ms(), std::cmp::Reverse(p.start_ms)))
    else {
        return Vec::new();
    };
    let mut path = vec![current.name.clone()];
    loop {
        let before = phases
            .iter()
            .filter(|p| p.end_ms() <= current.start_ms + SLACK_MS && p.start_ms < current.start_ms)
            .max_by_key(|p| (p.end_ms(), std::cmp::Reverse(p.start_ms)));
        match before {
            Some(p) => {
                path.push(p.name.clone());
                current = p;
            }
            None => break,
        }
    }
    path.reverse();
    path
}

/// The time the checks took: how many runs (the baseline's, each attempt's), and their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CheckTime {
    pub runs: u32,
    pub total_ms: u64,
}

/// The check runs among `phases`: the baseline and every attempt's checks (`checks r1.2`,
/// the environment refreshed and native code rebuilt with them).
pub fn check_time(phases: &[PhaseTime]) -> CheckTime {
    phases
        .iter()
        .filter(|p| p.name == "baseline" || p.name.starts_with("checks "))
        .fold(CheckTime::default(), |t, p| CheckTime {
            runs: t.runs + 1,
            total_ms: t.total_ms + p.duration_ms,
        })
}

/// `Time: 41.3s — critical path: proposals r1 20.1s → attempt r1.1 12.0s → … · alongside:
/// baseline 25.0s`, for the end of the terminal story.
pub fn summary(total: Duration, phases: &[PhaseTime], path: &[String]) -> String {
    let secs = |ms: u64| format!("{:.1}s", ms as f64 / 1000.0);
    let on: Vec<String> = path
        .iter()
        .filter_map(|n| phases.iter().find(|p| &p.name == n))
        .map(|p| format!("{} {}", p.name, secs(p.duration_ms)))
        .collect();
    let off: Vec<String> = phases
        .iter()
        .filter(|p| !path.contains(&p.name) && p.duration_ms >= 100)
        .map(|p| format!("{} {}", p.name, secs(p.duration_ms)))
        .collect();
    let mut line = format!(
        "Time: {:.1}s — critical path: {}",
        total.as_secs_f64(),
        if on.is_empty() {
            "none recorded".to_owned()
        } else {
            on.join(" → ")
        }
    );
    if !off.is_empty() {
        line.push_str(&format!(" · alongside: {}", off.join(", ")));
    }
    let checks = check_time(phases);
    if checks.runs > 0 {
        line.push_str(&format!(
            " · checks: {} run{}, {}",
            checks.runs,
            if checks.runs == 1 { "" } else { "s" },
            secs(checks.total_ms)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, start: u64, duration: u64) -> PhaseTime {
        PhaseTime {
            name: name.into(),
            start_ms: start,
            duration_ms: duration,
        }
    }

    #[test]
    fn the_path_runs_through_whatever_the_first_attempt_waited_for() {
        // The bots take longer than the baseline: the baseline is off the path.
        let phases = [
            p("baseline", 0, 5_000),
            p("extraction r1", 0, 1_000),
            p("proposals r1", 1_000, 9_000),
            p("judging r1", 10_000, 2_000),
            p("attempt r1.1", 12_010, 3_000),
            p("checks r1.1", 15_010, 1_000),
            p("push", 16_020, 500),
        ];
        assert_eq!(
            critical_path(&phases),
            [
                "extraction r1",
                "proposals r1",
                "judging r1",
                "attempt r1.1",
                "checks r1.1",
                "push"
            ]
        );
        // A slow baseline is on it instead.
        let mut slow = phases.to_vec();
        slow[0] = p("baseline", 0, 20_000);
        slow[4] = p("attempt r1.1", 20_010, 3_000);
        slow[5] = p("checks r1.1", 23_010, 1_000);
        slow[6] = p("push", 24_020, 500);
        assert_eq!(
            critical_path(&slow),
            ["baseline", "attempt r1.1", "checks r1.1", "push"]
        );
    }

    #[test]
    fn an_empty_run_has_no_path_and_the_summary_says_so() {
        assert!(critical_path(&[]).is_empty());
        assert_eq!(
            summary(Duration::from_millis(1500), &[], &[]),
            "Time: 1.5s — critical path: none recorded"
        );
    }

    #[test]
    fn the_summary_names_the_path_and_what_ran_alongside() {
        let phases = [
            p("baseline", 0, 5_000),
            p("proposals r1", 0, 9_000),
            p("attempt r1.1", 9_000, 3_000),
            p("checks r1.1", 12_000, 1_500),
        ];
        let path = critical_path(&phases);
        assert_eq!(
            summary(Duration::from_millis(13_545), &phases, &path),
            "Time: 13.5s — critical path: proposals r1 9.0s → attempt r1.1 3.0s → checks r1.1 1.5s · alongside: baseline 5.0s · checks: 2 runs, 6.5s"
        );
        assert_eq!(
            check_time(&phases),
            CheckTime {
                runs: 2,
                total_ms: 6_500
            }
        );
    }

    #[test]
    fn recorded_phases_are_on_the_run_clock_in_start_order() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0);
        t.record(
            "b",
            t0 + Duration::from_millis(30),
            t0 + Duration::from_millis(50),
        );
        t.record("a", t0, t0 + Duration::from_millis(40));
        assert_eq!(t.phases(), [p("a", 0, 40), p("b", 30, 20)]);
    }
}
