//! Walks a parsed script, numbers its parts, unwraps wrappers and keeps the strictest finding.
//!
//! Every simple command is a *part*, numbered in the order a reader meets it (substitutions
//! and re-read strings such as `bash -c '...'` get their own numbers). Each part is
//! classified by the per-program rules in `rules/`; the strictest finding wins, the first
//! one on a tie, and its reason names the deciding word and the part.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::arith;
use super::ast::{
    Command, Compound, Expansion, HereDoc, List, Pipeline, Quoting, Redirect, RedirectOp,
    RedirectTarget, Script, SimpleCommand, Word,
};
use super::parser::ParseError;
use super::policy::{Policy, PolicyMatch};
use super::rules;
use crate::class::CommandClass;
use crate::classification::{Classification, Knowledge, Sensitivity};
use crate::grammar::Grammar;
use crate::secret::{SecretPaths, SecretWatch};
use crate::shell::Shell;

/// How deeply wrappers and re-read strings may nest before the walker gives up.
const MAX_NESTING: usize = 24;

/// How many parts one classification reads before it gives up (bounds the work).
const MAX_PARTS: u32 = 4096;

/// How many bytes of re-read text (`bash -c`, `eval`, ...) one classification may parse.
const MAX_REREAD_BYTES: usize = 1 << 20;

/// How deeply lists may nest across substitutions and re-read strings (bounds the stack).
const MAX_LIST_DEPTH: usize = 96;

/// How much of a part's text a reason quotes.
const MAX_PART_TEXT: usize = 80;

/// One argument of a command as the rules see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arg<'a> {
    /// The text after quote removal (expansions keep their source spelling).
    pub text: &'a str,
    /// Whether the value is only known when the shell runs.
    pub dynamic: bool,
}

impl<'a> Arg<'a> {
    fn from_word(word: &'a Word) -> Arg<'a> {
        Arg {
            text: &word.text,
            dynamic: !word.expansions.is_empty(),
        }
    }

    /// An argument whose value is only known at run time (`xargs` input, `find {}`).
    pub(crate) fn dynamic(text: &'a str) -> Arg<'a> {
        Arg {
            text,
            dynamic: true,
        }
    }

    /// A static argument.
    pub(crate) fn literal(text: &'a str) -> Arg<'a> {
        Arg {
            text,
            dynamic: false,
        }
    }
}

/// Where a command's standard input comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stdin<'a> {
    /// Nothing (the command runs without input).
    Empty,
    /// Text known before the command runs: a here-document, here-string or `echo` output.
    Text(Cow<'a, str>),
    /// A file on the host.
    File,
    /// The output of another command (named) that the classifier cannot predict.
    Pipe(&'a str),
}

/// The subject of a reason: what decided the class.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Subject<'a> {
    /// A program or word, quoted in backticks.
    Word(&'a str),
    /// A program and its subcommand, quoted together (`docker stop`).
    Command(&'a str, &'a str),
    /// A program the classifier does not know.
    Unknown(&'a str),
    /// A redirection with its target.
    Redirect(&'a str, &'a str),
    /// Free text.
    Phrase(&'a str),
}

/// The part being classified: its number and its text for reasons.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part<'s> {
    number: u32,
    text: &'s str,
}

#[derive(Debug)]
struct Winner {
    class: CommandClass,
    subject: String,
    predicate: String,
    part: u32,
    part_text: String,
}

/// The text a script's spans index, and its here-documents.
#[derive(Clone, Copy)]
struct Src<'s> {
    source: &'s str,
    heredocs: &'s [HereDoc],
}

/// The walker's state for one classification.
/// Whether what is being walked starts with the environment Nomos pins for every command
/// ([`Shell::ENVIRONMENT`]: `GIT_OPTIONAL_LOCKS=0`), CLASSIFY-9.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Environment {
    /// The command's own environment, which starts as Nomos pins it.
    Pinned,
    /// Run by a program that clears or resets the environment (`env -i`, `sudo`), or on
    /// another machine (`ssh HOST CMD`, `pct exec`): the pinned variables are not there.
    Dropped,
}

pub(crate) struct Walker<'p> {
    policy: Option<&'p Policy>,
    /// The interpreter that runs the command (CLASSIFY-8): it is read in each of its
    /// grammars.
    shell: Shell,
    /// The grammar of the reading being walked.
    grammar: Grammar,
    parts: u32,
    worst: Option<Winner>,
    readers: Vec<String>,
    functions: Vec<String>,
    /// Variables assigned from data in a bash reading (`read x`, `x=$(cmd)`): arithmetic
    /// that names one evaluates code its value may hold (CLASSIFY-8).
    from_data: Vec<String>,
    /// SECRET-1: the functions' bodies, with the script text they were defined in, to
    /// follow the paths a call's arguments name (`read_file /etc/shadow`).
    bodies: Vec<(String, Compound, usize)>,
    /// SECRET-1: above zero while a function's body is followed again for a call's paths;
    /// its parts were classified at the definition, so nothing is reported.
    replaying: u32,
    defining: Vec<String>,
    nesting: usize,
    reread_bytes: usize,
    list_depth: usize,
    policy_trace: Option<Vec<usize>>,
    knowledge: Knowledge,
    system_path: Option<(String, String)>,
    /// SECRET-1: the paths the parts read.
    secrets: SecretWatch<'p>,
    /// CLASSIFY-9: whether the pinned environment reaches what is walked.
    environment: Environment,
}

impl<'p> Walker<'p> {
    pub(crate) fn new(policy: Option<&'p Policy>, shell: Shell) -> Walker<'p> {
        Walker {
            policy,
            shell,
            grammar: shell.grammars()[0],
            parts: 0,
            worst: None,
            readers: Vec::new(),
            functions: Vec::new(),
            from_data: Vec::new(),
            bodies: Vec::new(),
            replaying: 0,
            defining: Vec::new(),
            nesting: 0,
            reread_bytes: 0,
            list_depth: 0,
            policy_trace: None,
            knowledge: Knowledge::Rule,
            system_path: None,
            secrets: SecretWatch::new(
                policy.map_or(SecretPaths::defaults(), |policy| policy.secret_paths()),
            ),
            environment: Environment::Pinned,
        }
    }

    /// Records which policy rules match (to check a policy's examples).
    pub(crate) fn trace_policy(&mut self) {
        self.policy_trace = Some(Vec::new());
    }

    /// Classifies a command and returns the indexes of the policy rules that matched.
    ///
    /// CLASSIFY-8: the command is read in every grammar its shell may have (`/bin/sh` is
    /// dash, bash or ash); readings that give the same tree (and evaluate subscripts alike) are
    /// walked once, and the
    /// strictest reading wins (the first on a tie), its reason saying which shell reads it
    /// so when the readings disagree.
    pub(crate) fn classify_traced(self, command: &str) -> (Classification, Vec<usize>) {
        let mut readings: Vec<(Grammar, Result<Script, ParseError>)> = Vec::new();
        for &grammar in self.shell.grammars() {
            let parsed = Script::parse_in(command, grammar);
            // Two readings with the same tree are walked once, unless one of them
            // evaluates subscripts and the other does not: the walk differs then.
            if !readings.iter().any(|(seen_in, seen)| {
                *seen == parsed && seen_in.evaluates_subscripts() == grammar.evaluates_subscripts()
            }) {
                readings.push((grammar, parsed));
            }
        }
        let tracing = self.policy_trace.is_some();
        let mut verdicts: Vec<(Grammar, Classification)> = Vec::new();
        let mut trace = Vec::new();
        for (grammar, parsed) in &readings {
            let found = match parsed {
                Ok(script) => {
                    let mut walker = Walker::new(self.policy, self.shell);
                    walker.grammar = *grammar;
                    if tracing {
                        walker.trace_policy();
                    }
                    walker.walk_script(script, &Stdin::Empty);
                    trace.extend(walker.policy_trace.take().unwrap_or_default());
                    walker.finish()
                }
                Err(error) => parse_failure(error),
            };
            verdicts.push((*grammar, found));
        }
        trace.sort_unstable();
        trace.dedup();
        (strictest_reading(verdicts), trace)
    }

    /// Classifies a command string.
    pub(crate) fn classify(self, command: &str) -> Classification {
        self.classify_traced(command).0
    }

    fn finish(mut self) -> Classification {
        let knowledge = self.knowledge;
        let system_path = self.system_path.clone();
        let (sensitivity, secret_reason) = self.secrets.finish();
        let mut found = self.verdict();
        // CLASSIFY-7: a program from a system directory was read as its basename.
        if let Some((path, name)) = system_path {
            let _ = write!(
                found.reason,
                " (`{path}` is read as `{name}`, a program in a system directory)"
            );
        }
        // SECRET-1: a read of a secret path says which.
        if let Some(sentence) = secret_reason {
            found.reason.push_str(&sentence);
        }
        found.sensitivity = sensitivity;
        found.with_knowledge(knowledge)
    }

    fn verdict(self) -> Classification {
        let Some(winner) = self.worst else {
            return Classification::new(CommandClass::ReadOnly, "empty command runs nothing");
        };
        if winner.class == CommandClass::ReadOnly && self.parts > 1 {
            let mut reason = format!("all {} parts only read (", self.parts);
            for (idx, reader) in self.readers.iter().enumerate() {
                let sep = if idx == 0 { "" } else { ", " };
                let _ = write!(reason, "{sep}`{reader}`");
            }
            reason.push(')');
            return Classification::new(CommandClass::ReadOnly, reason);
        }
        let mut reason = winner.subject;
        if self.parts > 1 {
            let _ = write!(reason, " in part {} (`{}`)", winner.part, winner.part_text);
        }
        if !winner.predicate.is_empty() {
            reason.push(' ');
            reason.push_str(&winner.predicate);
        }
        Classification::new(winner.class, reason)
    }

    fn next_part<'s>(&mut self, text: &'s str) -> Part<'s> {
        if self.replaying == 0 {
            self.parts += 1;
        }
        Part {
            number: self.parts,
            text: clip(text.trim()),
        }
    }

    /// Records a finding; it becomes the reason when it is the strictest so far.
    pub(crate) fn report(
        &mut self,
        part: Part<'_>,
        class: CommandClass,
        subject: Subject<'_>,
        predicate: &str,
    ) {
        if self.replaying > 0 {
            return;
        }
        if class == CommandClass::ReadOnly && self.readers.len() < 8 {
            let reader = match subject {
                Subject::Word(word) => Some(Cow::Borrowed(clip(word))),
                Subject::Command(program, verb) => {
                    Some(Cow::Owned(format!("{program} {}", clip(verb))))
                }
                _ => None,
            };
            if let Some(reader) = reader
                && self.readers.last().map(String::as_str) != Some(&reader)
            {
                self.readers.push(reader.into_owned());
            }
        }
        if self
            .worst
            .as_ref()
            .is_some_and(|worst| worst.class >= class)
        {
            return;
        }
        let subject = match subject {
            Subject::Word(word) => format!("`{}`", clip(word)),
            Subject::Command(program, verb) => format!("`{program} {}`", clip(verb)),
            Subject::Unknown(word) => format!("unknown command `{}`", clip(word)),
            Subject::Redirect(op, target) => format!("`{op} {}`", clip(target)),
            Subject::Phrase(text) => text.to_owned(),
        };
        self.worst = Some(Winner {
            class,
            subject,
            predicate: predicate.to_owned(),
            part: part.number,
            part_text: part.text.to_owned(),
        });
    }

    fn walk_script<'s>(&mut self, script: &'s Script, stdin: &Stdin<'s>) {
        let src = Src {
            source: &script.source,
            heredocs: &script.heredocs,
        };
        self.walk_list(&script.body, src, stdin);
    }

    fn walk_list<'s>(&mut self, list: &'s List, src: Src<'s>, stdin: &Stdin<'s>) {
        if self.list_depth >= MAX_LIST_DEPTH {
            let part = self.next_part("nested commands");
            let predicate = "are nested too deeply to read";
            self.report(
                part,
                CommandClass::Destructive,
                Subject::Phrase("commands"),
                predicate,
            );
            return;
        }
        self.list_depth += 1;
        for item in &list.items {
            self.walk_pipeline(&item.and_or.first, src, stdin);
            for (_, pipeline) in &item.and_or.rest {
                self.walk_pipeline(pipeline, src, stdin);
            }
        }
        self.list_depth -= 1;
    }

    fn walk_pipeline<'s>(&mut self, pipeline: &'s Pipeline, src: Src<'s>, stdin: &Stdin<'s>) {
        let mut input = stdin.clone();
        for (at, command) in pipeline.commands.iter().enumerate() {
            self.walk_command(command, src, &input);
            if at > 0 {
                self.find_into_xargs(&pipeline.commands[at - 1], command);
            }
            input = pipe_output(command, src, &input);
        }
    }

    /// SECRET-1: `find ROOT -name N | xargs READER` reads what `find ROOT -name N -exec
    /// READER {} +` would.
    fn find_into_xargs(&mut self, find: &Command, xargs: &Command) {
        let (Command::Simple(find), Command::Simple(xargs)) = (find, xargs) else {
            return;
        };
        let is = |simple: &SimpleCommand, name: &str| {
            simple.words.first().and_then(Word::literal) == Some(name)
        };
        if !is(find, "find") || !is(xargs, "xargs") {
            return;
        }
        // The inner command starts at the first word that is not an option of `xargs`.
        let mut words = xargs.words[1..].iter();
        let mut reader = Vec::new();
        while let Some(word) = words.next() {
            let text = word.text.as_str();
            if !reader.is_empty() || !text.starts_with('-') {
                reader.push(Arg::from_word(word));
            } else if matches!(text, "-I" | "-n" | "-d" | "-L" | "-P" | "-s" | "-a" | "-E") {
                words.next();
            }
        }
        if reader.is_empty() {
            return;
        }
        let mut args: Vec<Arg<'_>> = find
            .words
            .iter()
            .take_while(|word| !matches!(word.text.as_str(), "-exec" | "-execdir" | "-ok"))
            .map(Arg::from_word)
            .collect();
        args.push(Arg::literal("-exec"));
        args.extend(reader);
        args.push(Arg::literal("{}"));
        args.push(Arg::literal("+"));
        self.secrets.command(&args);
    }

    fn walk_command<'s>(&mut self, command: &'s Command, src: Src<'s>, stdin: &Stdin<'s>) {
        match command {
            Command::Simple(simple) => self.walk_simple(simple, src, stdin),
            Command::Compound(compound, redirects) => {
                self.walk_compound(compound, src, stdin);
                self.walk_redirects(redirects, src);
            }
            Command::FunctionDef(def) => {
                self.functions.push(def.name.clone());
                self.bodies.push((
                    def.name.clone(),
                    def.body.clone(),
                    src.source.as_ptr() as usize,
                ));
                self.defining.push(def.name.clone());
                self.walk_compound(&def.body, src, stdin);
                self.defining.pop();
                self.walk_redirects(&def.redirects, src);
            }
        }
    }

    fn walk_redirects(&mut self, redirects: &[Redirect], src: Src<'_>) {
        for redirect in redirects {
            let text = match &redirect.target {
                RedirectTarget::Word(word) => word.text.as_str(),
                RedirectTarget::HereDoc(_) => "here-document",
            };
            let part = self.next_part(text);
            self.walk_redirect(redirect, src, part);
        }
    }

    fn walk_compound<'s>(&mut self, compound: &'s Compound, src: Src<'s>, stdin: &Stdin<'s>) {
        match compound {
            Compound::Group(list) | Compound::Subshell(list) => self.walk_list(list, src, stdin),
            Compound::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    self.walk_list(condition, src, stdin);
                    self.walk_list(body, src, stdin);
                }
                if let Some(body) = otherwise {
                    self.walk_list(body, src, stdin);
                }
            }
            Compound::Loop {
                condition, body, ..
            } => {
                self.walk_list(condition, src, stdin);
                self.walk_list(body, src, stdin);
            }
            Compound::For { name, words, body } => {
                for word in words {
                    self.walk_expansions(&word.expansions, src);
                }
                // Expanded words and file names from a glob are data.
                let data = words
                    .iter()
                    .any(|word| !word.expansions.is_empty() || word.text.contains(['*', '?', '[']));
                if data {
                    self.assigned_from_data(name);
                }
                if rules::env::changes_program(name) {
                    let part = self.next_part(name);
                    self.report(
                        part,
                        CommandClass::ConfigMutation,
                        Subject::Word(name),
                        "is the loop variable, which changes what programs run",
                    );
                }
                // SECRET-1: `for f in /etc/shadow; do cat "$f"; done` reads what `$f` holds.
                let values: Vec<Arg<'_>> = words.iter().map(Arg::from_word).collect();
                self.secrets.assign(name, &values);
                self.walk_list(body, src, stdin);
            }
            Compound::ArithFor { header, body } => {
                let part = self.next_part("for (( ... ))");
                self.data_in_arith_command(part);
                self.walk_expansions(header, src);
                self.walk_list(body, src, stdin);
            }
            Compound::Case { word, arms } => {
                self.walk_expansions(&word.expansions, src);
                for (patterns, body) in arms {
                    for pattern in patterns {
                        self.walk_expansions(&pattern.expansions, src);
                    }
                    self.walk_list(body, src, stdin);
                }
            }
            Compound::Test(words) => {
                let part = self.next_part("[[ ... ]]");
                self.report(
                    part,
                    CommandClass::ReadOnly,
                    Subject::Word("[["),
                    "only tests",
                );
                let arithmetic = words.iter().any(|word| {
                    word.quoting == Quoting::Bare
                        && matches!(
                            word.text.as_str(),
                            "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
                        )
                });
                for word in words {
                    self.walk_expansions(&word.expansions, src);
                    self.evaluated_text(&word.text, part, "[[");
                    if arithmetic {
                        self.data_in_arithmetic(&word.text, part, "[[");
                    }
                }
            }
            Compound::Arith(expansions) => {
                let part = self.next_part("(( ... ))");
                self.report(
                    part,
                    CommandClass::ReadOnly,
                    Subject::Word("(("),
                    "only computes",
                );
                self.data_in_arith_command(part);
                self.walk_expansions(expansions, src);
            }
        }
    }

    fn walk_expansions<'s>(&mut self, expansions: &'s [Expansion], src: Src<'s>) {
        for expansion in expansions {
            match expansion {
                Expansion::Command(list) | Expansion::Process(list) => {
                    self.walk_list(list, src, &Stdin::Empty);
                }
                Expansion::Backtick(script) => self.walk_script(script, &Stdin::Empty),
                Expansion::Parameter | Expansion::Arithmetic => {}
            }
        }
    }

    fn walk_simple<'s>(&mut self, simple: &'s SimpleCommand, src: Src<'s>, stdin: &Stdin<'s>) {
        let text = src.source.get(simple.span.clone()).unwrap_or_default();
        let part = self.next_part(text);
        if self.parts > MAX_PARTS {
            let predicate =
                "is one part too many: the command has more parts than the classifier reads";
            self.report(
                part,
                CommandClass::Destructive,
                Subject::Word(text),
                predicate,
            );
            return;
        }
        for word in simple.assignments.iter().chain(&simple.words) {
            self.walk_expansions(&word.expansions, src);
        }
        for redirect in &simple.redirects {
            self.walk_redirect(redirect, src, part);
        }
        let input = simple_input(simple, src, stdin);
        for word in simple.assignments.iter().chain(&simple.words) {
            for arithmetic in arith::arithmetic_parts(&word.text) {
                self.data_in_arithmetic(arithmetic, part, &word.text);
            }
            self.prompt_expansion(word, part);
        }
        for assignment in &simple.assignments {
            let name = assignment.assignment_name().unwrap_or_default();
            if !assignment.expansions.is_empty() {
                self.assigned_from_data(name);
            }
            // A quoted value holding `a[$(cmd)]` runs `cmd` wherever bash evaluates the
            // variable as a number (`$((x))`); an unquoted one ran its substitution already.
            if assignment.expansions.is_empty() {
                if simple.words.is_empty() {
                    self.evaluated_text(&assignment.text, part, name);
                } else {
                    // Exported to the program, which may be a bash that evaluates it.
                    self.evaluated_by_child(&assignment.text, part, name);
                }
            }
            if rules::env::changes_program(name) {
                self.report(
                    part,
                    CommandClass::ConfigMutation,
                    Subject::Word(name),
                    "is assigned, which changes what programs run",
                );
            }
        }
        if simple.words.is_empty() {
            // SECRET-1: `F=/etc/shadow; cat $F` reads what `$F` holds.
            for assignment in &simple.assignments {
                self.secrets.assign_word(Arg::from_word(assignment));
            }
            let class = CommandClass::ReadOnly;
            match simple.assignments.first() {
                Some(first) => {
                    let name = first.assignment_name().unwrap_or_default();
                    self.report(
                        part,
                        class,
                        Subject::Word(name),
                        "only sets a shell variable",
                    );
                }
                None => self.report(
                    part,
                    class,
                    Subject::Phrase("a bare redirection"),
                    "runs nothing",
                ),
            }
            return;
        }
        let args: Vec<Arg<'_>> = simple.words.iter().map(Arg::from_word).collect();
        self.invoke(&args, part, &input);
        self.follow_call(&args, src, &input);
    }

    /// SECRET-1: a call of a function defined above reads what its body reads with the
    /// call's arguments as `$1`, `$2`, ... and `$@`; the body is walked again for the paths
    /// alone (its class was found at the definition).
    fn follow_call<'s>(&mut self, args: &[Arg<'_>], src: Src<'s>, stdin: &Stdin<'s>) {
        const MAX_REPLAY: u32 = 4;
        let Some(program) = args.first() else { return };
        if self.replaying >= MAX_REPLAY || args.len() < 2 || self.secrets.found() {
            return;
        }
        let here = src.source.as_ptr() as usize;
        let Some(body) = self
            .bodies
            .iter()
            .rev()
            .find(|(name, _, at)| name == program.text && *at == here)
            .map(|(_, body, _)| body.clone())
        else {
            return;
        };
        let saved = self.secrets.bind_positional(&args[1..]);
        self.replaying += 1;
        self.walk_compound(&body, src, stdin);
        self.replaying -= 1;
        self.secrets.restore_positional(saved);
    }

    fn walk_redirect(&mut self, redirect: &Redirect, src: Src<'_>, part: Part<'_>) {
        let word = match &redirect.target {
            RedirectTarget::Word(word) => word,
            RedirectTarget::HereDoc(id) => {
                if let Some(heredoc) = src.heredocs.get(id.0) {
                    self.walk_expansions(&heredoc.expansions, src);
                }
                return;
            }
        };
        self.walk_expansions(&word.expansions, src);
        let op = match redirect.op {
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::ReadWrite => {
                self.secrets.redirect(Arg::from_word(word));
                "<>"
            }
            RedirectOp::WriteAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::Read => {
                // SECRET-1: `< FILE` reads the file.
                self.secrets.redirect(Arg::from_word(word));
                return;
            }
            RedirectOp::Duplicate | RedirectOp::HereDoc | RedirectOp::HereString => return,
        };
        let (class, predicate) = rules::paths::write_target(Arg::from_word(word));
        self.report(part, class, Subject::Redirect(op, &word.text), predicate);
    }

    /// Classifies one command given as words: policy rules, then the program's rule.
    pub(crate) fn invoke(&mut self, args: &[Arg<'_>], part: Part<'_>, stdin: &Stdin<'_>) {
        let Some(program) = args.first() else { return };
        if self.nesting >= MAX_NESTING {
            let subject = Subject::Word(program.text);
            self.report(
                part,
                CommandClass::Destructive,
                subject,
                "is nested too deeply to read",
            );
            return;
        }
        self.nesting += 1;
        let policy_match = match self.policy {
            Some(policy) => policy.check(args),
            None => PolicyMatch::default(),
        };
        if let Some(trace) = &mut self.policy_trace {
            trace.extend_from_slice(&policy_match.indexes);
        }
        for floor in &policy_match.floors {
            self.report(
                part,
                floor.class,
                Subject::Phrase(&floor.subject),
                &floor.reason,
            );
        }
        let mut cx = Cx {
            walker: self,
            part,
            stdin,
            own: None,
            overridden: false,
        };
        if let Some(rule) = &policy_match.overriding {
            cx.walker.report(
                part,
                rule.class,
                Subject::Phrase(&rule.subject),
                &rule.reason,
            );
            cx.overridden = true;
        }
        cx.dispatch(args);
        self.nesting -= 1;
    }

    /// Reads `text` as a script (`bash -c`, `ssh host CMD`, `eval`) in each of `grammars`
    /// (the shells that may run it, CLASSIFY-8) and classifies every distinct reading.
    fn reread(
        &mut self,
        text: &str,
        part: Part<'_>,
        stdin: &Stdin<'_>,
        what: &str,
        grammars: &[Grammar],
    ) {
        if self.nesting >= MAX_NESTING {
            self.report(
                part,
                CommandClass::Destructive,
                Subject::Word(what),
                "is nested too deeply to read",
            );
            return;
        }
        self.reread_bytes += text.len();
        if self.reread_bytes > MAX_REREAD_BYTES || self.parts >= MAX_PARTS {
            self.report(
                part,
                CommandClass::Destructive,
                Subject::Word(what),
                "runs more text than the classifier reads",
            );
            return;
        }
        let mut readings: Vec<(Grammar, Result<Script, ParseError>)> = Vec::new();
        for &grammar in grammars {
            let parsed = Script::parse_in(text, grammar);
            // Two readings with the same tree are walked once, unless one of them
            // evaluates subscripts and the other does not: the walk differs then.
            if !readings.iter().any(|(seen_in, seen)| {
                *seen == parsed && seen_in.evaluates_subscripts() == grammar.evaluates_subscripts()
            }) {
                readings.push((grammar, parsed));
            }
        }
        let several = readings.len() > 1;
        for (grammar, parsed) in &readings {
            match parsed {
                Ok(script) => {
                    let outer = std::mem::replace(&mut self.grammar, *grammar);
                    self.nesting += 1;
                    self.walk_script(script, stdin);
                    self.nesting -= 1;
                    self.grammar = outer;
                }
                Err(error) => {
                    let mut predicate = format!("runs text that could not parse: {error}");
                    if several {
                        let _ = write!(predicate, " (as {} reads it)", grammar.shell_name());
                    }
                    self.report(
                        part,
                        CommandClass::Destructive,
                        Subject::Word(what),
                        &predicate,
                    );
                }
            }
        }
    }

    /// CLASSIFY-8: `name` now holds data (read from input, a loop over expanded words, a
    /// command's output); only bash evaluates such a value as arithmetic.
    fn assigned_from_data(&mut self, name: &str) {
        if self.grammar.evaluates_subscripts() && !self.from_data.iter().any(|seen| seen == name) {
            self.from_data.push(name.to_string());
        }
    }

    /// CLASSIFY-8: arithmetic `text` that names a variable holding data runs the code in the
    /// subscripts of that value (`read x < f; echo $((x))` with `a[$(cmd)]` in `f`).
    fn data_in_arithmetic(&mut self, text: &str, part: Part<'_>, what: &str) {
        if !self.grammar.evaluates_subscripts() {
            return;
        }
        let Some(name) = arith::mentioned(text, &self.from_data) else {
            return;
        };
        let predicate = format!(
            "evaluates `{name}`, which holds data, as arithmetic, where a subscript in its value runs code"
        );
        self.report(
            part,
            CommandClass::ConfigMutation,
            Subject::Word(what),
            &predicate,
        );
    }

    /// CLASSIFY-8: bash's `${x@P}` expands `x` as a prompt string, which runs the command
    /// substitutions in its value.
    fn prompt_expansion(&mut self, word: &Word, part: Part<'_>) {
        if self.grammar == Grammar::Bash
            && !word.expansions.is_empty()
            && word.text.contains("${")
            && word.text.contains("@P}")
        {
            self.report(
                part,
                CommandClass::ConfigMutation,
                Subject::Word(&word.text),
                "expands a variable as a prompt (`@P`), which runs the commands in its value",
            );
        }
    }

    /// `(( ))` and `for (( ))` keep no text: any variable holding data may reach them.
    fn data_in_arith_command(&mut self, part: Part<'_>) {
        if let Some(name) = self.from_data.first().cloned() {
            self.data_in_arithmetic(&name, part, "((");
        }
    }

    /// CLASSIFY-8: in bash, text that reaches the arithmetic evaluator runs the code in its
    /// subscripts (`a[$(cmd)]`), however it was quoted. Such text is at least
    /// `config_mutation`, and the commands in it are classified as well.
    fn evaluated_text(&mut self, text: &str, part: Part<'_>, what: &str) {
        if self.grammar.evaluates_subscripts() {
            self.evaluated_by_child(text, part, what);
        }
    }

    /// CLASSIFY-8: a value handed to another program in its environment (`x=V prog`,
    /// `env x=V prog`, `export`) reaches any bash that program starts, whatever shell reads
    /// this command.
    fn evaluated_by_child(&mut self, text: &str, part: Part<'_>, what: &str) {
        let Some(code) = subscript_code(text) else {
            return;
        };
        let predicate = format!(
            "hides code in a subscript that bash evaluates (`{}`)",
            clip(text)
        );
        self.report(
            part,
            CommandClass::ConfigMutation,
            Subject::Word(what),
            &predicate,
        );
        for inner in code {
            self.reread(inner, part, &Stdin::Empty, what, &[Grammar::Bash]);
        }
    }
}

/// The context a program's rule works in: report findings, run inner commands.
pub(crate) struct Cx<'w, 'p, 's, 'i> {
    walker: &'w mut Walker<'p>,
    part: Part<'s>,
    stdin: &'i Stdin<'i>,
    own: Option<CommandClass>,
    overridden: bool,
}

impl<'i> Cx<'_, '_, '_, 'i> {
    fn dispatch(&mut self, args: &[Arg<'_>]) {
        let program = args[0];
        if program.dynamic {
            self.report(
                CommandClass::ConfigMutation,
                Subject::Unknown(program.text),
                "",
            );
            return;
        }
        if program.text.contains('/') {
            // CLASSIFY-7: `/usr/bin/rm` is `rm`; any other path is a program nobody knows.
            let Some(name) = rules::paths::system_program(program.text) else {
                self.report(
                    CommandClass::ConfigMutation,
                    Subject::Unknown(program.text),
                    "(a program named by a path outside the system directories is unknown)",
                );
                return;
            };
            if self.walker.system_path.is_none() {
                self.walker.system_path = Some((program.text.to_owned(), name.to_owned()));
            }
            let mut named = args.to_vec();
            named[0] = Arg {
                text: name,
                dynamic: false,
            };
            self.dispatch(&named);
            return;
        }
        if self.walker.defining.iter().any(|name| name == program.text) {
            self.report(
                CommandClass::Destructive,
                Subject::Word(program.text),
                "calls the function it is defined in (fork bomb)",
            );
            return;
        }
        if self
            .walker
            .functions
            .iter()
            .any(|name| name == program.text)
        {
            self.report(
                CommandClass::ReadOnly,
                Subject::Word(program.text),
                "calls a function defined above",
            );
            return;
        }
        // SECRET-1: the paths this program reads.
        self.walker.secrets.command(args);
        rules::classify(self, args);
        // CLASSIFY-6: a read-only verdict holds only when every option is known to read.
        if self.own == Some(CommandClass::ReadOnly)
            && let Some(found) = rules::options::vet(args, rules::is_reader(program.text))
        {
            self.report(
                CommandClass::ConfigMutation,
                Subject::Word(program.text),
                &found.predicate(),
            );
        }
        if self.own == Some(CommandClass::ReadOnly)
            && !rules::ignores_dynamic_args(program.text)
            && let Some(arg) = args[1..].iter().find(|arg| arg.dynamic)
        {
            let predicate = format!(
                "has an argument known only at run time (`{}`)",
                clip(arg.text)
            );
            self.report(
                CommandClass::ConfigMutation,
                Subject::Word(program.text),
                &predicate,
            );
        }
        // CLASSIFY-9: a form that reaches the network is at least `config_mutation`.
        rules::reach::check(self, args);
    }

    /// Records the rule's own finding (dropped when a policy rule overrides this command).
    pub(crate) fn report(&mut self, class: CommandClass, subject: Subject<'_>, predicate: &str) {
        self.own = Some(self.own.map_or(class, |own| own.max(class)));
        if let Subject::Unknown(_) = subject {
            // CLASSIFY-7: no rule knows this program; a policy rule with examples may.
            let knowledge = if self.overridden {
                Knowledge::Policy
            } else {
                Knowledge::Unknown
            };
            self.walker.knowledge = self.walker.knowledge.max(knowledge);
        }
        if !self.overridden {
            self.walker.report(self.part, class, subject, predicate);
        }
    }

    /// Shorthand for a read-only finding about `program`.
    pub(crate) fn read_only(&mut self, program: &str, predicate: &str) {
        self.report(CommandClass::ReadOnly, Subject::Word(program), predicate);
    }

    /// Shorthand for a config-mutation finding about `word`.
    pub(crate) fn mutation(&mut self, word: &str, predicate: &str) {
        self.report(CommandClass::ConfigMutation, Subject::Word(word), predicate);
    }

    /// Shorthand for a destructive finding about `word`.
    pub(crate) fn destructive(&mut self, word: &str, predicate: &str) {
        self.report(CommandClass::Destructive, Subject::Word(word), predicate);
    }

    /// Classifies an inner command a wrapper runs, with this command's input.
    pub(crate) fn run(&mut self, args: &[Arg<'_>]) {
        let stdin = self.stdin.clone();
        self.walker.invoke(args, self.part, &stdin);
    }

    /// Classifies an inner command that starts without the pinned environment (CLASSIFY-9):
    /// `env -i CMD`, `sudo CMD`, `pct exec VMID -- CMD`.
    pub(crate) fn run_without_pinned_environment(&mut self, args: &[Arg<'_>]) {
        let outer = std::mem::replace(&mut self.walker.environment, Environment::Dropped);
        self.run(args);
        self.walker.environment = outer;
    }

    /// [`Cx::script_in`] for a script that starts without the pinned environment
    /// (`ssh HOST CMD` runs it on another machine).
    pub(crate) fn script_without_pinned_environment(
        &mut self,
        text: &str,
        what: &str,
        grammars: &[Grammar],
    ) {
        let outer = std::mem::replace(&mut self.walker.environment, Environment::Dropped);
        self.script_in(text, what, grammars);
        self.walker.environment = outer;
    }

    /// Whether the command being classified starts with the pinned environment.
    pub(crate) fn environment(&self) -> Environment {
        self.walker.environment
    }

    /// Classifies an inner command that reads the given input.
    pub(crate) fn run_with_input(&mut self, args: &[Arg<'_>], stdin: &Stdin<'_>) {
        self.walker.invoke(args, self.part, stdin);
    }

    /// Reads `text` as a script of the shell running this command (`eval`, `trap`) and
    /// classifies it (`what` names the wrapper).
    pub(crate) fn script(&mut self, text: &str, what: &str) {
        let grammar = self.walker.grammar;
        self.script_in(text, what, &[grammar]);
    }

    /// Reads `text` as a script that one of `grammars` runs (`bash -c`, `ssh host CMD`).
    pub(crate) fn script_in(&mut self, text: &str, what: &str, grammars: &[Grammar]) {
        let stdin = self.stdin.clone();
        self.walker.reread(text, self.part, &stdin, what, grammars);
    }

    /// Reads `text` as a script that gets no input of its own.
    pub(crate) fn script_without_input(&mut self, text: &str, what: &str) {
        let grammar = self.walker.grammar;
        self.script_without_input_in(text, what, &[grammar]);
    }

    /// Reads `text` as a script of one of `grammars` that gets no input of its own.
    pub(crate) fn script_without_input_in(&mut self, text: &str, what: &str, grammars: &[Grammar]) {
        self.walker
            .reread(text, self.part, &Stdin::Empty, what, grammars);
    }

    /// CLASSIFY-8: `text` is evaluated as arithmetic by bash (`let`, `declare`, `read`,
    /// `printf -v`, `test -v`): the code in its subscripts counts.
    pub(crate) fn evaluated(&mut self, text: &str, what: &str) {
        self.walker.evaluated_text(text, self.part, what);
    }

    /// CLASSIFY-8: `text` is handed to another program's environment (`env x=V`, `sudo
    /// x=V`), where a bash may evaluate it as arithmetic.
    pub(crate) fn evaluated_by_child(&mut self, text: &str, what: &str) {
        self.walker.evaluated_by_child(text, self.part, what);
    }

    /// CLASSIFY-8: `text` is read as arithmetic (`let`, `declare -i`): a variable holding
    /// data that it names counts.
    pub(crate) fn arithmetic(&mut self, text: &str, what: &str) {
        self.walker.data_in_arithmetic(text, self.part, what);
    }

    /// The grammar of the reading being walked (CLASSIFY-8).
    pub(crate) fn grammar(&self) -> Grammar {
        self.walker.grammar
    }

    /// The interpreter the command is pinned to (CLASSIFY-8).
    pub(crate) fn shell(&self) -> Shell {
        self.walker.shell
    }

    /// CLASSIFY-8: `name` is assigned from data (`read`, `mapfile`, `getopts`, `printf -v`).
    pub(crate) fn assigned_from_data(&mut self, name: &str) {
        self.walker.assigned_from_data(name);
    }

    /// SECRET-1: `args` (`args[0]` the program) read what they name, though the command
    /// is classified as it is written (`echo /etc/shadow | xargs cat` reads the path).
    pub(crate) fn secret_reads(&mut self, args: &[Arg<'_>]) {
        self.walker.secrets.command(args);
    }

    /// Where this command's standard input comes from.
    pub(crate) fn stdin(&self) -> Stdin<'i> {
        self.stdin.clone()
    }
}

/// The strictest of the readings of one command (the first on a tie), with the most
/// cautious knowledge of them all; when the readings disagree the reason names the shell.
fn strictest_reading(verdicts: Vec<(Grammar, Classification)>) -> Classification {
    let knowledge = verdicts
        .iter()
        .map(|(_, found)| found.knowledge)
        .max()
        .unwrap_or(Knowledge::Rule);
    let agree = verdicts
        .windows(2)
        .all(|pair| pair[0].1.class == pair[1].1.class);
    // SECRET-1: a secret read in any reading is one (`cat <<< /etc/shadow` does not parse in
    // dash, but bash reads the file).
    let secret = verdicts
        .iter()
        .find(|(_, found)| matches!(found.sensitivity, Sensitivity::Secret { .. }))
        .map(|(_, found)| {
            // The sentence the secret reading's reason ends with.
            let sentence = found
                .reason
                .rfind("; ")
                .map(|at| found.reason[at..].to_string())
                .filter(|sentence| sentence.contains("SECRET-1"))
                .unwrap_or_default();
            (found.sensitivity.clone(), sentence)
        });
    let mut best: Option<(Grammar, Classification)> = None;
    for (grammar, found) in verdicts {
        if best
            .as_ref()
            .is_none_or(|(_, best)| found.class > best.class)
        {
            best = Some((grammar, found));
        }
    }
    let Some((grammar, mut found)) = best else {
        return Classification::new(CommandClass::ReadOnly, "empty command runs nothing");
    };
    if !agree {
        let _ = write!(found.reason, " (as {} reads it)", grammar.shell_name());
    }
    if let Some((sensitivity, sentence)) = secret
        && found.sensitivity == Sensitivity::Ordinary
    {
        found.reason.push_str(&sentence);
        found.sensitivity = sensitivity;
    }
    found.with_knowledge(knowledge)
}

/// CLASSIFY-5: unparseable input is destructive.
fn parse_failure(error: &ParseError) -> Classification {
    Classification::new(
        CommandClass::Destructive,
        format!("could not parse: {error}"),
    )
}

/// The input a simple command reads: its last here-document, here-string or `<` file,
/// or else what its pipeline gives it.
fn simple_input<'s>(simple: &'s SimpleCommand, src: Src<'s>, stdin: &Stdin<'s>) -> Stdin<'s> {
    let mut input = stdin.clone();
    for redirect in &simple.redirects {
        match (&redirect.op, &redirect.target) {
            (RedirectOp::HereDoc, RedirectTarget::HereDoc(id)) => {
                let body = src
                    .heredocs
                    .get(id.0)
                    .map_or("", |heredoc| heredoc.body.as_str());
                input = Stdin::Text(Cow::Borrowed(body));
            }
            (RedirectOp::HereString, RedirectTarget::Word(word)) if word.literal().is_some() => {
                input = Stdin::Text(Cow::Owned(format!("{}\n", word.text)));
            }
            (RedirectOp::HereString, _) => input = Stdin::Pipe("<<<"),
            (RedirectOp::Read | RedirectOp::ReadWrite, _) => input = Stdin::File,
            _ => {}
        }
    }
    input
}

/// What a pipeline stage hands to the next one as input: the text of a static `echo`,
/// the input of a bare `cat`, or else output the classifier cannot predict.
fn pipe_output<'s>(command: &'s Command, src: Src<'s>, stdin: &Stdin<'s>) -> Stdin<'s> {
    let Command::Simple(simple) = command else {
        return Stdin::Pipe("a compound command");
    };
    let Some(program) = simple.words.first() else {
        return Stdin::Pipe("a redirection");
    };
    let all_literal = simple.words.iter().all(|word| word.literal().is_some());
    match program.literal() {
        Some("echo") if all_literal => {
            let mut text = String::new();
            let args = simple.words[1..]
                .iter()
                .skip_while(|word| matches!(word.text.as_str(), "-n" | "-e" | "-E"));
            for (idx, word) in args.enumerate() {
                if idx > 0 {
                    text.push(' ');
                }
                text.push_str(&word.text);
            }
            text.push('\n');
            Stdin::Text(Cow::Owned(text))
        }
        Some("cat")
            if simple.words.len() == 1
                || all_literal && simple.words[1..].iter().all(|word| word.text == "-") =>
        {
            match simple_input(simple, src, stdin) {
                Stdin::Empty => Stdin::Pipe("cat"),
                input => input,
            }
        }
        _ => Stdin::Pipe(&program.text),
    }
}

/// The commands (`$(...)` and backtick bodies) in the subscripts of `text`, or `None` when
/// no subscript holds an expansion; `Some` with no commands when a subscript expands only
/// parameters (`a[$x]`), whose values bash may evaluate again.
///
/// A quoted compound value (`declare -a x='([0]=$(cmd))'`) is expanded by bash as an array
/// assignment: everything after its `=(` counts as if inside a subscript.
fn subscript_code(text: &str) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    let mut code = Vec::new();
    let mut found = false;
    let mut depth = 0usize;
    let compound = text.find("=(").map_or(usize::MAX, |eq| eq + 1);
    let mut at = 0;
    while at < bytes.len() {
        let inside = depth > 0 || at > compound;
        match bytes[at] {
            b'[' => depth += 1,
            b']' if depth > 0 => depth -= 1,
            b'`' if inside => {
                found = true;
                let end = text[at + 1..].find('`').map_or(text.len(), |n| at + 1 + n);
                code.push(&text[at + 1..end]);
                at = end;
            }
            b'$' if inside => {
                found = true;
                if bytes.get(at + 1) == Some(&b'(') {
                    let end = closing_paren(bytes, at + 1);
                    code.push(&text[at + 2..end.min(text.len())]);
                    at = end;
                }
            }
            _ => {}
        }
        at += 1;
    }
    found.then_some(code)
}

/// The index of the `)` that closes the `(` at `open` (or the end of `bytes`).
fn closing_paren(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (at, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

/// At most [`MAX_PART_TEXT`] bytes of `text`, cut at a character boundary.
fn clip(text: &str) -> &str {
    if text.len() <= MAX_PART_TEXT {
        return text;
    }
    let mut end = MAX_PART_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
