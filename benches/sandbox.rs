//! What the sandbox costs: one confined process (`true`), a check run on a small Rust crate
//! (`cargo test`, warm), and a whole offline competition (`ralph demo`), each with the sandbox
//! off and with bubblewrap; then what the boundary around ralph itself adds: the private copy
//! of an agent CLI's state each call gets (made and thrown away), and how many variables of
//! this environment the allowlist passes. Run: `cargo bench --bench sandbox` (needs `bwrap`;
//! without it the bench says so and measures nothing).

use ralph::checks::{run_checks, CheckPlan, CheckSpec};
use ralph::process::sandbox::{install, Mode, Sandbox};
use ralph::process::{Cmd, Confinement, Kind};
use std::path::Path;
use std::time::{Duration, Instant};

fn median(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
    )
}

fn report(what: &str, off: Vec<Duration>, on: Vec<Duration>) {
    let (off, off_min, off_max) = median(off);
    let (on, on_min, on_max) = median(on);
    println!(
        "{what}: off {off:.1} ms [{off_min:.1}–{off_max:.1}], bubblewrap {on:.1} ms [{on_min:.1}–{on_max:.1}], +{:.1} ms ({:+.1}%)",
        on - off,
        (on / off - 1.0) * 100.0
    );
}

fn sandbox(rt: &tokio::runtime::Runtime, mode: Mode) {
    let sb = rt.block_on(Sandbox::detect(mode, true, &[], &[]));
    if mode == Mode::Required {
        assert!(sb.status().active, "{:?}", sb.status().reason);
    }
    install(sb);
}

fn processes(rt: &tokio::runtime::Runtime, dir: &Path) -> Vec<Duration> {
    (0..50)
        .map(|_| {
            let cmd = Cmd::new("true").confine(Confinement::new(Kind::Check, dir));
            let started = Instant::now();
            let out = rt.block_on(ralph::process::run(&cmd)).unwrap();
            assert!(out.success());
            started.elapsed()
        })
        .collect()
}

fn crate_checks(rt: &tokio::runtime::Runtime, dir: &Path) -> Vec<Duration> {
    let plan = CheckPlan::of(vec![CheckSpec::new("test", "cargo test -q --offline")]);
    (0..5)
        .map(|_| {
            let started = Instant::now();
            let ran = rt.block_on(run_checks(
                &plan,
                dir,
                Duration::from_secs(600),
                &ralph::checks::run::Unwatched,
                Default::default(),
            ));
            assert!(ran.checks.iter().all(|c| c.passed()), "{ran:?}");
            started.elapsed()
        })
        .collect()
}

fn demos(mode: &str) -> Vec<Duration> {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_ralph"))
                .args(["demo", "-q"])
                .env("RALPH_SANDBOX", mode)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            started.elapsed()
        })
        .collect()
}

/// A Claude Code state folder of a user who has used it for a while, in `home`.
fn claude_state(home: &Path) {
    let dir = home.join(".claude");
    std::fs::create_dir_all(dir.join("projects")).unwrap();
    std::fs::write(
        dir.join(".credentials.json"),
        "{\"claudeAiOauth\":{\"accessToken\":\"a\",\"refreshToken\":\"r\",\"expiresAt\":1}}",
    )
    .unwrap();
    std::fs::write(
        dir.join("settings.json"),
        "{\"model\":\"sonnet\"}".repeat(20),
    )
    .unwrap();
    std::fs::write(dir.join("CLAUDE.md"), "Prefer small changes.\n".repeat(100)).unwrap();
    // The history of many projects: not copied.
    for i in 0..200 {
        std::fs::write(dir.join(format!("projects/{i}.jsonl")), "x".repeat(10_000)).unwrap();
    }
    std::fs::write(
        home.join(".claude.json"),
        "{\"projects\":{}}".repeat(10_000),
    )
    .unwrap();
}

/// Making and dropping the private copy of that state, as every call in the sandbox does.
fn state_copies(home: &Path) -> Vec<Duration> {
    (0..200)
        .map(|_| {
            let started = Instant::now();
            let state = ralph::agent::state::CallState::copy("claude", Some(home)).unwrap();
            assert_eq!(state.shown.len(), 1);
            drop(state);
            started.elapsed()
        })
        .collect()
}

/// The variables of a job step on GitHub's `ubuntu-24.04` runner: the image's documented
/// environment, the runner's documented job variables, and a step's secrets as ralph's
/// workflow passes them.
const ACTIONS_JOB: &[&str] = &[
    "ACTIONS_RUNNER_ACTION_ARCHIVE_CACHE",
    "ANDROID_HOME",
    "ANDROID_NDK",
    "ANDROID_NDK_HOME",
    "ANDROID_NDK_LATEST_HOME",
    "ANDROID_NDK_ROOT",
    "ANDROID_SDK_ROOT",
    "ANT_HOME",
    "AZURE_EXTENSION_DIR",
    "BOOTSTRAP_HASKELL_NONINTERACTIVE",
    "CHROMEWEBDRIVER",
    "CHROME_BIN",
    "CONDA",
    "DEBIAN_FRONTEND",
    "DOTNET_MULTILEVEL_LOOKUP",
    "DOTNET_NOLOGO",
    "DOTNET_SKIP_FIRST_TIME_EXPERIENCE",
    "EDGEWEBDRIVER",
    "GECKOWEBDRIVER",
    "GHCUP_INSTALL_BASE_PREFIX",
    "GOROOT_1_22_X64",
    "GOROOT_1_23_X64",
    "GRADLE_HOME",
    "HOMEBREW_CLEANUP_PERIODIC_FULL_DAYS",
    "HOMEBREW_NO_AUTO_UPDATE",
    "JAVA_HOME",
    "JAVA_HOME_8_X64",
    "JAVA_HOME_11_X64",
    "JAVA_HOME_17_X64",
    "JAVA_HOME_21_X64",
    "NVM_DIR",
    "PIPX_BIN_DIR",
    "PIPX_HOME",
    "POWERSHELL_DISTRIBUTION_CHANNEL",
    "RUNNER_TOOL_CACHE",
    "SELENIUM_JAR_PATH",
    "SGX_AESM_ADDR",
    "SWIFT_PATH",
    "VCPKG_INSTALLATION_ROOT",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "ImageOS",
    "ImageVersion",
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "HOME",
    "PATH",
    "USER",
    "SHELL",
    "LANG",
    "CI",
    "GITHUB_ACTION",
    "GITHUB_ACTIONS",
    "GITHUB_ACTION_PATH",
    "GITHUB_ACTION_REPOSITORY",
    "GITHUB_ACTOR",
    "GITHUB_ACTOR_ID",
    "GITHUB_API_URL",
    "GITHUB_BASE_REF",
    "GITHUB_ENV",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_GRAPHQL_URL",
    "GITHUB_HEAD_REF",
    "GITHUB_JOB",
    "GITHUB_OUTPUT",
    "GITHUB_PATH",
    "GITHUB_REF",
    "GITHUB_REF_NAME",
    "GITHUB_REF_PROTECTED",
    "GITHUB_REF_TYPE",
    "GITHUB_REPOSITORY",
    "GITHUB_REPOSITORY_ID",
    "GITHUB_REPOSITORY_OWNER",
    "GITHUB_REPOSITORY_OWNER_ID",
    "GITHUB_RETENTION_DAYS",
    "GITHUB_RUN_ATTEMPT",
    "GITHUB_RUN_ID",
    "GITHUB_RUN_NUMBER",
    "GITHUB_SERVER_URL",
    "GITHUB_SHA",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_TRIGGERING_ACTOR",
    "GITHUB_WORKFLOW",
    "GITHUB_WORKFLOW_REF",
    "GITHUB_WORKFLOW_SHA",
    "GITHUB_WORKSPACE",
    "RUNNER_ARCH",
    "RUNNER_ENVIRONMENT",
    "RUNNER_NAME",
    "RUNNER_OS",
    "RUNNER_TEMP",
    "RUNNER_TRACKING_ID",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "GITHUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "RALPH_SANDBOX",
];

/// How many of this process's variables — and of an Actions job's — the allowlist passes to
/// a check and to Claude Code.
fn variables() {
    use ralph::process::environment::Policy;
    let policy = Policy::default();
    let own = ralph::agent::cli_env("claude", None);
    let job: Vec<(std::ffi::OsString, std::ffi::OsString)> = ACTIONS_JOB
        .iter()
        .map(|n| ((*n).into(), "v".into()))
        .collect();
    let check = policy.filter(Kind::Check, &[], job.clone()).len();
    let agent = policy.filter(Kind::Agent, &own, job.clone()).len();
    println!(
        "environment of an Actions job: {} variables; a check gets {check}, Claude Code {agent} (before: all but the {} GitHub and Actions tokens)",
        job.len(),
        ralph::env::SCRUBBED.iter().filter(|n| ACTIONS_JOB.contains(n)).count()
    );
    here(&policy, &own);
}

/// The same for this process's own environment.
fn here(policy: &ralph::process::environment::Policy, own: &[String]) {
    let all: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    let check = policy.filter(Kind::Check, &[], all.clone()).len();
    let agent = policy.filter(Kind::Agent, own, all.clone()).len();
    println!(
        "environment: {} variables here; a check gets {check}, Claude Code {agent} (before: all {} but the GitHub tokens)",
        all.len(),
        all.len()
    );
}

fn main() {
    if std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .status()
        .map_or(true, |s| !s.success())
    {
        println!("sandbox: bubblewrap does not work here; nothing measured");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Outside /tmp, like a real checkout.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let krate = dir.path().join("krate");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"krate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(1, 2), 3); }\n",
    )
    .unwrap();
    let built = std::process::Command::new("cargo")
        .args(["test", "-q", "--offline"])
        .current_dir(&krate)
        .output()
        .unwrap();
    assert!(built.status.success());

    sandbox(&rt, Mode::Off);
    let off = processes(&rt, dir.path());
    let checks_off = crate_checks(&rt, &krate);
    sandbox(&rt, Mode::Required);
    let on = processes(&rt, dir.path());
    let checks_on = crate_checks(&rt, &krate);
    report("one process (`true`, 50 runs)", off, on);
    report(
        "a check run (`cargo test`, warm, 5 runs)",
        checks_off,
        checks_on,
    );
    report(
        "a competition (`ralph demo`, 5 runs)",
        demos("off"),
        demos("required"),
    );
    let home = dir.path().join("home");
    claude_state(&home);
    let (copy, min, max) = median(state_copies(&home));
    println!(
        "an agent call's private state (Claude Code: 4 files, 160 KB; 200 runs): {copy:.2} ms [{min:.2}–{max:.2}]"
    );
    variables();
}
