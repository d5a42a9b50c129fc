//! Reading and applying the rule file: each rule a regex, the kind it redacts, and the
//! values it keeps.

use std::ops::Range;

use regex::Regex;
use serde::Deserialize;

use crate::{MARKER_PREFIX, marker};

/// The built-in rule file.
pub(crate) const BUILTIN: &str = include_str!("../rules/secrets.toml");

/// Why a rule file could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The file is not valid TOML, or a field is missing, unknown or of the wrong type.
    #[error("secret rules: {0}")]
    Syntax(String),
    /// A rule's regex does not compile.
    #[error("secret rule `{id}`: {message}")]
    Regex {
        /// The rule.
        id: String,
        /// What the regex engine said.
        message: String,
    },
    /// A rule without an id or a kind.
    #[error("secret rule #{index} needs a non-empty `id` and `kind`")]
    Incomplete {
        /// Its 1-based position in the file.
        index: usize,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    kind: String,
    source: String,
    regex: String,
    #[serde(default)]
    keep: Option<String>,
}

/// One compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    id: String,
    kind: String,
    source: String,
    regex: Regex,
    keep: Option<Regex>,
}

impl Rule {
    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The kind its marker names.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// Where the pattern comes from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The text with this rule's secrets replaced, and how many were.
    pub(crate) fn apply(&self, text: &str) -> (String, usize) {
        let markers = marker_spans(text);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        let mut n = 0;
        for caps in self.regex.captures_iter(text) {
            let secret = caps.iter().skip(1).flatten().next().or_else(|| caps.get(0));
            let Some(secret) = secret else { continue };
            let span = secret.range();
            if span.is_empty()
                || span.start < last
                || markers.iter().any(|m| overlaps(m, &span))
                || self
                    .keep
                    .as_ref()
                    .is_some_and(|keep| keep.is_match(secret.as_str()))
            {
                continue;
            }
            out.push_str(&text[last..span.start]);
            out.push_str(&marker(&self.kind));
            last = span.end;
            n += 1;
        }
        out.push_str(&text[last..]);
        (out, n)
    }
}

/// Where the markers earlier rules wrote are.
fn marker_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(MARKER_PREFIX) {
        let start = from + at;
        let end = text[start..]
            .find(']')
            .map_or(text.len(), |close| start + close + 1);
        spans.push(start..end);
        from = end;
    }
    spans
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Reads and compiles a rule file.
pub(crate) fn parse(text: &str) -> Result<Vec<Rule>, RuleError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| RuleError::Syntax(e.to_string()))?;
    let mut rules = Vec::with_capacity(raw.rule.len());
    for (idx, rule) in raw.rule.into_iter().enumerate() {
        if rule.id.trim().is_empty() || rule.kind.trim().is_empty() {
            return Err(RuleError::Incomplete { index: idx + 1 });
        }
        let compile = |pattern: &str| {
            Regex::new(pattern).map_err(|e| RuleError::Regex {
                id: rule.id.clone(),
                message: e.to_string(),
            })
        };
        let regex = compile(&rule.regex)?;
        let keep = rule.keep.as_deref().map(compile).transpose()?;
        rules.push(Rule {
            regex,
            keep,
            id: rule.id,
            kind: rule.kind,
            source: rule.source,
        });
    }
    Ok(rules)
}
