//! A revision round of `ralph follow`: the failing checks' logs fetched and cut to excerpts,
//! the requests turned into the round's requirements, the round run (`compete::revise`), the
//! reply written on the pull request, the round's event, and the escalation when no further
//! round may run.

use super::ci::excerpt;
use super::decide;
use super::effects::{escalate, write_event};
use super::feedback::Request;
use super::history::PullHistory;
use super::requests::{revision_requirements, Asked, Broken};
use super::FollowInput;
use crate::compete::agents::Agents;
use crate::compete::revise::{revise, RevisionInput, RevisionResult};
use crate::compete::round::Arrived;
use crate::compete::RunLock;
use crate::follow_report::{FollowAction, RevisionItem, RevisionReport};
use crate::ledger::{Event, PullRequestOutcome};
use crate::market::{tables, Outcome};
use crate::render::follow::revision_reply;
use crate::tracker::pulls::{PullFacts, PullRequestTracker};
use anyhow::Result;

/// One revision round's question: the pull request, its issue and winner, its head, what it
/// asks for, and its history.
pub(super) struct Round<'a> {
    pub pr: &'a PullFacts,
    pub issue: u64,
    pub bot: &'a str,
    pub head: &'a str,
    pub asked: &'a Asked,
    pub hist: &'a PullHistory,
}

/// What a revision round did.
pub(super) struct Done {
    pub action: FollowAction,
    pub report: RevisionReport,
    /// The round's event and its file (none when only the environment failed, or the push was
    /// refused).
    pub event: Option<(Outcome, String)>,
}

/// Runs a revision round, answers on the pull request and writes its event; escalates when it
/// failed and no further round may run.
pub(super) async fn revision_round(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    r: &Round<'_>,
) -> Result<Done> {
    let _lock = RunLock::acquire(&input.settings.ralph_dir, r.issue)?;
    let (result, report) = run_revision(input, pulls, r).await?;
    pulls
        .comment_on_pull(
            r.pr.number,
            &crate::secret::redact(&revision_reply(&report)),
        )
        .await?;
    // Only the environment failed, or the push was refused: nobody's weight moves, and the
    // round does not count (the next follow tries again).
    if result.environment.is_some() && !result.passed || result.push_error.is_some() {
        return Ok(Done {
            action: FollowAction::Revised,
            report,
            event: None,
        });
    }
    record_round(input, pulls, r, &result, report).await
}

/// Runs the round itself: reads the issue, fetches the broken checks' logs, turns the requests
/// into the round's requirements and has the implementer revise the pull request's branch.
/// Returns what the round did and its report.
async fn run_revision(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    r: &Round<'_>,
) -> Result<(RevisionResult, RevisionReport)> {
    let settings = input.settings;
    let the_issue = input.tracker.issue(r.issue).await?;
    let broken = broken_checks(pulls, r.asked).await;
    let (requirements, map) =
        revision_requirements(&the_issue.body, &r.asked.sorted.requests, &broken);
    let round = r.hist.revisions + 1;
    let max = settings.config.follow.max_revisions;
    input.printer.status(&format!(
        "## #{}: revision {round}/{max} for {} request(s) and {} broken check(s)",
        r.pr.number,
        r.asked.sorted.requests.len(),
        broken.len()
    ));
    let result = revise(RevisionInput {
        settings,
        tracker: input.tracker,
        workspace: input.workspace,
        agents: Agents::build(&settings.config, &settings.root, None),
        printer: input.printer,
        progress: input.progress.clone(),
        token: input.token.clone(),
        sandbox: input.sandbox.clone(),
        issue: the_issue,
        pull: r.pr.number,
        branch: r.pr.head.clone(),
        head: r.head.to_owned(),
        base: r.pr.base.clone(),
        push: input.push,
        requirements,
        open: map.iter().map(|(id, _)| id.clone()).collect(),
        proposal: proposal_of(settings, r.issue, r.bot, r.pr, &map),
        round,
    })
    .await?;
    let report = revision_report(&result, round, max, &map, &r.asked.sorted.requests, &broken);
    Ok((result, report))
}

/// Writes a counted round's `revision_success`/`revision_failure` event, and escalates the
/// pull request when the round failed and no further round may run.
async fn record_round(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    r: &Round<'_>,
    result: &RevisionResult,
    report: RevisionReport,
) -> Result<Done> {
    let round = report.round;
    let outcome = if result.passed {
        Outcome::RevisionSuccess
    } else {
        Outcome::RevisionFailure
    };
    let file = write_event(input, &round_event(r, outcome, round, result))?;
    let failures = r.hist.revision_failures + u32::from(!result.passed);
    let action = match decide::exhausted(round, failures, report.max).filter(|_| !result.passed) {
        Some(reason) => {
            escalate(
                input,
                pulls,
                r.pr.number,
                Some(r.issue),
                &reason,
                Some(&report),
            )
            .await?;
            FollowAction::Escalated { reason }
        }
        None => FollowAction::Revised,
    };
    Ok(Done {
        action,
        report,
        event: Some((outcome, file)),
    })
}

/// The checks the change broke, each with its failing job's log excerpt where it can be read.
async fn broken_checks(pulls: &dyn PullRequestTracker, asked: &Asked) -> Vec<Broken> {
    let mut broken = Vec::new();
    for c in &asked.ci.broken {
        let log = match &c.log {
            Some(log) => Some(log.clone()),
            None if c.job.is_some() || c.url.is_some() => pulls.job_log(c).await.ok(),
            None => None,
        };
        broken.push(Broken {
            name: c.name.clone(),
            excerpt: log.as_deref().map(excerpt),
        });
    }
    broken
}

/// The round's `revision_success`/`revision_failure` event for the winning bot.
fn round_event(r: &Round<'_>, outcome: Outcome, round: u32, result: &RevisionResult) -> Event {
    let mut e = Event::new(r.issue, r.bot, outcome, tables().deltas.base(outcome));
    e.pull_request = Some(PullRequestOutcome {
        number: r.pr.number,
        seconds_to_merge: None,
        revisions: round,
    });
    e.iteration_count = Some(result.attempts);
    let t = result.accounts.total();
    e.cost_usd = t.cost_usd;
    e.duration_ms = Some(u64::try_from(t.duration.as_millis()).unwrap_or(u64::MAX));
    e
}

/// The winning bot's proposal, as far as this machine knows it: the run report's summary of
/// the winner's proposal when `.ralph/runs/N/report.json` is here, else the pull request's
/// title. It addresses every open request.
fn proposal_of(
    settings: &crate::settings::Settings,
    issue: u64,
    bot: &str,
    pr: &PullFacts,
    map: &[(String, String)],
) -> Arrived {
    let path = settings
        .ralph_dir
        .join("runs")
        .join(issue.to_string())
        .join("report.json");
    let summary = crate::fsutil::read_regular(&path, 64 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|report| {
            report["rounds"]
                .as_array()?
                .iter()
                .rev()
                .filter(|r| r["winner_bot"] == bot)
                .find_map(|r| {
                    let winner = r["winner"].as_str()?;
                    r["proposals"]
                        .as_array()?
                        .iter()
                        .find(|p| p["proposal_id"] == winner)?["approach_summary"]
                        .as_str()
                        .map(str::to_owned)
                })
        })
        .unwrap_or_else(|| pr.title.clone());
    let addressed: Vec<String> = map.iter().map(|(id, _)| id.clone()).collect();
    use crate::market::proposal::{Complexity, Proposal, RiskAssessment, SpecAlignment};
    let unknown = || "unknown".to_owned();
    let proposal = Proposal {
        approach_summary: summary,
        pseudo_code: String::new(),
        files_affected: Vec::new(),
        estimated_complexity: Complexity {
            lines_of_code: 0,
            files: 0,
            modules: 0,
            difficulty: unknown(),
        },
        risk_assessment: RiskAssessment {
            breaking_changes: false,
            security_critical: false,
            deployment_impact: String::new(),
            overall_risk: unknown(),
            mitigation: String::new(),
        },
        spec_alignment: SpecAlignment {
            checkboxes_addressed: addressed,
            components_addressed: Vec::new(),
            implicit_requirements_addressed: Vec::new(),
            reasoning: String::new(),
        },
        specialist_consultations: Vec::new(),
        innovation: String::new(),
        success_probability: 0.5,
    };
    Arrived {
        bot_id: bot.to_owned(),
        proposal,
        submitted_at: chrono::Utc::now(),
        repaired: false,
        warnings: Vec::new(),
        tools_used: Vec::new(),
        cost_usd: None,
    }
}

/// The round's report: each request with what became of it.
fn revision_report(
    r: &RevisionResult,
    round: u32,
    max: u32,
    map: &[(String, String)],
    requests: &[Request],
    broken: &[Broken],
) -> RevisionReport {
    let items = map
        .iter()
        .map(|(id, source)| {
            let request = requests.iter().find(|q| &q.id == source);
            let (place, author, text) = match request {
                Some(q) => (q.place.clone(), q.author.clone(), q.text.clone()),
                None => {
                    let b = broken.iter().find(|b| &b.name == source);
                    (
                        crate::render::follow::CI_PLACE.to_owned(),
                        None,
                        format!("make `{}` pass", b.map_or(source.as_str(), |b| &b.name)),
                    )
                }
            };
            let (done, note) = match (r.satisfied.get(id), r.unsatisfied.get(id)) {
                (Some(evidence), _) if r.passed => (true, evidence.clone()),
                (_, Some(why)) => (false, why.clone()),
                _ if r.passed => (false, "the change does not address it".to_owned()),
                _ => (false, "the revision failed".to_owned()),
            };
            RevisionItem {
                id: id.clone(),
                source: source.clone(),
                place,
                author,
                request: text,
                done,
                note,
            }
        })
        .collect();
    RevisionReport {
        round,
        max,
        passed: r.passed,
        commit: r.commit.clone(),
        pushed: r.pushed,
        summary: r.summary.clone(),
        items,
        reasons: r.reasons.clone(),
        environment: r.environment.clone(),
        push_error: r.push_error.clone(),
        checks: r.checks.clone(),
        attempts: r.attempts,
    }
}
