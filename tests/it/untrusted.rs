//! Files that arrive with a repository stay harmless (docs/configuration.md, Files read from the
//! repository): an event file that is a symbolic link (to a secret, to `/dev/zero`), a huge one,
//! one with a 309-digit number; a local issue file and a configuration that are links — each is
//! refused or skipped with its reason, never read, through the binary.

#![cfg(unix)]

use assert_cmd::Command;
use serde_json::Value;
use std::os::unix::fs::symlink;
use std::path::Path;

fn ralph(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ralph").unwrap();
    cmd.current_dir(dir)
        .env_remove("RALPH_LOG")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("NO_COLOR", "1");
    cmd
}

const SECRET: &str = "root:$6$this-must-never-be-read$";

fn event(bot: &str, delta: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-02-01T00:00:00Z","issue_number":1,"bot_id":"{bot}","outcome":"success","weight_delta":{delta}}}"#
    )
}

#[test]
fn event_files_that_are_links_devices_or_huge_are_skipped_unread() {
    let dir = tempfile::tempdir().unwrap();
    ralph(dir.path()).arg("init").assert().success();
    let events = dir.path().join(".ralph/events");
    let outside = tempfile::tempdir().unwrap();
    let shadow = outside.path().join("shadow");
    std::fs::write(&shadow, event("smart_bot_1", "0.1") + SECRET).unwrap();
    symlink(
        &shadow,
        events.join("2026-02-01T00-00-00-000001Z-smart_bot_1-success.json"),
    )
    .unwrap();
    symlink(
        "/dev/zero",
        events.join("2026-02-01T00-00-00-000002Z-smart_bot_2-success.json"),
    )
    .unwrap();
    let huge = events.join("2026-02-01T00-00-00-000003Z-smart_bot_3-success.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    std::fs::write(
        events.join("2026-02-01T00-00-00-000004Z-smart_bot_1-success.json"),
        event("smart_bot_1", &format!("1{}", "0".repeat(308))),
    )
    .unwrap();
    std::fs::write(
        events.join("2026-02-01T00-00-00-000005Z-smart_bot_2-success.json"),
        event("smart_bot_2", "0.1"),
    )
    .unwrap();

    let out = ralph(dir.path())
        .args(["events", "verify", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("this-must-never-be-read"), "{text}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], 1, "{v}");
    let reasons: Vec<String> = v["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        reasons,
        [
            "unreadable: a symbolic link, not a regular file: only regular files are read",
            "unreadable: a symbolic link, not a regular file: only regular files are read",
            "unreadable: 209715200 bytes, more than the 1048576 bytes allowed",
            "weight_delta 1e308 is outside [-1, 1]",
        ]
    );
    // The leaderboard folds what is valid and lists the rest.
    let board = ralph(dir.path())
        .args(["leaderboard", "--json"])
        .output()
        .unwrap();
    assert!(board.status.success());
    let board: Value = serde_json::from_slice(&board.stdout).unwrap();
    assert_eq!(board["event_count"], 1);
    assert_eq!(board["skipped"].as_array().unwrap().len(), 4);
}

#[test]
fn a_local_issue_or_a_configuration_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    ralph(dir.path()).arg("init").assert().success();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("issue.md");
    std::fs::write(&target, format!("---\ntitle: {SECRET}\n---\n- [ ] x\n")).unwrap();
    std::fs::create_dir_all(dir.path().join(".ralph/issues")).unwrap();
    symlink(&target, dir.path().join(".ralph/issues/5.md")).unwrap();
    let out = ralph(dir.path())
        .args(["--tracker", "local", "spec", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a symbolic link, not a regular file"),
        "{stderr}"
    );
    assert!(!stderr.contains("this-must-never-be-read"));

    let config = dir.path().join(".ralph/config.toml");
    std::fs::remove_file(&config).unwrap();
    symlink("/dev/zero", &config).unwrap();
    let out = ralph(dir.path()).args(["leaderboard"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.toml") && stderr.contains("not a regular file"),
        "{stderr}"
    );
}
