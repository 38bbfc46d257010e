//! `action.yml` and the example workflow are valid YAML with the documented inputs, outputs,
//! triggers, least-privilege permissions and per-issue concurrency.

use yaml_rust2::{Yaml, YamlLoader};

fn load(path: &str) -> Yaml {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(docs.len(), 1, "{path}: one document");
    docs.remove(0)
}

fn keys(y: &Yaml) -> Vec<String> {
    y.as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_action_has_the_documented_inputs_and_outputs() {
    let action = load("action.yml");
    let inputs = keys(&action["inputs"]);
    for input in [
        "issue",
        "config",
        "github-token",
        "bots",
        "dry-run",
        "max-iterations",
        "refine-write",
        "claude-code-version",
        "codex-version",
        "gemini-cli-version",
        "qwen-code-version",
        "opencode-version",
        "aider-version",
        "sandbox",
    ] {
        assert!(
            inputs.contains(&input.to_owned()),
            "input {input}: {inputs:?}"
        );
        assert!(action["inputs"][input]["description"].as_str().is_some());
    }
    let outputs = keys(&action["outputs"]);
    for output in ["outcome", "pr-url", "winner", "branch"] {
        assert!(outputs.contains(&output.to_owned()), "output {output}");
        assert!(action["outputs"][output]["value"]
            .as_str()
            .unwrap()
            .contains("steps.compete.outputs"));
    }
    for output in ["matrix", "refine-matrix"] {
        assert!(action["outputs"][output]["value"]
            .as_str()
            .unwrap()
            .contains("steps.queue.outputs"));
    }
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let steps = action["runs"]["steps"].as_vec().unwrap();
    assert!(steps
        .iter()
        .all(|s| s["uses"].as_str().is_some() || s["shell"].as_str() == Some("bash")));
    // No input is spliced into a script: they reach the shell as environment variables.
    for s in steps {
        if let Some(run) = s["run"].as_str() {
            assert!(!run.contains("${{"), "an expression inside a script: {run}");
        }
    }
    let compete = steps
        .iter()
        .find(|s| s["id"].as_str() == Some("compete"))
        .unwrap();
    assert_eq!(
        compete["env"]["GITHUB_TOKEN"].as_str(),
        Some("${{ inputs.github-token }}")
    );
    // The agents and checks are sandboxed: `required` unless the workflow says otherwise, set
    // up before any agent runs, and passed to every step that runs agents.
    assert_eq!(
        action["inputs"]["sandbox"]["default"].as_str(),
        Some("required")
    );
    let setup = steps
        .iter()
        .position(|s| s["name"].as_str() == Some("Set up the sandbox"))
        .unwrap();
    let run = steps[setup]["run"].as_str().unwrap();
    assert!(
        run.contains("apt-get install") && run.contains("bubblewrap"),
        "{run}"
    );
    assert!(
        run.contains("apparmor_parser") && run.contains("userns"),
        "{run}"
    );
    for id in ["compete", "refine"] {
        let at = steps
            .iter()
            .position(|s| s["id"].as_str() == Some(id))
            .unwrap();
        assert!(at > setup, "{id} runs after the sandbox is set up");
        assert_eq!(
            steps[at]["env"]["RALPH_SANDBOX"].as_str(),
            Some("${{ inputs.sandbox }}"),
            "{id}"
        );
    }
    // Every action it uses is pinned to a commit.
    for s in steps {
        if let Some(uses) = s["uses"].as_str() {
            let (_, rev) = uses.split_once('@').unwrap();
            assert!(
                rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()),
                "{uses} is not pinned to a commit"
            );
        }
    }
}

#[test]
fn the_example_workflow_is_scheduled_least_privileged_and_serialised_per_issue() {
    let wf = load("examples/workflows/ralph.yml");
    let on = keys(&wf["on"]);
    assert!(on.contains(&"schedule".to_owned()) && on.contains(&"workflow_dispatch".to_owned()));
    assert!(
        wf["permissions"].as_hash().unwrap().is_empty(),
        "nothing by default"
    );
    let queue = &wf["jobs"]["queue"];
    assert_eq!(queue["permissions"]["contents"].as_str(), Some("read"));
    assert_eq!(queue["steps"][1]["with"]["mode"].as_str(), Some("queue"));
    let compete = &wf["jobs"]["compete"];
    let mut perms = keys(&compete["permissions"]);
    perms.sort();
    assert_eq!(perms, ["contents", "issues", "pull-requests"]);
    for p in &perms {
        assert_eq!(compete["permissions"][p.as_str()].as_str(), Some("write"));
    }
    assert!(compete["concurrency"]["group"]
        .as_str()
        .unwrap()
        .contains("matrix.issue"));
    assert!(compete["strategy"]["matrix"]
        .as_str()
        .unwrap()
        .contains("needs.queue.outputs.matrix"));
    // Drafts for the issues in refinement, on the same schedule: comments and labels only.
    let refine = &wf["jobs"]["refine"];
    assert_eq!(refine["needs"].as_str(), Some("queue"));
    assert!(refine["strategy"]["matrix"]
        .as_str()
        .unwrap()
        .contains("needs.queue.outputs.refine-matrix"));
    let mut perms = keys(&refine["permissions"]);
    perms.sort();
    assert_eq!(perms, ["contents", "issues"]);
    assert_eq!(refine["permissions"]["contents"].as_str(), Some("read"));
    assert_eq!(refine["steps"][1]["with"]["mode"].as_str(), Some("refine"));
    assert!(wf["jobs"]["queue"]["outputs"]["refine-matrix"]
        .as_str()
        .is_some());
    // After the competitions, one `follow` at a time, with what reading CI takes.
    let follow = &wf["jobs"]["follow"];
    let needs: Vec<&str> = follow["needs"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert_eq!(needs, ["queue", "compete"]);
    assert_eq!(
        follow["concurrency"]["group"].as_str(),
        Some("ralph-follow")
    );
    assert_eq!(follow["steps"][1]["with"]["mode"].as_str(), Some("follow"));
    let mut perms = keys(&follow["permissions"]);
    perms.sort();
    assert_eq!(
        perms,
        [
            "actions",
            "checks",
            "contents",
            "issues",
            "pull-requests",
            "statuses"
        ]
    );
    for read in ["actions", "checks", "statuses"] {
        assert_eq!(follow["permissions"][read].as_str(), Some("read"), "{read}");
    }
    // No job leaves the workflow's token in .git/config, where agents could read it.
    for job in ["queue", "refine", "compete", "follow"] {
        let checkout = wf["jobs"][job]["steps"]
            .as_vec()
            .unwrap()
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/checkout"))
            })
            .unwrap();
        assert_eq!(
            checkout["with"]["persist-credentials"].as_bool(),
            Some(false),
            "{job}"
        );
    }
    // Each run keeps the leaderboard page as an artifact.
    let steps = compete["steps"].as_vec().unwrap();
    assert!(steps
        .iter()
        .any(|s| s["run"].as_str() == Some("ralph leaderboard --html leaderboard.html")));
    assert!(steps.iter().any(|s| s["uses"]
        .as_str()
        .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        && s["with"]["path"].as_str() == Some("leaderboard.html")));
}

/// The GitLab CI/CD template: a `spec` document with the documented inputs, then the jobs;
/// the child pipeline's fixed part, with the resource group that serialises ledger pushes; and
/// no job of either puts a CI/CD variable into a URL or echoes a token.
#[test]
fn the_gitlab_template_has_its_inputs_jobs_and_resource_group() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/ralph.yml"))
        .unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    assert_eq!(docs.len(), 2, "spec, then the jobs");
    let inputs = keys(&docs[0]["spec"]["inputs"]);
    for input in ["stage", "image", "install", "ledger-branch", "sandbox"] {
        assert!(inputs.contains(&input.to_owned()), "{input}: {inputs:?}");
    }
    let jobs = &docs[1];
    assert_eq!(
        jobs["ralph-competitions"]["trigger"]["include"][0]["artifact"].as_str(),
        Some(".ralph/ci/pipeline.yml")
    );
    assert_eq!(
        jobs["ralph-competitions"]["trigger"]["strategy"].as_str(),
        Some("depend")
    );
    let child_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/ralph/child.yml"
    ))
    .unwrap();
    let child = &YamlLoader::load_from_str(&child_text).unwrap()[0];
    assert_eq!(
        child[".ralph-ledger"]["resource_group"].as_str(),
        Some("ralph-ledger")
    );
    assert_eq!(
        child["ralph-follow"]["resource_group"].as_str(),
        Some("ralph-follow")
    );
    assert_eq!(
        child[".ralph-compete"]["artifacts"]["reports"]["dotenv"].as_str(),
        Some(".ralph/ci/ralph.env")
    );
    for t in [&text, &child_text] {
        // Every ralph the jobs run talks to GitLab and pushes with GitLab's token, whatever
        // the repository's configuration says.
        for line in t.lines().filter(|l| l.trim_start().starts_with("- ")) {
            for (at, _) in line.match_indices("ralph ") {
                let before = line[..at].trim_end();
                if before.ends_with('-') || before.ends_with("then") || before.ends_with("else") {
                    assert!(line[at..].starts_with("ralph --tracker gitlab "), "{line}");
                }
            }
        }
        for secret in [
            "$GITLAB_TOKEN",
            "${GITLAB_TOKEN}",
            "$CI_JOB_TOKEN",
            "${CI_JOB_TOKEN}",
        ] {
            assert!(!t.contains(secret), "a template names {secret}");
        }
    }
}
