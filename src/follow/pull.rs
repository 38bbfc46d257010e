//! One pull request, followed: the facts gathered (the ledger's history, a revert on the base,
//! the feedback sorted, the CI judged), the plan made by [`decide::plan`], the outcomes settled,
//! then the plan's action performed — waiting for pending checks, a revision round answered on
//! the pull request, or the escalation.

use super::ci::{judge, Judged};
use super::decide::{self, Action, Facts, Plan};
use super::effects::{escalate, write_event};
use super::feedback::{self, Sorted};
use super::history::{self, PullHistory};
use super::requests::Asked;
use super::revision::{revision_round, Round};
use super::{FollowInput, BRANCH_PREFIX};
use crate::follow_report::{FollowAction, IgnoredFeedback, PullReport};
use crate::ledger::{Event, PullRequestOutcome};
use crate::market::{tables, Outcome};
use crate::tracker::pulls::{PullFacts, PullRequestTracker, PullState};
use crate::tracker::workflow::LABEL_ATTENTION;
use anyhow::Result;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often pending checks are asked for again while waiting.
const POLL: Duration = Duration::from_secs(15);

/// What the ledger, the labels and git say about a pull request before anything is asked.
pub(super) struct Known {
    /// The issue it resolves, from its branch.
    pub issue: Option<u64>,
    /// The bot that won the issue.
    pub bot: Option<String>,
    pub hist: PullHistory,
    /// It carries `attention-needed`.
    held: bool,
    /// A commit on the base branch reverts its merge.
    reverted: bool,
}

/// What one pass of `follow` reads once for all its pull requests.
pub(super) struct Pass<'a> {
    pub pulls: &'a dyn PullRequestTracker,
    /// The ledger's events, oldest first.
    pub events: Vec<Event>,
    /// The login ralph runs as, where the tracker knows it.
    pub me: Option<String>,
}

/// Follows one pull request.
pub(super) async fn follow_one(
    input: &FollowInput<'_>,
    pass: &Pass<'_>,
    pr: &PullFacts,
) -> Result<PullReport> {
    let pulls = pass.pulls;
    let known = known(input, pr, &pass.events).await;
    let (plan, asked) = plan_for(input, pass, pr, &known).await?;
    let mut report = PullReport {
        number: pr.number,
        issue: known.issue,
        url: pr.url.clone(),
        state: pr.state,
        bot: known.bot.clone(),
        settled: Vec::new(),
        events: Vec::new(),
        action: FollowAction::Left {
            reason: String::new(),
        },
        ignored: ignored(pr, &asked.sorted),
        revision: None,
    };
    let (Some(issue), Some(bot)) = (known.issue, known.bot.clone()) else {
        report.action = match plan.action {
            Action::Leave(reason) => FollowAction::Left { reason },
            _ => FollowAction::Left {
                reason:
                    "no ledger event names the bot that won its issue: nothing to settle or revise"
                        .into(),
            },
        };
        return Ok(report);
    };
    for outcome in &plan.settle {
        report
            .events
            .push(settle(input, pr, issue, &bot, *outcome, &known.hist)?);
        report.settled.push(*outcome);
    }
    report.action = match plan.action {
        Action::Leave(reason) => FollowAction::Left { reason },
        // `plan_for` waits: a plan that still waits is left for the next follow.
        Action::Wait => FollowAction::Left {
            reason: "checks still running".into(),
        },
        Action::Escalate(reason) => {
            escalate(input, pulls, pr.number, Some(issue), &reason, None).await?;
            FollowAction::Escalated { reason }
        }
        Action::Revise => {
            let Some(head) = asked.head.clone() else {
                report.action = FollowAction::Left {
                    reason: format!("its branch `{}` is nowhere to be found", pr.head),
                };
                return Ok(report);
            };
            let round = Round {
                pr,
                issue,
                bot: &bot,
                head: &head,
                asked: &asked,
                hist: &known.hist,
            };
            let done = revision_round(input, pulls, &round).await?;
            report.revision = Some(done.report);
            if let Some((outcome, file)) = done.event {
                report.settled.push(outcome);
                report.events.push(file);
            }
            done.action
        }
    };
    Ok(report)
}

/// The issue and its winner, the pull request's history in the ledger, whether a human has it,
/// and (merged) whether the merge was reverted.
async fn known(input: &FollowInput<'_>, pr: &PullFacts, events: &[Event]) -> Known {
    let issue = history::issue_of(&pr.head, BRANCH_PREFIX);
    let held = pr
        .labels
        .iter()
        .any(|l| l.eq_ignore_ascii_case(LABEL_ATTENTION));
    let reverted = match (&pr.state, &pr.merge_commit) {
        (PullState::Merged, Some(commit)) => {
            match input.workspace.revert_of(&pr.base, commit).await {
                Ok(found) => found.is_some(),
                Err(e) => {
                    input.printer.warn(&format!(
                        "could not look for a revert of #{}: {e}",
                        pr.number
                    ));
                    false
                }
            }
        }
        _ => false,
    };
    Known {
        issue,
        bot: issue.and_then(|n| history::winner(events, n)),
        hist: history::history(events, pr.number),
        held,
        reverted,
    }
}

/// The plan for the pull request, with what it asks for; pending checks are waited for (up to
/// `[follow] wait_for_ci_secs`) before the plan is final.
async fn plan_for(
    input: &FollowInput<'_>,
    pass: &Pass<'_>,
    pr: &PullFacts,
    known: &Known,
) -> Result<(Plan, Asked)> {
    let pulls = pass.pulls;
    let mut asked = if pr.state == PullState::Open && !known.held {
        gather(input, pass, pr).await?
    } else {
        Asked::default()
    };
    let facts = |asked: &Asked| Facts {
        state: pr.state,
        held: known.held,
        settled: known.hist.settled.clone(),
        reverted: known.reverted,
        revisions: known.hist.revisions,
        revision_failures: known.hist.revision_failures,
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
    Ok((plan, asked))
}

/// The feedback left alone, for the report and the log.
fn ignored(pr: &PullFacts, sorted: &Sorted) -> Vec<IgnoredFeedback> {
    sorted
        .ignored
        .iter()
        .map(|i| {
            tracing::info!(
                "#{}: feedback {} by {} ignored: {}",
                pr.number,
                i.id,
                i.author.as_deref().unwrap_or("?"),
                i.reason
            );
            IgnoredFeedback {
                id: i.id.clone(),
                author: i.author.clone(),
                reason: i.reason.clone(),
            }
        })
        .collect()
}

/// The feedback sorted and the CI judged, for an open pull request.
async fn gather(input: &FollowInput<'_>, pass: &Pass<'_>, pr: &PullFacts) -> Result<Asked> {
    let (pulls, me) = (pass.pulls, pass.me.as_deref());
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
    let all = pulls.feedback(pr.number).await?;
    let mut can_write = BTreeMap::new();
    let has_users = pulls.has_users();
    if has_users {
        for author in feedback::authors(&all, since, me) {
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
            me,
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
