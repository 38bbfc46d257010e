//! Audited rounds (`[marketplace] audit_rate`): in a share of the rounds ralph also implements
//! the runner-up, after the winner, under the same rules — the same attempts, checks and
//! verify role — in a throw-away checkout of the commit the round started from. Nothing of it
//! is committed, pushed or checked off, and no bot's weight moves for it: it only measures
//! whether the marketplace picked right (selection efficiency and regret rounds on the
//! leaderboard; runner-up outcomes for `ralph tune`).

use super::crew::{Bench, Book, Contest, Crew, Selection};
use super::crew::{Purpose, Target};
use super::findings::Attempts;
use super::prepare::{cache_dir, forget_setup};
use super::round::Arrived;
use super::settle::check_reports;
use crate::agent::accounts::Spend;
use crate::checks::environment::variables;
use crate::run_report::AuditReport;
use crate::workspace::Worktree;
use anyhow::Result;

/// Whether the round whose blinding seed is `seed` is audited at `rate`: a fixed draw from
/// the seed, so the choice is reproducible from the run report.
pub fn audited(seed: u64, rate: f64) -> bool {
    if rate <= 0.0 {
        return false;
    }
    // SplitMix64's finaliser on a seed offset from the blinding's, to 53 bits in [0, 1).
    let z = crate::mix::finalize(seed ^ 0xA5A5_5A5A_C3C3_3C3C);
    ((z >> 11) as f64 / (1u64 << 53) as f64) < rate
}

/// Audits the round when it is drawn: implements the runner-up in a scratch checkout of
/// `start` (the commit the round began at) and reports whether it passed. `None` when the
/// round is not audited or has no runner-up.
pub(super) async fn audit(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    contest: &Contest,
    sel: &Selection,
    start: &str,
) -> Result<Option<AuditReport>> {
    let settings = crew.input.settings;
    let report = &sel.evaluated.report;
    if !audited(report.seed, settings.config.marketplace.audit_rate) {
        return Ok(None);
    }
    let printer = crew.input.printer;
    let Some((runner_up, id)) = report
        .ranking
        .get(1)
        .and_then(|id| sel.evaluated.proposals.get(id).map(|a| (a, id)))
    else {
        printer.status("- Audit drawn, but there is no runner-up to implement");
        return Ok(None);
    };
    super::site::phase(printer, &crew.input.progress, &format!(
            "## Audit: implementing the runner-up {id} ({}) in a scratch checkout; nothing of it is kept",
            runner_up.bot_id
        ));
    let mut audit = not_yet_run(id, runner_up);
    if let Some(cap) = crew.accounts.cap_reached(&settings.config.limits) {
        audit.reason = Some(format!("not run: {cap}"));
        printer.status(&format!("- Audit not run: {cap}"));
        return Ok(Some(audit));
    }
    let name = scratch_name(&bench.wt);
    let workspace = crew.input.workspace;
    let scratch = match workspace.create_scratch(&bench.wt, &name, start).await {
        Ok(wt) => wt,
        Err(e) => {
            printer.warn(&format!("the audit could not make its checkout: {e}"));
            audit.reason = Some(format!("no checkout: {e}"));
            return Ok(Some(audit));
        }
    };
    let before = crew.accounts.clone();
    let mut plan = bench.plan.clone();
    plan.env = variables(&scratch.path, &cache_dir(settings));
    let target = Target {
        wt: &scratch,
        plan: &plan,
        proposal: runner_up,
        budget: sel.budget,
        purpose: Purpose::Audit,
    };
    let result = super::attempt::attempts(crew, book, bench, contest, &target).await;
    if let Err(e) = workspace.remove_scratch(&scratch).await {
        printer.warn(&format!(
            "could not remove the audit's checkout {}: {e}",
            scratch.path.display()
        ));
    }
    forget_setup(settings, &scratch);
    let attempts = result?;
    record(&mut audit, &attempts, &crew.accounts.since(&before).total());
    printer.status(&format!("- Audit: the runner-up {}", how_it_went(&audit)));
    Ok(Some(audit))
}

/// The audit of proposal `id` (`runner_up`'s) before anything of it ran.
fn not_yet_run(id: &str, runner_up: &Arrived) -> AuditReport {
    AuditReport {
        proposal_id: id.to_owned(),
        bot_id: runner_up.bot_id.clone(),
        passed: None,
        attempts: 0,
        checks: Vec::new(),
        reason: None,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: None,
        duration_ms: 0,
    }
}

/// The name of the audit's scratch checkout beside the run's worktree `wt`: `<wt>-audit`.
fn scratch_name(wt: &Worktree) -> String {
    format!(
        "{}-audit",
        wt.path
            .file_name()
            .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned())
    )
}

/// Writes what the attempts on the runner-up came to into `audit`: the attempts, the checks,
/// what they `spent`, and whether the runner-up passed — or why that is unknown (a cap or
/// the environment stopped it).
fn record(audit: &mut AuditReport, attempts: &Attempts, spent: &Spend) {
    audit.attempts = attempts.used;
    audit.checks = attempts
        .verification
        .as_ref()
        .map(check_reports)
        .unwrap_or_default();
    audit.input_tokens = spent.input_tokens;
    audit.output_tokens = spent.output_tokens;
    audit.cost_usd = spent.cost_usd;
    audit.duration_ms = spent.duration.as_millis() as u64;
    match (&attempts.passed, &attempts.cap, &attempts.environment) {
        (Some(_), ..) => audit.passed = Some(true),
        // Stopped by a cap or the environment: nothing was learnt about the proposal.
        (None, Some(cap), _) => audit.reason = Some(format!("stopped: {cap}")),
        (None, None, Some(env)) => audit.reason = Some(format!("environment: {env}")),
        (None, None, None) => audit.passed = Some(false),
    }
}

/// How the runner-up did, for the console: `passed`, `failed`, or why it could not be
/// judged.
fn how_it_went(audit: &AuditReport) -> String {
    match audit.passed {
        Some(true) => "passed".to_owned(),
        Some(false) => "failed".to_owned(),
        None => format!(
            "could not be judged ({})",
            audit.reason.as_deref().unwrap_or("")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draw_follows_the_rate() {
        assert!((0..1000).all(|s| !audited(s, 0.0)));
        assert!((0..1000).all(|s| audited(s, 1.0)));
        let drawn = (0..10_000u64).filter(|s| audited(*s, 0.2)).count();
        assert!((1700..2300).contains(&drawn), "{drawn} of 10000 at 0.2");
    }
}
