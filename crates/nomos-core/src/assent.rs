//! GATE-4 (rev. 2): reading an operator's reply to a proposed plan as assent, refusal or neither.
//!
//! A wrong "no" costs the operator one more word; a wrong "yes" runs a change nobody agreed
//! to. So the reading looks for every reason *not* to assent first, and only a message that
//! survives all of them and carries an approval word in its approving sense assents.
//!
//! The reading works on words, never on substrings, so `goal`, `going`, `okra`,
//! `yesterday` and `ago` say nothing. Every comparison is on the word lowercased, with
//! apostrophes removed and runs of one letter collapsed (`noooo` is `no`, `stopp` is
//! `stop`, `procceed` is `proced` like `proceed`). The rules, in the order they apply:
//!
//! 1. **Negations and deferrals** make it [`AssentVerdict::Negated`], wherever they stand:
//!    `no`, `nope`, `nah`, `not`, every `n't` word in any spelling (`don't`, `dont`,
//!    `don;t`, `don t`, `do n't`, `dont't`), `stop`, `wait`, `hold`, `cancel`, `abort`,
//!    `never`, `reject`..., and the words that put it off: `later`, `first`, `before`,
//!    `after`, `until`, `when`, `once`, `tonight`, `tomorrow`, a weekday, `let me`...
//!    Longer words also match with two letters swapped (`frist`, `cancle`), and words of
//!    six letters or more at one edit (`tomorow`, `cancl`).
//! 2. **Questions** withhold assent: a `?` anywhere, a question word anywhere (`what`,
//!    `why`, `how`, `which`...), an auxiliary leading a clause (`can`, `should`, `is`...)
//!    or put before its subject (`is it`, `do you`), or a request to explain or review.
//! 3. **Conditions** withhold it: `if`, `unless`, `but`, `only`, `except`, `without`,
//!    `instead`, `make sure`...
//! 4. **Doubt** withholds it: hedges (`maybe`, `i guess`, `hmm`, a message that trails off
//!    with `...`) and sarcasm (`yeah right`, `Yeah. Right.`, `whatever`, `lol`, an eye roll).
//! 5. **Another sense** of an approval word withholds it: `go over`, `go back`, `go
//!    through`, `go on`, `install go`, `ok so...`, `continue to monitor`, `continue
//!    watching`, `continue the investigation`, someone else's words (`the reviewer said
//!    lgtm`), and an approval word in pasted output (`status: OK`, `200 OK`, `[ OK ]`,
//!    `ok=3`, `ok 1 - ...`, `--yes`, a log line, the lines after one ending in `:`, text in
//!    backticks).
//! 6. **Approval words** assent: `approved`, `approve`, `yes`, `y`, `go`, `go ahead`,
//!    `proceed`, `continue`, `ok`, `okay`, `do it`, `lgtm`, plus the colloquial `yep`, `yup`,
//!    `yeah`, `yea`, `sure`, `sgtm`. Their common misspellings count (`yess`, `okk`,
//!    `aproved`, `contiune`, `oaky`); short words are never matched at an edit distance (`no`
//!    is one edit from `go`). The words that also have other uses count only where they
//!    approve: `ok`, `sure`, `continue` and `go` at the start of a clause (after `yes`,
//!    `then`, `please`, `let's`, `good to`...), `go` only at the end of its clause or before
//!    `now`, `then`, `for it`; `y` only alone; `sure enough` never.
//!
//! Anything else is [`AssentVerdict::Silent`].

use std::sync::LazyLock;

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
    /// The operator negated or deferred; `word` is the word as written (lowercased).
    Negated {
        /// The negating or deferring word.
        word: String,
    },
    /// Neither: a question, a condition, a doubt, another sense of an approval word, a
    /// remark, an empty message.
    Silent,
}

/// Reads `text` as assent, negation or neither (GATE-4); see the module docs for the rules.
pub fn detect_assent(text: &str) -> AssentVerdict {
    match read(text) {
        Reading::Assent(word) => AssentVerdict::Assent {
            word: word.to_owned(),
        },
        Reading::Negated(word) => AssentVerdict::Negated { word },
        Reading::Withheld(_) | Reading::Silent => AssentVerdict::Silent,
    }
}

/// The detailed reading behind an [`AssentVerdict`], with the reason assent was withheld.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Reading {
    Assent(&'static str),
    Negated(String),
    Withheld(Withheld),
    Silent,
}

/// Why a message that is not a negation still does not assent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Withheld {
    Question,
    Condition,
    Doubt,
    OtherSense,
}

/// How one occurrence of an approval word reads in its context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sense {
    /// It approves.
    Approves(&'static str),
    /// It means something else (`go over`, `status: OK`): the message does not assent.
    Other,
    /// It says nothing either way (`nginx is ok`).
    Neutral,
}

fn read(text: &str) -> Reading {
    let message = Message::parse(text);
    if let Some(word) = message.negation() {
        return Reading::Negated(word);
    }
    if message.is_question() {
        return Reading::Withheld(Withheld::Question);
    }
    if message.is_conditional() {
        return Reading::Withheld(Withheld::Condition);
    }
    if message.is_doubtful() {
        return Reading::Withheld(Withheld::Doubt);
    }
    let mut approval = None;
    for idx in 0..message.words.len() {
        match message.sense_at(idx) {
            Sense::Other => return Reading::Withheld(Withheld::OtherSense),
            Sense::Approves(word) if approval.is_none() => approval = Some(word),
            Sense::Approves(_) | Sense::Neutral => {}
        }
    }
    match approval {
        Some(word) => Reading::Assent(word),
        None => Reading::Silent,
    }
}

// --- Word lists. Every entry is compared after `fold`, so runs of a letter never matter. ---

/// Approval words and their colloquial forms, each with the canonical word it stands for.
const APPROVAL_WORDS: &[(&str, &str)] = &[
    ("approved", "approved"),
    ("approve", "approve"),
    ("yes", "yes"),
    ("y", "y"),
    ("go", "go"),
    ("goahead", "go ahead"),
    ("proceed", "proceed"),
    ("continue", "continue"),
    ("ok", "ok"),
    ("okay", "okay"),
    ("doit", "do it"),
    ("lgtm", "lgtm"),
    ("yep", "yep"),
    ("yup", "yup"),
    ("yeah", "yeah"),
    ("yea", "yea"),
    ("sure", "sure"),
    ("sgtm", "sgtm"),
    // Misspellings too short for the fuzzy match.
    ("okey", "okay"),
    ("oky", "okay"),
    ("okie", "okay"),
    ("ys", "yes"),
    ("yas", "yes"),
    ("yeh", "yeah"),
];

/// Approval words long enough to be matched at edit distance one.
const FUZZY_APPROVAL_WORDS: &[&str] = &["approved", "approve", "proceed", "continue"];

/// Approval words matched with two adjacent letters swapped (`oaky`, `yse`, `lgmt`).
const SWAPPABLE_APPROVAL_WORDS: &[&str] = &["okay", "yes", "lgtm", "yeah", "sure"];

/// Words that negate.
const NEGATIONS: &[&str] = &[
    "no",
    "nope",
    "nop",
    "nah",
    "naw",
    "nay",
    "nein",
    "n",
    "not",
    "nt",
    "never",
    "nevermind",
    "nvm",
    "na",
    "w8",
    "negative",
    "nix",
    "veto",
    "deny",
    "denied",
    "disapprove",
    "disapproved",
    "forget",
    "freeze",
    "revert",
    "rollback",
    "undo",
    // Contractions with the apostrophe lost.
    "dont",
    "dnt",
    "doesnt",
    "didnt",
    "wont",
    "cant",
    "cannot",
    "shouldnt",
    "wouldnt",
    "couldnt",
    "isnt",
    "arent",
    "wasnt",
    "werent",
    "havent",
    "hasnt",
    "hadnt",
    "aint",
    "mustnt",
    "neednt",
    "shant",
];

/// Contraction stems left when the `t` is split off (`don t`); matched exactly only, since
/// a swap of two letters makes real words of them (`hadn`, `hand`).
const CONTRACTION_STEMS: &[&str] = &[
    "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "haven", "hasn", "hadn", "shouldn",
    "wouldn", "couldn", "mustn", "needn",
];

/// Words that negate with any ending (`stopped`, `waiting`, `holdup`, `cancelled`).
const NEGATION_STEMS: &[&str] = &[
    "stop", "wait", "await", "hold", "halt", "paus", "cancel", "abort", "reject", "declin",
    "refus", "postpon", "defer", "delay",
];

/// Words that put the plan off.
const DEFERRALS: &[&str] = &[
    "later",
    "latr",
    "ltr",
    "l8r",
    "first",
    "1st",
    "before",
    "after",
    "afterwards",
    "afterward",
    "aftr",
    "until",
    "untill",
    "till",
    "til",
    "when",
    "whenever",
    "once",
    "soon",
    "yet",
    "tonight",
    "tonite",
    "2nite",
    "2night",
    "2moro",
    "2morrow",
    "2mrw",
    "b4",
    "whn",
    "tomorrow",
    "tmrw",
    "tmr",
    "tmw",
    "tomoro",
    "eod",
    "eow",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "weekend",
    "morning",
    "afternoon",
    "evening",
    "night",
    "midnight",
    "pm",
    "oclock",
    "hang",
    "moment",
    "sec",
    "secs",
    "minute",
    "minutes",
    "min",
    "mins",
    "hour",
    "hours",
    "brb",
    "lemme",
    "schedule",
    "scheduled",
    "maintenance",
    "eventually",
    "someday",
];

/// Deferring phrases of two words.
const DEFERRAL_PHRASES: &[(&str, &str)] = &[("let", "me"), ("give", "me"), ("gimme", "a")];

/// Question words that make a message a question wherever they stand.
const QUESTION_WORDS: &[&str] = &[
    "what", "whats", "wat", "wut", "why", "whys", "how", "hows", "which", "where", "wheres", "who",
    "whos", "whom", "whose", "wdym", "wym", "wdyt",
];

/// Auxiliaries that ask when they lead a clause (`can you...`, `should we...`).
const LEADING_AUXILIARIES: &[&str] = &[
    "can", "could", "should", "would", "shall", "is", "are", "was", "were", "does", "did", "will",
    "may", "might", "must", "am",
];

/// Auxiliaries that ask when their subject follows them (`is it`, `do you`).
const INVERTED_AUXILIARIES: &[&str] = &[
    "can", "could", "should", "would", "shall", "is", "are", "was", "were", "does", "did", "do",
    "will", "may", "might", "must", "am", "have", "has",
];

/// Subjects that make an auxiliary before them a question.
const SUBJECTS: &[&str] = &[
    "you", "u", "ya", "we", "i", "they", "he", "she", "it", "this", "that", "there",
];

/// Words asking to be told, shown or walked through something rather than approving.
const INFORMATION_REQUESTS: &[&str] = &[
    "explain",
    "clarify",
    "elaborate",
    "describe",
    "mean",
    "means",
    "meaning",
    "wonder",
    "wondering",
    "curious",
    "question",
    "questions",
    "discuss",
    "review",
    "revisit",
    "recap",
    "summarize",
    "summarise",
    "reconsider",
    "rethink",
    "talk",
    "confused",
    "unclear",
];

/// Two-word requests for information.
const INFORMATION_PHRASES: &[(&str, &str)] = &[
    ("tell", "me"),
    ("show", "me"),
    ("walk", "me"),
    ("help", "me"),
    ("show", "us"),
    ("tell", "us"),
];

/// Words that attach a condition or a change to the approval.
const CONDITIONS: &[&str] = &[
    "if",
    "iff",
    "unless",
    "but",
    "except",
    "excluding",
    "without",
    "provided",
    "providing",
    "assuming",
    "only",
    "instead",
    "rather",
    "however",
    "though",
    "although",
    "otherwise",
    "whereas",
    "whether",
    "skip",
    "skipping",
    "modify",
    "amend",
    "revise",
    "tweak",
    "adjust",
    "swap",
    "reorder",
    "prefer",
    "alternatively",
    "depends",
    "depending",
    "condition",
    "conditional",
    "exclude",
];

/// Two-word conditions.
const CONDITION_PHRASES: &[(&str, &str)] = &[("make", "sure"), ("long", "as"), ("in", "case")];

/// Hedges and sarcasm.
const DOUBTS: &[&str] = &[
    "maybe",
    "mayb",
    "perhaps",
    "possibly",
    "probably",
    "guess",
    "suppose",
    "think",
    "thinking",
    "unsure",
    "hm",
    "um",
    "uh",
    "er",
    "idk",
    "dunno",
    "kinda",
    "sorta",
    "whatever",
    "lol",
    "lmao",
    "lmfao",
    "rofl",
    "haha",
    "hahaha",
    "hah",
    "heh",
    "hehe",
    "jk",
    "kidding",
    "joking",
    "sarcasm",
    "sarcastic",
    "worried",
    "worry",
    "concerned",
    "concern",
    "nervous",
    "hesitant",
    "afraid",
    "scared",
    "risky",
    "doubt",
    "doubtful",
];

/// Two-word sarcasm and dismissals.
const DOUBT_PHRASES: &[(&str, &str)] = &[
    ("yeah", "right"),
    ("yes", "right"),
    ("sure", "right"),
    ("as", "if"),
    ("good", "luck"),
    ("oh", "sure"),
    ("oh", "great"),
    ("yeah", "yeah"),
    ("sure", "sure"),
];

/// Emoji that say no, and emoji that doubt.
const NEGATING_EMOJI: &[char] = &['👎', '🛑', '✋', '⛔', '❌', '🚫', '✖'];
const DOUBTING_EMOJI: &[char] = &[
    '🤔', '🙄', '😒', '😏', '😬', '🤨', '😕', '😟', '😐', '😂', '🤣', '🙃', '😅',
];
const QUESTION_MARKS: &[char] = &['?', '？', '¿', '❓', '❔'];

/// Words that open a clause without changing what follows (`ok so`, `yes please`).
const DISCOURSE: &[&str] = &[
    "ok", "okay", "so", "and", "then", "also", "alright", "allright", "well", "yes", "yeah", "yep",
    "oh", "right", "now", "hey", "actually", "just", "sorry", "please", "pls", "plz", "great",
    "cool", "thanks", "thx", "good", "fine", "sure", "perfect", "awesome", "nice",
];

/// Words after which `ok` approves (`sounds ok`, `that's ok`, `i'm ok with it`).
const OK_LEAD_INS: &[&str] = &["thats", "sounds", "looks", "im", "totally"];

/// Words after `ok` that make it an acknowledgment, not an approval (`ok, noted`).
const OK_ACKNOWLEDGMENTS: &[&str] = &[
    "i",
    "see",
    "got",
    "noted",
    "understood",
    "gotcha",
    "interesting",
];

/// Words after which `go` and `continue` approve (`let's go`, `good to go`, `you can continue`).
const VERB_LEAD_INS: &[&str] = &["lets", "to", "can", "may", "and", "you", "we", "i"];

/// Words after `go` that give it another sense (`go over`, `go back to step 1`, `go check`).
const GO_OTHER_SENSES: &[&str] = &[
    "over",
    "back",
    "through",
    "thru",
    "to",
    "on",
    "in",
    "into",
    "out",
    "down",
    "up",
    "off",
    "around",
    "round",
    "about",
    "away",
    "home",
    "live",
    "wrong",
    "bad",
    "with",
    "and",
    "by",
    "via",
    "past",
    "deeper",
    "further",
    "from",
    "check",
    "see",
    "look",
    "read",
    "get",
    "find",
    "fix",
    "investigate",
    "ask",
    "version",
    "mod",
    "build",
    "run",
    "test",
    "install",
    "binary",
    "toolchain",
    "modules",
    "module",
    "fmt",
    "vet",
];

/// Words before `go` that make it a noun: the language, a program (`install go`).
const GO_NOUN_CONTEXT: &[&str] = &[
    "the",
    "a",
    "an",
    "my",
    "our",
    "your",
    "install",
    "upgrade",
    "update",
    "remove",
    "uninstall",
    "use",
    "using",
    "with",
    "of",
    "golang",
    "in",
    "compile",
    "no",
];

/// Words after `go` that keep it an approval (`go now`, `go then`).
const GO_APPROVING_FOLLOWERS: &[&str] = &["now", "then", "please", "pls", "plz", "go", "team"];

/// What `continue` may be followed by when it means keeping on with something else.
const ACTIVITY_NOUNS: &[&str] = &[
    "investigation",
    "analysis",
    "research",
    "diagnosis",
    "observation",
    "monitor",
    "watch",
];

/// Verbs that report someone else's words (`the reviewer said lgtm`).
const REPORTING_VERBS: &[&str] = &[
    "said", "says", "wrote", "writes", "replied", "replies", "answered", "answers", "printed",
    "prints", "returned", "returns", "shows", "showed", "reported", "reports",
];

/// Words before `do it` that make the operator its subject (`i'll do it`).
const DO_IT_OTHER_SUBJECTS: &[&str] = &["i", "ill", "id", "im", "will", "me", "myself"];

/// Words before `approved` that report someone else's approval (`the PR got approved`).
const APPROVED_REPORTS: &[&str] = &["was", "were", "been", "got", "gets", "being"];

// --- The message, as words with the text between them. ---

/// One word of a message.
#[derive(Debug)]
struct Word {
    /// As written, lowercased (apostrophes kept).
    raw: String,
    /// Lowercased, apostrophes removed, runs of a letter collapsed.
    folded: String,
    /// The text between the previous word (or the start) and this one.
    before: String,
    /// Inside backticks or a code fence: pasted, not said.
    quoted: bool,
    /// Its line looks like pasted command output (a timestamp, a log level, a prompt).
    output_line: bool,
}

#[derive(Debug)]
struct Message {
    words: Vec<Word>,
    /// The text after the last word.
    trailing: String,
    has_question_mark: bool,
    negating_emoji: Option<char>,
    has_doubting_emoji: bool,
}

impl Message {
    fn parse(text: &str) -> Message {
        let lower = text.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        let output_lines = output_lines(&lower);
        let mut words = Vec::new();
        let mut raw = String::new();
        let mut between = String::new();
        let mut quoted = false;
        let mut line = 0;
        for (idx, &c) in chars.iter().enumerate() {
            let prev_is_word = idx > 0 && chars[idx - 1].is_alphanumeric();
            let next_is_word = chars
                .get(idx + 1)
                .is_some_and(|next| next.is_alphanumeric());
            if c.is_alphanumeric() || (is_apostrophe(c) && prev_is_word && next_is_word) {
                raw.push(c);
                continue;
            }
            if !raw.is_empty() {
                words.push(Word::new(
                    std::mem::take(&mut raw),
                    std::mem::take(&mut between),
                    quoted,
                    output_lines.get(line).copied().unwrap_or(false),
                ));
            }
            if c == '`' {
                quoted = !quoted;
            }
            if c == '\n' {
                line += 1;
            }
            between.push(c);
        }
        if !raw.is_empty() {
            words.push(Word::new(
                raw,
                std::mem::take(&mut between),
                quoted,
                output_lines.get(line).copied().unwrap_or(false),
            ));
        }
        Message {
            words,
            trailing: between,
            has_question_mark: lower.chars().any(|c| QUESTION_MARKS.contains(&c)),
            negating_emoji: lower.chars().find(|c| NEGATING_EMOJI.contains(c)),
            has_doubting_emoji: lower.chars().any(|c| DOUBTING_EMOJI.contains(&c)),
        }
    }

    /// The first negating or deferring word, as written.
    fn negation(&self) -> Option<String> {
        for (idx, word) in self.words.iter().enumerate() {
            // `don;t`, `don t`, `can t`: a contraction with its `t` split off.
            if let Some(next) = self.words.get(idx + 1)
                && next.folded == "t"
                && word.folded.ends_with('n')
                && next.before.chars().count() <= 2
                && !next.before.contains('\n')
            {
                return Some(format!("{}{}t", word.raw, next.before));
            }
            if is_negation(word) || (is_deferral(word) && !self.is_time_not_deferral(idx)) {
                return Some(word.raw.clone());
            }
            if let Some(next) = self.next(idx)
                && phrase_in(DEFERRAL_PHRASES, word, next)
            {
                return Some(format!("{} {}", word.raw, next.raw));
            }
        }
        self.negating_emoji.map(String::from)
    }

    /// A time word that does not put the plan off: a greeting (`good morning`) or a length
    /// (`5 minutes of downtime`).
    fn is_time_not_deferral(&self, idx: usize) -> bool {
        let word = &self.words[idx];
        let greeting = in_list(&["morning", "afternoon", "evening", "night"], &word.folded)
            && self
                .prev(idx)
                .is_some_and(|prev| folds_to("good", &prev.folded));
        let length = in_list(
            &[
                "minute", "minutes", "min", "mins", "hour", "hours", "sec", "secs",
            ],
            &word.folded,
        ) && self.next(idx).is_some_and(|next| next.folded == "of");
        greeting || length
    }

    fn is_question(&self) -> bool {
        if self.has_question_mark {
            return true;
        }
        self.words.iter().enumerate().any(|(idx, word)| {
            if in_list(QUESTION_WORDS, &word.folded) || in_list(INFORMATION_REQUESTS, &word.folded)
            {
                return true;
            }
            let next = self.next(idx);
            if let Some(next) = next
                && phrase_in(INFORMATION_PHRASES, word, next)
            {
                return true;
            }
            if in_list(LEADING_AUXILIARIES, &word.folded) && self.leads_clause(idx) {
                return true;
            }
            // `is it`, `do you`; not `do it`, `do that`, and not `that is it`, where the
            // subject before the auxiliary leads its clause. After `do it` the `it` is an
            // object, so `do it is it safe` still asks.
            match next {
                Some(next) => {
                    in_list(INVERTED_AUXILIARIES, &word.folded)
                        && in_list(SUBJECTS, &next.folded)
                        && !(word.folded == "do" && in_list(&["it", "this", "that"], &next.folded))
                        && self.prev(idx).is_none_or(|prev| {
                            !in_list(SUBJECTS, &prev.folded) || !self.leads_clause(idx - 1)
                        })
                }
                None => false,
            }
        })
    }

    fn is_conditional(&self) -> bool {
        self.words.iter().enumerate().any(|(idx, word)| {
            // `read-only` describes a command; it does not limit the approval.
            let read_only =
                word.folded == "only" && self.prev(idx).is_some_and(|prev| prev.folded == "read");
            (in_list(CONDITIONS, &word.folded) && !read_only)
                || self
                    .next(idx)
                    .is_some_and(|next| phrase_in(CONDITION_PHRASES, word, next))
        })
    }

    fn is_doubtful(&self) -> bool {
        // A message that trails off (`sure...`) hesitates.
        let trailing = self.trailing.trim_end();
        if self.has_doubting_emoji || trailing.ends_with("...") || trailing.ends_with('…') {
            return true;
        }
        self.words.iter().enumerate().any(|(idx, word)| {
            if in_list(DOUBTS, &word.folded) {
                return true;
            }
            // `/s` marks sarcasm.
            if word.folded == "s" && word.before.ends_with('/') {
                return true;
            }
            // `yeah right`, `yeah, right` and a closing `Yeah. Right.`, but not `yes, right
            // away`.
            match self.words.get(idx + 1) {
                Some(next) => {
                    let closing_right = next.folded == "right" && self.words.get(idx + 2).is_none();
                    (!ends_sentence(&next.before) || closing_right)
                        && phrase_in(DOUBT_PHRASES, word, next)
                        && (next.folded != "right"
                            || self
                                .words
                                .get(idx + 2)
                                .is_none_or(|after| is_boundary(&after.before)))
                }
                None => false,
            }
        })
    }

    /// How the word at `idx` reads as an approval word, if it is one.
    fn sense_at(&self, idx: usize) -> Sense {
        let word = &self.words[idx];
        let next = self.next(idx);
        let phrase = match next {
            Some(next) if word.folded == "go" && is_ahead(&next.folded) => Some("go ahead"),
            Some(next) if word.folded == "do" && next.folded == "it" => Some("do it"),
            _ => None,
        };
        let canonical = match phrase.or_else(|| approval_word(&word.folded)) {
            Some(canonical) => canonical,
            None => return Sense::Neutral,
        };
        if self.is_pasted(idx) || self.is_reported(idx) {
            return Sense::Other;
        }
        let prev = self.prev(idx).map(|prev| prev.folded.as_str());
        match canonical {
            "go" => self.sense_of_go(idx),
            "ok" | "okay" => {
                // `ok so...` and `ok, so...` lead into something else.
                if let Some(next) = self.words.get(idx + 1)
                    && next.folded == "so"
                    && !ends_sentence(&next.before)
                {
                    return Sense::Other;
                }
                // `ok 1 - parses the plan`: a test report.
                if next.is_some_and(|next| next.folded.chars().all(|c| c.is_ascii_digit())) {
                    return Sense::Other;
                }
                if let Some(next) = self.words.get(idx + 1)
                    && in_list(OK_ACKNOWLEDGMENTS, &next.folded)
                    && !ends_sentence(&next.before)
                {
                    return Sense::Neutral;
                }
                self.approves_in_position(idx, OK_LEAD_INS, canonical)
            }
            "continue" => {
                if next.is_some_and(|next| next.folded == "to") || self.continues_an_activity(idx) {
                    return Sense::Other;
                }
                self.approves_in_position(idx, VERB_LEAD_INS, canonical)
            }
            // `sure enough, the disk filled up`: as expected, not a yes.
            "sure" if next.is_some_and(|next| next.folded == "enough") => Sense::Neutral,
            "sure" => self.approves_in_position(idx, &[], canonical),
            "y" => {
                let alone =
                    next.is_none_or(|next| in_list(&["please", "pls", "plz"], &next.folded));
                if prev.is_none() && alone {
                    Sense::Approves(canonical)
                } else {
                    Sense::Neutral
                }
            }
            "do it" if prev.is_some_and(|prev| in_list(DO_IT_OTHER_SUBJECTS, prev)) => Sense::Other,
            "approved" | "approve" if prev.is_some_and(|prev| in_list(APPROVED_REPORTS, prev)) => {
                Sense::Neutral
            }
            _ => Sense::Approves(canonical),
        }
    }

    /// `continue monitoring`, `continue with checking`, `continue the investigation`: keep
    /// doing something, not carry out the plan.
    fn continues_an_activity(&self, idx: usize) -> bool {
        let mut object_idx = idx + 1;
        while let Some(word) = self.next(object_idx - 1) {
            if !in_list(&["with", "on", "the", "your", "my", "our"], &word.folded) {
                break;
            }
            object_idx += 1;
        }
        match self.next(object_idx - 1) {
            Some(object) => {
                (object.folded.len() > 4 && object.folded.ends_with("ing"))
                    || in_list(ACTIVITY_NOUNS, &object.folded)
            }
            None => false,
        }
    }

    /// `he said ok`, `the reviewer wrote "lgtm"`: someone else's words, reported.
    fn is_reported(&self, idx: usize) -> bool {
        match idx
            .checked_sub(1)
            .and_then(|prev_idx| self.words.get(prev_idx))
        {
            Some(prev) => {
                in_list(REPORTING_VERBS, &prev.folded) && !ends_sentence(&self.words[idx].before)
            }
            None => false,
        }
    }

    fn sense_of_go(&self, idx: usize) -> Sense {
        let next = self.next(idx);
        if let Some(prev) = self.prev(idx)
            && in_list(GO_NOUN_CONTEXT, &prev.folded)
        {
            return Sense::Other;
        }
        match next {
            Some(next) if in_list(GO_OTHER_SENSES, &next.folded) => Sense::Other,
            Some(next) if next.folded.chars().all(|c| c.is_ascii_digit()) => Sense::Other,
            Some(next) if next.folded == "for" => match self.next(idx + 1) {
                Some(it) if it.folded == "it" => {
                    self.approves_in_position(idx, VERB_LEAD_INS, "go")
                }
                _ => Sense::Neutral,
            },
            Some(next) if !in_list(GO_APPROVING_FOLLOWERS, &next.folded) => Sense::Neutral,
            _ => self.approves_in_position(idx, VERB_LEAD_INS, "go"),
        }
    }

    /// A word that approves only at the start of its clause, after discourse words, after
    /// another approval word, or after one of `lead_ins`.
    fn approves_in_position(
        &self,
        idx: usize,
        lead_ins: &[&str],
        canonical: &'static str,
    ) -> Sense {
        match self.prev(idx) {
            None => Sense::Approves(canonical),
            Some(prev)
                if in_list(DISCOURSE, &prev.folded)
                    || in_list(lead_ins, &prev.folded)
                    || approval_word(&prev.folded).is_some() =>
            {
                Sense::Approves(canonical)
            }
            Some(_) => Sense::Neutral,
        }
    }

    /// The word at `idx` is pasted text, not the operator's own: in backticks, on an output
    /// line, a value (`status: ok`, `ok=3`, `[ OK ]`, `200 OK`), an option (`--yes`, `-y`)
    /// or a choice (`y/n`).
    fn is_pasted(&self, idx: usize) -> bool {
        let word = &self.words[idx];
        if word.quoted || word.output_line {
            return true;
        }
        let after = self.after(idx);
        let before_trimmed = word.before.trim_end_matches([' ', '"', '\'', '\t']);
        let after_trimmed = after.trim_start_matches([' ', '"', '\t']);
        let value = !word.before.contains('\n')
            && (before_trimmed.ends_with(':') || before_trimmed.ends_with('='));
        let key = after_trimmed.starts_with('=')
            || (after_trimmed.starts_with(':') && self.words.get(idx + 1).is_some());
        let bracketed = word.before.contains('[') && after.contains(']');
        let choice = word.before.ends_with('/') || after.starts_with('/');
        let dashes_before = word.before.trim_end_matches('-');
        let option = word.before.ends_with('-')
            && match dashes_before.chars().last() {
                Some(c) => c.is_whitespace(),
                None => idx == 0,
            };
        let after_number = self
            .prev(idx)
            .is_some_and(|prev| prev.folded.chars().all(|c| c.is_ascii_digit() || c == '.'));
        // `OK (3 tests)`, and `test parse ... ok` at the end of its line.
        let counted = after_trimmed.starts_with('(')
            && self
                .words
                .get(idx + 1)
                .is_some_and(|next| next.folded.starts_with(|c: char| c.is_ascii_digit()));
        let test_line = word.before == " ... "
            && idx > 0
            && (after.contains('\n') || self.words.get(idx + 1).is_none());
        value || key || bracketed || choice || option || after_number || counted || test_line
    }

    /// The previous word when it is in the same clause.
    fn prev(&self, idx: usize) -> Option<&Word> {
        if idx == 0 || is_boundary(&self.words[idx].before) {
            return None;
        }
        self.words.get(idx - 1)
    }

    /// The next word when it is in the same clause.
    fn next(&self, idx: usize) -> Option<&Word> {
        self.words
            .get(idx + 1)
            .filter(|next| !is_boundary(&next.before))
    }

    /// The text between the word at `idx` and the next word (or the end).
    fn after(&self, idx: usize) -> &str {
        match self.words.get(idx + 1) {
            Some(next) => &next.before,
            None => &self.trailing,
        }
    }

    /// The word at `idx` starts its clause, perhaps after discourse words (`ok so can...`).
    fn leads_clause(&self, idx: usize) -> bool {
        let mut idx = idx;
        while let Some(prev) = self.prev(idx) {
            if !in_list(DISCOURSE, &prev.folded) {
                return false;
            }
            idx -= 1;
        }
        true
    }
}

impl Word {
    fn new(raw: String, before: String, quoted: bool, output_line: bool) -> Word {
        let key: String = raw.chars().filter(|c| !is_apostrophe(*c)).collect();
        Word {
            folded: fold(&key),
            raw,
            before,
            quoted,
            output_line,
        }
    }
}

fn is_apostrophe(c: char) -> bool {
    matches!(
        c,
        '\'' | '\u{2019}' | '\u{2018}' | '`' | '\u{b4}' | '\u{2bc}'
    )
}

/// The text between two words separates clauses: a comma, a sentence end, a colon, a
/// bracket, a line break, a dash with space around it. `v1.2` and `go-ahead` stay whole.
fn is_boundary(between: &str) -> bool {
    if between
        .chars()
        .any(|c| ",;:!?\n()[]{}…—–\"".contains(c) || QUESTION_MARKS.contains(&c))
    {
        return true;
    }
    (between.contains('.') || between.contains('-')) && between.chars().any(char::is_whitespace)
}

/// The text between two words ends a sentence.
fn ends_sentence(between: &str) -> bool {
    between
        .chars()
        .any(|c| "!;\n".contains(c) || QUESTION_MARKS.contains(&c))
        || (between.contains('.') && between.chars().any(char::is_whitespace))
}

/// For each line of `text`, whether it looks like pasted output: by itself, or because an
/// earlier line ended with a colon ("here is what it printed:").
fn output_lines(text: &str) -> Vec<bool> {
    let mut introduced = false;
    let mut lines = Vec::new();
    for line in text.split('\n') {
        lines.push(introduced || looks_like_output(line));
        if line.trim_end().ends_with(':') {
            introduced = true;
        }
    }
    lines
}

/// A line that looks like pasted command output: a clock time, a log level, a prompt.
fn looks_like_output(line: &str) -> bool {
    let trimmed = line.trim_start();
    let indented = line.starts_with("    ") || line.starts_with('\t');
    if indented
        || ["$ ", "# ", "> "]
            .iter()
            .any(|prompt| trimmed.starts_with(prompt))
    {
        return true;
    }
    let chars: Vec<char> = line.chars().collect();
    let clock = chars.windows(5).any(|w| {
        w[0].is_ascii_digit()
            && w[1].is_ascii_digit()
            && w[2] == ':'
            && w[3].is_ascii_digit()
            && w[4].is_ascii_digit()
    });
    let log_level = [
        "info", "warn", "warning", "error", "debug", "trace", "fatal", "notice",
    ]
    .iter()
    .any(|level| {
        line.match_indices(level).any(|(at, _)| {
            let before = &line[..at];
            let after = &line[at + level.len()..];
            (before.ends_with('[') && after.starts_with(']'))
                || after.starts_with(':')
                || before.ends_with("level=")
        })
    });
    clock || log_level
}

fn in_list(list: &[&str], folded: &str) -> bool {
    list.iter().any(|entry| folds_to(entry, folded))
}

fn phrase_in(list: &[(&str, &str)], first: &Word, second: &Word) -> bool {
    list.iter()
        .any(|(a, b)| folds_to(a, &first.folded) && folds_to(b, &second.folded))
}

/// `entry` with its letter runs collapsed is `folded` (compared without allocating).
fn folds_to(entry: &str, folded: &str) -> bool {
    let mut target = folded.chars();
    let mut last = None;
    for c in entry.chars() {
        if last == Some(c) {
            continue;
        }
        last = Some(c);
        if target.next() != Some(c) {
            return false;
        }
    }
    target.next().is_none()
}

/// The folded letters of the negations and deferrals that are matched with misspellings,
/// computed once.
static NEGATION_FORMS: LazyLock<Vec<Vec<char>>> =
    LazyLock::new(|| misspellable_forms(&[NEGATIONS, NEGATION_STEMS]));
static DEFERRAL_FORMS: LazyLock<Vec<Vec<char>>> =
    LazyLock::new(|| misspellable_forms(&[DEFERRALS]));

fn misspellable_forms(lists: &[&[&str]]) -> Vec<Vec<char>> {
    lists
        .iter()
        .flat_map(|list| list.iter())
        .map(|entry| fold(entry).chars().collect::<Vec<char>>())
        .filter(|form| form.len() >= 4)
        .collect()
}

fn is_negation(word: &Word) -> bool {
    let folded = word.folded.as_str();
    if in_list(NEGATIONS, folded) || in_list(CONTRACTION_STEMS, folded) {
        return true;
    }
    // The stems are written folded.
    if NEGATION_STEMS.iter().any(|stem| folded.starts_with(stem)) {
        return true;
    }
    // Any `n't` word: `isn't`, `mightn't`, `don’t`.
    let chars: Vec<char> = word.raw.chars().collect();
    let contraction = chars
        .windows(3)
        .any(|w| w[0] == 'n' && is_apostrophe(w[1]) && w[2] == 't');
    contraction || misspells(folded, &NEGATION_FORMS)
}

fn is_deferral(word: &Word) -> bool {
    let folded = word.folded.as_str();
    if in_list(DEFERRALS, folded) || misspells(folded, &DEFERRAL_FORMS) {
        return true;
    }
    // `5pm`, `10am`.
    let digits = folded.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &folded[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && matches!(suffix, "am" | "pm")
}

/// `folded` is one of `list` with two adjacent letters swapped (words of four letters or
/// more), or one edit away (words of six letters or more).
fn misspells(folded: &str, forms: &[Vec<char>]) -> bool {
    let word: Vec<char> = folded.chars().collect();
    if word.len() < 3 || in_list(NOT_MISSPELLINGS, folded) {
        return false;
    }
    forms.iter().any(|form| {
        (form.len() == word.len() && is_transposition(&word, form))
            || (form.len() >= 6 && within_one_edit(&word, form))
    })
}

/// Real words one edit from a negation (`should` from `shouldn`), which are not its misspelling.
const NOT_MISSPELLINGS: &[&str] = &["should", "would", "could", "cancer"];

/// `ahead` as typed after `go`: `ahead`, `ahed`, `aheda`, `aheaad`.
fn is_ahead(folded: &str) -> bool {
    let chars: Vec<char> = folded.chars().collect();
    within_one_edit(&chars, &['a', 'h', 'e', 'a', 'd'])
}

/// `a` is `b` with two adjacent letters swapped.
fn is_transposition(a: &[char], b: &[char]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let Some(first) = (0..a.len()).find(|&idx| a[idx] != b[idx]) else {
        return false;
    };
    let second = first + 1;
    second < a.len()
        && a[first] == b[second]
        && a[second] == b[first]
        && a[second + 1..] == b[second + 1..]
}

/// The canonical approval word `folded` stands for, if any.
fn approval_word(folded: &str) -> Option<&'static str> {
    if let Some((_, canonical)) = APPROVAL_WORDS
        .iter()
        .find(|(word, _)| folds_to(word, folded))
    {
        return Some(canonical);
    }
    let chars: Vec<char> = folded.chars().collect();
    // The swappable words are written folded.
    if let Some(word) = SWAPPABLE_APPROVAL_WORDS.iter().find(|word| {
        let form: Vec<char> = word.chars().collect();
        is_transposition(&chars, &form)
    }) {
        return approval_word(word);
    }
    if chars.len() < 5 {
        return None;
    }
    FUZZY_APPROVAL_WORDS.iter().copied().find(|word| {
        let form = fold(word);
        let form_chars: Vec<char> = form.chars().collect();
        !is_inflection_of(folded, &form) && within_one_edit(&chars, &form_chars)
    })
}

/// `continues`, `proceeds`, `continued`: an approval word plus one suffix letter describes
/// something ("the error continues") rather than approving, so it is not a misspelling.
fn is_inflection_of(folded: &str, word: &str) -> bool {
    match folded.strip_prefix(word) {
        Some(rest) => matches!(rest, "s" | "d" | "r"),
        None => false,
    }
}

/// Collapses runs of the same letter: `procceed` -> `proced`, `yesss` -> `yes`.
fn fold(word: &str) -> String {
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

/// `a` and `b` are at most one edit apart: equal, one letter changed, inserted or deleted,
/// or two adjacent letters swapped (an optimal-string-alignment distance of at most one).
fn within_one_edit(a: &[char], b: &[char]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match long.len() - short.len() {
        0 => {
            let n_diffs = (0..short.len())
                .filter(|&idx| short[idx] != long[idx])
                .count();
            n_diffs <= 1 || is_transposition(short, long)
        }
        1 => {
            let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
            short[prefix..] == long[prefix + 1..]
        }
        _ => false,
    }
}

/// The table of operator messages with their readings is `pub(crate)` so that session tests can
/// draw operator messages, tricky ones included, with the reading SPEC gives them.
#[cfg(test)]
pub(crate) mod tests;
