//! GATE-11: the judge of an operator's edit before approval. An edit may only make a
//! request narrower or equal: no stricter class, no host the request did not cover, no
//! program the classifier does not know, no secret read the request did not make.
//!
//! The judge is pure: the caller classifies both forms (nomos-classify, in the grammar of
//! each host's pinned shell, CLASSIFY-8) and hands in what it read.

use crate::classification::Classification;
use crate::status::CommandClass;

/// One form of a request, as the judge compares it: its command, the hosts it covers and
/// the classifier's reading of the command for those hosts.
#[derive(Clone, Copy, Debug)]
pub struct Requested<'a> {
    /// The exact command text.
    pub command: &'a str,
    /// The hosts it runs on (one, or a group's members).
    pub hosts: &'a [String],
    /// The command's classification for those hosts' shells.
    pub classification: &'a Classification,
}

/// Why an edit was refused: what it broadened, and what the operator can do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Broadening {
    /// The edited command is blank.
    #[error("the edited command is empty: type the command to run, or deny the request")]
    EmptyCommand,
    /// The edit dropped every host.
    #[error(
        "the edit leaves no host: keep at least one of the request's hosts, or deny the request"
    )]
    NoHosts,
    /// The edit names hosts the request did not cover.
    #[error(
        "the edit adds host(s) {added} that the request did not cover: an edit may only drop hosts; remove them, or deny and ask the model to request them"
    )]
    NewHosts {
        /// The added hosts, comma-separated.
        added: String,
    },
    /// The edited command is of a stricter class than the request's.
    #[error(
        "the edited command is {edited}, stricter than the request's {original}: an edit may only keep or lower the class; edit it to a {original} (or milder) command, or deny the request"
    )]
    StricterClass {
        /// The request's class.
        original: CommandClass,
        /// The edited command's class.
        edited: CommandClass,
    },
    /// The edited command runs a program the classifier does not know (CLASSIFY-7).
    #[error(
        "the edited command runs a program the classifier does not know ({reason}): an edit may use only programs the classifier or the policy knows; use a known program, or deny the request"
    )]
    UnknownProgram {
        /// The classifier's reason.
        reason: String,
    },
    /// The edited command reads a secret path (SECRET-1) the request did not read, or
    /// changes the text of a request that reads one.
    #[error(
        "the edited command reads the secret path `{path}`{also}: an edit may not change what a secret read reads; keep the command as asked (drop hosts only), remove the read, or deny the request"
    )]
    NewSecret {
        /// The secret path the edited command reads.
        path: String,
        /// Whether the request read a secret too (for the message).
        also: &'static str,
    },
}

/// GATE-11: `Ok` when `edited` is narrower than or equal to `original`, else what broadened.
///
/// The rules, from SPEC GATE-11 and the rules it leans on:
/// * the edited command is not blank;
/// * its hosts are a non-empty subset of the original's (FLEET-1: dropping a host narrows);
/// * its class is at most the original's (CLASSIFY-1's order: `read_only` <
///   `config_mutation` < `destructive`);
/// * it runs no program the classifier does not know (CLASSIFY-7: unknown is broadening,
///   whatever the original was);
/// * it reads no new secret (SECRET-1). The classifier names one secret path per command,
///   so an edited command that reads any secret path is accepted only when its text is the
///   original's (a host dropped): a changed command could read a second path the first
///   hides.
pub fn edit_is_narrower(original: Requested<'_>, edited: Requested<'_>) -> Result<(), Broadening> {
    if edited.command.trim().is_empty() {
        return Err(Broadening::EmptyCommand);
    }
    if edited.hosts.is_empty() {
        return Err(Broadening::NoHosts);
    }
    let added: Vec<&str> = edited
        .hosts
        .iter()
        .filter(|h| !original.hosts.contains(h))
        .map(String::as_str)
        .collect();
    if !added.is_empty() {
        return Err(Broadening::NewHosts {
            added: added.join(", "),
        });
    }
    let (was, now) = (original.classification, edited.classification);
    if now.class > was.class {
        return Err(Broadening::StricterClass {
            original: was.class,
            edited: now.class,
        });
    }
    if now.program_unknown() {
        return Err(Broadening::UnknownProgram {
            reason: now.reason.clone(),
        });
    }
    if let Some(path) = now.secret_read()
        && edited.command != original.command
    {
        return Err(Broadening::NewSecret {
            path: path.to_owned(),
            also: if was.secret_read().is_some() {
                " and the command was changed"
            } else {
                ", which the request did not read"
            },
        });
    }
    Ok(())
}

/// The word diff the card shows between what the model asked and the edit (GATE-11): the
/// words of `from` and `to`, each marked kept, removed or added, by their longest common
/// subsequence.
pub fn word_diff(from: &str, to: &str) -> Vec<DiffWord> {
    let a: Vec<&str> = from.split_whitespace().collect();
    let b: Vec<&str> = to.split_whitespace().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(DiffWord::Kept(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(DiffWord::Removed(a[i].to_owned()));
            i += 1;
        } else {
            out.push(DiffWord::Added(b[j].to_owned()));
            j += 1;
        }
    }
    out
}

/// One word of [`word_diff`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "op", content = "word")]
pub enum DiffWord {
    /// In both.
    Kept(String),
    /// Only in what the model asked.
    Removed(String),
    /// Only in the edit.
    Added(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diff_marks_the_changed_expression() {
        let diff = word_diff("sed -i s/a/b/ /etc/x", "sed -i s/a/c/ /etc/x");
        assert_eq!(
            diff,
            vec![
                DiffWord::Kept("sed".into()),
                DiffWord::Kept("-i".into()),
                DiffWord::Removed("s/a/b/".into()),
                DiffWord::Added("s/a/c/".into()),
                DiffWord::Kept("/etc/x".into()),
            ]
        );
    }
}
