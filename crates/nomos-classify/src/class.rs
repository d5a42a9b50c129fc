//! CLASSIFY-1: the closed set of command classes, spelled in `snake_case` on the wire and in
//! the stores.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A value that is not one of an enum's spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}` (expected one of: {expected})")]
pub struct UnknownVariant {
    /// Which enum was being parsed.
    pub kind: &'static str,
    /// The text that did not match.
    pub value: String,
    /// The accepted spellings.
    pub expected: &'static str,
}

/// CLASSIFY-1: how dangerous a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandClass {
    /// Reads state, changes nothing.
    ReadOnly,
    /// Changes configuration or state in a recoverable way.
    ConfigMutation,
    /// Destroys data or availability.
    Destructive,
}

impl CommandClass {
    /// Every variant, in declaration order.
    pub const ALL: &'static [CommandClass] = &[
        CommandClass::ReadOnly,
        CommandClass::ConfigMutation,
        CommandClass::Destructive,
    ];

    /// The stable spelling used in stores, events and APIs.
    pub fn as_str(&self) -> &'static str {
        match self {
            CommandClass::ReadOnly => "read_only",
            CommandClass::ConfigMutation => "config_mutation",
            CommandClass::Destructive => "destructive",
        }
    }
}

impl fmt::Display for CommandClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CommandClass {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CommandClass::ALL
            .iter()
            .find(|class| class.as_str() == s)
            .copied()
            .ok_or_else(|| UnknownVariant {
                kind: "command class",
                value: s.to_owned(),
                expected: "read_only config_mutation destructive ",
            })
    }
}
