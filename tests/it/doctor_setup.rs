//! `ralph doctor` runs the setup a competition would run, in a scratch checkout of the base under
//! the same sandbox, through the binary: a setup that fails makes the verdict "not ready" with
//! what it said; one that tries a host the setup network policy refuses (a listener on
//! 127.0.0.1 outside `setup_allow`) names the host and the key that allows it, and the listener
//! hears nothing; one that reaches the index in its policy is ready. The scratch checkout is
//! gone afterwards and the user's working tree untouched; `--no-setup` skips the run.

use crate::compete::{run, Repo, Setup, CHECKS};
use crate::egress::server;
use crate::security::bubblewrap_and_python;
use serde_json::Value;
use std::sync::atomic::Ordering;

/// The `setup` finding(s) of a `ralph doctor --json` document.
fn setup_findings(doc: &Value) -> Vec<&Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["area"] == "setup")
        .collect()
}

/// The checkouts ralph made for `repo` and left behind.
fn left_checkouts(repo: &Repo) -> Vec<String> {
    let dir = repo.checkout("x");
    std::fs::read_dir(dir.parent().unwrap())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_failing_setup_makes_doctor_not_ready_and_says_what_it_said() {
    let checks =
        format!("{CHECKS}setup = \"echo installing; echo 'ERR_PNPM_NO_MATCHING_VERSION left-pad' >&2; touch made-by-setup; exit 3\"\n");
    let repo = Repo::with(Setup {
        checks: &checks,
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["doctor", "--json"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    let found = setup_findings(&doc);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!(found[0]["check"], "rehearsal");
    let summary = found[0]["detail"].as_str().unwrap();
    assert!(
        summary.contains("in a scratch checkout of origin/main (") && summary.contains("took "),
        "{summary}"
    );
    assert_eq!(found[1]["check"], "setup");
    assert_eq!(found[1]["status"], "fail");
    let detail = found[1]["detail"].as_str().unwrap();
    assert!(
        detail.contains("failed (exit 3)")
            && detail.contains("ERR_PNPM_NO_MATCHING_VERSION left-pad"),
        "{detail}"
    );
    assert!(
        found[1]["hint"]
            .as_str()
            .unwrap()
            .starts_with("a competition would stop on it (exit 2)"),
        "{}",
        found[1]
    );
    // Every other finding is as it was: only the setup keeps this repository from being ready.
    let failing: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "fail")
        .collect();
    assert_eq!(failing.len(), 1, "{failing:#?}");
    assert!(!repo.root.join("made-by-setup").exists());
    assert!(
        left_checkouts(&repo).is_empty(),
        "{:?}",
        left_checkouts(&repo)
    );

    // The text says it too, and what to do; `--no-setup` leaves it out, and the rest is ready.
    let text = run(repo.ralph().args(["doctor"]));
    assert_eq!(text.code, 1);
    assert!(
        text.stdout.contains("✗ setup")
            && text
                .stdout
                .contains("1 problem(s) would stop a competition."),
        "{}",
        text.stdout
    );
    assert!(
        text.stderr.contains("Setup: running `echo installing;"),
        "{}",
        text.stderr
    );
    let skipped = run(repo.ralph().args(["doctor", "--no-setup"]));
    assert_eq!(skipped.code, 0, "{}", skipped.stdout);
    assert!(
        skipped.stdout.contains("rehearsal") && skipped.stdout.contains("not run (--no-setup)"),
        "{}",
        skipped.stdout
    );
    assert!(skipped
        .stdout
        .contains("Ready: nothing would stop a competition"));
}

/// The setup that fetches `http://127.0.0.1:PORT/simple/` with Python.
fn fetching(port: u16) -> String {
    format!(
        "{CHECKS}setup = \"python3 -c 'import urllib.request; print(urllib.request.urlopen(\\\"http://127.0.0.1:{port}/simple/\\\").read().decode())'\"\n"
    )
}

#[test]
fn a_setup_the_network_policy_refuses_is_named_with_its_host() {
    if let Err(why) = bubblewrap_and_python() {
        eprintln!("skipped: {why}");
        return;
    }
    let (index, served) = server("package-1.0");
    let (other, heard) = server("package-2.0");
    let sandbox = format!(
        "[sandbox]\nmode = \"required\"\n[sandbox.network]\nsetup_allow = [\"127.0.0.1:{index}\"]\n"
    );

    // Outside the policy: refused, named, not ready; the listener hears nothing.
    let refused = fetching(other);
    let repo = Repo::with(Setup {
        checks: &refused,
        sandbox: Some(&sandbox),
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["doctor", "--json"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let found = setup_findings(&doc);
    assert!(
        found[0]["detail"]
            .as_str()
            .unwrap()
            .contains("confined as its setup: in bubblewrap"),
        "{}",
        found[0]
    );
    let setup = found[1];
    assert_eq!(setup["status"], "fail", "{setup}");
    let detail = setup["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "the sandbox refused its connection(s) to 127.0.0.1:{other} (not in the setup network policy)"
        )) && detail.contains("HTTP Error 403"),
        "{detail}"
    );
    let hint = setup["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!(
            "`[sandbox.network] setup_allow = [\"127.0.0.1:{other}\"]`"
        )),
        "{hint}"
    );
    assert_eq!(heard.load(Ordering::SeqCst), 0, "the listener was reached");
    assert!(
        left_checkouts(&repo).is_empty(),
        "{:?}",
        left_checkouts(&repo)
    );

    // Inside it: served, ok, ready.
    let allowed = fetching(index);
    let repo = Repo::with(Setup {
        checks: &allowed,
        sandbox: Some(&sandbox),
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["doctor", "--json"]));
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let found = setup_findings(&doc);
    assert_eq!(found[1]["status"], "ok", "{found:#?}");
    assert!(
        found[1]["detail"].as_str().unwrap().contains(" ok in "),
        "{}",
        found[1]
    );
    assert!(served.load(Ordering::SeqCst) >= 1, "the index was asked");
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(doc["ok"], true);
}

#[test]
fn a_repository_with_nothing_to_set_up_says_so() {
    let repo = Repo::with(Setup::default());
    let out = run(repo.ralph().args(["doctor", "--json"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let found = setup_findings(&doc);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]["detail"].as_str().unwrap().starts_with(
            "nothing to run (no setup, no native build, no CI job step before a check)"
        ),
        "{}",
        found[0]
    );
}
