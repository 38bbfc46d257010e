//! The tests of the setup's rehearsal: the report of each way a command can end, the refusals
//! counted while it ran, the jobs' preparations, and a rehearsal in a real scratch checkout.

use super::*;
use crate::checks::{CheckSpec, JobPlace};
use crate::fixtures::{git, settings};
use crate::process::sandbox::{Mode, NetworkStatus, Status as SandboxStatus};

fn ran(stake: Stake, ended: Result<(), Unready>, refused: Vec<Refusal>) -> Ran {
    Ran {
        stake,
        label: "Install".into(),
        command: "pnpm install --frozen-lockfile".into(),
        took: Duration::from_millis(1500),
        ended,
        refused,
        reaches: Vec::new(),
    }
}

fn failed(how: &str, said: &str) -> Result<(), Unready> {
    Err(Unready {
        how: how.into(),
        said: said.into(),
        message: String::new(),
    })
}

fn refusal(kind: &str, by: &str, host: &str, port: u16, count: u32) -> Refusal {
    Refusal {
        kind: kind.into(),
        by: by.into(),
        host: host.into(),
        port,
        count,
    }
}

fn step() -> Stake {
    Stake::Step {
        job: "ci.yml#test".into(),
        checks: vec!["lint".into(), "test".into()],
    }
}

#[test]
fn a_setup_that_passes_is_ok_with_its_time() {
    let f = finding_of(&ran(Stake::Setup, Ok(()), vec![]));
    assert_eq!((f.area, f.check.as_str()), ("setup", "setup"));
    assert_eq!(f.status, Status::Ok);
    assert_eq!(f.detail, "`pnpm install --frozen-lockfile` ok in 1.5s");
    assert_eq!(f.hint, None);
    // Each command names the registries its network policy lets it reach.
    let step = Ran {
        reaches: vec!["files.pythonhosted.org".into(), "pypi.org".into()],
        command: "pip install meson".into(),
        ..ran(step(), Ok(()), vec![])
    };
    assert_eq!(
        finding_of(&step).detail,
        "`ci.yml#test` step `Install` (its network: files.pythonhosted.org, pypi.org) ok in 1.5s"
    );
}

#[test]
fn a_failing_setup_stops_a_competition_and_says_what_it_said() {
    let f = finding_of(&ran(
        Stake::Setup,
        failed("exit 3", "resolving\n\n  ERR_PNPM_FETCH_404  \nnot found\n"),
        vec![],
    ));
    assert_eq!(f.status, Status::Fail);
    assert_eq!(
        f.detail,
        "`pnpm install --frozen-lockfile` failed (exit 3): resolving | ERR_PNPM_FETCH_404 | not found"
    );
    assert_eq!(
        f.hint.as_deref(),
        Some("a competition would stop on it (exit 2), after its first round's agents had started. Make it pass on the base branch, or set `[checks] setup` to the command that makes the environment")
    );
}

#[test]
fn a_setup_refused_by_the_network_policy_names_the_hosts_and_the_key() {
    let f = finding_of(&ran(
        Stake::Setup,
        failed("exit 1", "postinstall: HTTP Error 403"),
        vec![
            refusal("setup", "setup", "github.com", 443, 2),
            refusal("setup", "setup", "127.0.0.1", 8080, 1),
        ],
    ));
    assert_eq!(f.status, Status::Fail);
    assert_eq!(
        f.detail,
        "`pnpm install --frozen-lockfile` failed (exit 1); the sandbox refused its connection(s) to github.com:443, 127.0.0.1:8080 (not in the setup network policy): postinstall: HTTP Error 403"
    );
    assert_eq!(
        f.hint.as_deref(),
        Some("a competition would stop on it (exit 2), after its first round's agents had started. If it must reach github.com:443, 127.0.0.1:8080, allow it in .ralph/config.toml: `[sandbox.network] setup_allow = [\"github.com\", \"127.0.0.1:8080\"]`; or set `[checks] setup` to a command that needs no other host (e.g. one that skips the packages' install scripts)")
    );
}

#[test]
fn a_setup_that_passes_although_refused_is_a_warning() {
    let f = finding_of(&ran(
        Stake::Setup,
        Ok(()),
        vec![refusal("setup", "setup", "github.com", 443, 1)],
    ));
    assert_eq!(f.status, Status::Warn);
    assert!(
        f.detail.starts_with("`pnpm install --frozen-lockfile` succeeded in 1.5s, but the sandbox refused its connection(s) to github.com:443"),
        "{}",
        f.detail
    );
    assert_eq!(
        f.hint.as_deref(),
        Some("If it must reach github.com:443, allow it in .ralph/config.toml: `[sandbox.network] setup_allow = [\"github.com\"]`")
    );
}

#[test]
fn a_failing_job_step_warns_with_the_checks_it_leaves_unable_to_run() {
    let f = finding_of(&ran(
        step(),
        failed("exit 7", "curl: (56) CONNECT tunnel failed, response 403"),
        vec![refusal("check", "step Install", "evil.example", 443, 1)],
    ));
    assert_eq!((f.check.as_str(), f.status), ("CI step", Status::Warn));
    assert!(
        f.detail.starts_with("`ci.yml#test` step `Install` failed (exit 7); the sandbox refused its connection(s) to evil.example:443 (not in the check network policy)"),
        "{}",
        f.detail
    );
    let hint = f.hint.unwrap();
    assert!(
        hint.starts_with("the job's check(s) lint, test could not run on the base"),
        "{hint}"
    );
    assert!(
        hint.contains("`[sandbox.network] checks_allow = [\"evil.example\"]`"),
        "{hint}"
    );
    assert!(
        hint.ends_with(
            "or make the step pass on the base branch, or name the checks under [checks]"
        ),
        "{hint}"
    );
}

#[test]
fn a_timeout_and_a_read_only_write_say_what_to_change() {
    let f = finding_of(&ran(
        Stake::Native,
        failed(
            "stopped after 60s",
            "error: could not write build/x.o: Read-only file system",
        ),
        vec![],
    ));
    assert_eq!(
        (f.check.as_str(), f.status),
        ("native build", Status::Warn),
        "a competition goes on without it"
    );
    let hint = f.hint.unwrap();
    for said in [
        "It wrote where the sandbox allows no writing",
        "`[sandbox] writable` adds a place",
        "raise `[checks] timeout_secs`",
        "install the compiler and headers it needs",
    ] {
        assert!(hint.contains(said), "{said}: {hint}");
    }
}

#[test]
fn a_command_that_printed_nothing_shows_only_how_it_ended() {
    let f = finding_of(&ran(Stake::Setup, failed("exit 1", "  \n"), vec![]));
    assert_eq!(f.detail, "`pnpm install --frozen-lockfile` failed (exit 1)");
}

#[test]
fn only_the_refusals_made_since_count_and_only_those_of_the_command() {
    let before = vec![
        refusal("setup", "setup", "github.com", 443, 1),
        refusal("setup", "setup", "old.example", 443, 4),
    ];
    let after = vec![
        refusal("setup", "setup", "github.com", 443, 3),
        refusal("setup", "setup", "old.example", 443, 4),
        refusal("setup", "setup", "new.example", 80, 1),
        refusal("check", "check test", "github.com", 443, 5),
    ];
    assert_eq!(
        refused_since(&before, &after, "setup"),
        vec![
            refusal("setup", "setup", "github.com", 443, 2),
            refusal("setup", "setup", "new.example", 80, 1),
        ]
    );
    assert!(refused_since(&after, &after, "setup").is_empty());
}

fn job_check(name: &str, instance: &str, before: &[&str]) -> CheckSpec {
    CheckSpec {
        job: Some(JobPlace {
            instance: instance.into(),
            job: instance.split(' ').next().unwrap().into(),
            before: before
                .iter()
                .map(|c| JobStep {
                    label: format!("run {c}"),
                    command: (*c).into(),
                    installs: true,
                })
                .collect(),
            path: vec![format!("/opt/{instance}")],
        }),
        ..CheckSpec::new(name, "true")
    }
}

#[test]
fn each_job_instance_prepares_with_the_steps_before_its_first_check() {
    let plan = CheckPlan::of(vec![
        CheckSpec::new("fmt", "true"),
        job_check(
            "lint",
            "ci.yml#test (3.11)",
            &["pip install -e .", "make gen"],
        ),
        job_check("test", "ci.yml#test (3.11)", &["make fixtures"]),
        job_check("lint", "ci.yml#test (3.12)", &["pip install -e ."]),
    ]);
    let jobs = job_preparations(&plan);
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].instance, "ci.yml#test (3.11)");
    assert_eq!(
        jobs[0]
            .steps
            .iter()
            .map(|s| s.command.as_str())
            .collect::<Vec<_>>(),
        ["pip install -e .", "make gen"]
    );
    assert_eq!(jobs[0].checks, ["lint", "test"]);
    assert_eq!(jobs[0].later, 1, "the step between lint and test");
    assert_eq!(jobs[0].path, ["/opt/ci.yml#test (3.11)"]);
    assert_eq!((jobs[1].checks.len(), jobs[1].later), (1, 0));
}

#[test]
fn an_excerpt_is_the_last_four_lines_each_cut() {
    let long = "x".repeat(300);
    let e = excerpt(&format!("zero\none\ntwo\n\nthree\n{long}\n"));
    assert_eq!(e, format!("one | two | three | {}…", "x".repeat(159)));
    assert_eq!(excerpt(""), "");
}

#[test]
fn the_summary_says_where_how_and_how_long() {
    let s = summary(
        &[],
        0,
        "origin/main",
        "0123456789abcdef",
        "unconfined",
        Duration::from_millis(300),
    );
    assert_eq!(s, "nothing to run (no setup, no native build, no CI job step before a check); in a scratch checkout of origin/main (0123456789ab), removed afterwards; took 0.3s");
    let one = ran(Stake::Setup, Ok(()), vec![]);
    let s = summary(
        &[one],
        2,
        "main",
        "abc",
        "in bubblewrap",
        Duration::from_secs(75),
    );
    assert_eq!(s, "1 command(s) run as a competition would, confined as its setup: in bubblewrap; in a scratch checkout of main (abc), removed afterwards; took 75.0s; 2 CI job step(s) between checks not run here (they may need what a check built)");
}

fn sandbox(mode: Mode, mechanism: Option<&str>, setup: &'static str) -> SandboxStatus {
    SandboxStatus {
        mode,
        active: mechanism.is_some(),
        mechanism: mechanism.map(String::from),
        reason: mechanism
            .is_none()
            .then(|| "bwrap is not installed".to_owned()),
        check_network: false,
        network: NetworkStatus {
            agents: "allowlist",
            setup,
            checks: "allowlist",
        },
        hidden: vec![],
    }
}

#[test]
fn the_confinement_is_said_as_it_is() {
    assert_eq!(
        confinement(&sandbox(Mode::Auto, Some("bubblewrap 0.8.0"), "allowlist")),
        "in bubblewrap 0.8.0, writing the checkout and the package caches, the network only to the package registries and `setup_allow`"
    );
    assert!(
        confinement(&sandbox(Mode::Required, Some("bubblewrap 0.8.0"), "open"))
            .ends_with("the network OPEN (`[sandbox.network] setup = \"open\"`)")
    );
    assert_eq!(
        confinement(&sandbox(Mode::Off, None, "allowlist")),
        "unconfined (`[sandbox] mode = \"off\"`)"
    );
    assert_eq!(
        confinement(&sandbox(Mode::Auto, None, "allowlist")),
        "unconfined: there is no sandbox here (bwrap is not installed)"
    );
}

fn ready() -> Report {
    Report {
        ok: true,
        base: Some("main".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_skipped_or_impossible_rehearsal_says_why_and_changes_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), "");
    let mut r = ready();
    rehearse(&s, &mut r, Rehearsal::Skipped, &|_| {}).await;
    assert!(r.ok);
    assert_eq!(r.findings.len(), 1);
    assert!(r.findings[0].detail.starts_with("not run (--no-setup)"));

    let mut r = ready();
    rehearse(
        &s,
        &mut r,
        Rehearsal::Unconfined("no bwrap".into()),
        &|_| {},
    )
    .await;
    assert_eq!(r.findings[0].status, Status::Warn);
    assert_eq!(
        r.findings[0].detail,
        "not run: a competition would not start here (no bwrap)"
    );

    let mut r = Report {
        base: None,
        ..ready()
    };
    let off = sandbox(Mode::Off, None, "allowlist");
    rehearse(&s, &mut r, Rehearsal::Confined(off.clone()), &|_| {}).await;
    assert!(
        r.findings[0].detail.contains("no base branch"),
        "{:?}",
        r.findings
    );

    // A base that is not a repository's: said, nothing made.
    let mut r = ready();
    rehearse(&s, &mut r, Rehearsal::Confined(off), &|_| {}).await;
    assert!(r.ok);
    assert!(
        r.findings[0]
            .detail
            .starts_with("not run: the base branch `main` cannot be read"),
        "{:?}",
        r.findings
    );
}

#[tokio::test]
async fn the_setup_runs_in_a_scratch_checkout_of_the_base_that_is_removed_after() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let checkouts = dir.path().join("checkouts");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("base.txt"), "from the base\n").unwrap();
    git(&root, &["add", "base.txt"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    // The working tree differs from the base: the setup must see the base.
    std::fs::write(root.join("base.txt"), "from the working tree\n").unwrap();
    let config = format!(
        "[workspace]\nroot = \"{}\"\n[checks]\ntest = \"true\"\nsetup = \"cat base.txt; pwd; echo written > made.txt; exit 4\"\n",
        checkouts.display()
    );
    let s = settings(&root, &config);
    let off = sandbox(Mode::Off, None, "allowlist");
    let said = std::sync::Mutex::new(Vec::new());
    let mut r = ready();
    rehearse(&s, &mut r, Rehearsal::Confined(off), &|l| {
        said.lock().unwrap().push(l.to_owned())
    })
    .await;
    assert!(!r.ok, "a failing setup stops a competition");
    let summary = &r.findings[0];
    assert_eq!(
        (summary.check.as_str(), summary.status),
        ("rehearsal", Status::Ok)
    );
    assert!(
        summary.detail.contains("in a scratch checkout of main ("),
        "{}",
        summary.detail
    );
    let setup = &r.findings[1];
    assert_eq!(setup.status, Status::Fail);
    assert!(setup.detail.contains("failed (exit 4)"), "{}", setup.detail);
    assert!(setup.detail.contains("from the base"), "{}", setup.detail);
    assert!(
        setup.detail.contains(
            &dir.path()
                .canonicalize()
                .unwrap()
                .join("checkouts")
                .display()
                .to_string()
        ),
        "it ran under the checkouts' root: {}",
        setup.detail
    );
    assert!(
        !root.join("made.txt").exists(),
        "the user's tree is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("base.txt")).unwrap(),
        "from the working tree\n"
    );
    assert!(
        std::fs::read_dir(&checkouts).unwrap().next().is_none(),
        "the scratch checkout is gone, and the repository's folder of checkouts with it"
    );
    assert_eq!(said.lock().unwrap().len(), 1, "{:?}", said.lock().unwrap());
}
