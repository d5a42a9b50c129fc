//! Tests for GATE-4 assent detection: one table of messages with their readings, and
//! properties that hold for every message built from the classes GATE-4 names.

use proptest::prelude::*;

use super::*;

/// The reading a message must get, written short for the table.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Expected {
    /// Assents, read as this canonical approval word.
    A(&'static str),
    /// Negates or defers, at this word as written (lowercased).
    N(&'static str),
    /// A question: not assent.
    Q,
    /// A condition or a change: not assent.
    C,
    /// A hedge or sarcasm: not assent.
    D,
    /// An approval word in another sense (pasted output, `go over`): not assent.
    O,
    /// Nothing either way.
    S,
}

use Expected::{A, C, D, N, O, Q, S};

impl Expected {
    fn reading(self) -> Reading {
        match self {
            A(word) => Reading::Assent(word),
            N(word) => Reading::Negated(word.to_owned()),
            Q => Reading::Withheld(Withheld::Question),
            C => Reading::Withheld(Withheld::Condition),
            D => Reading::Withheld(Withheld::Doubt),
            O => Reading::Withheld(Withheld::OtherSense),
            S => Reading::Silent,
        }
    }

    /// The message opens the assent window (GATE-4).
    pub(crate) fn assents(self) -> bool {
        matches!(self, A(_))
    }
}

/// Operator messages written in reply to a proposed plan, and how GATE-4 reads each.
pub(crate) const CASES: &[(&str, Expected)] = &[
    // Every listed approval word, alone.
    ("approved", A("approved")),
    ("approve", A("approve")),
    ("yes", A("yes")),
    ("y", A("y")),
    ("go", A("go")),
    ("go ahead", A("go ahead")),
    ("proceed", A("proceed")),
    ("continue", A("continue")),
    ("ok", A("ok")),
    ("okay", A("okay")),
    ("do it", A("do it")),
    ("lgtm", A("lgtm")),
    // Case, punctuation and emoji do not matter.
    ("YES", A("yes")),
    ("Proceed.", A("proceed")),
    ("LGTM!", A("lgtm")),
    ("Go Ahead", A("go ahead")),
    ("OK", A("ok")),
    ("Y", A("y")),
    ("y.", A("y")),
    ("y pls", A("y")),
    ("go.", A("go")),
    ("ok!", A("ok")),
    ("👍 yes!!!", A("yes")),
    ("ok 🚀", A("ok")),
    ("Approved 👍", A("approved")),
    ("\"approved\"", A("approved")),
    // Surrounding words are allowed.
    ("yes, go ahead with the rest", A("yes")),
    ("ok proceed with the rest", A("ok")),
    ("looks good, approved", A("approved")),
    ("plan approved", A("approved")),
    ("I approve the plan", A("approve")),
    ("please do it now", A("do it")),
    ("alright then, go ahead", A("go ahead")),
    ("you can proceed", A("proceed")),
    ("please proceed with step 1", A("proceed")),
    ("feel free to continue", A("continue")),
    ("continue with the plan", A("continue")),
    ("let's go", A("go")),
    ("good to go", A("go")),
    ("go for it", A("go")),
    ("go go go", A("go")),
    ("go now", A("go")),
    ("let's do it", A("do it")),
    ("lets go ahead", A("go ahead")),
    ("sounds ok to me", A("ok")),
    ("that's ok, go ahead", A("ok")),
    ("I'm ok with that", A("ok")),
    ("ok then", A("ok")),
    ("Okay, sounds good", A("okay")),
    ("yes please", A("yes")),
    ("yes, right away", A("yes")),
    ("yes — do it", A("yes")),
    ("approved, thanks", A("approved")),
    ("sure, proceed", A("sure")),
    ("yeah sure", A("yeah")),
    ("yep", A("yep")),
    ("sgtm", A("sgtm")),
    ("you have my go-ahead", A("go ahead")),
    ("go ahead and restart nginx", A("go ahead")),
    ("nothing to add, go ahead", A("go ahead")),
    ("yes, the threshold is fine", A("yes")),
    ("yes, nonstop", A("yes")),
    ("upgrade to 1.2. go", A("go")),
    ("run the read-only checks, then proceed", A("proceed")),
    ("I understand the risk, proceed", A("proceed")),
    ("5 minutes of downtime is fine, go ahead", A("go ahead")),
    ("good morning! approved", A("approved")),
    ("this is it, go ahead", A("go ahead")),
    ("continue with the upgrade", A("continue")),
    ("continue with ring 2 of the rollout", A("continue")),
    ("checked the diff, continue", A("continue")),
    ("Ok. So let's proceed", A("ok")),
    ("Ok! So let's proceed", A("ok")),
    ("Yes. Right, let's do it.", A("yes")),
    ("approved :)", A("approved")),
    ("approved (finally)", A("approved")),
    ("approved for change 48213", A("approved")),
    // One edit from `cancel`, and no negation.
    ("approved for the cancer registry hosts", A("approved")),
    // A slip onto the key next to Enter, and an ellipsis picking up an earlier thought.
    ("proceed]", A("proceed")),
    (" ... ok", A("ok")),
    ("approved [ignoring the disk warning]", A("approved")),
    // Common misspellings count.
    ("procceed", A("proceed")),
    ("proced", A("proceed")),
    ("proceeed", A("proceed")),
    ("aproved", A("approved")),
    ("approv", A("approve")),
    ("continu", A("continue")),
    ("contiune", A("continue")),
    ("okey", A("okay")),
    ("oky", A("okay")),
    ("oaky", A("okay")),
    ("yess", A("yes")),
    ("yesss please", A("yes")),
    ("okkk", A("ok")),
    ("okk", A("ok")),
    ("lgmt", A("lgtm")),
    ("go ahed", A("go ahead")),
    ("porceed", A("proceed")),
    ("approoved", A("approved")),
    ("contniue", A("continue")),
    ("okayy", A("okay")),
    // Negations, in any spelling or punctuation.
    ("no", N("no")),
    ("No.", N("no")),
    ("nope", N("nope")),
    ("Nope.", N("nope")),
    ("nah", N("nah")),
    ("noooo", N("noooo")),
    ("nooope, not that", N("nooope")),
    ("no, don't proceed", N("no")),
    ("don't proceed", N("don't")),
    ("dont proceed", N("dont")),
    ("don;t proceed", N("don;t")),
    ("don t proceed", N("don t")),
    ("don,t go ahead", N("don,t")),
    ("do not proceed", N("not")),
    ("dont't go ahead", N("dont't")),
    ("don’t proceed", N("don’t")),
    ("DON'T", N("don't")),
    ("do n't go", N("n't")),
    ("dnt proceed", N("dnt")),
    ("can't do it now", N("can't")),
    (
        "you oughtn't restart nginx, go ahead with the rest",
        N("oughtn't"),
    ),
    ("stop", N("stop")),
    ("stopp", N("stopp")),
    ("STOP!!", N("stop")),
    ("stpo, go ahead", N("stpo")),
    ("wait", N("wait")),
    ("waaait, go ahead", N("waaait")),
    ("wait, not yet", N("wait")),
    ("hold on", N("hold")),
    ("hold on, yes but first check the disk", N("hold")),
    ("not yet", N("not")),
    ("cancel that", N("cancel")),
    ("cancle", N("cancle")),
    ("abort", N("abort")),
    ("never", N("never")),
    ("nvm", N("nvm")),
    ("never mind, go ahead", N("never")),
    ("yes. actually no", N("no")),
    ("yes, go ahead and stop nginx", N("stop")),
    ("ok, but it shouldn't restart nginx", N("shouldn't")),
    ("rejected", N("rejected")),
    ("I reject this plan", N("reject")),
    ("proceed? no.", N("no")),
    ("y/n", N("n")),
    ("👎", N("👎")),
    ("yes 🛑", N("🛑")),
    // Deferrals.
    ("proceed later", N("later")),
    ("let's go over the plan first", N("first")),
    ("first show me the diff", N("first")),
    ("frist check the disk", N("frist")),
    ("go ahead tonight", N("tonight")),
    ("do it tomorrow", N("tomorrow")),
    ("tomorow", N("tomorow")),
    ("ok, after the backup finishes", N("after")),
    ("approve it before lunch", N("before")),
    ("wait until monday", N("wait")),
    ("until the window opens, hold", N("until")),
    ("go ahead when ready", N("when")),
    ("once the backup is done, proceed", N("once")),
    ("yes at 5pm", N("5pm")),
    ("proceed on friday", N("friday")),
    ("looks good after the backup, proceed", N("after")),
    ("first of all, check the disk, then proceed", N("first")),
    ("let me check something", N("let me")),
    ("lemme look", N("lemme")),
    ("give me a sec", N("give me")),
    ("go ahead l8r", N("l8r")),
    ("2moro", N("2moro")),
    ("b4 that, check the disk", N("b4")),
    ("w8", N("w8")),
    ("awaiting your signal, ok", N("awaiting")),
    ("na", N("na")),
    // Questions.
    ("ok so what does step 2 do", Q),
    ("yes?", Q),
    ("ok?", Q),
    ("go ahead?", Q),
    ("yes!?", Q),
    ("proceed？", Q),
    ("can you continue to explain?", Q),
    ("why proceed", Q),
    ("should I approve", Q),
    ("yes, but why?", Q),
    ("Yes. Why step 3 though", Q),
    ("what does step 2 do? ok go ahead anyway", Q),
    ("go ahead!\ncan you also check the logs?", Q),
    ("how long will it take", Q),
    ("which host is it on", Q),
    ("is it safe to proceed", Q),
    ("can we proceed", Q),
    ("ok can you explain step 2", Q),
    ("ok, does it restart nginx", Q),
    ("do you need root for this", Q),
    ("explain step 2 please, then ok", Q),
    ("tell me more about step 3", Q),
    ("show me the diff", Q),
    ("help me understand step 2", Q),
    ("go ahead with v1.2?", Q),
    ("wdym by step 2", Q),
    ("could you approve it yourself", Q),
    ("ok, wdyt", Q),
    ("does step 2 restart nginx", Q),
    ("ok so will nginx restart", Q),
    // Conditions and changes.
    ("yes if the backup passed", C),
    ("ok but only step 1", C),
    ("yes, but skip step 3", C),
    ("approved unless it needs a reboot", C),
    ("go ahead except the restart", C),
    ("proceed without restarting nginx", C),
    ("lgtm, but restart nginx instead", C),
    ("ok, as long as nginx stays up", C),
    ("yes, make sure nginx stays up", C),
    ("do it, provided the disk has room", C),
    ("sure, though I'd rather do step 2 by hand", C),
    ("yes, on the condition that nginx stays up", C),
    ("proceed with step 1 only", C),
    ("ok, thanks", A("ok")),
    // Hedges and sarcasm.
    ("maybe", D),
    ("maybe go ahead", D),
    ("I guess ok", D),
    ("hmm, ok", D),
    ("hmmm ok", D),
    ("yeah right", D),
    ("yeah, right.", D),
    ("sure, whatever", D),
    ("lol yes", D),
    ("ok 🙄", D),
    ("go ahead /s", D),
    ("I think so, proceed", D),
    ("idk, ok", D),
    ("probably fine, go", D),
    ("good luck with that", D),
    ("sure...", D),
    ("yeah, ok…", D),
    ("...proceed...", D),
    ("go ahead 😂", D),
    ("Yeah. Right.", D),
    // Approval words in another sense.
    ("go over the plan with me", O),
    ("go back to step 1", O),
    ("let's go through it again", O),
    ("go to step 2", O),
    ("go on about the risks", O),
    ("ok so step 2 restarts nginx", O),
    ("ok, so the plan restarts nginx", O),
    ("continue to monitor the disk", O),
    ("continue monitoring", O),
    ("install go 1.22 on the box", O),
    ("go version", O),
    ("I'll do it myself", O),
    ("status: OK", O),
    ("Status: ok", O),
    ("HTTP/1.1 200 OK", O),
    ("200 OK", O),
    ("[  OK  ] Started nginx.service", O),
    ("ok=5 changed=0 failed=0", O),
    ("test result: ok. 12 passed", O),
    ("nginx: OK\nredis: OK", O),
    ("```\nOK\n```", O),
    ("the health check said `ok`", O),
    ("2026-12-01 07:00:01 ok", O),
    ("apt-get install --yes nginx", O),
    ("apt-get install -y nginx", O),
    ("Proceed (yes/no)", N("no")),
    ("Do you want to continue? [Y/n]", N("n")),
    ("confirm: yes/all", O),
    ("ok: 3 checks passed", O),
    ("ok 1 - parses the plan", O),
    ("the reviewer said lgtm", O),
    ("curl returned OK", O),
    ("continue with monitoring", O),
    ("continue the investigation", O),
    ("OK (3 tests)", O),
    ("test parse_plan ... ok", O),
    ("the check printed:\nOK", O),
    ("    ok", O),
    ("please continue with monitoring", O),
    ("go 1.22 is already on the box", O),
    ("the installer prompt offers yes/all", O),
    ("--yes", O),
    ("-y", O),
    ("INFO: health check ok", O),
    ("14:02:07 deploy approved", O),
    // Nothing either way.
    ("", S),
    ("   ", S),
    ("🙂", S),
    ("thanks", S),
    ("goal", S),
    ("going", S),
    ("okra", S),
    ("yesterday", S),
    ("two days ago", S),
    ("the ego of it", S),
    ("improve the plan", S),
    ("the error continues", S),
    ("it proceeds slowly", S),
    ("so", S),
    ("oh", S),
    ("ye", S),
    ("do", S),
    ("k", S),
    ("health check OK", S),
    ("nginx is ok", S),
    ("the PR got approved", S),
    ("errors continue", S),
    ("ok, noted", S),
    ("ok i see", S),
    ("interesting plan", S),
    ("pretty sure the disk is fine", S),
    ("y axis is latency", S),
    ("go figure", S),
    ("go for a smaller batch", S),
    ("sure enough the disk filled up again", S),
];

// rule: GATE-4
#[test]
fn every_message_in_the_table_gets_its_reading() {
    let mut wrong = Vec::new();
    for (text, expected) in CASES {
        let reading = read(text);
        if reading != expected.reading() {
            wrong.push(format!("{text:?}: expected {expected:?}, read {reading:?}"));
        }
    }
    assert!(wrong.is_empty(), "misread:\n{}", wrong.join("\n"));
}

// rule: GATE-4
#[test]
fn the_public_verdict_assents_exactly_where_the_table_assents() {
    for (text, expected) in CASES {
        let verdict = detect_assent(text);
        let assents = matches!(verdict, AssentVerdict::Assent { .. });
        assert_eq!(assents, expected.assents(), "{text:?} read as {verdict:?}");
    }
}

// rule: GATE-4
#[test]
fn the_table_has_120_messages_and_most_of_them_do_not_assent() {
    let n_not_assent = CASES
        .iter()
        .filter(|(_, expected)| !expected.assents())
        .count();
    assert!(CASES.len() >= 120, "only {} messages", CASES.len());
    assert!(
        n_not_assent * 2 >= CASES.len(),
        "only {n_not_assent} of {} do not assent",
        CASES.len()
    );
}

#[test]
fn table_messages_are_unique() {
    let mut texts: Vec<&str> = CASES.iter().map(|(text, _)| *text).collect();
    texts.sort_unstable();
    let n_before = texts.len();
    texts.dedup();
    assert_eq!(texts.len(), n_before, "a message is in the table twice");
}

#[test]
fn one_edit_is_a_change_an_insertion_a_deletion_or_a_swap() {
    let check = |a: &str, b: &str| {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        within_one_edit(&a, &b)
    };
    assert!(check("contiune", "continue"));
    assert!(check("approve", "approved"));
    assert!(check("approved", "approve"));
    assert!(check("aproved", "approved"));
    assert!(check("tomorow", "tomorrow"));
    assert!(check("abc", "abc"));
    assert!(check("cancel", "cancal"));
    assert!(!check("", "abc"));
    assert!(!check("going", "go"));
    assert!(!check("cancel", "cnacle"));
    assert!(!check("abcd", "badc"));
}

// --- Properties. The generators are a small grammar written from GATE-4's lists. ---

/// Approval words as an operator types them: listed words, case and misspellings.
const APPROVALS: &[&str] = &[
    "approved", "approve", "yes", "go ahead", "proceed", "continue", "ok", "okay", "do it", "lgtm",
    "go", "yess", "procceed", "aproved", "okk", "YES", "Go Ahead", "LGTM", "Proceed", "Approved",
    "OK", "Okay", "yesss", "contiune", "proceeed", "okey",
];

/// What may come before an approval word in an assenting message.
const LEAD_INS: &[&str] = &[
    "",
    "please ",
    "ok ",
    "yes, ",
    "looks good, ",
    "thanks, ",
    "alright, ",
    "sounds good, ",
    "great plan. ",
    "👍 ",
    "Fine. ",
];

/// What may come after an approval word in an assenting message.
const TAILS: &[&str] = &[
    "", "!", ".", " please", " 👍", ", thanks", " now", "!!", " then",
];

/// Negations, deferrals and questions, each of which withholds assent (GATE-4).
const WITHHOLDERS: &[&str] = &[
    "no",
    "nope",
    "nah",
    "noooo",
    "don't",
    "dont",
    "don;t",
    "don t",
    "do not",
    "dont't",
    "stop",
    "stopp",
    "wait",
    "hold",
    "hold on",
    "not yet",
    "later",
    "first",
    "before",
    "tonight",
    "tomorrow",
    "after",
    "until",
    "when",
    "cancel",
    "abort",
    "never",
    "but not yet",
    "after the backup",
    "first check the disk",
    "wait for me",
    "?",
    "why?",
    "what does step 2 do",
    "can you explain step 2",
    "how long will it take",
    "is it safe",
    "should we",
    "which host",
];

/// Ways of writing "don't" before a word.
const DONTS: &[&str] = &[
    "don't ", "dont ", "don;t ", "don t ", "do not ", "dont't ", "DON'T ", "Don’t ", "do n't ",
    "dnt ", "don,t ", "Dont ", "don`t ",
];

const SEPARATORS: &[&str] = &[" ", ", ", ". ", "\n", " - ", "... ", "! "];

fn one_of(list: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop::sample::select(list)
}

fn assenting_message() -> impl Strategy<Value = String> {
    (one_of(LEAD_INS), one_of(APPROVALS), one_of(TAILS))
        .prop_map(|(lead_in, approval, tail)| format!("{lead_in}{approval}{tail}"))
}

fn withholder() -> impl Strategy<Value = String> {
    (one_of(WITHHOLDERS), any::<bool>()).prop_map(|(word, shout)| {
        if shout {
            word.to_uppercase()
        } else {
            word.to_owned()
        }
    })
}

fn filler() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("yes".to_owned()),
        Just("go ahead".to_owned()),
        Just("proceed".to_owned()),
        Just("ok".to_owned()),
        Just("lgtm".to_owned()),
        Just("do it".to_owned()),
        Just("the".to_owned()),
        Just("plan".to_owned()),
        Just(",".to_owned()),
        Just("!".to_owned()),
        Just("?".to_owned()),
        Just("👍".to_owned()),
        "[a-zA-Z]{1,8}",
    ]
}

fn negation() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("no"),
        Just("No"),
        Just("don't"),
        Just("dont"),
        Just("don;t"),
        Just("do not"),
        Just("stop"),
        Just("stopp"),
        Just("WAIT"),
        Just("hold"),
        Just("not yet"),
        Just("nooo"),
        Just("cancel"),
        Just("abort"),
        Just("never"),
        Just("isn't"),
    ]
    .prop_map(str::to_owned)
}

proptest! {
    // rule: GATE-4
    #[test]
    fn messages_built_from_approval_words_assent(text in assenting_message()) {
        let verdict = detect_assent(&text);
        prop_assert!(matches!(verdict, AssentVerdict::Assent { .. }), "{text:?} read as {verdict:?}");
    }

    // rule: GATE-4
    #[test]
    fn appending_a_negation_deferral_or_question_withholds_assent(
        base in assenting_message(),
        extra in withholder(),
        separator in one_of(SEPARATORS),
        in_front in any::<bool>(),
    ) {
        let text = if in_front {
            format!("{extra}{separator}{base}")
        } else {
            format!("{base}{separator}{extra}")
        };
        let verdict = detect_assent(&text);
        prop_assert!(!matches!(verdict, AssentVerdict::Assent { .. }), "{text:?} read as {verdict:?}");
    }

    // rule: GATE-4
    #[test]
    fn dont_before_any_approval_word_never_assents(
        dont in one_of(DONTS),
        approval in one_of(APPROVALS),
        tail in one_of(TAILS),
    ) {
        let text = format!("{dont}{approval}{tail}");
        let verdict = detect_assent(&text);
        prop_assert!(matches!(verdict, AssentVerdict::Negated { .. }), "{text:?} read as {verdict:?}");
    }

    // rule: GATE-4
    #[test]
    fn a_message_with_a_negation_word_never_assents(
        before in prop::collection::vec(filler(), 0..6),
        word in negation(),
        after in prop::collection::vec(filler(), 0..6),
        separator in prop_oneof![Just(" "), Just(", "), Just(". "), Just("\n")],
    ) {
        let mut parts = before;
        parts.push(word);
        parts.extend(after);
        let text = parts.join(separator);
        let verdict = detect_assent(&text);
        prop_assert!(
            matches!(verdict, AssentVerdict::Negated { .. }),
            "{text:?} read as {verdict:?}"
        );
    }

    #[test]
    fn detection_is_total_on_any_text(text in any::<String>()) {
        let first = detect_assent(&text);
        prop_assert_eq!(first, detect_assent(&text));
    }
}

// rule: GATE-4
#[test]
fn a_question_after_the_object_of_do_it_still_asks() {
    for text in [
        "do it is it safe",
        "ok do it should we",
        "please do it 👍 IS IT SAFE",
    ] {
        let verdict = detect_assent(text);
        assert!(
            !matches!(verdict, AssentVerdict::Assent { .. }),
            "{text:?} read as {verdict:?}"
        );
    }
}
