//! Tests for GATE-4 assent detection: one line per message.

use proptest::prelude::*;

use super::*;

fn assent(word: &str) -> AssentVerdict {
    AssentVerdict::Assent {
        word: word.to_owned(),
    }
}

fn negated(word: &str) -> AssentVerdict {
    AssentVerdict::Negated {
        word: word.to_owned(),
    }
}

#[track_caller]
fn check(text: &str, expected: AssentVerdict) {
    assert_eq!(detect_assent(text), expected, "message: {text:?}");
}

// rule: GATE-4
#[test]
fn every_listed_approval_word_assents() {
    check("approved", assent("approved"));
    check("approve", assent("approve"));
    check("yes", assent("yes"));
    check("y", assent("y"));
    check("go", assent("go"));
    check("go ahead", assent("go ahead"));
    check("proceed", assent("proceed"));
    check("continue", assent("continue"));
    check("ok", assent("ok"));
    check("okay", assent("okay"));
    check("do it", assent("do it"));
    check("lgtm", assent("lgtm"));
}

// rule: GATE-4
#[test]
fn approval_words_are_case_insensitive() {
    check("YES", assent("yes"));
    check("Proceed.", assent("proceed"));
    check("LGTM!", assent("lgtm"));
    check("Go Ahead", assent("go ahead"));
}

// rule: GATE-4
#[test]
fn surrounding_words_are_allowed() {
    check("yes, go ahead with the rest", assent("yes"));
    check("ok proceed with the rest", assent("ok"));
    check("looks good, approved", assent("approved"));
    check("please do it now", assent("do it"));
    check("alright then, go ahead", assent("go ahead"));
}

// rule: GATE-4
#[test]
fn punctuation_and_emoji_are_ignored() {
    check("👍 yes!!!", assent("yes"));
    check("ok 🚀", assent("ok"));
    check("...proceed...", assent("proceed"));
    check("\"approved\"", assent("approved"));
    check("yes!?", AssentVerdict::Silent);
}

// rule: GATE-4
#[test]
fn common_misspellings_assent() {
    check("procceed", assent("proceed"));
    check("proced", assent("proceed"));
    check("proceeed", assent("proceed"));
    check("aproved", assent("approved"));
    check("approv", assent("approve"));
    check("continu", assent("continue"));
    check("contiune", assent("continue"));
    check("okey", assent("okay"));
    check("oky", assent("okay"));
    check("yess", assent("yes"));
    check("yesss please", assent("yes"));
    check("okkk", assent("ok"));
    check("yep", assent("yep"));
    check("yeah sure", assent("yeah"));
    check("sure", assent("sure"));
}

// rule: GATE-4
#[test]
fn word_boundaries_matter() {
    check("goal", AssentVerdict::Silent);
    check("going", AssentVerdict::Silent);
    check("okra", AssentVerdict::Silent);
    check("yesterday", AssentVerdict::Silent);
    check("two days ago", AssentVerdict::Silent);
    check("the ego of it", AssentVerdict::Silent);
    check("improve the plan", AssentVerdict::Silent);
}

// rule: GATE-4
#[test]
fn inflections_describe_rather_than_approve() {
    check("the error continues after restart", AssentVerdict::Silent);
    check("it proceeds slowly", AssentVerdict::Silent);
}

// rule: GATE-4
#[test]
fn short_words_are_never_fuzzy() {
    check("no", negated("no"));
    check("so", AssentVerdict::Silent);
    check("oh", AssentVerdict::Silent);
    check("ye", AssentVerdict::Silent);
    check("do", AssentVerdict::Silent);
}

// rule: GATE-4
#[test]
fn negation_anywhere_wins_over_approval() {
    check("no", negated("no"));
    check("no, don't proceed", negated("no"));
    check("wait, not yet", negated("wait"));
    check("don't go ahead", negated("don't"));
    check("dont go ahead", negated("dont"));
    check("don’t proceed", negated("don’t"));
    check("do not proceed", negated("not"));
    check("stop", negated("stop"));
    check("hold on, yes but first check the disk", negated("hold"));
    check("cancel that", negated("cancel"));
    check("abort", negated("abort"));
    check("never", negated("never"));
    check("yes. actually no", negated("no"));
    check("ok, but it shouldn't restart nginx", negated("shouldn't"));
    check("yes, go ahead and stop nginx", negated("stop"));
    check("Nope.", negated("nope"));
}

// rule: GATE-4
#[test]
fn negation_words_inside_other_words_do_not_negate() {
    check("nothing to add, go ahead", assent("go ahead"));
    check("yes, the threshold is fine", assent("yes"));
    check("yes, nonstop", assent("yes"));
    check("ok, know what, proceed", assent("ok"));
}

// rule: GATE-4
#[test]
fn questions_are_silent() {
    check("can you continue to explain?", AssentVerdict::Silent);
    check("why proceed?", AssentVerdict::Silent);
    check("should I approve", AssentVerdict::Silent);
    check("yes, but why?", AssentVerdict::Silent);
    check("ok?", AssentVerdict::Silent);
    check("go ahead?", AssentVerdict::Silent);
}

// rule: GATE-4
#[test]
fn an_approving_sentence_beside_a_question_assents() {
    check("Yes. Why step 3 though?", assent("yes"));
    check("what does step 2 do? ok go ahead anyway", assent("ok"));
    check(
        "go ahead!\ncan you also check the logs afterwards?",
        assent("go ahead"),
    );
}

// rule: GATE-4
#[test]
fn a_dot_inside_a_word_does_not_end_the_sentence() {
    check("go ahead with v1.2?", AssentVerdict::Silent);
    check("upgrade to 1.2. go", assent("go"));
}

// rule: GATE-4
#[test]
fn messages_without_approval_are_silent() {
    check("", AssentVerdict::Silent);
    check("   ", AssentVerdict::Silent);
    check("🙂", AssentVerdict::Silent);
    check("show me the disk usage first", AssentVerdict::Silent);
    check("thanks", AssentVerdict::Silent);
}

#[test]
fn edit_distance_counts_transpositions_as_one() {
    assert_eq!(edit_distance("contiune", "continue"), 1);
    assert_eq!(edit_distance("approve", "approved"), 1);
    assert_eq!(edit_distance("abc", "abc"), 0);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("going", "go"), 3);
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
        Just("do not"),
        Just("stop"),
        Just("WAIT"),
        Just("hold"),
        Just("not yet"),
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
