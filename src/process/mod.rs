//! The one way ralph runs another program (`git`, `gh`, agents, checks): arguments as a list
//! (never through a shell unless the caller asks for `sh -c` explicitly), a timeout that kills
//! the whole process group, and stdout/stderr captured up to a bound (the head and the tail are
//! kept, the middle is dropped and counted). The child never outlives ralph: dropping the
//! future (Ctrl-C) kills its process group too. A command marked with a [`Confinement`] (every
//! agent, check and setup command) runs inside the installed [`sandbox`].

pub mod bwrap;
mod capture;
pub mod egress;
pub mod environment;
pub mod gitconfig;
pub mod sandbox;

pub use sandbox::{Confinement, Kind};

use capture::{capture, drain};
#[cfg(test)]
use capture::{Capture, Lines, MAX_HOOK_LINE};

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// Default bound on each captured stream.
pub const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

/// How long a process group gets between SIGTERM and SIGKILL after a timeout.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How long to keep reading pipes after the child exited (a grandchild may hold them open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Called with each line of a child's stdout as it arrives (without the newline).
pub type LineHook = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// A command to run.
#[derive(Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
    on_stdout_line: Option<LineHook>,
    confine: Option<Confinement>,
    /// Names and globs of ralph's environment this confined program also gets (an agent's
    /// own CLI variables and key), beyond [`environment`]'s allowlist.
    own_env: Vec<String>,
}

impl std::fmt::Debug for Cmd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cmd")
            .field("command", &self.display())
            .field("cwd", &self.cwd)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>) -> Cmd {
        Cmd {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            timeout: Duration::from_secs(60),
            max_output: DEFAULT_MAX_OUTPUT,
            on_stdout_line: None,
            confine: None,
            own_env: Vec::new(),
        }
    }

    /// Also lets this confined program reach `hosts` (its own endpoints), beyond its kind's
    /// network allowlist.
    pub fn hosts<I: IntoIterator<Item = String>>(mut self, hosts: I) -> Cmd {
        if let Some(c) = self.confine.take() {
            self.confine = Some(c.hosts(hosts));
        }
        self
    }

    /// Names this confined program in the refusals of its connections.
    pub fn label(mut self, label: impl Into<String>) -> Cmd {
        if let Some(c) = self.confine.take() {
            self.confine = Some(c.label(label));
        }
        self
    }

    /// Also passes the variables of ralph's environment that `patterns` name (names, or
    /// prefixes ending in `*`) to this confined program: an agent's own key.
    pub fn own_env<I, S>(mut self, patterns: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.own_env.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Runs the command inside the installed sandbox with what `c` allows (as it is when no
    /// sandbox is installed, or the installed one confines nothing), and — sandbox or not —
    /// with only the environment [`environment`]'s allowlist gives its kind.
    pub fn confine(mut self, c: Confinement) -> Cmd {
        self.confine = Some(c);
        self
    }

    /// Calls `hook` with every line of stdout as it arrives (the output is still captured
    /// whole, within `max_output`). A line longer than 64 KiB is passed cut.
    pub fn on_stdout_line(mut self, hook: LineHook) -> Cmd {
        self.on_stdout_line = Some(hook);
        self
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Cmd {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Cmd {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Cmd {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Removes a variable from the child's environment (e.g. tokens agents must not see).
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Cmd {
        self.env_remove.push(key.as_ref().to_owned());
        self
    }

    /// Bytes written to the child's stdin (then closed). Without it stdin is `/dev/null`.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Cmd {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Cmd {
        self.timeout = timeout;
        self
    }

    /// Bound on each captured stream, in bytes.
    pub fn max_output(mut self, bytes: usize) -> Cmd {
        self.max_output = bytes.max(64);
        self
    }

    /// The command line for messages: program and arguments, shell-quoted where needed.
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| {
                let a = a.to_string_lossy();
                if !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
                {
                    a.into_owned()
                } else {
                    format!("'{}'", a.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a finished (or timed-out) command produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code; `None` when killed by a signal (including after a timeout).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Some of stdout or stderr was dropped to stay within the bound.
    pub truncated: bool,
    pub timed_out: bool,
    pub duration: Duration,
}

impl Output {
    /// Exited with 0 within the timeout.
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// The last `lines` lines of stderr, else of stdout: for error messages.
    pub fn tail(&self, lines: usize) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let all: Vec<&str> = text.trim_end().lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// A command that could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("`{program}` was not found on PATH")]
    NotFound { program: String },
    #[error("`{program}` is at {}, which the sandbox hides ({} is hidden from agents and checks): install it elsewhere, or take it out of `[sandbox] hide`", path.display(), hidden.display())]
    Hidden {
        program: String,
        path: PathBuf,
        hidden: PathBuf,
    },
    #[error("could not start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("lost track of `{program}`")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// The process groups of the children running now, so that an interrupt can kill them all
/// even when no destructor will run (`std::process::exit`).
fn live_groups() -> &'static std::sync::Mutex<std::collections::BTreeSet<i32>> {
    static LIVE: std::sync::OnceLock<std::sync::Mutex<std::collections::BTreeSet<i32>>> =
        std::sync::OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Removes the folders this process made for its sandbox and its network gates, which statics
/// hold and nothing drops: the binary calls it before it exits, so that no run leaves them in
/// the temporary folder.
pub fn remove_own_files() {
    sandbox::remove_own_files();
    egress::proxy::remove_socket_dir();
}

/// Kills every child process group still running (Ctrl-C, before the process exits).
pub fn kill_all() {
    let groups: Vec<i32> = live_groups()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .collect();
    for pid in groups {
        GroupGuard::signal_pid(pid, KILL);
    }
}

#[cfg(unix)]
const KILL: i32 = libc::SIGKILL;
#[cfg(not(unix))]
const KILL: i32 = 9;

/// Kills the child's process group when dropped, unless the child has been reaped.
struct GroupGuard {
    pid: Option<u32>,
}

impl GroupGuard {
    fn new(pid: Option<u32>) -> GroupGuard {
        if let Some(p) = pid.and_then(|p| i32::try_from(p).ok()) {
            live_groups()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(p);
        }
        GroupGuard { pid }
    }

    fn signal_pid(_pid: i32, _sig: i32) {
        #[cfg(unix)]
        // SAFETY: kill(2) with a negative pid signals a process group we created for a child
        // (process_group(0)); it touches no memory of ours.
        unsafe {
            libc::kill(-_pid, _sig);
        }
    }

    /// The child has been reaped: forget its group (after a last kill of stragglers).
    fn release(&mut self) {
        if let Some(p) = self.pid.take().and_then(|p| i32::try_from(p).ok()) {
            Self::signal_pid(p, KILL);
            live_groups()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&p);
        }
    }

    fn signal(&self, sig: i32) {
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            Self::signal_pid(pid, sig);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Runs `cmd` to completion or timeout and captures its output. A non-zero exit is not an
/// error here: the caller decides what it means.
pub async fn run(cmd: &Cmd) -> Result<Output, ProcessError> {
    let program = cmd.program.to_string_lossy().into_owned();
    let gate = open_gate(cmd).await?;
    let confined = confined_program(cmd, &program, gate.as_ref().map(|g| g.path()))?;
    let (exe, args) = match &confined {
        Some((exe, args)) => (exe, args.as_slice()),
        None => (&cmd.program, cmd.args.as_slice()),
    };
    let mut command = child_command(cmd, exe, args, confined.is_some());
    if let (Some(_), Some(port)) = (&gate, confined_proxy_port(&confined)) {
        through_forwarder(&mut command, port);
    }
    let started = Instant::now();
    let mut child = spawn(&mut command, &program).await?;
    let mut guard = GroupGuard::new(child.id());
    tracing::debug!(command = %cmd.display(), pid = ?guard.pid, sandboxed = confined.is_some(), "started");

    feed_stdin(&mut child, cmd.stdin.clone());
    let streams = capture_streams(&mut child, cmd);
    let (status, timed_out) = wait_or_kill(&mut child, &guard, cmd.timeout)
        .await
        .map_err(|source| ProcessError::Wait {
            program: program.clone(),
            source,
        })?;
    // Whatever the child left behind in its group goes with it.
    guard.release();
    drop(gate);

    let output = output_of(streams, status, timed_out, started).await;
    tracing::debug!(
        command = %cmd.display(),
        code = ?output.code,
        timed_out,
        ms = output.duration.as_millis() as u64,
        "finished"
    );
    Ok(output)
}

/// Points every way a program looks for a proxy at the forwarder on the loopback `port`;
/// nothing is exempt.
fn through_forwarder(command: &mut tokio::process::Command, port: u16) {
    let proxy = format!("http://127.0.0.1:{port}");
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        command.env(var, &proxy);
    }
    for var in ["NO_PROXY", "no_proxy"] {
        command.env_remove(var);
    }
}

/// Writes `input` to the child's stdin, then closes it, from a task of its own.
fn feed_stdin(child: &mut tokio::process::Child, input: Option<Vec<u8>>) {
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        tokio::spawn(async move {
            // A child that exits without reading its input closes the pipe: not our error.
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
}

/// The tasks reading a child's stdout and stderr.
type Streams = (
    tokio::task::JoinHandle<capture::Capture>,
    tokio::task::JoinHandle<capture::Capture>,
);

/// Reads the child's stdout and stderr, each from a task of its own, up to `cmd`'s bound
/// (stdout also line by line to `cmd`'s hook, when it has one).
fn capture_streams(child: &mut tokio::process::Child, cmd: &Cmd) -> Streams {
    let out = tokio::spawn(capture(
        child.stdout.take().expect("stdout is piped"),
        cmd.max_output,
        cmd.on_stdout_line.clone(),
    ));
    let err = tokio::spawn(capture(
        child.stderr.take().expect("stderr is piped"),
        cmd.max_output,
        None,
    ));
    (out, err)
}

/// Waits for the child for `timeout`; then SIGTERM to its group, [`KILL_GRACE`] more, and a
/// kill. Returns its exit status and whether it timed out.
async fn wait_or_kill(
    child: &mut tokio::process::Child,
    guard: &GroupGuard,
    timeout: Duration,
) -> std::io::Result<(std::process::ExitStatus, bool)> {
    if let Ok(status) = tokio::time::timeout(timeout, child.wait()).await {
        return Ok((status?, false));
    }
    #[cfg(unix)]
    guard.signal(libc::SIGTERM);
    #[cfg(not(unix))]
    let _ = guard;
    let status = match tokio::time::timeout(KILL_GRACE, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    Ok((status?, true))
}

/// The output of a child that exited with `status`: both streams read to their end (for at most
/// [`DRAIN_GRACE`] more: a grandchild may hold them open).
async fn output_of(
    (out, err): Streams,
    status: std::process::ExitStatus,
    timed_out: bool,
    started: Instant,
) -> Output {
    let (o, e) = drain(out, err).await;
    let (stdout, t1) = o.finish();
    let (stderr, t2) = e.finish();
    Output {
        code: status.code(),
        stdout,
        stderr,
        truncated: t1 || t2,
        timed_out,
        duration: started.elapsed(),
    }
}

/// The program and arguments that run `cmd` (whose program is `program`) confined by the
/// installed sandbox, or `None` when it runs unconfined (no confinement asked, no sandbox
/// installed, or one that confines nothing). A confined program neither on `PATH` nor in the
/// command's directory is `NotFound`.
fn confined_program(
    cmd: &Cmd,
    program: &str,
    gate: Option<&Path>,
) -> Result<Option<(OsString, Vec<OsString>)>, ProcessError> {
    Ok(match (&cmd.confine, sandbox::current()) {
        (Some(c), Some(sb)) => {
            // The sandbox would say "no such file" in its own words: say it in ralph's.
            let resolved = match find_on_path(program) {
                Some(p) => p.into_os_string(),
                None if cmd.cwd.as_ref().is_some_and(|d| d.join(program).is_file()) => {
                    cmd.program.clone()
                }
                None => {
                    return Err(ProcessError::NotFound {
                        program: program.to_owned(),
                    })
                }
            };
            let real = Path::new(&resolved)
                .canonicalize()
                .unwrap_or_else(|_| PathBuf::from(&resolved));
            if let Some(hidden) = sb.hides(&real, c) {
                return Err(ProcessError::Hidden {
                    program: program.to_owned(),
                    path: real,
                    hidden,
                });
            }
            sb.wrap(c, &resolved, &cmd.args, gate)
        }
        _ => None,
    })
}

/// The gate through ralph's proxy a confined command gets when its kind's network is an
/// allowlist (none without a sandbox, or with the kind's network open).
async fn open_gate(cmd: &Cmd) -> Result<Option<egress::proxy::Gate>, ProcessError> {
    let (Some(c), Some(sb)) = (&cmd.confine, sandbox::current()) else {
        return Ok(None);
    };
    match sb.reach(c) {
        egress::Reach::Open => Ok(None),
        reach => {
            let label = if c.label.is_empty() {
                cmd.display()
            } else {
                c.label.clone()
            };
            egress::proxy::open(reach, c.kind_name(), &label)
                .await
                .map(Some)
                .map_err(|source| ProcessError::Spawn {
                    program: cmd.program.to_string_lossy().into_owned(),
                    source,
                })
        }
    }
}

/// The loopback port of the forwarder a wrapped command line starts, if it starts one.
fn confined_proxy_port(confined: &Option<(OsString, Vec<OsString>)>) -> Option<u16> {
    let (_, args) = confined.as_ref()?;
    let at = args.iter().position(|a| a == egress::forward::SUBCOMMAND)?;
    let port = args.get(at + 4)?;
    port.to_str()?.parse().ok()
}

/// The process that runs `exe args` for `cmd`: in its own process group, killed on drop, in
/// the command's directory with its environment — the allowlist's when the command is marked
/// confined, and, when it runs in the sandbox (`confined`), without the variables the sandbox
/// unsets and with `TMPDIR=/tmp` — stdin piped only when there is input.
fn child_command(
    cmd: &Cmd,
    exe: &OsStr,
    args: &[OsString],
    confined: bool,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(exe);
    command
        .args(args)
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    if let Some(c) = &cmd.confine {
        // An agent, a check, a setup or a hook: from the allowlist, not ralph's environment.
        command.env_clear();
        let allowed = environment::current().filter(c.kind, &cmd.own_env, std::env::vars_os());
        command.envs(allowed);
        // In one of ralph's checkouts, `git config --global` writes the checkout's own
        // global configuration, never the user's (which it includes).
        if bwrap::git_link(&c.workdir) == bwrap::GitLink::Own {
            command.env("GIT_CONFIG_GLOBAL", bwrap::own_global_config(&c.workdir));
        }
    }
    for key in &cmd.env_remove {
        command.env_remove(key);
    }
    for (k, v) in &cmd.env {
        command.env(k, v);
    }
    if confined {
        for var in sandbox::UNSET {
            command.env_remove(var);
        }
        command.env("TMPDIR", "/tmp");
    }
    command
}

/// Spawns `command` (running `program`), trying again while the kernel says the executable is
/// busy; a program that is not there is `NotFound`.
async fn spawn(
    command: &mut tokio::process::Command,
    program: &str,
) -> Result<tokio::process::Child, ProcessError> {
    // A program written a moment ago can still be open for writing in a child forked by
    // another thread before its exec: the kernel says "text file busy" until that exec.
    // It clears within milliseconds, so the spawn is tried again a few times.
    let mut busy_retries = 0;
    let spawned = loop {
        match command.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && busy_retries < 5 => {
                busy_retries += 1;
                tokio::time::sleep(Duration::from_millis(20 * busy_retries)).await;
            }
            other => break other,
        }
    };
    spawned.map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ProcessError::NotFound {
                program: program.to_owned(),
            }
        } else {
            ProcessError::Spawn {
                program: program.to_owned(),
                source,
            }
        }
    })
}

/// `word` quoted for `sh`, whatever it holds.
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Whether `program` can be started: a path that exists, or a name found on `PATH`.
pub fn on_path(program: &str) -> bool {
    find_on_path(program).is_some()
}

/// The file `program` names: itself when it is a path, else the first match on `PATH`.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    find_in(program, &crate::env::get_os(crate::env::PATH)?)
}

/// Where `program` is found on the search path `paths` (a `PATH` value).
pub fn find_in(program: &str, paths: &std::ffi::OsStr) -> Option<PathBuf> {
    if program.contains('/') {
        let path = std::path::Path::new(program);
        return (path.is_file() && is_executable(path)).then(|| path.to_owned());
    }
    std::env::split_paths(paths)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file() && is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_path: &std::path::Path) -> bool {
    true
}

#[cfg(test)]
mod tests;
