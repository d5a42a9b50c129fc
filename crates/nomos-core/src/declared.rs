//! Plan-bound approval (GATE-9): the commands a plan declares, how a command run inside
//! the assent window is matched against them, and the digest the window is bound to.
//!
//! A declared command is classified when the plan is proposed, so the operator sees its
//! class before assenting. Matching is exact after canonicalisation of whitespace and
//! quoting (`systemctl  restart 'nginx'` is `systemctl restart nginx`), and nothing
//! looser: a word holding an expansion, a glob or a brace keeps its quoting, since quoting
//! changes what such a word means.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::classification::Classification;
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

    /// GATE-9: whether `command` on `host` is this declared command: the same host (or a
    /// member of the declared group) and the same command after canonicalisation.
    pub fn covers(&self, host: &str, command: &str) -> bool {
        let host_matches = self.host == host || self.members.iter().any(|m| m == host);
        if !host_matches {
            return false;
        }
        match (canonical(&self.command), canonical(command)) {
            (Some(declared), Some(asked)) => declared == asked,
            _ => false,
        }
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
        }
    }
}

/// GATE-9: a command's canonical words, or `None` when it cannot be read (an unterminated
/// quote), which then matches nothing. Words are split on unquoted whitespace with their
/// quotes removed; the operators `; | & < > ( )` are words of their own, so `a;b` is
/// `a ; b`. A word with `$`, a backtick, `*`, `?`, `[`, `{` or `~` keeps its quoting.
pub fn canonical(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = command.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if is_operator(c) {
            let mut op = String::new();
            while let Some(&o) = chars.peek() {
                if !is_operator(o) {
                    break;
                }
                op.push(o);
                chars.next();
            }
            words.push(op);
            continue;
        }
        let mut raw = String::new();
        let mut unquoted = String::new();
        let mut special = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || is_operator(c) {
                break;
            }
            chars.next();
            raw.push(c);
            match c {
                '\'' => loop {
                    let inner = chars.next()?;
                    raw.push(inner);
                    if inner == '\'' {
                        break;
                    }
                    special |= is_special(inner);
                    unquoted.push(inner);
                },
                '"' => loop {
                    let inner = chars.next()?;
                    raw.push(inner);
                    match inner {
                        '"' => break,
                        '\\' => {
                            let escaped = chars.next()?;
                            raw.push(escaped);
                            if !matches!(escaped, '"' | '\\' | '$' | '`') {
                                unquoted.push('\\');
                            }
                            unquoted.push(escaped);
                        }
                        other => {
                            special |= is_special(other);
                            unquoted.push(other);
                        }
                    }
                },
                '\\' => {
                    let escaped = chars.next()?;
                    raw.push(escaped);
                    unquoted.push(escaped);
                }
                other => {
                    special |= is_special(other);
                    unquoted.push(other);
                }
            }
        }
        words.push(if special { raw } else { unquoted });
    }
    Some(words)
}

fn is_special(c: char) -> bool {
    matches!(c, '$' | '`' | '*' | '?' | '[' | '{' | '~')
}

fn is_operator(c: char) -> bool {
    matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        canonical(a).is_some() && canonical(a) == canonical(b)
    }

    // rule: GATE-9
    #[test]
    fn whitespace_and_quoting_do_not_change_a_declared_command() {
        assert!(same(
            "systemctl restart nginx",
            "  systemctl   restart\t'nginx' "
        ));
        assert!(same("sed -i 's/a/b/' /etc/x", "sed -i \"s/a/b/\" /etc/x"));
        assert!(same("echo a;echo b", "echo a ; echo b"));
        assert!(same("ls my\\ dir", "ls 'my dir'"));
    }

    // rule: GATE-9
    #[test]
    fn a_different_word_or_argument_is_a_different_command() {
        assert!(!same("systemctl restart nginx", "systemctl restart nginx2"));
        assert!(!same(
            "systemctl restart nginx",
            "systemctl restart nginx; rm -rf /"
        ));
        assert!(!same("apt-get install curl", "apt-get install curl wget"));
        assert!(!same("ls 'a b'", "ls a b"));
    }

    // rule: GATE-9
    #[test]
    fn quoting_an_expansion_or_glob_is_not_looser() {
        assert!(!same("rm $DIR", "rm \"$DIR\""));
        assert!(!same("ls *.conf", "ls '*.conf'"));
        assert!(same("ls *.conf", "ls  *.conf"));
    }

    // rule: GATE-9
    #[test]
    fn an_unreadable_command_matches_nothing() {
        assert_eq!(canonical("echo 'open"), None);
        let declared = DeclaredCommand::new(
            "web",
            Vec::new(),
            "echo 'open",
            crate::classify::classify("echo 'open"),
        );
        assert!(!declared.covers("web", "echo 'open"));
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
        assert!(declared.covers("web-2", "systemctl restart nginx"));
        assert!(!declared.covers("db-1", "systemctl restart nginx"));
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
