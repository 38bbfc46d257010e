//! Terminal views of the ledger: the leaderboard and the event list.

use super::{dollars, opt, signed, Align, Table};
use crate::ledger::seats::SeatBoard;
use crate::ledger::{LedgerState, LoadedEvent};
use crate::output::Paint;

/// What the maintainers made of each bot's pull requests (`ralph follow`), when any settled or
/// had a revision round: merged, merge rate, closed, reverted, revision rounds per merge and the
/// median time to merge.
fn merges(state: &LedgerState, paint: Paint) -> String {
    let any = state
        .bots
        .iter()
        .any(|b| b.pull_requests.settled() > 0 || b.pull_requests.revision_rounds > 0);
    if !any {
        return String::new();
    }
    let mut table = Table::new(&[
        ("bot", Align::Left),
        ("merged", Align::Right),
        ("merge rate", Align::Right),
        ("closed", Align::Right),
        ("reverted", Align::Right),
        ("revisions/merge", Align::Right),
        ("median to merge", Align::Right),
    ]);
    for b in &state.bots {
        let p = &b.pull_requests;
        table.row(vec![
            b.bot_id.clone(),
            p.merged.to_string(),
            p.merge_rate
                .map_or_else(|| "–".into(), |r| format!("{:.0}%", r * 100.0)),
            p.closed_unmerged.to_string(),
            p.reverted.to_string(),
            opt(p.revisions_per_merge, 1),
            p.median_hours_to_merge
                .map_or_else(|| "–".into(), |h| format!("{h:.1} h")),
        ]);
    }
    format!(
        "\n{}\n{}",
        paint.bold("After the pull request (merged, closed, reverted)"),
        table.render("  ", paint, |_, _, s| s.to_owned())
    )
}

/// The bots grouped by backend, when there is more than one: rounds won and lost, the
/// success rate with its 90% interval, merged pull requests and the weight each group holds.
pub fn backends(groups: &[crate::ledger::backends::BackendStanding], paint: Paint) -> String {
    if groups.len() < 2 {
        return String::new();
    }
    let mut table = Table::new(&[
        ("backend", Align::Left),
        ("bots", Align::Right),
        ("won", Align::Right),
        ("lost", Align::Right),
        ("success rate (90%)", Align::Right),
        ("merged", Align::Right),
        ("weight", Align::Right),
    ]);
    for g in groups {
        let r = &g.success_rate;
        table.row(vec![
            g.backend.clone(),
            g.bots.len().to_string(),
            g.successes.to_string(),
            g.failures.to_string(),
            format!("{:.2} ({:.2}–{:.2})", r.mean, r.low, r.high),
            g.merged.to_string(),
            format!("{:.3}", g.weight),
        ]);
    }
    format!(
        "\n{}\n{}",
        paint.bold("By backend"),
        table.render("  ", paint, |_, _, s| s.to_owned())
    )
}

/// The leaderboard: bots by weight, retired bots, and the latest events.
pub fn leaderboard(state: &LedgerState, paint: Paint) -> String {
    let active = state.bots.iter().filter(|b| !b.retired).count();
    let mut out = format!(
        "{} · {} bot{} · {} event{} · budget pool {}\n\n",
        paint.bold("Bot leaderboard"),
        active,
        plural(active as u64),
        state.event_count,
        plural(state.event_count),
        state.total_budget_pool
    );
    out.push_str(&standings(state, paint));
    if state.event_count == 0 {
        out.push_str(&format!(
            "\nNo events yet: every bot starts at weight 1/{active}.\n"
        ));
    } else {
        out.push('\n');
        out.push_str(&skill(state, paint));
        out.push_str(&merges(state, paint));
    }
    if let Some(board) = &state.seating {
        out.push_str(&seats(board, paint));
    }
    out.push_str(&recent(state, paint));
    out
}

/// With `[marketplace] seats`: each bot's seats won, the posterior its seats are drawn from,
/// its cost per proposal and per merged pull request, and the latest draw.
fn seats(board: &SeatBoard, paint: Paint) -> String {
    let mut out = format!(
        "\n{}\n",
        paint.bold(&format!(
            "Seats (at most {} per round; {} round{} drawn)",
            board.seats,
            board.rounds,
            plural(u64::from(board.rounds))
        ))
    );
    let mut table = Table::new(&[
        ("bot", Align::Left),
        ("seats won", Align::Right),
        ("wins and delivers", Align::Right),
        ("record", Align::Right),
        ("cost/proposal", Align::Right),
        ("merged", Align::Right),
        ("cost/merged PR", Align::Right),
    ]);
    for b in &board.bots {
        table.row(vec![
            b.bot_id.clone(),
            b.seats_won.to_string(),
            format!("{:.2}", b.posterior_mean),
            if b.history == 0 {
                "new".to_owned()
            } else {
                b.history.to_string()
            },
            dollars(b.cost_per_proposal),
            b.merged.to_string(),
            dollars(b.cost_per_merged_pr),
        ]);
    }
    out.push_str(&table.render("  ", paint, |_, _, s| s.to_owned()));
    if let Some(latest) = &board.latest {
        let s = &latest.seating;
        out.push_str(&format!(
            "  Latest: issue #{} round {}: {}\n",
            latest.issue,
            s.round,
            s.line()
        ));
        if let Some(line) = s.left_out_line() {
            out.push_str(&format!("    {}\n", paint.dim(&line)));
        }
        if let Some(value) = &s.value_tuned {
            let line = format!("In the latest draw, {}.", value.line());
            out.push_str(&format!("    {}\n", paint.dim(&line)));
        }
    }
    if let Some(advice) = &board.advice {
        for line in advice.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// The standings table: active bots ranked by weight, retired ones dashed and dimmed.
fn standings(state: &LedgerState, paint: Paint) -> String {
    let mut table = Table::new(&[
        ("#", Align::Right),
        ("bot", Align::Left),
        ("weight", Align::Right),
        ("efficiency", Align::Right),
        ("successes", Align::Right),
        ("failures", Align::Right),
        ("mean accuracy", Align::Right),
        ("budget", Align::Right),
    ]);
    let mut rank = 0;
    for b in &state.bots {
        let place = if b.retired {
            "–".to_owned()
        } else {
            rank += 1;
            rank.to_string()
        };
        let name = if b.retired {
            format!("{} (retired)", b.bot_id)
        } else {
            b.bot_id.clone()
        };
        table.row(vec![
            place,
            name,
            if b.retired {
                "–".into()
            } else {
                format!("{:.4}", b.weight)
            },
            format!("{:.2}", b.efficiency),
            b.successes.to_string(),
            b.failures.to_string(),
            opt(b.average_accuracy, 2),
            if b.retired {
                "–".into()
            } else {
                b.budget.to_string()
            },
        ]);
    }
    table.render("  ", paint, |r, _, s| {
        if state.bots.get(r).is_some_and(|b| b.retired) {
            paint.dim(s)
        } else {
            s.to_owned()
        }
    })
}

/// The latest events, newest first, under their heading; empty when there are none.
fn recent(state: &LedgerState, paint: Paint) -> String {
    if state.recent.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", paint.bold("Recent events"));
    let mut recent = Table::new(&[
        ("time (UTC)", Align::Left),
        ("issue", Align::Right),
        ("bot", Align::Left),
        ("outcome", Align::Left),
        ("delta", Align::Right),
    ]);
    for e in state.recent.iter().rev() {
        recent.row(vec![
            e.timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
            format!("#{}", e.issue_number),
            e.bot_id.clone(),
            e.outcome.to_string(),
            signed(e.weight_delta),
        ]);
    }
    out.push_str(&recent.render("  ", paint, |_, c, s| delta_style(paint, c == 4, s)));
    out
}

/// The extras of docs/specification.md §8.5: success rate when selected, proposal rating,
/// calibration, and the arbiter's health.
fn skill(state: &LedgerState, paint: Paint) -> String {
    let mut out = format!("{}\n", paint.bold("Skill and calibration"));
    let mut table = Table::new(&[
        ("bot", Align::Left),
        ("success rate when selected (90%)", Align::Right),
        ("rating μ−3σ", Align::Right),
        ("μ ± σ", Align::Right),
        ("Brier", Align::Right),
    ]);
    for b in &state.bots {
        let r = &b.success_rate;
        table.row(vec![
            b.bot_id.clone(),
            format!("{:.2} [{:.2}–{:.2}]", r.mean, r.low, r.high),
            format!("{:.1}", b.rating.conservative),
            format!("{:.1} ± {:.1}", b.rating.mu, b.rating.sigma),
            opt(b.brier_score, 3),
        ]);
    }
    out.push_str(&table.render("  ", paint, |_, _, s| s.to_owned()));
    out.push_str(&format!(
        "  Arbiter health: {}\n",
        state.arbiter_health.describe()
    ));
    out.push_str(&format!(
        "  Judge order: {}\n",
        state.decisions.describe_order()
    ));
    out.push_str(&format!(
        "  Audits: {}\n",
        state.decisions.describe_audits()
    ));
    for r in &state.decisions.audits.regret {
        out.push_str(&format!(
            "    regret: issue #{} round {}{}: {} won and failed, the runner-up {} passed\n",
            r.issue,
            r.round,
            r.run_id
                .as_deref()
                .map(|id| format!(" (run {id})"))
                .unwrap_or_default(),
            r.winner,
            r.runner_up
        ));
    }
    out
}

/// The event list of `ralph events`.
pub fn events(events: &[&LoadedEvent], paint: Paint) -> String {
    let mut table = Table::new(&[
        ("time (UTC)", Align::Left),
        ("issue", Align::Right),
        ("round", Align::Right),
        ("bot", Align::Left),
        ("outcome", Align::Left),
        ("delta", Align::Right),
        ("proposal", Align::Right),
        ("impl.", Align::Right),
        ("accuracy", Align::Right),
    ]);
    for l in events {
        let e = &l.event;
        table.row(vec![
            e.timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
            format!("#{}", e.issue_number),
            e.round_number()
                .map_or_else(|| "–".into(), |r| r.to_string()),
            e.bot_id.clone(),
            e.outcome.to_string(),
            signed(e.weight_delta),
            opt(e.proposal_score, 2),
            opt(e.implementation_score, 2),
            opt(e.accuracy, 2),
        ]);
    }
    table.render("", paint, |_, c, s| delta_style(paint, c == 5, s))
}

fn delta_style(paint: Paint, is_delta: bool, cell: &str) -> String {
    if !is_delta {
        cell.to_owned()
    } else if cell.trim_start().starts_with('+') {
        paint.good(cell)
    } else if cell.trim_start().starts_with('-') {
        paint.bad(cell)
    } else {
        cell.to_owned()
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
