//! The secret-read table checked by running it (SECRET-1, CLASSIFY-9): each row of
//! `fixtures/classify/secret-reads.tsv` (`expect<TAB>path<TAB>command`, `expect` being
//! `secret` or `ordinary`, `#` comments) runs traced, and the trace says whether a `secret`
//! row really opens its path and whether an `ordinary` row opens none of SECRET-1's default
//! secret paths.
//!
//! The table is read here, by the oracle's own parser, and judged by the oracle's own list of
//! default secret paths ([`is_default_secret`]): the classifier's code decides nothing here.
//! Inside the sandbox the real secrets are masked (empty files, empty directories: see
//! [`crate::sandbox`]), so a row opens its path without reading anything real. An attempt
//! counts: opening a path that is not there, or a `stat` of it that fails, is what the
//! command does on a host where it is.
//!
//! A row that cannot be checked here says why ([`RowOutcome::Unverifiable`]): it reads on
//! another host or in a container (`ssh`, `scp`, `docker exec`), or its program is not
//! installed.

use std::fmt::Write as _;
use std::path::Path;

use nomos_classify::Shell;

use crate::judge::Ending;
use crate::oracle::Config;
use crate::sandbox::{Job, Sandbox, SandboxError, TraceMode, Traced};
use crate::trace::{Call, Event, string_arg};

/// What a row says about its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The command reads `path`, a secret.
    Secret,
    /// The command reads no secret path.
    Ordinary,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRow {
    /// Its line in the file, from 1.
    pub line: usize,
    /// What it expects.
    pub expect: Expect,
    /// The secret path (`-` for an ordinary row), possibly a pattern: `*`, `?` and `[...]`
    /// as the shell reads them, `~/` and `.../` for any directory, `$NAME` for any word.
    pub path: String,
    /// The command.
    pub command: String,
}

/// Why the table could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretTableError {
    /// A row without its three fields.
    #[error("line {line}: expected `expect<TAB>path<TAB>command`")]
    Fields {
        /// The line, from 1.
        line: usize,
    },
    /// An `expect` other than `secret` or `ordinary`.
    #[error("line {line}: `{expect}` is neither `secret` nor `ordinary`")]
    Expect {
        /// The line, from 1.
        line: usize,
        /// What it said.
        expect: String,
    },
}

/// Reads the table: blank lines and `#` lines are skipped; everything after the second tab
/// is the command, unchanged.
pub fn parse_secret_reads(text: &str) -> Result<Vec<SecretRow>, SecretTableError> {
    let mut rows = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        let mut fields = raw.splitn(3, '\t');
        let (Some(expect), Some(path), Some(command)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Err(SecretTableError::Fields { line });
        };
        let expect = match expect.trim() {
            "secret" => Expect::Secret,
            "ordinary" => Expect::Ordinary,
            other => {
                return Err(SecretTableError::Expect {
                    line,
                    expect: other.to_owned(),
                });
            }
        };
        rows.push(SecretRow {
            line,
            expect,
            path: path.trim().to_owned(),
            command: command.to_owned(),
        });
    }
    Ok(rows)
}

/// What running one row under one shell showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowOutcome {
    /// The trace agrees with the row.
    Holds,
    /// The trace disagrees: what it shows instead.
    Mismatch(String),
    /// The row cannot be checked in this sandbox, and why.
    Unverifiable(String),
}

/// One row's outcome under one shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowResult {
    /// The row.
    pub row: SecretRow,
    /// The interpreter.
    pub shell: Shell,
    /// What the trace showed.
    pub outcome: RowOutcome,
}

/// Runs every row under every pinned shell and judges each trace.
pub fn run(
    sandbox: &Sandbox,
    rows: &[SecretRow],
    config: Config,
) -> Result<Vec<RowResult>, SandboxError> {
    let mut work = Vec::new();
    for row in rows {
        for shell in Shell::ALL {
            work.push((row, shell));
        }
    }
    let mut results = Vec::new();
    for chunk in work.chunks(config.batch.max(1)) {
        let jobs: Vec<Job> = chunk
            .iter()
            .map(|(row, shell)| Job {
                command: row.command.clone(),
                shell: *shell,
            })
            .collect();
        let traced = sandbox.run_batch(&jobs, TraceMode::Reads)?;
        for ((row, shell), traced) in chunk.iter().zip(traced) {
            let outcome = match traced {
                Some(traced) => judge_row(row, &traced),
                None => RowOutcome::Unverifiable("the run left no trace".to_owned()),
            };
            results.push(RowResult {
                row: (*row).clone(),
                shell: *shell,
                outcome,
            });
        }
    }
    Ok(results)
}

/// Judges one row's trace.
pub fn judge_row(row: &SecretRow, traced: &Traced) -> RowOutcome {
    let touched = touched_paths(&traced.calls);
    match row.expect {
        Expect::Secret => {
            if touched
                .iter()
                .any(|touch| path_matches(&row.path, &touch.path))
            {
                return RowOutcome::Holds;
            }
            if let Some(why) = unverifiable(&row.command, &traced.calls) {
                return RowOutcome::Unverifiable(why);
            }
            if traced.ending == Ending::TimedOut {
                return RowOutcome::Unverifiable(
                    "it reached its time limit before its path".to_owned(),
                );
            }
            RowOutcome::Mismatch(format!("never opens `{}`", row.path))
        }
        Expect::Ordinary => match touched
            .iter()
            .find(|touch| touch.opened && is_default_secret(&touch.path))
        {
            Some(touch) => RowOutcome::Mismatch(format!(
                "opens the secret path `{}`: {}",
                touch.path, touch.line
            )),
            None => RowOutcome::Holds,
        },
    }
}

/// A path a traced call reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The absolute path, `.` and `..` resolved by name.
    pub path: String,
    /// Whether it was an open (rather than a `stat` of a path that is not there).
    pub opened: bool,
    /// The trace line.
    pub line: String,
}

/// Every path the trace's opens reach, and the paths its failed `stat`s looked for. The
/// trace must carry descriptor paths (`strace -y`), so a relative open is resolved against
/// the directory the call names.
pub fn touched_paths(calls: &[Call]) -> Vec<Touch> {
    let mut touched = Vec::new();
    for call in calls {
        let Event::Syscall { name, result, .. } = &call.event else {
            continue;
        };
        let (dir_idx, path_idx, opened) = match name.as_str() {
            "open" | "creat" => (None, 0, true),
            "openat" | "openat2" => (Some(0), 1, true),
            "stat" | "lstat" | "access" => (None, 0, false),
            "newfstatat" | "statx" | "faccessat" | "faccessat2" => (Some(0), 1, false),
            _ => continue,
        };
        if !opened && !result.contains("ENOENT") {
            continue;
        }
        let Some(path) = call.arg(path_idx).and_then(string_arg) else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        let dir = dir_idx
            .and_then(|idx| call.arg(idx))
            .and_then(fd_path)
            .unwrap_or_else(|| "/".to_owned());
        let joined = if path.starts_with('/') {
            path
        } else {
            format!("{dir}/{path}")
        };
        touched.push(Touch {
            path: normalize(&joined),
            opened,
            line: call.line.clone(),
        });
    }
    touched
}

/// The path strace prints after a descriptor (`AT_FDCWD</etc>`, `3</etc/ssh>`).
fn fd_path(arg: &str) -> Option<String> {
    let start = arg.find('<')?;
    let inner = arg[start + 1..].strip_suffix('>')?;
    Some(inner.to_owned())
}

/// `.`, `..` and repeated slashes resolved by name.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `path` is what the row's `pattern` names: the path itself, or a file under it
/// when the pattern names a directory the command reads whole.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_end_matches('/');
    let (anchored, rest) = if let Some(rest) = pattern.strip_prefix("~/") {
        (false, rest)
    } else if let Some(rest) = pattern.strip_prefix(".../") {
        (false, rest)
    } else {
        (true, pattern.trim_start_matches('/'))
    };
    let want: Vec<&str> = rest.split('/').filter(|part| !part.is_empty()).collect();
    let have: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    // A `$NAME` segment may be empty where the variable is unset (`/proc/$PID/environ` is
    // opened as `/proc//environ`).
    if want.iter().any(|part| part.starts_with('$')) {
        let without: Vec<&str> = want
            .iter()
            .copied()
            .filter(|p| !p.starts_with('$'))
            .collect();
        let shorter = format!(
            "{}{}",
            if anchored { "/" } else { ".../" },
            without.join("/")
        );
        if path_matches(&shorter, path) {
            return true;
        }
    }
    let fits = |start: usize| {
        want.len() + start <= have.len()
            && want
                .iter()
                .zip(&have[start..])
                .all(|(want, have)| segment_matches(want, have))
    };
    if anchored {
        // A directory pattern matches what lies under it too.
        fits(0)
    } else {
        (0..have.len()).any(|start| fits(start) && start + want.len() == have.len())
    }
}

/// One path segment against a pattern segment: `*`, `?`, `[...]` as the shell reads them
/// (a word the shell left unexpanded matches itself), `$NAME` or `${NAME}` for any word.
fn segment_matches(pattern: &str, text: &str) -> bool {
    if pattern.starts_with('$') || pattern == text {
        return true;
    }
    glob(pattern.as_bytes(), text.as_bytes())
}

fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.first() {
        None => text.is_empty(),
        Some(b'*') => (0..=text.len()).any(|skip| glob(&pattern[1..], &text[skip..])),
        Some(b'?') => !text.is_empty() && glob(&pattern[1..], &text[1..]),
        Some(b'[') => {
            let Some(close) = pattern.iter().skip(1).position(|b| *b == b']') else {
                return text.first() == Some(&b'[') && glob(&pattern[1..], &text[1..]);
            };
            let class = &pattern[1..=close];
            let Some(first) = text.first() else {
                return false;
            };
            let mut hit = false;
            let mut idx = 0;
            while idx < class.len() {
                if idx + 2 < class.len() && class[idx + 1] == b'-' {
                    hit |= (class[idx]..=class[idx + 2]).contains(first);
                    idx += 3;
                } else {
                    hit |= class[idx] == *first;
                    idx += 1;
                }
            }
            hit && glob(&pattern[close + 2..], &text[1..])
        }
        Some(byte) => text.first() == Some(byte) && glob(&pattern[1..], &text[1..]),
    }
}

/// SECRET-1's default secret paths, as the oracle reads them: `/etc/shadow` and
/// `/etc/gshadow` (and their `-` backups), SSH and TLS private keys, `.env` files, cloud and
/// kube credentials, `/proc/*/environ` and docker's `config.json`.
pub fn is_default_secret(path: &str) -> bool {
    const EXACT: &[&str] = &[
        "/etc/shadow",
        "/etc/shadow-",
        "/etc/gshadow",
        "/etc/gshadow-",
        "/etc/kubernetes/admin.conf",
    ];
    const PATTERNS: &[&str] = &[
        "/etc/ssh/ssh_host_*_key",
        "/etc/ssl/private/*",
        "/proc/*/environ",
        ".../.ssh/id_*",
        ".../.aws/credentials",
        ".../.kube/config",
        ".../.docker/config.json",
        ".../.config/gcloud/*",
        ".../.azure/*",
    ];
    if EXACT.contains(&path) {
        return true;
    }
    let base = path.rsplit('/').next().unwrap_or(path);
    if base.ends_with(".pub") {
        return false;
    }
    let env_file = base == ".env"
        || base
            .strip_prefix(".env.")
            .is_some_and(|suffix| !["example", "sample", "template", "dist"].contains(&suffix));
    let tls_key = base.ends_with(".key") || base.contains("privkey") || base.ends_with("-key.pem");
    env_file || tls_key || PATTERNS.iter().any(|pattern| path_matches(pattern, path))
}

/// Why a `secret` row that opened nothing cannot be checked here, if it cannot.
fn unverifiable(command: &str, calls: &[Call]) -> Option<String> {
    const ELSEWHERE: &[&str] = &["ssh", "scp", "sftp", "docker", "kubectl", "pct", "rsync"];
    let mut ran = Vec::new();
    let mut missing = Vec::new();
    for call in calls {
        if !matches!(call.name(), Some("execve" | "execveat")) {
            continue;
        }
        let Some(path) = call.arg(0).and_then(string_arg) else {
            continue;
        };
        let base = path.rsplit('/').next().unwrap_or(&path).to_owned();
        if call.returned() == Some(0) {
            ran.push(base);
        } else {
            missing.push(base);
        }
    }
    if let Some(remote) = ran.iter().find(|base| ELSEWHERE.contains(&base.as_str())) {
        return Some(format!(
            "it reads through `{remote}` on another host or in a container"
        ));
    }
    // The sandbox's user namespace has no setuid root: `sudo` stops before its command.
    if let Some(sudo) = ran.iter().find(|base| *base == "sudo" || *base == "doas") {
        return Some(format!("`{sudo}` cannot run its command in the sandbox"));
    }
    // A shell that finds no such program exits 127 without trying an `execve`.
    if calls
        .iter()
        .any(|call| call.event == Event::Exit && call.line.contains("exited with 127"))
    {
        return Some("a program it runs is not installed here (exit status 127)".to_owned());
    }
    let words = crate::judge::named_words(command);
    missing
        .into_iter()
        .find(|base| !ran.contains(base) && words.contains(base))
        .map(|base| format!("`{base}` is not installed here"))
}

/// What a run of the table comes to, for a person and for the findings log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The counts, each row that disagrees and each run that cannot be checked.
    pub text: String,
    /// One line per row that disagrees (`shells<TAB>command<TAB>syscall<TAB>why`).
    pub log: String,
    /// How many rows disagree under some shell.
    pub disagreeing: usize,
}

/// Sums up a run of the table read from `path`.
pub fn summarize(path: &Path, rows: &[SecretRow], results: &[RowResult]) -> Summary {
    let mut summary = String::new();
    let mut log = String::new();
    let count =
        |wanted: fn(&RowOutcome) -> bool| results.iter().filter(|r| wanted(&r.outcome)).count();
    let _ = writeln!(
        summary,
        "secret reads ({}): {} rows under {} shells: {} hold, {} disagree, {} cannot be checked here",
        path.display(),
        rows.len(),
        Shell::ALL.len(),
        count(|o| *o == RowOutcome::Holds),
        count(|o| matches!(o, RowOutcome::Mismatch(_))),
        count(|o| matches!(o, RowOutcome::Unverifiable(_))),
    );
    let mut mismatches = 0;
    for row in rows {
        let of_row: Vec<&RowResult> = results.iter().filter(|r| r.row.line == row.line).collect();
        let disagree: Vec<&RowResult> = of_row
            .iter()
            .copied()
            .filter(|r| matches!(r.outcome, RowOutcome::Mismatch(_)))
            .collect();
        if let Some(first) = disagree.first() {
            mismatches += 1;
            let shells: Vec<&str> = disagree.iter().map(|r| r.shell.as_str()).collect();
            let RowOutcome::Mismatch(why) = &first.outcome else {
                continue;
            };
            let _ = writeln!(
                summary,
                "DISAGREES [{}] line {}: {:?}: {why}",
                shells.join(","),
                row.line,
                row.command
            );
            let (syscall, reason) = match why.split_once(": ") {
                Some((reason, syscall)) => (syscall.to_owned(), reason.to_owned()),
                None => ("-".to_owned(), why.clone()),
            };
            let expect = match row.expect {
                Expect::Secret => "secret",
                Expect::Ordinary => "ordinary",
            };
            let _ = writeln!(
                log,
                "{}\t{}\t{}\tsecret-reads.tsv line {} says {expect}, but the trace {reason}",
                shells.join(","),
                row.command.replace('\t', "\\t"),
                syscall,
                row.line
            );
        }
        for result in of_row {
            if let RowOutcome::Unverifiable(why) = &result.outcome {
                let _ = writeln!(
                    summary,
                    "  not checked [{}] line {}: {:?}: {why}",
                    result.shell.as_str(),
                    row.line,
                    row.command
                );
            }
        }
    }
    Summary {
        text: summary,
        log,
        disagreeing: mismatches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse_trace;

    #[test]
    fn the_table_is_read_with_comments_and_the_command_kept_whole() {
        let rows = parse_secret_reads(
            "# a comment\n\nsecret\t/etc/shadow\tcat /etc/shadow\nordinary\t-\tprintf 'a\\tb'\t|cat\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].line, 3);
        assert_eq!(rows[0].expect, Expect::Secret);
        assert_eq!(rows[1].command, "printf 'a\\tb'\t|cat");
        assert_eq!(
            parse_secret_reads("secret\t/x\n"),
            Err(SecretTableError::Fields { line: 1 })
        );
        assert_eq!(
            parse_secret_reads("maybe\t-\tls\n"),
            Err(SecretTableError::Expect {
                line: 1,
                expect: "maybe".to_owned()
            })
        );
    }

    #[test]
    fn patterns_match_paths_globs_homes_and_directories() {
        assert!(path_matches("/etc/shadow", "/etc/shadow"));
        assert!(path_matches("/etc/sh*dow", "/etc/shadow"));
        assert!(path_matches("/etc/s[a-z]adow", "/etc/shadow"));
        assert!(path_matches("~/.ssh/id_rsa", "/tmp/.ssh/id_rsa"));
        assert!(path_matches(".../etc/shadow", "/etc/shadow"));
        assert!(path_matches("/proc/$PID/environ", "/proc/7/environ"));
        assert!(path_matches("/proc/$PID/environ", "/proc/environ"));
        assert!(path_matches("/etc", "/etc/shadow"));
        assert!(path_matches("/home/*/.ssh/id_rsa", "/home/*/.ssh/id_rsa"));
        assert!(!path_matches("/etc/shadow", "/etc/passwd"));
        assert!(!path_matches("~/.ssh/id_rsa", "/tmp/.ssh/id_rsa.pub"));
    }

    #[test]
    fn the_default_secrets_are_spec_secret_1s() {
        for secret in [
            "/etc/shadow",
            "/etc/gshadow",
            "/root/.ssh/id_ed25519",
            "/etc/ssh/ssh_host_rsa_key",
            "/etc/ssl/private/snakeoil.key",
            "/srv/app/.env",
            "/srv/app/.env.production",
            "/tmp/.aws/credentials",
            "/tmp/.kube/config",
            "/proc/1/environ",
            "/root/.docker/config.json",
        ] {
            assert!(is_default_secret(secret), "{secret}");
        }
        for ordinary in [
            "/etc/passwd",
            "/root/.ssh/id_rsa.pub",
            "/etc/ssh/ssh_host_rsa_key.pub",
            "/srv/app/.env.example",
            "/run/scratch/.envrc",
            "/proc/1/status",
            "/etc/docker/daemon.json",
        ] {
            assert!(!is_default_secret(ordinary), "{ordinary}");
        }
    }

    fn traced(text: &str) -> Traced {
        Traced {
            calls: parse_trace(text),
            ending: Ending::Finished,
        }
    }

    fn row(expect: Expect, path: &str, command: &str) -> SecretRow {
        SecretRow {
            line: 1,
            expect,
            path: path.to_owned(),
            command: command.to_owned(),
        }
    }

    #[test]
    fn a_relative_open_is_resolved_against_its_directory() {
        let trace = traced(
            "5 openat(AT_FDCWD</etc>, \"shadow\", O_RDONLY) = 3</etc/shadow>\n5 +++ exited with 0 +++\n",
        );
        let secret = row(Expect::Secret, "/etc/shadow", "cd /etc && cat shadow");
        assert_eq!(judge_row(&secret, &trace), RowOutcome::Holds);
        let ordinary = row(Expect::Ordinary, "-", "cd /etc && cat shadow");
        assert!(matches!(
            judge_row(&ordinary, &trace),
            RowOutcome::Mismatch(why) if why.contains("/etc/shadow")
        ));
    }

    #[test]
    fn a_secret_row_that_opens_nothing_is_a_mismatch_unless_it_reads_elsewhere() {
        let nothing = traced(
            "5 execve(\"/bin/sh\", [\"sh\"], 0x1) = 0\n\
             5 openat(AT_FDCWD</run/scratch>, \"/etc/passwd\", O_RDONLY) = 3</etc/passwd>\n5 +++ exited with 0 +++\n",
        );
        let secret = row(Expect::Secret, "/etc/shadow", "cat /etc/passwd");
        assert!(matches!(
            judge_row(&secret, &nothing),
            RowOutcome::Mismatch(_)
        ));
        let remote = traced(
            "5 execve(\"/bin/sh\", [\"sh\"], 0x1) = 0\n6 execve(\"/usr/bin/ssh\", [\"ssh\"], 0x1) = 0\n5 +++ exited with 0 +++\n",
        );
        let over_ssh = row(Expect::Secret, "/etc/shadow", "ssh web1 'cat /etc/shadow'");
        assert!(matches!(
            judge_row(&over_ssh, &remote),
            RowOutcome::Unverifiable(why) if why.contains("ssh")
        ));
    }
}
