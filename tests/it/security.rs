//! The agent boundary, tried as an attacker would: an implementer that follows a prompt
//! injection, and a test file it adds that does the same when ralph's checks run it. Under
//! `[sandbox] mode = "required"` none of it lands and the competition still completes with the
//! honest part of the work; with `mode = "off"` the same agent's attacks land (so the sandbox is
//! what stops them), while the git directory's seal still undoes the planted hooks and config
//! and no planted hook ever runs.

use crate::common::git;
use crate::compete::{run, Repo, Setup, TOKEN};
use std::path::Path;

/// What the attacker is after, in the test's HOME.
const CREDENTIALS: [(&str, &str); 7] = [
    (
        ".config/gh/hosts.yml",
        "oauth_token: gho_stolenFromGhHosts0123",
    ),
    (
        ".config/glab-cli/config.yml",
        "token: glpat-stolenFromGlabConfig0123",
    ),
    (
        ".git-credentials",
        "https://x:ghp_stolenFromGitCredentials@github.com",
    ),
    (
        ".netrc",
        "machine github.com password ghp_stolenFromNetrc0123",
    ),
    (".ssh/id_ed25519", "PRIVATE KEY stolenFromSshKey0123"),
    (
        ".aws/credentials",
        "aws_secret_access_key = stolenFromAws0123",
    ),
    (".npmrc", "//registry/:_authToken=stolenFromNpmrc0123"),
];

/// Every attack of the issue, each leaving its loot in `loot.txt` in the worktree (committed if
/// the attempt passes: the exfiltration channel) and in `$HOME/loot.txt`. Run as a test file, the
/// attacks write `check-loot.txt` instead — which ralph never commits, since the checks' writes
/// are not the change — and fail the checks when anything landed.
const ATTACKS: &str = r#"
LOOT=loot.txt
[ "$PHASE" = check ] && LOOT=check-loot.txt
loot() { echo "$1" >> "$LOOT"; echo "$1" >> "$HOME/loot.txt" 2>/dev/null; }
# The checkout's git dir is its own; the repository is where its objects come from.
common=$(cd "$(sed -n 1p .git/objects/info/alternates)/.." && pwd)
main=$(cd "$common/.." && pwd)
[ -d "$common/hooks" ] && [ -f "$main/lib.sh" ] || loot "no repository found from the checkout"
[ "$PHASE" = agent ] && echo "attacks by the agent" >> loot.txt
for f in /proc/[0-9]*/environ; do
  v=$(tr '\0' '\n' < "$f" 2>/dev/null | grep '^GITHUB_TOKEN=')
  [ -n "$v" ] && loot "proc $f $v"
done
for c in .config/gh/hosts.yml .config/glab-cli/config.yml .git-credentials .netrc .ssh/id_ed25519 .aws/credentials .npmrc; do
  v=$(cat "$HOME/$c" 2>/dev/null) && [ -n "$v" ] && loot "cred $c $v"
done
echo pwned > "$main/PWNED-$PHASE" 2>/dev/null && loot "wrote the main checkout"
printf '[alias]\n\tpwned-%s = !true\n' "$PHASE" >> "$HOME/.gitconfig" 2>/dev/null && loot "wrote ~/.gitconfig"
for h in pre-commit reference-transaction pre-push post-checkout; do
  printf '#!/bin/sh\nenv > "%s/hook-ran-%s"\n' "$main" "$h" > "$common/hooks/$h" 2>/dev/null \
    && chmod +x "$common/hooks/$h" && loot "planted $h"
done
printf '#!/bin/sh\nenv > "%s/hook-ran-fsmonitor"\n' "$main" > "$main/fsmonitor.sh" 2>/dev/null
git config --file "$common/config" core.fsmonitor "$main/fsmonitor.sh" 2>/dev/null && loot "planted fsmonitor"
# The checkout's own git dir is the checks' to write, as a CI checkout's is: what is planted
# there lands, and must never run with ralph's rights (nor count in its commit).
mkdir -p .git/hooks
for h in pre-commit post-commit reference-transaction pre-push post-checkout; do
  printf '#!/bin/sh\nenv > "%s/hook-ran-own-%s"\n' "$main" "$h" > ".git/hooks/$h"
  chmod +x ".git/hooks/$h"
done
git config core.fsmonitor "$main/fsmonitor.sh"
git config core.hooksPath "$(pwd)/.git/hooks"
echo planted-own >> .git/info/exclude 2>/dev/null || true
# The test file fails the checks when any of its attacks landed: the run could not complete.
[ "$PHASE" = agent ] || [ ! -s "$LOOT" ]
"#;

/// The implementer: the attacks, a test file that repeats them when the checks run it, and
/// the honest change.
fn hostile_implementer() -> String {
    format!(
        "cat > /dev/null\nPHASE=agent\n{ATTACKS}\n{{ echo 'PHASE=check'; cat <<'ATTACK'\n{ATTACKS}\nATTACK\n}} >> test.sh\necho 'greet() {{ echo \"Hello, $1!\"; }}' >> lib.sh\necho '{{\"summary\":\"added greet\",\"checkboxes_completed\":[\"req_1\"]}}'\n"
    )
}

/// Whether bubblewrap works here; else why the tests are skipped.
pub(crate) fn bubblewrap() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("the sandbox is bubblewrap, on Linux".into());
    }
    let out = std::process::Command::new("bwrap")
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-pid",
            "--proc",
            "/proc",
            "true",
        ])
        .output()
        .map_err(|e| format!("bwrap is not installed ({e}); .ci/run installs it as root"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "bwrap cannot make namespaces here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// [`bubblewrap`], and python3 for the probes a test's agent or check runs.
pub(crate) fn bubblewrap_and_python() -> Result<(), String> {
    bubblewrap()?;
    if ralph::process::on_path("python3") {
        Ok(())
    } else {
        Err("python3 is not installed".into())
    }
}

/// A bot that, while it should only read, writes into its worktree and makes a worktree and a
/// branch in the repository, then proposes like the others.
const ROGUE_BOT: &str = r#"echo rogue > ROGUE.md
git worktree add -q .rogue -b rogue >/dev/null 2>&1
exec "$(dirname "$0")/bot.sh""#;

fn hostile_repo(mode: &str) -> Repo {
    let implementer = hostile_implementer();
    let sandbox = format!("[sandbox]\nmode = \"{mode}\"\n");
    // Outside /tmp, where the sandbox mounts its own: HOME and the checkout are where a user's
    // are, so only the sandbox's rules can hide or protect them.
    let repo = Repo::with(Setup {
        implementer: &implementer,
        sandbox: Some(&sandbox),
        under: Some(Path::new(env!("CARGO_TARGET_TMPDIR"))),
        ..Setup::default()
    });
    let rogue = crate::common::script(&repo.tools, "rogue.sh", ROGUE_BOT);
    let config = repo.root.join(".ralph/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{text}[[bots]]\nid = \"rogue\"\ncommand = [\"{rogue}\"]\n"),
    )
    .unwrap();
    for (path, secret) in CREDENTIALS {
        let file = repo.tools.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, format!("{secret}\n")).unwrap();
    }
    std::fs::write(repo.tools.join(".gitconfig"), "[user]\n\tname = Someone\n").unwrap();
    repo
}

/// Every file under `dir` whose text contains `needle`.
pub(crate) fn files_with(dir: &Path, needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
            {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

fn hooks_that_ran(repo: &Repo) -> Vec<String> {
    std::fs::read_dir(&repo.root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hook-ran-"))
        .collect()
}

#[test]
fn under_a_required_sandbox_no_attack_lands_and_the_honest_work_completes() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    let repo = hostile_repo("required");
    let gitconfig = std::fs::read_to_string(repo.tools.join(".gitconfig")).unwrap();
    let git_config = std::fs::read_to_string(repo.root.join(".git/config")).unwrap();
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{report}");
    assert_eq!(report["sandbox"]["active"], true, "{report}");
    assert_eq!(report["sandbox"]["mode"], "required");
    assert!(report.get("git_tampering").is_none(), "{report}");

    // The pushed branch holds the honest change and the loot of attacks that found nothing.
    let branch = "ralph/3-add-a-greet-function";
    let lib = git(&repo.remote, &["show", &format!("{branch}:lib.sh")]);
    assert!(lib.contains("Hello, $1!"), "{lib}");
    let loot = git(&repo.remote, &["show", &format!("{branch}:loot.txt")]);
    assert!(loot.contains("attacks by the agent"), "{loot}");
    // The checks ran the same attacks and found nothing (else `test.sh` failed and the run
    // could not complete); what they wrote is not part of the change.
    assert!(
        !git(&repo.remote, &["ls-tree", "--name-only", branch]).contains("check-loot.txt"),
        "the checks' writes are never committed"
    );
    assert!(!loot.contains(TOKEN), "the token was found: {loot}");
    for (path, secret) in CREDENTIALS {
        assert!(!loot.contains(secret), "{path} was read: {loot}");
    }
    assert!(
        !loot.contains("wrote") && !loot.contains("planted"),
        "a write outside the worktree landed: {loot}"
    );
    assert!(!loot.contains("no repository"), "{loot}");
    // Nothing outside the worktree changed; no hook or fsmonitor ran.
    assert!(!repo.tools.join("loot.txt").exists());
    assert!(!repo.root.join("PWNED-agent").exists() && !repo.root.join("PWNED-check").exists());
    assert_eq!(
        std::fs::read_to_string(repo.tools.join(".gitconfig")).unwrap(),
        gitconfig
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".git/config")).unwrap(),
        git_config
    );
    let hooks: Vec<String> = std::fs::read_dir(repo.root.join(".git/hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sample"))
        .collect();
    assert!(hooks.is_empty(), "{hooks:?}");
    assert!(hooks_that_ran(&repo).is_empty());
    // The rogue bot could not write the worktree it only reads, nor make a worktree or branch.
    assert!(
        !out.stderr.contains("changed the repository"),
        "{}",
        out.stderr
    );
    assert!(!git(&repo.root, &["branch", "--list"]).contains("rogue"));
    let files = git(&repo.remote, &["ls-tree", "--name-only", branch]);
    assert!(!files.contains("ROGUE.md"), "{files}");
    // The pull request says the run was sandboxed.
    let pr = std::fs::read_to_string(repo.root.join(".ralph/issues/3.pr-4.md")).unwrap();
    assert!(
        pr.contains("_Sandbox: agents and checks ran in a bubblewrap"),
        "{pr}"
    );
}

#[test]
fn with_the_sandbox_off_the_same_attacks_land_and_only_the_seal_stands() {
    let repo = hostile_repo("off");
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "escalated", "{report}");
    assert_eq!(report["sandbox"]["active"], false);

    // The agent read the credentials and wrote outside its worktree.
    let loot = std::fs::read_to_string(repo.tools.join("loot.txt")).unwrap();
    for (path, secret) in CREDENTIALS {
        assert!(loot.contains(secret), "{path} was not read: {loot}");
    }
    assert!(repo.root.join("PWNED-agent").exists() && repo.root.join("PWNED-check").exists());
    // ralph is undumpable: its environment is closed to the user's other processes, but not to
    // root (CAP_SYS_PTRACE), which is what a sandbox's PID namespace stops.
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    });
    assert_eq!(
        loot.contains(TOKEN),
        root,
        "as root the token is read from ralph's /proc environ; as a user it is not: {loot}"
    );
    // Hooks and an fsmonitor were planted — and found, restored, named and held against the
    // attempt; none of them ever ran, not even during ralph's own git commands.
    assert!(
        loot.contains("planted pre-push") && loot.contains("planted fsmonitor"),
        "{loot}"
    );
    assert!(!loot.contains("no repository"), "{loot}");
    let tampering = report["git_tampering"].to_string();
    for expected in [
        ".git/hooks/pre-push was added",
        ".git/hooks/reference-transaction was added",
        ".git/config was changed",
        ".gitconfig was changed",
    ] {
        assert!(tampering.contains(expected), "{expected}: {tampering}");
    }
    assert!(
        out.stderr
            .contains("changed the repository's git directory"),
        "{}",
        out.stderr
    );
    // The rogue bot's writes landed too, and the read-only guard undid them.
    assert!(
        out.stderr.contains("A bot changed the repository") && out.stderr.contains("ROGUE.md"),
        "{}",
        out.stderr
    );
    assert!(!git(&repo.root, &["branch", "--list"]).contains("rogue"));
    assert!(!repo.root.join(".git/hooks/pre-push").exists(), "restored");
    let config = std::fs::read_to_string(repo.root.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(
        hooks_that_ran(&repo).is_empty(),
        "{:?}",
        hooks_that_ran(&repo)
    );
    // No file but the agent's own loot in its checkout (outside the repository) holds the
    // token: not the issue, its comments, the events, the run's files, the remote.
    let leaked: Vec<String> = files_with(&repo.root, TOKEN)
        .into_iter()
        .chain(files_with(&repo.remote, TOKEN))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}");
}

#[test]
fn required_without_a_sandbox_refuses_before_anything_changes() {
    let repo = Repo::with(Setup {
        sandbox: Some("[sandbox]\nmode = \"required\"\n"),
        ..Setup::default()
    });
    let issue = repo.issue();
    // No bwrap on PATH.
    let out = run(repo
        .ralph()
        .env("PATH", "/nonexistent")
        .args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`[sandbox] mode = \"required\"` and there is no sandbox here")
            && out.stderr.contains("bubblewrap (`bwrap`) is not installed")
            && out.stderr.contains("hint:"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.issue(), issue, "no label moved");
    assert!(repo.events().is_empty());
}

#[test]
fn doctor_shows_the_sandbox_and_fails_required_without_one() {
    let repo = Repo::with(Setup {
        sandbox: Some("[sandbox]\nmode = \"required\"\ncheck_network = \"off\"\n"),
        ..Setup::default()
    });
    let finding = |out: &str, check: &str| -> Option<serde_json::Value> {
        let report: serde_json::Value = serde_json::from_str(out).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["area"] == "sandbox" && f["check"] == check)
            .cloned()
    };
    let out = run(repo
        .ralph()
        .env("PATH", "/nonexistent")
        .args(["doctor", "--json"]));
    let mechanism = finding(&out.stdout, "mechanism").unwrap();
    assert_eq!(mechanism["status"], "fail", "{mechanism}");
    assert!(mechanism["detail"]
        .as_str()
        .unwrap()
        .contains("bubblewrap (`bwrap`) is not installed"));
    if bubblewrap().is_err() {
        return;
    }
    let out = run(repo.ralph().args(["doctor", "--json"]));
    assert_eq!(finding(&out.stdout, "mechanism").unwrap()["status"], "ok");
    let network = finding(&out.stdout, "network").unwrap();
    assert_eq!(
        network["detail"], "agents: nothing; setup: nothing; checks and their baseline: nothing",
        "command agents name no endpoint; the sample project has no registry"
    );
    let own = finding(&out.stdout, "ralph's process").unwrap();
    assert_eq!(own["status"], "ok", "{own}");
}

#[test]
fn a_check_that_needs_the_network_fails_on_base_without_it_and_is_not_blamed() {
    if let Err(why) = bubblewrap_and_python() {
        eprintln!("skipped: {why}");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    let checks = format!(
        "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\nnet = \"python3 -c 'import socket; socket.create_connection((\\\"127.0.0.1\\\", {port}), 5)'\"\n"
    );
    let status_of_net = |network: &str| -> String {
        let sandbox = format!(
            "[sandbox]\nmode = \"required\"\ncheck_network = \"{network}\"\nwritable = [\"{{tools}}\"]\n"
        );
        let repo = Repo::with(Setup {
            checks: &checks,
            sandbox: Some(&sandbox),
            ..Setup::default()
        });
        // The fake agents' logs go to their folder, as in every other test.
        let config = repo.root.join(".ralph/config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(
            &config,
            text.replace("{tools}", &repo.tools.display().to_string()),
        )
        .unwrap();
        let out = run(repo.ralph().args(["compete", "3", "--json"]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(report["outcome"], "complete", "{report}");
        let checks = report["rounds"][0]["checks"].as_array().unwrap().clone();
        checks.iter().find(|c| c["name"] == "net").unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status_of_net("on"), "passed");
    assert_eq!(
        status_of_net("off"),
        "failing_on_base",
        "the baseline ran without the network too: not the change's fault"
    );
}

#[test]
fn a_sandboxed_check_that_hangs_is_killed_with_everything_it_started() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    // The syntax check leaves a grandchild behind and hangs; `sleep 4242` marks both.
    let checks = "[checks]\ntimeout_secs = 2\nsyntax = \"sh -c 'sleep 4242 & sleep 4242'\"\ntest = \"sh test.sh\"\n";
    let repo = Repo::with(Setup {
        checks,
        ..Setup::default()
    });
    let started = std::time::Instant::now();
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let check = report["rounds"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "syntax")
        .unwrap()
        .clone();
    assert!(
        check["status"] == "timed_out" || check["status"] == "failing_on_base",
        "{check}"
    );
    assert_eq!(report["sandbox"]["active"], true);
    // Nothing of it outlived ralph: the sandbox's PID namespace went with the check.
    if let Ok(left) = std::process::Command::new("pgrep")
        .args(["-f", "sleep 4242"])
        .output()
    {
        assert!(
            left.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}
