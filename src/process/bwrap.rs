//! The bubblewrap command line for one confined process, built from plain facts (which paths
//! exist, which are folders, where the worktree's git metadata is) so that the policy can be
//! read and tested without running anything. Mounts are applied in order, a later one over an
//! earlier: the whole filesystem read-only, fresh `/dev`, `/proc` and `/tmp`, then the writable
//! places, then the git metadata that must stay read-only inside them, then the hidden paths
//! over everything.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What is on the host, as the builder needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Paths that exist, with whether each is a folder.
    pub existing: Vec<(PathBuf, bool)>,
    /// ralph runs as root: capabilities must be dropped explicitly.
    pub root: bool,
}

impl Facts {
    fn kind(&self, path: &Path) -> Option<bool> {
        self.existing
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, dir)| *dir)
    }
}

/// The roots the sandbox mounts its own, empty, in place of the host's (`--tmpfs`).
const REPLACED: [&str; 2] = ["/tmp", "/var/tmp"];

/// Whether `path` lies under a root the sandbox replaces: hidden inside unless bound again.
pub fn under_replaced(path: &Path) -> bool {
    REPLACED.iter().any(|r| path.starts_with(r))
}

/// Where the git metadata of a worktree lives, read from its `.git` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitLink {
    /// `<workdir>/.git` is a file naming the worktree's own folder under the common git dir
    /// (`.git/worktrees/<name>`).
    Worktree { admin: PathBuf },
    /// `<workdir>/.git` is the repository's git dir itself.
    Repository,
    /// `<workdir>/.git` is the git dir of one of ralph's checkouts, its own (it holds
    /// [`OWN_MARK`]): what a CI checkout's is to its job, the checks' and agents' to write as
    /// their work needs. ralph's own git work on the checkout never reads it.
    Own,
    /// Not a git checkout.
    None,
}

/// The folder ralph puts in the git dir of its checkouts ([`GitLink::Own`]): it marks one, and
/// holds the private global git configuration of the processes working there
/// ([`own_global_config`]). Only a process that can write a git dir can make one, and a
/// confined process can write no git dir but its own checkout's.
pub const OWN_MARK: &str = "ralph";

/// The global git configuration (`GIT_CONFIG_GLOBAL`) of every confined process working in the
/// checkout `workdir` whose git dir is its own: what `git config --global` writes there stays
/// in the checkout, and reaches neither the user's home nor another checkout.
pub fn own_global_config(workdir: &Path) -> PathBuf {
    workdir.join(".git").join(OWN_MARK).join("gitconfig")
}

/// Everything one confined process is allowed, resolved to paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub workdir: PathBuf,
    /// The process may change its workdir (an implementer, a check); a reading agent may not.
    pub workdir_writable: bool,
    pub git: GitLink,
    /// Writable besides the workdir (an agent's state, a shared build folder, a report's folder).
    pub writable: Vec<PathBuf>,
    /// Read-only where the sandbox mounts its own (`/tmp`): a configured command's scripts.
    pub readable: Vec<PathBuf>,
    /// Hidden: an empty folder or an empty file in their place.
    pub hidden: Vec<PathBuf>,
    /// An empty regular file of ralph's, shown in place of a hidden file (`/dev/null` cannot
    /// be: a bind mount is `nodev`, and opening it there fails with EACCES — `yarn` stops on
    /// an unreadable `~/.npmrc`).
    pub empty: Option<PathBuf>,
    /// Files shown as another, read-only: (the copy shown, the path it is shown at) — a git
    /// configuration without its credentials.
    pub replaced: Vec<(PathBuf, PathBuf)>,
    /// Writable places shown at another path: (the private copy, the path it is shown at) —
    /// an agent CLI's state for one call.
    pub private: Vec<(PathBuf, PathBuf)>,
    /// The process shares the host's network (else it has only loopback).
    pub network: bool,
    /// Without the host's network, its way out through ralph's proxy.
    pub egress: Option<Egress>,
}

/// A process's way out through ralph's proxy: the gate's socket on the host, the forwarder that
/// runs the program inside, the loopback port it listens on, the loopback endpoints it mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress {
    pub socket: PathBuf,
    pub forwarder: PathBuf,
    pub port: u16,
    pub mirrors: Vec<(String, u16)>,
}

/// The user and group a process started by root runs as inside the sandbox (mapped to root
/// outside, so it still owns root's files; the mounts decide what it may write).
const ROOT_AS: &str = "1000";

/// The devices of a sandbox started by root.
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// The files of a worktree's git folder that say where its repository is: rewriting them would
/// point ralph's own git commands at another repository.
const LINK_FILES: [&str; 2] = ["commondir", "gitdir"];

fn arg(out: &mut Vec<OsString>, words: &[&str]) {
    out.extend(words.iter().map(OsString::from));
}

fn mount(out: &mut Vec<OsString>, how: &str, from: &Path, to: &Path) {
    out.push(how.into());
    out.push(from.as_os_str().to_owned());
    out.push(to.as_os_str().to_owned());
}

/// The arguments of `bwrap` (without the program) that run `program args…` confined by `plan`.
pub fn args(plan: &Plan, facts: &Facts, program: &OsString, rest: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    namespaces(&mut out, plan, facts);
    arg(&mut out, &["--ro-bind", "/", "/"]);
    if facts.root {
        root_dev(&mut out);
    } else {
        arg(&mut out, &["--dev", "/dev"]);
    }
    arg(&mut out, &["--proc", "/proc", "--tmpfs", "/tmp"]);
    if facts.kind(Path::new("/var/tmp")) == Some(true) {
        arg(&mut out, &["--tmpfs", "/var/tmp"]);
    }
    let writable = places(&mut out, plan, facts);
    if let Some(e) = &plan.egress {
        // The gate's socket, and the forwarder where the sandbox's own /tmp would hide it.
        let inside = Path::new(super::egress::forward::SOCKET_INSIDE);
        mount(&mut out, "--bind", &e.socket, inside);
        if under_replaced(&e.forwarder) {
            mount(&mut out, "--ro-bind", &e.forwarder, &e.forwarder);
        }
    }
    git_metadata(&mut out, plan, facts);
    for (copy, target) in &plan.replaced {
        if facts.kind(target) == Some(false) {
            mount(&mut out, "--ro-bind", copy, target);
        }
    }
    hide(&mut out, plan, facts, &writable);
    out.push("--chdir".into());
    out.push(plan.workdir.as_os_str().to_owned());
    out.push("--".into());
    match &plan.egress {
        Some(e) => {
            // The forwarder runs the program: it listens on the sandbox's loopback first.
            out.push(e.forwarder.as_os_str().to_owned());
            let program: Vec<String> = std::iter::once(program)
                .chain(rest)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            out.extend(
                super::egress::forward::args_for(
                    super::egress::forward::SOCKET_INSIDE,
                    e.port,
                    &e.mirrors,
                    &program,
                )
                .into_iter()
                .map(OsString::from),
            );
        }
        None => {
            out.push(program.clone());
            out.extend(rest.iter().cloned());
        }
    }
    out
}

/// The namespaces of the process (pid, ipc, uts, cgroup; the network unless `plan` allows it)
/// and, when ralph runs as root, an unprivileged user of its own without capabilities.
fn namespaces(out: &mut Vec<OsString>, plan: &Plan, facts: &Facts) {
    arg(
        out,
        &[
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ],
    );
    if !plan.network {
        arg(out, &["--unshare-net"]);
    }
    if facts.root {
        // As root, bwrap would keep root inside: an unprivileged user of its own namespace,
        // with no capability there either, so a process can neither unmount what hides a
        // credential nor pass for root to a nested sandbox (Codex runs its commands in one).
        arg(
            out,
            &[
                "--unshare-user",
                "--uid",
                ROOT_AS,
                "--gid",
                ROOT_AS,
                "--cap-drop",
                "ALL",
            ],
        );
    }
}

/// The `/dev` of a sandbox started by root: a tmpfs with the [`DEVICES`] bound from the host,
/// the standard stream links and `/dev/shm`.
fn root_dev(out: &mut Vec<OsString>) {
    // bwrap's own `/dev` stops a nested sandbox from mounting `/proc` when the outer one
    // maps root: the same few devices, bound from the host.
    arg(out, &["--tmpfs", "/dev"]);
    for dev in DEVICES {
        let path = format!("/dev/{dev}");
        arg(out, &["--dev-bind", &path, &path]);
    }
    arg(
        out,
        &[
            "--symlink",
            "/proc/self/fd",
            "/dev/fd",
            "--symlink",
            "/proc/self/fd/0",
            "/dev/stdin",
            "--symlink",
            "/proc/self/fd/1",
            "/dev/stdout",
            "--symlink",
            "/proc/self/fd/2",
            "/dev/stderr",
            "--tmpfs",
            "/dev/shm",
        ],
    );
}

/// The places of `plan` that exist: the readable ones read-only, then the workdir (writable
/// or not), then the other writable ones. Returns the workdir and the writable places bound.
fn places<'a>(out: &mut Vec<OsString>, plan: &'a Plan, facts: &Facts) -> Vec<&'a PathBuf> {
    for r in plan.readable.iter().filter(|p| facts.kind(p).is_some()) {
        mount(out, "--ro-bind", r, r);
    }
    // A read-only workdir is still bound: under /tmp it would be hidden otherwise.
    mount(
        out,
        if plan.workdir_writable {
            "--bind"
        } else {
            "--ro-bind"
        },
        &plan.workdir,
        &plan.workdir,
    );
    let mut writable: Vec<&PathBuf> = vec![&plan.workdir];
    writable.extend(plan.writable.iter().filter(|p| facts.kind(p).is_some()));
    for w in &writable[1..] {
        mount(out, "--bind", w, w);
    }
    for (copy, at) in &plan.private {
        // Under the sandbox's own /tmp, bwrap makes the place itself.
        if facts.kind(at).is_some() || under_replaced(at) {
            mount(out, "--bind", copy, at);
            writable.push(at);
        }
    }
    writable
}

/// The workdir's git metadata over the workdir: its `.git` read-only; a worktree's own folder
/// writable when the workdir is, except the files that say where its repository is.
fn git_metadata(out: &mut Vec<OsString>, plan: &Plan, facts: &Facts) {
    match &plan.git {
        GitLink::Worktree { admin } => {
            if plan.workdir_writable && facts.kind(admin) == Some(true) {
                mount(out, "--bind", admin, admin);
                for name in LINK_FILES {
                    let file = admin.join(name);
                    if facts.kind(&file) == Some(false) {
                        mount(out, "--ro-bind", &file, &file);
                    }
                }
            }
            let link = plan.workdir.join(".git");
            mount(out, "--ro-bind", &link, &link);
        }
        GitLink::Repository => {
            let dir = plan.workdir.join(".git");
            mount(out, "--ro-bind", &dir, &dir);
        }
        // The checkout's own: as writable as the workdir it is in.
        GitLink::Own | GitLink::None => {}
    }
}

/// The hidden paths of `plan` over everything: an empty read-only folder or `/dev/null` in
/// place of each one that exists, unless it holds one of the `writable` places.
fn hide(out: &mut Vec<OsString>, plan: &Plan, facts: &Facts, writable: &[&PathBuf]) {
    for h in &plan.hidden {
        // Hiding a folder the process works in would hide its work: the workdir wins.
        if writable.iter().any(|w| w.starts_with(h)) {
            continue;
        }
        match facts.kind(h) {
            Some(true) => {
                out.push("--tmpfs".into());
                out.push(h.as_os_str().to_owned());
                out.push("--remount-ro".into());
                out.push(h.as_os_str().to_owned());
            }
            Some(false) => {
                let empty = plan.empty.as_deref().unwrap_or(Path::new("/dev/null"));
                mount(out, "--ro-bind", empty, h)
            }
            None => {}
        }
    }
}

/// Reads where the git metadata of `workdir` is.
pub fn git_link(workdir: &Path) -> GitLink {
    use crate::untrusted_dir::{text_in, Kind, UntrustedDir};
    // The workdir is an agent's: its `.git` is looked at, never followed.
    let dir = UntrustedDir::open(workdir).ok();
    let kind = |rel: &str| dir.as_ref().and_then(|d| d.kind(Path::new(rel)));
    if kind(".git") == Some(Kind::Dir) {
        return if kind(&format!(".git/{OWN_MARK}")) == Some(Kind::Dir) {
            GitLink::Own
        } else {
            GitLink::Repository
        };
    }
    let Some(text) = text_in(workdir, ".git", 64 << 10) else {
        return GitLink::None;
    };
    match text.trim().strip_prefix("gitdir:") {
        Some(path) => {
            let path = Path::new(path.trim());
            GitLink::Worktree {
                admin: if path.is_absolute() {
                    path.to_owned()
                } else {
                    workdir.join(path)
                },
            }
        }
        None => GitLink::None,
    }
}

/// The main checkout of the repository whose worktree folder is `admin`
/// (`<checkout>/.git/worktrees/<name>`), from its `commondir` file.
pub fn main_checkout(admin: &Path) -> Option<PathBuf> {
    let common = common_dir(admin)?;
    (common.file_name()? == ".git").then(|| common.parent().map(Path::to_owned))?
}

/// The common git dir of the worktree whose own folder is `admin`, from its `commondir` file.
pub fn common_dir(admin: &Path) -> Option<PathBuf> {
    let text = crate::fsutil::read_regular_text(&admin.join("commondir"), 64 << 10).ok()?;
    let common = Path::new(text.trim());
    let common = if common.is_absolute() {
        common.to_owned()
    } else {
        admin.join(common)
    };
    common.canonicalize().ok()
}

/// The facts about every path `plan` names, read from the host.
pub fn facts(plan: &Plan) -> Facts {
    let mut paths: Vec<PathBuf> = vec![PathBuf::from("/var/tmp")];
    paths.extend(plan.writable.iter().cloned());
    paths.extend(plan.readable.iter().cloned());
    paths.extend(plan.hidden.iter().cloned());
    paths.extend(plan.replaced.iter().map(|(_, target)| target.clone()));
    paths.extend(plan.private.iter().map(|(_, at)| at.clone()));
    if let GitLink::Worktree { admin } = &plan.git {
        paths.push(admin.clone());
        paths.extend(LINK_FILES.iter().map(|n| admin.join(n)));
    }
    Facts {
        existing: paths
            .into_iter()
            .filter_map(|p| {
                // A symlink is followed (bwrap mounts over its target), and a dangling one is
                // left alone.
                let meta = std::fs::metadata(&p).ok()?;
                Some((p, meta.is_dir()))
            })
            .collect(),
        root: is_root(),
    }
}

#[cfg(unix)]
fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn plan() -> Plan {
        Plan {
            workdir: "/r/.ralph/worktrees/7".into(),
            workdir_writable: true,
            git: GitLink::Worktree {
                admin: "/r/.git/worktrees/ralph-7".into(),
            },
            writable: vec!["/h/.claude".into(), "/h/.missing".into()],
            readable: vec!["/tmp/bot.sh".into()],
            hidden: vec![
                "/h/.ssh".into(),
                "/h/.netrc".into(),
                "/h/.aws".into(),
                "/r".into(),
            ],
            replaced: vec![],
            private: vec![],
            network: true,
            egress: None,
            empty: None,
        }
    }

    fn facts() -> Facts {
        Facts {
            existing: vec![
                ("/var/tmp".into(), true),
                ("/h/.claude".into(), true),
                ("/tmp/bot.sh".into(), false),
                ("/h/.ssh".into(), true),
                ("/h/.netrc".into(), false),
                ("/r/.git/worktrees/ralph-7".into(), true),
                ("/r/.git/worktrees/ralph-7/commondir".into(), false),
                ("/r/.git/worktrees/ralph-7/gitdir".into(), false),
            ],
            root: false,
        }
    }

    #[test]
    fn the_filesystem_is_read_only_but_the_worktree_its_git_folder_and_the_agents_state() {
        let a = s(&args(&plan(), &facts(), &"claude".into(), &["-p".into()]));
        assert!(a.starts_with(
            "--die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /var/tmp"
        ), "{a}");
        assert!(a.contains(" --bind /r/.ralph/worktrees/7 /r/.ralph/worktrees/7 --bind /h/.claude /h/.claude --bind /r/.git/worktrees/ralph-7 /r/.git/worktrees/ralph-7 "), "{a}");
        assert!(
            !a.contains(".missing"),
            "a missing path is not mounted: {a}"
        );
        // The links that say where the repository is stay read-only inside the writable folder,
        // and so does the worktree's `.git` file.
        assert!(a.contains("--ro-bind /r/.git/worktrees/ralph-7/commondir /r/.git/worktrees/ralph-7/commondir --ro-bind /r/.git/worktrees/ralph-7/gitdir /r/.git/worktrees/ralph-7/gitdir --ro-bind /r/.ralph/worktrees/7/.git /r/.ralph/worktrees/7/.git"), "{a}");
        assert!(
            a.ends_with("--chdir /r/.ralph/worktrees/7 -- claude -p"),
            "{a}"
        );
        assert!(
            a.contains("--tmpfs /var/tmp --ro-bind /tmp/bot.sh /tmp/bot.sh --bind"),
            "a configured script under /tmp stays readable: {a}"
        );
        assert!(
            !a.contains("--unshare-net") && !a.contains("--cap-drop"),
            "{a}"
        );
    }

    #[test]
    fn hidden_paths_are_replaced_by_empty_ones_after_every_writable_mount() {
        let a = s(&args(&plan(), &facts(), &"sh".into(), &[]));
        assert!(a.contains("--tmpfs /h/.ssh --remount-ro /h/.ssh"), "{a}");
        assert!(a.contains("--ro-bind /dev/null /h/.netrc"), "{a}");
        assert!(
            !a.contains("/h/.aws"),
            "a hidden path that does not exist is skipped: {a}"
        );
        assert!(
            !a.contains("--tmpfs /r "),
            "a hidden folder holding the workdir would hide the work: {a}"
        );
        let last_bind = a.rfind("--bind ").unwrap();
        assert!(a.find("--tmpfs /h/.ssh").unwrap() > last_bind);
    }

    #[test]
    fn no_network_and_root_add_their_flags() {
        let mut p = plan();
        p.network = false;
        let mut f = facts();
        f.root = true;
        let a = s(&args(&p, &f, &"sh".into(), &[]));
        assert!(a.contains("--unshare-net"), "{a}");
        assert!(
            a.contains("--unshare-user --uid 1000 --gid 1000 --cap-drop ALL --ro-bind / / --tmpfs /dev --dev-bind /dev/null /dev/null"),
            "{a}"
        );
        assert!(!a.contains("--dev /dev"), "{a}");
    }

    #[test]
    fn a_reading_agent_gets_its_workdir_and_its_git_folder_read_only() {
        let mut p = plan();
        p.workdir_writable = false;
        let a = s(&args(&p, &facts(), &"claude".into(), &[]));
        assert!(
            a.contains("--ro-bind /r/.ralph/worktrees/7 /r/.ralph/worktrees/7 --bind /h/.claude /h/.claude"),
            "{a}"
        );
        assert!(!a.contains("--bind /r/.git/worktrees/ralph-7"), "{a}");
        assert!(!a.contains(" --bind /r/.ralph"), "{a}");
    }

    #[test]
    fn a_repository_checkout_keeps_its_git_folder_read_only() {
        let mut p = plan();
        p.git = GitLink::Repository;
        let a = s(&args(&p, &facts(), &"sh".into(), &[]));
        assert!(
            a.contains("--ro-bind /r/.ralph/worktrees/7/.git /r/.ralph/worktrees/7/.git"),
            "{a}"
        );
        assert!(!a.contains("worktrees/ralph-7"), "{a}");
    }

    #[test]
    fn the_git_link_of_a_worktree_is_read_from_its_dot_git_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_link(dir.path()), GitLink::None);
        std::fs::write(dir.path().join(".git"), "gitdir: /repo/.git/worktrees/x\n").unwrap();
        assert_eq!(
            git_link(dir.path()),
            GitLink::Worktree {
                admin: "/repo/.git/worktrees/x".into()
            }
        );
        std::fs::write(dir.path().join(".git"), "gitdir: ../g\n").unwrap();
        assert_eq!(
            git_link(dir.path()),
            GitLink::Worktree {
                admin: dir.path().join("../g")
            }
        );
        std::fs::remove_file(dir.path().join(".git")).unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(git_link(dir.path()), GitLink::Repository);
        std::fs::create_dir(dir.path().join(".git").join(OWN_MARK)).unwrap();
        assert_eq!(git_link(dir.path()), GitLink::Own);
    }

    #[test]
    fn a_checkouts_own_git_dir_is_as_writable_as_its_workdir() {
        let mut p = plan();
        p.workdir = "/s/checkouts/r-1/7".into();
        p.git = GitLink::Own;
        let a = s(&args(&p, &facts(), &"sh".into(), &[]));
        assert!(
            a.contains("--bind /s/checkouts/r-1/7 /s/checkouts/r-1/7"),
            "{a}"
        );
        assert!(!a.contains("/7/.git"), "no mount over its git dir: {a}");
        p.workdir_writable = false;
        let a = s(&args(&p, &facts(), &"sh".into(), &[]));
        assert!(
            a.contains("--ro-bind /s/checkouts/r-1/7 /s/checkouts/r-1/7"),
            "a reading agent's is read-only with its workdir: {a}"
        );
    }
}
