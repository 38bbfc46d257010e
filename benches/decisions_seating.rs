//! The decision benchmark's seating experiment (`cargo bench --bench decisions_seating`): who
//! should propose? A simulated market of eight bots with hidden skill per label and price,
//! 1000 issues, merges as the outcome; every policy meets the same issues.
//!
//! # The market (deterministic, seeded SplitMix64)
//!
//! Issues carry one of three labels (`bug`, `feature`, `docs`). A bot's hidden skill `p` on a
//! label is the chance that its proposal, implemented, is merged:
//!
//! | bot | vendor | price per proposal | skill |
//! |---|---|---|---|
//! | `cheap_a` | A | $0.02 | 0.20 |
//! | `mid_a` | A | $0.15 | 0.40 |
//! | `strong_a` | A | $1.00 | 0.60 |
//! | `fast_b` | B | $0.05 | 0.30 |
//! | `big_b` | B | $0.60 | 0.50 |
//! | `docs_c` | C | $0.10 | 0.20, 0.60 on `docs` |
//! | `local_d` | D | $0.005 | 0.12 |
//! | `drift_e` | E | $0.30 | 0.15, then 0.70 from issue 300 (a vendor's new model under the same id) |
//!
//! plus, per world, a label offset `N(0, 0.07)` for every bot and label. In a round every
//! seated bot's proposal has a quality `q = p + N(0, 0.10)` (the same draw whichever policy
//! seats it: common random numbers); the judges see `q + N(0, 0.15)` and the best-looking one
//! wins; it passes the checks with probability `min(0.95, q + 0.2)` and, having passed, is
//! merged with probability `q / pass`, so a winner is merged with probability `q`. A failed
//! round gets one replan round, seated afresh; a failed replan merges nothing. A proposal
//! costs the bot's price × `U(0.8, 1.2)`.
//!
//! # The policies
//!
//! - every bot in every round (what ralph does without `seats`);
//! - the 3 bots of highest ledger weight (ralph's own fold of the events this market writes);
//! - `seats = 3` (Thompson): the draw before seats were priced — every seat filled by the best
//!   samples from the evidence of `ledger::seats`, its label weighting and its memory (0.95, as
//!   it was), with neither anchor, departures, suspects nor idle bots (a merge worth $10⁹, `drift_odds`
//!   and `suspect_odds` infinite);
//! - the same with `max_cost_per_issue = $2.00`, and with `$1.00` (the replan gets what the
//!   first round left);
//! - the same without memory (`memory = 1`), to show what forgetting is for;
//! - `seats ≤ 3 priced`: ralph's draw as it is — the anchor by record, the other seats priced
//!   at `value_per_merge` (the table's, or each of `RALPH_BENCH_VALUES`, comma-separated), with
//!   `misjudge`, departures, and a suspect and an idle bot tried in the last seats
//!   (`scoring/seating.toml`) — and the same under a $1.00 cap;
//! - `seats ≤ 3 priced, value tuned by the ledger`: the same draw as ralph runs it without
//!   `[marketplace] value_per_merge` — the table's value until 10 rounds carry their seating,
//!   then in every round the value the ledger tunes from its latest 200
//!   (`ledger::seats::tuned_value`: `value_multiple` times what a merge costs when every bot
//!   proposes; `RALPH_BENCH_MULTIPLE` tries another);
//! - 3 bots at random, for reference;
//! - the oracle: the 3 bots of highest true skill for the issue's label (it knows the drift).
//!
//! Every policy's rounds write the events ralph writes (`market::awards`, the deltas of
//! `scoring/deltas.toml`, each proposal's cost, the seating; `merged`/`closed_unmerged` after
//! a passing round), and the ledger policies read them back. Figures are means over
//! `RALPH_BENCH_WORLDS` worlds (default 48, shared among the cores; `RALPH_BENCH_FIRST_WORLD`
//! = N plays others, from the N-th on): merged pull requests, proposal cost, cost per merged
//! pull request, regret (the oracle's merges minus the policy's) after 100, 300 and 1000
//! issues, the share of issues that seated `drift_e` before and after its drift, and how many
//! issues after the drift the policy took to seat it in at least half of 20 consecutive issues. `RALPH_BENCH_MEMORY` tries another `memory` for the ledger
//! policies; `RALPH_BENCH_STALE`, `RALPH_BENCH_ODDS`, `RALPH_BENCH_SUSPECT`,
//! `RALPH_BENCH_WINDOW` and `RALPH_BENCH_MISJUDGE` another `stale_after`, `drift_odds`,
//! `suspect_odds`, `drift_window` and `misjudge` for the priced ones; `RALPH_BENCH_NEW_ONLY` leaves out the draw before prices, the caps
//! and the random seats. Each market then says whether the priced draw met its goals against
//! every bot (cost per merged pull request at most half, merges at least every bot's less one
//! standard error, regret after 1000 issues at most every bot's — with the difference of the two
//! over the same worlds and its standard error —, the drift noticed within 10 issues) and how
//! many bots each policy seated per round, first rounds and replans apart; and the value the
//! ledger tuned, at issues 30, 100, 300 and 1000. Merges and the cost
//! per merged pull request also carry their 95% interval over the worlds (mean ± 1.96 standard
//! errors).
//!
//! # Four markets
//!
//! Every policy meets four markets, each with the same issues and draws:
//!
//! - `priced by skill`: the table above, where the better bots cost more;
//! - `price unrelated to skill`: the same bots and skills, the prices shuffled (`cheap_a` $1.00,
//!   `mid_a` $0.005, `strong_a` $0.02, `fast_b` $0.60, `big_b` $0.05, `docs_c` $0.30, `local_d`
//!   $0.15, `drift_e` $0.10);
//! - `a bot that fails half its calls`: the first market, but `big_b`'s call fails in half its
//!   rounds (drawn apart from the rounds' draws, so the other markets' numbers do not move):
//!   its cost is paid and it delivers nothing, neither a proposal to judge nor an event;
//! - `every price five times`: the first market with every price × 5 (`strong_a` $5.00 a
//!   proposal), where a value of a merge chosen for the first market's prices is too low.
//!
//! `RALPH_BENCH_MARKETS=N` runs the first N markets only.

use ralph::ledger::seats::{seat_records, tuned_value};
use ralph::ledger::{fold, Event, FoldParams};
use ralph::market::seating::{draw, SeatAsk, Seating};
use ralph::market::{awards, tables, Outcome, Phase, RoundFacts, SeatingParams};
use ralph::mix::SplitMix64;
use std::time::Instant;

const ISSUES: usize = 1000;
const LABELS: [&str; 3] = ["bug", "feature", "docs"];
const SEATS: u32 = 3;
const DRIFT_AT: usize = 300;
const CHECKPOINTS: [usize; 3] = [100, 300, 1000];
const NOTICE_WINDOW: usize = 20;

/// A bot of the market: id, price per proposal, skill on each label (before the world's
/// offsets).
#[derive(Clone)]
struct Bot {
    id: &'static str,
    price: f64,
    skill: [f64; 3],
}

const fn bot(id: &'static str, price: f64, skill: [f64; 3]) -> Bot {
    Bot { id, price, skill }
}

const MARKET: [Bot; 8] = [
    bot("cheap_a", 0.02, [0.20; 3]),
    bot("mid_a", 0.15, [0.40; 3]),
    bot("strong_a", 1.00, [0.60; 3]),
    bot("fast_b", 0.05, [0.30; 3]),
    bot("big_b", 0.60, [0.50; 3]),
    bot("docs_c", 0.10, [0.20, 0.20, 0.60]),
    bot("local_d", 0.005, [0.12; 3]),
    bot("drift_e", 0.30, [0.15; 3]),
];
const DRIFTER: usize = 7;
/// The bot that fails half its calls in the third market (`big_b`).
const FLAKY: usize = 4;

/// Which market a world is of.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    PricedBySkill,
    PriceUnrelated,
    HalfFailing,
    Dear,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::PricedBySkill => "priced by skill",
            Kind::PriceUnrelated => "price unrelated to skill",
            Kind::HalfFailing => "a bot that fails half its calls (big_b)",
            Kind::Dear => "priced by skill, every price five times",
        }
    }

    /// The market's bots: the table's, with the prices shuffled where they are unrelated.
    fn bots(self) -> Vec<Bot> {
        const SHUFFLED: [f64; 8] = [1.00, 0.005, 0.02, 0.60, 0.05, 0.30, 0.15, 0.10];
        MARKET
            .iter()
            .enumerate()
            .map(|(i, b)| Bot {
                price: match self {
                    Kind::PriceUnrelated => SHUFFLED[i],
                    Kind::Dear => 5.0 * b.price,
                    _ => b.price,
                },
                ..b.clone()
            })
            .collect()
    }
}
const DRIFTED: f64 = 0.70;
/// The memory of the draw before seats were priced.
const OLD_MEMORY: f64 = 0.95;
/// A value of a merge so high that every seat pays: the draw before seats were priced.
const FILL: f64 = 1e9;

fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn normal(rng: &mut SplitMix64) -> f64 {
    let u = 1.0 - unit(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * unit(rng)).cos()
}

/// What a round holds for every bot, drawn once: the same whoever is seated.
#[derive(Clone)]
struct Draws {
    quality: Vec<f64>,
    judged: Vec<f64>,
    pass: Vec<f64>,
    merge: Vec<f64>,
    cost: Vec<f64>,
}

/// One issue of a world: its label and the draws of its two possible rounds.
struct Issue {
    label: usize,
    rounds: [Draws; 2],
}

/// A world: the bots' skills (with this world's label offsets) and its issues.
struct World {
    skill: Vec<[f64; 3]>,
    issues: Vec<Issue>,
    seed: u64,
    kind: Kind,
    bots: Vec<Bot>,
}

impl World {
    fn new(seed: u64, kind: Kind) -> World {
        let mut rng = SplitMix64::new(seed);
        let skill = MARKET
            .iter()
            .map(|b| std::array::from_fn(|l| b.skill[l] + 0.07 * normal(&mut rng)))
            .collect();
        let issues = (0..ISSUES)
            .map(|_| Issue {
                label: rng.below(3) as usize,
                rounds: [round_draws(&mut rng), round_draws(&mut rng)],
            })
            .collect();
        World {
            skill,
            issues,
            seed,
            kind,
            bots: kind.bots(),
        }
    }

    /// Bot `b`'s price for a proposal of round `draws`.
    fn cost(&self, b: usize, draws: &Draws) -> f64 {
        self.bots[b].price * draws.cost[b]
    }

    /// Whether bot `b`'s call fails in round `round` of issue `at` (the third market's flaky
    /// bot, half the time), drawn apart from the rounds' draws.
    fn fails(&self, b: usize, at: usize, round: u32) -> bool {
        if self.kind != Kind::HalfFailing || b != FLAKY {
            return false;
        }
        let mut rng = SplitMix64::new(ralph::mix::finalize(
            self.seed ^ 0xFA11 ^ ((at as u64) << 8 | u64::from(round)),
        ));
        unit(&mut rng) < 0.5
    }

    /// Bot `b`'s true skill on `label` at issue `at`.
    fn skill(&self, b: usize, label: usize, at: usize) -> f64 {
        let shift = if b == DRIFTER && at >= DRIFT_AT {
            DRIFTED - MARKET[b].skill[label]
        } else {
            0.0
        };
        (self.skill[b][label] + shift).clamp(0.02, 0.95)
    }
}

fn round_draws(rng: &mut SplitMix64) -> Draws {
    let n = MARKET.len();
    let mut each = |f: &mut dyn FnMut(&mut SplitMix64) -> f64| (0..n).map(|_| f(rng)).collect();
    Draws {
        quality: each(&mut |r| 0.10 * normal(r)),
        judged: each(&mut |r| 0.15 * normal(r)),
        pass: each(&mut unit),
        merge: each(&mut unit),
        cost: each(&mut |r| 0.8 + 0.4 * unit(r)),
    }
}

/// Who decides the seats.
#[derive(Clone, Copy, PartialEq)]
enum Policy {
    All,
    TopWeight,
    Thompson {
        cap: Option<f64>,
        memory: bool,
        /// `value_per_merge`; `None`: every seat filled (the draw before seats were priced).
        value: Option<f64>,
        /// The value the ledger tunes once it can (`value_per_merge` unset), `value` until then.
        tuned: bool,
    },
    Random,
    Oracle,
}

impl Policy {
    fn name(self) -> String {
        match self {
            Policy::All => "every bot, every round (no seats)".into(),
            Policy::TopWeight => "top 3 by ledger weight".into(),
            Policy::Thompson {
                cap,
                memory,
                value,
                tuned,
            } => format!(
                "{}{}{}",
                match value {
                    Some(_) if tuned => "seats ≤ 3 priced, value tuned by the ledger".to_owned(),
                    Some(v) => format!("seats ≤ 3 priced, value_per_merge ${v:.0}"),
                    None => "seats = 3 (Thompson)".to_owned(),
                },
                cap.map(|c| format!(", max_cost_per_issue ${c:.2}"))
                    .unwrap_or_default(),
                if memory { "" } else { ", no memory" }
            ),
            Policy::Random => "3 seats at random (reference)".into(),
            Policy::Oracle => "oracle: 3 best by hidden skill".into(),
        }
    }
}

/// What a policy did over one world's issues.
#[derive(Default, Clone)]
struct Run {
    /// Merged pull requests after each issue.
    merged_by: Vec<u32>,
    cost: f64,
    /// Whether the drifting bot had a seat, per issue (any round).
    drifter_seated: Vec<bool>,
    seats: Vec<u32>,
    /// Rounds by how many bots were seated (0 to 3): first rounds, then replans.
    counts: [[u32; SEATS as usize + 1]; 2],
    /// The value of a merge each issue's first round was priced at.
    values: Vec<f64>,
}

impl Run {
    fn merged(&self) -> u32 {
        self.merged_by.last().copied().unwrap_or(0)
    }

    /// Issues after the drift until the drifting bot had a seat in at least half of
    /// `NOTICE_WINDOW` consecutive issues; `None`: never.
    fn noticed(&self) -> Option<usize> {
        let seated = &self.drifter_seated;
        (DRIFT_AT..=ISSUES - NOTICE_WINDOW).find_map(|t| {
            let n = seated[t..t + NOTICE_WINDOW].iter().filter(|s| **s).count();
            (2 * n >= NOTICE_WINDOW).then_some(t - DRIFT_AT)
        })
    }
}

/// A market run of one policy: the ledger it writes and reads, and what it spent.
struct Market<'w> {
    world: &'w World,
    policy: Policy,
    params: SeatingParams,
    events: Vec<Event>,
    ids: Vec<String>,
    run: Run,
    stamp: i64,
}

impl<'w> Market<'w> {
    fn new(world: &'w World, policy: Policy) -> Market<'w> {
        let mut params = tables().seating;
        if let Some(m) = env("RALPH_BENCH_MEMORY") {
            params.memory = m;
        }
        if let Some(s) = env("RALPH_BENCH_STALE") {
            params.stale_after = s;
        }
        if let Some(o) = env("RALPH_BENCH_ODDS") {
            params.drift_odds = o;
        }
        if let Some(m) = env("RALPH_BENCH_MISJUDGE") {
            params.misjudge = m;
        }
        if let Some(m) = env("RALPH_BENCH_MULTIPLE") {
            params.value_multiple = m;
        }
        if let Some(o) = env("RALPH_BENCH_SUSPECT") {
            params.suspect_odds = o;
        }
        if let Some(w) = env("RALPH_BENCH_WINDOW") {
            params.drift_window = w;
        }
        if let Policy::Thompson { memory: false, .. } = policy {
            params.memory = 1.0;
        }
        // The draw before seats were priced knew neither departures nor idle bots, and
        // forgot faster (its memory was 0.95).
        if let Policy::Thompson {
            value: None,
            memory,
            ..
        } = policy
        {
            if memory && env::<f64>("RALPH_BENCH_MEMORY").is_none() {
                params.memory = OLD_MEMORY;
            }
            params.drift_odds = f64::INFINITY;
            params.suspect_odds = f64::INFINITY;
            params.stale_after = u32::MAX;
        }
        Market {
            world,
            policy,
            params,
            events: Vec::new(),
            ids: MARKET.iter().map(|b| b.id.to_owned()).collect(),
            run: Run {
                seats: vec![0; MARKET.len()],
                ..Run::default()
            },
            stamp: 0,
        }
    }

    /// The seats of round `round` of issue `at`, and the seating record when ralph drew them.
    fn seat(&self, at: usize, round: u32, spent: f64) -> (Vec<usize>, Option<Seating>) {
        let label = self.world.issues[at].label;
        match self.policy {
            Policy::All => ((0..MARKET.len()).collect(), None),
            Policy::Oracle => {
                let mut order: Vec<usize> = (0..MARKET.len()).collect();
                let skill = |b: usize| self.world.skill(b, label, at);
                order.sort_by(|a, b| skill(*b).total_cmp(&skill(*a)));
                (order[..SEATS as usize].to_vec(), None)
            }
            Policy::TopWeight => (self.top_weight(), None),
            Policy::Random => {
                let mut rng =
                    SplitMix64::new(self.world.seed ^ ((at as u64) << 8 | u64::from(round)));
                let mut order: Vec<usize> = (0..MARKET.len()).collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.below(i as u64 + 1) as usize);
                }
                (order[..SEATS as usize].to_vec(), None)
            }
            Policy::Thompson {
                cap, value, tuned, ..
            } => {
                let labels = vec![LABELS[label].to_owned()];
                let refs: Vec<&Event> = self.events.iter().collect();
                let records = seat_records(&self.params, &self.ids, &refs, &labels);
                // As ralph does without `[marketplace] value_per_merge`.
                let value = value.map(|v| {
                    tuned
                        .then(|| {
                            tuned_value(&self.params, &self.ids, &refs, SEATS, self.params.misjudge)
                        })
                        .flatten()
                        .map_or(v, |t| t.value_usd)
                });
                let candidates: Vec<_> = records.iter().map(|r| r.candidate(None)).collect();
                let ask = SeatAsk {
                    seats: SEATS,
                    value_per_merge: value.unwrap_or(FILL),
                    stale_after: self.params.stale_after,
                    suspect_odds: self.params.suspect_odds,
                    anchor: value.is_some(),
                    misjudge: if value.is_some() {
                        self.params.misjudge
                    } else {
                        0.0
                    },
                    budget_usd: cap.map(|c| (c - spent).max(0.0)),
                    seed: ralph::mix::finalize(self.world.seed ^ (at as u64 + 1)),
                    // The seed differs per issue already: 0 leaves it as it is.
                    issue: 0,
                    round,
                    labels,
                };
                let s = draw(&candidates, &ask);
                let seated = s
                    .seated()
                    .map(|d| self.ids.iter().position(|id| *id == d.bot_id).unwrap())
                    .collect();
                (seated, Some(s))
            }
        }
    }

    /// The three heaviest bots of ralph's fold of the events so far.
    fn top_weight(&self) -> Vec<usize> {
        let params = FoldParams {
            bots: self.ids.clone(),
            weight_min: 0.05,
            weight_max: 0.60,
            pool: 80,
            seats: None,
        };
        let folded = fold(&params, self.events.iter());
        folded.bots[..SEATS as usize]
            .iter()
            .map(|s| self.ids.iter().position(|id| *id == s.bot_id).unwrap())
            .collect()
    }

    /// Plays issue `at`: a round, and a replan when it failed. Returns whether it merged.
    fn issue(&mut self, at: usize) -> bool {
        let mut spent = 0.0;
        for (round, phase) in [(1u32, Phase::Initial), (2, Phase::Replan)] {
            let (seated, seating) = self.seat(at, round, spent);
            if round == 1 {
                let value = seating.as_ref().and_then(|s| s.value_per_merge);
                self.run.values.push(value.unwrap_or(f64::NAN));
            }
            if seated.is_empty() {
                self.run.counts[round as usize - 1][0] += 1;
                return false;
            }
            let draws = &self.world.issues[at].rounds[round as usize - 1];
            spent += seated
                .iter()
                .map(|&b| self.world.cost(b, draws))
                .sum::<f64>();
            for &b in &seated {
                self.run.seats[b] += 1;
            }
            self.run.counts[round as usize - 1][seated.len().min(SEATS as usize)] += 1;
            if seated.contains(&DRIFTER) {
                self.run.drifter_seated[at] = true;
            }
            let (passed, merged) = self.play(at, phase, &seated, seating);
            if passed {
                return merged;
            }
        }
        false
    }

    /// One round of `seated` bots: the judged winner implemented, the events written. Returns
    /// whether it passed, and whether it was merged.
    fn play(
        &mut self,
        at: usize,
        phase: Phase,
        seated: &[usize],
        seating: Option<Seating>,
    ) -> (bool, bool) {
        let world = self.world;
        let issue = &world.issues[at];
        let draws = &issue.rounds[usize::from(phase == Phase::Replan)];
        let round = if phase == Phase::Initial { 1 } else { 2 };
        // Every seated bot's call is paid; one that fails delivers nothing.
        self.run.cost += seated.iter().map(|&b| world.cost(b, draws)).sum::<f64>();
        let delivered: Vec<usize> = seated
            .iter()
            .copied()
            .filter(|&b| !world.fails(b, at, round))
            .collect();
        if delivered.is_empty() {
            return (false, false);
        }
        let seated = &delivered[..];
        let quality =
            |b: usize| (world.skill(b, issue.label, at) + draws.quality[b]).clamp(0.0, 1.0);
        let winner = *seated
            .iter()
            .max_by(|a, b| {
                (quality(**a) + draws.judged[**a]).total_cmp(&(quality(**b) + draws.judged[**b]))
            })
            .unwrap();
        let q = quality(winner);
        let pass = (q + 0.2).min(0.95);
        let passed = draws.pass[winner] < pass;
        let merged = passed && draws.merge[winner] < q / pass;
        let facts = RoundFacts {
            phase,
            winner: self.ids[winner].clone(),
            passed,
            accuracy: 0.5,
            proposers: seated.iter().map(|&b| self.ids[b].clone()).collect(),
            all_bots: seated.iter().map(|&b| self.ids[b].clone()).collect(),
            resubmitted_same: Vec::new(),
        };
        // What each seated bot's proposal cost, as the competition adds it to the seating.
        let seating = seating.map(|mut s| {
            for d in s.bots.iter_mut().filter(|d| d.seated) {
                let b = self.ids.iter().position(|id| *id == d.bot_id).unwrap();
                d.spent_usd = Some(self.world.cost(b, draws));
            }
            s
        });
        for award in awards(&facts, &tables().deltas) {
            let b = self.ids.iter().position(|id| *id == award.bot_id).unwrap();
            let mut e = self.event(at, &award.bot_id, award.outcome, award.weight_delta);
            e.round = Some(round);
            e.cost_usd = Some(self.world.cost(b, draws));
            e.seating = seating.clone();
            self.events.push(e);
        }
        if passed {
            let outcome = if merged {
                Outcome::Merged
            } else {
                Outcome::ClosedUnmerged
            };
            let delta = tables().deltas.base(outcome);
            let e = self.event(at, &self.ids[winner].clone(), outcome, delta);
            self.events.push(e);
        }
        (passed, merged)
    }

    fn event(&mut self, at: usize, bot: &str, outcome: Outcome, delta: f64) -> Event {
        self.stamp += 1;
        let mut e = Event::new(at as u64 + 1, bot, outcome, delta);
        e.timestamp = chrono::DateTime::from_timestamp(1_800_000_000 + self.stamp, 0).unwrap();
        e.run_id = Some(format!("run-{at}"));
        e
    }

    fn play_all(mut self) -> Run {
        self.run.drifter_seated = vec![false; ISSUES];
        let mut merged = 0;
        for at in 0..ISSUES {
            merged += u32::from(self.issue(at));
            self.run.merged_by.push(merged);
        }
        self.run
    }
}

/// A number from the environment, when set and valid.
fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The mean of `values`.
fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The mean of `values` and half its 95% interval over the worlds (1.96 standard errors).
fn interval(values: &[f64]) -> (f64, f64) {
    let m = mean(values.iter().copied());
    let n = values.len() as f64;
    let var = values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, 1.96 * (var / n).sqrt())
}

fn row(policy: Policy, runs: &[Run], oracle: &[Run]) {
    let per_world: Vec<f64> = runs.iter().map(|r| f64::from(r.merged())).collect();
    let (merged, merged_ci) = interval(&per_world);
    let cost = mean(runs.iter().map(|r| r.cost));
    let per_merge: Vec<f64> = runs
        .iter()
        .map(|r| r.cost / f64::from(r.merged().max(1)))
        .collect();
    let (_, per_merge_ci) = interval(&per_merge);
    let regret_at = |n: usize| -> Vec<f64> {
        runs.iter()
            .zip(oracle)
            .map(|(r, o)| f64::from(o.merged_by[n - 1]) - f64::from(r.merged_by[n - 1]))
            .collect()
    };
    let mut regret: Vec<String> = CHECKPOINTS
        .iter()
        .map(|&n| format!("{:>+7.1}", mean(regret_at(n).into_iter())))
        .collect();
    // The standard error of the last, over the worlds.
    let last = regret_at(ISSUES);
    let m = mean(last.iter().copied());
    let var =
        last.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (last.len() as f64 - 1.0).max(1.0);
    regret.push(format!("±{:<5.1}", (var / last.len() as f64).sqrt()));
    let noticed: Vec<usize> = runs.iter().filter_map(Run::noticed).collect();
    // The share of issues that seated the drifting bot before the drift, and after it.
    let share = |from: usize, to: usize| {
        100.0
            * mean(runs.iter().map(|r| {
                r.drifter_seated[from..to].iter().filter(|s| **s).count() as f64
                    / (to - from) as f64
            }))
    };
    let split = format!(
        "{:>3.0}% → {:>3.0}%",
        share(0, DRIFT_AT),
        share(DRIFT_AT, ISSUES)
    );
    let drift = if policy == Policy::All {
        "always seated".to_owned()
    } else if noticed.is_empty() {
        format!("never (0 of {})", runs.len())
    } else {
        format!(
            "{:.0} issues ({} of {})",
            mean(noticed.iter().map(|&n| n as f64)),
            noticed.len(),
            runs.len()
        )
    };
    println!(
        "{:<48} {merged:>7.1} ±{merged_ci:<5.1} {cost:>9.2} {:>7.3} ±{per_merge_ci:<6.3} {} {split}  {drift}",
        policy.name(),
        cost / merged,
        regret.join(" ")
    );
}

/// The goals of the priced seats against every bot, in the same run: cost per merged pull
/// request at most half, merges at least every bot's less one standard error, regret after
/// every issue at most every bot's, the drift noticed within 10 issues.
fn goals(name: &str, every: &[Run], priced: &[Run], oracle: &[Run]) {
    let merged =
        |runs: &[Run]| -> Vec<f64> { runs.iter().map(|r| f64::from(r.merged())).collect() };
    let per_merge = |runs: &[Run]| {
        mean(runs.iter().map(|r| r.cost)) / mean(runs.iter().map(|r| f64::from(r.merged())))
    };
    let (every_merged, ci) = interval(&merged(every));
    let se = ci / 1.96;
    let (priced_merged, _) = interval(&merged(priced));
    let regret = |runs: &[Run]| {
        mean(
            runs.iter()
                .zip(oracle)
                .map(|(r, o)| f64::from(o.merged()) - f64::from(r.merged())),
        )
    };
    let ratio = per_merge(priced) / per_merge(every);
    let noticed: Vec<f64> = priced
        .iter()
        .filter_map(Run::noticed)
        .map(|n| n as f64)
        .collect();
    let drift = (noticed.len() == priced.len()).then(|| mean(noticed.into_iter()));
    let mark = |ok: bool| if ok { "met" } else { "NOT met" };
    println!("\ngoals of `{name}` against every bot:");
    println!(
        "  cost per merged PR {ratio:.3}× every bot's (≤ 0.5×): {}",
        mark(ratio <= 0.5)
    );
    println!(
        "  merged {priced_merged:.1} against {every_merged:.1} − {se:.1} (one standard error): {}",
        mark(priced_merged >= every_merged - se)
    );
    // The same worlds under both policies: the priced draw's regret less every bot's (every
    // bot's merges less the draw's) per world, and its standard error.
    let differences: Vec<f64> = every
        .iter()
        .zip(priced)
        .map(|(e, p)| f64::from(e.merged()) - f64::from(p.merged()))
        .collect();
    let (difference, difference_ci) = interval(&differences);
    println!(
        "  regret after {ISSUES} issues {:.1} against every bot's {:.1} (less every bot's over the same worlds: {difference:+.1} ± {:.1} se): {}",
        regret(priced),
        regret(every),
        difference_ci / 1.96,
        mark(regret(priced) <= regret(every))
    );
    println!(
        "  drift noticed after {} (≤ 10): {}",
        drift.map_or("never, in some world".to_owned(), |d| format!(
            "{d:.0} issues"
        )),
        mark(drift.is_some_and(|d| d <= 10.0))
    );
}

/// How many bots the rounds seated: the share of first rounds and of replans with 1, 2 or 3.
fn counts(name: &str, runs: &[Run]) {
    let part = |round: usize| {
        let total: u32 = runs
            .iter()
            .map(|r| r.counts[round].iter().sum::<u32>())
            .sum();
        let each: Vec<String> = (0..=SEATS as usize)
            .filter(|&n| n > 0 || runs.iter().any(|r| r.counts[round][0] > 0))
            .map(|n| {
                let k: u32 = runs.iter().map(|r| r.counts[round][n]).sum();
                format!(
                    "{n}: {:.0}%",
                    100.0 * f64::from(k) / f64::from(total.max(1))
                )
            })
            .collect();
        let mean = runs
            .iter()
            .flat_map(|r| {
                r.counts[round]
                    .iter()
                    .enumerate()
                    .map(|(n, k)| (n as u32 * k, *k))
            })
            .fold((0, 0), |(s, t), (a, b)| (s + a, t + b));
        format!(
            "{} ({:.2} a round, {} rounds)",
            each.join(" · "),
            f64::from(mean.0) / f64::from(mean.1.max(1)),
            total
        )
    };
    println!("  {name}: first rounds {} | replans {}", part(0), part(1));
}

fn shares(name: &str, runs: &[Run]) {
    let total: f64 = mean(runs.iter().map(|r| r.seats.iter().sum::<u32>() as f64));
    let each: Vec<String> = MARKET
        .iter()
        .enumerate()
        .map(|(b, bot)| {
            let s = mean(runs.iter().map(|r| f64::from(r.seats[b])));
            format!("{} {:.0}%", bot.id, 100.0 * s / total)
        })
        .collect();
    println!("  {name}: {}", each.join(" · "));
}

/// One policy over `worlds`, the worlds shared among the machine's cores; the runs in the
/// worlds' order.
fn play_worlds(worlds: &[World], policy: Policy) -> Vec<Run> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = worlds.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = worlds
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|w| Market::new(w, policy).play_all())
                        .collect::<Vec<Run>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a world's run panicked"))
            .collect()
    })
}

/// Every policy on `worlds`: the table, and the shares of seats.
fn market(worlds: &[World]) {
    let fill = |cap: Option<f64>, memory: bool| Policy::Thompson {
        cap,
        memory,
        value: None,
        tuned: false,
    };
    let priced = |value: f64, cap: Option<f64>| Policy::Thompson {
        cap,
        memory: true,
        value: Some(value),
        tuned: false,
    };
    let tuned = Policy::Thompson {
        cap: None,
        memory: true,
        value: Some(tables().seating.value_per_merge),
        tuned: true,
    };
    let values: Vec<f64> = std::env::var("RALPH_BENCH_VALUES")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![tables().seating.value_per_merge]);
    let mut policies = vec![Policy::All, Policy::TopWeight];
    if std::env::var("RALPH_BENCH_NEW_ONLY").is_err() {
        policies.extend([
            fill(None, true),
            fill(Some(2.0), true),
            fill(Some(1.0), true),
            fill(None, false),
            Policy::Random,
        ]);
    }
    policies.extend(values.iter().map(|&v| priced(v, None)));
    policies.push(tuned);
    policies.push(priced(values[0], Some(1.0)));
    policies.push(Policy::Oracle);
    let runs: Vec<Vec<Run>> = policies.iter().map(|&p| play_worlds(worlds, p)).collect();
    let oracle = runs.last().unwrap();
    println!(
        "{:<48} {:>14} {:>9} {:>14} {:>7} {:>7} {:>7} {:<6} {:<12}  drift_e noticed after",
        "policy",
        "merged ±95%",
        "cost $",
        "$/merged ±95%",
        "reg@100",
        "reg@300",
        "reg@1k",
        "±se",
        "drift_e seat"
    );
    for (p, r) in policies.iter().zip(&runs) {
        row(*p, r, oracle);
    }
    for (at, p) in policies.iter().enumerate() {
        if matches!(
            p,
            Policy::Thompson {
                value: Some(_),
                cap: None,
                ..
            }
        ) {
            goals(&p.name(), &runs[0], &runs[at], oracle);
        }
    }
    println!("\nthe value of a merge the ledger tuned (mean over the worlds, at issue 30, 100, 300, 1000):");
    for (p, r) in policies.iter().zip(&runs) {
        if let Policy::Thompson { tuned: true, .. } = p {
            let at: Vec<String> = [30, 100, 300, ISSUES]
                .iter()
                .map(|&n| format!("${:.2}", mean(r.iter().map(|run| run.values[n - 1]))))
                .collect();
            println!("  {}: {}", p.name(), at.join(" · "));
        }
    }
    println!("\nseats per round:");
    for (p, r) in policies.iter().zip(&runs) {
        if matches!(p, Policy::Thompson { .. }) {
            counts(&p.name(), r);
        }
    }
    println!("\nshare of seats (all rounds):");
    for (p, r) in policies.iter().zip(&runs).skip(1) {
        shares(&p.name(), r);
    }
}

fn main() {
    let started = Instant::now();
    let count = env("RALPH_BENCH_WORLDS").unwrap_or(48u64).max(1);
    // Other worlds than the default ones, to check settings chosen on those.
    let first: u64 = env("RALPH_BENCH_FIRST_WORLD").unwrap_or(0);
    let kinds = [
        Kind::PricedBySkill,
        Kind::PriceUnrelated,
        Kind::HalfFailing,
        Kind::Dear,
    ];
    let markets = env("RALPH_BENCH_MARKETS")
        .unwrap_or(kinds.len())
        .clamp(1, kinds.len());
    for kind in &kinds[..markets] {
        let worlds: Vec<World> = (0..count)
            .map(|w| World::new(0x5EA7_0000 + first + w, *kind))
            .collect();
        println!(
            "seating benchmark, market {}: {} worlds of {ISSUES} issues, 8 bots, {SEATS} seats; drift_e 0.15 → {DRIFTED} at issue {DRIFT_AT}\n",
            kind.name(),
            worlds.len()
        );
        market(&worlds);
        println!();
    }
    println!("\ntook {:.1} s", started.elapsed().as_secs_f64());
}
