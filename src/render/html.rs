//! The self-contained HTML leaderboard (`ralph leaderboard --html FILE`): the standings table,
//! an inline SVG chart of every bot's weight after each event, the latest events and the
//! skipped files. No scripts, no external resources: the page works offline and from a CI
//! artifact. The markup is the template `templates/leaderboard.html` (minijinja, HTML
//! auto-escaping: every value from outside — bot ids, file names, reasons — is escaped by the
//! template, none by hand); this module computes what it shows.

use super::{dollars, opt, signed};
use crate::ledger::{LedgerState, WeightHistory};
use crate::output::sanitize;
use chrono::{DateTime, Utc};
use minijinja::{context, Environment, Value};
use serde::Serialize;

/// Line colours, chosen to stay distinguishable for common colour-vision deficiencies
/// (Okabe–Ito palette).
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000",
];

/// The page's template, embedded.
const TEMPLATE: &str = include_str!("templates/leaderboard.html");

#[derive(Serialize)]
struct Standing {
    class: &'static str,
    place: String,
    colour: Option<&'static str>,
    name: String,
    weight: String,
    efficiency: String,
    successes: u32,
    failures: u32,
    accuracy: String,
    budget: String,
}

#[derive(Serialize)]
struct Merge {
    bot: String,
    merged: u32,
    rate: String,
    closed: u32,
    reverted: u32,
    revisions: String,
    median: String,
}

/// The bots' pull requests after they were opened, when any settled or had a revision round.
fn merges(state: &LedgerState) -> Vec<Merge> {
    let any = state
        .bots
        .iter()
        .any(|b| b.pull_requests.settled() > 0 || b.pull_requests.revision_rounds > 0);
    if !any {
        return Vec::new();
    }
    state
        .bots
        .iter()
        .map(|b| {
            let p = &b.pull_requests;
            Merge {
                bot: sanitize(&b.bot_id),
                merged: p.merged,
                rate: p
                    .merge_rate
                    .map_or_else(|| "–".into(), |r| format!("{:.0}%", r * 100.0)),
                closed: p.closed_unmerged,
                reverted: p.reverted,
                revisions: opt(p.revisions_per_merge, 1),
                median: p
                    .median_hours_to_merge
                    .map_or_else(|| "–".into(), |h| format!("{h:.1} h")),
            }
        })
        .collect()
}

/// A bot's seats (`[marketplace] seats`).
#[derive(Serialize)]
struct SeatRow {
    bot: String,
    won: u32,
    mean: String,
    record: String,
    cost: String,
    merged: u32,
    per_merge: String,
}

/// The seats' table and the latest draw, with `[marketplace] seats`; `None` without.
fn seats(state: &LedgerState) -> Option<Value> {
    let board = state.seating.as_ref()?;
    let bots: Vec<SeatRow> = board
        .bots
        .iter()
        .map(|b| SeatRow {
            bot: sanitize(&b.bot_id),
            won: b.seats_won,
            mean: format!("{:.2}", b.posterior_mean),
            record: if b.history == 0 {
                "new".to_owned()
            } else {
                b.history.to_string()
            },
            cost: dollars(b.cost_per_proposal),
            merged: b.merged,
            per_merge: dollars(b.cost_per_merged_pr),
        })
        .collect();
    let latest = board.latest.as_ref().map(|l| {
        sanitize(&format!(
            "issue #{} round {}: {}",
            l.issue,
            l.seating.round,
            l.seating.line()
        ))
    });
    // The value of a merge the latest draw was priced at, when the ledger tuned it.
    let value = board
        .latest
        .as_ref()
        .and_then(|l| l.seating.value_tuned.as_ref())
        .map(|v| sanitize(&format!("In the latest draw, {}.", v.line())));
    let advice: Vec<String> = board
        .advice
        .iter()
        .flat_map(|a| a.lines())
        .map(|l| sanitize(&l))
        .collect();
    Some(context! {
        per_round => board.seats,
        rounds => board.rounds,
        bots => Value::from(minijinja::value::Serde(&bots)),
        latest => latest,
        value => value,
        advice => advice,
    })
}

#[derive(Serialize)]
struct Skill {
    bot: String,
    rate: String,
    conservative: String,
    mu_sigma: String,
    brier: String,
}

#[derive(Serialize)]
struct Recent {
    time: String,
    bot: String,
    issue: u64,
    outcome: String,
    class: &'static str,
    delta: String,
}

/// The whole page.
pub fn render(
    state: &LedgerState,
    backends: &[crate::ledger::backends::BackendStanding],
    repository: &str,
    generated: DateTime<Utc>,
) -> String {
    let standings = standings(state);
    let backends: Vec<_> = backends
        .iter()
        .map(|g| {
            let r = &g.success_rate;
            context! {
                backend => sanitize(&g.backend),
                bots => g.bots.iter().map(|b| sanitize(b)).collect::<Vec<_>>().join(", "),
                won => g.successes,
                lost => g.failures,
                rate => format!("{:.2} [{:.2}–{:.2}]", r.mean, r.low, r.high),
                merged => g.merged,
                weight => format!("{:.3}", g.weight),
            }
        })
        .collect();
    let skill: Vec<Skill> = state
        .bots
        .iter()
        .map(|b| {
            let r = &b.success_rate;
            Skill {
                bot: sanitize(&b.bot_id),
                rate: format!("{:.2} [{:.2}–{:.2}]", r.mean, r.low, r.high),
                conservative: format!("{:.1}", b.rating.conservative),
                mu_sigma: format!("{:.1} ± {:.1}", b.rating.mu, b.rating.sigma),
                brier: opt(b.brier_score, 3),
            }
        })
        .collect();
    let regret: Vec<_> = state
        .decisions
        .audits
        .regret
        .iter()
        .map(|r| {
            context! {
                issue => r.issue,
                round => r.round,
                winner => sanitize(&r.winner),
                runner_up => sanitize(&r.runner_up),
            }
        })
        .collect();
    let recent = recent(state);
    let skipped: Vec<_> = state
        .skipped
        .iter()
        .map(|s| context! { file => sanitize(&s.file), reason => sanitize(&s.reason) })
        .collect();
    environment()
        .get_template("leaderboard.html")
        .and_then(|t| {
            t.render(context! {
                repository => sanitize(repository),
                event_count => state.event_count,
                pool => state.total_budget_pool,
                generated => generated.format("%Y-%m-%d %H:%M UTC").to_string(),
                standings => Value::from(minijinja::value::Serde(&standings)),
                skill => Value::from(minijinja::value::Serde(&skill)),
                backends => Value::from(minijinja::value::Serde(&backends)),
                merges => Value::from(minijinja::value::Serde(&merges(state))),
                seats => seats(state),
                arbiter_health => state.arbiter_health.describe(),
                judge_order => sanitize(&state.decisions.describe_order()),
                audits => sanitize(&state.decisions.describe_audits()),
                regret => Value::from(minijinja::value::Serde(&regret)),
                chart => Value::from(minijinja::value::Serde(chart(&state.history, state.event_count))),
                recent => Value::from(minijinja::value::Serde(&recent)),
                skipped => Value::from(minijinja::value::Serde(&skipped)),
            })
        })
        .expect("the embedded leaderboard template renders its own context (tested)")
}

/// The standings table's rows: active bots ranked in the ledger's order, retired ones dashed,
/// each with its line colour in the chart.
fn standings(state: &LedgerState) -> Vec<Standing> {
    let mut rank = 0;
    state
        .bots
        .iter()
        .map(|b| {
            let colour = state
                .history
                .bots
                .iter()
                .position(|id| *id == b.bot_id)
                .map(|i| PALETTE[i % PALETTE.len()]);
            let (class, place, weight, budget, name) = if b.retired {
                let dash = "–".to_owned();
                let name = format!("{} (retired)", sanitize(&b.bot_id));
                ("retired", dash.clone(), dash.clone(), dash, name)
            } else {
                rank += 1;
                let w = format!("{:.4}", b.weight);
                (
                    "",
                    rank.to_string(),
                    w,
                    b.budget.to_string(),
                    sanitize(&b.bot_id),
                )
            };
            Standing {
                class,
                place,
                colour,
                name,
                weight,
                efficiency: format!("{:.2}", b.efficiency),
                successes: b.successes,
                failures: b.failures,
                accuracy: opt(b.average_accuracy, 2),
                budget,
            }
        })
        .collect()
}

/// The latest events, newest first.
fn recent(state: &LedgerState) -> Vec<Recent> {
    state
        .recent
        .iter()
        .rev()
        .map(|e| Recent {
            time: e.timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
            bot: sanitize(&e.bot_id),
            issue: e.issue_number,
            outcome: e.outcome.to_string(),
            class: if e.weight_delta >= 0.0 { "pos" } else { "neg" },
            delta: signed(e.weight_delta),
        })
        .collect()
}

/// The template environment: block tags trimmed, the trailing newline kept, the page's
/// template added.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.add_template("leaderboard.html", TEMPLATE)
        .expect("the embedded leaderboard template parses (tested)");
    env
}

#[derive(Serialize)]
struct Chart {
    // Numbers as the page writes them (`860`, not `860.0`).
    width: String,
    height: String,
    left: String,
    /// Where the grid lines end.
    right: String,
    label_x: String,
    tick_y: String,
    axis_x: String,
    axis_y: String,
    grid: Vec<Value>,
    ticks: Vec<Value>,
    lines: Vec<Value>,
    legend: Vec<Value>,
}

/// Where the chart plots: its area's top-left corner and size, and the largest event index
/// and weight it shows.
struct Plot {
    left: f64,
    top: f64,
    width: f64,
    height: f64,
    x_max: f64,
    y_max: f64,
}

impl Plot {
    /// The x coordinate of event index `i`.
    fn x(&self, i: u64) -> f64 {
        self.left + self.width * (i as f64 / self.x_max)
    }

    /// The y coordinate of weight `w` (clamped to the plot).
    fn y(&self, w: f64) -> f64 {
        self.top + self.height * (1.0 - (w / self.y_max).clamp(0.0, 1.0))
    }
}

/// The SVG line chart's geometry: x = events folded so far, y = weight.
fn chart(history: &WeightHistory, event_count: u64) -> Chart {
    let (width, height) = (860.0, 320.0);
    let (left, right, top, bottom) = (56.0, 16.0, 16.0, 44.0);
    let max_weight = history
        .points
        .iter()
        .flat_map(|p| p.weights.iter().copied())
        .fold(0.0_f64, f64::max);
    let plot = Plot {
        left,
        top,
        width: width - left - right,
        height: height - top - bottom,
        x_max: event_count.max(1) as f64,
        y_max: ((max_weight * 10.0).ceil() / 10.0).clamp(0.1, 1.0).max(0.5),
    };
    // X axis ticks: start, middle, end.
    let ticks = [0, event_count / 2, event_count]
        .into_iter()
        .map(|i| context! { x => format!("{:.1}", plot.x(i)), label => i })
        .collect();
    Chart {
        width: width.to_string(),
        height: height.to_string(),
        left: left.to_string(),
        right: (width - right).to_string(),
        label_x: (left - 6.0).to_string(),
        tick_y: (height - bottom + 16.0).to_string(),
        axis_x: format!("{:.1}", left + plot.width / 2.0),
        axis_y: (height - 6.0).to_string(),
        grid: grid(&plot),
        ticks,
        lines: lines(history, &plot),
        legend: legend(history, left, top),
    }
}

/// Horizontal grid lines and their labels, every 0.1 of weight.
fn grid(plot: &Plot) -> Vec<Value> {
    let steps = (plot.y_max * 10.0).round() as u32;
    (0..=steps)
        .map(|k| {
            let w = f64::from(k) / 10.0;
            context! {
                y => format!("{:.1}", plot.y(w)),
                label_y => format!("{:.1}", plot.y(w) + 4.0),
                label => format!("{w:.1}"),
            }
        })
        .collect()
}

/// One polyline per bot: its weight after each event it has a weight at.
fn lines(history: &WeightHistory, plot: &Plot) -> Vec<Value> {
    history
        .bots
        .iter()
        .enumerate()
        .map(|(b, bot)| {
            let points: Vec<String> = history
                .points
                .iter()
                .filter_map(|p| {
                    let w = p.weights.get(b)?;
                    Some(format!("{:.2},{:.2}", plot.x(p.event_index), plot.y(*w)))
                })
                .collect();
            context! {
                colour => PALETTE[b % PALETTE.len()],
                points => points.join(" "),
                bot => sanitize(bot),
            }
        })
        .collect()
}

/// The legend inside the plot's top-left corner (`left`, `top`): four bots a row.
fn legend(history: &WeightHistory, left: f64, top: f64) -> Vec<Value> {
    history
        .bots
        .iter()
        .enumerate()
        .map(|(b, bot)| {
            let lx = left + 8.0 + (b % 4) as f64 * 200.0;
            let ly = top + 12.0 + (b / 4) as f64 * 16.0;
            context! {
                x => lx.to_string(),
                rect_y => format!("{:.1}", ly - 9.0),
                text_x => (lx + 14.0).to_string(),
                y => format!("{ly:.1}"),
                colour => PALETTE[b % PALETTE.len()],
                bot => sanitize(bot),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{fold, FoldParams, Ledger, Loaded, LoadedEvent, Skipped};
    use crate::market::Outcome;

    #[test]
    fn page_is_self_contained_and_escapes_outside_text() {
        let params = FoldParams {
            bots: vec!["a".into(), "b".into()],
            weight_min: 0.05,
            weight_max: 0.6,
            pool: 20,
            seats: None,
        };
        let mut e = crate::ledger::Event::new(3, "a", Outcome::Success, 0.1);
        e.timestamp = "2026-02-01T00:00:00Z".parse().unwrap();
        let loaded = Loaded {
            events: vec![LoadedEvent {
                file: e.file_name(),
                event: e,
            }],
            skipped: vec![Skipped {
                file: "<script>x.json".into(),
                reason: "invalid JSON".into(),
            }],
        };
        let state = Ledger::build_state(&params, &loaded);
        assert_eq!(
            fold(&params, loaded.events.iter().map(|l| &l.event)).event_count,
            1
        );
        let page = render(
            &state,
            &[],
            "octo/repo",
            "2026-02-02T00:00:00Z".parse().unwrap(),
        );
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<svg"));
        assert_eq!(page.matches("<polyline").count(), 2);
        assert!(!page.contains("<script"));
        assert!(page.contains("&lt;script&gt;x.json"));
        assert!(!page.contains("src=\"http"));
        assert!(!page.contains("href=\"http"));
        assert!(page.contains("+0.100"));
        assert!(
            !page.contains("Seats"),
            "no seats without [marketplace] seats"
        );
        insta::assert_snapshot!("leaderboard_html", page);
    }

    #[test]
    fn with_seats_the_page_shows_them_and_the_latest_draw() {
        let params = FoldParams {
            bots: vec!["a".into(), "b".into()],
            weight_min: 0.05,
            weight_max: 0.6,
            pool: 20,
            seats: Some(1),
        };
        let mut e = crate::ledger::Event::new(3, "a", Outcome::Success, 0.1);
        e.round = Some(1);
        e.cost_usd = Some(0.25);
        let mut seating = crate::fixtures::seating(&["a", "b"], &["a"], &[], 1);
        seating.value_tuned = Some(crate::market::seating::value::ValueFit {
            rounds: 40,
            value_usd: 12.5,
            multiple: 5.0,
            merges: 20.0,
            cost_usd: 10.0,
            every_bot_merges: 20.0,
            every_bot_cost_usd: 50.0,
        });
        e.seating = Some(seating);
        let loaded = Loaded {
            events: vec![LoadedEvent {
                file: e.file_name(),
                event: e,
            }],
            skipped: vec![],
        };
        let state = Ledger::build_state(&params, &loaded);
        let page = render(
            &state,
            &[],
            "octo/repo",
            "2026-02-02T00:00:00Z".parse().unwrap(),
        );
        assert!(
            page.contains("<h2>Seats (at most 1 per round; 1 drawn)</h2>"),
            "{page}"
        );
        assert!(
            !page.contains("By backend"),
            "one backend or none: no table"
        );
        let backends = crate::ledger::backends::by_backend(&state.bots, |id| {
            Some(if id == "a" { "gemini" } else { "<aider>" }.to_owned())
        });
        let page = render(
            &state,
            &backends,
            "octo/repo",
            "2026-02-02T00:00:00Z".parse().unwrap(),
        );
        assert!(page.contains("<h2>By backend</h2>"), "{page}");
        assert!(page.contains("<tr><td>gemini</td><td>a</td><td>1</td><td>0</td><td>0.67 ["));
        assert!(page.contains("&lt;aider&gt;") && !page.contains("<aider>"));
        assert!(page.contains("<tr><td>a</td><td>1</td><td>0.67</td><td>1</td><td>$0.25</td>"));
        assert!(
            page.contains("<p>Latest: issue #3 round 1: seated: 1 of 2 — a "),
            "{page}"
        );
        assert!(
            page.contains("<p>In the latest draw, a merge is taken to be worth $12.50 (5 × the $2.50 a merge costs when every bot proposes, over the latest 40 seated rounds; at this value the seats make 100.0% of those merges for 20% of the money; `[marketplace] value_per_merge` sets a value).</p>"),
            "{page}"
        );
        // The advice over the latest seated rounds follows the latest draw.
        assert!(
            page.contains(
                "<p>Over the latest 1 round(s), 1 issue(s): the seats&#x27; proposals cost $"
            ),
            "{page}"
        );
    }
}
