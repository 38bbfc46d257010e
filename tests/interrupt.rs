//! `process::kill_all`, which Ctrl-C relies on: every child process group still running is
//! killed. In its own test binary, because it kills every child of the process.

use ralph::process::{kill_all, run, Cmd};
use std::time::{Duration, Instant};

#[tokio::test]
async fn kill_all_ends_running_children_and_their_children() {
    let task = tokio::spawn(async {
        run(&Cmd::new("sh")
            .args(["-c", "sleep 30 & sleep 30"])
            .timeout(Duration::from_secs(60)))
        .await
    });
    // Let it start.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    kill_all();
    let out = task.await.unwrap().unwrap();
    assert_eq!(out.code, None, "killed by a signal");
    assert!(!out.timed_out);
    assert!(started.elapsed() < Duration::from_secs(10));
}
