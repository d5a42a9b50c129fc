//! The text bash reads as arithmetic inside a word, and the variable names it mentions
//! (CLASSIFY-8): a variable whose value came from data (`read`, `mapfile`, a loop over
//! file names, `x=$(cmd)`) runs the code in that value's subscripts when arithmetic names
//! it (`read x < f; echo $((x))`), and so does an indirect expansion of it (`${!x}`).

/// The arithmetic parts of a word's source spelling: the bodies of `$(( ))` and `$[ ]`,
/// the subscripts of `${name[...]}`, the offset and length of `${name:offset:length}`, and
/// the name of an indirect `${!name}`.
pub(crate) fn arithmetic_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"$[") {
            // The old spelling of `$(( ))`.
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b']')
                .map_or(bytes.len(), |n| at + n);
            parts.push(text.get(at + 2..end).unwrap_or(""));
            at = end;
        } else if bytes[at..].starts_with(b"$((") {
            let end = closing(bytes, at + 1).unwrap_or(bytes.len());
            // `get`: an unterminated `$((` may end inside a multi-byte character.
            parts.push(
                text.get(at + 3..end.saturating_sub(2).max(at + 3))
                    .unwrap_or(""),
            );
            at = end;
        } else if bytes[at..].starts_with(b"${") {
            let end = bytes[at..]
                .iter()
                .position(|&b| b == b'}')
                .map_or(bytes.len(), |n| at + n);
            let inner = text.get(at + 2..end).unwrap_or("");
            // `${!name}` expands the variable `name` names, subscript and all.
            if let Some(indirect) = inner.strip_prefix('!') {
                let name_end = indirect
                    .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                    .unwrap_or(indirect.len());
                parts.push(&indirect[..name_end]);
            }
            if let (Some(open), Some(close)) = (inner.find('['), inner.rfind(']'))
                && open < close
            {
                parts.push(&inner[open + 1..close]);
            }
            // `${s:offset:length}`: both are arithmetic (`${s:-x}` and the like are not).
            let name_end = inner
                .trim_start_matches(['#', '!'])
                .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                .map(|n| n + inner.len() - inner.trim_start_matches(['#', '!']).len());
            if let Some(colon) = name_end.filter(|&n| inner[n..].starts_with(':'))
                && !inner[colon + 1..].starts_with(['-', '=', '?', '+'])
            {
                parts.push(&inner[colon + 1..]);
            }
            at = end;
        }
        at += 1;
    }
    parts
}

/// The first of `names` that `text` mentions as a whole identifier (`x` in `x+1`, `$x`,
/// `a[x]`), if any.
pub(crate) fn mentioned<'n>(text: &str, names: &'n [String]) -> Option<&'n str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'_' || bytes[at].is_ascii_alphabetic() {
            let start = at;
            while at < bytes.len() && (bytes[at] == b'_' || bytes[at].is_ascii_alphanumeric()) {
                at += 1;
            }
            let word = &text[start..at];
            if let Some(name) = names.iter().find(|name| *name == word) {
                return Some(name);
            }
        } else {
            at += 1;
        }
    }
    None
}

/// The index just past the `)` that closes the `(` at `open`.
fn closing(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_parts_are_found_in_expansions_and_subscripts() {
        assert_eq!(arithmetic_parts("$((x + 1))"), ["x + 1"]);
        assert_eq!(
            arithmetic_parts("a${b[i]}c$(( (n) * 2 ))"),
            ["i", " (n) * 2 "]
        );
        assert!(arithmetic_parts("$x ${y}").is_empty());
        assert_eq!(arithmetic_parts("${!ref}"), ["ref"]);
        assert_eq!(arithmetic_parts("${s:x:2}"), ["x:2"]);
        assert!(arithmetic_parts("${s:-x}").is_empty());
        assert_eq!(arithmetic_parts("$[x+1]"), ["x+1"]);
    }

    #[test]
    fn unterminated_text_never_panics() {
        assert_eq!(arithmetic_parts("$((é"), [""]);
        assert!(arithmetic_parts("${aé").is_empty());
    }

    #[test]
    fn a_name_is_mentioned_only_as_a_whole_identifier() {
        let names = vec!["x".to_string()];
        assert_eq!(mentioned("x+1", &names), Some("x"));
        assert_eq!(mentioned("$x * 2", &names), Some("x"));
        assert_eq!(mentioned("xy + y", &names), None);
    }
}
