//! Diff analysis of an implementation against its base: lines added and removed, files
//! affected, and the protected-path rule of docs/specification.md §9 — a change that touches
//! `.ralph/`, `.github/` or the check configuration, deletes a test file, removes test functions or
//! newly skips tests fails verification with the reason.

use super::{WorkspaceError, Worktree};
use git2::{Delta, DiffOptions, Repository};
use serde::Serialize;

/// The most changed-line text kept for the protected-path rule; the counts are always exact.
const MAX_LINE_TEXT: usize = 4 << 20;

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed` or `typechange`.
    pub status: &'static str,
    pub added: u64,
    pub removed: u64,
    /// The text of added and removed lines (bounded), for the protected-path rule.
    #[serde(skip)]
    pub added_lines: Vec<String>,
    #[serde(skip)]
    pub removed_lines: Vec<String>,
}

/// The whole diff.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DiffStats {
    pub files: Vec<FileChange>,
    pub lines_added: u64,
    pub lines_removed: u64,
}

impl DiffStats {
    pub fn lines_changed(&self) -> u64 {
        self.lines_added + self.lines_removed
    }

    pub fn files_affected(&self) -> usize {
        self.files.len()
    }
}

/// The path a delta is about: the new one, or the old one for a deletion.
fn delta_path(delta: &git2::DiffDelta<'_>) -> String {
    delta
        .new_file()
        .path()
        .or_else(|| delta.old_file().path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn open_worktree(wt: &Worktree) -> Result<Repository, WorkspaceError> {
    super::repo::open_checkout(wt)
}

/// Everything in the worktree that differs from the base commit: committed, staged, unstaged
/// and untracked (with their content).
fn worktree_diff<'r>(
    repo: &'r Repository,
    wt: &Worktree,
) -> Result<git2::Diff<'r>, WorkspaceError> {
    let base = git2::Oid::from_str(&wt.base_commit)
        .and_then(|oid| repo.find_commit(oid))
        .and_then(|c| c.tree())
        .map_err(|e| WorkspaceError::git("reading the base commit", e))?;
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true);
    repo.diff_tree_to_workdir_with_index(Some(&base), Some(&mut opts))
        .map_err(|e| WorkspaceError::git("computing the diff", e))
}

/// An untracked by-product (bytecode, a cache, a report): never committed, so never part of the
/// change.
fn left_out(delta: &git2::DiffDelta<'_>) -> bool {
    delta.status() == Delta::Untracked && super::byproducts::is_byproduct(&delta_path(delta))
}

/// The diff of the worktree (committed, staged, unstaged and untracked changes) against the
/// commit the branch started from.
pub fn analyse(wt: &Worktree) -> Result<DiffStats, WorkspaceError> {
    let repo = open_worktree(wt)?;
    let mut diff = worktree_diff(&repo, wt)?;
    diff.find_similar(None)
        .map_err(|e| WorkspaceError::git("finding renames", e))?;

    let mut stats = DiffStats::default();
    for delta in diff.deltas() {
        let path = delta_path(&delta);
        // What never enters a commit is no part of the change.
        if left_out(&delta) {
            continue;
        }
        let status = match delta.status() {
            Delta::Added | Delta::Untracked => "added",
            Delta::Deleted => "deleted",
            Delta::Renamed => "renamed",
            Delta::Typechange => "typechange",
            _ => "modified",
        };
        stats.files.push(FileChange {
            path,
            status,
            added: 0,
            removed: 0,
            added_lines: Vec::new(),
            removed_lines: Vec::new(),
        });
    }
    let mut kept = 0usize;
    let mut index_of = std::collections::HashMap::new();
    for (i, f) in stats.files.iter().enumerate() {
        index_of.insert(f.path.clone(), i);
    }
    diff.foreach(
        &mut |_, _| true,
        None,
        None,
        Some(&mut |delta, _hunk, line| {
            let path = delta_path(&delta);
            let Some(&i) = index_of.get(&path) else {
                return true;
            };
            let text = || {
                String::from_utf8_lossy(line.content())
                    .trim_end()
                    .to_owned()
            };
            let f = &mut stats.files[i];
            match line.origin() {
                '+' => {
                    f.added += 1;
                    if kept < MAX_LINE_TEXT {
                        let t = text();
                        kept += t.len();
                        f.added_lines.push(t);
                    }
                }
                '-' => {
                    f.removed += 1;
                    if kept < MAX_LINE_TEXT {
                        let t = text();
                        kept += t.len();
                        f.removed_lines.push(t);
                    }
                }
                _ => {}
            }
            true
        }),
    )
    .map_err(|e| WorkspaceError::git("reading the diff", e))?;
    stats.lines_added = stats.files.iter().map(|f| f.added).sum();
    stats.lines_removed = stats.files.iter().map(|f| f.removed).sum();
    Ok(stats)
}

/// The unified diff of the worktree against its base, cut at `limit` bytes (with a note), for
/// the `verify` prompt.
pub fn patch_text(wt: &Worktree, limit: usize) -> Result<String, WorkspaceError> {
    let repo = open_worktree(wt)?;
    let diff = worktree_diff(&repo, wt)?;
    let mut out = String::new();
    let mut cut = false;
    diff.print(git2::DiffFormat::Patch, |delta, _, line| {
        if left_out(&delta) {
            return true;
        }
        if out.len() >= limit {
            cut = true;
            return false;
        }
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin());
        }
        out.push_str(&String::from_utf8_lossy(line.content()));
        true
    })
    .or_else(|e| if cut { Ok(()) } else { Err(e) })
    .map_err(|e| WorkspaceError::git("printing the diff", e))?;
    if cut {
        out.push_str("\n[… diff cut here …]\n");
    }
    Ok(out)
}

/// A reason the diff fails verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub path: String,
    pub reason: String,
    /// It changes a check's settings: judged by running the checks under the base's settings
    /// (`verify`), refused only when they fail there.
    #[serde(skip)]
    pub settings: bool,
}

/// Why a change to the checks' settings files is one.
pub const SETTINGS_CHANGE: &str = "changes the lint, type-check, test or coverage settings";

/// Files that configure the checks: changing one could make a failing check pass.
pub const CHECK_CONFIG_FILES: [&str; 22] = [
    "maskfile.md",
    "rustfmt.toml",
    ".rustfmt.toml",
    "clippy.toml",
    ".clippy.toml",
    "deny.toml",
    "rust-toolchain.toml",
    "ruff.toml",
    ".ruff.toml",
    "mypy.ini",
    ".mypy.ini",
    "pytest.ini",
    "tox.ini",
    ".coveragerc",
    "setup.cfg",
    ".pre-commit-config.yaml",
    ".eslintrc",
    ".eslintrc.json",
    ".eslintrc.js",
    "eslint.config.js",
    ".prettierrc",
    "codecov.yml",
];

/// Lines that configure checks inside general manifests.
const CHECK_CONFIG_MARKERS: [&str; 8] = [
    "[lints",
    "[workspace.lints",
    "[tool.ruff",
    "[tool.mypy",
    "[tool.pytest",
    "[tool.coverage",
    "\"eslintConfig\"",
    "\"prettier\"",
];

/// Markers of a test definition.
const TEST_MARKERS: [&str; 7] = [
    "#[test]",
    "#[tokio::test",
    "def test_",
    "it(\"",
    "it('",
    "test(\"",
    "test('",
];

/// Markers of a skipped test.
const SKIP_MARKERS: [&str; 10] = [
    "#[ignore",
    "@skip",
    "pytest.mark.skip",
    "unittest.skip",
    "@pytest.mark.xfail",
    "it.skip(",
    "test.skip(",
    "describe.skip(",
    "xit(",
    "@Disabled",
];

fn is_test_path(path: &str) -> bool {
    let lower = path.to_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    lower.starts_with("tests/")
        || lower.contains("/tests/")
        || lower.starts_with("test/")
        || lower.contains("/test/")
        || lower.contains("__tests__/")
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
}

fn count(lines: &[String], markers: &[&str]) -> usize {
    lines
        .iter()
        .filter(|l| {
            let t = l.trim_start();
            markers.iter().any(|m| t.contains(m))
        })
        .count()
}

/// Where the forges keep a repository's CI: GitHub's workflows, GitLab's pipeline (the file and
/// its folder), Forgejo's and Gitea's Actions workflows. A folder ends in `/`.
const CI_PATHS: [&str; 5] = [
    ".github/",
    ".gitlab-ci.yml",
    ".gitlab/",
    ".forgejo/",
    ".gitea/",
];

/// Whether `path` is the CI file `ci` or under the CI folder `ci`.
fn ci_path(path: &str, ci: &str) -> bool {
    if ci.ends_with('/') {
        path.starts_with(ci)
    } else {
        path == ci
    }
}

/// Everything in the diff that the protected-path rule forbids.
pub fn protected_findings(stats: &DiffStats) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut find = |path: &str, reason: String| {
        let settings = reason == SETTINGS_CHANGE;
        out.push(Finding {
            path: path.to_owned(),
            reason,
            settings,
        })
    };
    for f in &stats.files {
        let p = f.path.as_str();
        let file = p.rsplit('/').next().unwrap_or(p);
        if p.starts_with(".ralph/") {
            find(p, "changes ralph's own state (.ralph/)".into());
            continue;
        }
        if let Some(ci) = CI_PATHS.iter().find(|c| ci_path(p, c)) {
            find(
                p,
                format!("changes the repository's CI and workflow files ({ci})"),
            );
            continue;
        }
        if p.starts_with(".ci/") {
            find(p, "changes the configuration of the checks".into());
            continue;
        }
        if CHECK_CONFIG_FILES.contains(&file) {
            find(p, SETTINGS_CHANGE.into());
            continue;
        }
        let manifest = matches!(file, "Cargo.toml" | "pyproject.toml" | "package.json");
        if manifest
            && (count(&f.added_lines, &CHECK_CONFIG_MARKERS)
                + count(&f.removed_lines, &CHECK_CONFIG_MARKERS)
                > 0)
        {
            find(p, SETTINGS_CHANGE.into());
        }
        if f.status == "deleted" && is_test_path(p) {
            find(p, "deletes a test file".into());
            continue;
        }
        let removed = count(&f.removed_lines, &TEST_MARKERS);
        let added = count(&f.added_lines, &TEST_MARKERS);
        if removed > added {
            find(p, format!("removes {} test(s)", removed - added));
        }
        let skips = count(&f.added_lines, &SKIP_MARKERS);
        let unskips = count(&f.removed_lines, &SKIP_MARKERS);
        if skips > unskips {
            find(p, format!("skips {} test(s)", skips - unskips));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, status: &'static str, added: &[&str], removed: &[&str]) -> FileChange {
        FileChange {
            path: path.into(),
            status,
            added: added.len() as u64,
            removed: removed.len() as u64,
            added_lines: added.iter().map(|s| s.to_string()).collect(),
            removed_lines: removed.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn reasons(files: Vec<FileChange>) -> Vec<String> {
        protected_findings(&DiffStats {
            files,
            ..DiffStats::default()
        })
        .into_iter()
        .map(|f| format!("{}: {}", f.path, f.reason))
        .collect()
    }

    #[test]
    fn protected_paths_and_weakened_tests_are_found() {
        let got = reasons(vec![
            change(".ralph/events/x.json", "added", &["{}"], &[]),
            change(".github/workflows/ci.yml", "modified", &["x"], &["y"]),
            change(
                "clippy.toml",
                "added",
                &["too-many-arguments-threshold = 99"],
                &[],
            ),
            change(
                "Cargo.toml",
                "modified",
                &["[lints.clippy]", "all = \"allow\""],
                &[],
            ),
            change("tests/cli.rs", "deleted", &[], &["#[test]", "fn a() {}"]),
            change(
                "src/lib.rs",
                "modified",
                &["fn helper() {}"],
                &["    #[test]", "    fn old() {}"],
            ),
            change(
                "tests/api.py",
                "modified",
                &["@pytest.mark.skip(reason='flaky')"],
                &[],
            ),
            change("src/parse.rs", "modified", &["    #[ignore]"], &[]),
        ]);
        assert_eq!(
            got,
            [
                ".ralph/events/x.json: changes ralph's own state (.ralph/)",
                ".github/workflows/ci.yml: changes the repository's CI and workflow files (.github/)",
                "clippy.toml: changes the lint, type-check, test or coverage settings",
                "Cargo.toml: changes the lint, type-check, test or coverage settings",
                "tests/cli.rs: deletes a test file",
                "src/lib.rs: removes 1 test(s)",
                "tests/api.py: skips 1 test(s)",
                "src/parse.rs: skips 1 test(s)",
            ]
        );
    }

    #[test]
    fn every_forges_ci_files_are_protected() {
        let got = reasons(vec![
            change(".gitlab-ci.yml", "modified", &["x"], &["y"]),
            change(".gitlab/ci/test.yml", "added", &["x"], &[]),
            change(".forgejo/workflows/ci.yml", "modified", &["x"], &["y"]),
            change(".gitea/workflows/ci.yaml", "added", &["x"], &[]),
            change("docs/.gitlab-ci.yml.md", "added", &["x"], &[]),
        ]);
        assert_eq!(
            got,
            [
                ".gitlab-ci.yml: changes the repository's CI and workflow files (.gitlab-ci.yml)",
                ".gitlab/ci/test.yml: changes the repository's CI and workflow files (.gitlab/)",
                ".forgejo/workflows/ci.yml: changes the repository's CI and workflow files (.forgejo/)",
                ".gitea/workflows/ci.yaml: changes the repository's CI and workflow files (.gitea/)",
            ]
        );
    }

    #[test]
    fn ordinary_changes_pass() {
        let got = reasons(vec![
            change("src/main.rs", "modified", &["let x = 1;"], &["let x = 2;"]),
            change("Cargo.toml", "modified", &["serde = \"1\""], &[]),
            change("tests/new.rs", "added", &["#[test]", "fn new() {}"], &[]),
            // A test moved within a file: as many added as removed.
            change("src/a.rs", "modified", &["#[test]"], &["#[test]"]),
            // Un-skipping is fine.
            change("src/b.rs", "modified", &[], &["#[ignore]"]),
            change("docs/guide.md", "deleted", &[], &["text"]),
        ]);
        assert!(got.is_empty(), "{got:?}");
    }
}
