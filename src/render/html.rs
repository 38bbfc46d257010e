//! The self-contained HTML leaderboard (`ralph leaderboard --html FILE`): the standings table,
//! an inline SVG chart of every bot's weight after each event, the latest events and the
//! skipped files. No scripts, no external resources: the page works offline and from a CI
//! artifact.

use super::{opt, signed};
use crate::ledger::{LedgerState, WeightHistory};
use chrono::{DateTime, Utc};
use std::fmt::Write as _;

/// Line colours, chosen to stay distinguishable for common colour-vision deficiencies
/// (Okabe–Ito palette).
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000",
];

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::output::sanitize(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn render(state: &LedgerState, repository: &str, generated: DateTime<Utc>) -> String {
    let mut h = String::new();
    let title = format!("ralph leaderboard — {}", escape(repository));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n\
<style>\nbody{{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:960px;padding:0 1rem;color:#1b1f24}}\n\
table{{border-collapse:collapse;margin:1rem 0;width:100%}}th,td{{padding:.35rem .6rem;border-bottom:1px solid #d0d7de;text-align:right}}\n\
th:nth-child(2),td:nth-child(2){{text-align:left}}th{{background:#f6f8fa}}tr.retired td{{color:#6e7781}}\n\
.swatch{{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:baseline}}\n\
.meta{{color:#57606a}}.pos{{color:#1a7f37}}.neg{{color:#cf222e}}svg{{max-width:100%;height:auto}}\n\
</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
<p class=\"meta\">{} events · budget pool {} · generated {}</p>\n",
        state.event_count,
        state.total_budget_pool,
        generated.format("%Y-%m-%d %H:%M UTC")
    );

    h.push_str("<h2>Standings</h2>\n<table>\n<thead><tr><th>#</th><th>bot</th><th>weight</th><th>efficiency</th><th>successes</th><th>failures</th><th>mean accuracy</th><th>budget</th></tr></thead>\n<tbody>\n");
    let mut rank = 0;
    for b in &state.bots {
        let colour = state
            .history
            .bots
            .iter()
            .position(|id| *id == b.bot_id)
            .map(|i| PALETTE[i % PALETTE.len()]);
        let swatch = colour.map_or(String::new(), |c| {
            format!("<span class=\"swatch\" style=\"background:{c}\"></span>")
        });
        let (class, place, weight, budget, name) = if b.retired {
            (
                "retired",
                "–".to_owned(),
                "–".to_owned(),
                "–".to_owned(),
                format!("{} (retired)", escape(&b.bot_id)),
            )
        } else {
            rank += 1;
            (
                "",
                rank.to_string(),
                format!("{:.4}", b.weight),
                b.budget.to_string(),
                escape(&b.bot_id),
            )
        };
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td>{place}</td><td>{swatch}{name}</td><td>{weight}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{budget}</td></tr>",
            b.efficiency,
            b.successes,
            b.failures,
            opt(b.average_accuracy, 2),
        );
    }
    h.push_str("</tbody>\n</table>\n");

    h.push_str("<h2>Skill and calibration</h2>\n<table>\n<thead><tr><th></th><th>bot</th><th>success rate when selected (90% interval)</th><th>rating μ−3σ</th><th>μ ± σ</th><th>Brier</th></tr></thead>\n<tbody>\n");
    for b in &state.bots {
        let r = &b.success_rate;
        let _ = writeln!(
            h,
            "<tr><td></td><td>{}</td><td>{:.2} [{:.2}–{:.2}]</td><td>{:.1}</td><td>{:.1} ± {:.1}</td><td>{}</td></tr>",
            escape(&b.bot_id),
            r.mean,
            r.low,
            r.high,
            b.rating.conservative,
            b.rating.mu,
            b.rating.sigma,
            opt(b.brier_score, 3)
        );
    }
    h.push_str("</tbody>\n</table>\n");
    let _ = writeln!(
        h,
        "<p>Arbiter health: {}</p>",
        state.arbiter_health.describe()
    );
    let _ = writeln!(
        h,
        "<p>Judge order: {}</p>\n<p>Audits: {}</p>",
        escape(&state.decisions.describe_order()),
        escape(&state.decisions.describe_audits())
    );
    if !state.decisions.audits.regret.is_empty() {
        h.push_str("<table>\n<thead><tr><th>regret round</th><th>winner (failed)</th><th>runner-up (passed)</th></tr></thead>\n<tbody>\n");
        for r in &state.decisions.audits.regret {
            let _ = writeln!(
                h,
                "<tr><td>#{} round {}</td><td>{}</td><td>{}</td></tr>",
                r.issue,
                r.round,
                escape(&r.winner),
                escape(&r.runner_up)
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }

    h.push_str("<h2>Weight after every event</h2>\n");
    h.push_str(&chart(&state.history, state.event_count));

    if !state.recent.is_empty() {
        h.push_str("<h2>Recent events</h2>\n<table>\n<thead><tr><th>time (UTC)</th><th>bot</th><th>issue</th><th>outcome</th><th>delta</th></tr></thead>\n<tbody>\n");
        for e in state.recent.iter().rev() {
            let class = if e.weight_delta >= 0.0 { "pos" } else { "neg" };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>#{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
                e.timestamp.format("%Y-%m-%d %H:%M:%S"),
                escape(&e.bot_id),
                e.issue_number,
                e.outcome,
                signed(e.weight_delta)
            );
        }
        h.push_str("</tbody>\n</table>\n");
    }
    if !state.skipped.is_empty() {
        h.push_str("<h2>Skipped event files</h2>\n<ul>\n");
        for s in &state.skipped {
            let _ = writeln!(
                h,
                "<li><code>{}</code>: {}</li>",
                escape(&s.file),
                escape(&s.reason)
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The SVG line chart: x = events folded so far, y = weight.
fn chart(history: &WeightHistory, event_count: u64) -> String {
    let (width, height) = (860.0, 320.0);
    let (left, right, top, bottom) = (56.0, 16.0, 16.0, 44.0);
    let plot_w = width - left - right;
    let plot_h = height - top - bottom;
    let max_weight = history
        .points
        .iter()
        .flat_map(|p| p.weights.iter().copied())
        .fold(0.0_f64, f64::max);
    let y_max = ((max_weight * 10.0).ceil() / 10.0).clamp(0.1, 1.0).max(0.5);
    let x_max = event_count.max(1) as f64;
    let x = |i: u64| left + plot_w * (i as f64 / x_max);
    let y = |w: f64| top + plot_h * (1.0 - (w / y_max).clamp(0.0, 1.0));

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"Bot weight after each event\">"
    );
    // Horizontal grid lines and labels every 0.1.
    let steps = (y_max * 10.0).round() as u32;
    for k in 0..=steps {
        let w = f64::from(k) / 10.0;
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#d0d7de\" stroke-width=\"1\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"#57606a\">{w:.1}</text>",
            width - right,
            y(w),
            y(w),
            left - 6.0,
            y(w) + 4.0
        );
    }
    // X axis ticks: start, middle, end.
    for i in [0, event_count / 2, event_count] {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#57606a\">{i}</text>",
            x(i),
            height - bottom + 16.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#57606a\">events folded</text>",
        left + plot_w / 2.0,
        height - 6.0
    );
    for (b, bot) in history.bots.iter().enumerate() {
        let colour = PALETTE[b % PALETTE.len()];
        let mut points = String::new();
        for p in &history.points {
            if let Some(w) = p.weights.get(b) {
                let _ = write!(points, "{:.2},{:.2} ", x(p.event_index), y(*w));
            }
        }
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
            points.trim_end(),
            escape(bot)
        );
    }
    // Legend.
    for (b, bot) in history.bots.iter().enumerate() {
        let colour = PALETTE[b % PALETTE.len()];
        let lx = left + 8.0 + (b % 4) as f64 * 200.0;
        let ly = top + 12.0 + (b / 4) as f64 * 16.0;
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{}\" y=\"{ly:.1}\" font-size=\"11\" fill=\"#1b1f24\">{}</text>",
            ly - 9.0,
            lx + 14.0,
            escape(bot)
        );
    }
    s.push_str("</svg>\n");
    s
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
        let page = render(&state, "octo/repo", "2026-02-02T00:00:00Z".parse().unwrap());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<svg"));
        assert_eq!(page.matches("<polyline").count(), 2);
        assert!(!page.contains("<script"));
        assert!(page.contains("&lt;script&gt;x.json"));
        assert!(!page.contains("src=\"http"));
        assert!(!page.contains("href=\"http"));
        assert!(page.contains("+0.100"));
        insta::assert_snapshot!("leaderboard_html", page);
    }
}
