//! What git sends when ralph hands it the token (docs/verification-and-git.md, Pushing and
//! credentials): exactly one `Authorization` header, ralph's, even where a workflow's checkout
//! persisted its own in `.git/config` (git sends every configured `extraheader`, and GitHub refuses
//! two). A local HTTPS server (a self-signed certificate from `tests/fixtures/tls/`) records the
//! headers of each request and refuses it; git's push, the ledger push and the preflight's
//! `ls-remote` are tried against it.

use crate::common::{commit_all, git};
use ralph::secret::{GitToken, Secret};
use ralph::workspace::{
    push, push_events, GitWorkspace, LedgerTarget, PreflightOptions, Workspace, Worktree,
};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

const TOKEN: &str = "ghs_gitAuthTestToken0123456789abcdef";
/// What actions/checkout persists: `x-access-token:persisted`.
const PERSISTED: &str = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46cGVyc2lzdGVk";

/// An HTTPS server on 127.0.0.1 that keeps every request's header lines and answers 403.
struct HeaderServer {
    port: u16,
    requests: Arc<Mutex<Vec<Vec<String>>>>,
}

impl HeaderServer {
    fn start() -> HeaderServer {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls");
        let cert = std::fs::read(format!("{dir}/cert.der")).unwrap();
        let key = std::fs::read(format!("{dir}/key.der")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.into()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
            )
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let conn = rustls::ServerConnection::new(config.clone()).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, stream);
                let mut lines = Vec::new();
                {
                    let mut reader = BufReader::new(&mut tls);
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                        if line.trim_end().is_empty() {
                            break;
                        }
                        lines.push(line.trim_end().to_owned());
                        line.clear();
                    }
                }
                seen.lock().unwrap().push(lines);
                let _ = tls.write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        });
        HeaderServer { port, requests }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/acme/widgets.git", self.port)
    }

    /// The `Authorization` values of every request so far.
    fn authorizations(&self) -> Vec<Vec<String>> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|headers| {
                headers
                    .iter()
                    .filter_map(|h| {
                        let (name, value) = h.split_once(':')?;
                        name.eq_ignore_ascii_case("authorization")
                            .then(|| value.trim().to_owned())
                    })
                    .collect()
            })
            .collect()
    }
}

/// A repository whose `origin` is the server, with the credential a checkout persists.
fn repository(server: &HeaderServer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "--quiet", "-b", "main"]);
    std::fs::write(root.join("README.md"), "hi\n").unwrap();
    commit_all(root, "init");
    git(root, &["remote", "add", "origin", &server.url()]);
    git(root, &["config", "http.sslVerify", "false"]);
    let key = format!("http.https://127.0.0.1:{}/.extraheader", server.port);
    git(root, &["config", &key, PERSISTED]);
    dir
}

fn ours() -> String {
    let header = format!("x-access-token:{TOKEN}");
    format!("basic {}", base64(header.as_bytes()))
}

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes
        .chunks(3)
        .flat_map(|c| {
            let n = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            (0..4).map(move |i| {
                if i <= c.len() {
                    T[(n >> (18 - 6 * i)) as usize & 63] as char
                } else {
                    '='
                }
            })
        })
        .collect()
}

#[tokio::test]
async fn a_push_sends_one_authorization_header_ralphs() {
    let server = HeaderServer::start();
    let repo = repository(&server);
    // Without ralph's token, git sends the persisted one: the server sees what a checkout left.
    let out = std::process::Command::new("git")
        .args(["push", "--quiet", "origin", "main"])
        .current_dir(repo.path())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        server.authorizations()[0],
        ["basic eC1hY2Nlc3MtdG9rZW46cGVyc2lzdGVk"]
    );
    let wt = Worktree {
        path: repo.path().to_owned(),
        branch: "main".into(),
        base_commit: String::new(),
        git_dir: repo.path().join(".git"),
    };
    let token = GitToken::new("x-access-token", Secret::new(TOKEN.to_owned()));
    let err = push(repo.path(), &wt, "origin", Some(&token))
        .await
        .unwrap_err();
    assert!(!err.to_string().contains(TOKEN));
    let sent = server.authorizations();
    assert!(sent.len() >= 2, "{sent:?}");
    for request in &sent[1..] {
        assert_eq!(
            request,
            &[ours()],
            "exactly one Authorization header, ralph's"
        );
    }
}

#[tokio::test]
async fn the_ledger_push_and_the_preflight_send_one_header_too() {
    let server = HeaderServer::start();
    let repo = repository(&server);
    let token = GitToken::new("x-access-token", Secret::new(TOKEN.to_owned()));
    std::fs::create_dir_all(repo.path().join(".ralph/events")).unwrap();
    std::fs::write(repo.path().join(".ralph/events/e.json"), "{}").unwrap();
    let checkouts = tempfile::tempdir().unwrap();
    let _ = push_events(
        repo.path(),
        &LedgerTarget {
            remote: "origin",
            branch: "main",
            author_name: "ralph",
            author_email: "ralph@example.com",
            message: "ledger",
            token: Some(&token),
            deadline: std::time::Duration::from_secs(2),
            checkouts: &checkouts.path().join("repo"),
        },
    )
    .await;
    let ws =
        GitWorkspace::new(repo.path(), checkouts.path(), "origin").with_token(Some(token.clone()));
    let _ = ws
        .preflight(&PreflightOptions {
            issue: 1,
            title: "t",
            base: Some("main"),
            default_branch: None,
            resume: false,
        })
        .await;
    let sent = server.authorizations();
    assert!(sent.len() >= 2, "both asked the remote: {sent:?}");
    for request in &sent {
        assert_eq!(request, &[ours()]);
    }
}

#[tokio::test]
async fn a_gitlab_push_authenticates_as_oauth2_with_the_token_and_never_in_the_url() {
    let server = HeaderServer::start();
    let repo = repository(&server);
    let wt = Worktree {
        path: repo.path().to_owned(),
        branch: "main".into(),
        base_commit: String::new(),
        git_dir: repo.path().join(".git"),
    };
    let token = GitToken::new(
        ralph::tracker::Forge::Gitlab.git_user(),
        Secret::new("glpat-gitAuthTestToken0123456789"),
    );
    let err = push(repo.path(), &wt, "origin", Some(&token))
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("glpat-"), "{err}");
    let want = format!(
        "basic {}",
        base64(b"oauth2:glpat-gitAuthTestToken0123456789")
    );
    let sent = server.authorizations();
    assert!(!sent.is_empty());
    for request in &sent {
        assert_eq!(request, std::slice::from_ref(&want));
    }
    let config = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    assert!(
        !config.contains("glpat-"),
        "the token was never written down"
    );
}
