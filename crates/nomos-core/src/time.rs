//! Time as a value: the caller passes `now` in, the core never reads a clock.

use std::fmt;
use std::ops::{Add, Sub};

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

/// An instant in UTC with millisecond precision, always supplied by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(DateTime<Utc>);

/// A span of time, in milliseconds. Negative spans are clamped to zero where they
/// would not make sense (durations of things that happened).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Span(i64);

impl Timestamp {
    /// The Unix epoch, useful as a base in tests.
    pub const EPOCH: Timestamp = Timestamp(DateTime::UNIX_EPOCH);

    /// Builds a timestamp from milliseconds since the Unix epoch.
    pub fn from_millis(millis: i64) -> Timestamp {
        match Utc.timestamp_millis_opt(millis) {
            chrono::LocalResult::Single(at) => Timestamp(at),
            _ => Timestamp::EPOCH,
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn as_millis(&self) -> i64 {
        self.0.timestamp_millis()
    }

    /// The chrono value, for adapters that store it.
    pub fn as_datetime(&self) -> DateTime<Utc> {
        self.0
    }

    /// The span from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(&self, earlier: Timestamp) -> Span {
        Span((self.as_millis() - earlier.as_millis()).max(0))
    }

    /// RFC 3339 text with milliseconds, the format of every timestamp Nomos shows.
    pub fn to_rfc3339(&self) -> String {
        self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(at: DateTime<Utc>) -> Self {
        // Truncate to milliseconds so a value survives a round trip through any store.
        Timestamp::from_millis(at.timestamp_millis())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Span {
    /// Zero length.
    pub const ZERO: Span = Span(0);

    /// A span of `millis` milliseconds.
    pub const fn from_millis(millis: i64) -> Span {
        Span(millis)
    }

    /// A span of `secs` seconds.
    pub const fn from_secs(secs: i64) -> Span {
        Span(secs * 1000)
    }

    /// A span of `mins` minutes.
    pub const fn from_mins(mins: i64) -> Span {
        Span(mins * 60_000)
    }

    /// Length in milliseconds.
    pub const fn as_millis(&self) -> i64 {
        self.0
    }

    /// Converts to a std duration (negative spans become zero).
    pub fn to_std(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.0.max(0) as u64)
    }

    /// Converts from a std duration, saturating.
    pub fn from_std(duration: std::time::Duration) -> Span {
        Span(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX))
    }
}

impl Add<Span> for Timestamp {
    type Output = Timestamp;
    fn add(self, span: Span) -> Timestamp {
        Timestamp::from_millis(self.as_millis().saturating_add(span.0))
    }
}

impl Sub<Span> for Timestamp {
    type Output = Timestamp;
    fn sub(self, span: Span) -> Timestamp {
        Timestamp::from_millis(self.as_millis().saturating_sub(span.0))
    }
}
