//! Plan-bound approval (GATE-9): the commands a plan declares, how a command run inside
//! the assent window is matched against them, and the digest the window is bound to.
//!
//! A declared command is classified when the plan is proposed, so the operator sees its
//! class before assenting. A command run in the window matches a declared one when it is
//! on the same host (or a member of the declared group), has the same class, and is the
//! same command as the classifier reads it (`nomos_classify::same::same_command`, rev. 3):
//! the same tree and the same tokens as written, in every pinned shell's grammar, so only
//! the blank space between words may differ. An escaped character is not its plain form,
//! a quoted operator is not the operator, and a quoted word is not an expansion. The text
//! the operator is shown is the declared text itself.
//!
//! The digest an assent window binds to ([`DeclaredDigest`]) is taken over the exact
//! declared text (with hosts, members, classes and previews), never over a canonical form,
//! so it is stable across releases of the parser.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::classification::Classification;
use crate::classify::Shell;
use crate::classify::same::same_command;
use crate::status::CommandClass;

/// What assent approves (GATE-9): `[gate] assent_scope` in the server's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssentScope {
    /// Only the commands the approved plan declared run without their own approval.
    Declared,
    /// The older, looser rule: any `config_mutation` runs inside the window.
    Window,
}

impl AssentScope {
    /// The configuration spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            AssentScope::Declared => "declared",
            AssentScope::Window => "window",
        }
    }

    /// Parses the configuration spelling.
    pub fn parse(text: &str) -> Option<AssentScope> {
        match text {
            "declared" => Some(AssentScope::Declared),
            "window" => Some(AssentScope::Window),
            _ => None,
        }
    }
}

/// One command a plan step declares it will run, as classified at proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredCommand {
    /// The host slug, or a group (`tag:NAME`) as the model wrote it.
    pub host: String,
    /// The hosts the group stood for when the plan was proposed; empty for a single host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The command exactly as declared.
    pub command: String,
    /// Its class and reason, decided at proposal.
    pub classification: Classification,
    /// GATE-10: the preview run when the plan was proposed (a `config_mutation` with a
    /// preview form), shown with the plan and covered by the digest the window binds to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<crate::preview::Preview>,
}

impl DeclaredCommand {
    /// A declared command on one host (or a group with its members resolved by the shell).
    pub fn new(
        host: impl Into<String>,
        members: Vec<String>,
        command: impl Into<String>,
        classification: Classification,
    ) -> DeclaredCommand {
        DeclaredCommand {
            host: host.into(),
            members,
            command: command.into(),
            classification,
            preview: None,
        }
    }

    /// Its class.
    pub fn class(&self) -> CommandClass {
        self.classification.class
    }

    /// GATE-9: whether `command` on `host`, classified `class`, is this declared command:
    /// the same host (or a member of the declared group), the same class, and the same
    /// command in every pinned shell's reading (see the module documentation).
    pub fn covers(&self, host: &str, command: &str, class: CommandClass) -> bool {
        let host_matches = self.host == host || self.members.iter().any(|m| m == host);
        host_matches
            && self.class() == class
            && Shell::ALL
                .iter()
                .all(|&shell| same_command(&self.command, command, shell))
    }
}

/// GATE-9: a digest over a generation's declared commands (hosts, members, commands and
/// classes, in step order). The assent window keeps the digest of what the operator saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeclaredDigest(pub [u8; 32]);

impl DeclaredDigest {
    /// The digest of `commands`, in order.
    pub fn of<'a>(commands: impl IntoIterator<Item = &'a DeclaredCommand>) -> DeclaredDigest {
        let mut hasher = Sha256::new();
        for declared in commands {
            let members = declared.members.join(",");
            for part in [
                declared.host.as_str(),
                members.as_str(),
                declared.command.as_str(),
                declared.class().as_str(),
            ] {
                hasher.update((part.len() as u64).to_be_bytes());
                hasher.update(part.as_bytes());
            }
            // GATE-10: the preview the operator saw is part of what they approve; a
            // command without one hashes as it always did.
            if let Some(preview) = &declared.preview {
                let text = preview.binding_text();
                hasher.update((text.len() as u64).to_be_bytes());
                hasher.update(text.as_bytes());
            }
        }
        DeclaredDigest(hasher.finalize().into())
    }

    /// Lower-case hex.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses lower- or upper-case hex of 32 bytes.
    pub fn from_hex(text: &str) -> Option<DeclaredDigest> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (idx, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[idx * 2..idx * 2 + 2], 16).ok()?;
        }
        Some(DeclaredDigest(bytes))
    }
}

impl Serialize for DeclaredDigest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for DeclaredDigest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DeclaredDigest::from_hex(&text)
            .ok_or_else(|| serde::de::Error::custom("a declared digest is 64 hex digits"))
    }
}

/// Why an approval request exists, shown on its card (GATE-5, GATE-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RequestOrigin {
    /// Its class asks for it: destructive, or a program nobody knows.
    #[default]
    OwnClass,
    /// A `config_mutation` inside the window that the approved plan did not declare.
    NotInPlan {
        /// The step it ran under, if one was running.
        step_seq: Option<u32>,
    },
    /// A destructive or unknown command the approved plan declared: declared, and still
    /// asked one by one.
    Declared {
        /// The step that declared it.
        step_seq: u32,
    },
    /// FLEET-5: the rest of a fan-out whose canary passed, waiting to run.
    AfterCanary {
        /// How many canary hosts ran and passed.
        hosts: u32,
    },
}

impl RequestOrigin {
    /// What the card says about it, if anything beyond the class.
    pub fn card_note(&self) -> Option<String> {
        match self {
            RequestOrigin::OwnClass => None,
            RequestOrigin::NotInPlan {
                step_seq: Some(seq),
            } => Some(format!("not in the approved plan (run under step {seq})")),
            RequestOrigin::NotInPlan { step_seq: None } => {
                Some("not in the approved plan".to_owned())
            }
            RequestOrigin::Declared { step_seq } => Some(format!(
                "declared by step {step_seq} of the approved plan; its class needs its own approval"
            )),
            RequestOrigin::AfterCanary { hosts } => Some(format!(
                "the canary ({hosts} host(s)) passed; approve to run the same command on the rest"
            )),
        }
    }

    /// The stable spelling the binding hash covers.
    pub(crate) fn binding_text(&self) -> String {
        match self {
            RequestOrigin::OwnClass => String::new(),
            RequestOrigin::NotInPlan { step_seq } => format!(
                "not_in_plan:{}",
                step_seq.map(|s| s.to_string()).unwrap_or_default()
            ),
            RequestOrigin::Declared { step_seq } => format!("declared:{step_seq}"),
            RequestOrigin::AfterCanary { hosts } => format!("after_canary:{hosts}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(host: &str, command: &str) -> DeclaredCommand {
        DeclaredCommand::new(
            host,
            Vec::new(),
            command,
            crate::classify::classify(command),
        )
    }

    fn covers(declared_command: &str, run: &str) -> bool {
        declared("web", declared_command).covers("web", run, crate::classify::classify(run).class)
    }

    // rule: GATE-9
    #[test]
    fn only_blank_space_may_differ_from_a_declared_command() {
        assert!(covers(
            "systemctl restart nginx",
            "  systemctl   restart\tnginx "
        ));
        assert!(covers("echo a;echo b", "echo a ; echo b"));
        // The holes of the canonical text (rev. 3): each is another command.
        assert!(!covers(
            "systemctl restart nginx",
            r"systemctl restart ngin\x"
        ));
        assert!(!covers(
            "systemctl restart nginx",
            "systemctl restart nginx';'"
        ));
        assert!(!covers(
            "systemctl restart nginx",
            "systemctl restart 'nginx'"
        ));
        assert!(!covers("rm $DIR", "rm '$DIR'"));
        assert!(!covers(
            "systemctl restart nginx",
            "systemctl restart nginx; rm -rf /"
        ));
    }

    // rule: GATE-9
    #[test]
    fn a_declared_command_covers_only_its_own_class() {
        let declared = declared("web", "systemctl restart nginx");
        assert!(declared.covers(
            "web",
            "systemctl restart nginx",
            CommandClass::ConfigMutation
        ));
        assert!(!declared.covers("web", "systemctl restart nginx", CommandClass::Destructive));
    }

    // rule: GATE-9
    #[test]
    fn an_unreadable_command_matches_nothing() {
        assert!(!covers("echo 'open", "echo 'open"));
    }

    // rule: GATE-9
    #[test]
    fn a_declared_group_covers_its_members_and_nothing_else() {
        let declared = DeclaredCommand::new(
            "tag:web",
            vec!["web-1".to_owned(), "web-2".to_owned()],
            "systemctl restart nginx",
            crate::classify::classify("systemctl restart nginx"),
        );
        let class = CommandClass::ConfigMutation;
        assert!(declared.covers("web-2", "systemctl restart nginx", class));
        assert!(!declared.covers("db-1", "systemctl restart nginx", class));
    }

    #[test]
    fn a_digest_round_trips_through_hex() {
        let declared = DeclaredCommand::new(
            "web",
            Vec::new(),
            "uptime",
            crate::classify::classify("uptime"),
        );
        let digest = DeclaredDigest::of([&declared]);
        assert_eq!(DeclaredDigest::from_hex(&digest.to_hex()), Some(digest));
        assert_ne!(digest, DeclaredDigest::of([]));
    }
}
