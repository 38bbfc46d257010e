//! What the sandbox shows, tried as a user meets it: the sandbox mounts its own `/tmp` and
//! `/var/tmp`, and a tool the user has there — a virtualenv whose `bin/` is on `PATH`, an agent
//! CLI installed with `npm install --prefix` (a `.bin` link into its package) — must still run,
//! with the same verdict and the same measurements as with the sandbox off. A program the
//! sandbox really hides is refused with its path named. The test repositories live under the
//! system's temporary folder, as a newcomer's clone in `/tmp` would.

use crate::common::script;
use crate::compete::{run, Repo, Setup};
use crate::security::bubblewrap;
use std::path::{Path, PathBuf};

/// A tool laid out like a virtualenv under `dir`: `bin/<name>` runs only with the `lib/` beside
/// it (as a venv's scripts need its `site-packages`).
fn venv_tool(dir: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(dir.join(format!("lib/{name}.sh")), body).unwrap();
    script(
        &dir.join("bin"),
        name,
        &format!(". \"$(dirname \"$0\")/../lib/{name}.sh\""),
    );
    dir.join("bin")
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The verdict, the checks' statuses and the coverage of one competition.
fn verdict(repo: &Repo, path: &str, sandbox: &str) -> (String, Vec<String>, serde_json::Value) {
    let out = run(repo
        .ralph()
        .env("PATH", path)
        .env("RALPH_SANDBOX", sandbox)
        .args(["compete", "3", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr));
    assert_eq!(
        report["sandbox"]["active"],
        sandbox == "required",
        "{}",
        report["sandbox"]
    );
    let round = &report["rounds"][0];
    let checks = round["checks"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| format!("{} {}", c["name"], c["status"]))
                .collect()
        })
        .unwrap_or_default();
    (
        report["outcome"].as_str().unwrap_or("").to_owned(),
        checks,
        round["coverage"].clone(),
    )
}

#[test]
fn a_virtualenv_under_tmp_runs_the_tests_and_measures_coverage_as_without_the_sandbox() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    // The project's test runner and coverage tool, in a "virtualenv" under /tmp whose bin/ is
    // on PATH (no VIRTUAL_ENV): each needs the venv's lib/.
    let tools = tempfile::tempdir().unwrap();
    let venv = tools.path().join("venv");
    let bin = venv_tool(&venv, "runtests", "sh test.sh");
    venv_tool(
        &venv,
        "covreport",
        "lines=$(wc -l < lib.sh); echo \"TOTAL $((lines * 10))%\"",
    );
    let checks = "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"runtests\"\n[checks.coverage]\ncommand = \"covreport\"\n";
    let runs: Vec<_> = ["off", "required"]
        .iter()
        .map(|mode| {
            let repo = Repo::with(Setup {
                checks,
                ..Setup::default()
            });
            verdict(&repo, &path_with(&bin), mode)
        })
        .collect();
    assert_eq!(runs[0].0, "complete", "{:?}", runs[0]);
    assert_eq!(runs[0], runs[1], "the sandbox changed the verdict");
    assert_eq!(
        runs[1].2,
        serde_json::json!({"before": 10.0, "after": 20.0}),
        "coverage measured in the sandbox"
    );
}

#[test]
fn an_agent_cli_linked_from_a_node_modules_bin_under_tmp_runs() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    // `npm install --prefix /tmp/x`: node_modules/.bin/bot is a link into its package, which
    // has files of its own beside the program.
    let prefix = tempfile::tempdir().unwrap();
    let package = prefix.path().join("node_modules/fake-bot");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(package.join("answer.json"), PROPOSAL).unwrap();
    script(
        &package,
        "cli.sh",
        "cat > /dev/null\ncat \"$(dirname \"$(readlink -f \"$0\")\")/answer.json\"",
    );
    let bin = prefix.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("../fake-bot/cli.sh", bin.join("fake-bot")).unwrap();
    let repo = Repo::with(Setup {
        extra_bots: "[[bots]]\nid = \"npm_bot\"\ncommand = [\"fake-bot\"]\n",
        ..Setup::default()
    });
    let out = run(repo
        .ralph()
        .env("PATH", path_with(&bin))
        .env("RALPH_SANDBOX", "required")
        .args(["compete", "3", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let skipped = report["rounds"][0]["skipped"].to_string();
    assert!(!skipped.contains("npm_bot"), "{skipped}\n{}", out.stderr);
    let bots: Vec<&str> = report["rounds"][0]["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["bot_id"].as_str())
        .collect();
    assert!(bots.contains(&"npm_bot"), "{bots:?}\n{}", out.stderr);
}

const PROPOSAL: &str = r#"{"approach_summary":"Add greet from an npm-installed bot","pseudo_code":"greet() { echo Hello; } written by the bot installed under a prefix","files_affected":[{"path":"lib.sh","change_type":"modify"}],"estimated_complexity":{"lines_of_code":3,"files":1,"modules":1,"difficulty":"low"},"risk_assessment":{"breaking_changes":false,"security_critical":false,"overall_risk":"low"},"spec_alignment":{"checkboxes_addressed":["req_1"],"components_addressed":[],"implicit_requirements_addressed":[]},"success_probability":0.7}"#;

#[test]
fn a_program_the_sandbox_hides_is_refused_with_its_path() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    let checks = "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"secret-runner\"\n";
    let repo = Repo::with(Setup {
        checks,
        sandbox: Some("[sandbox]\nmode = \"required\"\nhide = [\"~/private-tools\"]\n"),
        ..Setup::default()
    });
    let hidden = repo.tools.join("private-tools/bin");
    std::fs::create_dir_all(&hidden).unwrap();
    script(&hidden, "secret-runner", "sh test.sh");
    let path = path_with(&hidden);
    let doctor = run(repo.ralph().env("PATH", &path).args(["doctor", "--json"]));
    assert!(
        doctor.stdout.contains("`secret-runner` of `test` is at")
            && doctor.stdout.contains("which the sandbox hides"),
        "{}",
        doctor.stdout
    );
    let out = run(repo.ralph().env("PATH", &path).args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("`secret-runner` is at")
            && out
                .stderr
                .contains("private-tools/bin/secret-runner, which the sandbox hides"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_hidden_credential_file_reads_as_empty_not_as_an_error() {
    if let Err(why) = bubblewrap() {
        eprintln!("skipped: {why}");
        return;
    }
    // Yarn 1 stops on an `~/.npmrc` it cannot open (EACCES from a `nodev` bind of
    // /dev/null): hidden, the file must read as empty.
    let checks = "[checks]\nnpmrc = \"cat \\\"$HOME/.npmrc\\\" && ! grep -q _authToken \\\"$HOME/.npmrc\\\"\"\ntest = \"sh test.sh\"\n";
    let repo = Repo::with(Setup {
        checks,
        ..Setup::default()
    });
    std::fs::write(
        repo.tools.join(".npmrc"),
        "//registry.example/:_authToken=npm_secret\n",
    )
    .unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let (outcome, checks, _) = verdict(&repo, &path, "required");
    assert_eq!(outcome, "complete", "{checks:?}");
    assert!(
        checks.contains(&"\"npmrc\" \"passed\"".to_owned()),
        "{checks:?}"
    );
}
