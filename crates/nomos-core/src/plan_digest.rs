//! GATE-4 (rev. 3): the digest of a proposed plan as the operator was shown it. The
//! explicit plan decision carries it, and a decision whose digest is not the current plan's
//! is refused, so a plan swapped between the operator's look and the click is never the
//! one approved.
//!
//! The digest is SHA-256, in lower-case hex, over a fixed layout (each part preceded by its
//! length as 8 big-endian bytes): the tag `nomos.plan.v1`, the generation, the proposal's
//! stamp (the time in milliseconds the proposal wrote its steps, the earliest `updated_at`
//! of the generation's steps), each step's seq, title and detail, and the
//! [`DeclaredDigest`] of the declared commands (their exact text, hosts, members, classes
//! and previews). The stamp is what makes a re-proposal with the same text a new plan:
//! the core gives every proposal a stamp later than the one it replaces (PLAN-2), even
//! within one millisecond.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::declared::DeclaredDigest;
use crate::record::PlanStep;
use crate::time::Timestamp;

/// The digest of a generation's plan as shown (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlanDigest(String);

impl PlanDigest {
    /// The digest of generation `generation`, whose steps (in seq order) are `steps`;
    /// `None` when it has no steps.
    pub fn of<'a>(
        generation: u32,
        steps: impl IntoIterator<Item = &'a PlanStep>,
    ) -> Option<PlanDigest> {
        let steps: Vec<&PlanStep> = steps
            .into_iter()
            .filter(|s| s.generation == generation)
            .collect();
        let stamp = proposal_stamp(steps.iter().copied())?;
        let mut hasher = Sha256::new();
        let mut part = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_be_bytes());
            hasher.update(bytes);
        };
        part(b"nomos.plan.v1");
        part(&generation.to_be_bytes());
        part(&stamp.as_millis().to_be_bytes());
        for step in &steps {
            part(&step.seq.to_be_bytes());
            part(step.title.as_bytes());
            part(step.detail.as_deref().unwrap_or_default().as_bytes());
        }
        part(&DeclaredDigest::of(steps.iter().flat_map(|s| s.commands.iter())).0);
        let bytes: [u8; 32] = hasher.finalize().into();
        Some(PlanDigest(
            bytes.iter().map(|b| format!("{b:02x}")).collect(),
        ))
    }

    /// A digest as a client sent it (compared as given; a malformed one matches nothing).
    pub fn from_client(text: &str) -> PlanDigest {
        PlanDigest(text.trim().to_ascii_lowercase())
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PlanDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// When the proposal of `steps` wrote them: the earliest `updated_at` among them (a step
/// changes only forward from its proposal, and while the plan waits some step is still as
/// proposed).
pub(crate) fn proposal_stamp<'a>(
    steps: impl IntoIterator<Item = &'a PlanStep>,
) -> Option<Timestamp> {
    steps.into_iter().map(|s| s.updated_at).min()
}
