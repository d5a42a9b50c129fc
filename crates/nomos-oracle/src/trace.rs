//! Reads the text `strace -f -o FILE` writes into system calls: one [`Call`] per call, with
//! interrupted calls (`<unfinished ...>` then `<... name resumed>`) joined back together.

use std::collections::HashMap;

/// One traced system call, or the end of a traced process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The process (thread) that made it, as the tracer's pid namespace numbers it.
    pub pid: u32,
    /// What the line records.
    pub event: Event,
    /// The whole line, joined when it was interrupted, for the report.
    pub line: String,
}

/// What a trace line records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A system call with its arguments (top-level, as strace prints them) and its result.
    Syscall {
        /// The call's name (`openat`).
        name: String,
        /// The arguments, split at top-level commas.
        args: Vec<String>,
        /// What follows ` = `: `3`, `-1 EROFS (Read-only file system)`, `?`.
        result: String,
    },
    /// `+++ exited with N +++` or `+++ killed by SIG +++`.
    Exit,
}

impl Call {
    /// The call's name, if the line is a system call.
    pub fn name(&self) -> Option<&str> {
        match &self.event {
            Event::Syscall { name, .. } => Some(name),
            Event::Exit => None,
        }
    }

    /// The argument at `idx`, if the line is a system call that has one.
    pub fn arg(&self, idx: usize) -> Option<&str> {
        match &self.event {
            Event::Syscall { args, .. } => args.get(idx).map(String::as_str),
            Event::Exit => None,
        }
    }

    /// The call's result as a number, when it returned one (`= 12` is 12; `= -1 ENOENT`
    /// is -1).
    pub fn returned(&self) -> Option<i64> {
        match &self.event {
            Event::Syscall { result, .. } => result.split_whitespace().next()?.parse().ok(),
            Event::Exit => None,
        }
    }
}

/// Reads a whole trace. Lines it cannot read (signals, strace's own notes) are skipped.
pub fn parse_trace(text: &str) -> Vec<Call> {
    let mut pending: HashMap<u32, String> = HashMap::new();
    let mut calls = Vec::new();
    for raw in text.lines() {
        let Some((pid, rest)) = split_pid(raw) else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("+++") {
            calls.push(Call {
                pid,
                event: Event::Exit,
                line: raw.to_owned(),
            });
            continue;
        }
        if rest.starts_with("---") {
            continue;
        }
        let full = if let Some(resumed) = rest.strip_prefix("<... ") {
            let Some((_, tail)) = resumed.split_once(" resumed>") else {
                continue;
            };
            let head = pending.remove(&pid).unwrap_or_default();
            format!("{head}{tail}")
        } else if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, head.to_owned());
            continue;
        } else {
            rest.to_owned()
        };
        if let Some(event) = parse_call(&full) {
            calls.push(Call {
                pid,
                event,
                line: format!("{pid} {full}"),
            });
        }
    }
    // A call the process never returned from (it was killed inside it) still happened.
    let mut cut: Vec<(u32, String)> = pending.into_iter().collect();
    cut.sort();
    for (pid, head) in cut {
        if let Some(event) = parse_call(&format!("{head}) = ?")) {
            calls.push(Call {
                pid,
                event,
                line: format!("{pid} {head} <unfinished>"),
            });
        }
    }
    calls
}

fn split_pid(line: &str) -> Option<(u32, &str)> {
    let end = line.find(|c: char| !c.is_ascii_digit())?;
    let pid = line[..end].parse().ok()?;
    Some((pid, &line[end..]))
}

fn parse_call(text: &str) -> Option<Event> {
    let open = text.find('(')?;
    let name = &text[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let (inner, result) = match result_split(text) {
        Some((close, result)) if close >= open => (&text[open + 1..close], result),
        _ => (text[open + 1..].trim_end_matches(')'), "?"),
    };
    Some(Event::Syscall {
        name: name.to_owned(),
        args: split_args(inner),
        result: result.trim().to_owned(),
    })
}

/// Where the argument list closes and what the call returned: strace pads short calls with
/// spaces before ` = ` to align the results, so the `)` may be followed by several spaces.
fn result_split(text: &str) -> Option<(usize, &str)> {
    let equals = text.rfind(" = ")?;
    let close = text[..equals].trim_end().len().checked_sub(1)?;
    (text.as_bytes().get(close) == Some(&b')')).then(|| (close, &text[equals + 3..]))
}

/// Splits strace's argument text at the commas outside strings, brackets and braces.
pub fn split_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut current = String::new();
    for c in text.chars() {
        if in_string {
            current.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                current.push(c);
            }
            '(' | '[' | '{' => {
                depth += 1;
                current.push(c);
            }
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => {
                args.push(current.trim().to_owned());
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        args.push(current.trim().to_owned());
    }
    args
}

/// The text of a quoted strace string argument (`"/tmp/x"` is `/tmp/x`), with C escapes
/// undone; `None` when the argument is not a string (`NULL`, a number).
pub fn string_arg(arg: &str) -> Option<String> {
    let body = arg.strip_prefix('"')?;
    let end = body.rfind('"')?;
    let body = &body[..end];
    let mut out = Vec::new();
    let bytes = body.as_bytes();
    let mut idx = 0;
    while idx < bytes.len() {
        let byte = bytes[idx];
        idx += 1;
        if byte != b'\\' || idx >= bytes.len() {
            out.push(byte);
            continue;
        }
        let escape = bytes[idx];
        idx += 1;
        match escape {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = body.get(idx..idx + 2).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(value) => {
                        out.push(value);
                        idx += 2;
                    }
                    Err(_) => out.push(b'x'),
                }
            }
            b'0'..=b'7' => {
                let mut value = u32::from(escape - b'0');
                let mut digits = 1;
                while digits < 3 && idx < bytes.len() && (b'0'..=b'7').contains(&bytes[idx]) {
                    value = value * 8 + u32::from(bytes[idx] - b'0');
                    idx += 1;
                    digits += 1;
                }
                out.push(u8::try_from(value & 0xff).unwrap_or(0));
            }
            other => out.push(other),
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_call_is_joined_with_its_resumption() {
        let calls = parse_trace(
            "5     vfork( <unfinished ...>\n\
             6     execve(\"/usr/bin/ls\", [\"ls\", \"/etc\"], 0x5 /* 35 vars */ <unfinished ...>\n\
             5     <... vfork resumed>)              = 6\n\
             6     <... execve resumed>)             = 0\n\
             6     +++ exited with 0 +++\n",
        );
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].name(), Some("vfork"));
        assert_eq!(calls[0].returned(), Some(6));
        assert_eq!(calls[1].name(), Some("execve"));
        assert_eq!(calls[1].arg(0), Some("\"/usr/bin/ls\""));
        assert_eq!(calls[1].arg(1), Some("[\"ls\", \"/etc\"]"));
        assert_eq!(calls[1].returned(), Some(0));
        assert_eq!(calls[2].event, Event::Exit);
    }

    #[test]
    fn arguments_split_outside_strings_and_brackets() {
        assert_eq!(
            split_args(r#"AT_FDCWD, "/a,b\"c", O_WRONLY|O_CREAT, {x=1, y=2}"#),
            vec!["AT_FDCWD", r#""/a,b\"c""#, "O_WRONLY|O_CREAT", "{x=1, y=2}"]
        );
    }

    #[test]
    fn string_arguments_lose_their_quotes_and_escapes() {
        assert_eq!(
            string_arg(r#""/tmp/a\nb\x41\101""#).as_deref(),
            Some("/tmp/a\nbAA")
        );
        assert_eq!(string_arg("NULL"), None);
    }

    #[test]
    fn a_call_never_returned_from_is_kept() {
        let calls = parse_trace("7 kill(-1, SIGKILL <unfinished ...>\n");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name(), Some("kill"));
        assert_eq!(calls[0].arg(0), Some("-1"));
    }
}
