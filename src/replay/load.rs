//! Finding and reading what `ralph replay` replays: the recordings (`scoring.r<N>.json`, written
//! by `ralph compete N --record DIR`) and the kept run reports (`report.json`, in
//! `.ralph/runs/<issue>/`) in a directory and the two levels below it, or one such file.
//!
//! A file that cannot be used — unreadable, not JSON, not the expected shape, recorded by a
//! newer ralph — is skipped with its reason, so one damaged file does not hide the others; the
//! command fails only when nothing replayable is left. Nothing is written.

use super::recording::{RecordedRound, RECORDING_VERSION};
use super::{Input, ReportRound, Round};
use crate::fsutil::read_regular_text;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The largest file read: a round's recording holds every proposal in full.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// How deep below the directory files are looked for: `DIR/runs/12/report.json` is found
/// from `DIR` (`.ralph`).
const MAX_DEPTH: usize = 2;

/// The name of a kept run report.
pub const REPORT_FILE: &str = "report.json";

/// What was found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every round of every usable file, by file name, then round.
    pub rounds: Vec<Round>,
    /// Files that could not be used, with why.
    pub skipped: Vec<Skipped>,
    /// How many candidate files were found.
    pub found: usize,
}

/// A file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub file: PathBuf,
    pub reason: String,
    /// The file was written by a newer ralph: updating ralph lets it be replayed.
    #[serde(skip)]
    pub newer: bool,
}

/// Whether `name` is a recorded round's file, `scoring.r<N>.json`.
pub fn is_recording(name: &str) -> bool {
    name.strip_prefix("scoring.r")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Reads `path`: a file is read as a recording or a report by its name (anything not named
/// `scoring.r<N>.json` is read as a report); a directory is searched. `Err` only when `path`
/// itself cannot be read.
pub fn load(path: &Path) -> std::io::Result<Loaded> {
    let mut loaded = Loaded::default();
    let files = if std::fs::metadata(path)?.is_dir() {
        let mut files = Vec::new();
        find(path, 0, &mut files, &mut loaded.skipped)?;
        files.sort();
        files
    } else {
        vec![path.to_owned()]
    };
    loaded.found = files.len();
    for file in files {
        let is_rec = file
            .file_name()
            .is_some_and(|n| is_recording(&n.to_string_lossy()));
        let read = if is_rec {
            read_recording(&file).map(|r| vec![Input::Recorded(Box::new(r))])
        } else {
            read_report(&file).map(|rounds| {
                rounds
                    .into_iter()
                    .map(|r| Input::Report(Box::new(r)))
                    .collect()
            })
        };
        match read {
            Ok(inputs) => loaded.rounds.extend(inputs.into_iter().map(|input| Round {
                file: file.clone(),
                input,
            })),
            Err(mut s) => {
                s.file = file;
                loaded.skipped.push(s);
            }
        }
    }
    Ok(loaded)
}

/// Collects the recordings and reports in `dir` and below it, to [`MAX_DEPTH`]; hidden
/// directories (`.git`) and symbolic links to directories are not entered.
fn find(
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    skipped: &mut Vec<Skipped>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if depth < MAX_DEPTH && !name.starts_with('.') {
                if let Err(e) = find(&path, depth + 1, files, skipped) {
                    skipped.push(Skipped {
                        file: path,
                        reason: format!("cannot list the directory: {e}"),
                        newer: false,
                    });
                }
            }
        } else if name == REPORT_FILE || is_recording(&name) {
            files.push(path);
        }
    }
    Ok(())
}

fn problem(reason: String) -> Skipped {
    Skipped {
        file: PathBuf::new(),
        reason,
        newer: false,
    }
}

fn read_json(file: &Path) -> Result<serde_json::Value, Skipped> {
    let text = read_regular_text(file, MAX_FILE_BYTES)
        .map_err(|e| problem(format!("cannot read it: {e}")))?;
    serde_json::from_str(&text).map_err(|e| problem(format!("not JSON: {e}")))
}

/// A recorded round, refusing one of a newer recording version.
fn read_recording(file: &Path) -> Result<RecordedRound, Skipped> {
    let value = read_json(file)?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    match version {
        None => {
            return Err(problem(
                "no `version`: not a round recorded by `ralph compete --record`".into(),
            ))
        }
        Some(v) if v > u64::from(RECORDING_VERSION) => {
            return Err(Skipped {
                newer: true,
                ..problem(format!(
                    "recorded by a newer ralph (recording version {v}; this ralph reads version {RECORDING_VERSION})"
                ))
            })
        }
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| problem(format!("not a recorded round: {e}")))
}

/// The fields of a run report that replay needs (`run_report::RunReport`).
#[derive(Deserialize)]
struct ReportFile {
    issue: u64,
    rounds: Vec<ReportRound>,
}

/// Every round of a run report, its issue filled in.
fn read_report(file: &Path) -> Result<Vec<ReportRound>, Skipped> {
    let value = read_json(file)?;
    let report: ReportFile = serde_json::from_value(value).map_err(|e| {
        problem(format!(
            "not a run report (`ralph compete` keeps them as .ralph/runs/<issue>/report.json): {e}"
        ))
    })?;
    Ok(report
        .rounds
        .into_iter()
        .map(|mut r| {
            r.issue = report.issue;
            r
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(issue: u64) -> serde_json::Value {
        json!({
            "issue": issue, "title": "t", "outcome": "success",
            "rounds": [{
                "round": 1, "phase": "initial", "seed": 7,
                "proposals": [{
                    "proposal_id": "proposal_1", "bot_id": "alpha", "total_score": 0.6,
                    "scores": {"spec_alignment": 0.5, "technical_quality": 0.6, "innovation": 0.5,
                               "risk": 0.7, "efficiency": 0.7, "specialist_validation": 1.0},
                    "submission_time": "2026-01-05T10:00:00Z", "reasons": {}
                }],
                "ranking": ["proposal_1"], "winner": "proposal_1", "human_review": false
            }]
        })
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn recording_names() {
        assert!(is_recording("scoring.r1.json"));
        assert!(is_recording("scoring.r12.json"));
        for name in [
            "scoring.r.json",
            "scoring.rx.json",
            "scoring.r1.json.tmp",
            "report.json",
        ] {
            assert!(!is_recording(name), "{name}");
        }
    }

    #[test]
    fn reports_two_levels_down_are_found_and_bad_files_skipped_with_their_reason() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(&d.join("runs/12/report.json"), &report(12).to_string());
        write(&d.join("runs/13/report.json"), "{not json");
        write(&d.join("runs/13/summary.md"), "# not read");
        write(&d.join("a/b/c/report.json"), &report(14).to_string()); // too deep
        write(&d.join(".git/report.json"), &report(15).to_string()); // hidden
        let loaded = load(d).unwrap();
        assert_eq!(loaded.found, 2);
        assert_eq!(loaded.rounds.len(), 1);
        assert_eq!(loaded.rounds[0].input.issue(), 12);
        assert_eq!(loaded.skipped.len(), 1);
        assert!(loaded.skipped[0].file.ends_with("runs/13/report.json"));
        assert!(
            loaded.skipped[0].reason.starts_with("not JSON"),
            "{:?}",
            loaded.skipped
        );

        // One file given directly.
        let one = load(&d.join("runs/12/report.json")).unwrap();
        assert_eq!((one.found, one.rounds.len()), (1, 1));
        assert!(load(&d.join("missing")).is_err());
    }

    #[test]
    fn a_recording_of_a_newer_version_is_skipped_as_newer() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scoring.r1.json");
        write(
            &file,
            &json!({"version": RECORDING_VERSION + 1}).to_string(),
        );
        let loaded = load(dir.path()).unwrap();
        assert!(loaded.rounds.is_empty());
        assert!(loaded.skipped[0].newer);
        assert!(loaded.skipped[0].reason.contains("newer ralph"));
        write(&file, &json!({"version": 1, "issue": 3}).to_string());
        let loaded = load(dir.path()).unwrap();
        assert!(!loaded.skipped[0].newer);
        assert!(loaded.skipped[0].reason.starts_with("not a recorded round"));
        write(&file, "{}");
        assert!(load(dir.path()).unwrap().skipped[0]
            .reason
            .contains("no `version`"));
    }
}
