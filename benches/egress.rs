//! What the network policy costs: the proxy's chain — a client on the sandbox's loopback, the
//! forwarder (ralph's own binary), the gate's Unix socket, ralph's proxy, the server — against a
//! direct connection, for a model call's latency and a large download's throughput; and a
//! confined process started with its own network namespace and a gate against one sharing the
//! host's network (what every agent call, check and setup pays once). Run: `cargo bench --bench
//! egress` (the confined process needs `bwrap`; without it that part says so).

use ralph::process::egress::{proxy, Reach, Rule};
use ralph::process::sandbox::{install, Mode, Sandbox};
use ralph::process::{Cmd, Confinement, Kind};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A local server: `GET /small` answers a model-call-sized body, `GET /large` 256 MiB.
fn server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let large = String::from_utf8_lossy(&head).contains("/large");
                let size: usize = if large { 256 << 20 } else { 2_000 };
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
                );
                let chunk = vec![b'x'; 1 << 16];
                let mut left = size;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if conn.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n;
                }
                // Closed gracefully: the client reads to the end before anything is reset.
                let _ = conn.shutdown(std::net::Shutdown::Write);
                let _ = conn.read(&mut buf);
            });
        }
    });
    port
}

/// One GET of `path` on the server at `port`, through the proxy at `proxy_port` when given;
/// the bytes of the body.
fn get(port: u16, path: &str, proxy_port: Option<u16>) -> usize {
    let (addr, target) = match proxy_port {
        Some(p) => (p, format!("http://127.0.0.1:{port}{path}")),
        None => (port, path.to_owned()),
    };
    let mut s = TcpStream::connect(("127.0.0.1", addr)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut total = 0;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    total
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let port = server();
    let reach = Reach::Allow(vec![Rule::parse(&format!("127.0.0.1:{port}")).unwrap()]);
    let gate = rt.block_on(proxy::open(reach, "agent", "bench")).unwrap();
    // The forwarder as the sandbox starts it (here on the host's loopback).
    let fwd_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut forwarder = std::process::Command::new(env!("CARGO_BIN_EXE_ralph"))
        .args(ralph::process::egress::forward::args_for(
            &gate.path().display().to_string(),
            fwd_port,
            &[],
            &["sleep".into(), "600".into()],
        ))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        f();
        started.elapsed()
    };
    let small = |proxy: Option<u16>| {
        median(
            (0..200)
                .map(|_| {
                    time(&|| {
                        let got = get(port, "/small", proxy);
                        assert!(got > 2_000, "{got} bytes through {proxy:?}");
                    })
                })
                .collect(),
        )
    };
    let direct = small(None);
    let through = small(Some(fwd_port));
    println!(
        "a model call's round trip (2 KB answer, 200 runs): direct {:.3} ms, through the proxy {:.3} ms (+{:.3} ms)",
        direct.as_secs_f64() * 1000.0,
        through.as_secs_f64() * 1000.0,
        (through.as_secs_f64() - direct.as_secs_f64()) * 1000.0
    );
    let large = |proxy: Option<u16>| {
        median(
            (0..3)
                .map(|_| time(&|| assert!(get(port, "/large", proxy) > 256 << 20)))
                .collect(),
        )
    };
    let mb = 256.0;
    let (d, t) = (large(None), large(Some(fwd_port)));
    println!(
        "a 256 MiB download: direct {:.0} MiB/s, through the proxy {:.0} MiB/s",
        mb / d.as_secs_f64(),
        mb / t.as_secs_f64()
    );
    let _ = forwarder.kill();
    let _ = forwarder.wait();

    // A confined process: its own network namespace and a gate, against the host's network.
    if std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .status()
        .map_or(true, |s| !s.success())
    {
        println!("a confined process: bubblewrap does not work here; not measured");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runs = |open: bool| {
        let sb = rt
            .block_on(Sandbox::detect(Mode::Required, false, &[], &[]))
            .with_forwarder(env!("CARGO_BIN_EXE_ralph"))
            .with_network(&ralph::process::egress::NetworkConfig {
                checks: ralph::process::egress::KindNetwork {
                    open,
                    allow: vec![],
                },
                ..Default::default()
            });
        install(sb);
        median(
            (0..30)
                .map(|_| {
                    let cmd = Cmd::new("true").confine(Confinement::new(Kind::Check, dir.path()));
                    let started = Instant::now();
                    assert!(rt.block_on(ralph::process::run(&cmd)).unwrap().success());
                    started.elapsed()
                })
                .collect(),
        )
    };
    let (open, allow) = (runs(true), runs(false));
    println!(
        "a confined process (`true`, 30 runs): host network {:.1} ms, allowlist (own namespace, gate, forwarder) {:.1} ms (+{:.1} ms)",
        open.as_secs_f64() * 1000.0,
        allow.as_secs_f64() * 1000.0,
        (allow.as_secs_f64() - open.as_secs_f64()) * 1000.0
    );
}
