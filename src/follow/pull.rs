//! One pull request, followed: the facts gathered (the ledger's history, a revert on the base,
//! the feedback sorted, the CI judged), the plan made by [`decide::plan`], the outcomes settled,
//! then the plan's action performed — waiting for pending checks, a revision round answered on
//! the pull request, or the escalation.

use super::ci::{excerpt, judge, Judged};
use super::decide::{self, Action, Facts};
use super::feedback::{self, Request, Sorted};
use super::history::{self, PullHistory};
use super::requests::{revision_requirements, Broken};
use super::{FollowInput, BRANCH_PREFIX};
use crate::compete::agents::Agents;
use crate::compete::revise::{revise, RevisionInput, RevisionResult};
use crate::compete::round::Arrived;
use crate::compete::RunLock;
use crate::follow_report::{
    FollowAction, IgnoredFeedback, PullReport, RevisionItem, RevisionReport,
};
use crate::ledger::{Event, EventStore, PullRequestOutcome};
use crate::market::{tables, Outcome};
use crate::render::follow::{escalation, revision_reply};
use crate::tracker::pulls::{PullFacts, PullRequestTracker, PullState};
use crate::tracker::workflow::LABEL_ATTENTION;
use anyhow::Result;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often pending checks are asked for again while waiting.
const POLL: Duration = Duration::from_secs(15);

/// What an open pull request asks for.
#[derive(Default)]
struct Asked {
    /// The head commit.
    head: Option<String>,
    sorted: Sorted,
    ci: Judged,
}

/// Follows one pull request.
pub(super) async fn follow_one(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    pr: &PullFacts,
    events: &[Event],
) -> Result<PullReport> {
    let issue = history::issue_of(&pr.head, BRANCH_PREFIX);
    let bot = issue.and_then(|n| history::winner(events, n));
    let hist = history::history(events, pr.number);
    let mut report = PullReport {
        number: pr.number,
        issue,
        url: pr.url.clone(),
        state: pr.state,
        bot: bot.clone(),
        settled: Vec::new(),
        events: Vec::new(),
        action: FollowAction::Left {
            reason: String::new(),
        },
        ignored: Vec::new(),
        revision: None,
    };
    let held = pr
        .labels
        .iter()
        .any(|l| l.eq_ignore_ascii_case(LABEL_ATTENTION));
    let reverted = match (&pr.state, &pr.merge_commit) {
        (PullState::Merged, Some(commit)) => input
            .workspace
            .revert_of(&pr.base, commit)
            .await
            .unwrap_or_else(|e| {
                input.printer.warn(&format!(
                    "could not look for a revert of #{}: {e}",
                    pr.number
                ));
                None
            })
            .is_some(),
        _ => false,
    };
    let mut asked = if pr.state == PullState::Open && !held {
        gather(input, pulls, pr).await?
    } else {
        Asked::default()
    };
    let facts = |asked: &Asked| Facts {
        state: pr.state,
        held,
        settled: hist.settled.clone(),
        reverted,
        revisions: hist.revisions,
        revision_failures: hist.revision_failures,
        requests: asked.sorted.requests.len(),
        broken: asked.ci.broken.len(),
        pending: asked.ci.pending.len(),
        max_revisions: input.settings.config.follow.max_revisions,
    };
    let mut plan = decide::plan(&facts(&asked));
    if plan.action == Action::Wait {
        asked.ci = wait_for_ci(input, pulls, pr, &asked).await?;
        plan = decide::plan(&facts(&asked));
        if plan.action == Action::Wait {
            plan.action = Action::Leave(format!(
                "checks still running after {}s ({}): followed again next time",
                input.settings.config.follow.wait_for_ci_secs,
                asked.ci.pending.join(", ")
            ));
        }
    }
    report.ignored = asked
        .sorted
        .ignored
        .iter()
        .map(|i| IgnoredFeedback {
            id: i.id.clone(),
            author: i.author.clone(),
            reason: i.reason.clone(),
        })
        .collect();
    for i in &report.ignored {
        tracing::info!(
            "#{}: feedback {} by {} ignored: {}",
            pr.number,
            i.id,
            i.author.as_deref().unwrap_or("?"),
            i.reason
        );
    }
    if !plan.settle.is_empty() {
        match (&bot, issue) {
            (Some(bot), Some(n)) => {
                for outcome in &plan.settle {
                    let file = settle(input, pr, n, bot, *outcome, &hist)?;
                    report.settled.push(*outcome);
                    report.events.push(file);
                }
            }
            _ => {
                report.action = FollowAction::Left {
                    reason: "no ledger event names the bot that won its issue: nothing to settle"
                        .into(),
                };
                return Ok(report);
            }
        }
    }
    report.action = match plan.action {
        Action::Leave(reason) => FollowAction::Left { reason },
        Action::Wait => unreachable!("a wait became a decision above"),
        Action::Escalate(reason) => {
            escalate(input, pr.number, issue, &reason, None).await?;
            FollowAction::Escalated { reason }
        }
        Action::Revise => {
            let (Some(n), Some(bot)) = (issue, bot.clone()) else {
                report.action = FollowAction::Left {
                    reason: "no ledger event names the bot that won its issue: a revision needs its proposal".into(),
                };
                return Ok(report);
            };
            let head = match &asked.head {
                Some(h) => h.clone(),
                None => {
                    report.action = FollowAction::Left {
                        reason: format!("its branch `{}` is nowhere to be found", pr.head),
                    };
                    return Ok(report);
                }
            };
            let (action, revision, file) =
                revision_round(input, pulls, pr, n, &bot, &head, &asked, &hist).await?;
            report.revision = Some(revision);
            report.events.extend(file.clone());
            if let Some(f) = file {
                let outcome = if f.ends_with("revision_success.json") {
                    Outcome::RevisionSuccess
                } else {
                    Outcome::RevisionFailure
                };
                report.settled.push(outcome);
            }
            action
        }
    };
    Ok(report)
}

/// The feedback sorted and the CI judged, for an open pull request.
async fn gather(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    pr: &PullFacts,
) -> Result<Asked> {
    let head = match input.workspace.pull_head(&pr.head).await {
        Ok(Some(h)) => Some(h),
        Ok(None) => pr.head_sha.clone(),
        Err(e) => {
            input
                .printer
                .warn(&format!("could not read the branch `{}`: {e}", pr.head));
            pr.head_sha.clone()
        }
    };
    let since = match &head {
        Some(h) => input.workspace.last_own_commit(h).await.unwrap_or(None),
        None => None,
    };
    let me = input.tracker.current_user().await.unwrap_or(None);
    let all = pulls.feedback(pr.number).await?;
    let mut can_write = BTreeMap::new();
    let has_users = pulls.has_users();
    if has_users {
        for author in feedback::authors(&all, since, me.as_deref()) {
            let writes = input
                .tracker
                .permission(&author)
                .await
                .map(|p| p.can_write())
                .unwrap_or(false);
            can_write.insert(author, writes);
        }
    }
    let sorted = feedback::sort(
        &all,
        &feedback::Context {
            since,
            me: me.as_deref(),
            can_write: &can_write,
            has_users,
        },
    );
    let ci = judge_ci(pulls, pr, head.as_deref()).await?;
    Ok(Asked { head, sorted, ci })
}

/// The head's checks against the base's.
async fn judge_ci(
    pulls: &dyn PullRequestTracker,
    pr: &PullFacts,
    head: Option<&str>,
) -> Result<Judged> {
    let Some(head) = head.or(pr.head_sha.as_deref()) else {
        return Ok(Judged::default());
    };
    let on_head = pulls.ci(head).await?;
    if on_head.is_empty() {
        return Ok(Judged::default());
    }
    let on_base = match &pr.base_sha {
        Some(b) => pulls.ci(b).await?,
        None => Vec::new(),
    };
    Ok(judge(&on_head, &on_base))
}

/// Waits for pending checks up to `[follow] wait_for_ci_secs`, asking again every [`POLL`].
async fn wait_for_ci(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    pr: &PullFacts,
    asked: &Asked,
) -> Result<Judged> {
    let limit = Duration::from_secs(u64::from(input.settings.config.follow.wait_for_ci_secs));
    let started = Instant::now();
    let mut judged = asked.ci.clone();
    while !judged.pending.is_empty() && started.elapsed() < limit {
        input.printer.status(&format!(
            "- #{}: waiting for {} ({}s of {}s)",
            pr.number,
            judged.pending.join(", "),
            started.elapsed().as_secs(),
            limit.as_secs()
        ));
        tokio::time::sleep(POLL.min(limit.saturating_sub(started.elapsed()))).await;
        judged = judge_ci(pulls, pr, asked.head.as_deref()).await?;
    }
    Ok(judged)
}

/// Writes one after-the-pull-request event; returns its file name.
fn settle(
    input: &FollowInput<'_>,
    pr: &PullFacts,
    issue: u64,
    bot: &str,
    outcome: Outcome,
    hist: &PullHistory,
) -> Result<String> {
    let mut e = Event::new(issue, bot, outcome, tables().deltas.base(outcome));
    let seconds_to_merge = match (outcome, pr.created_at, pr.merged_at) {
        (Outcome::Merged, Some(c), Some(m)) => u64::try_from((m - c).num_seconds()).ok(),
        _ => None,
    };
    e.pull_request = Some(PullRequestOutcome {
        number: pr.number,
        seconds_to_merge,
        revisions: hist.revisions,
    });
    write_event(input, &e)
}

fn write_event(input: &FollowInput<'_>, e: &Event) -> Result<String> {
    let store = EventStore::new(input.settings.ralph_dir.join("events"));
    crate::compete::append(&store, std::slice::from_ref(e))?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("the event was not written"))
}

/// Runs a revision round, answers on the pull request and writes its event; escalates when it
/// failed and no further round may run. Returns the action, the round's report and the event
/// file (none when only the environment failed).
#[allow(clippy::too_many_arguments)]
async fn revision_round(
    input: &FollowInput<'_>,
    pulls: &dyn PullRequestTracker,
    pr: &PullFacts,
    issue: u64,
    bot: &str,
    head: &str,
    asked: &Asked,
    hist: &PullHistory,
) -> Result<(FollowAction, RevisionReport, Option<String>)> {
    let settings = input.settings;
    let _lock = RunLock::acquire(&settings.ralph_dir, issue)?;
    let the_issue = input.tracker.issue(issue).await?;
    let mut broken = Vec::new();
    for c in &asked.ci.broken {
        let log = match (&c.log, c.job) {
            (Some(log), _) => Some(log.clone()),
            (None, Some(job)) => pulls.job_log(job).await.ok(),
            (None, None) => None,
        };
        broken.push(Broken {
            name: c.name.clone(),
            excerpt: log.as_deref().map(excerpt),
        });
    }
    let (requirements, map) =
        revision_requirements(&the_issue.body, &asked.sorted.requests, &broken);
    let open = map.iter().map(|(id, _)| id.clone()).collect();
    let round = hist.revisions + 1;
    let max = settings.config.follow.max_revisions;
    input.printer.status(&format!(
        "## #{}: revision {round}/{max} for {} request(s) and {} broken check(s)",
        pr.number,
        asked.sorted.requests.len(),
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
        pull: pr.number,
        branch: pr.head.clone(),
        head: head.to_owned(),
        base: pr.base.clone(),
        push: input.push,
        requirements,
        open,
        proposal: proposal_of(settings, issue, bot, pr, &map),
        round,
    })
    .await?;
    let report = revision_report(&result, round, max, &map, &asked.sorted.requests, &broken);
    input
        .tracker
        .comment(pr.number, &crate::secret::redact(&revision_reply(&report)))
        .await?;
    // Only the environment failed: nobody's weight moves, and the round does not count.
    if result.environment.is_some() && !result.passed {
        return Ok((FollowAction::Revised, report, None));
    }
    let outcome = if result.passed {
        Outcome::RevisionSuccess
    } else {
        Outcome::RevisionFailure
    };
    let mut e = Event::new(issue, bot, outcome, tables().deltas.base(outcome));
    e.pull_request = Some(PullRequestOutcome {
        number: pr.number,
        seconds_to_merge: None,
        revisions: round,
    });
    e.iteration_count = Some(result.attempts);
    let t = result.accounts.total();
    e.cost_usd = t.cost_usd;
    e.duration_ms = Some(t.duration.as_millis() as u64);
    let file = write_event(input, &e)?;
    let failures = hist.revision_failures + u32::from(!result.passed);
    if !result.passed {
        if let Some(reason) = decide::exhausted(round, failures, max) {
            escalate(input, pr.number, Some(issue), &reason, Some(&report)).await?;
            return Ok((FollowAction::Escalated { reason }, report, Some(file)));
        }
    }
    Ok((FollowAction::Revised, report, Some(file)))
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
    let summary = std::fs::read(&path)
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
    let proposal = serde_json::from_value(serde_json::json!({
        "approach_summary": summary,
        "files_affected": [],
        "estimated_complexity": {"lines_of_code": 0, "files": 0, "difficulty": "unknown"},
        "risk_assessment": {"breaking_changes": false, "security_critical": false, "overall_risk": "unknown"},
        "spec_alignment": {"checkboxes_addressed": addressed},
        "success_probability": 0.5,
    }))
    .expect("the revision's proposal is well-formed");
    Arrived {
        bot_id: bot.to_owned(),
        proposal,
        submitted_at: chrono::Utc::now(),
        repaired: false,
        warnings: Vec::new(),
        tools_used: Vec::new(),
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
        checks: r.checks.clone(),
        attempts: r.attempts,
    }
}

/// `attention-needed` on the pull request and its issue, with the reasons on both.
async fn escalate(
    input: &FollowInput<'_>,
    pr: u64,
    issue: Option<u64>,
    reason: &str,
    revision: Option<&RevisionReport>,
) -> Result<()> {
    let body = crate::secret::redact(&escalation(pr, reason, revision)).into_owned();
    for n in std::iter::once(pr).chain(issue) {
        input
            .tracker
            .add_labels(n, &[LABEL_ATTENTION.to_owned()])
            .await?;
        input.tracker.comment(n, &body).await?;
    }
    input
        .printer
        .warn(&format!("#{pr} needs a human: {reason}"));
    Ok(())
}
