//! The verdict of the command classifier, as the gate consumes it.

use serde::{Deserialize, Serialize};

use crate::class::CommandClass;

/// Who knew the programs of a command (CLASSIFY-7): the gate asks for its own approval of
/// a command whose program nobody knew (GATE-5).
///
/// Ordered from most to least known; a command takes the least known of its parts.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Knowledge {
    /// The built-in rules know every program of the command.
    #[default]
    Rule,
    /// A program no rule knows is classified by an operator policy rule with examples.
    Policy,
    /// Some program is known to nothing: not a rule, not the policy (a path outside the
    /// system directories, a name known only at run time, a program not in the vocabulary).
    Unknown,
}

/// Whether a command reads a path that holds secrets (SECRET-1).
///
/// Its class stays what the command does (`cat /etc/shadow` is `read_only`: it changes
/// nothing); the gate gives a secret read its own approval, like a destructive command,
/// because its output would reach the model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Sensitivity {
    /// No path the command reads is a secret one, as far as the classifier can name them.
    #[default]
    Ordinary,
    /// The command reads a secret path.
    Secret {
        /// The path, normalised (`/tmp/../etc/shadow` is `/etc/shadow`).
        path: String,
        /// The secret path pattern it matched (`/etc/shadow`, `~/.ssh/id_*`).
        pattern: String,
    },
}

/// A command's class and the reason for it (CLASSIFY-1).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Classification {
    /// How dangerous the command is.
    pub class: CommandClass,
    /// Which word of which part of the command decided it.
    pub reason: String,
    /// Whether the rules, the policy or nothing knew the command's programs (CLASSIFY-7).
    #[serde(default)]
    pub knowledge: Knowledge,
    /// Whether it reads a secret path (SECRET-1).
    #[serde(default)]
    pub sensitivity: Sensitivity,
}

impl Classification {
    /// Builds a classification of a command whose programs the rules know.
    pub fn new(class: CommandClass, reason: impl Into<String>) -> Classification {
        Classification {
            class,
            reason: reason.into(),
            knowledge: Knowledge::Rule,
            sensitivity: Sensitivity::Ordinary,
        }
    }

    /// The same verdict with who knew the programs.
    pub fn with_knowledge(mut self, knowledge: Knowledge) -> Classification {
        self.knowledge = knowledge;
        self
    }

    /// SECRET-1: the secret path the command reads, if any; such a command needs its own
    /// approval whatever its class.
    pub fn secret_read(&self) -> Option<&str> {
        match &self.sensitivity {
            Sensitivity::Ordinary => None,
            Sensitivity::Secret { path, .. } => Some(path),
        }
    }

    /// GATE-5 (rev. 2): whether the command needs its own approval even inside an assent
    /// window because nobody knows one of its programs (CLASSIFY-7).
    pub fn program_unknown(&self) -> bool {
        self.knowledge == Knowledge::Unknown
    }
}
