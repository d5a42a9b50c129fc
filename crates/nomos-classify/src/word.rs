//! Reading one shell word: quotes, escapes, parameter, command, process and arithmetic
//! expansions, and the substitutions inside here-document bodies.

use super::ast::{Expansion, Quoting, Script, Word};
use super::parser::{ParseError, ParseErrorKind, Parser};
use crate::grammar::Grammar;

/// Where a word may be a brace expansion (`{a,b}`, `{1..3}`), read from its bare text.
#[derive(Default)]
struct Braces {
    open: usize,
    separated: bool,
    found: bool,
}

impl Braces {
    fn scan(&mut self, bare: &str) {
        let bytes = bare.as_bytes();
        for (at, &b) in bytes.iter().enumerate() {
            match b {
                b'{' => self.open += 1,
                b',' if self.open > 0 => self.separated = true,
                b'.' if self.open > 0 && bytes.get(at + 1) == Some(&b'.') => self.separated = true,
                b'}' if self.open > 0 => {
                    self.open -= 1;
                    if self.separated {
                        self.found = true;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Marks the start of a word's first quoted, escaped or expanded part.
fn mark(word: &mut Word) {
    word.literal_prefix = word.literal_prefix.min(word.text.len());
}

fn quoted(word: &mut Word) {
    mark(word);
    word.quoting = Quoting::Quoted;
}

impl Parser<'_> {
    /// Reads the word at the cursor (the caller has checked that one starts here).
    pub(super) fn parse_word(&mut self) -> Result<Word, ParseError> {
        let mut word = Word {
            text: String::new(),
            quoting: Quoting::Bare,
            literal_prefix: usize::MAX,
            expansions: Vec::new(),
        };
        let start = self.pos;
        let mut braces = Braces::default();
        loop {
            match self.peek() {
                Some(b'\\') => self.parse_escape(&mut word),
                Some(b'\'') => {
                    quoted(&mut word);
                    let open = self.pos;
                    self.pos += 1;
                    let Some(len) = self.bytes[self.pos..].iter().position(|&b| b == b'\'') else {
                        return Err(ParseError {
                            offset: open,
                            kind: ParseErrorKind::UnterminatedSingleQuote,
                        });
                    };
                    word.text.push_str(&self.src[self.pos..self.pos + len]);
                    self.pos += len + 1;
                }
                Some(b'"') => {
                    quoted(&mut word);
                    self.parse_double_quoted(&mut word)?;
                }
                Some(b'$') => self.parse_dollar(&mut word)?,
                Some(b'`') => self.parse_backtick(&mut word)?,
                Some(b'<' | b'>')
                    if self.pos == start
                        && self.peek_at(1) == Some(b'(')
                        && self.grammar.reads_process_substitution() =>
                {
                    self.parse_process_substitution(&mut word)?;
                }
                _ if self.at_word_end() => break,
                _ => {
                    let run = self.pos;
                    self.literal_run(&mut word);
                    braces.scan(&self.src[run..self.pos]);
                }
            }
        }
        // CLASSIFY-8: bash expands `{rm,-rf,x}` to three words, known only when it runs.
        if braces.found && self.grammar.reads_brace_expansion() {
            mark(&mut word);
            word.expansions.push(Expansion::Parameter);
        }
        if word.literal_prefix == usize::MAX {
            word.literal_prefix = word.text.len();
        }
        Ok(word)
    }

    /// Copies bare text up to the next byte with a meaning.
    fn literal_run(&mut self, word: &mut Word) {
        let start = self.pos;
        self.pos += 1;
        while let Some(b) = self.peek() {
            if matches!(b, b'\\' | b'\'' | b'"' | b'$' | b'`') || self.at_word_end() {
                break;
            }
            self.pos += 1;
        }
        // The scan stops only at ASCII bytes, which are always character boundaries.
        word.text.push_str(&self.src[start..self.pos]);
    }

    fn parse_escape(&mut self, word: &mut Word) {
        self.pos += 1;
        match self.peek_char() {
            Some('\n') => self.pos += 1,
            Some(c) => {
                quoted(word);
                word.text.push(c);
                self.pos += c.len_utf8();
            }
            None => word.text.push('\\'),
        }
    }

    /// A double-quoted part: inside it `$'` and `$"` are a plain `$` in every shell.
    fn parse_double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let outer = std::mem::replace(&mut self.in_double_quotes, true);
        let res = self.parse_double_quoted_body(word);
        self.in_double_quotes = outer;
        res
    }

    fn parse_double_quoted_body(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let open = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => {
                    return Err(ParseError {
                        offset: open,
                        kind: ParseErrorKind::UnterminatedDoubleQuote,
                    });
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    match self.peek_at(1) {
                        Some(b'\n') => {}
                        Some(c @ (b'$' | b'`' | b'"' | b'\\')) => word.text.push(char::from(c)),
                        _ => {
                            word.text.push('\\');
                            self.pos += 1;
                            continue;
                        }
                    }
                    self.pos += 2;
                }
                Some(b'$') => self.parse_dollar(word)?,
                Some(b'`') => self.parse_backtick(word)?,
                Some(_) => {
                    let start = self.pos;
                    while self
                        .peek()
                        .is_some_and(|b| !matches!(b, b'"' | b'\\' | b'$' | b'`'))
                    {
                        self.pos += 1;
                    }
                    word.text.push_str(&self.src[start..self.pos]);
                }
            }
        }
    }

    /// `$name`, `${...}`, `$(...)`, `$((...))`, `$'...'` or a lone `$`.
    fn parse_dollar(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let start = self.pos;
        match self.peek_at(1) {
            Some(b'(') if self.peek_at(2) == Some(b'(') => {
                self.pos += 3;
                let mut inner = Vec::new();
                let arithmetic = self.scan_arith(&mut inner)?
                    && !(self.grammar.reads_case_in_arithmetic_as_a_subshell()
                        && inner.iter().any(Expansion::holds_case));
                if arithmetic {
                    mark(word);
                    word.expansions.extend(inner);
                    word.expansions.push(Expansion::Arithmetic);
                    word.text.push_str(&self.src[start..self.pos]);
                    return Ok(());
                }
                // `$( (subshell) )`: not arithmetic after all.
                self.pos = start;
                self.parse_command_substitution(word)
            }
            Some(b'(') => self.parse_command_substitution(word),
            Some(b'{') => {
                mark(word);
                let text_len = word.text.len();
                self.pos += 2;
                let mut depth = 1usize;
                loop {
                    match self.peek() {
                        None => {
                            return Err(ParseError {
                                offset: start,
                                kind: ParseErrorKind::UnterminatedParameter,
                            });
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Some(b'{') => {
                            self.pos += 1;
                            depth += 1;
                        }
                        Some(b'\\') => self.pos = (self.pos + 2).min(self.bytes.len()),
                        Some(b'\'') => {
                            // Bash evaluates `${a['$(cmd)']}` and `${x:'$(cmd)'}` as
                            // arithmetic, where single quotes do not quote: the code counts.
                            let mut scratch = Word::scratch();
                            self.parse_single_quoted_in_parameter(&mut scratch)?;
                            let code = heredoc_expansions(&scratch.text, self.depth, self.grammar)?;
                            word.expansions.extend(code);
                        }
                        Some(b'"') => self.parse_double_quoted(word)?,
                        Some(b'$') => self.parse_dollar(word)?,
                        Some(b'`') => self.parse_backtick(word)?,
                        Some(_) => self.pos += 1,
                    }
                }
                // The text keeps the source spelling; inner pushes above are replaced.
                word.text.truncate(text_len);
                word.text.push_str(&self.src[start..self.pos]);
                word.expansions.push(Expansion::Parameter);
                Ok(())
            }
            Some(b'\'') if self.grammar.reads_ansi_c_quotes() && !self.in_double_quotes => {
                quoted(word);
                self.pos += 2;
                self.parse_ansi_c(word, start)
            }
            Some(b'"') if self.grammar.reads_locale_quotes() && !self.in_double_quotes => {
                quoted(word);
                self.pos += 1;
                self.parse_double_quoted(word)
            }
            Some(b) if b == b'_' || b.is_ascii_alphabetic() => {
                mark(word);
                self.pos += 1;
                while self
                    .peek()
                    .is_some_and(|b| b == b'_' || b.is_ascii_alphanumeric())
                {
                    self.pos += 1;
                }
                word.text.push_str(&self.src[start..self.pos]);
                word.expansions.push(Expansion::Parameter);
                Ok(())
            }
            Some(b'0'..=b'9' | b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => {
                mark(word);
                self.pos += 2;
                word.text.push_str(&self.src[start..self.pos]);
                word.expansions.push(Expansion::Parameter);
                Ok(())
            }
            _ => {
                self.pos += 1;
                word.text.push('$');
                Ok(())
            }
        }
    }

    fn parse_single_quoted_in_parameter(&mut self, scratch: &mut Word) -> Result<(), ParseError> {
        let open = self.pos;
        self.pos += 1;
        let Some(len) = self.bytes[self.pos..].iter().position(|&b| b == b'\'') else {
            return Err(ParseError {
                offset: open,
                kind: ParseErrorKind::UnterminatedSingleQuote,
            });
        };
        scratch.text.push_str(&self.src[self.pos..self.pos + len]);
        self.pos += len + 1;
        Ok(())
    }

    /// `$'...'`: backslash escapes inside single quotes.
    fn parse_ansi_c(&mut self, word: &mut Word, open: usize) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                None => {
                    return Err(ParseError {
                        offset: open,
                        kind: ParseErrorKind::UnterminatedSingleQuote,
                    });
                }
                Some(b'\'') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(c) = self.peek_char() else { continue };
                    self.pos += c.len_utf8();
                    let decoded = match c {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'e' | 'E' => '\u{1b}',
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'v' => '\u{b}',
                        'x' => self.escaped_number(16, 2),
                        'u' => self.escaped_number(16, 4),
                        'U' => self.escaped_number(16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.escaped_number(8, 3)
                        }
                        'c' => match self.peek() {
                            Some(b) => {
                                self.pos += 1;
                                char::from(b.to_ascii_uppercase() ^ 0x40)
                            }
                            None => 'c',
                        },
                        other => other,
                    };
                    word.text.push(decoded);
                }
                Some(_) => {
                    let Some(c) = self.peek_char() else { continue };
                    self.pos += c.len_utf8();
                    word.text.push(c);
                }
            }
        }
    }

    /// The character of up to `max` digits in `radix` after a `$'...'` escape (`\x41`,
    /// `\101`, `\u00e9`); a lone escape letter stands for itself.
    fn escaped_number(&mut self, radix: u32, max: usize) -> char {
        let mut value = 0u32;
        let mut digits = 0;
        while digits < max
            && let Some(digit) = self.peek().and_then(|b| char::from(b).to_digit(radix))
        {
            value = value * radix + digit;
            self.pos += 1;
            digits += 1;
        }
        if digits == 0 {
            return if radix == 16 { 'x' } else { '0' };
        }
        char::from_u32(value).unwrap_or('\u{fffd}')
    }

    fn parse_command_substitution(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let start = self.pos;
        mark(word);
        self.pos += 2;
        self.enter()?;
        // Quoting starts afresh inside a substitution: `"$(echo $'x')"`.
        let outer = std::mem::replace(&mut self.in_double_quotes, false);
        let list = self.parse_list();
        self.in_double_quotes = outer;
        let list = list?;
        self.leave();
        self.skip_blanks();
        if self.peek() != Some(b')') {
            return Err(ParseError {
                offset: start,
                kind: ParseErrorKind::UnterminatedSubstitution,
            });
        }
        self.pos += 1;
        word.text.push_str(&self.src[start..self.pos]);
        word.expansions.push(Expansion::Command(list));
        Ok(())
    }

    fn parse_process_substitution(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let start = self.pos;
        mark(word);
        self.pos += 2;
        self.enter()?;
        // Quoting starts afresh inside a substitution: `"$(echo $'x')"`.
        let outer = std::mem::replace(&mut self.in_double_quotes, false);
        let list = self.parse_list();
        self.in_double_quotes = outer;
        let list = list?;
        self.leave();
        self.skip_blanks();
        if self.peek() != Some(b')') {
            return Err(ParseError {
                offset: start,
                kind: ParseErrorKind::UnterminatedSubstitution,
            });
        }
        self.pos += 1;
        word.text.push_str(&self.src[start..self.pos]);
        word.expansions.push(Expansion::Process(list));
        Ok(())
    }

    /// `` `...` ``: the body, with its backslash escapes removed, is a script of its own.
    fn parse_backtick(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let start = self.pos;
        mark(word);
        self.pos += 1;
        let mut body = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(ParseError {
                        offset: start,
                        kind: ParseErrorKind::UnterminatedBacktick,
                    });
                }
                Some(b'`') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') if matches!(self.peek_at(1), Some(b'`' | b'\\' | b'$')) => {
                    body.push(char::from(self.bytes[self.pos + 1]));
                    self.pos += 2;
                }
                Some(_) => {
                    let Some(c) = self.peek_char() else { break };
                    body.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
        let script =
            Script::parse_at_depth(&body, self.depth + 1, self.grammar).map_err(|inner| {
                ParseError {
                    offset: start,
                    kind: ParseErrorKind::InBacktick(Box::new(inner)),
                }
            })?;
        word.text.push_str(&self.src[start..self.pos]);
        word.expansions.push(Expansion::Backtick(Box::new(script)));
        Ok(())
    }

    /// Scans arithmetic after its opening `((` up to the matching `))`, collecting
    /// substitutions. Returns `false` (cursor anywhere) when the text is not arithmetic.
    pub(super) fn scan_arith(&mut self, found: &mut Vec<Expansion>) -> Result<bool, ParseError> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Ok(false),
                Some(b'(') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b')') if depth == 0 => {
                    if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        return Ok(true);
                    }
                    return Ok(false);
                }
                Some(b')') => {
                    depth -= 1;
                    self.pos += 1;
                }
                // Inside arithmetic a single quote does not quote, in any of the shells:
                // `$(( '$(cmd)' ))` runs `cmd` (CLASSIFY-8), so it is a plain character.
                Some(b'$' | b'`' | b'"') => {
                    let mut scratch = Word::scratch();
                    match self.peek() {
                        Some(b'$') => self.parse_dollar(&mut scratch)?,
                        Some(b'`') => self.parse_backtick(&mut scratch)?,
                        _ => self.parse_double_quoted(&mut scratch)?,
                    }
                    found.append(&mut scratch.expansions);
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// `((...))` as a command; `None` when the parentheses are two subshells instead.
    pub(super) fn try_arith_command(&mut self) -> Result<Option<Vec<Expansion>>, ParseError> {
        self.pos += 2;
        let mut found = Vec::new();
        if self.scan_arith(&mut found)? {
            Ok(Some(found))
        } else {
            Ok(None)
        }
    }
}

impl Word {
    /// An empty word used to collect expansions the caller keeps apart from the text.
    fn scratch() -> Word {
        Word {
            text: String::new(),
            quoting: Quoting::Bare,
            literal_prefix: 0,
            expansions: Vec::new(),
        }
    }
}

/// The substitutions in an unquoted here-document body (it expands like a double-quoted word).
///
/// Each `$(...)` becomes a script of its own, since spans inside the body do not index
/// the enclosing source.
pub(super) fn heredoc_expansions(
    body: &str,
    depth: usize,
    grammar: Grammar,
) -> Result<Vec<Expansion>, ParseError> {
    let mut found = Vec::new();
    let mut at = 0;
    let bytes = body.as_bytes();
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'$' | b'`' => {
                // Each substitution is read from its own slice, so its script owns only
                // the text it spans.
                let rest = &body[at..];
                let mut parser = Parser::nested(rest, 0, depth + 1, grammar);
                // A here-document body expands like a double-quoted word.
                parser.in_double_quotes = true;
                let mut scratch = Word::scratch();
                if bytes[at] == b'$' {
                    parser.parse_dollar(&mut scratch)?;
                } else {
                    parser.parse_backtick(&mut scratch)?;
                }
                let end = parser.pos.max(1);
                let heredocs = std::mem::take(&mut parser.heredocs);
                for expansion in scratch.expansions {
                    found.push(match expansion {
                        Expansion::Command(list) | Expansion::Process(list) => {
                            Expansion::Backtick(Box::new(Script {
                                source: rest[..end].to_owned(),
                                body: list,
                                heredocs: heredocs.clone(),
                            }))
                        }
                        other => other,
                    });
                }
                at += end;
            }
            _ => at += 1,
        }
    }
    Ok(found)
}
