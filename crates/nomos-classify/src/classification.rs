//! The verdict of the command classifier, as the gate consumes it.

use serde::{Deserialize, Serialize};

use crate::class::CommandClass;

/// A command's class and the reason for it (CLASSIFY-1).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Classification {
    /// How dangerous the command is.
    pub class: CommandClass,
    /// Which word of which part of the command decided it.
    pub reason: String,
}

impl Classification {
    /// Builds a classification.
    pub fn new(class: CommandClass, reason: impl Into<String>) -> Classification {
        Classification {
            class,
            reason: reason.into(),
        }
    }
}
