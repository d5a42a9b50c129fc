//! The command classifier (CLASSIFY-1..5): placeholder until the parser lands.

use crate::classification::Classification;
use crate::status::CommandClass;

/// Classifies a command. Total and pure.
pub fn classify(command: &str) -> Classification {
    let _ = command;
    Classification::new(CommandClass::Destructive, "could not parse")
}
