//! Live progress (docs/commands.md), through the binary: an implementer that speaks Claude Code's
//! stream-json over several seconds is followed line by line — off a terminal as heartbeat
//! lines (their content and elapsed time asserted), on a terminal (a tmux pane) as a live line
//! that is redrawn and cleared; checks report as each finishes; `-q` and `--progress never`
//! silence it; in Action mode the phases are log groups.

use crate::compete::{run, Repo, Setup};

/// A Claude Code stand-in: reads the prompt, then over about five seconds reads lib.sh, edits
/// it, runs the tests and answers, as stream-json lines.
const STREAMING: &str = r#"cat > /dev/null
say() { printf '%s\n' "$1"; }
say '{"type":"system","subtype":"init","model":"fake-sonnet","session_id":"s1"}'
sleep 1
say '{"type":"assistant","message":{"content":[{"type":"text","text":"Reading the library."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"'"$PWD"'/lib.sh"}}]}}'
sleep 1.5
say '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"'"$PWD"'/lib.sh","old_string":"x","new_string":"y"}}]}}'
echo 'greet() { echo "Hello, $1!"; }' >> lib.sh
sleep 1.5
say '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"sh test.sh"}}]}}'
sleep 1.5
say '{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"Done. {\"summary\":\"added greet\",\"checkboxes_completed\":[\"req_1\"]}","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}'"#;

fn streaming_repo(extra_config: &'static str) -> Repo {
    Repo::with(Setup {
        implementer: STREAMING,
        implementer_keys: "backend = \"claude\"\n",
        extra_config,
        ..Setup::default()
    })
}

/// The implementer's heartbeat lines: `(elapsed seconds, activity)`.
fn implementer_beats(stderr: &str) -> Vec<(u64, String)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  … implement · alpha · attempt 1/1 · "))
        .map(|rest| {
            let (time, activity) = rest.split_once(" · ").unwrap_or((rest, ""));
            let secs = time.trim_end_matches('s').parse().unwrap_or(0);
            (secs, activity.to_owned())
        })
        .collect()
}

#[test]
fn off_a_terminal_heartbeats_say_what_the_agent_is_doing() {
    let repo = streaming_repo("[output]\nheartbeat_secs = 1\n");
    let out = run(repo.ralph().args(["compete", "3", "--no-push"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let beats = implementer_beats(&out.stderr);
    assert!(
        beats.len() >= 3,
        "a beat a second for ~5 s: {beats:?}\n{}",
        out.stderr
    );
    let activities: Vec<&str> = beats.iter().map(|(_, a)| a.as_str()).collect();
    assert!(activities.contains(&"Read lib.sh"), "{activities:?}");
    assert!(
        activities.contains(&"Edit lib.sh") || activities.contains(&"Bash: sh test.sh"),
        "{activities:?}"
    );
    assert!(
        beats.windows(2).all(|w| w[0].0 <= w[1].0),
        "time only grows: {beats:?}"
    );
    assert!(beats.last().unwrap().0 >= 3, "{beats:?}");
    // No redrawing off a terminal: no carriage returns or cursor movement.
    assert!(!out.stderr.contains('\r') && !out.stderr.contains("\u{1b}["));
    // Each check reports as it finishes, before the attempt's verdict.
    let check = out.stderr.find("  ✓ test").expect("the test check's line");
    let verdict = out
        .stderr
        .find("- Attempt 1/1: verification passed")
        .unwrap();
    assert!(check < verdict, "{}", out.stderr);
    // The bot's proposal is reported when it arrives.
    assert!(
        out.stderr.contains("  ✓ alpha: proposal in "),
        "{}",
        out.stderr
    );
}

#[test]
fn quiet_and_progress_never_print_no_heartbeat() {
    for flag in ["-q", "--progress=never"] {
        let repo = streaming_repo("[output]\nheartbeat_secs = 1\n");
        let out = run(repo.ralph().args(["compete", "3", "--no-push", flag]));
        assert_eq!(out.code, 0, "{flag}: {}", out.stderr);
        assert!(
            implementer_beats(&out.stderr).is_empty(),
            "{flag}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("  ✓ alpha: proposal"), "{flag}");
    }
}

#[test]
fn in_action_mode_every_phase_is_a_log_group() {
    let repo = Repo::with(Setup::default());
    let out = run(repo
        .ralph()
        .env("GITHUB_ACTIONS", "true")
        .args(["compete", "3", "--dry-run"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let markers: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(
        markers,
        [
            "::group::Phase 1: Requirement Extraction",
            "::endgroup::",
            "::group::Phase 2: Proposal Evaluation",
            "::endgroup::",
            "::group::Result: DRY RUN",
            "::endgroup::",
        ],
        "{}",
        out.stderr
    );
    // Without Actions, no markers.
    let plain = run(repo.ralph().args(["compete", "3", "--dry-run"]));
    assert!(!plain.stderr.contains("::group::"), "{}", plain.stderr);
}

/// Runs `tmux` with its own socket; `None` when tmux is not installed.
fn tmux(socket: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn on_a_terminal_the_live_line_is_redrawn_and_cleared() {
    let repo = streaming_repo("");
    let socket = repo.tools.join("tmux.sock");
    if tmux(&socket, &["-V"]).is_none() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let ralph = assert_cmd::cargo::cargo_bin("ralph");
    let command = format!(
        "cd '{}' && env -u RALPH_LOG NO_COLOR=1 HOME='{}' GIT_CONFIG_NOSYSTEM=1 '{}' compete 3 --no-push; echo EXIT=$?; sleep 30",
        repo.root.display(),
        repo.tools.display(),
        ralph.display()
    );
    tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "140",
            "-y",
            "50",
            &command,
        ],
    );
    let capture = || tmux(&socket, &["capture-pane", "-p", "-t", "t"]).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut live = Vec::new();
    let mut screen = String::new();
    while std::time::Instant::now() < deadline {
        screen = capture();
        if let Some(line) = screen
            .lines()
            .find(|l| l.contains("implement · alpha · attempt 1/1"))
        {
            live.push(line.to_owned());
        }
        if screen.contains("EXIT=") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    tmux(&socket, &["kill-server"]);
    assert!(screen.contains("EXIT=0"), "{screen}");
    // While it ran: one line, its activity following the stream.
    assert!(live.iter().any(|l| l.contains("Read lib.sh")), "{live:#?}");
    assert!(
        live.iter()
            .any(|l| l.contains("Edit lib.sh") || l.contains("Bash: sh test.sh")),
        "{live:#?}"
    );
    // At the end: the live line is gone, the results stay.
    assert!(!screen.contains("implement · alpha · attempt"), "{screen}");
    assert!(screen.contains("## Result: SUCCESS"), "{screen}");
    assert!(screen.contains("✓ test"), "{screen}");
}
