//! Egress: where a confined process may connect. In the sandbox a process has its own network
//! namespace with only loopback, so its one way out is an HTTP(S) proxy that ralph runs outside
//! the sandbox ([`proxy`]) and forwards into it through a Unix socket bound there; a small
//! forwarder inside, ralph's own binary ([`forward`]), listens on the sandbox's loopback. The
//! proxy allows `CONNECT` (and plain HTTP) only to the hosts of the process's policy, by host
//! and port, resolving names itself — there is no DNS inside — and counts every refusal by kind
//! and host, for the terminal, the run report, the pull request and `ralph doctor`.
//!
//! Policies, per kind of process (`[sandbox.network]`): an agent reaches its own model endpoint
//! and `agents_allow`; a setup the package registries of the package managers it runs and of
//! the project's ecosystems, and `setup_allow`; a check nothing but `checks_allow`. A kind set
//! to `open` gets the host's network, as before, and every report says so.

pub mod forward;
pub mod proxy;

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where one kind of process may connect: everywhere (`open`), or the hosts of its allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct KindNetwork {
    pub open: bool,
    /// More hosts than the kind's own (`host`, `host:port`, `*.domain`).
    pub allow: Vec<String>,
}

/// `[sandbox.network]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct NetworkConfig {
    pub agents: KindNetwork,
    pub setup: KindNetwork,
    pub checks: KindNetwork,
}

/// One entry of an allowlist: `host`, `host:port`, `*.domain`, `*.domain:port`, an IP address,
/// `[v6]:port`. Without a port it allows 443 and 80.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The host, lower-cased; a leading `*.` allows every subdomain (not the domain itself).
    pub host: String,
    pub port: Option<u16>,
}

impl Rule {
    /// Parses an allowlist entry, or says what is wrong with it.
    pub fn parse(entry: &str) -> Result<Rule, String> {
        let e = entry.trim();
        let e = e
            .strip_prefix("https://")
            .or_else(|| e.strip_prefix("http://"))
            .unwrap_or(e);
        let e = e.split('/').next().unwrap_or(e);
        let (host, port) = if let Some(rest) = e.strip_prefix('[') {
            let (h, after) = rest
                .split_once(']')
                .ok_or_else(|| format!("{entry:?}: an IPv6 address needs its closing `]`"))?;
            (h, after.strip_prefix(':'))
        } else {
            match e.rsplit_once(':') {
                Some((h, p)) if !h.contains(':') => (h, Some(p)),
                _ => (e, None),
            }
        };
        let port = match port {
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| format!("{entry:?}: {p:?} is not a port"))?,
            ),
            None => None,
        };
        let host = host.to_ascii_lowercase();
        let bare = host.strip_prefix("*.").unwrap_or(&host);
        let valid = !bare.is_empty()
            && bare
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
        if !valid {
            return Err(format!(
                "{entry:?} is not a host, `host:port` or `*.domain`"
            ));
        }
        Ok(Rule { host, port })
    }

    /// Whether this rule allows `host` (lower-cased) on `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => port == 443 || port == 80,
        };
        let host_ok = match self.host.strip_prefix("*.") {
            Some(domain) => host.len() > domain.len() && host.ends_with(&format!(".{domain}")),
            None => self.host == host,
        };
        port_ok && host_ok
    }

    /// The rule as written: `host` or `host:port`.
    pub fn text(&self) -> String {
        match self.port {
            Some(p) if self.host.contains(':') => format!("[{}]:{p}", self.host),
            Some(p) => format!("{}:{p}", self.host),
            None => self.host.clone(),
        }
    }
}

/// The rules `entries` make (entries that do not parse are left out with a warning: the
/// configuration's own are checked when it is read).
pub fn rules(entries: &[String]) -> Vec<Rule> {
    entries
        .iter()
        .filter_map(|e| match Rule::parse(e) {
            Ok(r) => Some(r),
            Err(why) => {
                tracing::warn!("network allowlist: {why}");
                None
            }
        })
        .collect()
}

/// The rule of a URL's host and port (`http://127.0.0.1:8080/v1` → `127.0.0.1:8080`): a
/// backend's endpoint.
pub fn endpoint(url: &str) -> Option<Rule> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit('@').next()?;
    let mut rule = Rule::parse(authority).ok()?;
    if rule.port.is_none() {
        rule.port = Some(if scheme.eq_ignore_ascii_case("http") {
            80
        } else {
            443
        });
    }
    Some(rule)
}

/// What a kind of process may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// The host's network, unfiltered.
    Open,
    /// Only these, through the proxy.
    Allow(Vec<Rule>),
}

impl Reach {
    pub fn allows(&self, host: &str, port: u16) -> bool {
        match self {
            Reach::Open => true,
            Reach::Allow(rules) => {
                let host = host.trim_end_matches('.').to_ascii_lowercase();
                rules.iter().any(|r| r.allows(&host, port))
            }
        }
    }
}

/// A connection the proxy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// `agent`, `check`, `setup`.
    pub kind: String,
    /// Who: the role and bot of an agent (`implement smart_bot_1`), a check's name, the setup.
    pub by: String,
    pub host: String,
    pub port: u16,
    pub count: u32,
}

/// What a refusal is counted by: (kind, by, host, port).
type RefusalKey = (String, String, String, u16);

/// Every refusal of this ralph process, counted by [`RefusalKey`].
#[derive(Debug, Clone, Default)]
pub struct Refusals(Arc<Mutex<BTreeMap<RefusalKey, u32>>>);

impl Refusals {
    pub fn record(&self, kind: &str, by: &str, host: &str, port: u16) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry((kind.to_owned(), by.to_owned(), host.to_owned(), port))
            .or_default() += 1;
    }

    /// Everything refused so far, in a stable order.
    pub fn all(&self) -> Vec<Refusal> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|((kind, by, host, port), count)| Refusal {
                kind: kind.clone(),
                by: by.clone(),
                host: host.clone(),
                port: *port,
                count: *count,
            })
            .collect()
    }
}

/// Why `by` may have failed: the connections the sandbox refused it, as a sentence; `None`
/// when it was refused nothing.
pub fn refused_to(by: &str) -> Option<String> {
    let mine: Vec<Refusal> = refusals()
        .all()
        .into_iter()
        .filter(|r| r.by == by)
        .collect();
    let first = mine.first()?;
    let key = allow_key(&first.kind);
    let hosts: Vec<String> = mine
        .iter()
        .map(|r| format!("{}:{}", r.host, r.port))
        .collect();
    Some(format!(
        "the sandbox refused its connection(s) to {}: not in the {} network policy (`[sandbox.network] {key}` adds a host)",
        hosts.join(", "),
        first.kind
    ))
}

/// The `[sandbox.network]` key that adds a host to the policy of the `kind` of process a
/// refusal names (`agent`, `check`, `setup`).
pub fn allow_key(kind: &str) -> &'static str {
    match kind {
        "agent" => "agents_allow",
        "check" => "checks_allow",
        _ => "setup_allow",
    }
}

/// The refusals of this process (one registry, like the sandbox).
pub fn refusals() -> &'static Refusals {
    static ALL: std::sync::OnceLock<Refusals> = std::sync::OnceLock::new();
    ALL.get_or_init(Refusals::default)
}

/// One line for people: `3 connections to evil.example:443 from implement smart_bot_1`.
pub fn refusal_line(r: &Refusal) -> String {
    format!(
        "{} connection{} to {}:{} from {} ({})",
        r.count,
        if r.count == 1 { "" } else { "s" },
        r.host,
        r.port,
        r.by,
        r.kind
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> Rule {
        Rule::parse(s).unwrap()
    }

    #[test]
    fn rules_match_by_host_and_port() {
        assert!(rule("api.anthropic.com").allows("api.anthropic.com", 443));
        assert!(rule("api.anthropic.com").allows("api.anthropic.com", 80));
        assert!(!rule("api.anthropic.com").allows("api.anthropic.com", 22));
        assert!(!rule("api.anthropic.com").allows("evil.example", 443));
        assert!(rule("127.0.0.1:8080").allows("127.0.0.1", 8080));
        assert!(!rule("127.0.0.1:8080").allows("127.0.0.1", 8081));
        assert!(rule("*.pythonhosted.org").allows("files.pythonhosted.org", 443));
        assert!(!rule("*.pythonhosted.org").allows("pythonhosted.org", 443));
        assert!(!rule("*.pythonhosted.org").allows("evilpythonhosted.org", 443));
        assert!(rule("[::1]:8080").allows("::1", 8080));
        assert!(rule("https://pypi.org/simple").allows("pypi.org", 443));
    }

    #[test]
    fn bad_entries_are_named() {
        for bad in ["", "host:0", "host:port", "a b", "[::1"] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_endpoint_is_its_host_and_port() {
        assert_eq!(
            endpoint("http://127.0.0.1:4010/v1").unwrap().text(),
            "127.0.0.1:4010"
        );
        assert_eq!(
            endpoint("https://api.openai.com/v1").unwrap().text(),
            "api.openai.com:443"
        );
        assert_eq!(
            endpoint("http://user:pw@proxy.example/x").unwrap().text(),
            "proxy.example:80"
        );
        assert!(endpoint("not a url").is_none());
    }

    #[test]
    fn open_allows_everything_and_an_empty_list_nothing() {
        assert!(Reach::Open.allows("anything", 1));
        assert!(!Reach::Allow(vec![]).allows("pypi.org", 443));
        assert!(Reach::Allow(vec![rule("PyPI.org")]).allows("pypi.org.", 443));
    }

    #[test]
    fn refusals_are_counted_by_who_and_where() {
        let r = Refusals::default();
        r.record("agent", "implement smart_bot_1", "evil.example", 443);
        r.record("agent", "implement smart_bot_1", "evil.example", 443);
        r.record("check", "test", "evil.example", 80);
        let all = r.all();
        assert_eq!(all.len(), 2);
        assert_eq!(
            refusal_line(&all[0]),
            "2 connections to evil.example:443 from implement smart_bot_1 (agent)"
        );
    }
}
