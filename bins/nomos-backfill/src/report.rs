//! What a run found and changed: counts per class, a sample of sessions with the reason
//! for each, conflicts and errors; rendered as text or serialized as JSON (`--json`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use nomos_core::{SessionId, Timestamp};
use serde::Serialize;

use crate::config::Mode;
use crate::decide::{RepairClass, SessionDecision};

/// How many conflicts and errors the report lists one by one (the counts are complete).
pub const LISTED_PROBLEMS: usize = 100;

/// One session shown as an example of a class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// The session.
    pub session: SessionId,
    /// Why it is in the class.
    pub reason: String,
}

/// A session that was not repaired because of a problem at commit time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The session.
    pub session: SessionId,
    /// What happened.
    pub message: String,
}

/// The outcome of a run. Counts are of what would change in a dry run and of what was
/// committed with `--apply`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Dry run or apply.
    pub mode: Mode,
    /// The time the run decided with.
    pub now: Timestamp,
    /// The idle age below which sessions are not touched, in seconds.
    pub older_than_secs: i64,
    /// Sessions read and decided.
    pub scanned: u64,
    /// Sessions changed (or that would be, in a dry run).
    pub sessions_changed: u64,
    /// Batches processed (each one transaction with `--apply`).
    pub batches: u64,
    /// Findings per class; every class is present.
    pub counts: BTreeMap<RepairClass, u64>,
    /// The first sessions of each class with their reason.
    pub samples: BTreeMap<RepairClass, Vec<Sample>>,
    /// How many sessions another writer changed between planning and applying; they
    /// were skipped, never overwritten.
    pub n_conflicts: u64,
    /// The first [`LISTED_PROBLEMS`] conflicts.
    pub conflicts: Vec<Problem>,
    /// How many sessions failed to commit for another reason.
    pub n_errors: u64,
    /// The first [`LISTED_PROBLEMS`] errors.
    pub errors: Vec<Problem>,
    /// `--session` ids that do not exist.
    pub missing: Vec<SessionId>,
    /// Whether `--limit` stopped the run before the end.
    pub limit_reached: bool,
    /// Wall time of the run in milliseconds.
    pub elapsed_ms: u64,
    #[serde(skip)]
    sample_size: usize,
}

impl Report {
    /// An empty report for a run.
    pub fn new(mode: Mode, now: Timestamp, older_than_secs: i64, sample_size: usize) -> Report {
        Report {
            mode,
            now,
            older_than_secs,
            scanned: 0,
            sessions_changed: 0,
            batches: 0,
            counts: RepairClass::ALL.iter().map(|c| (*c, 0)).collect(),
            samples: BTreeMap::new(),
            n_conflicts: 0,
            conflicts: Vec::new(),
            n_errors: 0,
            errors: Vec::new(),
            missing: Vec::new(),
            limit_reached: false,
            elapsed_ms: 0,
            sample_size,
        }
    }

    /// Counts a decision whose changes landed (or would, in a dry run). Report-only
    /// findings are counted either way.
    pub fn record(&mut self, decision: &SessionDecision, changed: bool) {
        self.scanned += 1;
        if changed {
            self.sessions_changed += 1;
        }
        for finding in &decision.findings {
            if finding.class.is_repair() && !changed {
                continue;
            }
            *self.counts.entry(finding.class).or_default() += 1;
            let samples = self.samples.entry(finding.class).or_default();
            if samples.len() < self.sample_size
                && samples.last().map(|s| s.session) != Some(decision.session)
            {
                samples.push(Sample {
                    session: decision.session,
                    reason: finding.reason.clone(),
                });
            }
        }
    }

    /// Records a session skipped because another writer committed first.
    pub fn record_conflict(&mut self, decision: &SessionDecision, message: String) {
        self.scanned += 1;
        self.n_conflicts += 1;
        if self.conflicts.len() < LISTED_PROBLEMS {
            self.conflicts.push(Problem {
                session: decision.session,
                message,
            });
        }
    }

    /// Records a session whose commit failed for another reason.
    pub fn record_error(&mut self, decision: &SessionDecision, message: String) {
        self.scanned += 1;
        self.n_errors += 1;
        if self.errors.len() < LISTED_PROBLEMS {
            self.errors.push(Problem {
                session: decision.session,
                message,
            });
        }
    }

    /// How many findings of a class were counted.
    pub fn count(&self, class: RepairClass) -> u64 {
        self.counts.get(&class).copied().unwrap_or(0)
    }

    /// The report as text for a terminal.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let (title, verb) = match self.mode {
            Mode::DryRun => (
                "dry run: nothing was changed; pass --apply to repair",
                "would change",
            ),
            Mode::Apply => ("apply: repairs committed", "changed"),
        };
        let _ = writeln!(out, "nomos-backfill {title}");
        let secs = self.elapsed_ms as f64 / 1000.0;
        let rate = if secs > 0.0 {
            self.scanned as f64 / secs
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "scanned {} session(s) idle for more than {} in {} batch(es), {secs:.1} s ({rate:.0}/s); {verb} {} session(s)",
            self.scanned,
            age_text(self.older_than_secs),
            self.batches,
            self.sessions_changed,
        );
        if self.limit_reached {
            let _ = writeln!(out, "stopped at --limit; run again to continue");
        }
        let _ = writeln!(out, "\ncounts per class:");
        for class in RepairClass::ALL {
            let note = if class.is_repair() {
                ""
            } else {
                "  (reported, not touched)"
            };
            let _ = writeln!(
                out,
                "  {:<22} {:>8}{note}",
                class.as_str(),
                self.count(class)
            );
        }
        if !self.samples.is_empty() {
            let _ = writeln!(out, "\nsamples:");
            for (class, samples) in &self.samples {
                let _ = writeln!(out, "  {}:", class.as_str());
                for sample in samples {
                    let _ = writeln!(out, "    {}  {}", sample.session, sample.reason);
                }
            }
        }
        let _ = writeln!(
            out,
            "\nconflicts (changed by another writer, skipped): {}",
            self.n_conflicts
        );
        for problem in &self.conflicts {
            let _ = writeln!(out, "  {}  {}", problem.session, problem.message);
        }
        if self.n_errors > 0 {
            let _ = writeln!(out, "errors: {}", self.n_errors);
            for problem in &self.errors {
                let _ = writeln!(out, "  {}  {}", problem.session, problem.message);
            }
        }
        if !self.missing.is_empty() {
            let _ = writeln!(out, "not found: {}", self.missing.len());
            for id in &self.missing {
                let _ = writeln!(out, "  {id}");
            }
        }
        out
    }
}

/// `7d`, `12h`, `30m` or `45s`: the largest whole unit.
fn age_text(secs: i64) -> String {
    for (unit, size) in [("w", 7 * 86_400), ("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs >= size && secs % size == 0 {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Finding;

    fn decision(n: u128, class: RepairClass) -> SessionDecision {
        SessionDecision {
            session: SessionId(uuid::Uuid::from_u128(n)),
            findings: vec![Finding {
                class,
                reason: format!("reason {n}"),
            }],
            commit: None,
        }
    }

    #[test]
    fn samples_stop_at_the_sample_size_while_counts_go_on() {
        let mut report = Report::new(Mode::DryRun, Timestamp::EPOCH, 86_400, 2);
        for n in 0..5 {
            report.record(&decision(n, RepairClass::IdleClosed), true);
        }
        assert_eq!(report.count(RepairClass::IdleClosed), 5);
        assert_eq!(report.samples[&RepairClass::IdleClosed].len(), 2);
        assert_eq!(report.sessions_changed, 5);
    }

    #[test]
    fn repairs_that_did_not_land_are_not_counted_but_reports_are() {
        let mut report = Report::new(Mode::Apply, Timestamp::EPOCH, 86_400, 2);
        report.record(&decision(1, RepairClass::IdleClosed), false);
        report.record(&decision(2, RepairClass::AwaitingInput), false);
        assert_eq!(report.count(RepairClass::IdleClosed), 0);
        assert_eq!(report.count(RepairClass::AwaitingInput), 1);
        assert_eq!(report.scanned, 2);
    }

    #[test]
    fn ages_are_shown_in_their_largest_whole_unit() {
        assert_eq!(age_text(86_400), "1d");
        assert_eq!(age_text(14 * 86_400), "2w");
        assert_eq!(age_text(12 * 3600), "12h");
        assert_eq!(age_text(90), "90s");
    }
}
