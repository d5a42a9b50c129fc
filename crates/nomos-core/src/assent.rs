//! GATE-4: reading an operator's reply to a proposed plan as assent, refusal or neither.
//!
//! The reading works on words, never on substrings, so `goal`, `going`, `okra`,
//! `yesterday` and `ago` say nothing. The rules, in the order they apply:
//!
//! 1. A negation anywhere in the message makes it [`AssentVerdict::Negated`]: `no`, `nope`,
//!    `nah`, `not` (so `do not`, `not yet`), `don't`/`dont` and every other `n't` word,
//!    `stop`, `wait`, `hold`, `halt`, `cancel`, `abort`, `never`. This wins over any
//!    approval word, so "yes, go ahead and stop nginx" is *not* assent: the operator says it
//!    again without the negation. A false "no" costs one more message; a false "yes" runs
//!    commands nobody agreed to.
//! 2. Approval words count only in sentences that are not questions. A sentence is a
//!    question when it ends with `?` or starts with an interrogative (`can`, `why`,
//!    `should`...). So "can you continue to explain?" and "yes, but why?" are
//!    [`AssentVerdict::Silent`], while "Yes. Why step 3?" assents in its first sentence.
//! 3. Approval words: `approved`, `approve`, `yes`, `y`, `go`, `go ahead`, `proceed`,
//!    `continue`, `ok`, `okay`, `do it`, `lgtm`, plus the colloquial `yep`, `yup`, `yeah`,
//!    `yea`, `sure`, `okey`, `oky`, `sgtm`. Letter runs are collapsed before comparing
//!    (`yesss`, `okkk`, `procceed`), and words of five letters or more also match at a
//!    Damerau-Levenshtein distance of one (`approv`, `contiune`, `aproved`). Short words are
//!    never fuzzy: `no` is one edit from `go`.

use serde::{Deserialize, Serialize};

/// What an operator's message says about the proposed plan.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum AssentVerdict {
    /// The operator approved; `word` is the canonical approval word it was read as
    /// (`proceed` for `procceed`).
    Assent {
        /// The canonical approval word or phrase.
        word: String,
    },
    /// The operator negated; `word` is the negating word as written (lowercased).
    Negated {
        /// The negating word.
        word: String,
    },
    /// Neither: a question, a remark, an empty message.
    Silent,
}

/// Reads `text` as assent, negation or neither (GATE-4); see the module docs for the rules.
pub fn detect_assent(text: &str) -> AssentVerdict {
    let sentences = split_sentences(text);
    for sentence in &sentences {
        if let Some(word) = sentence.words.iter().find(|word| is_negation(word)) {
            return AssentVerdict::Negated {
                word: word.raw.clone(),
            };
        }
    }
    for sentence in &sentences {
        if sentence.is_question() {
            continue;
        }
        if let Some(word) = first_approval(&sentence.words) {
            return AssentVerdict::Assent {
                word: word.to_owned(),
            };
        }
    }
    AssentVerdict::Silent
}

/// Approval words that are matched exactly (after collapsing letter runs).
const APPROVAL_WORDS: &[&str] = &[
    "approved", "approve", "yes", "y", "go", "proceed", "continue", "ok", "okay", "lgtm", "yep",
    "yup", "yeah", "yea", "sure", "sgtm",
];

/// Misspellings too short for the fuzzy match, and what they stand for.
const SHORT_MISSPELLINGS: &[(&str, &str)] = &[("okey", "okay"), ("oky", "okay"), ("ys", "yes")];

/// Approval words long enough to be matched at edit distance one.
const FUZZY_WORDS: &[&str] = &["approved", "approve", "proceed", "continue"];

/// The shortest word (in chars) that may be matched fuzzily.
const FUZZY_MIN_LEN: usize = 5;

/// Negating words (apostrophes removed); any word written with `n't` negates too.
const NEGATION_WORDS: &[&str] = &[
    "no", "nope", "nah", "not", "dont", "wont", "cant", "cannot", "shouldnt", "stop", "wait",
    "hold", "halt", "cancel", "abort", "never",
];

/// First words that make a sentence a question even without a question mark.
const INTERROGATIVES: &[&str] = &[
    "why", "what", "how", "when", "where", "who", "which", "can", "could", "should", "would",
    "shall", "is", "are", "does", "did", "will",
];

/// One word of a message: as written (lowercased) and as compared (apostrophes removed).
#[derive(Debug)]
struct Word {
    raw: String,
    key: String,
}

/// One sentence: its words and whether it ended with a question mark.
#[derive(Debug)]
struct Sentence {
    words: Vec<Word>,
    ends_with_question_mark: bool,
}

impl Sentence {
    fn is_question(&self) -> bool {
        if self.ends_with_question_mark {
            return true;
        }
        match self.words.first() {
            Some(first) => INTERROGATIVES.contains(&first.key.as_str()),
            None => false,
        }
    }
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '`')
}

/// Splits at `?`, `!`, `;`, newlines, and at `.` followed by whitespace or the end (so
/// `v1.2` stays one word); everything that is not a letter, digit or apostrophe separates
/// words, which is how punctuation and emoji are ignored.
fn split_sentences(text: &str) -> Vec<Sentence> {
    let lower = text.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    let mut sentences = Vec::new();
    let mut words = Vec::new();
    let mut raw = String::new();
    for (idx, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() || (is_apostrophe(c) && !raw.is_empty()) {
            raw.push(c);
            continue;
        }
        push_word(&mut words, &mut raw);
        let ends_sentence = match c {
            '?' | '!' | ';' | '\n' => true,
            '.' => chars.get(idx + 1).is_none_or(|next| next.is_whitespace()),
            _ => false,
        };
        if ends_sentence {
            if !words.is_empty() {
                sentences.push(Sentence {
                    words: std::mem::take(&mut words),
                    ends_with_question_mark: c == '?',
                });
            } else if c == '?' {
                // "yes!?" ends with a question mark even though `!` closed the words.
                if let Some(last) = sentences.last_mut() {
                    last.ends_with_question_mark = true;
                }
            }
        }
    }
    push_word(&mut words, &mut raw);
    if !words.is_empty() {
        sentences.push(Sentence {
            words,
            ends_with_question_mark: false,
        });
    }
    sentences
}

fn push_word(words: &mut Vec<Word>, raw: &mut String) {
    let trimmed = raw.trim_end_matches(is_apostrophe);
    if !trimmed.is_empty() {
        let key: String = trimmed.chars().filter(|c| !is_apostrophe(*c)).collect();
        words.push(Word {
            raw: trimmed.to_owned(),
            key,
        });
    }
    raw.clear();
}

fn is_negation(word: &Word) -> bool {
    if NEGATION_WORDS.contains(&word.key.as_str()) {
        return true;
    }
    ["n't", "n\u{2019}t", "n`t"]
        .iter()
        .any(|suffix| word.raw.ends_with(suffix))
}

/// The canonical approval word of the first approving word or phrase in `words`.
fn first_approval(words: &[Word]) -> Option<&'static str> {
    for (idx, word) in words.iter().enumerate() {
        let next = words.get(idx + 1).map(|next| collapse_runs(&next.key));
        let key = collapse_runs(&word.key);
        if key == "go" && next.as_deref() == Some("ahead") {
            return Some("go ahead");
        }
        if key == "do" && next.as_deref() == Some("it") {
            return Some("do it");
        }
        if let Some(canonical) = approval_word(&word.key) {
            return Some(canonical);
        }
    }
    None
}

/// The canonical approval word `key` stands for, if any.
fn approval_word(key: &str) -> Option<&'static str> {
    if let Some(word) = APPROVAL_WORDS.iter().find(|word| **word == key) {
        return Some(word);
    }
    let collapsed = collapse_runs(key);
    if let Some(word) = APPROVAL_WORDS
        .iter()
        .find(|word| collapse_runs(word) == collapsed)
    {
        return Some(word);
    }
    if let Some((_, word)) = SHORT_MISSPELLINGS
        .iter()
        .find(|(typo, _)| *typo == collapsed)
    {
        return Some(word);
    }
    if key.chars().count() < FUZZY_MIN_LEN {
        return None;
    }
    FUZZY_WORDS.iter().copied().find(|word| {
        !is_inflection_of(key, word)
            && (edit_distance(key, word) <= 1
                || edit_distance(&collapsed, &collapse_runs(word)) <= 1)
    })
}

/// `continues`, `proceeds`, `continued`: an approval word plus one suffix letter describes
/// something ("the error continues") rather than approving, so it is not a misspelling.
fn is_inflection_of(key: &str, word: &str) -> bool {
    match key.strip_prefix(word) {
        Some(rest) => matches!(rest, "s" | "d" | "r"),
        None => false,
    }
}

/// Collapses runs of the same letter: `procceed` -> `proced`, `yesss` -> `yes`.
fn collapse_runs(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut last = None;
    for c in word.chars() {
        if last != Some(c) {
            out.push(c);
        }
        last = Some(c);
    }
    out
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut table = vec![0usize; (a.len() + 1) * width];
    for (i, row) in table.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests;
