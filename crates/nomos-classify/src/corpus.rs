//! The labelled-command corpus format: `expected<TAB>command` per line.
//!
//! `#` starts a comment line; blank lines are skipped. The expected class is spelled
//! `read_only`, `config_mutation` or `destructive`, optionally followed by `@SHELL`
//! (`read_only@bash`): the pinned interpreter the command is read for (CLASSIFY-8; `sh` when
//! not given). A malformed line is an error that names its line number.

use crate::class::CommandClass;
use crate::shell::Shell;

/// One labelled command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusEntry {
    /// The 1-based line number in the corpus text.
    pub line: usize,
    /// The class the command must get.
    pub expected: CommandClass,
    /// The pinned interpreter the command is classified for (CLASSIFY-8).
    pub shell: Shell,
    /// The command.
    pub command: String,
}

/// Why a corpus line could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CorpusError {
    /// A line without a tab between class and command.
    #[error("line {line}: expected `class<TAB>command`, found no tab")]
    MissingTab {
        /// The 1-based line number.
        line: usize,
    },
    /// A class that is not one of the three spellings.
    #[error(
        "line {line}: unknown class `{class}` (expected read_only, config_mutation or destructive)"
    )]
    UnknownClass {
        /// The 1-based line number.
        line: usize,
        /// The text found.
        class: String,
    },
    /// A `@SHELL` suffix that names no pinned interpreter.
    #[error("line {line}: unknown shell `{shell}` (expected sh, bash or busybox)")]
    UnknownShell {
        /// The 1-based line number.
        line: usize,
        /// The text found.
        shell: String,
    },
    /// A line with a class but no command.
    #[error("line {line}: the command is empty")]
    EmptyCommand {
        /// The 1-based line number.
        line: usize,
    },
}

/// Reads a corpus.
pub fn parse_corpus(text: &str) -> Result<Vec<CorpusEntry>, CorpusError> {
    let mut entries = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim_end_matches('\r');
        if trimmed.trim().is_empty() || trimmed.trim_start().starts_with('#') {
            continue;
        }
        let Some((class, command)) = trimmed.split_once('\t') else {
            return Err(CorpusError::MissingTab { line });
        };
        let (class, shell) = match class.trim().split_once('@') {
            Some((class, shell)) => match shell.parse::<Shell>() {
                Ok(shell) => (class, shell),
                Err(_) => {
                    return Err(CorpusError::UnknownShell {
                        line,
                        shell: shell.to_owned(),
                    });
                }
            },
            None => (class.trim(), Shell::Sh),
        };
        let Ok(expected) = class.parse::<CommandClass>() else {
            return Err(CorpusError::UnknownClass {
                line,
                class: class.trim().to_owned(),
            });
        };
        if command.trim().is_empty() {
            return Err(CorpusError::EmptyCommand { line });
        }
        entries.push(CorpusEntry {
            line,
            expected,
            shell,
            command: command.to_owned(),
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_lines_are_read_with_their_line_numbers() {
        let entries = parse_corpus("# c\n\nread_only\tls -la\ndestructive\trm x\n").unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].line, 3);
        assert_eq!(entries[1].expected, CommandClass::Destructive);
        assert_eq!(entries[1].command, "rm x");
    }

    #[test]
    fn a_line_without_a_tab_is_an_error_naming_the_line() {
        let err = parse_corpus("read_only\tls\nread_only ls\n").unwrap_err();
        assert_eq!(err, CorpusError::MissingTab { line: 2 });
        assert_eq!(
            err.to_string(),
            "line 2: expected `class<TAB>command`, found no tab"
        );
    }

    #[test]
    fn an_unknown_class_is_an_error_naming_the_line() {
        let err = parse_corpus("safe\tls\n").unwrap_err();
        assert_eq!(
            err,
            CorpusError::UnknownClass {
                line: 1,
                class: "safe".into()
            }
        );
    }

    // rule: CLASSIFY-8
    #[test]
    fn a_class_may_name_the_shell_the_command_is_read_for() {
        let entries = parse_corpus("read_only@bash\t[[ -f x ]]\nread_only\tls\n").unwrap();
        assert_eq!(entries[0].shell, Shell::Bash);
        assert_eq!(entries[0].expected, CommandClass::ReadOnly);
        assert_eq!(entries[1].shell, Shell::Sh);
        assert_eq!(
            parse_corpus("read_only@zsh\tls\n").unwrap_err(),
            CorpusError::UnknownShell {
                line: 1,
                shell: "zsh".into()
            }
        );
    }

    #[test]
    fn an_empty_command_is_an_error() {
        assert_eq!(
            parse_corpus("read_only\t \n").unwrap_err(),
            CorpusError::EmptyCommand { line: 1 }
        );
    }
}
