//! The one output scanner of Nomos (SECRET-2): it finds known secret shapes in command
//! output and replaces each with `[redacted: KIND]`, so the model never reads them.
//!
//! The rules are data (`rules/secrets.toml`, compiled in): most are the detectors of
//! detect-secrets (Yelp, Apache License 2.0) translated into Rust `regex` syntax, and the
//! rest cover what operators' hosts print and those leave alone: whole PEM private key
//! blocks, `/etc/shadow` hashes, GCP and Azure keys, `KEY=value` lines whose name says
//! secret, bearer headers. Where redaction applies is not this crate's decision:
//! `nomos-core` calls [`Scanner::redact`] on every tool result it stores for the model.
//!
//! The crate is pure: no I/O, no clock. [`Scanner::builtin`] compiles the rules once.
//!
//! ```
//! let redacted = nomos_redact::Scanner::builtin().redact("DB_PASSWORD=hunter2\nok\n");
//! assert_eq!(redacted.text, "DB_PASSWORD=[redacted: secret value]\nok\n");
//! assert_eq!(redacted.counts[0].kind, "secret value");
//! ```

#![deny(missing_docs)]

mod rules;

use std::sync::OnceLock;

pub use rules::{Rule, RuleError};

/// The marker that replaces a secret: `[redacted: KIND]`.
pub const MARKER_PREFIX: &str = "[redacted: ";

/// How many secrets of one kind a text held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindCount {
    /// The kind, as the marker names it (`private key`, `aws key`, ...).
    pub kind: String,
    /// How many were replaced.
    pub count: usize,
}

/// A text with its secrets replaced, and what was replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redacted {
    /// The text the model may read.
    pub text: String,
    /// Each kind found, in the order of the rules, with its count; empty when none was.
    pub counts: Vec<KindCount>,
}

impl Redacted {
    /// How many secrets were replaced in all.
    pub fn total(&self) -> usize {
        self.counts.iter().map(|c| c.count).sum()
    }
}

/// A compiled set of rules.
#[derive(Debug)]
pub struct Scanner {
    rules: Vec<Rule>,
}

impl Scanner {
    /// The built-in rules (`rules/secrets.toml`), compiled once.
    pub fn builtin() -> &'static Scanner {
        static BUILTIN: OnceLock<Scanner> = OnceLock::new();
        BUILTIN.get_or_init(|| match Scanner::from_toml(rules::BUILTIN) {
            Ok(scanner) => scanner,
            // The built-in file is compiled in and checked by this crate's tests; a scanner
            // without rules would let everything through, so the rules must compile.
            Err(error) => panic!("the built-in secret rules do not compile: {error}"),
        })
    }

    /// Compiles a rule file (the format of `rules/secrets.toml`).
    pub fn from_toml(text: &str) -> Result<Scanner, RuleError> {
        Ok(Scanner {
            rules: rules::parse(text)?,
        })
    }

    /// The rules, in the order they run.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Replaces every secret `text` holds with `[redacted: KIND]`.
    pub fn redact(&self, text: &str) -> Redacted {
        let mut current = text.to_owned();
        let mut counts: Vec<KindCount> = Vec::new();
        for rule in &self.rules {
            let (next, n) = rule.apply(&current);
            if n == 0 {
                continue;
            }
            current = next;
            match counts.iter_mut().find(|c| c.kind == rule.kind()) {
                Some(found) => found.count += n,
                None => counts.push(KindCount {
                    kind: rule.kind().to_owned(),
                    count: n,
                }),
            }
        }
        Redacted {
            text: current,
            counts,
        }
    }
}

/// The marker for a kind.
pub fn marker(kind: &str) -> String {
    format!("{MARKER_PREFIX}{kind}]")
}
