//! SECRET-2: where redaction applies. Every tool result the session stores for the model
//! passes [`for_model`] (through `Session::record_tool_call`), and so does a continuation
//! that quotes a command's output; what secrets look like is `nomos-redact`'s to say.

use crate::event::RedactedKind;

/// A text the model may read, with what was taken out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForModel {
    /// The redacted text, with a last line that says what was redacted.
    pub text: String,
    /// Each kind redacted, with its count.
    pub kinds: Vec<RedactedKind>,
}

/// The text with its secrets replaced by `[redacted: KIND]` and a note the model reads, or
/// `None` when it holds no secret the scanner knows.
pub fn for_model(text: &str) -> Option<ForModel> {
    let scanner = nomos_redact::Scanner::builtin();
    let mut redacted = scanner.redact(text);
    // A text built from output redacted earlier (a fan-out's rows, cut to a line each)
    // holds markers already: they count, so the event and the note still say so.
    let mut seen: Vec<&str> = Vec::new();
    for rule in scanner.rules() {
        let kind = rule.kind();
        if seen.contains(&kind) {
            continue;
        }
        seen.push(kind);
        let earlier = text.matches(&nomos_redact::marker(kind)).count();
        if earlier == 0 {
            continue;
        }
        match redacted.counts.iter_mut().find(|c| c.kind == kind) {
            Some(found) => found.count += earlier,
            None => redacted.counts.push(nomos_redact::KindCount {
                kind: kind.to_owned(),
                count: earlier,
            }),
        }
    }
    if redacted.counts.is_empty() {
        return None;
    }
    let total = redacted.total();
    let markers: Vec<String> = redacted
        .counts
        .iter()
        .map(|c| format!("{} x{}", nomos_redact::marker(&c.kind), c.count))
        .collect();
    let noun = if total == 1 {
        "secret was"
    } else {
        "secrets were"
    };
    let mut out = redacted.text;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[{total} {noun} redacted ({}); the operator can see the original in the console; do not retry the read or read it another way]",
        markers.join(", ")
    ));
    let kinds = redacted
        .counts
        .into_iter()
        .map(|c| RedactedKind {
            kind: c.kind,
            count: u32::try_from(c.count).unwrap_or(u32::MAX),
        })
        .collect();
    Some(ForModel { text: out, kinds })
}

/// The text the model may read: [`for_model`]'s, or the text itself when it holds nothing.
pub fn redact_for_model(text: &str) -> String {
    for_model(text).map_or_else(|| text.to_owned(), |found| found.text)
}

#[cfg(test)]
mod tests {
    use super::for_model;

    // rule: SECRET-2
    #[test]
    fn a_redacted_text_says_what_was_redacted_and_not_to_retry() {
        let found = for_model("exit 0\nstdout:\nDB_PASSWORD=hunter2\n").unwrap();
        assert!(!found.text.contains("hunter2"), "{}", found.text);
        assert!(found.text.contains("DB_PASSWORD=[redacted: secret value]"));
        assert!(
            found
                .text
                .ends_with("[1 secret was redacted ([redacted: secret value] x1); the operator can see the original in the console; do not retry the read or read it another way]"),
            "{}",
            found.text
        );
        assert_eq!(found.kinds[0].kind, "secret value");
        assert_eq!(found.kinds[0].count, 1);
        assert_eq!(for_model("exit 0\nstdout:\nok\n"), None);
    }
}
