//! Decision-quality benchmark (`cargo bench --bench decisions`): how good is the proposal ralph
//! picks, on synthetic competitions whose truth is known?
//!
//! # The generator (deterministic, seeded SplitMix64)
//!
//! A competition has 3–5 proposals in submission order. Each has a hidden true quality
//! `q ~ N(0, 1)`; its implementation would pass with probability `σ(d + 1.5·q)`, where
//! `d ~ N(0.3, 0.8)` is the competition's difficulty, which no score sees (so outcomes carry
//! noise beyond the proposals). ralph sees six scores in [0, 1], noisy signals of `q`: a
//! heuristic is `clamp(centre + 0.15·(ρ·q + √(1−ρ²)·z))`, `z ~ N(0, 1)`, `ρ` its loading.
//!
//! | dimension | default weight | what it stands for | signal |
//! |---|---|---|---|
//! | spec_alignment | 0.30 | counts what the bot *claims* to address; bots claim most | ρ 0.15, centre 0.75 |
//! | risk | 0.20 | files touched, breaking changes: smaller changes pass more often | ρ 0.45, centre 0.60 |
//! | efficiency | 0.10 | the bot's own size estimate | ρ 0 (noise), centre 0.55 |
//! | specialist_validation | 0.05 | 1 when no specialist is expected (35 % of proposals), else the share of 1–2 expected specialists consulted, each with P `σ(0.3 + 1.5·q)` | strong, coarse |
//! | technical_quality | 0.20 | judges | opinion `0.8·q + 0.6·ε`, centre 0.60 |
//! | innovation | 0.15 | judges: novelty is not what passes | opinion `0.3·q + 0.95·ε`, centre 0.50 |
//!
//! So the default weights are not the best ones: most of the weight sits on the least telling
//! dimension, and `tune` has something to learn.
//!
//! Judges: each judge holds a settled opinion of each proposal (its own `ε`, independent of the
//! other judges', the same in all its readings); a reading adds its own noise `N(0, 0.35²)` and a position bias `B·2^−pos` (the
//! first listed gets `B`, the second `B/2`, …: LLM judges favour what they read first;
//! `B = 0.15` by default), then `clamp(centre + 0.15·(opinion + noise) + bias)`. The proposals
//! are listed in the round's `blind_order`, so the bias is unrelated to quality. Without swaps a
//! judge reads once; with swaps it also reads the reverse order and the readings are combined by
//! ralph's own `market::order::combine` (mean of a judge's two readings, median across judges).
//! The reversal would cancel a linear bias exactly; this decaying one it only evens out, leaving
//! the middle of the list behind the ends (by `B/8` with 3 proposals, `0.28·B` with 5).
//!
//! # What is measured
//!
//! ralph's pick is the top of `market::rank` over the weighted totals (ties to the earlier
//! submission). A round where every total is below `human_review_below` would go to a person;
//! its share is reported (`h.rev`) and its top is still counted as the pick. Pass rates are
//! *expected* ones (the mean pass probability of the proposal picked), against the oracle (the
//! proposal with the highest probability) and a random pick (the mean over the round's
//! proposals); efficiency = `(ralph − random) / (oracle − random)`; `=oracle` is the share of
//! rounds ralph picked the oracle's proposal; `flips` is the share of rounds whose
//! forward-only and reversed-only winners differ (swap configurations only).
//!
//! Before/after `tune`: separate training competitions are judged as ralph does by default (one
//! judge, one swap, default weights); the winner of each round that does not go to human review
//! is implemented: its six scores and a pass drawn from its probability become a
//! `tune::Sample`, as the ledger would record it. A second variant adds the runner-up in 20 % of
//! rounds (audits feed tune too). `tune` runs on the first 200 and 1000 outcomes of each of 5
//! independent training ledgers; the weights `ralph tune --write` would leave (the suggestion
//! when its CV log-loss beats the current weights', else the defaults) are judged on the same
//! test competitions as the rest, pooled over the 5 ledgers (`train sd`: the spread of the
//! efficiency between them). Two references no ledger has: tune
//! with no pull toward the current weights (`λ 0`), and tune on 5000 outcomes of *every*
//! proposal (no selection: what only implementing the winner costs the fit).
//!
//! `±se` is the standard error of the efficiency over the test rounds (pooled rows: over all
//! their rounds; training noise is in `train sd`). All rows share the test competitions, so
//! `Δ vs ralph` (the efficiency minus that of ralph's default configuration, round by round,
//! with its standard error) is much tighter than `±se`.
//!
//! The merge-outcome variant: what counts is whether the maintainers merge the pick. A passing
//! change is merged with probability `σ(0.4 + 1.2·z)`, `z` the standardised risk signal (small,
//! safe changes are taken more often) — something ralph's checks do not see. The same test
//! competitions are judged by merge rates, for the default weights and for the weights `tune`
//! leaves when fitted to 200 and 1000 winners' check outcomes and to as many merge outcomes
//! (what `ralph tune` does once enough pull requests settled).
//!
//! `RALPH_BENCH_ROUNDS` sets the number of test competitions (default 5000),
//! `RALPH_BENCH_BIAS` the bias `B`.

use chrono::{TimeZone, Utc};
use ralph::market::order::{combine, Mark, Reading};
use ralph::market::tune::{tune, Options, Sample, Tuned};
use ralph::market::{blind_label, blind_order, rank, tables, Dimension, Entry, Scores, Subjective};
use std::collections::BTreeMap;
use std::time::Instant;

const TEST_SEED: u64 = 0x7E57_0001;
const TRAIN_SEED: u64 = 0x7EA1_0002;
const OUTCOME_SEED: u64 = 0x0C7C_0003;
const MAX_JUDGES: usize = 3;
const PASS_SLOPE: f64 = 1.5;
const DIFFICULTY: (f64, f64) = (0.3, 0.8);
/// How far one unit of signal moves a score.
const SPREAD: f64 = 0.15;
const READING_NOISE: f64 = 0.35;
const AUDIT_RATE: f64 = 0.2;
const TUNE_SIZES: [usize; 2] = [200, 1000];
/// Independent training ledgers per tune configuration: one ledger's fit is itself noisy.
const TRAIN_DRAWS: u64 = 5;
/// Outcomes of the reference fit on every proposal.
const REFERENCE_OUTCOMES: usize = 5000;
/// The merge variant: maintainers merge a passing change with probability
/// `σ(MERGE_BASE + MERGE_SLOPE · z)`, `z` the standardised risk signal (small, safe changes are
/// merged more often) — something ralph's checks do not see, so tuning on merges has more to
/// learn than tuning on passes.
const MERGE_BASE: f64 = 0.4;
const MERGE_SLOPE: f64 = 1.2;

/// SplitMix64, as in `market::ranking`: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform(); // (0, 1]: ln is finite
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }

    fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// Uniform in `0..n` (small n; the bias of the float product is negligible).
    fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }
}

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// A noisy score with correlation `loading` to `q` before clamping.
fn heuristic(rng: &mut Rng, q: f64, loading: f64, centre: f64) -> f64 {
    let signal = loading * q + (1.0 - loading * loading).sqrt() * rng.normal();
    (centre + SPREAD * signal).clamp(0.0, 1.0)
}

/// One proposal: its hidden truth and everything the heuristics and judges will say about it.
struct Proposal {
    /// The probability that its implementation passes.
    pass: f64,
    /// The probability that it passes and the maintainers merge it (see `MERGE_BASE`).
    merge: f64,
    /// spec_alignment, risk, efficiency, specialist_validation.
    objective: [f64; 4],
    /// Per judge: its settled opinion (technical quality, innovation), in units of `q`.
    opinion: [[f64; 2]; MAX_JUDGES],
    /// Per judge and reading (forward, reversed): that reading's own noise.
    noise: [[[f64; 2]; 2]; MAX_JUDGES],
}

/// A competition: proposals in submission order, and the blind order the judges read them in
/// (`listing[i]` is the submission index of the proposal labelled `proposal_{i+1}`).
struct Competition {
    proposals: Vec<Proposal>,
    listing: Vec<usize>,
}

fn proposal(rng: &mut Rng, difficulty: f64) -> Proposal {
    let q = rng.normal();
    let spec_alignment = heuristic(rng, q, 0.15, 0.75);
    let risk = heuristic(rng, q, 0.45, 0.60);
    let efficiency = heuristic(rng, q, 0.0, 0.55);
    let specialist = if rng.chance(0.35) {
        1.0
    } else {
        let expected = 1 + rng.below(2);
        let consulted = (0..expected)
            .filter(|_| rng.chance(sigmoid(0.3 + 1.5 * q)))
            .count();
        consulted as f64 / expected as f64
    };
    let opinion =
        std::array::from_fn(|_| [0.8 * q + 0.6 * rng.normal(), 0.3 * q + 0.95 * rng.normal()]);
    let noise = std::array::from_fn(|_| {
        std::array::from_fn(|_| [READING_NOISE * rng.normal(), READING_NOISE * rng.normal()])
    });
    let pass = sigmoid(difficulty + PASS_SLOPE * q);
    Proposal {
        pass,
        merge: pass * sigmoid(MERGE_BASE + MERGE_SLOPE * (risk - 0.60) / SPREAD),
        objective: [spec_alignment, risk, efficiency, specialist],
        opinion,
        noise,
    }
}

fn competition(rng: &mut Rng) -> Competition {
    let k = 3 + rng.below(3);
    let difficulty = DIFFICULTY.0 + DIFFICULTY.1 * rng.normal();
    let proposals = (0..k).map(|_| proposal(rng, difficulty)).collect();
    Competition {
        proposals,
        listing: blind_order(k, rng.next_u64()),
    }
}

/// How the judges read a round.
#[derive(Clone, Copy)]
struct Judging {
    judges: usize,
    swaps: bool,
    /// The position bias `B` of the first listed proposal.
    bias: f64,
}

/// "1 judge, swapped", "3 judges, one reading".
fn describe(how: Judging) -> String {
    let judges = if how.judges == 1 { "judge" } else { "judges" };
    let reading = if how.swaps { "swapped" } else { "one reading" };
    format!("{} {judges}, {reading}", how.judges)
}

/// Judge `judge`'s mark of `p` in reading `reading` (0 forward, 1 reversed), listed at `pos`.
fn mark(p: &Proposal, judge: usize, reading: usize, pos: usize, bias: f64) -> Mark {
    let lean = bias * 0.5f64.powi(pos as i32);
    let score = |d: usize, centre: f64| {
        (centre + SPREAD * (p.opinion[judge][d] + p.noise[judge][reading][d]) + lean)
            .clamp(0.0, 1.0)
    };
    Mark {
        technical_quality: score(0, 0.60),
        technical_quality_reasoning: String::new(),
        innovation: score(1, 0.50),
        innovation_reasoning: String::new(),
    }
}

/// Every judge's readings of the round: the blind order, and its reverse with swaps.
fn readings(c: &Competition, how: Judging) -> Vec<Reading> {
    let k = c.listing.len();
    let mut out = Vec::new();
    for judge in 0..how.judges {
        for reading in 0..if how.swaps { 2 } else { 1 } {
            let reversed = reading == 1;
            // The label indices in the order this reading lists them.
            let mut listed: Vec<usize> = (0..k).collect();
            if reversed {
                listed.reverse();
            }
            out.push(Reading {
                judge: format!("judge_{judge}"),
                reversed,
                order: listed.iter().map(|&i| blind_label(i)).collect(),
                marks: listed
                    .iter()
                    .enumerate()
                    .map(|(pos, &i)| {
                        let p = &c.proposals[c.listing[i]];
                        (blind_label(i), mark(p, judge, reading, pos, how.bias))
                    })
                    .collect(),
            });
        }
    }
    out
}

/// A round ranked: submission indices best first, and each one's six scores.
struct Ranked {
    order: Vec<usize>,
    human_review: bool,
    scores: Vec<Scores>,
}

/// Scores the round with the judges' `views` and ranks it with ralph's `rank`.
fn ranked(c: &Competition, views: &BTreeMap<String, Subjective>, weights: &Scores) -> Ranked {
    let k = c.listing.len();
    let mut scores = vec![Scores::default(); k];
    let mut entries = Vec::with_capacity(k);
    for (label_at, &i) in c.listing.iter().enumerate() {
        let id = blind_label(label_at);
        let [spec_alignment, risk, efficiency, specialist_validation] = c.proposals[i].objective;
        let view = &views[&id];
        let s = Scores {
            spec_alignment,
            technical_quality: view.technical_quality,
            innovation: view.innovation,
            risk,
            efficiency,
            specialist_validation,
        };
        entries.push(Entry {
            proposal_id: id,
            total: s.weighted_total(weights),
            submitted_at: Utc.timestamp_opt(1_800_000_000 + i as i64, 0).unwrap(),
        });
        scores[i] = s;
    }
    let ranking = rank(&entries, tables().scoring.ranking.human_review_below);
    let index = |id: &String| {
        let label_at = entries.iter().position(|e| &e.proposal_id == id).unwrap();
        c.listing[label_at]
    };
    Ranked {
        order: ranking.order.iter().map(index).collect(),
        human_review: ranking.human_review,
        scores,
    }
}

/// The round judged `how` and ranked under `weights`; with swaps also whether the forward-only
/// and reversed-only winners differ.
fn decide(c: &Competition, how: Judging, weights: &Scores) -> (Ranked, Option<bool>) {
    let combined = combine(&readings(c, how));
    let round = ranked(c, &combined.views, weights);
    let flipped = how.swaps.then(|| {
        ranked(c, &combined.forward, weights).order[0]
            != ranked(c, &combined.reversed, weights).order[0]
    });
    (round, flipped)
}

/// One configuration's figures over the test competitions.
#[derive(Default)]
struct Tally {
    /// Per round: the pass probability of ralph's pick, and the mean over the proposals.
    picked: Vec<f64>,
    random: Vec<f64>,
    oracle: f64,
    hits: usize,
    flips: usize,
    checked: usize,
    human_review: usize,
}

impl Tally {
    /// Adds `other`'s rounds: the pooled figures of several training draws.
    fn absorb(&mut self, other: Tally) {
        self.picked.extend(other.picked);
        self.random.extend(other.random);
        self.oracle += other.oracle;
        self.hits += other.hits;
        self.flips += other.flips;
        self.checked += other.checked;
        self.human_review += other.human_review;
    }

    /// `(picked − random) / (oracle − random)` over the rounds.
    fn efficiency(&self) -> f64 {
        let (picked, random) = (
            self.picked.iter().sum::<f64>(),
            self.random.iter().sum::<f64>(),
        );
        (picked - random) / (self.oracle - random)
    }
}

fn evaluate(test: &[Competition], how: Judging, weights: &Scores) -> Tally {
    evaluate_on(test, how, weights, Target::Pass)
}

/// What a proposal's outcome is: passing ralph's checks, or being merged by the maintainers.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Pass,
    Merge,
}

impl Target {
    fn of(self, p: &Proposal) -> f64 {
        match self {
            Target::Pass => p.pass,
            Target::Merge => p.merge,
        }
    }
}

/// [`evaluate`], with the rates of `target`.
fn evaluate_on(test: &[Competition], how: Judging, weights: &Scores, target: Target) -> Tally {
    let mut t = Tally::default();
    for c in test {
        let (round, flipped) = decide(c, how, weights);
        let pass: Vec<f64> = c.proposals.iter().map(|p| target.of(p)).collect();
        let best = (0..pass.len())
            .max_by(|a, b| pass[*a].total_cmp(&pass[*b]))
            .unwrap();
        t.picked.push(pass[round.order[0]]);
        t.random.push(pass.iter().sum::<f64>() / pass.len() as f64);
        t.oracle += pass[best];
        t.hits += usize::from(round.order[0] == best);
        t.human_review += usize::from(round.human_review);
        if let Some(f) = flipped {
            t.checked += 1;
            t.flips += usize::from(f);
        }
    }
    t
}

/// The mean of `d` and the standard error of that mean.
fn mean_se(d: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = d.clone().count() as f64;
    let mean = d.clone().sum::<f64>() / n;
    let var = d.map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}

fn print_header() {
    println!(
        "{:<50} picked oracle random effic.   ±se train sd    Δ vs ralph =oracle flips h.rev",
        "configuration"
    );
}

/// One row; `base` is ralph's default configuration, which the efficiency is compared with
/// round by round (the rows share their competitions, so the paired error is the smaller one);
/// `draws` are the efficiencies of the training draws pooled in `t` (tuned rows).
fn print_row(name: &str, t: &Tally, base: &Tally, draws: &[f64]) {
    let n = t.picked.len() as f64;
    let (random, oracle) = (t.random.iter().sum::<f64>() / n, t.oracle / n);
    let room = oracle - random;
    let gains = t.picked.iter().zip(&t.random).map(|(p, r)| p - r);
    let (gain, se) = mean_se(gains);
    // A pooled tally repeats the test rounds once per draw: pair each with base's round.
    let paired = t.picked.iter().zip(base.picked.iter().cycle());
    let (delta, delta_se) = mean_se(paired.map(|(a, b)| a - b));
    let spread = if draws.len() > 1 {
        format!(
            "{:.3}",
            mean_se(draws.iter().copied()).1 * (draws.len() as f64).sqrt()
        )
    } else {
        "–".to_owned()
    };
    let delta = if std::ptr::eq(t, base) {
        "base".to_owned()
    } else {
        format!("{:+.3}±{:.3}", delta / room, delta_se / room)
    };
    let flips = if t.checked > 0 {
        format!("{:.3}", t.flips as f64 / t.checked as f64)
    } else {
        "–".to_owned()
    };
    println!(
        "{name:<50} {:>6.3} {oracle:>6.3} {random:>6.3} {:>6.3} {:>5.3} {spread:>8} {delta:>13} {:>7.3} {flips:>5} {:>5.3}",
        random + gain,
        gain / room,
        se / room,
        t.hits as f64 / n,
        t.human_review as f64 / n,
    );
}

/// Which proposals of a training round are implemented, and so become outcomes.
#[derive(Clone, Copy, PartialEq)]
enum Implemented {
    /// The winner: what the ledger holds without audits.
    Winners,
    /// The winner, and the runner-up in `AUDIT_RATE` of the rounds.
    Audited,
    /// Every proposal: no ledger has this; the reference for what selection costs tune.
    Every,
}

impl Implemented {
    fn name(self) -> &'static str {
        match self {
            Implemented::Winners => "winners only",
            Implemented::Audited => "(+20% audits)",
            Implemented::Every => "every proposal",
        }
    }
}

/// The outcomes of training competitions judged as ralph does by default: `n` implemented
/// proposals, and for each the number of training rounds it took to reach it.
fn outcomes(
    n: usize,
    which: Implemented,
    defaults: &Scores,
    draw: u64,
) -> (Vec<Sample>, Vec<usize>) {
    outcomes_of(n, which, defaults, draw, Target::Pass)
}

/// [`outcomes`], each sample's outcome drawn from `target`'s probability.
fn outcomes_of(
    n: usize,
    which: Implemented,
    defaults: &Scores,
    draw: u64,
    target: Target,
) -> (Vec<Sample>, Vec<usize>) {
    let how = Judging {
        judges: 1,
        swaps: true,
        bias: bias(),
    };
    let (mut world, mut fate) = (Rng(TRAIN_SEED + draw), Rng(OUTCOME_SEED + draw));
    let (mut samples, mut rounds_at, mut rounds) = (Vec::with_capacity(n + 1), Vec::new(), 0);
    while samples.len() < n {
        let c = competition(&mut world);
        rounds += 1;
        let (round, _) = decide(&c, how, defaults);
        if round.human_review {
            continue; // a person decides; ralph implements nothing
        }
        let implemented = match which {
            Implemented::Winners => 1,
            Implemented::Audited => 1 + usize::from(fate.chance(AUDIT_RATE)),
            Implemented::Every => round.order.len(),
        };
        for &i in &round.order[..implemented] {
            samples.push(Sample {
                scores: round.scores[i],
                passed: fate.chance(target.of(&c.proposals[i])),
            });
        }
        rounds_at.resize(samples.len(), rounds);
    }
    samples.truncate(n);
    (samples, rounds_at)
}

fn weights_line(w: &Scores) -> String {
    Dimension::ALL
        .map(|d| format!("{} {:.3}", d.key(), w.get(d)))
        .join(" · ")
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn bias() -> f64 {
    env_or("RALPH_BENCH_BIAS", 0.15)
}

fn main() {
    let started = Instant::now();
    let rounds = env_or("RALPH_BENCH_ROUNDS", 5000usize).max(1);
    let bias = bias();
    let defaults = tables().default_weights;
    let mut rng = Rng(TEST_SEED);
    let test: Vec<Competition> = (0..rounds).map(|_| competition(&mut rng)).collect();
    println!(
        "decision benchmark: {rounds} test competitions of 3–5 proposals, position bias {bias} \
         (first listed; halving down the list)\n"
    );

    print_header();
    let judging = |judges, swaps, bias| Judging {
        judges,
        swaps,
        bias,
    };
    let base = evaluate(&test, judging(1, true, bias), &defaults);
    let ralph = format!(
        "default weights, {} (ralph)",
        describe(judging(1, true, bias))
    );
    print_row(&ralph, &base, &base, &[]);
    for how in [
        judging(1, false, bias),
        judging(3, false, bias),
        judging(3, true, bias),
        judging(1, false, 0.0),
        judging(1, true, 0.0),
    ] {
        let weights = if how.bias == 0.0 {
            "no position bias"
        } else {
            "default weights"
        };
        let name = format!("{weights}, {}", describe(how));
        print_row(&name, &evaluate(&test, how, &defaults), &base, &[]);
    }

    // (row name, mean training rounds, the fits of the draws, refusals)
    let mut fits: Vec<(String, f64, Vec<Tuned>, Vec<String>)> = Vec::new();
    let lambda = Options::default().lambda;
    let plans = [
        (Implemented::Winners, &TUNE_SIZES[..], lambda),
        (Implemented::Audited, &TUNE_SIZES[..], lambda),
        (Implemented::Winners, &TUNE_SIZES[..], 0.0),
        (Implemented::Every, &[REFERENCE_OUTCOMES][..], lambda),
        (Implemented::Every, &[REFERENCE_OUTCOMES][..], 0.0),
    ];
    for (which, sizes, lambda) in plans {
        let options = Options {
            lambda,
            ..Options::default()
        };
        let ledgers: Vec<_> = (0..TRAIN_DRAWS)
            .map(|draw| outcomes(sizes[sizes.len() - 1], which, &defaults, draw))
            .collect();
        for &n in sizes {
            let pull = if lambda == Options::default().lambda {
                String::new()
            } else {
                format!(", λ {lambda}")
            };
            let name = format!("tuned: {n} {}{pull}", which.name());
            let (mut tuned, mut refused, mut rounds) = (Vec::new(), Vec::new(), 0.0);
            for (samples, rounds_at) in &ledgers {
                rounds += rounds_at[n - 1] as f64 / TRAIN_DRAWS as f64;
                match tune(&samples[..n], &defaults, &options) {
                    Ok(t) => tuned.push(t),
                    Err(why) => refused.push(why.to_string()),
                }
            }
            let mut rows = vec![judging(1, true, bias)];
            if which == Implemented::Audited && n == TUNE_SIZES[TUNE_SIZES.len() - 1] {
                rows.extend([judging(1, false, bias), judging(3, true, bias)]);
            }
            for how in rows.into_iter().filter(|_| !tuned.is_empty()) {
                let (mut pooled, mut draws) = (Tally::default(), Vec::new());
                for t in &tuned {
                    // What `ralph tune --write` leaves: the suggestion only when it is better.
                    let weights = if t.suggested.log_loss < t.current.log_loss {
                        t.suggested_weights
                    } else {
                        defaults
                    };
                    let tally = evaluate(&test, how, &weights);
                    draws.push(tally.efficiency());
                    pooled.absorb(tally);
                }
                print_row(
                    &format!("{name}, {}", describe(how)),
                    &pooled,
                    &base,
                    &draws,
                );
            }
            fits.push((name, rounds, tuned, refused));
        }
    }

    println!(
        "\ntune (λ {lambda} unless said, 5-fold CV; log-loss 0.693 is a coin flip), means over \
         {TRAIN_DRAWS} training draws"
    );
    println!("  default:   {}", weights_line(&defaults));
    for (name, rounds, tuned, refused) in &fits {
        for why in refused {
            println!("  {name}: no suggestion in one draw: {why}");
        }
        if tuned.is_empty() {
            continue;
        }
        let m = tuned.len() as f64;
        let mean = |f: &dyn Fn(&Tuned) -> f64| tuned.iter().map(f).sum::<f64>() / m;
        let mut weights = Scores::default();
        for d in Dimension::ALL {
            weights.set(d, mean(&|t| t.suggested_weights.get(d)));
        }
        let better = tuned
            .iter()
            .filter(|t| t.suggested.log_loss < t.current.log_loss)
            .count();
        println!(
            "  {name} ({rounds:.0} training rounds, {:.0} passes):\n    suggested: {}\n    \
             CV log-loss {:.4} → {:.4}, Brier {:.4} → {:.4} (current → suggested; \
             better, so written, in {better} of {} draws)",
            mean(&|t| t.passes as f64),
            weights_line(&weights),
            mean(&|t| t.current.log_loss),
            mean(&|t| t.suggested.log_loss),
            mean(&|t| t.current.brier),
            mean(&|t| t.suggested.brier),
            tuned.len(),
        );
    }
    merge_variant(&test, &defaults, bias);
    println!("\ntook {:.2} s", started.elapsed().as_secs_f64());
}

/// The merge-outcome variant: the same test competitions judged by the rate at which the pick
/// is merged (it passes and the maintainers take it), for the default weights and for the
/// weights `tune` leaves when fitted to ralph's checks and when fitted to merges (`ralph tune`
/// uses merges once enough pull requests settled), each on winners only.
fn merge_variant(test: &[Competition], defaults: &Scores, bias: f64) {
    println!(
        "\nmerge outcome: maintainers merge a passing change with P σ({MERGE_BASE} + {MERGE_SLOPE}·z_risk); \
         rates below are merge rates"
    );
    print_header();
    let how = Judging {
        judges: 1,
        swaps: true,
        bias,
    };
    let base = evaluate_on(test, how, defaults, Target::Merge);
    print_row(
        "default weights, 1 judge, swapped (ralph)",
        &base,
        &base,
        &[],
    );
    for (target, label) in [(Target::Pass, "checks"), (Target::Merge, "merges")] {
        let ledgers: Vec<_> = (0..TRAIN_DRAWS)
            .map(|draw| outcomes_of(TUNE_SIZES[1], Implemented::Winners, defaults, draw, target))
            .collect();
        for &n in &TUNE_SIZES {
            let (mut pooled, mut draws, mut weights_sum) =
                (Tally::default(), Vec::new(), Scores::default());
            for (samples, _) in &ledgers {
                let weights = match tune(&samples[..n], defaults, &Options::default()) {
                    Ok(t) if t.suggested.log_loss < t.current.log_loss => t.suggested_weights,
                    _ => *defaults,
                };
                for d in Dimension::ALL {
                    weights_sum.set(d, weights_sum.get(d) + weights.get(d) / TRAIN_DRAWS as f64);
                }
                let tally = evaluate_on(test, how, &weights, Target::Merge);
                draws.push(tally.efficiency());
                pooled.absorb(tally);
            }
            print_row(
                &format!("tuned on {n} {label}, 1 judge, swapped"),
                &pooled,
                &base,
                &draws,
            );
            println!("    weights left: {}", weights_line(&weights_sum));
        }
    }
}
