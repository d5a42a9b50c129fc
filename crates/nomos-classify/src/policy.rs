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
//! A rule may carry a `name` (unique in the file), by which other settings select the
//! commands it matches: a two-person rule's `rule = "NAME"` (AUTHZ-3).
//!
//! A rule without `match` examples only makes commands stricter: its class is a floor.
//! A rule with `match` examples replaces the built-in verdict for the command it matches
//! (and so may make it less strict), but never for shells, interpreters, `sudo`, `env`,
//! `ssh` or other programs that run a command of their own; the commands those run are
//! still classified. `*` in a prefix matches any one word. Every example is checked when
//! the file loads; a file that fails to load is an error naming the file, line and reason.
//!
//! The same file can add preview rows (GATE-10) to the built-in table of
//! [`crate::preview`]:
//!
//! ```toml
//! [[preview]]
//! prefix = ["ufw", "allow"]              # words the command starts with (`*`: any one word)
//! commands = ["ufw status numbered"]     # `{args}` stands for the words after the prefix
//! parser = "raw"                         # raw | apt_simulation | unit_status
//! examples = [{ command = "ufw allow 22/tcp", preview = ["ufw status numbered"] }]
//! ```
//!
//! A row needs examples; each must match the row and give exactly its `preview`, and every
//! preview command must classify `read_only` with the policy loaded. The longest matching
//! row wins, and a row wins over the built-in table.
//!
//! `[[secret]]` rows change the secret paths (SECRET-1) that a command needs its own
//! approval to read, starting from [`crate::DEFAULT_SECRET_PATHS`]:
//!
//! ```toml
//! [[secret]]
//! add = "/srv/app/config/credentials.yml"          # or `remove = "/root/.bash_history"`
//! match = ["cat /srv/app/config/credentials.yml"]  # must read a secret with the policy loaded
//! not_match = ["cat /srv/app/config/app.yml"]      # must not
//! ```
//!
//! A row adds or removes exactly one pattern (written as in [`crate::SecretPattern`]; `!`
//! makes an exception), `remove` names a pattern that is listed, and every row needs at
//! least one example; the examples are checked with every row of the file applied.

use std::fmt;

use serde::Deserialize;

use super::rules::env::{INTERPRETERS, SHELLS, WRAPPERS};
use super::walk::{Arg, Walker};
use crate::class::CommandClass;
use crate::classification::Classification;
use crate::preview::{PreviewForm, PreviewParser, join, simple_words};
use crate::secret::{SecretPaths, SecretPattern};
use crate::shell::Shell;

/// An operator policy: rules applied on top of the built-in classifier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<PolicyRule>,
    previews: Vec<PreviewRow>,
    /// SECRET-1: the secret paths, when `[[secret]]` rows changed the defaults.
    secrets: Option<SecretPaths>,
}

/// One preview row of a policy file (GATE-10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewRow {
    /// The words a command must start with (`*` matches any one word).
    pub prefix: Vec<String>,
    /// The preview commands; `{args}` stands for the command's words after the prefix.
    pub commands: Vec<String>,
    /// How their output is read.
    pub parser: PreviewParser,
    /// The line of the row in its file.
    pub line: usize,
}

impl PreviewRow {
    fn form_for(&self, words: &[String]) -> Option<PreviewForm> {
        let matches = self.prefix.len() <= words.len()
            && self
                .prefix
                .iter()
                .zip(words)
                .all(|(p, w)| p == "*" || p == w);
        if !matches {
            return None;
        }
        let args = join(&words[self.prefix.len()..]);
        let commands = self
            .commands
            .iter()
            .map(|c| c.replace("{args}", &args).trim().to_owned())
            .collect();
        Some(PreviewForm {
            commands,
            parser: self.parser,
            file: None,
        })
    }
}

/// One policy rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRule {
    /// The rule's name, when it has one (unique in its file).
    pub name: Option<String>,
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
    /// A rule's `name` is empty or names another rule of the file too.
    Name(String),
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
    /// A preview row without `commands` or without `examples`.
    PreviewIncomplete,
    /// A preview row's parser that only the built-in table may use.
    PreviewParser(PreviewParser),
    /// A preview example the row does not match.
    PreviewExampleNotMatched(String),
    /// A preview example whose preview is not what the row gives.
    PreviewExampleDiffers {
        /// The example command.
        example: String,
        /// The preview the row gives.
        got: Vec<String>,
    },
    /// A `[[secret]]` row that does not add or remove exactly one valid pattern, or has no
    /// examples.
    SecretRow(String),
    /// A `[[secret]]` row removes a pattern that is not listed.
    SecretNotListed(String),
    /// A secret row's `match` example that reads no secret path.
    SecretExampleNotSecret(String),
    /// A secret row's `not_match` example that reads a secret path.
    SecretExampleSecret {
        /// The example.
        example: String,
        /// The secret path it reads.
        path: String,
    },
    /// A preview command that is not read-only.
    PreviewNotReadOnly {
        /// The preview command.
        preview: String,
        /// Its class.
        got: CommandClass,
    },
}

impl fmt::Display for PolicyErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyErrorKind::Syntax(message) => write!(f, "{message}"),
            PolicyErrorKind::EmptyPrefix => {
                f.write_str("rule needs a non-empty `prefix` of non-empty words")
            }
            PolicyErrorKind::Name(problem) => write!(f, "rule `name` {problem}"),
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
            PolicyErrorKind::PreviewIncomplete => {
                f.write_str("preview row needs a non-empty `prefix`, `commands` and `examples`")
            }
            PolicyErrorKind::PreviewParser(parser) => write!(
                f,
                "preview parser \"{}\" is built in only; use raw, apt_simulation or unit_status",
                parser.as_str()
            ),
            PolicyErrorKind::PreviewExampleNotMatched(example) => write!(
                f,
                "preview example `{example}` is not matched by the row's prefix"
            ),
            PolicyErrorKind::PreviewExampleDiffers { example, got } => write!(
                f,
                "preview example `{example}` gives [{}], not the `preview` it lists",
                got.iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            PolicyErrorKind::SecretRow(problem) => write!(f, "secret row {problem}"),
            PolicyErrorKind::SecretNotListed(pattern) => write!(
                f,
                "secret row removes `{pattern}`, which is not a listed secret path pattern"
            ),
            PolicyErrorKind::SecretExampleNotSecret(example) => {
                write!(f, "secret `match` example `{example}` reads no secret path")
            }
            PolicyErrorKind::SecretExampleSecret { example, path } => write!(
                f,
                "secret `not_match` example `{example}` reads the secret path `{path}`"
            ),
            PolicyErrorKind::PreviewNotReadOnly { preview, got } => write!(
                f,
                "preview `{preview}` classifies as {got}; a preview must be read_only"
            ),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    rule: Vec<toml::Spanned<RawRule>>,
    #[serde(default)]
    preview: Vec<toml::Spanned<RawPreviewRow>>,
    #[serde(default)]
    secret: Vec<toml::Spanned<RawSecretRow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecretRow {
    #[serde(default)]
    add: Option<String>,
    #[serde(default)]
    remove: Option<String>,
    #[serde(default, rename = "match")]
    examples: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreviewRow {
    prefix: Vec<String>,
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default = "raw_parser")]
    parser: PreviewParser,
    #[serde(default)]
    examples: Vec<RawPreviewExample>,
}

fn raw_parser() -> PreviewParser {
    PreviewParser::Raw
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreviewExample {
    command: String,
    preview: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(default)]
    name: Option<String>,
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
            if let Some(name) = &rule.name {
                if name.trim().is_empty() {
                    return Err(error(line, PolicyErrorKind::Name("is empty".to_owned())));
                }
                if rules
                    .iter()
                    .any(|r: &PolicyRule| r.name.as_deref() == Some(name.as_str()))
                {
                    return Err(error(
                        line,
                        PolicyErrorKind::Name(format!("`{name}` names an earlier rule too")),
                    ));
                }
            }
            let subject = format!("policy rule `{}` ({origin}:{line})", rule.prefix.join(" "));
            rules.push(PolicyRule {
                name: rule.name,
                prefix: rule.prefix,
                class: rule.class,
                reason: rule.reason,
                examples: rule.examples,
                counterexamples: rule.not_match,
                line,
                subject,
            });
        }
        let mut previews = Vec::with_capacity(raw.preview.len());
        let mut preview_examples = Vec::new();
        for spanned in raw.preview {
            let line = line_of(text, spanned.span().start);
            let row = spanned.into_inner();
            if row.prefix.is_empty()
                || row.prefix.iter().any(|w| w.is_empty())
                || row.commands.is_empty()
                || row.examples.is_empty()
            {
                return Err(error(line, PolicyErrorKind::PreviewIncomplete));
            }
            if row.parser == PreviewParser::SedDiff {
                return Err(error(line, PolicyErrorKind::PreviewParser(row.parser)));
            }
            preview_examples.push((line, row.examples));
            previews.push(PreviewRow {
                prefix: row.prefix,
                commands: row.commands,
                parser: row.parser,
                line,
            });
        }
        let mut secret_examples = Vec::new();
        let mut secrets = None;
        for spanned in raw.secret {
            let line = line_of(text, spanned.span().start);
            let row = spanned.into_inner();
            let paths: &mut SecretPaths =
                secrets.get_or_insert_with(|| SecretPaths::defaults().clone());
            match (row.add, row.remove) {
                (Some(add), None) => {
                    let Some(pattern) = SecretPattern::parse(&add) else {
                        return Err(error(
                            line,
                            PolicyErrorKind::SecretRow(format!(
                                "adds `{add}`, which is not a path pattern (empty, or with `..`)"
                            )),
                        ));
                    };
                    paths.add(pattern);
                }
                (None, Some(remove)) => {
                    if !paths.remove(&remove) {
                        return Err(error(line, PolicyErrorKind::SecretNotListed(remove)));
                    }
                }
                _ => {
                    return Err(error(
                        line,
                        PolicyErrorKind::SecretRow(
                            "needs exactly one of `add` and `remove`".to_owned(),
                        ),
                    ));
                }
            }
            if row.examples.is_empty() && row.not_match.is_empty() {
                return Err(error(
                    line,
                    PolicyErrorKind::SecretRow(
                        "needs examples (`match` or `not_match`) to be checked at load".to_owned(),
                    ),
                ));
            }
            secret_examples.push((line, row.examples, row.not_match));
        }
        let policy = Policy {
            rules,
            previews,
            secrets,
        };
        for (line, examples, counterexamples) in &secret_examples {
            for example in examples {
                if policy.classify(example).secret_read().is_none() {
                    return Err(error(
                        *line,
                        PolicyErrorKind::SecretExampleNotSecret(example.clone()),
                    ));
                }
            }
            for example in counterexamples {
                if let Some(path) = policy.classify(example).secret_read() {
                    return Err(error(
                        *line,
                        PolicyErrorKind::SecretExampleSecret {
                            example: example.clone(),
                            path: path.to_owned(),
                        },
                    ));
                }
            }
        }
        for (row, (line, examples)) in policy.previews.iter().zip(&preview_examples) {
            for example in examples {
                let form = simple_words(&example.command).and_then(|words| row.form_for(&words));
                let Some(form) = form else {
                    return Err(error(
                        *line,
                        PolicyErrorKind::PreviewExampleNotMatched(example.command.clone()),
                    ));
                };
                if form.commands != example.preview {
                    return Err(error(
                        *line,
                        PolicyErrorKind::PreviewExampleDiffers {
                            example: example.command.clone(),
                            got: form.commands,
                        },
                    ));
                }
                for preview in &form.commands {
                    let got = policy.classify(preview).class;
                    if got != CommandClass::ReadOnly {
                        return Err(error(
                            *line,
                            PolicyErrorKind::PreviewNotReadOnly {
                                preview: preview.clone(),
                                got,
                            },
                        ));
                    }
                }
            }
        }
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

    /// Classifies a command with the built-in rules and this policy on top, read as POSIX sh.
    pub fn classify(&self, command: &str) -> Classification {
        self.classify_in(command, Shell::Sh)
    }

    /// Classifies a command with the built-in rules and this policy on top, read in the
    /// grammar of `shell` (CLASSIFY-8).
    pub fn classify_in(&self, command: &str, shell: Shell) -> Classification {
        Walker::new(Some(self), shell).classify(command)
    }

    /// SECRET-1: the secret paths in force (the defaults, changed by `[[secret]]` rows).
    pub fn secret_paths(&self) -> &SecretPaths {
        self.secrets.as_ref().unwrap_or(SecretPaths::defaults())
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    /// The rule named `name`, if the file has one.
    pub fn rule_named(&self, name: &str) -> Option<&PolicyRule> {
        self.rules
            .iter()
            .find(|rule| rule.name.as_deref() == Some(name))
    }

    /// AUTHZ-3: the names of the named rules that match `command` (any simple command of
    /// it, unwrapped as the classifier unwraps it, in any reading of `/bin/sh`), in file
    /// order.
    pub fn named_rules_matching(&self, command: &str) -> Vec<&str> {
        if self.rules.iter().all(|rule| rule.name.is_none()) {
            return Vec::new();
        }
        let (_, matched) = self.classify_traced(command);
        matched
            .into_iter()
            .filter_map(|idx| self.rules.get(idx)?.name.as_deref())
            .collect()
    }

    /// The preview rows, in file order.
    pub fn previews(&self) -> &[PreviewRow] {
        &self.previews
    }

    /// GATE-10: the preview form of `command`: the longest matching preview row of this
    /// policy, else the built-in table's.
    pub fn preview_form(&self, command: &str) -> Option<PreviewForm> {
        let words = simple_words(command)?;
        self.previews
            .iter()
            .filter_map(|row| row.form_for(&words).map(|form| (row.prefix.len(), form)))
            .max_by_key(|(len, _)| *len)
            .map(|(_, form)| form)
            .or_else(|| crate::preview::preview_form(command))
    }

    fn classify_traced(&self, command: &str) -> (Classification, Vec<usize>) {
        let mut walker = Walker::new(Some(self), Shell::Sh);
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
