//! A run for people, in every form it takes: a round on the terminal (ranking table, winner,
//! skipped bots, how each score was reached), the pull request body, the escalation comment,
//! the Actions job summary and the run summary kept in `.ralph/runs/N/summary.md`. The markdown
//! forms share [`super::markdown`]'s ranking table and cell rule.

use super::markdown::{
    cell, checks_line, failing_on_base_note, inert, ranking_table, seats_line, Columns,
};
use super::verification::render_markdown;
use super::{Align, Table};
use crate::market::{Dimension, Scores};
use crate::output::Paint;
use crate::run_report::{ProposalReport, RemainingBox, RoundReport, RunReport};
use crate::spec::ExplicitRequirement;
use crate::verify::VerificationReport;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn short(d: Dimension) -> &'static str {
    match d {
        Dimension::SpecAlignment => "spec",
        Dimension::TechnicalQuality => "quality",
        Dimension::Innovation => "innov",
        Dimension::Risk => "risk",
        Dimension::Efficiency => "effic",
        Dimension::SpecialistValidation => "special",
    }
}

/// The round as text: ranking table, winner, skipped bots, then each proposal's reasons.
pub fn render_round(r: &RoundReport, weights: &Scores, paint: Paint) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint.bold(&format!(
            "Round {} ({}): {} proposal(s), {} bot(s) skipped",
            r.round,
            r.phase.as_str(),
            r.proposals.len(),
            r.skipped.len()
        ))
    );
    if let Some(s) = &r.seating {
        let _ = writeln!(out, "  {}", s.line());
        if let Some(line) = s.left_out_line() {
            let _ = writeln!(out, "  {}", paint.dim(&line));
        }
    }
    if !r.proposals.is_empty() {
        out.push_str(&ranking_lines(r, weights, paint));
    }
    match (&r.winner, &r.winner_bot) {
        (Some(p), Some(bot)) => {
            let _ = writeln!(out, "  Winner: {p} ({bot})");
        }
        _ if r.human_review => {
            let _ = writeln!(
                out,
                "  {}",
                paint.bad(
                    "No winner: every proposal scored below the threshold; a human must review"
                )
            );
        }
        _ => {}
    }
    for s in &r.skipped {
        let _ = writeln!(
            out,
            "  {} {}: {} ({})",
            paint.warn("skipped"),
            s.bot_id,
            s.reason,
            s.detail
        );
    }
    for f in &r.judges.failures {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            paint.warn("judge failed"),
            f.judge,
            f.reason
        );
    }
    for (_, p) in r.ranked() {
        out.push_str(&proposal_lines(p, paint));
    }
    out
}

/// The round's ranking as an aligned table (the winner's proposal painted good), then the
/// scoring weights.
fn ranking_lines(r: &RoundReport, weights: &Scores, paint: Paint) -> String {
    let mut out = String::new();
    let mut headers = vec![
        ("#", Align::Right),
        ("proposal", Align::Left),
        ("bot", Align::Left),
        ("total", Align::Right),
    ];
    headers.extend(Dimension::ALL.iter().map(|d| (short(*d), Align::Right)));
    let mut table = Table::new(&headers);
    for (rank, p) in r.ranked() {
        let mut cells = vec![
            rank.to_string(),
            p.proposal_id.clone(),
            p.bot_id.clone(),
            format!("{:.3}", p.total_score),
        ];
        cells.extend(
            Dimension::ALL
                .iter()
                .map(|d| format!("{:.2}", p.scores.get(*d))),
        );
        table.row(cells);
    }
    let winner = r.winner.clone();
    out.push_str(&table.render("  ", paint, |row, col, cell| {
        if row == 0 && col == 1 && winner.is_some() {
            paint.good(cell)
        } else {
            cell.to_owned()
        }
    }));
    let w: Vec<String> = Dimension::ALL
        .iter()
        .map(|d| format!("{} {}", short(*d), weights.get(*d)))
        .collect();
    let _ = writeln!(
        out,
        "  {}",
        paint.dim(&format!("weights: {}", w.join(", ")))
    );
    out
}

/// One proposal of the round, for the terminal: its heading, approach and files, each
/// dimension's score with the judges' reason, and its warnings.
fn proposal_lines(p: &ProposalReport, paint: Paint) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n  {} — {} · success probability {:.2}{}",
        paint.bold(&p.proposal_id),
        p.bot_id,
        p.success_probability,
        if p.repaired {
            " · answered after a repair"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "    {}", p.approach_summary.trim());
    let _ = writeln!(out, "    files: {}", p.files_affected.join(", "));
    for d in Dimension::ALL {
        let reason = p.reasons.get(d.key()).map(String::as_str).unwrap_or("");
        let _ = writeln!(
            out,
            "    {:<22} {:.3}  {}",
            d.key(),
            p.scores.get(d),
            paint.dim(reason.trim())
        );
    }
    for w in &p.warnings {
        let _ = writeln!(out, "    {} {w}", paint.warn("warning:"));
    }
    out
}

/// The pull request's body: summary, requirements with evidence, each round's ranking and
/// checks, `Fixes #N`.
pub fn pr_body(report: &RunReport, evidence: &BTreeMap<String, String>) -> String {
    let mut out = format!(
        "Implemented by ralph's marketplace competition (run `{}`).\n\n",
        report.run_id
    );
    out.push_str(&requirements_table(
        &report.requirements.explicit_requirements,
        evidence,
    ));
    for round in &report.rounds {
        out.push_str(&round_section(round));
    }
    out.push_str(&boundary_lines(report));
    let _ = writeln!(out, "\nFixes #{}", report.issue);
    out
}

/// The pull request's requirements: each checkbox, done (checked before, or with the verify
/// role's `evidence`) or not, and the evidence.
fn requirements_table(
    requirements: &[ExplicitRequirement],
    evidence: &BTreeMap<String, String>,
) -> String {
    let mut out = String::from(
        "## Requirements\n\n| id | requirement | done | evidence |\n|---|---|---|---|\n",
    );
    for r in requirements {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            r.id,
            cell(&r.text),
            if r.checked || evidence.contains_key(&r.id) {
                "✅"
            } else {
                "⬜"
            },
            evidence.get(&r.id).map(|e| cell(e)).unwrap_or_default()
        );
    }
    out
}

/// A round's section of the pull request: its seats, ranking, what changed, checks, the
/// implementation's score, the decisions, and what the maintainer should know.
fn round_section(round: &RoundReport) -> String {
    let mut out = format!("\n## Round {} ({})\n\n", round.round, round.phase.as_str());
    if let Some(s) = &round.seating {
        let _ = writeln!(out, "{}", seats_line(s));
    }
    out.push_str(&ranking_table(round, Columns::Totals));
    // What changed: the winning approach, and what the implementer says it did.
    if let Some((_, winner)) = round.ranked().next().filter(|_| round.winner.is_some()) {
        let _ = writeln!(
            out,
            "\n**Approach** ({}): {}",
            winner.bot_id,
            inert(&winner.approach_summary.trim().replace('\n', " "))
        );
    }
    if let Some(summary) = &round.implementation_summary {
        let _ = writeln!(
            out,
            "\n**Implementation**: {}",
            inert(&summary.trim().replace('\n', " "))
        );
    }
    if !round.checks.is_empty() {
        let _ = writeln!(out, "\nChecks: {}", checks_line(&round.checks, ", "));
    }
    if let Some(i) = &round.implementation {
        out.push_str(&implementation_lines(i));
    }
    out.push_str(&decision_lines(round));
    out.push_str(&maintainer_notes(round));
    out
}

/// What a round's section tells the maintainer about the change's checks: those failing on
/// the base too, the check settings it changed, the tests it moved, and boxes checked off on
/// the agents' word when the verify role could not answer.
fn maintainer_notes(round: &RoundReport) -> String {
    let mut out = String::new();
    if let Some(note) = failing_on_base_note(&round.checks) {
        let _ = writeln!(out, "\n{note}");
    }
    let found = [
        ("Settings changed", &round.settings_changes),
        ("Tests moved", &round.moved_tests),
    ];
    for (label, findings) in found {
        for f in findings {
            let _ = writeln!(
                out,
                "\n**{label}** `{}`: {}",
                f.path.replace('`', "'"),
                inert(&f.reason)
            );
        }
    }
    if round.verified_by_claims {
        let _ = writeln!(
            out,
            "\n_The verify role could not answer in this round: the boxes checked off are the ones the proposal and the implementer both claimed, with every check passing._"
        );
    }
    out
}

/// Whether the agents and checks ran sandboxed, and what ralph restored in the git directory,
/// for the pull request and the job summary.
fn boundary_lines(report: &RunReport) -> String {
    let mut out = String::new();
    if let Some(s) = &report.sandbox {
        let line = s.line();
        let _ = writeln!(
            out,
            "\n{}{}{}.",
            if s.active {
                "_Sandbox: "
            } else {
                "**⚠ Sandbox:** "
            },
            line,
            if s.active { "_" } else { "" }
        );
    }
    if !report.network_refused.is_empty() {
        let _ = writeln!(
            out,
            "\n**⚠ Network: connections the sandbox refused** (not in the policy of `[sandbox.network]`):\n"
        );
        for r in &report.network_refused {
            let _ = writeln!(
                out,
                "- blocked: {}",
                inert(&crate::process::egress::refusal_line(r))
            );
        }
    }
    if !report.git_tampering.is_empty() {
        let _ = writeln!(
            out,
            "\n**⚠ Changes to the repository's git directory, restored by ralph:**\n"
        );
        for t in &report.git_tampering {
            let _ = writeln!(out, "- {}", inert(&t.replace('\n', " ")));
        }
    }
    out
}

/// The implementation's score and accuracy, and the review of the change (or why there was
/// none), for the pull request.
fn implementation_lines(i: &crate::run_report::ImplementationReport) -> String {
    let mut out = format!(
        "\n**Implementation score** {:.3}, accuracy of the proposal's score {:.3}.",
        i.total, i.accuracy
    );
    match &i.review {
        crate::market::Review::Scored {
            innovation,
            innovation_reasoning,
            concerns_addressed,
            concerns_reasoning,
        } => {
            let _ = writeln!(
                out,
                " Review of the change — innovation {innovation:.2}: {}; concerns addressed {concerns_addressed:.2}: {}",
                inert(&innovation_reasoning.replace('\n', " ")),
                inert(&concerns_reasoning.replace('\n', " "))
            );
        }
        crate::market::Review::Unavailable { reason } => {
            let _ = writeln!(
                out,
                " _No review of the change ({}): innovation and the consultations' concerns keep the neutral score._",
                inert(&reason.replace('\n', " "))
            );
        }
    }
    out
}

/// The order check when the top flipped, and the audit of the runner-up, for the pull request.
fn decision_lines(round: &crate::run_report::RoundReport) -> String {
    let mut out = String::new();
    if let Some(o) = round.order.as_ref().filter(|o| o.top_flipped == Some(true)) {
        let _ = writeln!(
            out,
            "
_Order check: the judges' top proposal changed with the reading order ({} read forward, {} reversed); the two readings were averaged._",
            o.forward_top.as_deref().unwrap_or("?"),
            o.reversed_top.as_deref().unwrap_or("?")
        );
    }
    if let Some(a) = &round.audit {
        let result = match a.passed {
            Some(true) => "passed".to_owned(),
            Some(false) => "failed".to_owned(),
            None => format!("was not judged ({})", a.reason.as_deref().unwrap_or("")),
        };
        let _ = writeln!(
            out,
            "
_Audit: the runner-up {} ({}) was implemented too, in a scratch checkout that was thrown away, and {result}; it only measures how well ralph picks._",
            a.proposal_id, a.bot_id
        );
    }
    out
}

/// `.ralph/runs/N/summary.md`: the outcome, why it escalated, the pull request body, the events.
pub fn run_summary(report: &RunReport, evidence: &BTreeMap<String, String>) -> String {
    let mut md = format!(
        "# Run {} on issue #{}: {}\n\n",
        report.run_id, report.issue, report.outcome
    );
    if let Some(why) = &report.escalation {
        let _ = writeln!(md, "Escalated: {why}\n");
    }
    md.push_str(&pr_body(report, evidence));
    let _ = writeln!(md, "\nEvents:\n");
    for e in &report.events {
        let _ = writeln!(md, "- `{e}`");
    }
    md
}

/// A failed round, as the escalation comment tells it.
#[derive(Debug, Clone, Copy)]
pub struct FailureNote<'a> {
    pub bot: &'a str,
    /// The failure's category (`tests`, `quality`, `coverage`…; docs/specification.md §6 step 9).
    pub kind: &'a str,
    pub proposal_summary: &'a str,
    /// One line per reason.
    pub reasons: &'a [String],
}

/// Everything the escalation comment says.
#[derive(Debug, Clone, Copy)]
pub struct EscalationNote<'a> {
    pub issue: u64,
    pub reason: &'a str,
    pub initial: Option<FailureNote<'a>>,
    pub replan: Option<FailureNote<'a>>,
    pub last_round: Option<&'a RoundReport>,
    pub verification: Option<&'a VerificationReport>,
    /// The checkboxes still open.
    pub remaining: &'a [RemainingBox],
    /// The last failing attempt's diff, already bounded by the caller.
    pub diff: Option<&'a str>,
    /// Empty when no branch was made.
    pub branch: &'a str,
    /// Commits of passing rounds on the branch, and whether the branch was pushed.
    pub commits: u32,
    pub pushed: bool,
    pub worktree: Option<&'a Path>,
}

/// The most of a diff an escalation comment shows.
const MAX_COMMENT_DIFF: usize = 20_000;

/// The comment that hands an issue to a human: why, the failed rounds, the last ranking, the
/// verification, where the work is, and how to continue.
pub fn escalation_comment(e: &EscalationNote<'_>) -> String {
    let mut body = format!("ralph needs a human: {}.\n", inert(e.reason));
    for (title, failure) in [("Initial round", &e.initial), ("Replan round", &e.replan)] {
        if let Some(f) = failure {
            let _ = writeln!(
                body,
                "\n**{title}** — {} ({}): {}\n",
                f.bot,
                f.kind,
                inert(f.proposal_summary.trim())
            );
            for r in f.reasons {
                let _ = writeln!(body, "- {}", inert(&r.replace('\n', " ")));
            }
        }
    }
    if !e.remaining.is_empty() {
        body.push_str(&remaining_lines(e.remaining));
    }
    if let Some(round) = e.last_round {
        let _ = write!(body, "\n{}", ranking_table(round, Columns::Totals));
    }
    if let Some(v) = e.verification {
        let _ = writeln!(body, "\n{}", render_markdown(v));
    }
    if let Some(diff) = e.diff.filter(|d| !d.trim().is_empty()) {
        body.push_str(&diff_details(diff));
    }
    if !e.branch.is_empty() {
        let _ = writeln!(
            body,
            "\nBranch: `{}`{}",
            e.branch,
            match (e.commits, e.pushed) {
                (0, _) => String::new(),
                (n, true) => format!(" — pushed, with the commits of {n} passing round(s)"),
                (n, false) => format!(" — {n} commit(s) of passing rounds, not pushed"),
            }
        );
    }
    if let Some(wt) = e.worktree {
        let _ = writeln!(body, "Worktree (kept for inspection): `{}`", wt.display());
    }
    let _ = writeln!(
        body,
        "\nTo continue after fixing the cause: `ralph compete {} --resume`.",
        e.issue
    );
    body
}

/// The checkboxes still open, a list item each with the verify role's reason when it gave one.
fn remaining_lines(remaining: &[RemainingBox]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nCheckboxes that remain:\n");
    for r in remaining {
        let _ = writeln!(
            out,
            "- {} {}{}",
            r.id,
            inert(&r.text.replace('\n', " ")),
            r.reason
                .as_deref()
                .map(|why| format!(" — verify role: {}", inert(&why.replace('\n', " "))))
                .unwrap_or_default()
        );
    }
    out
}

/// The last failing attempt's diff in a folded block, cut at [`MAX_COMMENT_DIFF`] bytes (on a
/// character boundary) and fenced with more backticks than it holds in a row.
fn diff_details(diff: &str) -> String {
    let mut shown = diff;
    if shown.len() > MAX_COMMENT_DIFF {
        let mut cut = MAX_COMMENT_DIFF;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown = &shown[..cut];
    }
    let fence = "`".repeat(
        shown
            .split(|c| c != '`')
            .map(str::len)
            .max()
            .unwrap_or(0)
            .max(2)
            + 1,
    );
    format!(
        "\n<details><summary>The last failing attempt's diff</summary>\n\n{fence}diff\n{}\n{fence}\n{}</details>\n",
        shown.trim_end(),
        if shown.len() < diff.len() {
            format!(
                "\n(cut at {} of {} bytes)\n",
                shown.len(),
                diff.len()
            )
        } else {
            String::new()
        }
    )
}

/// The Actions job summary: the issue and outcome, each round's ranking with its scores and
/// checks, what the run cost, and the links.
pub fn job_summary(report: &RunReport) -> String {
    let mut md = format!(
        "## ralph · issue #{}: {}\n\n**Outcome:** {}",
        report.issue,
        report.title.replace('\n', " "),
        report.outcome
    );
    if let Some(why) = report.escalation.as_ref().or(report.stopped.as_ref()) {
        let _ = write!(md, " — {why}");
    }
    md.push_str("\n\n");
    if let Some(url) = &report.pr_url {
        let _ = writeln!(md, "Pull request: {url}\n");
    }
    if let Some(b) = &report.branch {
        let _ = writeln!(md, "Branch: `{b}` · run `{}`\n", report.run_id);
    }
    for r in &report.rounds {
        let _ = write!(md, "### Round {} ({})\n\n", r.round, r.phase.as_str());
        if let Some(s) = &r.seating {
            let _ = writeln!(md, "{}", seats_line(s));
        }
        md.push_str(&ranking_table(r, Columns::Scores));
        for s in &r.skipped {
            let _ = writeln!(md, "\nSkipped `{}`: {}", s.bot_id, s.reason);
        }
        if !r.checks.is_empty() {
            let _ = writeln!(md, "\nChecks: {}", checks_line(&r.checks, " · "));
        }
        if let Some(note) = failing_on_base_note(&r.checks) {
            let _ = writeln!(md, "\n{note}");
        }
        if let Some(why) = &r.environment_failure {
            let _ = writeln!(md, "\nEnvironment failure (no events): {why}");
        }
        md.push('\n');
    }
    let boundary = boundary_lines(report);
    if !boundary.is_empty() {
        md.push_str(boundary.trim_start());
        md.push('\n');
    }
    let t = &report.total;
    let _ = writeln!(
        md,
        "Cost: {} call(s), {} tokens{}, {:.0}s of agent time. Events: {}.\n",
        t.calls,
        t.tokens(),
        t.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default(),
        t.duration.as_secs_f64(),
        report.events.len()
    );
    md
}

#[cfg(test)]
mod tests;
