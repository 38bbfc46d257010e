//! Phase 2 of a run's round: every bot's proposal, read under watch (the bots that wrote into
//! the repository lose theirs), a failed bot's same proposal refused in a replan, then the
//! proposals blinded, judged — under watch too: a judge that wrote is left out — and ranked.
//! With `[marketplace] seats` only the bots drawn for the round are asked. The winner gets its
//! budget of attempts, or the round ends without one.

use super::crew::{Bench, Book, Contest, Crew, Selection};
use super::decide::RoundEnd;
use super::guard;
use super::propose::Standing;
use super::round::{
    evaluate, gather, read_ledger, standings, state_of, Arrived, Ask, Evaluated, Shared,
};
use super::seats::{announce, no_seat, seat, SeatInput};
use super::state::RunState;
use crate::agent::accounts::Accounts;
use crate::agent::Phase;
use crate::market::{same_proposal, tables};
use crate::output::Printer;
use crate::run_report::SkippedBot;
use crate::workspace::{Workspace, Worktree};
use anyhow::Result;
use std::collections::BTreeMap;
use std::time::Instant;

/// Phase 2: every bot's proposal (a failed bot's same proposal refused in a replan),
/// blinded, judged and ranked. `Err` is how the round ends when there is no winner.
pub(super) async fn select(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    wt: &Worktree,
    contest: &Contest,
    round: u32,
) -> Result<Result<Selection, RoundEnd>> {
    let settings = crew.input.settings;
    let printer = crew.input.printer;
    super::site::phase(
        printer,
        &crew.input.progress,
        "## Phase 2: Proposal Evaluation",
    );
    let ledger = read_ledger(settings)?;
    let standing = standings(&state_of(settings, &ledger));
    let seating = seat(&SeatInput {
        config: &settings.config,
        agents: &crew.input.agents,
        issue: &contest.issue,
        round,
        seed: crew.input.options.seed,
        accounts: &crew.accounts,
        ledger: &ledger,
    });
    if let Some(s) = &seating {
        announce(printer, s);
        if s.seated().next().is_none() {
            return Ok(Err(RoundEnd::CapReached(no_seat(s))));
        }
    }
    let ask = Ask {
        seating: seating.as_ref(),
        ..contest.ask()
    };
    let failure = book.state.failure.as_ref().map(|f| &f.context);
    let shared = Shared {
        settings,
        agents: &crew.input.agents,
        prompts: &bench.prompts,
        guidance: &bench.guidance,
        printer,
        progress: &crew.input.progress,
    };
    let workspace = crew.input.workspace;
    let started = Instant::now();
    let snap = guard::watch(workspace, wt).await?;
    let (mut arrived, mut skipped) =
        gather(&shared, ask, &standing, failure, &mut crew.accounts).await?;
    if let Some(changes) = guard::changed(workspace, printer, wt, &snap, "A bot").await? {
        arrived = drop_writers(printer, arrived, &mut skipped, &changes);
    }
    crew.timeline.since(format!("proposals r{round}"), started);
    let resubmitted = refuse_resubmission(&book.state, printer, &mut arrived);
    let proposers: Vec<String> = arrived.iter().map(|a| a.bot_id.clone()).collect();
    let started = Instant::now();
    let evaluated = judging(
        &shared,
        workspace,
        wt,
        ask,
        arrived,
        skipped,
        &mut crew.accounts,
    )
    .await?;
    crew.timeline.since(format!("judging r{round}"), started);
    let max_attempts = settings.config.max_attempts;
    Ok(pick(
        book,
        evaluated,
        &standing,
        max_attempts,
        proposers,
        resubmitted,
    ))
}

/// The proposals kept after a bot changed the repository (`changes`): the bots that used a
/// writing tool lose their proposal for the round (added to `skipped`); when no bot did, every
/// proposal is kept, with a warning.
fn drop_writers(
    printer: &Printer,
    arrived: Vec<Arrived>,
    skipped: &mut Vec<SkippedBot>,
    changes: &str,
) -> Vec<Arrived> {
    let (bad, good): (Vec<Arrived>, Vec<Arrived>) = arrived
        .into_iter()
        .partition(|a| guard::wrote(&a.tools_used));
    if bad.is_empty() {
        printer.warn("no bot could be told to have made the change: every proposal is kept");
    }
    skipped.extend(bad.into_iter().map(|a| SkippedBot {
        reason: "changed the repository".into(),
        detail: format!("{changes} (with {})", a.tools_used.join(", ")),
        bot_id: a.bot_id,
    }));
    good
}

/// In a replan the failed bot must bring a new proposal: the same one again is refused.
/// Returns the bots refused.
fn refuse_resubmission(
    state: &RunState,
    printer: &Printer,
    arrived: &mut Vec<Arrived>,
) -> Vec<String> {
    let (Phase::Replan, Some(failure)) = (state.phase, &state.failure) else {
        return Vec::new();
    };
    let failed_bot = &failure.context.failed_bot;
    let Some(pos) = arrived.iter().position(|a| &a.bot_id == failed_bot) else {
        return Vec::new();
    };
    let (same, similarity) = same_proposal(
        &failure.proposal,
        &arrived[pos].proposal,
        &tables().scoring.similarity,
    );
    if !same {
        return Vec::new();
    }
    // A rule of the market applied, not something that went wrong: a status line.
    printer.status(&format!(
        "- {failed_bot} resubmitted its failed proposal (similarity {similarity:.2}): refused"
    ));
    arrived.remove(pos);
    vec![failed_bot.clone()]
}

/// The proposals blinded, judged and ranked, under watch: when a judge changed the repository,
/// they are scored again in the same blind order, the judges' answers left out.
async fn judging(
    shared: &Shared<'_>,
    workspace: &dyn Workspace,
    wt: &Worktree,
    ask: Ask<'_>,
    arrived: Vec<Arrived>,
    skipped: Vec<SkippedBot>,
    accounts: &mut Accounts,
) -> Result<Evaluated> {
    let snap = guard::watch(workspace, wt).await?;
    let evaluated = evaluate(
        shared,
        ask,
        arrived.clone(),
        skipped.clone(),
        None,
        None,
        accounts,
    )
    .await?;
    let Some(changes) = guard::changed(workspace, shared.printer, wt, &snap, "A judge").await?
    else {
        return Ok(evaluated);
    };
    // Scored again in the same blind order, the judges' answers left out.
    let why = format!("the judge's answer was discarded: it changed the repository ({changes})");
    evaluate(
        shared,
        ask,
        arrived,
        skipped,
        Some(evaluated.report.seed),
        Some(&why),
        accounts,
    )
    .await
}

/// The round's winner with its budget of attempts (its standing's, at least one, at most
/// `max_attempts`); else how the round ends — a cap reached, no proposal, every proposal
/// below the human-review threshold — with the round recorded in the book.
fn pick(
    book: &mut Book,
    evaluated: Evaluated,
    standing: &BTreeMap<String, Standing>,
    max_attempts: u32,
    proposers: Vec<String>,
    resubmitted: Vec<String>,
) -> Result<Selection, RoundEnd> {
    if let Some(why) = &evaluated.stopped {
        book.report.rounds.push(evaluated.report.clone());
        return Err(RoundEnd::CapReached(why.clone()));
    }
    let Some((winner, scored)) = evaluated.winner() else {
        let end = if evaluated.report.proposals.is_empty() {
            RoundEnd::NoProposal
        } else {
            RoundEnd::AllBelow {
                threshold: tables().scoring.ranking.human_review_below,
            }
        };
        book.trouble.last_round = Some(evaluated.report.clone());
        book.report.rounds.push(evaluated.report);
        return Err(end);
    };
    let (winner, proposal_score) = (winner.clone(), scored.total_score);
    let budget = standing
        .get(&winner.bot_id)
        .map_or(1, |s| s.budget.max(1))
        .min(max_attempts);
    Ok(Selection {
        evaluated,
        winner,
        proposal_score,
        budget,
        proposers,
        resubmitted,
    })
}
