//! The signals that stop ralph — Ctrl-C (SIGINT), SIGTERM (how CI cancels or times out a job)
//! and SIGHUP (a closed terminal) — as one future, with the exit code and the name each one
//! gets in messages (docs/specification.md §2: 130, 143, 129).

use crate::error::Exit;

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    CtrlC,
    Terminate,
    HangUp,
}

impl Interrupt {
    /// The process exit code that reports it.
    pub fn exit(self) -> Exit {
        match self {
            Interrupt::CtrlC => Exit::Interrupted,
            Interrupt::Terminate => Exit::Terminated,
            Interrupt::HangUp => Exit::HangUp,
        }
    }

    /// For messages: `Ctrl-C`, `SIGTERM`, `SIGHUP`.
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::CtrlC => "Ctrl-C",
            Interrupt::Terminate => "SIGTERM",
            Interrupt::HangUp => "SIGHUP",
        }
    }
}

/// Completes when one of the signals arrives. A handler that cannot be installed never fires.
pub async fn interrupted() -> Interrupt {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).ok();
        let mut hup = signal(SignalKind::hangup()).ok();
        let wait = |s: Option<tokio::signal::unix::Signal>| async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            Ok(()) = tokio::signal::ctrl_c() => Interrupt::CtrlC,
            () = wait(term.take()) => Interrupt::Terminate,
            () = wait(hup.take()) => Interrupt::HangUp,
        }
    }
    #[cfg(not(unix))]
    {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Interrupt::CtrlC,
            Err(_) => std::future::pending().await,
        }
    }
}
