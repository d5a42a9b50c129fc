//! A recursive-descent reader of the shell grammar the classifier needs: lists, pipelines,
//! compound commands, function definitions, redirections and here-documents.
//!
//! Words, quotes and expansions are read in `word.rs`; this file holds the structure.
//! Every construct the grammar's shell would reject as a syntax error that matters for
//! classification (an unterminated quote, a dangling `|`, a missing `fi`, a here-string in
//! dash) is a [`ParseError`]. Which constructs a grammar reads is decided in `grammar.rs`
//! (CLASSIFY-8).

use std::fmt;

use crate::grammar::Grammar;

use super::ast::{
    AndOr, Command, Compound, Connector, FunctionDef, HereDoc, HereDocId, List, ListItem, LoopKind,
    Negation, Pipeline, Quoting, Redirect, RedirectOp, RedirectTarget, RunMode, Script,
    SimpleCommand, Word,
};

/// How deeply constructs may nest before the reader gives up (keeps the stack bounded).
const MAX_DEPTH: usize = 64;

/// Why a command string could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct ParseError {
    /// Byte offset in the source where the problem was found.
    pub offset: usize,
    /// What was wrong.
    pub kind: ParseErrorKind,
}

/// The kinds of syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A `'` without its closing quote.
    UnterminatedSingleQuote,
    /// A `"` without its closing quote.
    UnterminatedDoubleQuote,
    /// A `` ` `` without its closing backtick.
    UnterminatedBacktick,
    /// A `$(`, `<(`, `>(` or `$((` without its closing parenthesis.
    UnterminatedSubstitution,
    /// A `${` without its closing brace.
    UnterminatedParameter,
    /// A place where a command was required but none was found.
    MissingCommand,
    /// A redirection operator without a target.
    MissingRedirectTarget,
    /// A compound command missing one of its keywords.
    MissingKeyword(&'static str),
    /// A token that cannot appear where it was found.
    Unexpected(char),
    /// A `for` without a valid variable name.
    BadForVariable,
    /// Constructs nested deeper than the reader allows.
    TooDeep,
    /// An error inside a backtick substitution.
    InBacktick(Box<ParseError>),
    /// A construct the grammar's shell rejects (a here-string in dash, `|&` in ash).
    NotInGrammar(&'static str),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::UnterminatedSingleQuote => f.write_str("unterminated single quote"),
            ParseErrorKind::UnterminatedDoubleQuote => f.write_str("unterminated double quote"),
            ParseErrorKind::UnterminatedBacktick => f.write_str("unterminated backtick"),
            ParseErrorKind::UnterminatedSubstitution => {
                f.write_str("unterminated substitution (missing `)`)")
            }
            ParseErrorKind::UnterminatedParameter => {
                f.write_str("unterminated parameter expansion (missing `}`)")
            }
            ParseErrorKind::MissingCommand => f.write_str("expected a command"),
            ParseErrorKind::MissingRedirectTarget => f.write_str("redirection without a target"),
            ParseErrorKind::MissingKeyword(keyword) => write!(f, "expected `{keyword}`"),
            ParseErrorKind::Unexpected(c) => write!(f, "unexpected `{}`", c.escape_debug()),
            ParseErrorKind::BadForVariable => f.write_str("`for` needs a variable name"),
            ParseErrorKind::TooDeep => f.write_str("commands nested too deeply"),
            ParseErrorKind::InBacktick(inner) => write!(f, "in a backtick substitution: {inner}"),
            ParseErrorKind::NotInGrammar(construct) => {
                write!(f, "{construct} is a syntax error in this shell")
            }
        }
    }
}

impl Script {
    /// Reads a command string the way bash would.
    pub fn parse(source: &str) -> Result<Script, ParseError> {
        Script::parse_in(source, Grammar::Bash)
    }

    /// Reads a command string in the grammar of one interpreter (CLASSIFY-8).
    pub fn parse_in(source: &str, grammar: Grammar) -> Result<Script, ParseError> {
        Script::parse_at_depth(source, 0, grammar)
    }

    /// Reads a nested script (a backtick body, a here-document) at a given nesting depth.
    pub(super) fn parse_at_depth(
        source: &str,
        depth: usize,
        grammar: Grammar,
    ) -> Result<Script, ParseError> {
        let mut parser = Parser::new(source, depth, grammar);
        let body = parser.parse_list()?;
        parser.skip_blanks();
        if let Some(c) = parser.peek_char() {
            return Err(parser.error(ParseErrorKind::Unexpected(c)));
        }
        parser.read_pending_heredocs()?;
        Ok(Script {
            source: source.to_owned(),
            body,
            heredocs: parser.heredocs,
        })
    }
}

/// A here-document whose body has not been read yet.
struct PendingHereDoc {
    id: usize,
    delimiter: String,
    strip_tabs: bool,
    quoting: Quoting,
}

/// The reader's state: the source, a cursor and the here-documents met so far.
pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) grammar: Grammar,
    /// Whether the cursor is inside a double-quoted part (where `$'` is a plain `$`).
    pub(super) in_double_quotes: bool,
    pub(super) heredocs: Vec<HereDoc>,
    pending: Vec<PendingHereDoc>,
}

/// Reserved words that end a list (the caller decides which one it expected).
const LIST_ENDERS: [&str; 8] = ["then", "elif", "else", "fi", "do", "done", "esac", "}"];

impl<'a> Parser<'a> {
    fn new(src: &'a str, depth: usize, grammar: Grammar) -> Parser<'a> {
        Parser {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            depth,
            grammar,
            in_double_quotes: false,
            heredocs: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// A reader placed at `pos` inside `src` (for substitutions in here-document bodies).
    pub(super) fn nested(src: &'a str, pos: usize, depth: usize, grammar: Grammar) -> Parser<'a> {
        Parser {
            pos,
            ..Parser::new(src, depth, grammar)
        }
    }

    pub(super) fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError {
            offset: self.pos,
            kind,
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    pub(super) fn peek_char(&self) -> Option<char> {
        self.src
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
    }

    pub(super) fn starts_with(&self, text: &str) -> bool {
        self.bytes[self.pos..].starts_with(text.as_bytes())
    }

    pub(super) fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(ParseErrorKind::TooDeep));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips blanks, line continuations and comments (a `#` here starts a word).
    pub(super) fn skip_blanks(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\\' if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                b'#' => {
                    while let Some(b) = self.peek() {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consumes one newline and reads the bodies of any here-documents waiting for it.
    fn newline(&mut self) -> Result<(), ParseError> {
        self.pos += 1;
        self.read_pending_heredocs()
    }

    /// Skips blanks and newlines (where the grammar allows a line break).
    fn skip_linebreaks(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            if self.peek() == Some(b'\n') {
                self.newline()?;
            } else {
                return Ok(());
            }
        }
    }

    /// Whether `word` starts at the cursor as a separate reserved word.
    fn at_reserved(&self, word: &str) -> bool {
        self.starts_with(word) && is_word_end(self.bytes.get(self.pos + word.len()).copied())
    }

    fn at_list_end(&self) -> bool {
        match self.peek() {
            None | Some(b')') => true,
            Some(b';') => matches!(self.peek_at(1), Some(b';' | b'&')),
            Some(_) => LIST_ENDERS.iter().any(|word| self.at_reserved(word)),
        }
    }

    fn expect_reserved(&mut self, word: &'static str) -> Result<(), ParseError> {
        self.skip_linebreaks()?;
        if !self.at_reserved(word) {
            return Err(self.error(ParseErrorKind::MissingKeyword(word)));
        }
        self.pos += word.len();
        Ok(())
    }

    /// A list that must hold at least one command (compound bodies).
    fn parse_body(&mut self) -> Result<List, ParseError> {
        let list = self.parse_list()?;
        if list.items.is_empty() {
            return Err(self.error(ParseErrorKind::MissingCommand));
        }
        Ok(list)
    }

    /// `and_or ((';' | '&' | newline) and_or)*`, up to a list ender.
    pub(super) fn parse_list(&mut self) -> Result<List, ParseError> {
        let mut items = Vec::new();
        loop {
            self.skip_linebreaks()?;
            if self.at_list_end() {
                break;
            }
            let and_or = self.parse_and_or()?;
            self.skip_blanks();
            let mode = match (self.peek(), self.peek_at(1)) {
                (Some(b';'), next) if !matches!(next, Some(b';' | b'&')) => {
                    self.pos += 1;
                    RunMode::Foreground
                }
                (Some(b'&'), _) => {
                    self.pos += 1;
                    RunMode::Background
                }
                (Some(b'\n'), _) => RunMode::Foreground,
                _ => {
                    items.push(ListItem {
                        and_or,
                        mode: RunMode::Foreground,
                    });
                    break;
                }
            };
            items.push(ListItem { and_or, mode });
        }
        Ok(List { items })
    }

    fn parse_and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.parse_pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.skip_blanks();
            let connector = if self.starts_with("&&") {
                Connector::And
            } else if self.starts_with("||") {
                Connector::Or
            } else {
                break;
            };
            self.pos += 2;
            self.skip_linebreaks()?;
            rest.push((connector, self.parse_pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn parse_pipeline(&mut self) -> Result<Pipeline, ParseError> {
        self.skip_blanks();
        let mut negation = Negation::Plain;
        if self.at_reserved("!") {
            self.pos += 1;
            negation = Negation::Negated;
        }
        let mut commands = vec![self.parse_command()?];
        loop {
            self.skip_blanks();
            if self.peek() != Some(b'|') || self.peek_at(1) == Some(b'|') {
                break;
            }
            if self.peek_at(1) == Some(b'&') && !self.grammar.reads_pipe_both() {
                return Err(self.error(ParseErrorKind::NotInGrammar("`|&`")));
            }
            self.pos += if self.peek_at(1) == Some(b'&') { 2 } else { 1 };
            self.skip_linebreaks()?;
            commands.push(self.parse_command()?);
        }
        Ok(Pipeline { negation, commands })
    }

    fn parse_command(&mut self) -> Result<Command, ParseError> {
        self.enter()?;
        self.skip_blanks();
        let command = if self.grammar.reads_function_keyword() && self.at_reserved("function") {
            self.pos += "function".len();
            self.skip_blanks();
            let name = self.parse_word()?;
            self.skip_blanks();
            if self.starts_with("(") {
                self.pos += 1;
                self.skip_blanks();
                self.expect_char(b')')?;
            }
            self.parse_function_body(name.text)?
        } else if let Some(compound) = self.parse_compound()? {
            let redirects = self.parse_trailing_redirects()?;
            Command::Compound(Box::new(compound), redirects)
        } else {
            self.parse_simple()?
        };
        self.leave();
        Ok(command)
    }

    fn expect_char(&mut self, expected: u8) -> Result<(), ParseError> {
        if self.peek() != Some(expected) {
            let kind = match self.peek_char() {
                Some(c) => ParseErrorKind::Unexpected(c),
                None => ParseErrorKind::MissingKeyword(if expected == b')' { ")" } else { "}" }),
            };
            return Err(self.error(kind));
        }
        self.pos += 1;
        Ok(())
    }

    fn parse_function_body(&mut self, name: String) -> Result<Command, ParseError> {
        self.skip_linebreaks()?;
        let Some(body) = self.parse_compound()? else {
            return Err(self.error(ParseErrorKind::MissingKeyword("{")));
        };
        let redirects = self.parse_trailing_redirects()?;
        Ok(Command::FunctionDef(Box::new(FunctionDef {
            name,
            body,
            redirects,
        })))
    }

    fn parse_trailing_redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            if !self.at_redirect() {
                return Ok(redirects);
            }
            redirects.push(self.parse_redirect()?);
        }
    }

    /// A compound command at the cursor, or `None` when a simple command starts here.
    fn parse_compound(&mut self) -> Result<Option<Compound>, ParseError> {
        if self.grammar.reads_arith_command() && self.starts_with("((") {
            let start = self.pos;
            if let Some(expansions) = self.try_arith_command()? {
                return Ok(Some(Compound::Arith(expansions)));
            }
            self.pos = start;
        }
        let compound = if self.starts_with("(") {
            self.pos += 1;
            let list = self.parse_body()?;
            self.expect_char(b')')?;
            Compound::Subshell(list)
        } else if self.at_reserved("{") {
            self.pos += 1;
            let list = self.parse_body()?;
            self.expect_reserved("}")?;
            Compound::Group(list)
        } else if self.at_reserved("if") {
            self.parse_if()?
        } else if self.at_reserved("while") || self.at_reserved("until") {
            let kind = if self.at_reserved("while") {
                LoopKind::While
            } else {
                LoopKind::Until
            };
            self.pos += 5;
            let condition = self.parse_body()?;
            self.expect_reserved("do")?;
            let body = self.parse_body()?;
            self.expect_reserved("done")?;
            Compound::Loop {
                kind,
                condition,
                body,
            }
        } else if self.at_reserved("for")
            || self.grammar.reads_select() && self.at_reserved("select")
        {
            self.parse_for()?
        } else if self.at_reserved("case") {
            self.parse_case()?
        } else if self.grammar.reads_double_brackets() && self.at_reserved("[[") {
            self.parse_test()?
        } else {
            return Ok(None);
        };
        Ok(Some(compound))
    }

    fn parse_if(&mut self) -> Result<Compound, ParseError> {
        self.pos += 2;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let condition = self.parse_body()?;
            self.expect_reserved("then")?;
            let body = self.parse_body()?;
            branches.push((condition, body));
            self.skip_linebreaks()?;
            if self.at_reserved("elif") {
                self.pos += 4;
                continue;
            }
            if self.at_reserved("else") {
                self.pos += 4;
                otherwise = Some(self.parse_body()?);
            }
            self.expect_reserved("fi")?;
            return Ok(Compound::If {
                branches,
                otherwise,
            });
        }
    }

    fn parse_for(&mut self) -> Result<Compound, ParseError> {
        self.pos += if self.at_reserved("for") { 3 } else { 6 };
        self.skip_blanks();
        if self.grammar.reads_arith_command() && self.starts_with("((") {
            let Some(header) = self.try_arith_command()? else {
                return Err(self.error(ParseErrorKind::UnterminatedSubstitution));
            };
            self.skip_blanks();
            if self.peek() == Some(b';') {
                self.pos += 1;
            }
            let body = self.parse_do_done()?;
            return Ok(Compound::ArithFor { header, body });
        }
        let name = self.parse_word()?;
        if !super::ast::is_name(&name.text) || name.quoting == Quoting::Quoted {
            return Err(self.error(ParseErrorKind::BadForVariable));
        }
        self.skip_linebreaks()?;
        let mut words = Vec::new();
        if self.at_reserved("in") {
            self.pos += 2;
            loop {
                self.skip_blanks();
                match self.peek() {
                    None | Some(b';' | b'\n') => break,
                    _ if self.at_word_end() => return Err(self.unexpected_here()),
                    _ => words.push(self.parse_word()?),
                }
            }
        }
        self.skip_blanks();
        if self.peek() == Some(b';') {
            self.pos += 1;
        }
        let body = self.parse_do_done()?;
        Ok(Compound::For {
            name: name.text,
            words,
            body,
        })
    }

    fn parse_do_done(&mut self) -> Result<List, ParseError> {
        self.expect_reserved("do")?;
        let body = self.parse_body()?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    fn parse_case(&mut self) -> Result<Compound, ParseError> {
        self.pos += 4;
        self.skip_blanks();
        let word = self.parse_word()?;
        self.expect_reserved("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_linebreaks()?;
            if self.at_reserved("esac") {
                self.pos += 4;
                return Ok(Compound::Case { word, arms });
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            let mut patterns = Vec::new();
            loop {
                self.skip_blanks();
                if self.at_word_end() {
                    return Err(self.unexpected_here());
                }
                patterns.push(self.parse_word()?);
                self.skip_blanks();
                if self.peek() == Some(b'|') {
                    self.pos += 1;
                } else {
                    break;
                }
            }
            self.expect_char(b')')?;
            let body = self.parse_list()?;
            arms.push((patterns, body));
            self.skip_linebreaks()?;
            let fallthrough = self.grammar.reads_case_fallthrough();
            if fallthrough && self.starts_with(";;&") {
                self.pos += 3;
            } else if self.starts_with(";;") || fallthrough && self.starts_with(";&") {
                self.pos += 2;
            } else if !self.at_reserved("esac") {
                return Err(self.error(ParseErrorKind::MissingKeyword("esac")));
            }
        }
    }

    /// `[[ ... ]]`: inside, `&&`, `||`, `(`, `<` and friends are plain test syntax.
    fn parse_test(&mut self) -> Result<Compound, ParseError> {
        self.pos += 2;
        let mut words = Vec::new();
        loop {
            self.skip_blanks();
            if self.at_reserved("]]") {
                self.pos += 2;
                return Ok(Compound::Test(words));
            }
            match self.peek() {
                None => return Err(self.error(ParseErrorKind::MissingKeyword("]]"))),
                Some(b'\n') => self.newline()?,
                Some(b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b';') => self.pos += 1,
                Some(_) => words.push(self.parse_word()?),
            }
        }
    }

    pub(super) fn unexpected_here(&self) -> ParseError {
        match self.peek_char() {
            Some(c) => self.error(ParseErrorKind::Unexpected(c)),
            None => self.error(ParseErrorKind::MissingCommand),
        }
    }

    /// Whether the cursor is at a byte that ends a word.
    pub(super) fn at_word_end(&self) -> bool {
        is_word_end(self.peek())
    }

    fn parse_simple(&mut self) -> Result<Command, ParseError> {
        let start = self.pos;
        let mut end = start;
        let mut assignments = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            if self.at_redirect() {
                redirects.push(self.parse_redirect()?);
                end = self.pos;
                continue;
            }
            match self.peek() {
                None | Some(b';' | b'&' | b'|' | b')' | b'\n') => break,
                Some(b'(')
                    if words.len() == 1 && assignments.is_empty() && redirects.is_empty() =>
                {
                    self.pos += 1;
                    self.skip_blanks();
                    self.expect_char(b')')?;
                    let name = words.pop().map(|word| word.text).unwrap_or_default();
                    return self.parse_function_body(name);
                }
                Some(b'(') => return Err(self.unexpected_here()),
                Some(_) => {}
            }
            let before = self.pos;
            let mut word = self.parse_word()?;
            if self.pos == before {
                // Nothing this grammar reads as a word starts here.
                return Err(self.unexpected_here());
            }
            if words.is_empty() && self.is_assignment(&word) {
                if self.grammar.reads_arrays()
                    && word.text.ends_with('=')
                    && self.peek() == Some(b'(')
                {
                    self.parse_array_value(&mut word)?;
                }
                assignments.push(word);
            } else {
                words.push(word);
            }
            end = self.pos;
        }
        if assignments.is_empty() && words.is_empty() && redirects.is_empty() {
            return Err(self.unexpected_here());
        }
        Ok(Command::Simple(SimpleCommand {
            assignments,
            words,
            redirects,
            span: start..end,
        }))
    }

    /// Whether `word` assigns a variable in this grammar: `a[1]=x` does only where arrays
    /// exist (dash runs a program named `a[1]=x`).
    fn is_assignment(&self, word: &Word) -> bool {
        word.assignment_name().is_some()
            && (self.grammar.reads_arrays()
                || !word
                    .text
                    .split('=')
                    .next()
                    .unwrap_or_default()
                    .contains('['))
    }

    /// `NAME=(a b c)`: the elements' expansions join the assignment word.
    fn parse_array_value(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let open = self.pos;
        self.pos += 1;
        loop {
            self.skip_linebreaks()?;
            match self.peek() {
                None => {
                    return Err(ParseError {
                        offset: open,
                        kind: ParseErrorKind::UnterminatedSubstitution,
                    });
                }
                Some(b')') => {
                    self.pos += 1;
                    break;
                }
                Some(_) if self.at_word_end() => return Err(self.unexpected_here()),
                Some(_) => {
                    let element = self.parse_word()?;
                    word.expansions.extend(element.expansions);
                }
            }
        }
        word.text.push_str(&self.src[open..self.pos]);
        Ok(())
    }

    /// Whether a redirection operator (with an optional descriptor) starts at the cursor.
    pub(super) fn at_redirect(&self) -> bool {
        let mut at = self.pos;
        while self.bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == self.pos
            && self.bytes.get(at) == Some(&b'{')
            && let Some(close) = self.bytes[at..].iter().take(64).position(|&b| b == b'}')
            && super::ast::is_name(&self.src[at + 1..at + close])
        {
            at += close + 1;
        }
        match (self.bytes.get(at), self.bytes.get(at + 1)) {
            // `<(` is a process substitution where the grammar has them, else a redirection.
            (Some(b'<' | b'>'), Some(b'(')) => {
                at != self.pos || !self.grammar.reads_process_substitution()
            }
            (Some(b'<' | b'>'), _) => true,
            (Some(b'&'), Some(b'>')) => at == self.pos && self.grammar.reads_and_redirect(),
            _ => false,
        }
    }

    fn parse_redirect(&mut self) -> Result<Redirect, ParseError> {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.peek() == Some(b'{') {
            while self.peek().is_some_and(|b| b != b'}') {
                self.pos += 1;
            }
            self.pos += 1;
        }
        const OPS: [(&str, RedirectOp); 12] = [
            ("<<<", RedirectOp::HereString),
            ("<<-", RedirectOp::HereDoc),
            ("<<", RedirectOp::HereDoc),
            ("<>", RedirectOp::ReadWrite),
            ("<&", RedirectOp::Duplicate),
            ("<", RedirectOp::Read),
            (">>", RedirectOp::Append),
            (">|", RedirectOp::Write),
            (">&", RedirectOp::Duplicate),
            (">", RedirectOp::Write),
            ("&>>", RedirectOp::AppendAll),
            ("&>", RedirectOp::WriteAll),
        ];
        let Some(&(spelling, mut op)) = OPS.iter().find(|(spelling, _)| self.starts_with(spelling))
        else {
            return Err(self.unexpected_here());
        };
        if op == RedirectOp::HereString && !self.grammar.reads_here_strings() {
            return Err(self.error(ParseErrorKind::NotInGrammar("a here-string (`<<<`)")));
        }
        if op == RedirectOp::AppendAll && !self.grammar.reads_and_append() {
            return Err(self.error(ParseErrorKind::NotInGrammar("`&>>`")));
        }
        self.pos += spelling.len();
        self.skip_blanks();
        if self.at_word_end() {
            return Err(self.error(ParseErrorKind::MissingRedirectTarget));
        }
        let word = self.parse_word()?;
        if op == RedirectOp::HereDoc {
            let id = self.heredocs.len();
            self.heredocs.push(HereDoc {
                body: String::new(),
                expansions: Vec::new(),
            });
            self.pending.push(PendingHereDoc {
                id,
                delimiter: word.text,
                strip_tabs: spelling == "<<-",
                quoting: word.quoting,
            });
            return Ok(Redirect {
                op,
                target: RedirectTarget::HereDoc(HereDocId(id)),
            });
        }
        // `>&file` (not a descriptor number or `-`) sends stdout and stderr to the file.
        let is_descriptor = word.text == "-" || word.text.bytes().all(|b| b.is_ascii_digit());
        if op == RedirectOp::Duplicate && spelling == ">&" && !is_descriptor {
            if !self.grammar.reads_dup_to_file() && word.expansions.is_empty() {
                return Err(self.error(ParseErrorKind::NotInGrammar("`>&` to a file")));
            }
            op = RedirectOp::WriteAll;
        }
        Ok(Redirect {
            op,
            target: RedirectTarget::Word(word),
        })
    }

    /// Reads the bodies of the here-documents whose operator line just ended.
    pub(super) fn read_pending_heredocs(&mut self) -> Result<(), ParseError> {
        let pending = std::mem::take(&mut self.pending);
        for heredoc in pending {
            let mut body = String::new();
            while self.pos < self.bytes.len() {
                let line_end = self.bytes[self.pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(self.bytes.len(), |n| self.pos + n);
                let mut line = &self.src[self.pos..line_end];
                self.pos = (line_end + 1).min(self.bytes.len());
                if heredoc.strip_tabs {
                    line = line.trim_start_matches('\t');
                }
                if line == heredoc.delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            let expansions = match heredoc.quoting {
                Quoting::Bare => super::word::heredoc_expansions(&body, self.depth, self.grammar)?,
                Quoting::Quoted => Vec::new(),
            };
            if let Some(slot) = self.heredocs.get_mut(heredoc.id) {
                *slot = HereDoc { body, expansions };
            }
        }
        Ok(())
    }
}

/// Whether a byte (or the end of input) ends a word.
pub(super) fn is_word_end(byte: Option<u8>) -> bool {
    matches!(
        byte,
        None | Some(b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')')
    )
}
