//! The HTTP layer of the GitHub tracker: one `send` that every call goes through, over a
//! reqwest client (the base URL, the auth header, rustls, timeouts). It retries what is worth
//! retrying — 5xx, connection errors, secondary rate limits (`retry-after`) and a primary rate
//! limit whose reset is near — with exponential backoff and jitter, maps the rest to distinct
//! [`TrackerError`]s, and follows `Link: rel="next"` for lists.

use super::super::{Result, TrackerError};
use super::wire::ErrorBody;
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
}

impl Reply {
    pub fn json<T: DeserializeOwned>(&self, action: &str) -> Result<T> {
        serde_json::from_slice(&self.body).map_err(|e| TrackerError::Decode {
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

/// The API client: the transport plus ralph's retry and error rules.
pub struct Api {
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
        client: reqwest::Client,
        base: &reqwest::Url,
        policy: RetryPolicy,
        token_source: String,
    ) -> Api {
        Api {
            client,
            base: base.as_str().trim_end_matches('/').to_owned(),
            origin: base.origin().ascii_serialization(),
            policy,
            token_source,
        }
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
                tracing::debug!(method = %req.method, path = %req.path, attempt, "GitHub request");
                match self.attempt(req).await {
                    Ok((status, headers, body)) if status.is_success() => {
                        tracing::trace!(
                            status = status.as_u16(),
                            bytes = body.len(),
                            "GitHub reply"
                        );
                        Attempt::Done(Reply { headers, body })
                    }
                    Ok((status, headers, body)) => {
                        tracing::debug!(status = status.as_u16(), "GitHub error reply");
                        self.failure(req, status, &headers, &body, attempt)
                    }
                    Err(message) => Attempt::Again {
                        wait: self.policy.backoff(attempt),
                        note: self.retrying_note(req),
                        error: TrackerError::Connection {
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
        format!("GitHub: retrying `{}`", req.action)
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
        let error: ErrorBody = serde_json::from_slice(body).unwrap_or_default();
        let message = error.summary(status);
        if status == StatusCode::FORBIDDEN || status == StatusCode::TOO_MANY_REQUESTS {
            return self.refused(req, status, headers, message, attempt);
        }
        if status.is_server_error() {
            return self.again(
                req,
                self.policy.backoff(attempt),
                TrackerError::Http {
                    action: req.action.clone(),
                    status: status.as_u16(),
                    attempts: attempt,
                    message,
                },
            );
        }
        Attempt::Fail(match status {
            StatusCode::UNAUTHORIZED => TrackerError::BadCredentials {
                source_name: self.token_source.clone(),
            },
            StatusCode::NOT_FOUND | StatusCode::GONE => TrackerError::NotFound {
                what: req.subject.clone(),
                local: false,
            },
            StatusCode::UNPROCESSABLE_ENTITY => TrackerError::Unprocessable {
                action: req.action.clone(),
                message,
            },
            _ => TrackerError::Http {
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
    /// that is no rate limit — a refusal.
    fn refused(
        &self,
        req: &Request<'_>,
        status: StatusCode,
        headers: &HeaderMap,
        message: String,
        attempt: u32,
    ) -> Attempt<Reply, TrackerError> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let now = Utc::now();
        // Primary rate limit: nothing left until the reset.
        if header("x-ratelimit-remaining") == Some("0") {
            let reset = header("x-ratelimit-reset")
                .and_then(|v| v.parse::<i64>().ok())
                .and_then(|s| DateTime::from_timestamp(s, 0))
                .unwrap_or(now + chrono::Duration::seconds(60));
            let wait = (reset - now).to_std().unwrap_or(Duration::ZERO) + Duration::from_secs(1);
            let limited = TrackerError::RateLimited {
                action: req.action.clone(),
                reset,
            };
            return if wait <= self.policy.max_rate_limit_wait {
                tracing::warn!(
                    "GitHub rate limit used up: waiting until it resets at {reset} ({}s)",
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
                    action: req.action.clone(),
                    reset: now
                        + chrono::Duration::from_std(self.policy.secondary_wait)
                            .unwrap_or_default(),
                },
            );
        }
        Attempt::Fail(TrackerError::Forbidden {
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

    /// Every page of a list, following `Link: rel="next"`.
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
                    action: action.to_owned(),
                    message: format!("pagination did not end (page link {path} repeats or more than {MAX_PAGES} pages)"),
                });
            }
            let reply = self
                .send(Request::new(Method::GET, path, action).subject(subject))
                .await?;
            let page: Vec<T> = reply.json(action)?;
            items.extend(page);
            next = reply
                .headers
                .get_all(http::header::LINK)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(next_link)
                .and_then(|url| path_and_query(&url))
                .map(|rooted| format!("{}{rooted}", self.origin));
        }
        Ok(items)
    }
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
mod tests {
    use super::*;

    #[test]
    fn paths_go_below_the_base_and_page_links_stay_on_its_host() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let base = reqwest::Url::parse("https://ghe.example/api/v3/").unwrap();
        let api = Api::new(
            reqwest::Client::new(),
            &base,
            RetryPolicy::default(),
            "GITHUB_TOKEN".into(),
        );
        assert_eq!(
            api.url("/repos/o/r/issues/1"),
            "https://ghe.example/api/v3/repos/o/r/issues/1"
        );
        assert_eq!(
            api.url("https://ghe.example/api/v3/repositories/1/issues?page=2"),
            "https://ghe.example/api/v3/repositories/1/issues?page=2",
            "a page link, made from the host's root"
        );
        // A link to another host keeps only its path: the token goes nowhere else.
        let elsewhere = path_and_query("https://evil.example/steal?page=2").unwrap();
        assert_eq!(
            api.url(&format!("{}{elsewhere}", api.origin)),
            "https://ghe.example/steal?page=2"
        );
    }

    #[test]
    fn link_headers_yield_the_next_page() {
        let h = r#"<https://api.github.com/repositories/1/issues?labels=a,b&page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/issues?labels=a,b&page=2")
        );
        let last_page = r#"<https://x/i?page=1>; rel="first", <https://x/i?page=4>; rel="prev""#;
        assert_eq!(next_link(last_page), None);
        assert_eq!(next_link(""), None);
        assert_eq!(
            path_and_query("http://127.0.0.1:9/api/v3/repos/o/r/issues?page=2").as_deref(),
            Some("/api/v3/repos/o/r/issues?page=2")
        );
    }

    #[test]
    fn backoff_grows_jitters_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        for attempt in 1..=10 {
            let step = (100u64 << (attempt - 1)).min(1000);
            let d = p.backoff(attempt).as_millis() as u64;
            assert!(
                d >= step / 2 && d <= step,
                "attempt {attempt}: {d} not in [{}, {step}]",
                step / 2
            );
        }
    }
}
