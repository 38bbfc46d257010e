//! The forwarder inside the sandbox: ralph's own binary, started as
//! `ralph __egress-forward --socket S --port P [--mirror HOST:PORT]… -- PROGRAM ARGS…` in the
//! process's network namespace, where only loopback exists. It listens on `127.0.0.1:P` and
//! hands every connection to the proxy through the socket `S` (the programs find it through
//! `HTTPS_PROXY`/`HTTP_PROXY`); for each `--mirror` — an allowed endpoint on the host's loopback,
//! such as a local model server — it also listens on that same address inside, and tunnels each
//! connection there with a `CONNECT`, so a client that never uses a proxy for `localhost` still
//! reaches it. Then it runs the program, with its own standard streams, and exits with its
//! status. Plain threads: it must start fast and print nothing of its own.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// The subcommand ralph's binary answers to.
pub const SUBCOMMAND: &str = "__egress-forward";

/// Where the socket of the gate is shown inside the sandbox.
pub const SOCKET_INSIDE: &str = "/tmp/.ralph-egress.sock";

/// The forwarder's arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub socket: PathBuf,
    pub port: u16,
    pub mirrors: Vec<(String, u16)>,
    pub program: Vec<String>,
}

/// The arguments after the subcommand, for `program` and what it needs.
pub fn args_for(
    socket: &str,
    port: u16,
    mirrors: &[(String, u16)],
    program: &[String],
) -> Vec<String> {
    let mut out = vec![
        SUBCOMMAND.to_owned(),
        "--socket".into(),
        socket.into(),
        "--port".into(),
        port.to_string(),
    ];
    for (host, port) in mirrors {
        out.push("--mirror".into());
        out.push(if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        });
    }
    out.push("--".into());
    out.extend(program.iter().cloned());
    out
}

/// Parses the arguments after the subcommand.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut socket = None;
    let mut port = None;
    let mut mirrors = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .cloned()
                .ok_or(format!("{} needs a value", args[i]))
        };
        match args[i].as_str() {
            "--socket" => socket = Some(PathBuf::from(value()?)),
            "--port" => port = Some(value()?.parse().map_err(|_| "--port: not a port")?),
            "--mirror" => {
                let v = value()?;
                let (host, p) = v.rsplit_once(':').ok_or("--mirror: HOST:PORT")?;
                let host = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                mirrors.push((host, p.parse().map_err(|_| "--mirror: not a port")?));
            }
            "--" => {
                return Ok(Args {
                    socket: socket.ok_or("--socket is missing")?,
                    port: port.ok_or("--port is missing")?,
                    mirrors,
                    program: args[i + 1..].to_vec(),
                })
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
        i += 2;
    }
    Err("no program after --".into())
}

/// Copies both ways between `a` and `b` until either side closes.
fn splice(a: TcpStream, b: UnixStream) {
    let (Ok(mut a2), Ok(mut b2)) = (a.try_clone(), b.try_clone()) else {
        return;
    };
    let (mut a, mut b) = (a, b);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut a2, &mut b2);
        let _ = b2.shutdown(std::net::Shutdown::Write);
    });
    let _ = io::copy(&mut b, &mut a);
    let _ = a.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

/// Connections being forwarded now: the forwarder lets them finish before it exits.
static ACTIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How long the forwarder waits, after the program exits, for its connections to finish
/// delivering what the program wrote before it exited.
const LINGER: std::time::Duration = std::time::Duration::from_secs(3);

/// Accepts on `listener` forever, handing each connection to `handle` on a thread.
fn serve(listener: TcpListener, handle: impl Fn(TcpStream) + Send + Sync + Clone + 'static) {
    use std::sync::atomic::Ordering;
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let handle = handle.clone();
            ACTIVE.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                handle(conn);
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
}

/// Waits (at most [`LINGER`]) until no connection is being forwarded.
fn linger() {
    let started = std::time::Instant::now();
    while ACTIVE.load(std::sync::atomic::Ordering::SeqCst) > 0 && started.elapsed() < LINGER {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A connection to `host:port` through the proxy: the `CONNECT`, then the bytes.
fn tunnel(conn: TcpStream, socket: &PathBuf, host: &str, port: u16) {
    let Ok(mut proxy) = UnixStream::connect(socket) else {
        return;
    };
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let ask = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    if proxy.write_all(ask.as_bytes()).is_err() {
        return;
    }
    // The answer's head, byte by byte up to the blank line (nothing after it is read here).
    let mut reader = BufReader::new(match proxy.try_clone() {
        Ok(p) => p,
        Err(_) => return,
    });
    let mut status = String::new();
    if reader.read_line(&mut status).is_err() || !status.contains(" 200 ") {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    // What the reader buffered past the head belongs to the tunnel.
    let buffered = reader.buffer().to_vec();
    let mut conn = conn;
    if !buffered.is_empty() && conn.write_all(&buffered).is_err() {
        return;
    }
    splice(conn, proxy);
}

/// Runs the forwarder: listens, starts the program, exits with its status.
pub fn main(args: &[String]) -> i32 {
    let args = match parse(args) {
        Ok(a) => a,
        Err(why) => {
            eprintln!("ralph {SUBCOMMAND}: {why}");
            return 2;
        }
    };
    match TcpListener::bind(("127.0.0.1", args.port)) {
        Ok(listener) => {
            let socket = args.socket.clone();
            serve(listener, move |conn| {
                if let Ok(proxy) = UnixStream::connect(&socket) {
                    splice(conn, proxy);
                }
            });
        }
        Err(e) => eprintln!(
            "ralph {SUBCOMMAND}: cannot listen on 127.0.0.1:{}: {e}",
            args.port
        ),
    }
    for (host, port) in &args.mirrors {
        let Ok(listener) = TcpListener::bind((host.as_str(), *port)) else {
            continue;
        };
        let (socket, host, port) = (args.socket.clone(), host.clone(), *port);
        serve(listener, move |conn| tunnel(conn, &socket, &host, port));
    }
    let Some((program, rest)) = args.program.split_first() else {
        return 2;
    };
    let status = std::process::Command::new(program).args(rest).status();
    // What the program wrote just before it exited is still on its way out.
    linger();
    match status {
        Ok(status) => status.code().unwrap_or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            128 + status.signal().unwrap_or(0)
        }),
        Err(e) => {
            eprintln!("ralph {SUBCOMMAND}: cannot start {program}: {e}");
            if e.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_round_trip() {
        let program = vec!["claude".to_owned(), "-p".to_owned()];
        let mirrors = vec![("127.0.0.1".to_owned(), 4010), ("::1".to_owned(), 8080)];
        let args = args_for("/tmp/s.sock", 3128, &mirrors, &program);
        assert_eq!(args[0], SUBCOMMAND);
        let parsed = parse(&args[1..]).unwrap();
        assert_eq!(
            parsed,
            Args {
                socket: "/tmp/s.sock".into(),
                port: 3128,
                mirrors,
                program,
            }
        );
        assert!(parse(&["--port".into(), "x".into()]).is_err());
        assert!(parse(&["--socket".into(), "/s".into(), "--port".into(), "1".into()]).is_err());
    }

    #[test]
    fn a_mirror_tunnels_through_the_proxy() {
        // A stand-in proxy on a Unix socket that accepts any CONNECT and answers "hi".
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("p.sock");
        let proxy = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        std::thread::spawn(move || {
            for conn in proxy.incoming().flatten() {
                let mut conn = conn;
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok() && !line.ends_with("\r\n\r\n") {
                    if line == "\r\n" {
                        break;
                    }
                    line.clear();
                }
                conn.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\nhi")
                    .unwrap();
            }
        });
        let inside = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = inside.local_addr().unwrap().port();
        let s = socket.clone();
        serve(inside, move |conn| tunnel(conn, &s, "127.0.0.1", port));
        let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        client
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 2];
        use std::io::Read;
        (&client).read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hi");
    }
}
