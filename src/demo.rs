//! `ralph demo`: a whole competition, offline, on a sample repository made in a temporary
//! directory — a tiny shell library with a real test, a local-tracker issue with two checkboxes,
//! three bots and the arbiter answering from recordings shipped in the binary, and an
//! implementer script that really edits the worktree. Round 1's implementation fails its test,
//! every bot replans, and the replan's winner passes. Then what happens after the pull request:
//! a maintainer asks for a change in a review ([`review`]), `ralph follow` answers it with a
//! revision, the maintainer merges ([`merge`]), and `ralph follow` settles the merge in the
//! ledger. The files are in `demo/` of the source.

use crate::fsutil::write_atomic;
use anyhow::{Context as _, Result};
use std::path::{Path, PathBuf};

/// The sample project's files, by path.
const PROJECT: [(&str, &str); 4] = [
    ("lib.sh", include_str!("../demo/project/lib.sh")),
    ("test.sh", include_str!("../demo/project/test.sh")),
    (
        "tests/add_test.sh",
        include_str!("../demo/project/tests/add_test.sh"),
    ),
    (
        ".gitignore",
        ".ralph/runs/\n.ralph/cache/\n.ralph/marketplace.json\n",
    ),
];

const ISSUE: &str = include_str!("../demo/issue.md");
const CONFIG: &str = include_str!("../demo/config.toml");
const IMPLEMENTER: &str = include_str!("../demo/implementer.sh");

/// The recorded answers, named as the replay backend looks them up.
const RECORDINGS: [(&str, &str); 14] = [
    (
        "arbiter.extract.txt",
        include_str!("../demo/recordings/arbiter.extract.txt"),
    ),
    (
        "arbiter.judge.r1.txt",
        include_str!("../demo/recordings/arbiter.judge.r1.txt"),
    ),
    (
        "arbiter.judge.r2.txt",
        include_str!("../demo/recordings/arbiter.judge.r2.txt"),
    ),
    (
        "arbiter.review.r1.txt",
        include_str!("../demo/recordings/arbiter.review.r1.txt"),
    ),
    (
        "arbiter.review.r2.txt",
        include_str!("../demo/recordings/arbiter.review.r2.txt"),
    ),
    (
        "arbiter.verify.txt",
        include_str!("../demo/recordings/arbiter.verify.txt"),
    ),
    (
        "arbiter.verify.revision.txt",
        include_str!("../demo/recordings/arbiter.verify.revision.txt"),
    ),
    (
        "arbiter.review.revision.txt",
        include_str!("../demo/recordings/arbiter.review.revision.txt"),
    ),
    (
        "smart_bot_1.propose.r1.txt",
        include_str!("../demo/recordings/smart_bot_1.propose.r1.txt"),
    ),
    (
        "smart_bot_1.propose.r2.txt",
        include_str!("../demo/recordings/smart_bot_1.propose.r2.txt"),
    ),
    (
        "smart_bot_2.propose.r1.txt",
        include_str!("../demo/recordings/smart_bot_2.propose.r1.txt"),
    ),
    (
        "smart_bot_2.propose.r2.txt",
        include_str!("../demo/recordings/smart_bot_2.propose.r2.txt"),
    ),
    (
        "smart_bot_3.propose.r1.txt",
        include_str!("../demo/recordings/smart_bot_3.propose.r1.txt"),
    ),
    (
        "smart_bot_3.propose.r2.txt",
        include_str!("../demo/recordings/smart_bot_3.propose.r2.txt"),
    ),
];

/// The issue number of the demo's issue.
pub const DEMO_ISSUE: u64 = 1;

/// The review the demo's maintainer writes on the pull request.
pub const REVIEW: &str =
    "Looks good. Please also add `wave NAME`, printing `o/ NAME`, with a test.";

/// The local tracker's record of the demo issue's pull requests.
fn pulls_path(repo: &Path) -> PathBuf {
    repo.join(".ralph/issues")
        .join(format!("{DEMO_ISSUE}.prs.json"))
}

/// Changes the demo's pull request record (the first one), as a maintainer editing the local
/// tracker's file would.
fn edit_pull(repo: &Path, change: impl FnOnce(&mut serde_json::Value)) -> Result<()> {
    let path = pulls_path(repo);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "the demo's pull request is not recorded in {}",
            path.display()
        )
    })?;
    let mut pulls: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("cannot read {}", path.display()))?;
    let pull = pulls
        .get_mut(0)
        .with_context(|| format!("{} holds no pull request", path.display()))?;
    change(pull);
    write(&path, &(serde_json::to_string_pretty(&pulls)? + "\n"))
}

/// A maintainer's review requesting a change ([`REVIEW`]) on the demo's pull request.
pub fn review(repo: &Path) -> Result<()> {
    edit_pull(repo, |pull| {
        let review = serde_json::json!({
            "author": "maintainer",
            "at": chrono::Utc::now(),
            "state": "changes_requested",
            "body": REVIEW,
        });
        match pull["reviews"].as_array_mut() {
            Some(reviews) => reviews.push(review),
            None => pull["reviews"] = serde_json::json!([review]),
        }
    })
}

/// The maintainer merges the demo's pull request: `main` moves to the branch's head (a
/// fast-forward; the sample repository's checkout follows), and the record says merged.
pub fn merge(repo_dir: &Path) -> Result<String> {
    let path = pulls_path(repo_dir);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let pulls: serde_json::Value = serde_json::from_str(&text)?;
    let branch = pulls[0]["head"]
        .as_str()
        .with_context(|| format!("{} names no branch", path.display()))?
        .to_owned();
    let repo = git2::Repository::open(repo_dir)?;
    let head = repo
        .find_branch(&branch, git2::BranchType::Local)?
        .get()
        .peel_to_commit()?;
    let main = repo.head()?.peel_to_commit()?;
    if !repo.graph_descendant_of(head.id(), main.id())? && head.id() != main.id() {
        anyhow::bail!("`{branch}` does not build on main: the demo merges by fast-forward only");
    }
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.safe();
    repo.checkout_tree(head.as_object(), Some(&mut checkout))?;
    repo.reference(
        "refs/heads/main",
        head.id(),
        true,
        "demo: merge the pull request",
    )?;
    let merged = head.id().to_string();
    edit_pull(repo_dir, |pull| {
        pull["state"] = serde_json::json!("merged");
        pull["merged_at"] = serde_json::json!(chrono::Utc::now());
        pull["merge_commit"] = serde_json::json!(merged);
    })?;
    Ok(head.id().to_string())
}

/// Where the demo was set up.
#[derive(Debug, Clone)]
pub struct DemoDirs {
    /// The sample repository.
    pub repo: PathBuf,
    /// The recordings and the implementer script (outside the repository).
    pub assets: PathBuf,
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    write_atomic(path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes the sample repository under `base` (which must be empty or absent) and commits it.
pub fn set_up(base: &Path) -> Result<DemoDirs> {
    let repo_dir = base.join("sample");
    let assets = base.join("assets");
    for (path, text) in PROJECT {
        write(&repo_dir.join(path), text)?;
    }
    write(&repo_dir.join(".ralph/issues/1.md"), ISSUE)?;
    for (name, text) in RECORDINGS {
        write(&assets.join("recordings").join(name), text)?;
    }
    let implementer = assets.join("implementer.sh");
    write(&implementer, IMPLEMENTER)?;
    let toml_path = |p: &Path| {
        p.to_string_lossy()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let config = CONFIG
        .replace("@RECORDINGS@", &toml_path(&assets.join("recordings")))
        .replace("@IMPLEMENTER@", &toml_path(&implementer));
    write(&repo_dir.join(".ralph/config.toml"), &config)?;
    std::fs::create_dir_all(repo_dir.join(".ralph/events"))?;

    let mut opts = git2::RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = git2::Repository::init_opts(&repo_dir, &opts)
        .with_context(|| format!("cannot create a git repository in {}", repo_dir.display()))?;
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let sig = git2::Signature::now("ralph demo", "ralph-demo@localhost")?;
    repo.commit(Some("HEAD"), &sig, &sig, "A tiny shell library", &tree, &[])?;
    Ok(DemoDirs {
        repo: repo_dir.canonicalize().unwrap_or(repo_dir),
        assets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_repository_is_committed_and_clean() {
        let dir = tempfile::tempdir().unwrap();
        let d = set_up(dir.path()).unwrap();
        let repo = git2::Repository::open(&d.repo).unwrap();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true);
        assert!(repo.statuses(Some(&mut opts)).unwrap().is_empty());
        let config = std::fs::read_to_string(d.repo.join(".ralph/config.toml")).unwrap();
        assert!(!config.contains("@RECORDINGS@") && !config.contains("@IMPLEMENTER@"));
        crate::config::Config::from_toml(Path::new("demo.toml"), &config).unwrap();
        assert!(d.assets.join("recordings/arbiter.verify.txt").is_file());
    }
}
