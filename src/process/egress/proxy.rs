//! The proxy outside the sandbox: one Unix socket per confined process (a [`Gate`]), bound into
//! its sandbox, served on ralph's runtime. A request is `CONNECT host:port` (HTTPS, any TLS) or
//! a plain HTTP request in absolute form (`GET http://host:port/path`); it is allowed only when
//! the process's [`Reach`] allows the host and port, then connected by ralph — which resolves
//! the name — and spliced. Anything else gets `403 Forbidden` with the reason, and is counted in
//! [`refusals`](super::refusals).

use super::Reach;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// The most a request's head may hold.
const MAX_HEAD: usize = 32 * 1024;

/// How long connecting to an allowed host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The way out of one confined process: its socket, served until dropped.
#[derive(Debug)]
pub struct Gate {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Gate {
    /// The socket to bind into the sandbox.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// ralph's own folder for the gates' sockets, made on first use.
static DIR: std::sync::OnceLock<Option<tempfile::TempDir>> = std::sync::OnceLock::new();

/// Removes the folder of the gates' sockets, when one was made: a static, which nothing drops,
/// holds it, so the binary removes it before it exits.
pub fn remove_socket_dir() {
    if let Some(Some(dir)) = DIR.get() {
        let _ = std::fs::remove_dir_all(dir.path());
    }
}

/// ralph's own folder (mode 0700) for the gates' sockets.
fn socket_dir() -> io::Result<&'static Path> {
    DIR.get_or_init(|| {
        tempfile::Builder::new()
            .prefix("ralph-egress-")
            .tempdir()
            .ok()
    })
    .as_ref()
    .map(|d| d.path())
    .ok_or_else(|| io::Error::other("cannot make a folder for the network gates"))
}

/// Opens a gate for a process of `kind` (`agent`, `check`, `setup`), known as `by`, that may
/// reach what `reach` allows.
pub async fn open(reach: Reach, kind: &str, by: &str) -> io::Result<Gate> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let path = socket_dir()?.join(format!("gate-{}.sock", N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    let who = Arc::new((reach, kind.to_owned(), by.to_owned()));
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let who = who.clone();
            tokio::spawn(async move {
                let (reach, kind, by) = &*who;
                let _ = serve(stream, reach, kind, by).await;
            });
        }
    });
    Ok(Gate { path, task })
}

/// A request's target: where it goes and, for plain HTTP, the head to send there.
#[derive(Debug, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
    /// `None` for `CONNECT`; the rewritten head (origin form, `Connection: close`) otherwise.
    pub head: Option<Vec<u8>>,
}

/// Reads a request's head from `head` (everything up to and with the blank line): its target,
/// or why it is not a request this proxy serves.
pub fn target(head: &[u8]) -> Result<Target, String> {
    let text = std::str::from_utf8(head).map_err(|_| "a request head that is not text")?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut words = first.split(' ');
    let (method, target, version) = (
        words.next().unwrap_or(""),
        words.next().unwrap_or(""),
        words.next().unwrap_or("HTTP/1.1"),
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = host_port(target, None)?;
        return Ok(Target {
            host,
            port,
            head: None,
        });
    }
    let rest = target.strip_prefix("http://").ok_or_else(|| {
        format!("`{method} {target}`: only CONNECT and http:// requests go through")
    })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = host_port(authority, Some(80))?;
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or("").trim();
        let skip = [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ];
        if !skip.iter().any(|s| name.eq_ignore_ascii_case(s)) {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        head: Some(out.into_bytes()),
    })
}

/// `host:port` (`[v6]:port`) split; `default` when the port is left out.
fn host_port(s: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address without its `]`")?;
        (h, after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().map_err(|_| format!("{s:?}: not a port"))?,
        None => default.ok_or_else(|| format!("{s:?}: no port"))?,
    };
    if host.is_empty() {
        return Err(format!("{s:?}: no host"));
    }
    Ok((host.trim_end_matches('.').to_ascii_lowercase(), port))
}

/// Reads up to the end of the head; returns the head and what came after it.
async fn read_head(stream: &mut UnixStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
    }
}

async fn reply(stream: &mut UnixStream, status: &str, why: &str) -> io::Result<()> {
    let body = format!("ralph: {why}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes()).await?;
    stream.shutdown().await
}

async fn serve(mut stream: UnixStream, reach: &Reach, kind: &str, by: &str) -> io::Result<()> {
    let (head, rest) = read_head(&mut stream).await?;
    let target = match target(&head) {
        Ok(t) => t,
        Err(why) => return reply(&mut stream, "400 Bad Request", &why).await,
    };
    if !reach.allows(&target.host, target.port) {
        super::refusals().record(kind, by, &target.host, target.port);
        tracing::info!(
            "network: refused {}:{} to {by} ({kind})",
            target.host,
            target.port
        );
        let key = match kind {
            "agent" => "agents_allow",
            "check" => "checks_allow",
            _ => "setup_allow",
        };
        let why = format!(
            "{}:{} is not in the {kind} network policy (`[sandbox.network] {key}` adds it)",
            target.host, target.port
        );
        return reply(&mut stream, "403 Forbidden", &why).await;
    }
    let connect = TcpStream::connect((target.host.as_str(), target.port));
    let mut upstream = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            let why = format!("{}:{}: {e}", target.host, target.port);
            return reply(&mut stream, "502 Bad Gateway", &why).await;
        }
        Err(_) => {
            let why = format!("{}:{}: no answer in time", target.host, target.port);
            return reply(&mut stream, "504 Gateway Timeout", &why).await;
        }
    };
    match &target.head {
        None => {
            stream
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?
        }
        Some(head) => upstream.write_all(head).await?,
    }
    if !rest.is_empty() {
        upstream.write_all(&rest).await?;
    }
    tokio::io::copy_bidirectional(&mut stream, &mut upstream).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::egress::Rule;

    #[test]
    fn a_connect_names_its_host_and_port() {
        assert_eq!(
            target(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap(),
            Target {
                host: "api.anthropic.com".into(),
                port: 443,
                head: None
            }
        );
        assert_eq!(
            target(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").unwrap().host,
            "::1"
        );
    }

    #[test]
    fn a_plain_request_is_sent_in_origin_form_without_proxy_headers() {
        let t = target(b"GET http://127.0.0.1:4010/v1/models?x=1 HTTP/1.1\r\nHost: 127.0.0.1:4010\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic x\r\nAccept: */*\r\n\r\n").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 4010));
        assert_eq!(
            String::from_utf8(t.head.unwrap()).unwrap(),
            "GET /v1/models?x=1 HTTP/1.1\r\nHost: 127.0.0.1:4010\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            target(b"GET http://pypi.org HTTP/1.1\r\n\r\n")
                .unwrap()
                .port,
            80
        );
    }

    #[test]
    fn other_requests_are_refused_with_a_reason() {
        assert!(target(b"GET /x HTTP/1.1\r\n\r\n").is_err());
        assert!(target(b"CONNECT nohost HTTP/1.1\r\n\r\n").is_err());
    }

    #[tokio::test]
    async fn the_gate_splices_what_is_allowed_and_counts_what_is_not() {
        // An upstream that says hello.
        let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = up.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = up.accept().await {
                let _ = s.write_all(b"hello").await;
            }
        });
        let reach = Reach::Allow(vec![Rule::parse(&format!("127.0.0.1:{port}")).unwrap()]);
        let gate = open(reach, "check", "test-gate").await.unwrap();
        let mut c = UnixStream::connect(gate.path()).await.unwrap();
        c.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "HTTP/1.1 200 Connection Established\r\n\r\nhello");

        let mut c = UnixStream::connect(gate.path()).await.unwrap();
        c.write_all(b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).await.unwrap();
        assert!(got.starts_with("HTTP/1.1 403 Forbidden"), "{got}");
        assert!(got.contains("evil.example:443 is not in the check network policy"));
        assert!(crate::process::egress::refusals()
            .all()
            .iter()
            .any(|r| r.by == "test-gate" && r.host == "evil.example"));
        let path = gate.path().to_owned();
        drop(gate);
        assert!(!path.exists(), "the socket goes with the gate");
    }
}
