//! What the HTTP backends share: their settings read alike (the base URL, the key from the
//! environment), one reqwest client (rustls with ring), retries with backoff on 429 (honouring
//! `retry-after`), 5xx/529 and connection errors, errors sorted into [`AgentError`]s, a
//! server-sent-events reader for streamed answers, and one call from request to reply.

use super::{AgentCall, AgentError, AgentReply, Usage};
use crate::retry::Attempt;
use crate::secret::{redact, Secret};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Attempts per call, the first included.
const MAX_ATTEMPTS: u32 = 4;
const BASE_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(30);
/// The longest `retry-after` ralph waits for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// The configured `base_url`, else `default`, without a trailing `/`.
pub fn base_url(configured: Option<String>, default: &str) -> String {
    configured
        .unwrap_or_else(|| default.into())
        .trim_end_matches('/')
        .to_owned()
}

/// The API key in the variable `var`, when it holds one (surrounding white space dropped).
pub fn api_key(var: &str) -> Option<Secret> {
    crate::env::get(var)
        .filter(|k| !k.trim().is_empty())
        .map(|k| Secret::new(k.trim()))
}

/// One call to an HTTP API `name`: the request `build` makes (once per attempt) sent with
/// retries, its answer read as [`collect`] reads it, and the live view told whom it waits for.
pub async fn ask(
    name: &str,
    call: &AgentCall,
    build: impl Fn() -> reqwest::RequestBuilder,
    apply: impl FnMut(&SseEvent, &mut Collected) -> Result<(), String>,
    plain: impl FnOnce(&serde_json::Value) -> Collected,
) -> Result<AgentReply, AgentError> {
    let started = Instant::now();
    if let Some(sink) = &call.activity {
        sink.report(&format!("waiting for {name}"));
    }
    let resp = send(name, call.timeout, build).await?;
    let c = collect(
        name,
        resp,
        call.timeout,
        apply,
        plain,
        call.activity.as_ref(),
    )
    .await?;
    Ok(AgentReply {
        text: c.text,
        usage: c.usage,
        duration: started.elapsed(),
        session_id: c.id,
        ..AgentReply::default()
    })
}

/// The shared client. Requests carry their own timeout (the call's).
pub fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // reqwest is built without a crypto provider of its own: use ring, as the GitHub client
        // does.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .user_agent(concat!("ralph/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(15))
            .build()
            .expect("the HTTP client builds with a crypto provider installed")
    })
}

/// The wait before attempt `attempt + 1` (equal jitter), or the server's `retry-after`.
fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(ra) = retry_after {
        return ra.min(MAX_RETRY_AFTER);
    }
    crate::retry::backoff(BASE_DELAY, MAX_DELAY, attempt)
}

/// Sends a request built by `build` (once per attempt), retrying transient failures, and
/// returns a 2xx response. `backend` names the API in errors; `timeout` bounds each attempt,
/// body included.
async fn send(
    backend: &str,
    timeout: Duration,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, AgentError> {
    // Tests inject the waits (`RALPH_TEST_NO_RETRY_DELAY=1`) instead of sleeping through them.
    let pause = crate::retry::Pause::from_env();
    let build = &build;
    crate::retry::retrying(MAX_ATTEMPTS, &pause, |attempt| async move {
        match build().timeout(timeout).send().await {
            Ok(resp) if resp.status().is_success() => Attempt::Done(resp),
            Ok(resp) => {
                let status = resp.status().as_u16();
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                let message = error_message(&resp.text().await.unwrap_or_default());
                if status == 401 || status == 403 {
                    return Attempt::Fail(AgentError::Auth {
                        backend: backend.to_owned(),
                        message: format!("HTTP {status}: {message}"),
                    });
                }
                let error = AgentError::Http {
                    backend: backend.to_owned(),
                    status,
                    attempts: attempt,
                    message,
                };
                if status == 429 || status >= 500 {
                    Attempt::Again {
                        wait: backoff(attempt, retry_after),
                        note: format!("{backend}: HTTP {status}; retrying"),
                        error,
                    }
                } else {
                    Attempt::Fail(error)
                }
            }
            Err(e) if e.is_timeout() => Attempt::Fail(AgentError::Timeout {
                backend: backend.to_owned(),
                after: timeout,
            }),
            Err(e) => {
                // The error's text may hold the request's URL: redacted, in the log too.
                let message = redact(&e.to_string()).into_owned();
                Attempt::Again {
                    wait: backoff(attempt, None),
                    note: format!("{backend}: {message}; retrying"),
                    error: AgentError::Connection {
                        backend: backend.to_owned(),
                        attempts: attempt,
                        message,
                    },
                }
            }
        }
    })
    .await
}

/// The message of an API error body (`{"error": {"message": …}}` in both APIs), else the
/// body's start.
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    let text = message.unwrap_or_else(|| body.chars().take(300).collect());
    redact(text.trim()).into_owned()
}

/// Reads server-sent events from a byte stream fed in chunks.
#[derive(Debug, Default)]
struct SseReader {
    buf: String,
    event: Option<String>,
    data: Vec<String>,
}

/// One event: its `event:` name (if any) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

impl SseReader {
    /// Feeds a chunk and returns the events it completed.
    pub fn push(&mut self, chunk: &str) -> Vec<SseEvent> {
        self.buf.push_str(chunk);
        let mut out = Vec::new();
        while let Some(nl) = self.buf.find('\n') {
            let line: String = self.buf.drain(..=nl).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || self.event.is_some() {
                    out.push(SseEvent {
                        event: self.event.take(),
                        data: std::mem::take(&mut self.data).join("\n"),
                    });
                }
            } else if let Some(v) = line.strip_prefix("data:") {
                self.data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
            } else if let Some(v) = line.strip_prefix("event:") {
                self.event = Some(v.trim().to_owned());
            }
            // Comments (`:`), `id:` and `retry:` lines carry nothing ralph uses.
        }
        out
    }

    /// The event left when the stream ends without a final blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let rest = std::mem::take(&mut self.buf);
        let mut events = self.push(&rest);
        events.extend(self.push("\n\n"));
        events.pop()
    }
}

/// Reads a whole response body as SSE events, chunk by chunk.
async fn read_events(
    backend: &str,
    mut resp: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<(), AgentError>,
) -> Result<(), AgentError> {
    let mut reader = SseReader::default();
    let mut pending = Vec::new();
    loop {
        let chunk = resp.chunk().await.map_err(|e| AgentError::Connection {
            backend: backend.to_owned(),
            attempts: 1,
            message: format!("the stream broke: {}", redact(&e.to_string())),
        })?;
        let Some(chunk) = chunk else { break };
        // A chunk may end inside a multi-byte character: keep the incomplete tail.
        pending.extend_from_slice(&chunk);
        let valid = match std::str::from_utf8(&pending) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
        pending.drain(..valid);
        for event in reader.push(&text) {
            on_event(event)?;
        }
    }
    if let Some(event) = reader.finish() {
        on_event(event)?;
    }
    Ok(())
}

/// An answer being put together from a stream (or read whole).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Collected {
    pub text: String,
    pub usage: Usage,
    /// The API's id for the message or completion.
    pub id: Option<String>,
}

/// Reads a 2xx response: as server-sent events folded by `apply` when it is a stream, else as
/// one JSON document read by `plain`. The whole read is bounded by `timeout`.
async fn collect(
    backend: &str,
    resp: reqwest::Response,
    timeout: Duration,
    mut apply: impl FnMut(&SseEvent, &mut Collected) -> Result<(), String>,
    plain: impl FnOnce(&serde_json::Value) -> Collected,
    activity: Option<&crate::progress::ActivitySink>,
) -> Result<Collected, AgentError> {
    let work = async {
        if is_event_stream(&resp) {
            let mut c = Collected::default();
            let mut reported = 0;
            read_events(backend, resp, |event| {
                apply(&event, &mut c).map_err(|message| AgentError::Reported {
                    backend: backend.to_owned(),
                    message,
                })?;
                // The live view: tokens received so far (estimated from the text until the
                // API reports them): the first, then at most once per 20 new.
                let tokens = (c.usage.output_tokens as usize).max(c.text.len() / 4);
                if let Some(sink) = activity
                    .filter(|_| tokens > reported && (reported == 0 || tokens >= reported + 20))
                {
                    reported = tokens;
                    sink.report(&format!("receiving the answer: ~{tokens} tokens"));
                }
                Ok(())
            })
            .await?;
            Ok(c)
        } else {
            let value: serde_json::Value = resp.json().await.map_err(|e| AgentError::Output {
                backend: backend.to_owned(),
                message: format!("the answer is not JSON: {e}"),
            })?;
            Ok(plain(&value))
        }
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| AgentError::Timeout {
            backend: backend.to_owned(),
            after: timeout,
        })?
}

/// Whether a response is a stream of events.
fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_across_chunk_boundaries() {
        let mut r = SseReader::default();
        assert!(r.push("event: message_start\ndata: {\"a\"").is_empty());
        let ev = r.push(
            ":1}\n\n: keep-alive comment\n\ndata: line one\r\ndata: line two\r\n\r\ndata: [DONE]",
        );
        assert_eq!(
            ev,
            [
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "line one\nline two".into()
                },
            ]
        );
        assert_eq!(
            r.finish(),
            Some(SseEvent {
                event: None,
                data: "[DONE]".into()
            })
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_a_bound_and_backoff_grows() {
        // The lib tests never set RALPH_TEST_NO_RETRY_DELAY.
        assert_eq!(
            backoff(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(backoff(1, Some(Duration::from_secs(3600))), MAX_RETRY_AFTER);
        let first = backoff(1, None);
        assert!(first >= BASE_DELAY / 2 && first <= BASE_DELAY);
        let third = backoff(3, None);
        assert!(third >= BASE_DELAY * 2 && third <= BASE_DELAY * 4);
        assert!(backoff(30, None) <= MAX_DELAY);
    }

    #[test]
    fn api_error_bodies_give_their_message() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("<html>502</html>"), "<html>502</html>");
    }
}
