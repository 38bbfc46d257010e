//! The doctor's look at ralph's checkouts: where they go, those an earlier version left inside
//! the repository, and the branches and checkouts earlier runs left, by issue, with the commands
//! that continue or remove them.

use super::{Findings, Status};
use crate::settings::Settings;
use crate::workspace;

/// Where the competitions' checkouts go, and those an earlier version left inside the
/// repository (removed by the next competition).
pub(super) fn checkout_checks(f: &mut Findings, settings: &Settings) {
    match settings.checkouts() {
        Ok(dir) => {
            f.add(
                "git",
                "checkouts",
                Status::Ok,
                format!(
                    "{} (outside the repository, each with a git directory of its own; `[workspace] root` moves them)",
                    dir.display()
                ),
            );
            left_by_runs(f, settings, &dir);
        }
        Err(e) => {
            f.add("git", "checkouts", Status::Fail, e.to_string());
            f.hint(e.hint().unwrap_or_default());
        }
    }
    let legacy = settings.root.join(workspace::LEGACY_DIR);
    if let Ok(entries) = std::fs::read_dir(&legacy) {
        f.add(
            "git",
            "old checkouts",
            Status::Warn,
            format!(
                "{} checkout(s) an earlier version made in {}: the next competition removes them, but one that holds uncommitted work",
                entries.count(),
                workspace::LEGACY_DIR
            ),
        );
    }
}

/// The branches and checkouts earlier runs left, by issue, with the command that removes them.
fn left_by_runs(f: &mut Findings, settings: &Settings, dir: &std::path::Path) {
    let Ok(left) = workspace::leftovers(&settings.root, dir) else {
        return;
    };
    if left.is_empty() {
        return;
    }
    let each: Vec<String> = left
        .iter()
        .map(|l| {
            let names: Vec<String> = l
                .checkouts
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            let mut parts: Vec<String> = l.branches.iter().map(|b| format!("`{b}`")).collect();
            if !names.is_empty() {
                parts.push(format!("checkout(s) {}", names.join(", ")));
            }
            format!("#{} ({})", l.issue, parts.join(", "))
        })
        .collect();
    f.add(
        "git",
        "runs left",
        Status::Ok,
        format!(
            "{}: `ralph compete N --resume` continues one, `ralph reset --issue N` removes one's branch and checkouts to run it again",
            each.join("; ")
        ),
    );
}
