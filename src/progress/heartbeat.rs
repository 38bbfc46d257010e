//! The heartbeat: off a terminal, every interval, one line per running agent or check with its
//! elapsed time and latest activity — so a CI log shows the work is alive. It stops when its
//! guard is dropped.

use super::Progress;
use std::time::Duration;

/// Stops the heartbeat when dropped.
pub struct Guard {
    handle: tokio::task::JoinHandle<()>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Prints `tracker`'s running tasks every `every` (the first after one interval).
pub(super) fn spawn(tracker: Progress, every: Duration) -> Guard {
    let handle = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            for line in tracker.heartbeat_lines() {
                tracker.println(&line);
            }
        }
    });
    Guard { handle }
}
