//! Bounded retries: exponential back-off with jitter, honouring the provider's `Retry-After`.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use crate::error::ConfigError;

/// How often and how patiently a retryable failure is tried again.
///
/// Attempt `n` (counting from 1) that fails with a retryable error waits
/// `min(base_delay * 2^(n-1), max_delay)`, of which the second half is random jitter, before
/// attempt `n + 1`. When the provider sends `Retry-After`, that wait is used instead (plus up to
/// 10% jitter); a `Retry-After` longer than `max_delay` is not waited out: the rate-limit error
/// goes back to the caller at once, with the provider's delay in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts, the first included (1 means no retry).
    pub max_attempts: u32,
    /// The first back-off.
    pub base_delay: Duration,
    /// The longest back-off, and the longest `Retry-After` that is waited out.
    pub max_delay: Duration,
}

impl RetryPolicy {
    /// Three attempts, 500 ms then 1 s (each with jitter), `Retry-After` honoured up to 20 s.
    pub fn standard() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
        }
    }

    /// One attempt, no retry.
    pub fn no_retry() -> Self {
        RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        }
    }

    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        if self.max_attempts == 0 {
            return Err(ConfigError::invalid(
                "retry.max_attempts",
                "must be at least 1",
            ));
        }
        if self.base_delay > self.max_delay {
            return Err(ConfigError::invalid(
                "retry.base_delay",
                format!(
                    "{:?} is longer than retry.max_delay {:?}",
                    self.base_delay, self.max_delay
                ),
            ));
        }
        Ok(())
    }

    /// The wait after failed attempt `attempt` (1-based), or `None` when the provider asked for
    /// a longer wait than `max_delay`.
    pub(crate) fn delay_after(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        if let Some(wait) = retry_after {
            if wait > self.max_delay {
                return None;
            }
            return Some(wait + jitter(wait / 10));
        }
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let backoff = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let half = backoff / 2;
        Some(half + jitter(backoff - half))
    }
}

/// A random duration in `0..=limit`, from the std library's randomly seeded hasher.
fn jitter(limit: Duration) -> Duration {
    let limit_nanos = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
    if limit_nanos == 0 {
        return Duration::ZERO;
    }
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    Duration::from_nanos(hasher.finish() % (limit_nanos + 1))
}

/// Parses `Retry-After`: delay-seconds or an HTTP date (a past date means "now").
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        }
    }

    #[test]
    fn backoff_doubles_stays_within_its_jitter_band_and_is_capped() {
        for (attempt, full) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 800),
            (5, 1000),
            (30, 1000),
        ] {
            for _ in 0..20 {
                let delay = policy().delay_after(attempt, None).unwrap();
                let full = Duration::from_millis(full);
                assert!(
                    delay >= full / 2 && delay <= full,
                    "attempt {attempt}: {delay:?}"
                );
            }
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_max_delay() {
        let delay = policy()
            .delay_after(1, Some(Duration::from_millis(700)))
            .unwrap();
        assert!(delay >= Duration::from_millis(700) && delay <= Duration::from_millis(770));
        assert_eq!(policy().delay_after(1, Some(Duration::from_secs(2))), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:49 GMT", now),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:40:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("later", now), None);
    }

    #[test]
    fn a_policy_without_attempts_is_refused() {
        let err = RetryPolicy {
            max_attempts: 0,
            ..policy()
        }
        .check()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "retry.max_attempts is invalid: must be at least 1"
        );
    }
}
