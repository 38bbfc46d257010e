//! What a run keeps: the state `--resume` continues from (`.ralph/runs/N/state.json`, written
//! atomically after every round), the failures a replan and an escalation need (and, in
//! memory, the rest of what the escalation comment says), and the per-issue lock
//! (`.ralph/runs/N.lock`) that keeps two runs off one issue.

use super::propose::FailureContext;
use crate::error::UserError;
use crate::fsutil::write_atomic;
use crate::market::{Phase, Proposal};
use crate::run_report::RemainingBox;
use crate::run_report::RoundReport;
use crate::settings::Settings;
use crate::verify::reuse::Judged;
use crate::verify::VerificationReport;
use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// A failed round, remembered for the replan and the escalation comment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    pub context: FailureContext,
    /// The proposal that failed, to recognise its resubmission.
    pub proposal: Proposal,
    /// One line per reason, for the escalation comment.
    pub reasons: Vec<String>,
}

/// Everything the escalation comment says.
#[derive(Debug, Default)]
pub struct Trouble {
    pub reason: String,
    pub initial: Option<Failure>,
    pub replan: Option<Failure>,
    pub last_round: Option<RoundReport>,
    pub verification: Option<VerificationReport>,
    /// The open boxes after the last round, with the verify role's reasons.
    pub remaining: Vec<RemainingBox>,
    /// The last failed attempt's diff (bounded).
    pub diff: Option<String>,
}

/// `.ralph/runs/N/state.json`: what `--resume` needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    pub run_id: String,
    pub issue: u64,
    pub branch: String,
    /// The next round to run (1-based).
    pub next_round: u32,
    pub phase: Phase,
    pub failure: Option<Failure>,
    /// The initial failure, kept for the escalation comment after a failed replan.
    pub initial_failure: Option<Failure>,
    /// Event files written so far.
    pub events: Vec<String>,
    /// Why each checked-off requirement counts as done, for the pull request.
    #[serde(default)]
    pub evidence: BTreeMap<String, String>,
    /// Commits made on the branch by passing rounds.
    #[serde(default)]
    pub commits: u32,
}

/// `.ralph/runs/N/`: the run's state, report and summary.
pub fn runs_dir(settings: &Settings, issue: u64) -> PathBuf {
    settings.ralph_dir.join("runs").join(issue.to_string())
}

impl RunState {
    /// A run that starts at round 1.
    pub fn new(run_id: String, issue: u64, branch: String) -> RunState {
        RunState {
            run_id,
            issue,
            branch,
            next_round: 1,
            phase: Phase::Initial,
            failure: None,
            initial_failure: None,
            events: Vec::new(),
            evidence: BTreeMap::new(),
            commits: 0,
        }
    }

    fn path(settings: &Settings, issue: u64) -> PathBuf {
        runs_dir(settings, issue).join("state.json")
    }

    /// The saved state of issue `issue`'s run, if there is one.
    pub fn load(settings: &Settings, issue: u64) -> Result<Option<RunState>> {
        let path = RunState::path(settings, issue);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("the run state {} is damaged", path.display())
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Removes the saved state of issue `issue`'s run (a run refused before it began).
    pub fn forget(settings: &Settings, issue: u64) {
        let _ = std::fs::remove_file(RunState::path(settings, issue));
        let _ = std::fs::remove_file(runs_dir(settings, issue).join(JUDGED));
    }

    pub fn save(&self, settings: &Settings) -> Result<()> {
        let path = RunState::path(settings, self.issue);
        std::fs::create_dir_all(path.parent().unwrap_or(&settings.ralph_dir))
            .with_context(|| format!("cannot create {}", path.display()))?;
        let text = serde_json::to_string_pretty(self)? + "\n";
        write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The round passed: the next one starts afresh.
    pub fn passed(&mut self) {
        self.failure = None;
        self.initial_failure = None;
        self.phase = Phase::Initial;
        self.next_round += 1;
    }

    /// The round failed: an initial round leads to a replan; a failed replan's failure is the
    /// caller's to report.
    pub fn failed(&mut self, failure: Failure) {
        if self.phase == Phase::Initial {
            self.initial_failure = Some(failure.clone());
            self.failure = Some(failure);
            self.phase = Phase::Replan;
        }
        self.next_round += 1;
    }
}

/// `.ralph/runs/N/judged.json`: the checks' results on every tree the run judged
/// ([`crate::verify::reuse`]), kept beside the run state so that `--resume` has them; a run
/// other than the one that wrote them (another run id) starts without.
#[derive(Debug, Serialize, Deserialize)]
struct JudgedFile<J> {
    run_id: String,
    #[serde(flatten)]
    judged: J,
}

/// The file name of the trees a run judged, in its runs folder.
const JUDGED: &str = "judged.json";

/// The trees a run judged, and where they are kept (nowhere: a revision's, in memory only).
#[derive(Debug, Default)]
pub struct JudgedTrees {
    pub judged: Judged,
    /// The file and the run id it is kept under.
    file: Option<(PathBuf, String)>,
}

impl JudgedTrees {
    /// The trees issue `issue`'s run `run_id` judged so far (none when the file is missing,
    /// another run's, or unreadable — said in the log: the checks then simply run), kept in
    /// `.ralph/runs/N/judged.json` from now on.
    pub fn load(settings: &Settings, issue: u64, run_id: &str) -> JudgedTrees {
        let path = runs_dir(settings, issue).join(JUDGED);
        let judged = match crate::fsutil::read_regular_text(&path, 64 << 20) {
            Err(_) => Judged::default(),
            Ok(text) => match serde_json::from_str::<JudgedFile<Judged>>(&text) {
                Ok(file) if file.run_id == run_id => file.judged,
                Ok(_) => Judged::default(),
                Err(e) => {
                    tracing::warn!("ignoring the unreadable {}: {e}", path.display());
                    Judged::default()
                }
            },
        };
        JudgedTrees {
            judged,
            file: Some((path, run_id.to_owned())),
        }
    }

    /// Writes the file, atomically (nothing when the trees are kept in memory only).
    pub fn save(&self) -> Result<()> {
        let Some((path, run_id)) = &self.file else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = JudgedFile {
            run_id: run_id.clone(),
            judged: &self.judged,
        };
        let text = serde_json::to_string(&file)? + "\n";
        write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// The per-issue lock: an advisory lock on `.ralph/runs/N.lock`, which holds the process id for
/// messages. The operating system releases it when the process ends however it ends, so a lock
/// left by a killed run never blocks the next one, and no process id can be mistaken for
/// another. Removed when dropped.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    file: File,
}

impl RunLock {
    pub fn acquire(ralph_dir: &Path, issue: u64) -> Result<RunLock> {
        let dir = ralph_dir.join("runs");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(format!("{issue}.lock"));
        let open = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))
        };
        // A run that finishes removes the file: a lock taken on the removed file guards
        // nothing, so the file is opened again until the lock is on the one at `path`.
        for _ in 0..5 {
            let mut file = open()?;
            match file.try_lock() {
                Ok(()) if same_file(&file, &path) => {
                    file.set_len(0)
                        .and_then(|()| writeln!(file, "{}", std::process::id()))
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    return Ok(RunLock { path, file });
                }
                Ok(()) => continue,
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    let holder = text
                        .trim()
                        .parse::<u32>()
                        .map(|pid| format!(" (process {pid})"))
                        .unwrap_or_default();
                    return Err(UserError::usage(format!(
                        "another `ralph compete {issue}` is running{holder}"
                    ))
                    .with_hint("wait for it to finish: the lock is released when it ends")
                    .into());
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()))
                }
            }
        }
        Err(anyhow::anyhow!("cannot take the lock {}", path.display()))
    }
}

impl RunLock {
    /// Whether a run on `issue` holds the lock on this machine now (without taking it).
    pub fn is_held(ralph_dir: &Path, issue: u64) -> bool {
        let path = ralph_dir.join("runs").join(format!("{issue}.lock"));
        let Ok(file) = OpenOptions::new().read(true).open(&path) else {
            return false;
        };
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(_)) => false,
        }
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still locked, so nobody can lock this file after we let it go.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_per_issue_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path(), 3).unwrap();
        let err = RunLock::acquire(dir.path(), 3).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains(&format!(
                "another `ralph compete 3` is running (process {})",
                std::process::id()
            )),
            "{msg}"
        );
        let other = RunLock::acquire(dir.path(), 4).expect("another issue is free");
        assert!(RunLock::is_held(dir.path(), 3));
        drop(lock);
        assert!(!RunLock::is_held(dir.path(), 3));
        assert!(!dir.path().join("runs/3.lock").exists());
        drop(RunLock::acquire(dir.path(), 3).expect("free again"));
        drop(other);
    }

    #[test]
    fn a_lock_file_nobody_holds_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        std::fs::write(dir.path().join("runs/3.lock"), "999999999\n").unwrap();
        let lock = RunLock::acquire(dir.path(), 3).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("runs/3.lock")).unwrap(),
            format!("{}\n", std::process::id())
        );
        drop(lock);
    }

    #[test]
    fn the_trees_judged_are_kept_for_their_own_run_only() {
        use crate::verify::reuse::{Judgement, Measured, Name};
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            root: dir.path().to_owned(),
            ralph_dir: dir.path().join(".ralph"),
            repo: None,
            tracker: crate::config::TrackerKind::Local,
            config: crate::config::Config::default(),
            config_source: crate::config::ConfigSource::Defaults,
        };
        let mut trees = JudgedTrees::load(&settings, 3, "run-a");
        assert_eq!(trees.judged, Judged::default(), "nothing yet");
        trees.judged.trees.push(Judgement {
            tree: "1a2b3c".into(),
            by: Name {
                label: "Attempt".into(),
                round: 1,
                attempt: 1,
            },
            setting: serde_json::json!({"env": []}),
            checks: Vec::new(),
            coverage: Measured::default(),
        });
        trees.save().unwrap();
        let file = dir.path().join(".ralph/runs/3/judged.json");
        assert!(file.is_file());
        assert_eq!(
            JudgedTrees::load(&settings, 3, "run-a").judged,
            trees.judged
        );
        assert_eq!(
            JudgedTrees::load(&settings, 3, "run-b").judged,
            Judged::default(),
            "another run's trees are not this one's"
        );
        std::fs::write(&file, "{ not json").unwrap();
        assert_eq!(
            JudgedTrees::load(&settings, 3, "run-a").judged,
            Judged::default()
        );
        // A revision's trees are kept in memory only.
        let memory = JudgedTrees {
            judged: trees.judged.clone(),
            ..JudgedTrees::default()
        };
        memory.save().unwrap();
        assert!(!dir.path().join(".ralph/runs/4").exists());
        RunState::forget(&settings, 3);
        assert!(!file.exists(), "forgotten with the run state");
    }

    #[test]
    fn state_moves_to_a_replan_after_an_initial_failure_and_back_after_a_pass() {
        let mut s = RunState::new("r".into(), 3, "ralph/3-x".into());
        let failure = Failure {
            context: FailureContext {
                failed_bot: "b".into(),
                proposal_summary: "p".into(),
                kind: "tests".into(),
                checks: vec![],
            },
            proposal: serde_json::from_value(serde_json::json!({
                "approach_summary": "p", "pseudo_code": "", "files_affected": [],
                "estimated_complexity": {"lines_of_code": 1, "files": 1, "modules": 1, "difficulty": "low"},
                "risk_assessment": {"breaking_changes": false, "security_critical": false, "overall_risk": "low"},
                "spec_alignment": {"checkboxes_addressed": [], "components_addressed": [], "implicit_requirements_addressed": []},
                "success_probability": 0.5
            }))
            .unwrap(),
            reasons: vec!["check `test` failed".into()],
        };
        s.failed(failure.clone());
        assert_eq!((s.phase, s.next_round), (Phase::Replan, 2));
        assert!(s.initial_failure.is_some() && s.failure.is_some());
        s.failed(failure);
        assert_eq!((s.phase, s.next_round), (Phase::Replan, 3));
        s.passed();
        assert_eq!((s.phase, s.next_round), (Phase::Initial, 4));
        assert!(s.failure.is_none() && s.initial_failure.is_none());
    }
}
