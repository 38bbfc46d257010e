//! The one retry loop of ralph's HTTP clients (GitHub, the model APIs): [`retrying`] runs an
//! operation until it is done, fails, or runs out of attempts, each attempt saying what it came
//! to ([`Attempt`]); the backoff every retry uses — exponential steps with "equal jitter", half
//! of the step plus a random part of the other half, so retries spread out but never come at
//! once; and [`Pause`], how a retry loop waits, so tests inject the wait instead of sleeping
//! through it.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How a retry loop waits: [`Pause::Sleep`] really sleeps; [`Pause::Record`] returns at once
/// and keeps every wait asked for, so a test checks that a server's `retry-after` was honoured
/// without spending the time. `RALPH_TEST_NO_RETRY_DELAY=1` makes ralph record instead of sleep.
#[derive(Clone, Default)]
pub enum Pause {
    #[default]
    Sleep,
    Record(Arc<Mutex<Vec<Duration>>>),
}

impl Pause {
    /// A pause that records its waits.
    pub fn recording() -> Pause {
        Pause::Record(Arc::default())
    }

    /// Sleeping, unless `RALPH_TEST_NO_RETRY_DELAY=1` asks for recording.
    pub fn from_env() -> Pause {
        if crate::env::get(crate::env::RALPH_TEST_NO_RETRY_DELAY).as_deref() == Some("1") {
            Pause::recording()
        } else {
            Pause::Sleep
        }
    }

    pub async fn wait(&self, d: Duration) {
        match self {
            Pause::Sleep => tokio::time::sleep(d).await,
            Pause::Record(waits) => waits.lock().unwrap_or_else(|e| e.into_inner()).push(d),
        }
    }

    /// The waits recorded so far (none for a sleeping pause).
    pub fn waits(&self) -> Vec<Duration> {
        match self {
            Pause::Sleep => Vec::new(),
            Pause::Record(waits) => waits.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }
}

impl fmt::Debug for Pause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pause::Sleep => f.write_str("Sleep"),
            Pause::Record(_) => f.write_str("Record"),
        }
    }
}

/// What one attempt of a retried operation came to.
#[derive(Debug)]
pub enum Attempt<T, E> {
    Done(T),
    /// Worth another try after `wait`; `note` says what is retried (`GitHub: retrying `get
    /// issue #12``) and `error` is the answer when no attempt is left.
    Again {
        wait: Duration,
        note: String,
        error: E,
    },
    Fail(E),
}

/// Runs `once(attempt)` (attempts count from 1) until it is done or fails, at most
/// `max_attempts` times (at least once), waiting as each attempt asks between them and saying so.
pub async fn retrying<T, E, F, Fut>(max_attempts: u32, pause: &Pause, mut once: F) -> Result<T, E>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Attempt<T, E>>,
{
    let max = max_attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match once(attempt).await {
            Attempt::Done(t) => return Ok(t),
            Attempt::Fail(e) => return Err(e),
            Attempt::Again { error, .. } if attempt >= max => return Err(error),
            Attempt::Again { wait, note, .. } => {
                tracing::warn!(
                    "{note} in {:.1}s (attempt {} of {max})",
                    wait.as_secs_f64(),
                    attempt + 1
                );
                pause.wait(wait).await;
            }
        }
    }
}

/// The wait before attempt `attempt + 1` (attempts count from 1): `base × 2^(attempt−1)`,
/// capped at `max`, then jittered into [step/2, step].
pub fn backoff(base: Duration, max: Duration, attempt: u32) -> Duration {
    let step = base
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(max);
    step / 2 + step.mul_f64(jitter() / 2.0)
}

/// A number in [0, 1).
fn jitter() -> f64 {
    (random_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// 64 unpredictable bits without a dependency: the standard library's hasher, seeded from the
/// OS per process, over the current time (so two calls differ). Not for cryptography.
pub fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_operation_is_tried_until_done_failed_or_out_of_attempts() {
        let pause = Pause::recording();
        let again = |n: u32| Attempt::Again {
            wait: Duration::from_secs(u64::from(n)),
            note: "x: retrying".into(),
            error: format!("gave up at {n}"),
        };
        let done: Result<u32, String> = retrying(5, &pause, |n| async move {
            if n < 3 {
                again(n)
            } else {
                Attempt::Done(n)
            }
        })
        .await;
        assert_eq!(done, Ok(3));
        assert_eq!(
            pause.waits(),
            [Duration::from_secs(1), Duration::from_secs(2)]
        );
        let out: Result<u32, String> =
            retrying(2, &Pause::recording(), |n| async move { again(n) }).await;
        assert_eq!(out, Err("gave up at 2".into()), "the last attempt's error");
        let failed: Result<u32, String> = retrying(5, &Pause::recording(), |_| async {
            Attempt::Fail("no".into())
        })
        .await;
        assert_eq!(failed, Err("no".into()), "a failure is not retried");
        let once: Result<u32, String> =
            retrying(0, &Pause::recording(), |n| async move { again(n) }).await;
        assert_eq!(once, Err("gave up at 1".into()), "at least one attempt");
    }

    #[tokio::test]
    async fn a_recording_pause_keeps_the_waits_and_returns_at_once() {
        let p = Pause::recording();
        let started = std::time::Instant::now();
        p.wait(Duration::from_secs(3600)).await;
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(p.waits(), [Duration::from_secs(3600)]);
        assert!(Pause::Sleep.waits().is_empty());
    }

    #[test]
    fn backoff_grows_jitters_and_is_capped() {
        let (base, max) = (Duration::from_millis(100), Duration::from_millis(1000));
        for attempt in 1..=20 {
            let step = (100u64 << (attempt - 1).min(16)).min(1000);
            let d = backoff(base, max, attempt).as_millis() as u64;
            assert!(
                d >= step / 2 && d <= step,
                "attempt {attempt}: {d} not in [{}, {step}]",
                step / 2
            );
        }
    }
}
