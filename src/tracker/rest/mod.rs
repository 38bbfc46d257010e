//! The HTTP layer every REST tracker shares (GitHub, GitLab, Forgejo): one `send` that every
//! call goes through, over a reqwest client (the base URL, the forge's auth header, rustls,
//! timeouts). It retries what is worth retrying — 5xx, connection errors, a 429 or secondary
//! rate limit (`retry-after`) and a primary rate limit whose reset is near (GitHub's
//! `x-ratelimit-*`, GitLab's `ratelimit-*`) — with exponential backoff and jitter, maps the rest
//! to distinct [`TrackerError`]s naming the forge, and follows `Link: rel="next"` (or GitLab's
//! `x-next-page`) for lists. The forges' error bodies are read leniently ([`ErrorBody`]).

use super::{Forge, Result, TrackerError};
use crate::error::chain_text;
use crate::retry::{retrying, Attempt, Pause};
use chrono::{DateTime, Utc};
use http::{HeaderMap, Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

/// Pages followed at most for one list (100 items each): a loop guard, not a real limit.
const MAX_PAGES: usize = 500;

/// How hard to try before giving up.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Attempts per request, the first included.
    pub max_attempts: u32,
    /// The first backoff; it doubles per attempt.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest ralph waits for a rate limit (`retry-after` or `x-ratelimit-reset`) before
    /// failing with the reset time instead.
    pub max_rate_limit_wait: Duration,
    /// The wait after a secondary rate limit that names no `retry-after` (GitHub asks for a
    /// minute).
    pub secondary_wait: Duration,
    /// How the waits are spent.
    pub pause: Pause,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_rate_limit_wait: Duration::from_secs(300),
            secondary_wait: Duration::from_secs(60),
            pause: Pause::from_env(),
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (exponential, with jitter).
    pub fn backoff(&self, attempt: u32) -> Duration {
        crate::retry::backoff(self.base_delay, self.max_delay, attempt)
    }
}

/// A successful answer.
pub struct Reply {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    forge: Forge,
}

impl Reply {
    pub fn json<T: DeserializeOwned>(&self, action: &str) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| TrackerError::Decode {
            forge: self.forge,
            action: action.to_owned(),
            message: e.to_string(),
        })
    }
}

/// One request: what to send and how to describe it in errors.
pub struct Request<'a> {
    pub method: Method,
    /// Path and query below the API base, starting with `/`.
    pub path: String,
    pub body: Option<&'a serde_json::Value>,
    /// What the request does, for messages: "get issue #12".
    pub action: String,
    /// What a 404 means, for messages: "issue #12 in octo/repo".
    pub subject: String,
}

impl<'a> Request<'a> {
    pub fn new(method: Method, path: impl Into<String>, action: impl Into<String>) -> Self {
        let action = action.into();
        Request {
            method,
            path: path.into(),
            body: None,
            subject: action.clone(),
            action,
        }
    }

    pub fn body(mut self, body: &'a serde_json::Value) -> Self {
        self.body = Some(body);
        self
    }

    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = subject.into();
        self
    }
}

/// Where a tracker's API is and how it authenticates, for [`Api::connect`].
pub struct Endpoint<'a> {
    pub forge: Forge,
    /// The variable (or setting) the URL came from, for errors.
    pub var: &'a str,
    /// The API's base URL.
    pub url: &'a str,
    /// The header that carries the token, and its whole value (`Bearer …`, `token …`).
    pub auth: (http::HeaderName, String),
    /// The forge's other headers (what it answers in, its API version).
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

/// The API client: the transport plus ralph's retry and error rules.
pub struct Api {
    forge: Forge,
    client: reqwest::Client,
    /// The API's base URL, without a trailing `/` (`https://api.github.com`,
    /// `https://ghe.example/api/v3`).
    base: String,
    /// Its scheme and host: page links are followed only there (the token goes with them).
    origin: String,
    policy: RetryPolicy,
    token_source: String,
}

impl Api {
    pub fn new(
        forge: Forge,
        client: reqwest::Client,
        base: &reqwest::Url,
        policy: RetryPolicy,
        token_source: String,
    ) -> Api {
        Api {
            forge,
            client,
            base: base.as_str().trim_end_matches('/').to_owned(),
            origin: base.origin().ascii_serialization(),
            policy,
            token_source,
        }
    }

    /// Where the token came from (`FORGEJO_TOKEN`), for messages.
    pub fn token_source(&self) -> &str {
        &self.token_source
    }

    /// The client of `endpoint`: its URL checked (http or https, a host), the token's header
    /// marked sensitive, ralph's user agent and timeouts; `token_source` names the token in
    /// errors.
    pub fn connect(
        endpoint: Endpoint<'_>,
        policy: RetryPolicy,
        token_source: String,
    ) -> Result<Api> {
        let bad = |reason: String| TrackerError::BadApiUrl {
            forge: endpoint.forge,
            var: endpoint.var.to_owned(),
            url: endpoint.url.to_owned(),
            reason,
        };
        let base = reqwest::Url::parse(endpoint.url).map_err(|e| bad(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(bad("not an http(s) URL with a host".into()));
        }
        let (name, value) = endpoint.auth;
        let auth = secret_header(&value)
            .ok_or_else(|| bad("the token is not a valid header value".into()))?;
        let headers = HeaderMap::from_iter(std::iter::once((name, auth)).chain(endpoint.headers));
        let client = client(headers).map_err(bad)?;
        Ok(Api::new(
            endpoint.forge,
            client,
            &base,
            policy,
            token_source,
        ))
    }

    /// The URL of `path`: below the base, or — a page link, already a path from the host's
    /// root — on the base's host.
    fn url(&self, path: &str) -> String {
        match path.strip_prefix(&self.origin) {
            Some(rooted) if rooted.starts_with('/') => format!("{}{rooted}", self.origin),
            _ => format!("{}{path}", self.base),
        }
    }

    async fn attempt(
        &self,
        req: &Request<'_>,
    ) -> std::result::Result<(StatusCode, HeaderMap, Vec<u8>), String> {
        let mut builder = self.client.request(req.method.clone(), self.url(&req.path));
        if let Some(body) = req.body {
            builder = builder.json(body);
        }
        let response = builder.send().await.map_err(|e| chain_text(&e))?;
        let (status, headers) = (response.status(), response.headers().clone());
        let bytes = response.bytes().await.map_err(|e| chain_text(&e))?;
        Ok((status, headers, bytes.to_vec()))
    }

    /// Sends a request, retrying transient failures, and returns a 2xx answer or the error.
    pub async fn send(&self, req: Request<'_>) -> Result<Reply> {
        let req = &req;
        retrying(
            self.policy.max_attempts,
            &self.policy.pause,
            |attempt| async move {
                tracing::debug!(method = %req.method, path = %req.path, attempt, "{} request", self.forge);
                match self.attempt(req).await {
                    Ok((status, headers, body)) if status.is_success() => {
                        tracing::trace!(status = status.as_u16(), bytes = body.len(), "reply");
                        Attempt::Done(Reply {
                            headers,
                            body,
                            forge: self.forge,
                        })
                    }
                    Ok((status, headers, body)) => {
                        tracing::debug!(status = status.as_u16(), "error reply");
                        self.failure(req, status, &headers, &body, attempt)
                    }
                    Err(message) => Attempt::Again {
                        wait: self.policy.backoff(attempt),
                        note: self.retrying_note(req),
                        error: TrackerError::Connection {
                            forge: self.forge,
                            action: req.action.clone(),
                            attempts: attempt,
                            message,
                        },
                    },
                }
            },
        )
        .await
    }

    /// What the log says before a request is tried again.
    fn retrying_note(&self, req: &Request<'_>) -> String {
        format!("{}: retrying `{}`", self.forge, req.action)
    }

    /// Decides what a non-2xx answer means.
    fn failure(
        &self,
        req: &Request<'_>,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
        attempt: u32,
    ) -> Attempt<Reply, TrackerError> {
        let message = ErrorBody::read(body).summary(status);
        if status == StatusCode::FORBIDDEN || status == StatusCode::TOO_MANY_REQUESTS {
            return self.refused(req, status, headers, message, attempt);
        }
        if status.is_server_error() {
            return self.again(
                req,
                self.policy.backoff(attempt),
                TrackerError::Http {
                    forge: self.forge,
                    action: req.action.clone(),
                    status: status.as_u16(),
                    attempts: attempt,
                    message,
                },
            );
        }
        Attempt::Fail(match status {
            StatusCode::UNAUTHORIZED => TrackerError::BadCredentials {
                forge: self.forge,
                source_name: self.token_source.clone(),
            },
            StatusCode::NOT_FOUND | StatusCode::GONE => TrackerError::NotFound {
                what: req.subject.clone(),
                forge: Some(self.forge),
            },
            StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT => {
                TrackerError::Unprocessable {
                    forge: self.forge,
                    action: req.action.clone(),
                    status: status.as_u16(),
                    message,
                }
            }
            _ => TrackerError::Http {
                forge: self.forge,
                action: req.action.clone(),
                status: status.as_u16(),
                attempts: attempt,
                message,
            },
        })
    }

    /// Tries `req` again after `wait`, with `error` should it be the last attempt.
    fn again(
        &self,
        req: &Request<'_>,
        wait: Duration,
        error: TrackerError,
    ) -> Attempt<Reply, TrackerError> {
        Attempt::Again {
            wait,
            note: self.retrying_note(req),
            error,
        }
    }

    /// What a 403 or a 429 means: a primary rate limit used up (waited for when its reset is
    /// near), a secondary one (waited for as `retry-after` says, else a while), or — a 403
    /// that is no rate limit — a refusal. GitHub names its headers `x-ratelimit-*`, GitLab
    /// `ratelimit-*`; both count the reset in Unix seconds.
    fn refused(
        &self,
        req: &Request<'_>,
        status: StatusCode,
        headers: &HeaderMap,
        message: String,
        attempt: u32,
    ) -> Attempt<Reply, TrackerError> {
        let header = |name: &str| {
            [format!("x-{name}"), name.to_owned()]
                .iter()
                .find_map(|n| headers.get(n.as_str()).and_then(|v| v.to_str().ok()))
        };
        let now = Utc::now();
        // Primary rate limit: nothing left until the reset.
        if header("ratelimit-remaining").map(str::trim) == Some("0") {
            let reset = header("ratelimit-reset")
                .and_then(|v| v.parse::<i64>().ok())
                .and_then(|s| DateTime::from_timestamp(s, 0))
                .unwrap_or(now + chrono::Duration::seconds(60));
            let wait = (reset - now).to_std().unwrap_or(Duration::ZERO) + Duration::from_secs(1);
            let limited = TrackerError::RateLimited {
                forge: self.forge,
                action: req.action.clone(),
                reset,
            };
            return if wait <= self.policy.max_rate_limit_wait {
                tracing::warn!(
                    "{} rate limit used up: waiting until it resets at {reset} ({}s)",
                    self.forge,
                    wait.as_secs()
                );
                self.again(req, wait, limited)
            } else {
                Attempt::Fail(limited)
            };
        }
        // Secondary rate limit with retry-after (seconds).
        if let Some(secs) = header("retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
            let wait = Duration::from_secs(secs);
            let limited = TrackerError::RateLimited {
                forge: self.forge,
                action: req.action.clone(),
                reset: now + chrono::Duration::seconds(secs as i64),
            };
            return if wait <= self.policy.max_rate_limit_wait {
                self.again(req, wait, limited)
            } else {
                Attempt::Fail(limited)
            };
        }
        let secondary = message.to_ascii_lowercase().contains("rate limit");
        if status == StatusCode::TOO_MANY_REQUESTS || secondary {
            return self.again(
                req,
                self.policy.secondary_wait.max(self.policy.backoff(attempt)),
                TrackerError::RateLimited {
                    forge: self.forge,
                    action: req.action.clone(),
                    reset: now
                        + chrono::Duration::from_std(self.policy.secondary_wait)
                            .unwrap_or_default(),
                },
            );
        }
        Attempt::Fail(TrackerError::Forbidden {
            forge: self.forge,
            action: req.action.clone(),
            message,
        })
    }

    /// A GET returning JSON.
    pub async fn get<T: DeserializeOwned>(
        &self,
        path: impl Into<String>,
        action: impl Into<String>,
        subject: impl Into<String>,
    ) -> Result<T> {
        let req = Request::new(Method::GET, path, action).subject(subject);
        let action = req.action.clone();
        self.send(req).await?.json(&action)
    }

    /// A request with a JSON body.
    pub async fn send_json<B: Serialize>(
        &self,
        method: Method,
        path: impl Into<String>,
        body: &B,
        action: impl Into<String>,
        subject: impl Into<String>,
    ) -> Result<Reply> {
        let value = serde_json::to_value(body).map_err(|e| TrackerError::Decode {
            forge: self.forge,
            action: "encode a request".into(),
            message: e.to_string(),
        })?;
        self.send(
            Request::new(method, path, action)
                .body(&value)
                .subject(subject),
        )
        .await
    }

    /// Every page of a list, following `Link: rel="next"`, else GitLab's `x-next-page`.
    pub async fn get_all<T: DeserializeOwned>(
        &self,
        first: String,
        action: &str,
        subject: &str,
    ) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut next = Some(first);
        let mut seen = std::collections::HashSet::new();
        while let Some(path) = next.take() {
            if !seen.insert(path.clone()) || seen.len() > MAX_PAGES {
                return Err(TrackerError::Decode {
                    forge: self.forge,
                    action: action.to_owned(),
                    message: format!("pagination did not end (page link {path} repeats or more than {MAX_PAGES} pages)"),
                });
            }
            let reply = self
                .send(Request::new(Method::GET, path.clone(), action).subject(subject))
                .await?;
            let page: Vec<T> = reply.json(action)?;
            items.extend(page);
            next = next_page(&path, &reply.headers, &self.origin);
        }
        Ok(items)
    }
}

/// The next page after `path`: the `Link: rel="next"` URL's path and query on `origin` (the
/// token goes to no other host), else `path` with GitLab's `x-next-page` as its `page` (as the
/// caller gave it: below the base, or on the origin); `None` on the last page.
fn next_page(path: &str, headers: &HeaderMap, origin: &str) -> Option<String> {
    let linked = headers
        .get_all(http::header::LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(next_link)
        .and_then(|url| path_and_query(&url));
    if let Some(rooted) = linked {
        return Some(format!("{origin}{rooted}"));
    }
    let page = headers
        .get("x-next-page")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))?;
    Some(with_page(path, page))
}

/// `path` with its `page` query parameter set to `page`.
fn with_page(path: &str, page: &str) -> String {
    let (base, query) = path.split_once('?').unwrap_or((path, ""));
    let mut params: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("page="))
        .collect();
    let page = format!("page={page}");
    params.push(&page);
    format!("{base}?{}", params.join("&"))
}

/// Builds the reqwest client of a tracker: ralph's user agent, the forge's `headers` (the
/// token among them, marked sensitive), rustls, the timeouts.
pub fn client(headers: HeaderMap) -> std::result::Result<reqwest::Client, String> {
    // reqwest is built without a crypto provider of its own: ring, as for the model APIs.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("ralph/", env!("CARGO_PKG_VERSION")))
        .default_headers(headers)
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .build()
        .map_err(|e| chain_text(&e))
}

/// A header value holding a secret: marked sensitive, so it is never logged.
fn secret_header(value: &str) -> Option<http::HeaderValue> {
    let mut v = http::HeaderValue::try_from(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// Connect and read timeouts for each request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Percent-encodes one path segment (label names may hold spaces, `/`, `:` or emoji; GitLab's
/// project paths their `/`).
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A forge's error body, read leniently: GitHub's `{"message", "errors": [{…}]}`, GitLab's
/// `{"message": "…"}`, `{"message": {"field": ["…"]}}`, `{"message": ["…"]}` or
/// `{"error", "error_description"}`, Forgejo's `{"message", "errors": ["…"]}`; anything else is
/// no body.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    message: serde_json::Value,
    errors: Vec<serde_json::Value>,
    error: Option<String>,
    error_description: Option<String>,
}

impl ErrorBody {
    /// The body of an error answer (anything that is not JSON counts as empty).
    pub fn read(body: &[u8]) -> ErrorBody {
        serde_json::from_slice(body).unwrap_or_default()
    }

    /// One line: the message and the details of each error.
    pub fn summary(&self, status: StatusCode) -> String {
        let mut text = flatten(&self.message);
        if text.trim().is_empty() {
            text = [&self.error_description, &self.error]
                .into_iter()
                .find_map(|t| t.clone().filter(|t| !t.trim().is_empty()))
                .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
        }
        let details: Vec<String> = self
            .errors
            .iter()
            .map(detail)
            .filter(|d| !d.is_empty())
            .collect();
        if !details.is_empty() {
            text.push_str(" (");
            text.push_str(&details.join("; "));
            text.push(')');
        }
        text
    }
}

/// A message of any shape as text: a string as it is, a list joined, an object's fields each
/// followed by what is wrong with it (`name has already been taken`).
fn flatten(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(flatten).collect::<Vec<_>>().join("; "),
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| format!("{k} {}", flatten(v)))
            .collect::<Vec<_>>()
            .join("; "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One error detail: GitHub's object (its message, else resource, field and code), or a string.
fn detail(v: &serde_json::Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_owned();
    }
    if let Some(m) = v.get("message").and_then(|m| m.as_str()) {
        return m.to_owned();
    }
    ["resource", "field", "code"]
        .iter()
        .filter_map(|k| v.get(k).and_then(|x| x.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `rel="next"` URL of a `Link` header value.
pub fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let end = after.find('>')?;
        let url = &after[..end];
        let params_end = after[end..].find('<').map_or(after.len(), |i| end + i);
        let params = &after[end + 1..params_end];
        if params.split(';').any(|p| {
            matches!(
                p.trim().trim_end_matches(',').trim(),
                "rel=\"next\"" | "rel=next"
            )
        }) {
            return Some(url.to_owned());
        }
        rest = &after[params_end..];
    }
    None
}

/// The path and query of a URL, so the request goes through the same base and auth layer.
fn path_and_query(url: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    uri.path_and_query().map(|pq| pq.as_str().to_owned())
}

#[cfg(test)]
mod tests;
