//! Live progress of long work (docs/commands.md, Live progress): one line per running agent or
//! check, with its elapsed time and latest activity. On a terminal the lines are redrawn in place
//! (indicatif); off a terminal nothing is redrawn: every `[output] heartbeat_secs` a heartbeat line
//! per running task is printed, so a CI log never goes silent. `--progress never` and `-q` show
//! neither. In Action mode (`GITHUB_ACTIONS=true`) the phases become collapsible log groups
//! ([`Progress::phase`]).
//!
//! A [`Progress`] is cheap to clone and shared by everything that runs work; a [`Task`] is one
//! running thing, removed from the view when dropped. Lines printed while the live view is
//! drawn go through [`Progress::println`] (and the [`crate::output::Printer`], which defers to
//! the live view), so they appear above the status lines instead of tearing them.

pub mod activity;
mod heartbeat;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `--progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ProgressChoice {
    /// Live lines on a terminal, heartbeat lines elsewhere
    #[default]
    Auto,
    /// Live lines even when stderr is not a terminal
    Always,
    /// Neither live lines nor heartbeats
    Never,
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Status lines redrawn in place.
    Live,
    /// A line per running task every heartbeat interval.
    Heartbeat,
    /// Nothing.
    Off,
}

impl Mode {
    /// The mode for `--progress`, `-q` and whether stderr is a terminal.
    pub fn choose(choice: ProgressChoice, quiet: bool, stderr_is_terminal: bool) -> Mode {
        match (quiet, choice) {
            (true, _) | (false, ProgressChoice::Never) => Mode::Off,
            (false, ProgressChoice::Always) => Mode::Live,
            (false, ProgressChoice::Auto) if stderr_is_terminal => Mode::Live,
            (false, ProgressChoice::Auto) => Mode::Heartbeat,
        }
    }
}

/// One running agent or check, as the view knows it.
struct Running {
    label: String,
    started: Instant,
    activity: String,
    bar: Option<ProgressBar>,
}

struct Inner {
    mode: Mode,
    heartbeat: Duration,
    /// Collapsible groups in the log (GitHub Actions).
    groups: bool,
    multi: Option<MultiProgress>,
    tasks: Mutex<BTreeMap<u64, Running>>,
    next: AtomicU64,
    group_open: Mutex<bool>,
}

/// The live view of a command's running work.
#[derive(Clone)]
pub struct Progress {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("mode", &self.inner.mode)
            .finish()
    }
}

impl Default for Progress {
    /// No progress shown.
    fn default() -> Progress {
        Progress::off()
    }
}

/// The live view being drawn, for the printer's lines.
fn drawn() -> &'static Mutex<Option<MultiProgress>> {
    static DRAWN: OnceLock<Mutex<Option<MultiProgress>>> = OnceLock::new();
    DRAWN.get_or_init(Default::default)
}

/// Runs `print` so that it does not tear the live view: above it while one is drawn.
pub fn suspend_for(print: impl FnOnce()) {
    let multi = drawn().lock().ok().and_then(|m| m.clone());
    match multi {
        Some(multi) => multi.suspend(print),
        None => print(),
    }
}

/// Standard error, written above the live view when one is drawn (the log lines' writer).
pub struct StderrAbove;

impl std::io::Write for StderrAbove {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut result = Ok(());
        suspend_for(|| result = std::io::stderr().write_all(buf));
        result.map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl Progress {
    /// A view in `mode`; heartbeats every `heartbeat`; log groups when `groups`.
    pub fn new(mode: Mode, heartbeat: Duration, groups: bool) -> Progress {
        let multi = (mode == Mode::Live).then(|| {
            // Drawn even when stderr is not a terminal (`--progress always`).
            let target =
                ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 8);
            MultiProgress::with_draw_target(target)
        });
        if let (Some(m), Ok(mut slot)) = (&multi, drawn().lock()) {
            *slot = Some(m.clone());
        }
        Progress {
            inner: Arc::new(Inner {
                mode,
                heartbeat: heartbeat.max(Duration::from_secs(1)),
                groups,
                multi,
                tasks: Mutex::new(BTreeMap::new()),
                next: AtomicU64::new(0),
                group_open: Mutex::new(false),
            }),
        }
    }

    /// No progress at all (tests, `--json` consumers that want silence are served by `-q`).
    pub fn off() -> Progress {
        Progress::new(Mode::Off, Duration::from_secs(30), false)
    }

    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// Starts a task labelled `label` (`implement · implementer · attempt 1/3`).
    pub fn start(&self, label: impl Into<String>) -> Task {
        let label = label.into();
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let bar = self.inner.multi.as_ref().map(|m| {
            let bar = m.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {elapsed:>4} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(label.clone());
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(125));
            bar
        });
        if let Ok(mut tasks) = self.inner.tasks.lock() {
            tasks.insert(
                id,
                Running {
                    label,
                    started: Instant::now(),
                    activity: "starting".into(),
                    bar,
                },
            );
        }
        Task {
            id,
            tracker: self.clone(),
        }
    }

    /// Prints a line on stderr without tearing the live view (nothing when progress is off
    /// because of `-q`: the caller's printer decides that for its own lines).
    pub fn println(&self, line: &str) {
        let line = crate::secret::redact(line);
        suspend_for(|| eprintln!("{line}"));
    }

    /// A line about finished work (a bot's proposal, a check's result): shown with live lines
    /// and with heartbeats, not when progress is off.
    pub fn note(&self, line: &str) {
        if self.inner.mode != Mode::Off {
            self.println(line);
        }
    }

    /// Starts a phase: in Action mode the previous log group is closed and a new one opened
    /// with `title`. Returns whether a group was opened.
    pub fn phase(&self, title: &str) -> bool {
        if !self.inner.groups {
            return false;
        }
        let mut open = self
            .inner
            .group_open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut text = String::new();
        if *open {
            text.push_str("::endgroup::\n");
        }
        // A workflow command must be one line; `%`, CR and LF are escaped.
        let title = title
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A");
        text.push_str(&format!("::group::{title}"));
        *open = true;
        suspend_for(|| eprintln!("{text}"));
        true
    }

    /// Closes the open log group, if any (at the end of a command).
    pub fn end_phase(&self) {
        let mut open = self
            .inner
            .group_open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if *open {
            suspend_for(|| eprintln!("::endgroup::"));
            *open = false;
        }
    }

    /// The heartbeat lines of the tasks running now (what the heartbeat prints).
    pub fn heartbeat_lines(&self) -> Vec<String> {
        let tasks = match self.inner.tasks.lock() {
            Ok(t) => t,
            Err(e) => e.into_inner(),
        };
        tasks
            .values()
            .map(|t| {
                format!(
                    "  … {} · {} · {}",
                    t.label,
                    elapsed(t.started.elapsed()),
                    t.activity
                )
            })
            .collect()
    }

    /// In heartbeat mode, prints the running tasks every interval until the guard drops.
    pub fn heartbeat(&self) -> Option<heartbeat::Guard> {
        (self.inner.mode == Mode::Heartbeat)
            .then(|| heartbeat::spawn(self.clone(), self.inner.heartbeat))
    }

    fn set_activity(&self, id: u64, activity: &str) {
        let Ok(mut tasks) = self.inner.tasks.lock() else {
            return;
        };
        if let Some(t) = tasks.get_mut(&id) {
            t.activity = activity.to_owned();
            if let Some(bar) = &t.bar {
                bar.set_message(activity.to_owned());
            }
        }
    }

    fn remove(&self, id: u64) {
        let removed = self.inner.tasks.lock().ok().and_then(|mut t| t.remove(&id));
        if let Some(bar) = removed.and_then(|r| r.bar) {
            bar.finish_and_clear();
            if let Some(m) = &self.inner.multi {
                m.remove(&bar);
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.multi.is_some() {
            if let Ok(mut slot) = drawn().lock() {
                *slot = None;
            }
        }
    }
}

/// `42s`, `3m05s`, `1h02m`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// One running agent or check; leaves the view when dropped.
pub struct Task {
    id: u64,
    tracker: Progress,
}

impl Task {
    /// What it is doing now (one short line, see [`activity::one_line`]).
    pub fn activity(&self, text: &str) {
        self.tracker
            .set_activity(self.id, &activity::one_line(text));
    }

    /// A function that reports activity from another thread (a stream reader).
    pub fn sink(&self) -> ActivitySink {
        let (tracker, id) = (self.tracker.clone(), self.id);
        ActivitySink(Arc::new(move |text: &str| {
            tracker.set_activity(id, &activity::one_line(text))
        }))
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.tracker.remove(self.id);
    }
}

/// Where a backend reports what its agent is doing.
#[derive(Clone)]
pub struct ActivitySink(Arc<dyn Fn(&str) + Send + Sync>);

impl ActivitySink {
    /// A sink calling `f` with each activity.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> ActivitySink {
        ActivitySink(Arc::new(f))
    }

    pub fn report(&self, text: &str) {
        (self.0)(text)
    }
}

impl std::fmt::Debug for ActivitySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActivitySink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_follows_the_flag_the_terminal_and_quiet() {
        use ProgressChoice::*;
        assert_eq!(Mode::choose(Auto, false, true), Mode::Live);
        assert_eq!(Mode::choose(Auto, false, false), Mode::Heartbeat);
        assert_eq!(Mode::choose(Always, false, false), Mode::Live);
        assert_eq!(Mode::choose(Never, false, true), Mode::Off);
        assert_eq!(Mode::choose(Auto, true, true), Mode::Off);
        assert_eq!(Mode::choose(Always, true, false), Mode::Off);
    }

    #[test]
    fn heartbeat_lines_list_the_running_tasks_with_their_activity() {
        let t = Progress::new(Mode::Heartbeat, Duration::from_secs(30), false);
        let a = t.start("implement · implementer · attempt 1/3");
        let b = t.start("check test");
        a.activity("Edit src/lib.rs");
        b.sink().report("running");
        let lines = t.heartbeat_lines();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0]
                .starts_with("  … implement · implementer · attempt 1/3 · 0s · Edit src/lib.rs"),
            "{lines:?}"
        );
        assert!(lines[1].ends_with("· running"), "{lines:?}");
        drop(a);
        assert_eq!(t.heartbeat_lines().len(), 1);
    }

    #[test]
    fn elapsed_reads_like_a_clock() {
        assert_eq!(elapsed(Duration::from_secs(42)), "42s");
        assert_eq!(elapsed(Duration::from_secs(185)), "3m05s");
        assert_eq!(elapsed(Duration::from_secs(3720)), "1h02m");
    }
}
