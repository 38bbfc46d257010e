//! Ledger benchmark (`cargo bench --bench ledger_fold`): folds 100,000 event files.
//!
//! Measures, with the page cache warm in every case (median of several runs):
//! - `read only`: list the directory and read every file's bytes in parallel — the floor any
//!   fold must pay;
//! - `cold fold`: `Ledger::state` with no cache — list, read, parse, validate, sort, fold,
//!   write `.ralph/marketplace.json`; the target is within 2× of `read only`;
//! - `cached`: `Ledger::state` over the unchanged ledger — a directory listing and the cache,
//!   no event parsed;
//! - `ralph leaderboard --json`: the whole binary over the unchanged ledger.
//!
//! `RALPH_BENCH_EVENTS` changes the number of events (default 100000).

use chrono::{DateTime, Duration, Utc};
use ralph::config::Config;
use ralph::ledger::{CacheUse, Event, Ledger, Metrics};
use ralph::market::Outcome;
use rayon::prelude::*;
use std::fs;
use std::path::Path;
use std::time::Instant;

const RUNS: usize = 5;

fn generate(events_dir: &Path, count: usize) {
    fs::create_dir_all(events_dir).unwrap();
    let start: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let outcomes = [
        (Outcome::Success, 0.10),
        (Outcome::NotSelected, -0.02),
        (Outcome::NotSelected, -0.02),
        (Outcome::Failure, -0.15),
        (Outcome::ReplanSuccess, 0.12),
        (Outcome::ReplanFailure, -0.20),
        (Outcome::CollectiveFailure, -0.05),
    ];
    (0..count).into_par_iter().for_each(|i| {
        let (outcome, delta) = outcomes[i % outcomes.len()];
        let bot = format!("smart_bot_{}", 1 + (i * 7 + i / 3) % 3);
        let mut e = Event::new(1 + (i / 20) as u64, &bot, outcome, delta);
        e.timestamp = start + Duration::milliseconds(i as i64 * 1500);
        e.proposal_score = Some(0.5 + (i % 50) as f64 / 100.0);
        if outcome.is_implementation() {
            e.implementation_score = Some(0.4 + (i % 60) as f64 / 100.0);
            e.accuracy =
                Some(1.0 - (e.proposal_score.unwrap() - e.implementation_score.unwrap()).abs());
        }
        e.round = Some(1 + (i % 15) as u32);
        e.run_id = Some(format!("run-{}", i / 20));
        e.metrics = Some(Metrics {
            tests_passed: Some(outcome.is_success()),
            code_quality_passed: Some(true),
            coverage_delta: Some(0.5),
            lines_changed: Some(40 + (i % 100) as u64),
            files_affected: Some(1 + (i % 5) as u64),
        });
        let text = serde_json::to_string_pretty(&e).unwrap();
        fs::write(events_dir.join(e.file_name()), text).unwrap();
    });
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64() * 1000.0, out)
}

fn main() {
    let count: usize = std::env::var("RALPH_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let ralph_dir = dir.path().join(".ralph");
    let events_dir = ralph_dir.join("events");
    let (gen_ms, ()) = time(|| generate(&events_dir, count));
    let total_bytes: u64 = fs::read_dir(&events_dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "ledger_fold: {count} event files, {:.1} MiB, generated in {gen_ms:.0} ms, {} threads",
        total_bytes as f64 / (1024.0 * 1024.0),
        rayon::current_num_threads()
    );

    let params = Config::default().fold_params();
    let ledger = Ledger::new(&ralph_dir);
    let cache = ledger.cache_path();

    // Warm the page cache once so every measurement below reads from memory.
    let _ = ledger.store().load_all().unwrap();

    let mut read_only = Vec::new();
    let mut cold = Vec::new();
    let mut cached = Vec::new();
    let mut fold_only = Vec::new();
    let mut list_only = Vec::new();
    let mut load_only = Vec::new();
    for _ in 0..RUNS {
        let (ms, bytes) = time(|| {
            let files = ledger.store().list().unwrap();
            files
                .par_iter()
                .map(|f| fs::read(events_dir.join(&f.name)).unwrap().len() as u64)
                .sum::<u64>()
        });
        assert_eq!(bytes, total_bytes);
        read_only.push(ms);

        let _ = fs::remove_file(&cache);
        let (ms, (state, how)) = time(|| ledger.state(&params).unwrap());
        assert_eq!(how, CacheUse::Rebuilt);
        assert_eq!(state.event_count as usize, count);
        cold.push(ms);

        let (ms, (_, how)) = time(|| ledger.state(&params).unwrap());
        assert_eq!(how, CacheUse::Hit);
        cached.push(ms);

        let (ms, files) = time(|| ledger.store().list().unwrap());
        list_only.push(ms);
        let (ms, loaded) = time(|| ledger.store().load(&files));
        load_only.push(ms);
        let (ms, folded) =
            time(|| ralph::ledger::fold(&params, loaded.events.iter().map(|l| &l.event)));
        assert_eq!(folded.event_count as usize, count);
        fold_only.push(ms);
    }

    let binary = env!("CARGO_BIN_EXE_ralph");
    let mut process = Vec::new();
    for _ in 0..RUNS {
        let (ms, out) = time(|| {
            std::process::Command::new(binary)
                .args(["leaderboard", "--json", "-C"])
                .arg(dir.path())
                .output()
                .unwrap()
        });
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"cache\": \"hit\""));
        process.push(ms);
    }

    let (r, c) = (median(read_only), median(cold));
    println!("  read only (list + read every file)      {r:9.1} ms");
    println!(
        "  cold fold (Ledger::state, no cache)     {c:9.1} ms   = {:.2}x read only (target <= 2x)",
        c / r
    );
    println!(
        "    listing (readdir + stat)              {:9.1} ms",
        median(list_only)
    );
    println!(
        "    reading, parsing, validating, sorting {:9.1} ms",
        median(load_only)
    );
    println!(
        "    the pure fold                         {:9.1} ms",
        median(fold_only)
    );
    println!(
        "  cached (unchanged ledger, no parsing)   {:9.1} ms",
        median(cached)
    );
    println!(
        "  `ralph leaderboard --json`, cached      {:9.1} ms",
        median(process)
    );
    println!("  (medians of {RUNS} runs; page cache warm)");
}
