//! The secret-read table format (SECRET-1): `expect<TAB>path<TAB>command` per line, as in
//! `fixtures/classify/secret-reads.tsv`, which the tests and the execution oracle share.
//!
//! `expect` is `secret` (the command needs its own approval and its classification names
//! `path`, the secret path normalised) or `ordinary` (`path` is `-`). `#` starts a comment
//! line; blank lines are skipped; a malformed line is an error naming its line number.

/// What a row of the table expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretExpectation {
    /// The command reads this secret path (normalised, as the classification names it).
    Secret(String),
    /// The command reads no secret path.
    Ordinary,
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretReadCase {
    /// The 1-based line number.
    pub line: usize,
    /// What the classification must say.
    pub expect: SecretExpectation,
    /// The command.
    pub command: String,
}

/// Why a table line could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("secret-read table line {line}: {problem}")]
pub struct SecretTableError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// Reads the table.
pub fn parse(text: &str) -> Result<Vec<SecretReadCase>, SecretTableError> {
    let mut cases = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let error = |problem: &str| SecretTableError {
            line,
            problem: problem.to_owned(),
        };
        let mut fields = raw.splitn(3, '\t');
        let (Some(expect), Some(path), Some(command)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Err(error("expected `expect<TAB>path<TAB>command`"));
        };
        if command.trim().is_empty() {
            return Err(error("the command is empty"));
        }
        let expect = match (expect, path) {
            ("secret", "" | "-") => return Err(error("a `secret` row names its path")),
            ("secret", path) => SecretExpectation::Secret(path.to_owned()),
            ("ordinary", "-") => SecretExpectation::Ordinary,
            ("ordinary", _) => return Err(error("an `ordinary` row's path is `-`")),
            (other, _) => {
                return Err(error(&format!(
                    "unknown expectation `{other}` (expected `secret` or `ordinary`)"
                )));
            }
        };
        cases.push(SecretReadCase {
            line,
            expect,
            command: command.to_owned(),
        });
    }
    Ok(cases)
}
