//! The runtime's source of time. The core never reads a clock; the shell passes `now`.

use std::time::{SystemTime, UNIX_EPOCH};

use nomos_core::{Span, Timestamp};

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// Wall-clock time.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp::from_millis(millis)
    }
}

/// Time that follows tokio's clock from a fixed start, so tests and evals that pause
/// and advance tokio time (`start_paused = true`) move Nomos' time with it.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    base: Timestamp,
    started: tokio::time::Instant,
}

impl TokioClock {
    /// A clock that reads `base` now and advances with tokio's clock.
    pub fn starting_at(base: Timestamp) -> TokioClock {
        TokioClock {
            base,
            started: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        self.base + Span::from_std(self.started.elapsed())
    }
}

/// Time that moves only when told to: evals and tests advance it by minutes at once.
#[derive(Clone, Debug)]
pub struct ManualClock {
    now: std::sync::Arc<std::sync::Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock that reads `start` until advanced.
    pub fn starting_at(start: Timestamp) -> ManualClock {
        ManualClock {
            now: std::sync::Arc::new(std::sync::Mutex::new(start)),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, span: Span) {
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now = *now + span;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        // Each reading moves time by a millisecond so that events keep their order.
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now = *now + Span::from_millis(1);
        *now
    }
}
