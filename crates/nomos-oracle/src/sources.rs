//! Where the oracle's commands come from besides the generator: the labelled corpus
//! (`fixtures/classify/corpus.tsv`), the preview commands of every preview form (GATE-10)
//! and the commands of the golden cases (`evals/golden.yaml`).

use std::fs;
use std::path::Path;

use nomos_classify::corpus::{CorpusError, parse_corpus};
use nomos_classify::preview_form;

/// Why a source could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The corpus has a malformed line.
    #[error("{path}: {source}")]
    Corpus {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        source: CorpusError,
    },
    /// The golden manifest is not YAML.
    #[error("{path}: not YAML: {message}")]
    Golden {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
}

/// Every command of the corpus, whatever its label.
pub fn corpus_commands(path: &Path) -> Result<Vec<String>, SourceError> {
    let text = read(path)?;
    let entries = parse_corpus(&text).map_err(|source| SourceError::Corpus {
        path: path.display().to_string(),
        source,
    })?;
    Ok(entries.into_iter().map(|entry| entry.command).collect())
}

/// Commands of each row of the preview table, in the forms the table reads (plain and under
/// `sudo`, with the options each row keeps or drops).
pub const PREVIEWED: &[&str] = &[
    "apt-get install nginx",
    "apt install -y curl",
    "apt-get upgrade",
    "apt-get dist-upgrade",
    "apt full-upgrade",
    "apt-get remove nginx",
    "apt-get purge nginx",
    "apt-get autoremove",
    "apt-get reinstall bash",
    "apt-get install -y --no-install-recommends nginx",
    "sudo apt-get install nginx",
    "docker compose up -d",
    "docker compose -f a.yml -p p pull",
    "docker compose down",
    "docker compose restart web",
    "docker-compose up -d",
    "sudo docker compose pull",
    "systemctl restart nginx",
    "systemctl stop nginx ssh",
    "systemctl disable nginx",
    "sudo systemctl restart ssh",
    "sed -i 's/a/b/' notes.txt",
    "sed -i.bak -e 's/x/y/' notes.txt",
    "sed -i -n p notes.txt",
    "sed --in-place 's/a/b/w out.txt' notes.txt",
    "sed -i 's/a/b/e' notes.txt",
    "sed -i 'e id' notes.txt",
    "sed -i -f script.sed notes.txt",
    "sed -i 1d notes.txt",
    "sed -i -E 's/(a)/\\1/' notes.txt",
    "sed -i 'w out.txt' notes.txt",
    "sudo sed -i 's/a/b/' /etc/hosts",
];

/// The preview commands of [`PREVIEWED`] and of every `extra` command that has a preview
/// form, each once, in order.
pub fn preview_commands(extra: &[String]) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    let sources = PREVIEWED.iter().map(|command| (*command).to_owned());
    for source in sources.chain(extra.iter().cloned()) {
        if let Some(form) = preview_form(&source) {
            for command in form.commands {
                if !commands.contains(&command) {
                    commands.push(command);
                }
            }
        }
    }
    commands
}

/// Every command a golden case runs, declares or has a canned output for: each string under
/// a `command` key anywhere in the manifest.
pub fn golden_commands(path: &Path) -> Result<Vec<String>, SourceError> {
    let text = read(path)?;
    let value: yaml_serde::Value =
        yaml_serde::from_str(&text).map_err(|error| SourceError::Golden {
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
    let mut commands = Vec::new();
    collect(&value, &mut commands);
    Ok(commands)
}

fn collect(value: &yaml_serde::Value, out: &mut Vec<String>) {
    match value {
        yaml_serde::Value::Mapping(map) => {
            for (key, value) in map {
                if key.as_str() == Some("command")
                    && let Some(command) = value.as_str()
                    && !out.iter().any(|known| known == command)
                {
                    out.push(command.to_owned());
                }
                collect(value, out);
            }
        }
        yaml_serde::Value::Sequence(items) => {
            for item in items {
                collect(item, out);
            }
        }
        yaml_serde::Value::Tagged(tagged) => collect(&tagged.value, out),
        _ => {}
    }
}

fn read(path: &Path) -> Result<String, SourceError> {
    fs::read_to_string(path).map_err(|source| SourceError::Read {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preview_row_gives_preview_commands() {
        let commands = preview_commands(&[]);
        assert!(
            commands
                .iter()
                .any(|command| command.starts_with("apt-get -s -o Dir::Log::Planner="))
        );
        assert!(
            commands
                .iter()
                .any(|command| command.contains("systemctl status"))
        );
        assert!(commands.iter().any(|command| command.starts_with("cat ")));
        assert!(
            commands
                .iter()
                .any(|command| command.contains("compose") && command.contains("config"))
        );
    }

    #[test]
    fn golden_commands_are_collected_from_every_command_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.yaml");
        fs::write(
            &path,
            "cases:\n- world:\n    outputs:\n    - {host: h, command: uptime}\n  steps:\n  - model:\n    - tool_calls:\n      - {name: run, arguments: {command: \"df -h\"}}\n",
        )
        .unwrap();
        assert_eq!(golden_commands(&path).unwrap(), vec!["uptime", "df -h"]);
    }
}
