//! A competition waits only for what it needs: the first round's agents start while the
//! baseline runs, a baseline that refuses stops them with nothing changed, and the report
//! breaks the wall time into phases and names the critical path.

use crate::common::script;
use crate::compete::{run, Repo, Setup, BOT};
use std::time::{Duration, Instant};

#[test]
fn a_baseline_that_refuses_while_bots_propose_stops_them_and_changes_nothing() {
    // The test check fails on the base (after a second); the bot is still proposing then.
    let repo = Repo::with(Setup {
        checks: "[checks]\ntest = \"sleep 1; exit 1\"\n",
        ..Setup::default()
    });
    script(
        &repo.tools,
        "bot.sh",
        &format!("touch \"$HOME/proposing\"\nsleep 4343\ntouch \"$HOME/finished\"\n{BOT}"),
    );
    let issue = repo.issue();
    let started = Instant::now();
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        out.stderr.contains("no test check passes"),
        "{}",
        out.stderr
    );
    assert!(repo.tools.join("proposing").exists(), "the bot had started");
    assert!(!repo.tools.join("finished").exists(), "and was stopped");
    assert_eq!(repo.issue(), issue, "no label moved, no comment");
    assert!(repo.events().is_empty(), "no event written");
    assert!(!repo.checkout("3").exists());
    assert!(!repo.root.join(".ralph/runs/3/state.json").exists());
    if let Ok(left) = std::process::Command::new("pgrep")
        .args(["-f", "sleep 4343"])
        .output()
    {
        assert!(
            left.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}

#[test]
fn the_report_breaks_the_wall_time_into_phases_and_names_the_critical_path() {
    let repo = Repo::new(crate::compete::GOOD, &["alpha"]);
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = report["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for phase in [
        "baseline",
        "extraction r1",
        "proposals r1",
        "judging r1",
        "attempt r1.1",
        "checks r1.1",
        "verify r1.1",
        "review r1",
        "push",
    ] {
        assert!(names.contains(&phase), "{phase} in {names:?}");
    }
    for p in report["phases"].as_array().unwrap() {
        assert!(p["start_ms"].as_u64().is_some() && p["duration_ms"].as_u64().is_some());
    }
    let path: Vec<&str> = report["critical_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(path.last(), Some(&"push"), "{path:?}");
    assert!(path.contains(&"attempt r1.1"), "{path:?}");
    assert!(report["wall_ms"].as_u64().unwrap() > 0);
    // The terminal's end line says the same.
    let repo = Repo::new(crate::compete::GOOD, &["alpha"]);
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("Time: "))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(
        line.contains("critical path: ") && line.contains("push"),
        "{line}"
    );
}
