//! The backoff every retry loop in ralph uses (GitHub requests, model APIs): exponential steps
//! with "equal jitter" — half of the step, plus a random part of the other half — so retries
//! spread out but never come at once.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

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
