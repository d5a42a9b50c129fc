//! What one backfill run does: dry run or apply, which sessions, how old, in what batches.

use nomos_core::SessionId;
use nomos_core::Span;
use nomos_core::sweep::{AwaitingPolicy, SweepThresholds};

/// Whether the run changes anything (BACKFILL-1: dry run by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Report what would change; write nothing.
    DryRun,
    /// Commit the repairs, a batch per transaction.
    Apply,
}

/// Which sessions the run looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every session, streamed by id.
    All,
    /// Only these sessions (`--session`, repeatable).
    Sessions(Vec<SessionId>),
}

/// The validated settings of one run. No `Default`: build it with [`BackfillConfig::standard`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackfillConfig {
    /// Dry run or apply.
    pub mode: Mode,
    /// Whether sessions waiting for the operator are closed or only reported.
    pub awaiting: AwaitingPolicy,
    /// The sweep thresholds; `backfill_idle_after` is the `--older-than` age: a session
    /// idle for less is not touched at all.
    pub thresholds: SweepThresholds,
    /// Which sessions.
    pub scope: Scope,
    /// At most this many sessions are changed (`--limit`).
    pub limit: Option<u64>,
    /// Sessions read, decided and committed per batch (one transaction each).
    pub batch_size: u32,
    /// How many session ids each class of the report shows.
    pub sample_size: usize,
}

impl BackfillConfig {
    /// SPEC defaults: idle for a day, awaiting sessions reported, batches of 500, every
    /// session, no limit, 5 samples per class.
    pub fn standard(mode: Mode) -> BackfillConfig {
        BackfillConfig {
            mode,
            awaiting: AwaitingPolicy::Report,
            thresholds: SweepThresholds::spec_defaults(),
            scope: Scope::All,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            sample_size: 5,
        }
    }
}

/// Sessions per batch unless `--batch-size` says otherwise.
pub const DEFAULT_BATCH_SIZE: u32 = 500;

/// An age that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgeError {
    /// Nothing was given.
    #[error("empty age; expected a number and a unit, such as 7d or 12h")]
    Empty,
    /// The number part is missing or not a whole number.
    #[error("bad age `{0}`: expected a whole number and a unit (s, m, h, d, w), such as 7d")]
    Number(String),
    /// The unit is not one of s, m, h, d, w.
    #[error("bad age `{text}`: unknown unit `{unit}` (expected s, m, h, d or w)")]
    Unit {
        /// The whole text.
        text: String,
        /// The unit part.
        unit: String,
    },
    /// Zero or too large.
    #[error("bad age `{0}`: must be more than zero and at most 100 years")]
    Range(String),
}

/// Parses an age such as `7d`, `12h`, `30m`, `90s` or `2w`.
pub fn parse_age(text: &str) -> Result<Span, AgeError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AgeError::Empty);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: i64 = number
        .parse()
        .map_err(|_| AgeError::Number(text.to_owned()))?;
    let secs_per_unit: i64 = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "" => return Err(AgeError::Number(text.to_owned())),
        other => {
            return Err(AgeError::Unit {
                text: text.to_owned(),
                unit: other.to_owned(),
            });
        }
    };
    const MAX_SECS: i64 = 100 * 366 * 86_400;
    match number.checked_mul(secs_per_unit) {
        Some(secs) if secs > 0 && secs <= MAX_SECS => Ok(Span::from_secs(secs)),
        _ => Err(AgeError::Range(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, secs: i64) {
        assert_eq!(parse_age(text), Ok(Span::from_secs(secs)), "{text}");
    }

    #[test]
    fn ages_read_in_every_unit() {
        check("7d", 7 * 86_400);
        check("12h", 12 * 3600);
        check("30m", 1800);
        check("90s", 90);
        check("2w", 14 * 86_400);
        check(" 1d ", 86_400);
    }

    #[test]
    fn bad_ages_say_what_was_wrong() {
        assert_eq!(parse_age(""), Err(AgeError::Empty));
        assert_eq!(parse_age("d"), Err(AgeError::Number("d".into())));
        assert_eq!(parse_age("7"), Err(AgeError::Number("7".into())));
        assert_eq!(
            parse_age("7y"),
            Err(AgeError::Unit {
                text: "7y".into(),
                unit: "y".into()
            })
        );
        assert_eq!(parse_age("0d"), Err(AgeError::Range("0d".into())));
        assert_eq!(
            parse_age("99999999999w"),
            Err(AgeError::Range("99999999999w".into()))
        );
        assert!(
            parse_age("7x")
                .unwrap_err()
                .to_string()
                .contains("unknown unit `x`")
        );
    }
}
