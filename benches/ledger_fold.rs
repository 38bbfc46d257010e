//! Ledger benchmark (`cargo bench --bench ledger_fold`): folds 100,000 event files.
//!
//! Measures, with the page cache warm in every case (median of several runs, interleaved so
//! that another load on the machine weighs on all of them alike):
//! - `read only`: list the directory and read every file's bytes in parallel with plain
//!   `fs::read` — the floor any fold must pay;
//! - `cold fold`: `Ledger::state` with no cache — list, read, parse, validate, sort, fold,
//!   write `.ralph/marketplace.json`; the target is at least 5× faster than the Python fold;
//! - `cached`: `Ledger::state` over the unchanged ledger — a directory listing and the cache,
//!   no event read;
//! - `ralph leaderboard --json`: the whole binary over the unchanged ledger; the target is at
//!   most 1/20 of the Python fold;
//! - `python fold`: `benches/ledger_fold.py`, a plain Python fold of the same files (list,
//!   read, parse, sort, fold the weights) — the yardstick of the two targets.
//!
//! `RALPH_BENCH_EVENTS` changes the number of events (default 100000); `RALPH_BENCH_PYTHON` the
//! Python interpreter (default `python3`; the comparison is left out when it cannot run);
//! `RALPH_BENCH_BIN` the `ralph` binary timed (default: the one this build made, so that two
//! builds can be compared on one machine at one time).

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

/// CPU time (user + system) in ms of this process, all threads, or of its waited-for
/// children: unlike the wall clock, it hardly moves when another load shares the machine.
#[cfg(unix)]
fn cpu_ms(children: bool) -> f64 {
    let who = if children {
        libc::RUSAGE_CHILDREN
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: an all-zero rusage is valid, and getrusage only writes into the one it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid `who` and a pointer to a whole rusage.
    unsafe { libc::getrusage(who, &mut usage) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

#[cfg(not(unix))]
fn cpu_ms(_children: bool) -> f64 {
    f64::NAN
}

/// Wall-clock and CPU times of runs, in ms.
#[derive(Default)]
struct Samples {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Samples {
    /// Times `f`; `children`: count the CPU time of the child processes it waits for.
    fn time<T>(&mut self, children: bool, f: impl FnOnce() -> T) -> T {
        let cpu = cpu_ms(children);
        let (ms, out) = time(f);
        self.wall.push(ms);
        self.cpu.push(cpu_ms(children) - cpu);
        out
    }

    /// The medians: (wall, cpu).
    fn medians(self) -> (f64, f64) {
        (median(self.wall), median(self.cpu))
    }
}

fn time<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed().as_secs_f64() * 1000.0, out)
}

/// Runs the plain Python fold over `events_dir` once, or says why it could not run.
fn python_fold(events_dir: &Path, bots: &[String], count: usize) -> Result<(), String> {
    let python = std::env::var("RALPH_BENCH_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/ledger_fold.py");
    let out = std::process::Command::new(&python)
        .arg(script)
        .arg(events_dir)
        .args(bots)
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{python} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{python} printed: {e}"))?;
    assert_eq!(summary["events"].as_u64(), Some(count as u64));
    Ok(())
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
    let binary =
        std::env::var("RALPH_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ralph").to_owned());

    // Warm the page cache once so every measurement below reads from memory.
    let _ = ledger.store().load_all().unwrap();

    let mut read_only = Samples::default();
    let mut cold = Samples::default();
    let mut cached = Samples::default();
    let mut list_only = Samples::default();
    let mut load_only = Samples::default();
    let mut state_only = Samples::default();
    let mut free_only = Samples::default();
    let mut process = Samples::default();
    let mut python = Samples::default();
    let mut python_missing = None;
    for _ in 0..RUNS {
        let bytes = read_only.time(false, || {
            let files = ledger.store().list().unwrap();
            files
                .par_iter()
                .map(|f| fs::read(events_dir.join(&f.name)).unwrap().len() as u64)
                .sum::<u64>()
        });
        assert_eq!(bytes, total_bytes);

        let _ = fs::remove_file(&cache);
        let (state, how) = cold.time(false, || ledger.state(&params).unwrap());
        assert_eq!(how, CacheUse::Rebuilt);
        assert_eq!(state.event_count as usize, count);

        let (_, how) = cached.time(false, || ledger.state(&params).unwrap());
        assert_eq!(how, CacheUse::Hit);

        let out = process.time(true, || {
            std::process::Command::new(&binary)
                .args(["leaderboard", "--json", "-C"])
                .arg(dir.path())
                .output()
                .unwrap()
        });
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"cache\": \"hit\""));

        // The cold fold's steps one by one (the cache's fingerprint and write are the rest).
        let files = list_only.time(false, || ledger.store().list().unwrap());
        let loaded = load_only.time(false, || ledger.store().load(&files));
        let state = state_only.time(false, || Ledger::build_state(&params, &loaded));
        assert_eq!(state.event_count as usize, count);
        free_only.time(false, || drop(loaded));

        if python_missing.is_none() {
            if let Err(why) = python.time(true, || python_fold(&events_dir, &params.bots, count)) {
                python_missing = Some(why);
            }
        }
    }

    let (r, _) = read_only.medians();
    let (c, c_cpu) = cold.medians();
    let (list, list_cpu) = list_only.medians();
    let (load, load_cpu) = load_only.medians();
    let (fold, fold_cpu) = state_only.medians();
    let (free, free_cpu) = free_only.medians();
    let (hit, hit_cpu) = cached.medians();
    let (process, process_cpu) = process.medians();
    println!("                                              wall         cpu");
    println!("  read only (list + fs::read every file)  {r:9.1} ms");
    println!(
        "  cold fold (Ledger::state, no cache)     {c:9.1} ms {c_cpu:9.1} ms   = {:.2}x read only",
        c / r
    );
    println!("    listing                               {list:9.1} ms {list_cpu:9.1} ms");
    println!("    reading, parsing, validating, sorting {load:9.1} ms {load_cpu:9.1} ms");
    println!("    the fold and the leaderboard state    {fold:9.1} ms {fold_cpu:9.1} ms");
    println!("    freeing the loaded events             {free:9.1} ms {free_cpu:9.1} ms");
    println!(
        "    the rest (fingerprint, cache write)   {:9.1} ms",
        c - list - load - fold - free
    );
    println!("  cached (unchanged ledger, no parsing)   {hit:9.1} ms {hit_cpu:9.1} ms");
    println!("  `ralph leaderboard --json`, cached      {process:9.1} ms {process_cpu:9.1} ms");
    match python_missing {
        None => {
            let (py, py_cpu) = python.medians();
            println!("  python fold (benches/ledger_fold.py)    {py:9.1} ms {py_cpu:9.1} ms");
            println!(
                "    cold fold: {:.1}x faster than python (target >= 5x), {:.1}x less CPU",
                py / c,
                py_cpu / c_cpu
            );
            println!(
                "    cached leaderboard: 1/{:.0} of python in-process, 1/{:.0} as a process (target <= 1/20)",
                py / hit,
                py / process
            );
        }
        Some(why) => println!("  python fold: left out, {why}"),
    }
    println!("  (medians of {RUNS} runs; page cache warm)");
}
