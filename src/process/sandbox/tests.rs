//! The sandbox's policy, read without running anything.

use super::*;

fn sandbox(check_network: bool) -> Sandbox {
    let network = crate::process::egress::NetworkConfig {
        agents: crate::process::egress::KindNetwork {
            open: false,
            allow: vec!["mcp.example:8443".into()],
        },
        checks: crate::process::egress::KindNetwork {
            open: check_network,
            allow: vec![],
        },
        ..Default::default()
    };
    Sandbox {
        status: Status {
            mode: Mode::Auto,
            active: true,
            mechanism: Some("bubblewrap 0.8.0".into()),
            reason: None,
            check_network,
            network: NetworkStatus::of(&network),
            hidden: vec!["/h/.ssh".into()],
        },
        network,
        forwarder: None,
        program: Some("/usr/bin/bwrap".into()),
        home: Some("/h".into()),
        hide: vec!["/h/.ssh".into()],
        agent_state: vec!["/h/.claude".into(), "/h/.codex".into()],
        writable: vec!["/h/.cache/sccache".into()],
        path_dirs: vec!["/tmp/tools/bin".into()],
        scrub_dir: None,
        repository: None,
    }
}

#[test]
fn each_kind_gets_its_network_and_writable_places() {
    let sb = sandbox(false);
    let agent = sb.plan(&Confinement::new(Kind::Agent, "/w").writable("/h/.claude"));
    assert!(
        !agent.network,
        "an agent reaches out only through the proxy"
    );
    assert_eq!(
        agent.writable,
        [PathBuf::from("/h/.claude"), "/h/.cache/sccache".into()],
        "its own state, and what `[sandbox] writable` names"
    );
    assert_eq!(
        agent.readable,
        [PathBuf::from("/tmp/tools/bin")],
        "PATH under /tmp"
    );
    assert!(
        agent.hidden.contains(&"/h/.codex".into()),
        "another agent's state is hidden"
    );
    assert!(
        !agent.hidden.contains(&"/h/.claude".into()),
        "its own is not"
    );
    let check = sb.plan(&Confinement::new(Kind::Check, "/w"));
    assert!(!check.network, "check_network = off");
    assert!(
        check.hidden.contains(&"/h/.claude".into()) && check.hidden.contains(&"/h/.ssh".into())
    );
    assert!(
        sandbox(true)
            .plan(&Confinement::new(Kind::Check, "/w"))
            .network
    );
    let setup = sb.plan(&Confinement::new(Kind::Setup, "/w"));
    assert!(!setup.network, "a setup too");
    assert!(setup.writable.contains(&"/h/.cargo/registry".into()));
    assert!(
        !check.writable.contains(&"/h/.cargo/registry".into()),
        "checks only read caches"
    );
}

#[test]
fn each_kind_reaches_its_own_hosts_and_its_allowlist() {
    use crate::process::egress::Reach;
    let sb = sandbox(false);
    let agent = Confinement::new(Kind::Agent, "/w").hosts(["127.0.0.1:4010".to_owned()]);
    let reach = sb.reach(&agent);
    assert!(reach.allows("127.0.0.1", 4010), "its model endpoint");
    assert!(reach.allows("mcp.example", 8443), "agents_allow");
    assert!(!reach.allows("evil.example", 443));
    let check = sb.reach(&Confinement::new(Kind::Check, "/w"));
    assert!(
        !check.allows("127.0.0.1", 4010),
        "a check gets nothing by default"
    );
    assert_eq!(
        sandbox(true).reach(&Confinement::new(Kind::Check, "/w")),
        Reach::Open
    );
    let mut off = sandbox(false);
    off.status.active = false;
    assert_eq!(off.reach(&agent), Reach::Open, "no sandbox, no namespace");
}

#[test]
fn the_seal_watches_only_what_a_confined_process_could_write() {
    let sb = sandbox(true);
    let w = Path::new("/w");
    assert!(sb.could_write(Path::new("/w/src/x"), w));
    assert!(
        !sb.could_write(Path::new("/w/.git"), w),
        "the link is read-only"
    );
    assert!(!sb.could_write(Path::new("/h/.gitconfig"), w));
    assert!(!sb.could_write(Path::new("/r/.git/config"), w));
    assert!(!sb.could_write(Path::new("/r/.git/hooks/pre-push"), w));
    assert!(
        sb.could_write(Path::new("/h/.cache/sccache/x"), w),
        "[sandbox] writable"
    );
    assert!(sb.could_write(Path::new("/h/.claude/settings.json"), w));
    let mut off = sandbox(true);
    off.status.active = false;
    assert!(
        off.could_write(Path::new("/h/.gitconfig"), w),
        "without a sandbox, anything"
    );
}

#[test]
fn the_status_line_says_what_confined_the_run_or_that_nothing_did() {
    assert!(sandbox(true)
        .status()
        .line()
        .starts_with("agents and checks ran in a bubblewrap 0.8.0 sandbox"));
    let none = Status {
        mode: Mode::Auto,
        active: false,
        mechanism: None,
        reason: Some("bubblewrap (`bwrap`) is not installed".into()),
        check_network: true,
        network: NetworkStatus::default(),
        hidden: vec![],
    };
    assert_eq!(
        none.line(),
        "agents and checks ran WITHOUT a sandbox: bubblewrap (`bwrap`) is not installed"
    );
    let off = Status {
        mode: Mode::Off,
        ..none
    };
    assert!(off.line().contains("mode = \"off\""));
}

#[test]
fn paths_in_hide_expand_the_home_folder() {
    let h = Path::new("/home/u");
    assert_eq!(expand("~/.aws", Some(h)), PathBuf::from("/home/u/.aws"));
    assert_eq!(expand("/etc/secret", Some(h)), PathBuf::from("/etc/secret"));
    assert_eq!(expand("~", Some(h)), PathBuf::from("/home/u"));
}

#[test]
fn an_agent_clis_state_follows_its_variable() {
    let h = Path::new("/h");
    assert_eq!(
        agent_state("claude", Some(h)).len(),
        2,
        "the folder and ~/.claude.json"
    );
    assert!(agent_state("command", Some(h)).is_empty());
}

#[test]
fn the_repository_is_read_only_and_its_configuration_scrubbed_for_every_checkout() {
    let repo = tempfile::tempdir().unwrap();
    let common = repo.path().join(".git");
    std::fs::create_dir_all(&common).unwrap();
    std::fs::write(
        common.join("config"),
        "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n",
    )
    .unwrap();
    let mut sb = sandbox(false).with_repository(repo.path(), &common);
    sb.scrub_dir = Some(std::sync::Arc::new(tempfile::tempdir().unwrap()));
    // A checkout elsewhere, with a git dir of its own: nothing in its path names the repository.
    let checkout = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(checkout.path().join(".git/ralph")).unwrap();
    let plan = sb.plan(&Confinement::new(Kind::Check, checkout.path()));
    assert_eq!(plan.git, bwrap::GitLink::Own);
    assert!(
        plan.readable.contains(&repo.path().to_owned()),
        "{:?}",
        plan.readable
    );
    let (copy, shown_at) = plan
        .replaced
        .iter()
        .find(|(_, at)| *at == common.join("config"))
        .expect("the repository's configuration is shown scrubbed");
    let shown = std::fs::read_to_string(copy).unwrap();
    assert!(!shown.contains("c2VjcmV0"), "{shown}");
    assert_eq!(shown_at, &common.join("config"));
}
