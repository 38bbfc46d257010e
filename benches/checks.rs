//! Three independent quality checks of 2 s each, then one quick test check: the quality
//! checks run at the same time, so the whole verification should take about 2 s, not 6.
//! Run: `cargo bench --bench checks`.

use ralph::checks::{run_checks, CheckPlan, CheckSpec};
use std::time::{Duration, Instant};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let plan = CheckPlan::of(vec![
        CheckSpec::new("format", "sleep 2"),
        CheckSpec::new("lint", "sleep 2"),
        CheckSpec::new("type-check", "sleep 2"),
        CheckSpec::new("test", "true"),
    ]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let results = runtime.block_on(run_checks(
            &plan,
            dir.path(),
            Duration::from_secs(30),
            &ralph::checks::run::Unwatched,
            Default::default(),
        ));
        times.push(started.elapsed());
        assert!(results.checks.iter().all(|r| r.passed()), "{results:?}");
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "checks: 3 quality checks of 2 s + 1 test, 5 runs: median {:.2} s, min {:.2} s, max {:.2} s = {:.2}x one check (sequential would be 6 s)",
        median.as_secs_f64(),
        times[0].as_secs_f64(),
        times[times.len() - 1].as_secs_f64(),
        median.as_secs_f64() / 2.0
    );
}
