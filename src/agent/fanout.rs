//! The proposal fan-out: every bot of a round asked at once (tokio tasks, at most
//! `concurrency` in flight), a spinner per bot on stderr while it works (hidden when stderr is
//! not a terminal), and one result per bot — its proposal with the time it arrived, or why it
//! was skipped (failed to start, timed out, failed, invalid answer). A slow or broken bot costs
//! the round its own timeout, never the sum of all bots.

use super::protocol::{ask, AnswerContext, Asked, Proposal};
use super::{AgentCall, Backend};
use chrono::{DateTime, Utc};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
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

/// Spinners on stderr, one per bot.
pub struct Progress {
    multi: MultiProgress,
}

impl Progress {
    /// Spinners when `visible` (stderr is a terminal and not `-q`), nothing otherwise.
    pub fn new(visible: bool) -> Progress {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Progress {
            multi: MultiProgress::with_draw_target(target),
        }
    }

    fn bar(&self, bot: &str) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix:<20} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(bot.to_owned());
        bar.set_message("proposing…");
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    }
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
        let bar = progress.bar(&task.bot_id);
        set.spawn(async move {
            // The semaphore is never closed, so acquiring only waits.
            let _permit = permits.acquire_owned().await.ok();
            let started = Instant::now();
            let ctx = AnswerContext {
                requirement_ids: ids,
                ..AnswerContext::default()
            };
            let result = ask::<Proposal>(task.backend.as_ref(), &task.call, &ctx).await;
            let duration = started.elapsed();
            let outcome = match result {
                Ok(asked) => {
                    bar.finish_with_message(format!(
                        "proposal{}",
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
                    bar.finish_with_message(format!("skipped: {}", e.kind()));
                    BotOutcome::Skipped {
                        reason: e.kind(),
                        detail: e.to_string(),
                    }
                }
            };
            let result = BotResult {
                bot_id: task.bot_id,
                backend: task.backend.describe(),
                outcome,
                duration,
            };
            (index, result)
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
