//! A change to a check's settings (a linter's, the type checker's, the test runner's, coverage's)
//! is judged, not refused: the checks that ran for the change run again in a copy of the worktree
//! whose settings files are the base's (a check that could not run in the attempt — its tool
//! missing — judges nothing there either). A change that passes there did not weaken a check to
//! pass — it is kept, and the change of settings named for the maintainer; one that fails there
//! is refused, with the check that fails.

use crate::checks::baseline::Baseline;
use crate::checks::run::Unwatched;
use crate::checks::suite::Schedule;
use crate::checks::{run_checks, CheckPlan, CheckStatus};
use crate::workspace::{Finding, Workspace, WorkspaceError, Worktree, SETTINGS_CHANGE};
use std::path::Path;
use std::time::Duration;

/// The most a worktree copy for the base's settings may hold.
const MAX_COPY: u64 = 1 << 30;

/// The settings changes judged: those refused (the change fails under the base's settings, or
/// could not be tried there) and those kept.
#[derive(Debug, Default)]
pub struct Judged {
    pub refused: Vec<Finding>,
    pub kept: Vec<Finding>,
}

/// What the checks under the base's settings are run with.
pub struct Under<'a> {
    pub workspace: &'a dyn Workspace,
    pub wt: &'a Worktree,
    pub plan: &'a CheckPlan,
    pub baseline: Option<&'a Baseline>,
    pub timeout: Duration,
    /// The checks that ran for the change (neither unavailable nor left out): the only ones run
    /// again under the base's settings.
    pub ran: &'a [String],
}

/// Judges the change's settings `findings`. When `fails_anyway` (the change fails its checks
/// for other reasons) they are not tried: kept as notes, the attempt failing regardless.
pub async fn judge(
    under: &Under<'_>,
    findings: Vec<Finding>,
    fails_anyway: bool,
) -> Result<Judged, WorkspaceError> {
    if findings.is_empty() {
        return Ok(Judged::default());
    }
    let with = |findings: Vec<Finding>, why: &str| -> Vec<Finding> {
        findings
            .into_iter()
            .map(|f| Finding {
                reason: format!("{SETTINGS_CHANGE}{why}"),
                ..f
            })
            .collect()
    };
    if fails_anyway {
        return Ok(Judged {
            kept: with(
                findings,
                " (not tried under the base's settings: the change fails its checks anyway)",
            ),
            refused: Vec::new(),
        });
    }
    let copy = match base_settings_copy(under, &findings).await? {
        Ok(copy) => copy,
        Err(why) => {
            return Ok(Judged {
                refused: with(
                    findings,
                    &format!(", and the checks could not be run under the base's settings ({why})"),
                ),
                kept: Vec::new(),
            })
        }
    };
    let schedule = Schedule {
        first: &[],
        stop_against: under.baseline,
        changed_tests: &[],
    };
    let plan = CheckPlan {
        checks: under
            .plan
            .checks
            .iter()
            .filter(|c| under.ran.contains(&c.name))
            .cloned()
            .collect(),
        ..under.plan.clone()
    };
    let ran = run_checks(&plan, copy.path(), under.timeout, &Unwatched, schedule).await;
    let mut failing = Vec::new();
    for mut c in ran.checks {
        if let Some(b) = under.baseline {
            b.judge(&mut c);
        }
        if matches!(c.status, CheckStatus::Failed | CheckStatus::TimedOut) && c.advisory.is_none() {
            failing.push(format!("`{}` {}", c.name, c.status.word()));
        }
    }
    Ok(if failing.is_empty() {
        Judged {
            kept: with(findings, "; the checks pass under the base's settings too"),
            refused: Vec::new(),
        }
    } else {
        Judged {
            refused: with(
                findings,
                &format!(
                    ", and under the base's settings {}: the change passes only under the settings it changed",
                    failing.join(", ")
                ),
            ),
            kept: Vec::new(),
        }
    })
}

/// A copy of the worktree with the settings files of `findings` as they are on the base
/// (removed where the change added them); `Ok(Err(why))` when it cannot be made.
async fn base_settings_copy(
    under: &Under<'_>,
    findings: &[Finding],
) -> Result<Result<tempfile::TempDir, String>, WorkspaceError> {
    let mut base = Vec::new();
    for f in findings {
        base.push((
            f.path.clone(),
            under.workspace.base_text(under.wt, &f.path).await?,
        ));
    }
    let dir = under.wt.path.clone();
    let made = tokio::task::spawn_blocking(move || {
        let copy = tempfile::Builder::new()
            .prefix("ralph-base-settings-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        crate::untrusted_dir::copy_tree(&dir, copy.path(), MAX_COPY).map_err(|e| e.to_string())?;
        restore(copy.path(), &base)?;
        Ok::<_, String>(copy)
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    Ok(made)
}

/// Puts each `(path, text)` in `root` as it is on the base: written, or removed (`None`).
fn restore(root: &Path, files: &[(String, Option<String>)]) -> Result<(), String> {
    let dir = crate::untrusted_dir::UntrustedDir::open(root).map_err(|e| e.to_string())?;
    for (path, text) in files {
        let rel = Path::new(path);
        let done = match text {
            Some(t) => dir.write(rel, t.as_bytes()),
            None => dir.remove(rel),
        };
        done.map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}
