//! `sed` programs read command by command, the way GNU sed compiles them: addresses,
//! `{`/`}` blocks, `;` and newlines between commands, labels and branches, `a`/`i`/`c`
//! text, `s` and `y` with their delimiters and flags. Every `e`, `w`, `W`, `r`, `R` and
//! `s///e`/`s///w` counts wherever it stands (after a label, a branch, a `}`, a `;`, a
//! newline or another `-e`); anything the reader does not know is "cannot read".

/// What a sed program may do besides printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SedEffect {
    /// Only reads its input and prints.
    ReadOnly,
    /// Reads a file its program names (`r`, `R`).
    ReadsFile,
    /// The classifier cannot read the program.
    Unsure,
    /// Writes a file (`w`, `W`, `s///w`).
    Writes,
    /// Runs a command (`e`, `s///e`).
    Executes,
}

/// The strictest effect of the program made of `scripts` (each `-e` or `--expression`,
/// joined by newlines as sed joins them).
pub(crate) fn effect(scripts: &[&str]) -> SedEffect {
    let program = scripts.join("\n");
    Reader {
        bytes: program.as_bytes(),
        at: 0,
        worst: SedEffect::ReadOnly,
    }
    .program()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    worst: SedEffect,
}

impl Reader<'_> {
    fn program(mut self) -> SedEffect {
        while self.at < self.bytes.len() {
            if !self.command() {
                self.found(SedEffect::Unsure);
                break;
            }
        }
        self.worst
    }

    fn found(&mut self, effect: SedEffect) {
        self.worst = self.worst.max(effect);
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// Reads one command (with its addresses); `false` when it is not sed as the reader
    /// knows it.
    fn command(&mut self) -> bool {
        // Separators and blanks between commands.
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b';')) {
            self.at += 1;
        }
        let Some(_) = self.peek() else { return true };
        if !self.address() {
            return false;
        }
        self.skip_blanks();
        if self.peek() == Some(b',') {
            self.at += 1;
            self.skip_blanks();
            if !self.address() {
                return false;
            }
        }
        self.skip_blanks();
        while self.peek() == Some(b'!') {
            self.at += 1;
            self.skip_blanks();
        }
        let Some(c) = self.peek() else { return false };
        self.at += 1;
        match c {
            b'{' | b'}' => true,
            b'#' => {
                self.skip_line();
                true
            }
            b':' | b'b' | b't' | b'T' => {
                // A label ends at a blank, `;` or newline here: if sed reads it longer, the
                // reader only sees more commands than sed runs.
                self.skip_blanks();
                while !matches!(self.peek(), None | Some(b' ' | b'\t' | b'\n' | b';' | b'}')) {
                    self.at += 1;
                }
                true
            }
            b'a' | b'i' | b'c' => {
                self.text();
                true
            }
            b'r' | b'R' => {
                self.found(SedEffect::ReadsFile);
                self.skip_line();
                true
            }
            b'w' | b'W' => {
                self.found(SedEffect::Writes);
                self.skip_line();
                true
            }
            b'e' => {
                self.found(SedEffect::Executes);
                self.skip_line();
                true
            }
            b's' => self.substitute(),
            b'y' => {
                let Some(delim) = self.delimiter() else {
                    return false;
                };
                self.delimited(delim) && self.delimited(delim) && self.command_end()
            }
            b'q' | b'Q' | b'l' | b'L' => {
                self.skip_blanks();
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.at += 1;
                }
                self.command_end()
            }
            b'v' => {
                while !matches!(self.peek(), None | Some(b'\n' | b';' | b'}')) {
                    self.at += 1;
                }
                true
            }
            b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P' | b'x'
            | b'z' | b'F' => self.command_end(),
            _ => false,
        }
    }

    /// An optional address: a line number, `first~step`, `$`, `+N`, `~N`, `/re/` or `\cREc`
    /// with its `I`/`M` flags.
    fn address(&mut self) -> bool {
        match self.peek() {
            Some(b'0'..=b'9' | b'+' | b'~') => {
                self.at += 1;
                while matches!(self.peek(), Some(b'0'..=b'9' | b'~')) {
                    self.at += 1;
                }
                true
            }
            Some(b'$') => {
                self.at += 1;
                true
            }
            Some(b'/') => {
                self.at += 1;
                self.delimited(b'/') && self.regex_flags()
            }
            Some(b'\\') => {
                self.at += 1;
                match self.delimiter() {
                    Some(delim) => self.delimited(delim) && self.regex_flags(),
                    None => false,
                }
            }
            _ => true,
        }
    }

    fn regex_flags(&mut self) -> bool {
        while matches!(self.peek(), Some(b'I' | b'M')) {
            self.at += 1;
        }
        true
    }

    /// The delimiter at the cursor (any byte but a newline or a backslash).
    fn delimiter(&mut self) -> Option<u8> {
        let delim = self.peek().filter(|b| !matches!(b, b'\n' | b'\\'))?;
        self.at += 1;
        Some(delim)
    }

    /// Skips to just past the next unescaped `delim`; `false` when there is none.
    fn delimited(&mut self, delim: u8) -> bool {
        while let Some(b) = self.peek() {
            self.at += 1;
            if b == b'\\' {
                self.at += 1;
            } else if b == delim {
                return true;
            }
        }
        false
    }

    /// `s/re/replacement/flags`: `e` and `w FILE` among the flags count.
    fn substitute(&mut self) -> bool {
        let Some(delim) = self.delimiter() else {
            return false;
        };
        if !self.delimited(delim) || !self.delimited(delim) {
            return false;
        }
        loop {
            match self.peek() {
                Some(b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9') => self.at += 1,
                Some(b'e') => {
                    self.found(SedEffect::Executes);
                    self.at += 1;
                }
                Some(b'w') => {
                    self.found(SedEffect::Writes);
                    self.skip_line();
                    return true;
                }
                _ => return self.command_end(),
            }
        }
    }

    /// After a command: blanks, then `;`, `}`, `#`, a newline or the end.
    fn command_end(&mut self) -> bool {
        self.skip_blanks();
        matches!(self.peek(), None | Some(b';' | b'\n' | b'}' | b'#'))
    }

    /// The text of `a`, `i` or `c`: to the first newline not escaped by a backslash (the
    /// one-line `a text` and the `a\` form alike).
    fn text(&mut self) {
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'\n' => return,
                _ => {}
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(b) = self.peek() {
            self.at += 1;
            if b == b'\n' {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(scripts: &[&str], expected: SedEffect) {
        assert_eq!(effect(scripts), expected, "{scripts:?}");
    }

    // rule: CLASSIFY-8
    #[test]
    fn commands_after_labels_branches_and_blocks_count() {
        check(&[":a;e id"], SedEffect::Executes);
        check(&["b end; :end e id"], SedEffect::Executes);
        check(&["/x/b skip\nw /tmp/x\n:skip"], SedEffect::Writes);
        check(&["1{e id\n}"], SedEffect::Executes);
        check(&["1{p};w /tmp/x"], SedEffect::Writes);
        check(&["$!{h;d};x;p"], SedEffect::ReadOnly);
        check(&["ta;W /tmp/x"], SedEffect::Writes);
    }

    // rule: CLASSIFY-8
    #[test]
    fn each_expression_is_a_line_of_one_program() {
        check(&["p", "w /tmp/x"], SedEffect::Writes);
        check(&["a\\", "w /tmp/x"], SedEffect::ReadOnly);
        check(&["a text; w /tmp/x"], SedEffect::ReadOnly);
        check(&["a text\nw /tmp/x"], SedEffect::Writes);
        check(&["1r /etc/hosts"], SedEffect::ReadsFile);
        check(&["R /etc/hosts"], SedEffect::ReadsFile);
    }

    // rule: CLASSIFY-8
    #[test]
    fn substitution_flags_e_and_w_count_after_others() {
        check(&["s/a/b/e"], SedEffect::Executes);
        check(&["s/x/y/pe"], SedEffect::Executes);
        check(&["s|a|b|gw /tmp/x"], SedEffect::Writes);
        check(&["s/w x/y/p;s/e/f/"], SedEffect::ReadOnly);
        check(&["/w x/p"], SedEffect::ReadOnly);
        check(&["s/a/b/;s/c/d/3e"], SedEffect::Executes);
        check(&["y/abc/xyz/;p"], SedEffect::ReadOnly);
        check(&["s/a/b/k"], SedEffect::Unsure);
        check(&["s/a/b"], SedEffect::Unsure);
        check(&["1~2p;0,/x/{=;l 5}"], SedEffect::ReadOnly);
        check(&["\\%x%Ip;q5"], SedEffect::ReadOnly);
    }
}
