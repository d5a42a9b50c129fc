//! The operator policy (GATE-8): extra rules on top of the built-in classifier.
//!
//! A policy is a TOML file of `[[rule]]` tables:
//!
//! ```toml
//! [[rule]]
//! prefix = ["docker", "compose", "logs"]   # words of the parsed, unwrapped command
//! class = "read_only"                       # read_only | config_mutation | destructive
//! reason = "log tailing is inspection"
//! match = ["docker compose logs --tail=50 web"]     # must match, and classify as `class`
//! not_match = ["docker compose down"]               # must not match
//! ```
//!
//! A rule without `match` examples only makes commands stricter: its class is a floor.
//! A rule with `match` examples replaces the built-in verdict for the command it matches
//! (and so may make it less strict), but never for shells, interpreters, `sudo`, `env`,
//! `ssh` or other programs that run a command of their own; the commands those run are
//! still classified. `*` in a prefix matches any one word. Every example is checked when
//! the file loads; a file that fails to load is an error naming the file, line and reason.

use std::fmt;

use serde::Deserialize;

use super::rules::env::{INTERPRETERS, SHELLS, WRAPPERS};
use super::walk::{Arg, Walker};
use crate::class::CommandClass;
use crate::classification::Classification;

/// An operator policy: rules applied on top of the built-in classifier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<PolicyRule>,
}

/// One policy rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRule {
    /// The words a command must start with (`*` matches any one word).
    pub prefix: Vec<String>,
    /// The class the rule gives.
    pub class: CommandClass,
    /// Why, in the operator's words.
    pub reason: String,
    /// Commands the rule must match (and classify as `class`).
    pub examples: Vec<String>,
    /// Commands the rule must not match.
    pub counterexamples: Vec<String>,
    /// The line of the rule in its file.
    pub line: usize,
    /// How reasons name the rule.
    pub(crate) subject: String,
}

/// Why a policy file could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}: {kind}")]
pub struct PolicyError {
    /// The file name given to [`Policy::parse`].
    pub origin: String,
    /// The 1-based line where the problem is.
    pub line: usize,
    /// What is wrong.
    pub kind: PolicyErrorKind,
}

/// The kinds of policy error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyErrorKind {
    /// The file is not valid TOML, or a field is missing, unknown or of the wrong type.
    Syntax(String),
    /// A rule's prefix is empty or holds an empty word.
    EmptyPrefix,
    /// A rule with examples (which may make commands less strict) targets a program
    /// that may only be made stricter.
    CannotRelax(String),
    /// A `match` example the rule does not match.
    ExampleNotMatched(String),
    /// A `match` example that classifies differently from the rule's class.
    ExampleClass {
        /// The example.
        example: String,
        /// The class it got.
        got: CommandClass,
        /// The rule's class.
        expected: CommandClass,
    },
    /// A `not_match` example the rule matches.
    CounterexampleMatched(String),
}

impl fmt::Display for PolicyErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyErrorKind::Syntax(message) => write!(f, "{message}"),
            PolicyErrorKind::EmptyPrefix => {
                f.write_str("rule needs a non-empty `prefix` of non-empty words")
            }
            PolicyErrorKind::CannotRelax(program) => write!(
                f,
                "rule for `{program}` has examples, so it could make commands less strict, \
                 but shells, interpreters, sudo, env, ssh and other command runners may only \
                 be made stricter (remove the examples or use class \"destructive\")"
            ),
            PolicyErrorKind::ExampleNotMatched(example) => {
                write!(
                    f,
                    "`match` example `{example}` is not matched by the rule's prefix"
                )
            }
            PolicyErrorKind::ExampleClass {
                example,
                got,
                expected,
            } => write!(
                f,
                "`match` example `{example}` classifies as {got}, not {expected}"
            ),
            PolicyErrorKind::CounterexampleMatched(example) => {
                write!(
                    f,
                    "`not_match` example `{example}` is matched by the rule's prefix"
                )
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    rule: Vec<toml::Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    prefix: Vec<String>,
    class: CommandClass,
    reason: String,
    #[serde(default, rename = "match")]
    examples: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

/// The policy rules that apply to one command.
#[derive(Debug, Default)]
pub(crate) struct PolicyMatch<'p> {
    /// Rules without examples: their class is a floor.
    pub floors: Vec<&'p PolicyRule>,
    /// The most specific rule with examples: it replaces the built-in verdict.
    pub overriding: Option<&'p PolicyRule>,
    /// Indexes of every matching rule (for checking examples).
    pub indexes: Vec<usize>,
}

impl Policy {
    /// No rules: the built-in classifier alone.
    pub fn empty() -> Policy {
        Policy::default()
    }

    /// Parses and checks a policy file; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        let error = |line: usize, kind: PolicyErrorKind| PolicyError {
            origin: origin.to_owned(),
            line,
            kind,
        };
        let raw: RawPolicy = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(err) => {
                let line = err.span().map_or(1, |span| line_of(text, span.start));
                return Err(error(
                    line,
                    PolicyErrorKind::Syntax(err.message().to_owned()),
                ));
            }
        };
        let mut rules = Vec::with_capacity(raw.rule.len());
        for spanned in raw.rule {
            let line = line_of(text, spanned.span().start);
            let rule = spanned.into_inner();
            if rule.prefix.is_empty() || rule.prefix.iter().any(|word| word.is_empty()) {
                return Err(error(line, PolicyErrorKind::EmptyPrefix));
            }
            let program = rule.prefix[0].as_str();
            let runs_commands = SHELLS.contains(&program)
                || INTERPRETERS.contains(&program)
                || WRAPPERS.contains(&program)
                || program == "*";
            if !rule.examples.is_empty() && runs_commands && rule.class != CommandClass::Destructive
            {
                return Err(error(
                    line,
                    PolicyErrorKind::CannotRelax(program.to_owned()),
                ));
            }
            let subject = format!("policy rule `{}` ({origin}:{line})", rule.prefix.join(" "));
            rules.push(PolicyRule {
                prefix: rule.prefix,
                class: rule.class,
                reason: rule.reason,
                examples: rule.examples,
                counterexamples: rule.not_match,
                line,
                subject,
            });
        }
        let policy = Policy { rules };
        for (idx, rule) in policy.rules.iter().enumerate() {
            for example in &rule.examples {
                let (classification, matched) = policy.classify_traced(example);
                if !matched.contains(&idx) {
                    return Err(error(
                        rule.line,
                        PolicyErrorKind::ExampleNotMatched(example.clone()),
                    ));
                }
                if classification.class != rule.class {
                    return Err(error(
                        rule.line,
                        PolicyErrorKind::ExampleClass {
                            example: example.clone(),
                            got: classification.class,
                            expected: rule.class,
                        },
                    ));
                }
            }
            for example in &rule.counterexamples {
                let (_, matched) = policy.classify_traced(example);
                if matched.contains(&idx) {
                    return Err(error(
                        rule.line,
                        PolicyErrorKind::CounterexampleMatched(example.clone()),
                    ));
                }
            }
        }
        Ok(policy)
    }

    /// Classifies a command with the built-in rules and this policy on top.
    pub fn classify(&self, command: &str) -> Classification {
        Walker::new(Some(self)).classify(command)
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    fn classify_traced(&self, command: &str) -> (Classification, Vec<usize>) {
        let mut walker = Walker::new(Some(self));
        walker.trace_policy();
        walker.classify_traced(command)
    }

    /// The rules that apply to a command given as words.
    pub(crate) fn check(&self, args: &[Arg<'_>]) -> PolicyMatch<'_> {
        let mut found = PolicyMatch::default();
        for (idx, rule) in self.rules.iter().enumerate() {
            if !prefix_matches(&rule.prefix, args) {
                continue;
            }
            found.indexes.push(idx);
            if rule.examples.is_empty() {
                found.floors.push(rule);
            } else if found
                .overriding
                .is_none_or(|best| best.prefix.len() < rule.prefix.len())
            {
                found.overriding = Some(rule);
            }
        }
        found
    }
}

fn prefix_matches(prefix: &[String], args: &[Arg<'_>]) -> bool {
    prefix.len() <= args.len()
        && prefix
            .iter()
            .zip(args)
            .all(|(word, arg)| word == "*" || (!arg.dynamic && word == arg.text))
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
