//! The GitLab CI/CD template (templates/ralph.yml) run by `gitlab-ci-local`, the local runner of
//! `.gitlab-ci.yml` files, against the stateful fake GitLab: a scheduled pipeline's queue job
//! writes the child pipeline, whose competition job turns issue #12 into merge request !7 and
//! whose ledger job pushes the events through the `ralph-ledger` resource group. Jobs run with
//! the shell executor (no container runtime here), ralph from this build on `PATH`.
//!
//! `gitlab-ci-local` is a node program: `.ci/run` installs it into `target/gitlab-ci-local` (or
//! `$RALPH_TEST_GITLAB_CI_LOCAL`); without it the test says why it is skipped and passes.

use crate::common::{commit_all, git};
use crate::fake_gitlab::{FakeGitlab, PROJECT_PATH, TOKEN};
use std::path::{Path, PathBuf};

/// The `gitlab-ci-local` program, when installed.
fn program() -> Option<PathBuf> {
    let dir = std::env::var_os("RALPH_TEST_GITLAB_CI_LOCAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gitlab-ci-local"));
    let bin = dir.join("node_modules/.bin/gitlab-ci-local");
    bin.is_file().then_some(bin)
}

/// Runs `gitlab-ci-local` in `dir` with `args`; returns its exit code and output.
fn run(gcl: &Path, dir: &Path, home: &Path, path: &str, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(gcl)
        .current_dir(dir)
        .args(args)
        .env("PATH", path)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_template_runs_a_scheduled_pipeline_in_gitlab_ci_local() {
    let Some(gcl) = program() else {
        eprintln!("skipped: gitlab-ci-local is not installed in target/gitlab-ci-local (.ci/run installs it; see docs/forges.md)");
        return;
    };
    let rsync = std::process::Command::new("rsync")
        .arg("--version")
        .output();
    if !rsync.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: gitlab-ci-local copies the project with rsync, which is not installed");
        return;
    }
    let fake = FakeGitlab::start().await;
    let repo = crate::gitlab_loop::gitlab_repo("Add greet");
    let root = &repo.root;
    std::fs::create_dir_all(root.join("templates/ralph")).unwrap();
    for f in ["templates/ralph.yml", "templates/ralph/child.yml"] {
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(f), root.join(f)).unwrap();
    }
    std::fs::write(
        root.join(".gitlab-ci.yml"),
        "include:\n  - local: templates/ralph.yml\n    inputs:\n      image: alpine:3\n      sandbox: \"off\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".gitignore"),
        ".ralph/worktrees/\n.ralph/runs/\n.gitlab-ci-local/\n.gitlab-ci-local-variables.yml\n",
    )
    .unwrap();
    commit_all(root, "the pipeline");
    git(root, &["push", "--quiet", "origin", "main"]);
    let ralph = assert_cmd::cargo::cargo_bin("ralph");
    let path = format!(
        "{}:{}",
        ralph.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    // The project's CI/CD variables, as GitLab hands them to every pipeline, the child's too.
    std::fs::write(
        root.join(".gitlab-ci-local-variables.yml"),
        format!(
            "GITLAB_URL: {}\nGITLAB_TOKEN: {TOKEN}\nGITLAB_CI: \"true\"\nCI_PIPELINE_SOURCE: schedule\nCI_PROJECT_PATH: {PROJECT_PATH}\n",
            fake.server.uri(),
        ),
    )
    .unwrap();
    let args = [
        "--force-shell-executor",
        "--ignore-predefined-vars",
        "GITLAB_CI,CI_PIPELINE_SOURCE,CI_PROJECT_PATH",
    ];
    let (code, log) = run(&gcl, root, &repo.tools, &path, &args);
    assert_eq!(code, 0, "{log}");
    // gitlab-ci-local runs a child pipeline as an experiment and does not fail its trigger job
    // with it: the outcome is read from what the jobs did.
    for job in [
        "ralph-queue",
        "ralph-competitions] -> ralph-compete-12",
        "ralph-competitions] -> ralph-ledger-12",
        "ralph-competitions] -> ralph-follow",
    ] {
        assert!(
            log.contains(&format!("PASS  {job}")) || log.contains(&format!("PASS  [{job}")),
            "{job}: {log}"
        );
    }
    assert!(log.contains("Pushed 1 event file(s) to `main`"), "{log}");
    let lab = fake.lab();
    assert!(lab.mrs[&7]["description"]
        .as_str()
        .unwrap()
        .contains("Fixes #12"));
    let pushed = git(&repo.remote, &["log", "--format=%s", "main"]);
    assert!(
        pushed.contains("ralph: record marketplace events"),
        "{pushed}"
    );
    // The job's report artifacts: the summary and the dotenv outputs.
    let summary = std::fs::read_to_string(root.join(".ralph/ci/summary.md")).unwrap();
    assert!(summary.contains("**Outcome:** complete"), "{summary}");
    let outputs = std::fs::read_to_string(root.join(".ralph/ci/ralph.env")).unwrap();
    assert!(outputs.contains("RALPH_OUTCOME=complete"), "{outputs}");
    let pipeline = std::fs::read_to_string(root.join(".ralph/ci/pipeline.yml")).unwrap();
    assert!(
        pipeline.contains("ralph-compete-12:") && pipeline.contains("resource_group: ralph-ledger")
    );
}
