//! The sandbox and the host: finding a working bubblewrap, ralph's own process made
//! undumpable, what a confined process could have written (for the git directory's seal), what
//! the sandbox hides from one, and the git configurations shown without their credentials.

use super::{bwrap, Confinement, Sandbox, CACHES};
use std::path::{Path, PathBuf};

impl Sandbox {
    /// The hidden path that covers `path` (a credential folder, another agent's state,
    /// `[sandbox] hide`), when the sandbox hides it from a process confined by `c`.
    pub fn hides(&self, path: &Path, c: &Confinement) -> Option<PathBuf> {
        if !self.status.active {
            return None;
        }
        let plan = self.plan(c);
        plan.hidden
            .into_iter()
            .find(|h| path.starts_with(h) && !plan.writable.iter().any(|w| w.starts_with(h)))
    }

    /// Whether any process confined here could have changed `path`, working in `workdir`:
    /// always without a sandbox; with one, only when `path` lies in a place some kind may
    /// write — the workdir, its worktree's own git folder (but the files that link it to the
    /// repository), a cache setup writes, an agent's state, `[sandbox] writable`. A path every
    /// process was shown read-only (or not at all) was changed by something else: the git
    /// directory's seal neither blames it on the step nor undoes it.
    pub fn could_write(&self, path: &Path, workdir: &Path) -> bool {
        if !self.status.active {
            return true;
        }
        if path.starts_with(workdir) && path != workdir.join(".git") {
            return true;
        }
        if let bwrap::GitLink::Worktree { admin } = bwrap::git_link(workdir) {
            let link = ["commondir", "gitdir"]
                .iter()
                .any(|n| path == admin.join(n));
            if path.starts_with(&admin) && !link {
                return true;
            }
        }
        let caches = self
            .home
            .iter()
            .flat_map(|h| CACHES.iter().map(move |rel| h.join(rel)));
        self.writable
            .iter()
            .cloned()
            .chain(caches)
            .chain(self.agent_state.iter().cloned())
            .any(|w| path.starts_with(&w))
    }

    /// The git configurations a confined process reads that hold a credential (the job token
    /// `actions/checkout` leaves in `.git/config`, a password in a remote URL), each with the
    /// scrubbed copy shown in its place: (copy, original).
    pub(super) fn scrubbed_configs(&self, commons: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
        let Some(dir) = &self.scrub_dir else {
            return Vec::new();
        };
        let mut files = crate::process::gitconfig::files(None, self.home.as_deref());
        files.extend(commons.iter().map(|c| c.join("config")));
        files
            .into_iter()
            .filter_map(|original| {
                let text = crate::fsutil::read_regular_text(&original, 4 << 20).ok()?;
                if crate::process::gitconfig::credentials(&text).is_empty() {
                    return None;
                }
                let clean = crate::process::gitconfig::scrubbed(&text);
                let mut hash = crate::mix::Fnv1a::default();
                hash.eat(original.as_os_str().as_encoded_bytes());
                hash.eat(clean.as_bytes());
                let copy = dir.path().join(format!("{:016x}", hash.finish()));
                if !copy.exists() {
                    crate::fsutil::write_atomic(&copy, clean.as_bytes()).ok()?;
                }
                Some((copy, original))
            })
            .collect()
    }
}

/// Makes ralph's own process undumpable: `/proc/<pid>/environ` and `/proc/<pid>/mem` — where
/// the token ralph was started with stays readable — are closed to every process of the same
/// user that is not privileged (a confined one does not even see ralph's PID). Children are
/// not affected: `exec` makes a process dumpable again.
pub fn protect_self() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with PR_SET_DUMPABLE takes plain integers and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Whether ralph's process is undumpable now.
pub fn self_protected() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: as above; PR_GET_DUMPABLE returns the flag.
    unsafe {
        libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Finds `bwrap` and checks that it can make its namespaces here; its version, or why not.
pub(super) async fn probe() -> Result<(PathBuf, String), String> {
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "no sandbox mechanism on {} (ralph sandboxes with bubblewrap, on Linux)",
            std::env::consts::OS
        ));
    }
    let Some(program) = crate::process::find_on_path("bwrap") else {
        return Err(
            "bubblewrap (`bwrap`) is not installed: install the `bubblewrap` package (apt-get install bubblewrap, dnf install bubblewrap)"
                .to_owned(),
        );
    };
    let version = crate::process::run(&crate::process::Cmd::new(&program).arg("--version"))
        .await
        .ok()
        .filter(|o| o.success())
        .map(|o| o.stdout.trim().to_owned())
        .unwrap_or_else(|| "bubblewrap".to_owned());
    let test = crate::process::Cmd::new(&program)
        .args([
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--",
            "true",
        ])
        .timeout(std::time::Duration::from_secs(20));
    match crate::process::run(&test).await {
        Ok(out) if out.success() => Ok((program, version)),
        Ok(out) => Err(format!(
            "{version} cannot create its namespaces here ({}){}",
            out.tail(2).trim(),
            apparmor_hint()
        )),
        Err(e) => Err(format!("{version} could not start: {e}")),
    }
}

/// Ubuntu 23.10 and later forbid unprivileged user namespaces to programs without an AppArmor
/// profile that allows them.
fn apparmor_hint() -> &'static str {
    match std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") {
        Ok(v) if v.trim() == "1" => {
            "; AppArmor restricts unprivileged user namespaces here: give bwrap a profile that allows `userns` (see docs/security.md)"
        }
        _ => "",
    }
}
