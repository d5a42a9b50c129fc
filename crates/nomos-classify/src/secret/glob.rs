//! Shell globs of one path component (`*`, `?`, `[...]`) and whether two of them can name
//! the same file: a glob in a command counts as a read of every secret it could match.

/// One token of a component glob.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// A character that matches itself.
    Lit(char),
    /// `?`: any one character.
    Any,
    /// `*`: any run of characters.
    Star,
    /// `[...]`: one character of a set (or, negated, not of it).
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
}

impl Token {
    fn accepts(&self, c: char) -> bool {
        match self {
            Token::Lit(lit) => *lit == c,
            Token::Any | Token::Star => true,
            Token::Class { negated, items } => {
                items.iter().any(|(lo, hi)| *lo <= c && c <= *hi) != *negated
            }
        }
    }

    /// Whether some one character matches both tokens (neither is `*`).
    fn meets(&self, other: &Token) -> bool {
        match (self, other) {
            (Token::Lit(c), t) | (t, Token::Lit(c)) => t.accepts(*c),
            (Token::Any, _) | (_, Token::Any) | (Token::Star, _) | (_, Token::Star) => true,
            (
                Token::Class {
                    negated: false,
                    items: a,
                },
                Token::Class {
                    negated: false,
                    items: b,
                },
            ) => a
                .iter()
                .any(|(alo, ahi)| b.iter().any(|(blo, bhi)| alo <= bhi && blo <= ahi)),
            // A negated class leaves almost every character: assume they meet.
            _ => true,
        }
    }
}

/// A glob of one path component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Glob {
    tokens: Vec<Token>,
}

impl Glob {
    /// Reads a component; `[` without its `]` is a literal, as in the shell.
    pub(crate) fn parse(text: &str) -> Glob {
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::with_capacity(chars.len());
        let mut idx = 0;
        while idx < chars.len() {
            match chars[idx] {
                '*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                    idx += 1;
                }
                '?' => {
                    tokens.push(Token::Any);
                    idx += 1;
                }
                '[' => match class_at(&chars, idx) {
                    Some((token, next)) => {
                        tokens.push(token);
                        idx = next;
                    }
                    None => {
                        tokens.push(Token::Lit('['));
                        idx += 1;
                    }
                },
                c => {
                    tokens.push(Token::Lit(c));
                    idx += 1;
                }
            }
        }
        Glob { tokens }
    }

    /// A glob that matches any component (a part known only at run time).
    pub(crate) fn any() -> Glob {
        Glob {
            tokens: vec![Token::Star],
        }
    }

    /// Whether the component is plain text (no glob character).
    pub(crate) fn is_literal(&self) -> bool {
        self.tokens.iter().all(|t| matches!(t, Token::Lit(_)))
    }

    /// Whether some file name matches both globs.
    pub(crate) fn overlaps(&self, other: &Glob) -> bool {
        let (a, b) = (&self.tokens, &other.tokens);
        // Reachable states (i, j): a[..i] and b[..j] can match one common prefix.
        let width = b.len() + 1;
        let mut seen = vec![false; (a.len() + 1) * width];
        let mut stack = vec![(0usize, 0usize)];
        while let Some((i, j)) = stack.pop() {
            let cell = i * width + j;
            if seen[cell] {
                continue;
            }
            seen[cell] = true;
            if i == a.len() && j == b.len() {
                return true;
            }
            let ta = a.get(i);
            let tb = b.get(j);
            // A star may match nothing.
            if ta == Some(&Token::Star) {
                stack.push((i + 1, j));
            }
            if tb == Some(&Token::Star) {
                stack.push((i, j + 1));
            }
            match (ta, tb) {
                (Some(Token::Star), Some(_)) => stack.push((i, j + 1)),
                (Some(_), Some(Token::Star)) => stack.push((i + 1, j)),
                (Some(x), Some(y)) if x.meets(y) => stack.push((i + 1, j + 1)),
                _ => {}
            }
        }
        false
    }

    /// Whether every name this glob matches is also matched by `wider` (an approximation
    /// that never says yes wrongly for the globs Nomos writes: `*SUFFIX`, `PREFIX*`, text).
    pub(crate) fn within(&self, wider: &Glob) -> bool {
        if let Some(text) = self.literal_text() {
            return wider.matches(&text);
        }
        let w = &wider.tokens;
        match w.first() {
            Some(Token::Star) => {
                // `*SUFFIX`: this glob must end with the same literal suffix.
                let suffix = &w[1..];
                if !suffix.iter().all(|t| matches!(t, Token::Lit(_))) {
                    return suffix.is_empty();
                }
                self.tokens.len() >= suffix.len()
                    && self.tokens[self.tokens.len() - suffix.len()..] == *suffix
            }
            _ => false,
        }
    }

    /// Whether a plain file name matches the glob.
    pub(crate) fn matches(&self, name: &str) -> bool {
        let chars: Vec<char> = name.chars().collect();
        let literal = Glob {
            tokens: chars.into_iter().map(Token::Lit).collect(),
        };
        self.overlaps(&literal)
    }

    fn literal_text(&self) -> Option<String> {
        self.tokens
            .iter()
            .map(|t| match t {
                Token::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    }
}

/// `[...]` at `start`: the class and the index after its `]`.
fn class_at(chars: &[char], start: usize) -> Option<(Token, usize)> {
    let mut idx = start + 1;
    let negated = matches!(chars.get(idx), Some('!' | '^'));
    if negated {
        idx += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(idx)?;
        if c == ']' && !first {
            return Some((Token::Class { negated, items }, idx + 1));
        }
        first = false;
        if chars.get(idx + 1) == Some(&'-') && chars.get(idx + 2).is_some_and(|&h| h != ']') {
            let hi = chars[idx + 2];
            items.push((c, hi));
            idx += 3;
        } else {
            items.push((c, c));
            idx += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn overlap(a: &str, b: &str) -> bool {
        Glob::parse(a).overlaps(&Glob::parse(b))
    }

    #[test]
    fn globs_that_can_name_the_same_file_overlap() {
        assert!(overlap("sh*dow", "shadow"));
        assert!(overlap("shado?", "shadow"));
        assert!(overlap("[s]hadow", "shadow"));
        assert!(overlap("[a-z]hadow", "shadow"));
        assert!(overlap("*", "id_*"));
        assert!(overlap("id_*", "*.pub"));
        assert!(overlap("ssh_host_*_key", "ssh_host_ed25519_key"));
        assert!(overlap("*", ".env"));
    }

    #[test]
    fn globs_that_cannot_name_the_same_file_do_not_overlap() {
        assert!(!overlap("passwd", "shadow"));
        assert!(!overlap("[!s]hadow", "shadow"));
        assert!(!overlap("*.conf", "*.key"));
        assert!(!overlap("shadow?", "shadow"));
        assert!(!overlap("ssh_host_*_key", "ssh_host_rsa_key.pub"));
        assert!(!overlap("[abc", "shadow"));
    }

    #[test]
    fn within_holds_for_suffix_globs_and_text() {
        assert!(Glob::parse("id_rsa.pub").within(&Glob::parse("*.pub")));
        assert!(Glob::parse("id_*.pub").within(&Glob::parse("*.pub")));
        assert!(!Glob::parse("id_*").within(&Glob::parse("*.pub")));
        assert!(!Glob::parse("*").within(&Glob::parse("*.pub")));
    }
}
