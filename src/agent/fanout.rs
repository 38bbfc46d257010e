//! The proposal fan-out: every bot of a round asked at once (tokio tasks, at most
//! `concurrency` in flight), a live line per bot while it works (its latest activity; see
//! [`crate::progress`]) and a line when it is done, and one result per bot — its proposal with the time it arrived, or why it
//! was skipped (failed to start, timed out, failed, invalid answer). A slow or broken bot costs
//! the round its own timeout, never the sum of all bots.

use super::protocol::{ask, AnswerContext, Asked, Proposal};
use super::{AgentCall, Backend};
use crate::progress::Progress;
use chrono::{DateTime, Utc};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// One bot's turn in a round.
pub struct BotTask {
    pub bot_id: String,
    pub backend: Arc<dyn Backend>,
    pub call: AgentCall,
}

/// What a bot's turn produced.
#[derive(Debug)]
pub enum BotOutcome {
    Proposal {
        asked: Box<Asked<Proposal>>,
        /// Stamped by ralph when the answer arrived (ties in the ranking go to the earlier).
        submitted_at: DateTime<Utc>,
    },
    Skipped {
        /// `failed to start`, `timed out`, `failed` or `invalid answer`.
        reason: &'static str,
        detail: String,
    },
}

#[derive(Debug)]
pub struct BotResult {
    pub bot_id: String,
    pub backend: String,
    pub outcome: BotOutcome,
    pub duration: Duration,
}

/// Asks every bot for a proposal, at most `concurrency` at a time, and returns one result
/// per bot in the order of `tasks`.
pub async fn gather(
    tasks: Vec<BotTask>,
    requirement_ids: &BTreeSet<String>,
    concurrency: usize,
    progress: &Progress,
) -> Vec<BotResult> {
    let permits = Arc::new(Semaphore::new(concurrency.max(1)));
    let count = tasks.len();
    // A JoinSet aborts its tasks when dropped (Ctrl-C): their child processes go with them.
    let mut set = tokio::task::JoinSet::new();
    for (index, task) in tasks.into_iter().enumerate() {
        let permits = Arc::clone(&permits);
        let ids = requirement_ids.clone();
        let view = progress.start(format!("propose · {}", task.bot_id));
        view.activity("waiting for a slot");
        let progress = progress.clone();
        let mut task = task;
        task.call.activity = Some(view.sink());
        set.spawn(async move {
            // The semaphore is never closed, so acquiring only waits.
            let _permit = permits.acquire_owned().await.ok();
            view.activity("asked");
            (index, propose(task, ids, view, &progress).await)
        });
    }
    let mut slots: Vec<Option<BotResult>> = (0..count).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((index, result)) => slots[index] = Some(result),
            // A panicking bot task is a bug; the other bots' results still count.
            Err(e) => tracing::error!("a bot task ended abnormally: {e}"),
        }
    }
    slots.into_iter().flatten().collect()
}

/// One bot's proposal, asked now; `view` is its live line, gone when the answer (or the
/// failure) is in, which then gets a line of its own.
async fn propose(
    task: BotTask,
    requirement_ids: BTreeSet<String>,
    view: crate::progress::Task,
    progress: &Progress,
) -> BotResult {
    let started = Instant::now();
    let ctx = AnswerContext {
        requirement_ids,
        ..AnswerContext::default()
    };
    let result = ask::<Proposal>(task.backend.as_ref(), &task.call, &ctx).await;
    let duration = started.elapsed();
    drop(view);
    let outcome = match result {
        Ok(asked) => {
            progress.note(&format!(
                "  ✓ {}: proposal in {}{}",
                task.bot_id,
                crate::progress::elapsed(duration),
                if asked.repaired {
                    " (after a repair)"
                } else {
                    ""
                }
            ));
            BotOutcome::Proposal {
                asked: Box::new(asked),
                submitted_at: Utc::now(),
            }
        }
        Err(e) => {
            progress.note(&format!(
                "  ✗ {}: skipped ({}) after {}",
                task.bot_id,
                e.kind(),
                crate::progress::elapsed(duration)
            ));
            BotOutcome::Skipped {
                reason: e.kind(),
                detail: e.to_string(),
            }
        }
    };
    BotResult {
        bot_id: task.bot_id,
        backend: task.backend.describe(),
        outcome,
        duration,
    }
}
