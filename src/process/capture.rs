//! A child's output as ralph keeps it: the head and the tail of each stream up to a bound (the
//! middle dropped and counted), its lines handed to a hook as they come, and the wait for both
//! readers bounded (a grandchild may hold the pipes open).

use super::{LineHook, DRAIN_GRACE};
use std::fmt::Write as _;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Keeps the first and last `limit / 2` bytes of a stream and counts the rest.
pub(super) struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    half: usize,
    total: usize,
}

impl Capture {
    pub(super) fn new(limit: usize) -> Capture {
        Capture {
            head: Vec::new(),
            tail: Vec::new(),
            half: limit / 2,
            total: 0,
        }
    }

    pub(super) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        if self.head.len() < self.half {
            let take = (self.half - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend_from_slice(bytes);
        // Amortised: trim only when the tail has grown to twice its bound.
        if self.tail.len() > 2 * self.half.max(1) {
            let cut = self.tail.len() - self.half;
            self.tail.drain(..cut);
        }
    }

    pub(super) fn finish(mut self) -> (String, bool) {
        if self.tail.len() > self.half {
            let cut = self.tail.len() - self.half;
            self.tail.drain(..cut);
        }
        let kept = self.head.len() + self.tail.len();
        let omitted = self.total - kept;
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if omitted > 0 {
            let _ = write!(text, "\n[… {omitted} bytes omitted …]\n");
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        (text, omitted > 0)
    }
}

/// The longest partial line kept for a line hook.
pub(super) const MAX_HOOK_LINE: usize = 64 * 1024;

/// Splits a stream into lines for a hook, bounded.
pub(super) struct Lines {
    pub(super) hook: LineHook,
    pub(super) partial: Vec<u8>,
}

impl Lines {
    pub(super) fn push(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            if self.partial.len() < MAX_HOOK_LINE {
                let room = MAX_HOOK_LINE - self.partial.len();
                self.partial
                    .extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            if chunk.ends_with(b"\n") {
                self.emit();
            }
        }
    }

    pub(super) fn emit(&mut self) {
        let line = String::from_utf8_lossy(&self.partial);
        let line = line.trim_end_matches(['\n', '\r']);
        if !line.is_empty() {
            (self.hook)(line);
        }
        self.partial.clear();
    }
}

pub(super) async fn capture(
    mut reader: impl AsyncRead + Unpin,
    limit: usize,
    hook: Option<LineHook>,
) -> Capture {
    let mut cap = Capture::new(limit);
    let mut lines = hook.map(|hook| Lines {
        hook,
        partial: Vec::new(),
    });
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                cap.push(&buf[..n]);
                if let Some(lines) = &mut lines {
                    lines.push(&buf[..n]);
                }
            }
        }
    }
    if let Some(lines) = &mut lines {
        lines.emit();
    }
    cap
}

/// What the stdout and stderr readers captured, once both finish; empty captures when they
/// take longer than [`DRAIN_GRACE`] (a grandchild holding the pipes) or failed.
pub(super) async fn drain(
    out: tokio::task::JoinHandle<Capture>,
    err: tokio::task::JoinHandle<Capture>,
) -> (Capture, Capture) {
    let drain = async {
        let o = out.await.unwrap_or_else(|_| Capture::new(0));
        let e = err.await.unwrap_or_else(|_| Capture::new(0));
        (o, e)
    };
    tokio::time::timeout(DRAIN_GRACE, drain)
        .await
        .unwrap_or_else(|_| (Capture::new(0), Capture::new(0)))
}
