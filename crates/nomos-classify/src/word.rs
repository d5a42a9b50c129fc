//! Reading one shell word: quotes, escapes, parameter, command, process and arithmetic
//! expansions, and the substitutions inside here-document bodies.

use super::ast::{Expansion, Quoting, Script, Word};
use super::parser::{ParseError, ParseErrorKind, Parser};

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
                Some(b'<' | b'>') if self.pos == start && self.peek_at(1) == Some(b'(') => {
                    self.parse_process_substitution(&mut word)?;
                }
                _ if self.at_word_end() => break,
                _ => self.literal_run(&mut word),
            }
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

    fn parse_double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
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
                if self.scan_arith(&mut inner)? {
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
                            let mut scratch = Word::scratch();
                            self.parse_single_quoted_in_parameter(&mut scratch)?;
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
            Some(b'\'') => {
                quoted(word);
                self.pos += 2;
                self.parse_ansi_c(word, start)
            }
            Some(b'"') => {
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
                    word.text.push(match c {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'e' | 'E' => '\u{1b}',
                        'a' => '\u{7}',
                        '0' => '\0',
                        other => other,
                    });
                }
                Some(_) => {
                    let Some(c) = self.peek_char() else { continue };
                    self.pos += c.len_utf8();
                    word.text.push(c);
                }
            }
        }
    }

    fn parse_command_substitution(&mut self, word: &mut Word) -> Result<(), ParseError> {
        let start = self.pos;
        mark(word);
        self.pos += 2;
        self.enter()?;
        let list = self.parse_list()?;
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
        let list = self.parse_list()?;
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
        let script = Script::parse_at_depth(&body, self.depth + 1).map_err(|inner| ParseError {
            offset: start,
            kind: ParseErrorKind::InBacktick(Box::new(inner)),
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
                Some(b'$' | b'`' | b'"' | b'\'') => {
                    let mut scratch = Word::scratch();
                    match self.peek() {
                        Some(b'$') => self.parse_dollar(&mut scratch)?,
                        Some(b'`') => self.parse_backtick(&mut scratch)?,
                        Some(b'"') => self.parse_double_quoted(&mut scratch)?,
                        _ => self.parse_single_quoted_in_parameter(&mut scratch)?,
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
pub(super) fn heredoc_expansions(body: &str, depth: usize) -> Result<Vec<Expansion>, ParseError> {
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
                let mut parser = Parser::nested(rest, 0, depth + 1);
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
